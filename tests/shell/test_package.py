"""The installed package: one top-level name, ``mmicl``, and no module that imports its
sub-packages by their bare folder names (they would shadow, or be shadowed by, a user's own
``theory`` / ``numerics`` / ``proofs``)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BARE = {"theory", "numerics", "proofs"}
SOURCES = sorted(p for folder in ("mmicl", "theory", "numerics", "proofs", "tests", "benchmarks", "tools", "studies")
                 for p in (ROOT / folder).rglob("*.py"))


def _bare_imports(source: str) -> list[str]:
    """``"line: module"`` for each import of a bare sub-package name in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "import_module":
            names = [a.value for a in node.args[:1] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        else:
            continue
        found += [f"{node.lineno}: {n}" for n in names if n.split(".")[0] in BARE]
    return found


def test_sources_are_found():
    assert len(SOURCES) > 40


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_imports_a_subpackage_by_its_bare_name(path):
    assert _bare_imports(path.read_text(encoding="utf-8")) == []


def test_the_detector_sees_each_form_of_a_bare_import():
    source = ("import theory.lca\nfrom numerics import lca\nimport_module('proofs.claims')\n"
              "from mmicl.numerics import lca\nfrom .x import y\nimport_module('mmicl.cli')\n")
    assert _bare_imports(source) == ["1: theory.lca", "2: numerics", "3: proofs.claims"]


def test_mmicl_subpackages_import_from_their_folders():
    import mmicl.numerics
    import mmicl.proofs
    import mmicl.theory

    for pkg, folder in ((mmicl.theory, "theory"), (mmicl.numerics, "numerics"), (mmicl.proofs, "proofs")):
        assert Path(pkg.__file__).parent.name == folder
