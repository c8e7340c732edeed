"""The multimodal testbed claims (4, 5, 6, 7, 9) run end to end at a toy size (structure only:
verdicts, evidence, figures, files).  Whether they hold is measured by ``mmicl verify --quick
--claim 'testbed.*'`` (minutes), not asserted here."""
from __future__ import annotations

import json
import os
from dataclasses import replace

import pytest
import torch

import mmicl.proofs.claims.testbed_multimodal as tbm
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, SecondModality, TrainConfig
from mmicl.proofs.claim import RunConfig, VERDICTS
from mmicl.proofs.registry import REGISTRY
from mmicl.proofs.verify import select

torch.set_num_threads(1)

_TRAIN = TrainConfig(steps=4, batch=8, lr=1e-3, eval_every=2, eval_size=16)
TOY = replace(tbm.QUICK,
              m1=DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1),
              model=ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, pos="ape", ape_slots=21),
              stage1=_TRAIN, stage2=_TRAIN, m2=SecondModality(K=4, D=4, eps=0.1),
              seeds=2, K2_grid=(4, 8), deep_layers=3, encoder_K2=8, encoder_steps=(0, 1, 2, 3))
CLAIMS = ["testbed.claim4", "testbed.claim5", "testbed.claim6", "testbed.claim7", "testbed.claim9"]


def test_multimodal_claims_are_registered_but_not_run_by_default():
    assert set(CLAIMS) <= set(REGISTRY)
    assert all(REGISTRY[c].default is False for c in CLAIMS)
    assert not set(CLAIMS) & {c.id for c in select([])}
    assert set(CLAIMS) <= {c.id for c in select(["testbed.*"])}


@pytest.mark.parametrize("claim", CLAIMS)
def test_each_version_1_2_multimodal_claim_runs_at_toy_size_and_writes_its_evidence(claim, tmp_path, monkeypatch):
    """The version-1/2 functions (the registry runs version 3 where it exists: testbed_v3_transfer)."""
    from mmicl.proofs.claim import Claim

    monkeypatch.setattr(tbm, "QUICK", TOY)
    n = claim.rsplit("claim", 1)[1]
    old = Claim(claim, REGISTRY[claim].title, REGISTRY[claim].statement, tbm.threaded(getattr(tbm, f"claim{n}")))
    res = old.run(RunConfig(quick=True, out=tmp_path, seed=1))
    assert res.verdict in VERDICTS
    assert res.verdict in ("holds", "fails", "inconclusive", "hypothesis-not-met")
    assert res.checks and all(c.tolerance for c in res.checks)
    assert res.hypotheses and res.figures
    assert all(os.path.exists(p) for p in res.figures)
    saved = json.loads((tmp_path / "testbed" / f"claim{n}.json").read_text())
    assert saved["sizes"]["seeds"] == 2 and saved["version"] == tbm.VERSIONS[f"claim{n}"]
    assert saved["seeds"] == [100, 101] and saved["data_seed"] == 1 and saved["device"] == "cpu"
    assert saved["tables"] and saved["histories"]
    assert {"copy", "uniform_guess", "prev_token", "induction"} <= set(saved["baselines"])
    # stage 1 is cached once per settings, as a checkpoint that loads
    cached = sorted((tmp_path / "testbed").glob("stage1_*.pt"))
    assert cached
    assert tbm.Stage1.load(cached[0]).E == 2
    assert not [p for p in os.listdir(tmp_path / "testbed") if p.startswith(".")]   # no temp files left
    json.dumps(res.to_json(tmp_path))                                       # the evidence is JSON-ready


def test_a_second_run_reuses_the_cached_stage1(tmp_path, monkeypatch):
    monkeypatch.setattr(tbm, "QUICK", TOY)
    cfg = RunConfig(quick=True, out=tmp_path, seed=1)
    first = tbm.stage1(cfg, TOY)
    (path,) = (tmp_path / "testbed").glob("stage1_*.pt")
    stamp = path.stat().st_mtime_ns

    def no_training(*_, **__):
        raise AssertionError("stage 1 retrained although its checkpoint is cached")

    monkeypatch.setattr(tbm, "run_stage1", no_training)
    again = tbm.stage1(cfg, TOY)
    assert path.stat().st_mtime_ns == stamp
    for k in first.weights:
        assert torch.equal(again.weights[k], first.weights[k])
    assert torch.equal(again.means, first.means)


def test_per_seed_slope_recovers_a_linear_dose_response_and_is_nan_without_spread():
    """y = a_s + b_s·x for each seed s: the least-squares slope returns b_s; a seed whose doses all
    have the same x has no slope (nan), not 0."""
    import numpy as np

    from mmicl.proofs.claims.testbed_multimodal import per_seed_slope

    x = np.array([[0.1, 0.2, 0.5], [0.3, 0.2, 0.5], [0.9, 0.8, 0.5], [1.0, 0.4, 0.5]])
    b, a = np.array([2.0, -1.0, 0.0]), np.array([0.1, 0.5, 0.3])
    slope = per_seed_slope(x, a + b * x)
    np.testing.assert_allclose(slope[:2], b[:2], rtol=1e-12)
    assert np.isnan(slope[2])


def test_the_fixed_parameter_decoder_is_the_closest_in_parameter_count():
    """The width chosen for the deeper decoder gives the parameter count nearest the base's among
    all allowed widths (multiples of 2·heads up to twice the base width)."""
    from dataclasses import replace

    from mmicl.numerics.testbed.config import ModelConfig
    from mmicl.proofs.claims.testbed_multimodal import decoder_parameters, width_matching_parameters

    base = ModelConfig(layers=2, heads=2, width=16, mlp_ratio=2, ape_slots=21)
    w = width_matching_parameters(base, 4, 8, 4)
    target = decoder_parameters(base, 8, 4)
    gap = abs(decoder_parameters(replace(base, layers=4, width=w), 8, 4) - target)
    for other in range(4, 36, 4):
        assert gap <= abs(decoder_parameters(replace(base, layers=4, width=other), 8, 4) - target)
    assert w % 4 == 0 and w < base.width
