"""The tutorials (``docs/tutorials/NN_*.py``, jupytext percent scripts) run without error.

Each tutorial is executed as a notebook (jupytext → nbformat → nbclient, a fresh python3 kernel,
an empty temporary folder, figures inline, one thread) by ``mkdocs_hooks.executed_notebook``, the
same function the site build uses. It is executed once per test session: the site build of
``tests/docs/test_docs_site.py`` is handed the same executed notebooks (``MMICL_DOCS_TUTORIALS``), so
whichever of the two test files runs first pays for the execution. A cell that raises fails the
test with nbclient's ``CellExecutionError``: the cell, the exception and its traceback.

jupytext, nbclient and ipykernel are in the ``test`` extra; without them the execution tests are
skipped and say why.
"""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import docs_hooks

pytestmark = pytest.mark.xdist_group("docs")
"""One worker runs every test of this group (``--dist loadgroup``): they share what a fixture built once."""

ROOT = Path(__file__).resolve().parents[2]


hooks = docs_hooks.hooks()
TUTORIALS = hooks.tutorial_sources()
# what each tutorial must show: inline figures, and words its outputs must contain
EXPECTED = {
    "01_laws_and_limits": (4, ["α* = 0.30769230769", "converged: True", "form: c/T", "form: (a log T + c)/T"]),
    "02_verify_your_law": (0, ["thm6.2 → holds", "hypothesis-not-met", "mine.alpha_third → holds | origin: user"]),
    "03_property_test_and_baseline": (0, ["hypothesis-not-met", "(new; by test_my_theory.py::test_thm62_baseline)",
                                          "1 change(s) from the baseline", "1 regression(s)"]),
}


def _needs_executor():
    for module in ("jupytext", "nbclient", "ipykernel", "nbformat"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed (pip install -e '.[test]' installs what the tutorials need)")


def test_the_tutorials_are_the_expected_ones():
    assert [p.stem for p in TUTORIALS] == list(EXPECTED)


@pytest.mark.parametrize("source", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_is_a_percent_script_in_the_nav(source):
    text = source.read_text(encoding="utf-8")
    assert "# %% [markdown]\n# # " in text, f"{source.name}: the first Markdown cell opens with the page's title"
    assert text.count("\n# %%") >= 5, f"{source.name}: a jupytext percent script, in cells"
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert re.search(rf"^\s+- .*: tutorials/{re.escape(source.name)}$", nav, re.M), \
        f"{source.name} is not in mkdocs.yml's nav"


@pytest.mark.subprocess
@pytest.mark.parametrize("source", TUTORIALS, ids=[p.stem for p in TUTORIALS])
def test_tutorial_runs_and_shows_its_outputs(source):
    _needs_executor()
    import nbformat

    nb = nbformat.read(hooks.executed_notebook(source), as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    errors = [o for o in outputs if o.output_type == "error"]
    assert not errors, f"{source.name}: {errors[0].ename}: {errors[0].evalue}"
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # pytest's and rich's colours
    stderr = "".join(o.text for o in outputs if o.output_type == "stream" and o.name == "stderr")
    assert "Warning" not in stderr, f"{source.name} printed a warning:\n{stderr}"
    figures, words = EXPECTED[source.stem]
    images = sum("image/png" in o.get("data", {}) for o in outputs)
    assert images >= figures, f"{source.name}: {images} figures shown, {figures} expected"
    missing = [w for w in words if w not in text]
    assert not missing, f"{source.name}: the outputs do not show {missing}"
