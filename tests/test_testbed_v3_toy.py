"""Version 3 of the unimodal testbed claims 1, 2, 3 and 8 (proofs/claims/testbed_v3_claims.py) end
to end at a toy size, on the CPU and, where there is one, on a CUDA device.

Each claim gives the design's checks under the design's names and roles; every number of every
check and of the summary states its tolerance; the verdict is one of the registry's; the claim's
result file is written with the claim's version, the toy seed families and the device it ran on;
and a second run reads every run back from the results store and trains nothing.  Nothing here
asserts how training turns out."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch

import mmicl.proofs.claims.testbed as tb
import mmicl.proofs.claims.testbed_v3_claims as v3c
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
from mmicl.proofs.claims.testbed_v3 import DESIGNS
from mmicl.proofs.claim import RunConfig, VERDICTS, decide
from v3_toy import assert_checks_follow_the_design, uncovered_numbers

torch.set_num_threads(1)

# 9-token sequences (N = 4, B = 2) over L = 4 labels, a 2-layer width-8 model, 4 steps; the claims'
# own K's (lo, mid, hi, piloted) scaled down with it.  The evaluation sets keep the design's
# EVAL_SIZE (bound into other constants at import); at width 8 they cost little.
TOY = replace(tb.QUICK, data=DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1),
              model=ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, pos="ape", ape_slots=9),
              train=TrainConfig(steps=4, batch=8, lr=1e-3, eval_every=2, eval_size=16),
              seeds=2, K_lo=8, K_mid=16, K_hi=64, K_edge=32, K_grid=(8, 64), claim8_heads=2, claim8_seeds=2)
FAMILIES = {"A": (3000, 3001), "B": (4000, 4001)}


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(tb, "QUICK", TOY)      # ``quick_sizes`` checks ``sizes(config) is QUICK``
    monkeypatch.setattr(v3c, "FAMILIES", FAMILIES)
    # claim 3 at steps_both ≠ the size's steps: two ensembles per position code, as version 3.1 runs
    monkeypatch.setattr(v3c, "PILOTED", {"claim1": {"K_edge": 32}, "claim3": {"K_both": 32, "steps_both": 2,
                                                                              "K_thr": 16}})
    monkeypatch.setattr(v3c, "EVAL_EVERY_TRANSITION", 2)


@pytest.mark.parametrize("claim", ["claim1", "claim2", "claim3", "claim8"])
def test_each_claim_runs_at_toy_size_states_every_tolerance_and_resumes_from_its_store(claim, device, toy,
                                                                                       tmp_path, monkeypatch):
    fn = getattr(v3c, f"{claim}_v3")
    cfg = RunConfig(quick=True, out=tmp_path, seed=1, device=device)
    hyps, checks, summary, figs = fn(cfg)
    design = DESIGNS[claim]
    assert_checks_follow_the_design(checks, design)
    for c in checks:
        assert c.numbers_tolerance, c.name
        assert c.numbers["plus"] + c.numbers["minus"] + c.numbers["unresolved"] <= 4, c.name
        assert all(len(c.numbers[f"diff_{f}"]) == len(c.numbers[f"outcomes_{f}"]) <= 2 for f in FAMILIES), c.name
    assert any("seeds of a family may fail" in h.text for h in hyps)
    assert summary.why and uncovered_numbers(checks, summary) == []
    verdict, _ = decide(hyps, checks)
    assert verdict in VERDICTS
    json.dumps(summary)
    assert figs == []
    doc = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())
    assert doc["version"] == v3c.VERSIONS[claim]
    assert doc["families"] == {f: list(s) for f, s in FAMILIES.items()}
    assert doc["device"] == device and doc["data_seed"] == 1
    assert not [p for p in (tmp_path / "testbed").iterdir() if p.name.startswith(".")]   # no temp files left
    # a second run reads every run back from OUT/testbed/runs: nothing trains
    import mmicl.numerics.runs.runner as runner

    monkeypatch.setattr(runner, "execute", lambda *a, **k: pytest.fail("a stored run was trained again"))
    again = fn(cfg)
    assert json.dumps([c.numbers for c in again[1]]) == json.dumps([c.numbers for c in checks])  # NaN-safe
