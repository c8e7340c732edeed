"""The same command with the same seed gives the same verdicts and the same numbers.

Each command runs twice as a fresh process (the way a user reruns it); the outputs must agree
exactly, apart from wall-clock fields.  ``verify --quick --claim thm4.1`` has Monte Carlo parts
(the layer's risk at the optimum, the stationarity test, training) and takes about a minute on 2
cores, so it is marked slow.  ``train`` covers the sampling and training streams in seconds and runs
by default; ``lsa --compare --mc`` runs with the slow ones.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

WALL_CLOCK = {"seconds", "model_steps_per_s", "timestamp", "wall_s", "wall_seconds", "startup_seconds", "started", "pid"}
"""Fields that record when, how long and in which process a run ran (``pid`` and ``started`` of the
results folder's ``run`` block), not what it computed."""
L = "s=uniform(0.5,4)"


def mmicl(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mmicl.cli", *args], capture_output=True, text=True,
                          check=False, cwd=cwd, timeout=900)


def without_wall_clock(obj):
    if isinstance(obj, dict):
        return {k: without_wall_clock(v) for k, v in obj.items() if k not in WALL_CLOCK}
    if isinstance(obj, list):
        return [without_wall_clock(v) for v in obj]
    return obj


def differences(a, b, path="") -> list[str]:
    """Where two JSON documents differ (for a readable failure)."""
    if type(a) is not type(b):
        return [f"{path}: {a!r} != {b!r}"]
    if isinstance(a, dict):
        return [d for k in sorted(set(a) | set(b)) for d in differences(a.get(k), b.get(k), f"{path}/{k}")]
    if isinstance(a, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)} items"]
        return [d for i, (u, v) in enumerate(zip(a, b)) for d in differences(u, v, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


TRAIN = ["train", "--model", "lsa", "--law", L, "--n", "20", "--steps", "20", "--batch", "16", "--samples", "256",
         "--device", "cpu", "--json"]
LSA_MC = ["lsa", "--law", L, "--compare", "--mc", "200", "--json"]


@pytest.mark.subprocess
@pytest.mark.parametrize("argv", [TRAIN, pytest.param(LSA_MC, marks=pytest.mark.slow)], ids=["train", "lsa-mc"])
def test_same_seed_same_numbers(argv):
    first, second, other = (mmicl(*argv, "--seed", seed) for seed in ("3", "3", "4"))
    for r in (first, second, other):
        assert r.returncode == 0, r.stderr
    a, b, c = (without_wall_clock(json.loads(r.stdout)) for r in (first, second, other))
    assert not differences(a, b), differences(a, b)
    assert a != c, "another seed gave the very same numbers: the seed is not used"


@pytest.mark.train
@pytest.mark.slow
def test_verify_is_reproducible(tmp_path):
    runs = []
    for name in ("A", "B"):
        r = mmicl("verify", "--quick", "--claim", "thm4.1", "--seed", "3", "--device", "cpu", "--out", name,
                  cwd=tmp_path)
        assert r.returncode in (0, 1), r.stderr
        runs.append(json.loads((tmp_path / name / "verdicts.json").read_text()))
    a, b = (without_wall_clock(v) for v in runs)
    assert [c["verdict"] for c in a["claims"]] == [c["verdict"] for c in b["claims"]]
    assert not differences(a, b), differences(a, b)
