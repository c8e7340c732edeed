"""studies/gpu_pilot.py: the GPU pilot of claims 2, 3, 5 and 7 runs end to end at its toy size on the
CPU (the same code the device machine runs at the full size), and its step planning fills a budget
without passing the full size's steps.  Nothing here asserts how training turns out."""
from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "studies" / "gpu_pilot.py"


def _module():
    spec = importlib.util.spec_from_file_location("gpu_pilot", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_plan_steps_fills_the_budget_within_the_full_size():
    p = _module().plan_steps
    assert p(0.01, 1.0, 100.0, 20000) == 9544          # (100 − 1·9/2)/0.01 = 9550, down to a multiple of 8
    assert p(0.01, 1.0, 100.0, 5000) == 5000            # the full size's steps win
    assert p(1.0, 0.0, 10.0, 20000) == 200              # at least MIN_STEPS
    assert p(1.0, 0.0, 10.0, 4) == 4                    # …but never more than the full size's
    assert p(0.01, 500.0, 100.0, 20000) == 200          # the fixed cost eats the budget: MIN_STEPS
    for bad in (0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ValueError, match="per-step"):
            p(bad, 1.0, 100.0, 100)


def test_calibrate_reads_per_step_and_fixed_cost_from_two_runs(monkeypatch):
    mod = _module()
    clock = iter([0.0, 3.0, 10.0, 15.0])                # a 20-step run takes 3 s, a 40-step one 5 s
    monkeypatch.setattr(mod.time, "perf_counter", lambda: next(clock))
    got = mod.calibrate(lambda steps: None, k=20)
    assert got["per_step_s"] == pytest.approx(0.1) and got["fixed_s"] == pytest.approx(1.0)


@pytest.mark.train
def test_the_pilot_runs_every_part_at_its_toy_size_planning_its_steps(tmp_path):
    mod = _module()
    out = tmp_path / "gpu_pilot.json"
    argv = ["--size", "toy", "--device", "cpu", "--seeds", "2", "--out", str(out), "--plan", "--budget-s", "4"]
    assert mod.main(argv) == 0
    doc = json.loads(out.read_text())
    assert set(doc["parts"]) == set(mod.PARTS) and doc["seeds"] == [9100, 9101]
    assert set(doc["parts"]["claim2"]["arms"]) == {"base", "heads", "deep"}
    assert set(doc["parts"]["claim3"]["arms"]) == {"ape", "rope"}
    five = doc["parts"]["claim5"]["arms"]["base"]
    assert len(five["auc_icl_m2only"]) == len(five["no_stage2"]) == 2
    assert len(doc["parts"]["claim7"]["encoder_accuracy"]) == 3              # the toy's three doses
    assert len(doc["plan"]) == 3 + 2 + 4 + 1                                  # every training planned once
    # planned from the budget: each a calibration, never past the (toy) full size's steps
    assert all("per_step_s" in t and 1 <= t["steps"] <= t["full_size_steps"] for t in doc["plan"])


def test_bad_arguments_are_refused_with_the_fix(capsys):
    mod = _module()
    with pytest.raises(SystemExit):
        mod.main(["--size", "toy", "--device", "cpu", "--parts", "claim4"])
    assert "--parts takes" in capsys.readouterr().err
