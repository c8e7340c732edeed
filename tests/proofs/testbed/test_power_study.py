"""studies/power.py: the committed power table is what the script computes from the committed
verdict runs (a study reproducible from one command), and it reads the checks it names."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "studies" / "power.py"


def _module():
    spec = importlib.util.spec_from_file_location("power", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("results, table_file", [("v3_quick", "power_v3.json"), ("v4_quick", "power_v4.json")])
def test_the_committed_power_tables_are_the_scripts_output_on_the_committed_runs(results, table_file):
    mod = _module()
    table = mod.rows(ROOT / "studies" / "results" / results)
    committed = json.loads((ROOT / "studies" / "results" / table_file).read_text(encoding="utf-8"))
    assert len(committed["rows"]) == len(table)
    for got, want in zip(table, committed["rows"]):
        assert (got["claim"], got["version"], got["check"]) == (want["claim"], want["version"], want["check"])
        assert len(got["readings"]) == len(want["readings"])
        for g, w in zip(got["readings"], want["readings"]):
            for k in ("holds", "fails", "undecided"):
                assert g[k] == pytest.approx(w[k], abs=1e-9)  # exact sums, up to summation order


def test_the_v3_power_table_reads_the_checks_the_reviewers_read():
    mod = _module()
    table = mod.rows(ROOT / "studies" / "results" / "v3_quick")
    # what the table says of two checks the reviewers read: claim 5 fails on its observed effects,
    # and claim 1's K check holds whatever the evaluation noise
    by = {(r["claim"], r["check"][:21]): r for r in table}
    assert by[("claim5", "a larger decoder lear")]["readings"][0]["fails"] > 0.5
    assert all(x["holds"] > 0.99 for x in by[("claim1", "ICL rises with K")]["readings"])
