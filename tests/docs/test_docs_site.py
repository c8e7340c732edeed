"""The documentation site (``mkdocs.yml``, ``mkdocs_hooks.py``) and the public names it documents.

(a) ``mkdocs build --strict`` succeeds, and the built API reference has an anchor for every name of
    ``mmicl.__all__`` and the rendered documentation of the object at the place it is defined;
(b) every public name has a non-empty docstring where it is defined (a module: its module
    docstring; a constant: the string after its assignment), and appears in the README's table of
    public names;
(c) the API reference lists exactly the names of ``mmicl.__all__``, in its order.

mkdocs, mkdocs-material and mkdocstrings[python] (with griffe) are in the ``test`` extra; without
them (a), and the parts of (b) and (c) that need griffe, are skipped and say why.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import docs_hooks

import mmicl

pytestmark = pytest.mark.xdist_group("docs")
"""One worker runs every test of this group (``--dist loadgroup``): they share what a fixture built once."""

ROOT = Path(__file__).resolve().parents[2]


hooks = docs_hooks.hooks()


@pytest.fixture(scope="module")
def public_objects():
    """Public name -> its griffe object, read statically from the staged package tree, as the site
    reads it."""
    pytest.importorskip("griffe", reason="griffe (from mkdocstrings[python], in the test extra) is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        yield hooks.public_objects(hooks.load_package(hooks.stage_package(Path(tmp) / "src")))


@pytest.fixture(scope="module")
def module_objects():
    """``module.NAME`` -> its griffe object for the modules documented name by name (mmicl.testing,
    the pytest plugin)."""
    pytest.importorskip("griffe", reason="griffe (from mkdocstrings[python], in the test extra) is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        yield hooks.module_objects(hooks.load_package(hooks.stage_package(Path(tmp) / "src")))


# (a) ------------------------------------------------------------------------------------------


def mkdocs_warnings(log: str) -> list[str]:
    """The lines of an mkdocs build log that are its own warnings or errors (``WARNING -``,
    ``ERROR -``), not a subprocess's (the notebook kernel logs ``[IPKernelApp] WARNING | ...``)."""
    return [ln for ln in log.splitlines() if re.match(r"\s*(WARNING|ERROR)\s+-\s", ln)]


def test_the_warning_filter_sees_mkdocs_warnings_and_only_them():
    log = ("INFO    -  Building documentation...\n[IPKernelApp] WARNING | Kernel is running over TCP\n"
           "WARNING -  Doc file 'guide/claims.md' contains an unrecognized relative link '1 + 1/n'\n"
           "Aborted with 1 warnings in strict mode!\n")
    assert mkdocs_warnings(log) == ["WARNING -  Doc file 'guide/claims.md' contains an unrecognized relative link '1 + 1/n'"]


