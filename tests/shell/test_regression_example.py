"""The example user repository (examples/regression-example) passes as committed, and its baselines
catch a change: mmicl's pytest plugin (``mmicl.pytest_plugin``, loaded by its ``pytest11`` entry
point) run as a user runs it, in a subprocess.

Every run that may write goes to a copy in a temporary folder; the run of the example in place
writes nothing (``--mmicl-require-baseline``, no cache, no bytecode, Hypothesis's database in a
temporary folder).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "regression-example"
BASELINES = Path("tests") / "baselines" / "test_my_theory"
BASELINE_TESTS = ["tests/test_my_theory.py::test_my_claim_baseline", "tests/test_my_theory.py::test_key_numbers"]


def _pytest(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def copy(tmp_path) -> Path:
    dest = tmp_path / "example"
    shutil.copytree(EXAMPLE, dest, ignore=shutil.ignore_patterns(".hypothesis", "__pycache__", ".pytest_cache"))
    return dest


def _edit(path: Path, change) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")


@pytest.mark.subprocess
def test_the_example_passes_as_committed(tmp_path):
    assert (EXAMPLE / BASELINES / "test_my_claim_baseline.json").is_file()
    assert (EXAMPLE / BASELINES / "test_key_numbers.json").is_file()
    p = _pytest(str(EXAMPLE / "tests"), "--mmicl-require-baseline", "--mmicl-profile", "ci", cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-2000:]
    assert "5 passed" in p.stdout and "baselines written" not in p.stdout, p.stdout[-2000:]


@pytest.mark.subprocess
def test_a_moved_number_or_verdict_fails_naming_the_key_and_the_tolerance(copy):
    claim, numbers = copy / BASELINES / "test_my_claim_baseline.json", copy / BASELINES / "test_key_numbers.json"
    old_alpha = json.loads(claim.read_text())["claims"][0]["evidence"]["checks"][1]["numbers"]["alpha_T"]

    def move_claim(doc):
        entry = doc["claims"][0]
        entry["verdict"] = "inconclusive"
        entry["evidence"]["checks"][1]["numbers"]["alpha_T"] = old_alpha * (1 + 1e-6)

    def move_number(doc):
        doc["claims"][0]["evidence"]["summary"]["alpha_T"]["T=10"] += 1e-6

    _edit(claim, move_claim)
    _edit(numbers, move_number)
    p = _pytest(*BASELINE_TESTS, cwd=copy)
    assert p.returncode == 1, p.stdout[-3000:]
    out = p.stdout
    assert "2 failed" in out, out[-2000:]
    # the claim: its verdict, and the number with its check's own tolerance
    assert "verdict mytheory.alpha_star: baseline 'inconclusive', this run 'holds'" in out, out
    assert "α_T ∈ [1/(1 + s_hi), 1/(1 + s_lo)] at T = 10: alpha_T" in out and repr(old_alpha * (1 + 1e-6)) in out
    assert "atol 0, rtol 1e-10: 1e-10 relative: Brent's root" in out
    # the mapping: its key, and the default rtol
    assert "number alpha_T.T=10: baseline" in out and "rtol 1e-09" in out, out
    assert "--mmicl-update-baseline" in out

    # accepted with --mmicl-update-baseline: the tests pass, the summary names the files, which now agree
    p = _pytest(*BASELINE_TESTS, "--mmicl-update-baseline", cwd=copy)
    assert p.returncode == 0, p.stdout[-3000:]
    assert "mmicl baselines written" in p.stdout and "updated: 2 change(s)" in p.stdout, p.stdout
    assert json.loads(claim.read_text())["claims"][0]["verdict"] == "holds"
    assert claim.read_bytes() == (EXAMPLE / BASELINES / claim.name).read_bytes()


@pytest.mark.subprocess
def test_a_missing_baseline_is_written_unless_required_and_the_plugin_loads_either_way(copy):
    numbers = copy / BASELINES / "test_key_numbers.json"
    numbers.unlink()
    # -p mmicl.pytest_plugin beside the entry point: loaded once, no clash
    p = _pytest(*BASELINE_TESTS, "--mmicl-require-baseline", "-p", "mmicl.pytest_plugin", cwd=copy)
    assert p.returncode == 1 and "no mmicl baseline at tests/baselines/test_my_theory/test_key_numbers.json" in p.stdout, \
        p.stdout[-3000:] + p.stderr[-2000:]
    assert not numbers.exists()
    p = _pytest(*BASELINE_TESTS, cwd=copy)
    assert p.returncode == 0 and "2 passed" in p.stdout, p.stdout[-3000:]
    assert "test_key_numbers.json (new; by tests/test_my_theory.py::test_key_numbers)" in p.stdout
    assert numbers.read_bytes() == (EXAMPLE / BASELINES / numbers.name).read_bytes()
    # -p no:mmicl: the plugin is off, its fixtures are unknown
    p = _pytest(*BASELINE_TESTS, "-p", "no:mmicl", cwd=copy)
    assert p.returncode == 1 and "fixture 'mmicl_baseline' not found" in p.stdout, p.stdout[-3000:]


def test_the_plugin_is_registered_and_changes_nothing_unless_used(pytestconfig):
    """This suite runs with the plugin loaded (the editable install's entry point): it adds options and
    fixtures, no autouse fixture and no hook that touches runs or reports; at collection it only drops
    the deadline of Hypothesis tests that use mmicl (``tests/shell/test_plugin_deadline.py``)."""
    from importlib import metadata

    import mmicl.pytest_plugin as plugin
    from mmicl.proofs.claim import SIZES

    (ep,) = [ep for ep in metadata.entry_points(group="pytest11") if ep.name == "mmicl"]
    assert ep.value == "mmicl.pytest_plugin"
    assert pytestconfig.pluginmanager.get_plugin("mmicl") is plugin
    assert plugin.SIZES == SIZES
    hooks = {name for name in vars(plugin) if name.startswith("pytest_")}
    assert hooks == {"pytest_addoption", "pytest_configure", "pytest_report_header", "pytest_terminal_summary",
                     "pytest_plugin_registered", "pytest_collection_modifyitems", "pytest_report_collectionfinish"}
    assert pytestconfig.getoption("mmicl_profile") is None and plugin.pytest_report_header(pytestconfig) is None
    assert pytestconfig.getoption("mmicl_size") == "smoke"
    for name in ("mmicl_size", "mmicl_baseline"):
        fixture = getattr(plugin, name)
        marker = getattr(fixture, "_fixture_function_marker", None) or getattr(fixture, "_pytestfixturefunction", None)
        assert marker is not None and not marker.autouse, name
