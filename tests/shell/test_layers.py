"""The package's boundaries, read from the source: the import graph (every ``import`` and ``from …
import`` of every module, at the top and inside functions alike, resolved through the package-dir
mapping of pyproject.toml) has no circle, no import that points up a layer and no import of another
module's ``_private`` name, and every module declares ``__all__`` with names it defines or imports.

Layers, bottom to top: ``mmicl.theory`` (0), ``mmicl.numerics`` (1), ``mmicl.proofs`` (2), and the
shell, ``mmicl`` itself with everything in mmicl/ (3).  A module may import its own layer and the
layers below.  Importing ``a.b.c`` also imports the packages ``a`` and ``a.b``, so each such edge
counts too.  The three lazy doors (``mmicl.__init__``'s ``_API``, the command line's
``LAZY_COMMANDS``, the run kinds' ``KIND_MODULES``) name modules as text: those names are edges as
well, so laziness cannot hide an import that points up.
"""
from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"mmicl.theory": 0, "mmicl.numerics": 1, "mmicl.proofs": 2, "mmicl": 3}
LAZY_TABLES = {"mmicl": "_API", "mmicl.cli": "LAZY_COMMANDS", "mmicl.numerics.runs.kinds": "KIND_MODULES"}
MODULE_TEXT = re.compile(r"^mmicl(\.\w+)*$")


def _modules() -> dict[str, Path]:
    """Every module of the installed package, by dotted name, through the package-dir mapping."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    out = {}
    for package, folder in mapping.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base).with_suffix("").parts
            if rel[-1] == "__init__":
                rel = rel[:-1]
            name = ".".join((package, *rel))
            if package == "mmicl" and rel and f"mmicl.{rel[0]}" in mapping:
                continue  # a sub-package's own folder, not mmicl/
            out[name] = path
    return out


MODULES = _modules()


def layer(module: str) -> int:
    """The layer of ``module``: that of the longest package of ``LAYERS`` it lies in."""
    return LAYERS[max((k for k in LAYERS if module == k or module.startswith(k + ".")), key=len)]


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(module: str) -> list[tuple[str, str, int]]:
    """``(imported module, name or "", line)`` for each import of ``module`` of an mmicl module:
    ``import x``, ``from x import y`` (y a name of x, or a sub-module ``x.y``), and the module names
    of a lazy table."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.split(".")[0] == "mmicl"]
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, node)
            if target.split(".")[0] != "mmicl":
                continue
            for a in node.names:
                sub = f"{target}.{a.name}"
                out.append((sub, "", node.lineno) if sub in MODULES else (target, a.name, node.lineno))
    table = LAZY_TABLES.get(module)
    if table:
        for node in tree.body:
            targets = [t.id for t in getattr(node, "targets", [getattr(node, "target", None)]) if isinstance(t, ast.Name)]
            if table in targets:
                out += [(c.value, "", c.lineno) for c in ast.walk(node)
                        if isinstance(c, ast.Constant) and isinstance(c.value, str) and MODULE_TEXT.match(c.value)
                        and c.value in MODULES]
    return out


def edges() -> dict[str, set[str]]:
    """The import graph: each module to the modules it imports, with their parent packages."""
    graph = {m: set() for m in MODULES}
    for m in MODULES:
        for target, _, _ in imports(m):
            parts = target.split(".")
            for k in range(1, len(parts) + 1):
                t = ".".join(parts[:k])
                if t in MODULES and t != m and not m.startswith(t + "."):  # a package's own modules import it
                    graph[m].add(t)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_modules_are_found_through_the_mapping():
    assert {"mmicl", "mmicl.cli", "mmicl.theory.errors", "mmicl.numerics.laws", "mmicl.numerics.runs.kinds",
            "mmicl.proofs.claim", "mmicl.proofs.claims.testbed.design"} <= set(MODULES)
    assert len(MODULES) > 100


def test_there_is_no_import_circle():
    assert circles(edges()) == []


def test_no_module_imports_a_layer_above_its_own():
    upward = [f"{m}:{line} imports {target}" for m in MODULES for target, _, line in imports(m)
              if target in MODULES and layer(target) > layer(m)]
    assert upward == []


def test_no_module_imports_another_modules_private_name():
    private = [f"{m}:{line} imports {target}.{name}" for m in MODULES for target, name, line in imports(m)
               if name.startswith("_") and not name.startswith("__") and target != m]
    assert private == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_declares_all_with_names_it_has(module):
    if module == "mmicl.__main__":
        pytest.skip("the `python -m mmicl` script")
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    declared = [n for n in tree.body if isinstance(n, (ast.Assign, ast.AnnAssign))
                and any(isinstance(t, ast.Name) and t.id == "__all__"
                        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))]
    assert declared, f"{module} declares no __all__"
    names = [e.value for e in ast.walk(declared[0].value) if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    bound = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in tree.body:
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in node.names}
    if module == "mmicl":  # the public face: its names load on first use (``_API``)
        bound |= {k.value for node in ast.walk(tree) if isinstance(node, ast.Dict) for k in node.keys
                  if isinstance(k, ast.Constant)}
    assert [n for n in names if n not in bound] == [], f"{module}: __all__ names what it does not define"


def test_the_checks_see_what_they_look_for(tmp_path, monkeypatch):
    """On a made-up module the graph finds an upward import, a private name and a circle."""
    up = ROOT / "numerics" / "validate.py"
    fake = {"mmicl.numerics.fake": tmp_path / "fake.py", "mmicl.numerics.other": tmp_path / "other.py"}
    fake["mmicl.numerics.fake"].write_text("def f():\n    from mmicl.proofs.claim import Check\n"
                                           "from mmicl.numerics.other import _hidden\n")
    fake["mmicl.numerics.other"].write_text("import mmicl.numerics.fake\n_hidden = 1\n")
    monkeypatch.setattr(sys.modules[__name__], "MODULES", {**MODULES, **fake})
    found = imports("mmicl.numerics.fake")
    assert ("mmicl.proofs.claim", "Check", 2) in found and ("mmicl.numerics.other", "_hidden", 3) in found
    assert layer("mmicl.proofs.claim") > layer("mmicl.numerics.fake") and up.is_file()
    assert ["mmicl.numerics.fake", "mmicl.numerics.other"] in circles(edges())