@pytest.mark.subprocess
def test_site_builds_strict_with_a_reference_entry_per_public_name(tmp_path, public_objects, module_objects):
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python", "mkdocs_jupyter",
                   "jupytext", "nbclient", "ipykernel"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs the docs toolchain)")
    # the tutorials executed once per session (tests/docs/test_tutorials.py uses the same notebooks)
    executed = {hooks.executed_notebook(source).parent for source in hooks.tutorial_sources()}
    site = tmp_path / "site"
    # not --quiet: it lowers mkdocs' log level below its warnings, which --strict then never counts
    # (a README line that Markdown read as a link passed that way)
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                          "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(site)],
                         cwd=ROOT, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1", hooks.TUTORIALS_ENV: str(*executed)})
    warnings = mkdocs_warnings(run.stdout + run.stderr)
    assert run.returncode == 0 and not warnings, f"mkdocs build --strict failed:\n" + "\n".join(warnings or [run.stderr])

    page = (site / "reference" / "index.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    no_anchor = [n for n in mmicl.__all__ if f"mmicl.{n}" not in ids]
    assert not no_anchor, f"the API reference has no anchor for {no_anchor}"
    not_rendered = [f"{n} ({obj.path})" for n, obj in public_objects.items() if obj.path not in ids]
    assert not not_rendered, f"the API reference does not document {not_rendered}"
    # mmicl.testing and the pytest plugin's fixtures, name by name
    absent = [name for name, obj in module_objects.items() if name not in ids or obj.path not in ids]
    assert not absent, f"the API reference does not document {absent}"
    assert {"mmicl.pytest_plugin.mmicl_baseline", "mmicl.pytest_plugin.mmicl_size"} <= set(module_objects)
    # the pages made from the README are there too
    for page in ("index.html", "guide/law_language/index.html", "guide/claims/index.html"):
        assert (site / page).is_file(), page
    # the tutorials' pages show their outputs and figures
    for source in hooks.tutorial_sources():
        page = (site / "tutorials" / source.stem / "index.html").read_text(encoding="utf-8")
        assert "jp-OutputArea-output" in page, f"{source.name}: no outputs on its page"
        if source.stem.startswith("01_"):
            assert page.count('src="data:image/png;base64,') >= 4, f"{source.name}: its figures are not on its page"


# (b) ------------------------------------------------------------------------------------------


def test_every_public_name_has_a_docstring_where_it_is_defined(public_objects):
    assert set(public_objects) == set(mmicl.__all__)
    missing = hooks.missing_docstrings(public_objects)
    assert not missing, "public names without a docstring (add one where the object is defined):\n" + "\n".join(missing)


def test_every_module_name_has_its_module_docstring():
    """Without griffe too: the public names that are modules (``_API`` attribute None)."""
    import importlib

    modules = {n: module for n, (module, attr) in mmicl._API.items() if attr is None}
    assert modules == {"hypotheses": "mmicl.hypotheses"}
    empty = [n for n, module in modules.items() if not (importlib.import_module(module).__doc__ or "").strip()]
    assert not empty, f"public modules without a module docstring: {empty}"


def _readme_public_names() -> set[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^### Public names\s*$(.*?)^#{1,3} ", text, re.M | re.S)
    assert match, 'README.md has no section "### Public names"'
    rows = [line for line in match.group(1).splitlines() if line.startswith("|")]
    names = set()
    for row in rows[2:]:  # past the header and the |---| line
        cells = row.strip("|").split("|", 1)
        for code in re.findall(r"`([^`]+)`", cells[1] if len(cells) > 1 else ""):
            head = re.match(r"\w+", code)
            if head:
                names.add(head.group(0))  # `torch_threads(n)` -> torch_threads, `RunConfig.rng(...)` -> RunConfig
    return names


def test_every_public_name_is_in_the_readme_table():
    missing = [n for n in mmicl.__all__ if n not in _readme_public_names()]
    assert not missing, f'README.md\'s table "Public names" does not list {missing}'


# (c) ------------------------------------------------------------------------------------------


def test_every_name_of_the_modules_documented_by_name_has_a_docstring(module_objects):
    import mmicl.testing

    assert {n.split(".")[-1] for n in module_objects if n.startswith("mmicl.testing.")} == set(mmicl.testing.__all__)
    missing = hooks.missing_docstrings(module_objects, prefix="")
    assert not missing, "names without a docstring (add one where the object is defined):\n" + "\n".join(missing)


def test_reference_groups_are_exactly_all():
    names = [n for _, group in hooks.public_groups() for n in group]
    assert names == list(mmicl.__all__)


def test_reference_page_lists_exactly_all(public_objects):
    page = hooks.reference_markdown(public_objects)
    listed = re.findall(r"^\*\*`mmicl\.(\w+)`\*\*", page, re.M)
    assert listed == list(mmicl.__all__)
    blocks = re.findall(r"^::: (\S+)$", page, re.M)
    assert blocks == [public_objects[n].path for n in mmicl.__all__]
