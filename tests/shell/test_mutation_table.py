"""The mutation harness's table (``tools/mutation.py``) stays in step with the code it mutates and
the tests it runs: every snippet is found exactly once in the tree (a moved function is still
found; a snippet found twice would mutate the wrong copy), its replacement changes the file and
still compiles, and every test entry names a test file (and, for a node id, a test) that exists."""
from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _harness():
    name = "mmicl_mutation_harness"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / "mutation.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


MUT = _harness()


@pytest.mark.parametrize("mutation", MUT.MUTATIONS, ids=lambda m: m.name)
def test_each_snippet_is_found_once_and_its_mutant_compiles(mutation):
    hits = MUT.locate(mutation, ROOT)
    assert len(hits) == 1, [(str(p.relative_to(ROOT)), s) for p, s, _, _ in hits] or "not found"
    path, start, end, form = hits[0]
    text = path.read_text(encoding="utf-8")
    mutated = MUT.mutated_text(mutation, form, text, start, end)
    assert mutated != text
    compile(mutated, str(path), "exec")


def test_every_test_entry_exists():
    missing = []
    for m in MUT.MUTATIONS:
        for entry in m.tests:
            file, _, test = entry.partition("::")
            path = ROOT / "tests" / file
            if not path.is_file():
                missing.append(f"{m.name}: {file}")
                continue
            if test:
                names = {n.name for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                         if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
                if test.split("[", 1)[0] not in names:
                    missing.append(f"{m.name}: {entry}")
    assert not missing, missing


def test_the_names_are_unique_and_the_sets_split_them():
    names = [m.name for m in MUT.MUTATIONS]
    assert len(set(names)) == len(names)
    core, extended = MUT.select(None, "core"), MUT.select(None, "extended")
    assert core and extended and len(core) + len(extended) == len(names)
