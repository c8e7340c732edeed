"""Version 3 of testbed claims 6 and 7 (proofs/claims/testbed_v3_modalities.py): the pure pieces on
hand-made inputs with known answers (the encoder's feature standardisation, the se of a follow-rate
difference, of an AUC and of a slope, the pilot rules), the committed pilot files against the
piloted settings, and both claims end to end at a toy size through the results store, on the CPU
and, where there is one, a CUDA device (structure only: names, tolerances, verdict, JSON with its
device, resuming; no trajectory is asserted)."""
from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch

import mmicl.proofs.claims.testbed_multimodal as tbm
import mmicl.proofs.claims.testbed_v3_modalities as mod
from mmicl.numerics.testbed.config import (DataConfig, ModelConfig, MultimodalConfig, SecondModality,
                                           TestbedConfigError, TrainConfig)
from mmicl.numerics.testbed.experiments import area_under
from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, arm_to_json, arms_from_json
from mmicl.numerics.testbed.multimodal_model import EnsembleMLP, feature_standardisation
from mmicl.numerics.testbed.train import History
from mmicl.proofs.claims import testbed_v3 as v3
from mmicl.compare import number_keys
from mmicl.proofs.claim import RunConfig, VERDICTS, decide, tolerance_of
from v3_toy import assert_checks_follow_the_design

torch.set_num_threads(1)
STUDIES = Path(__file__).resolve().parents[1] / "studies" / "results"


# ---- feature standardisation -------------------------------------------------------------------
def test_standardised_features_have_one_scale_whatever_the_encoder_and_the_logits_stay():
    enc = EnsembleMLP([6, 16, 5, 3], [1, 2, 3])
    with torch.no_grad():                      # three members of very different feature scales
        for e, k in enumerate((0.1, 1.0, 30.0)):
            enc.w[1][e] *= k
            enc.b[1][e] += k
    ref = torch.randn(3, 400, 6)
    logits = enc(ref)
    raw = enc.features(ref).pow(2).sum(-1).mean(1)
    assert raw.max() / raw.min() > 100
    enc.standardise_features(ref)
    f = enc.features(ref)
    torch.testing.assert_close(f.mean(1), torch.zeros(3, 5), atol=1e-5, rtol=0)
    torch.testing.assert_close(f.pow(2).sum(-1).mean(1), torch.ones(3), atol=1e-4, rtol=0)
    torch.testing.assert_close(enc(ref), logits)           # the encoder's own accuracy is untouched
    enc.standardise_features(ref)                          # again: from the raw features, not twice
    torch.testing.assert_close(enc.features(ref).pow(2).sum(-1).mean(1), torch.ones(3), atol=1e-4, rtol=0)


def test_one_scale_per_member_keeps_the_features_geometry_and_constant_features_keep_scale_one():
    f = torch.tensor([[[1.0, 0.0], [-1.0, 0.0], [3.0, 0.0], [-3.0, 0.0]],     # one live coordinate
                      [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]])      # constant
    shift, scale = feature_standardisation(f)
    torch.testing.assert_close(shift, torch.tensor([[0.0, 0.0], [2.0, 2.0]]))
    torch.testing.assert_close(scale, torch.tensor([1 / math.sqrt(5.0), 1.0]))  # mean squared norm (1+1+9+9)/4 = 5
    with pytest.raises(ValueError):
        feature_standardisation(torch.zeros(3, 4))


def test_a_standardising_arm_round_trips_and_other_arms_keep_their_json():
    data = MultimodalConfig(DataConfig(K=64, L=4, D=4, N=4, B=2), SecondModality(K=8, D=4, eps=1.0))
    plain = MultimodalArm("a", data, encoder_steps=3)
    std = replace(plain, standardise_features=True)
    assert "standardise_features" not in arm_to_json(plain)
    assert arms_from_json([arm_to_json(std)]) == [std] and arms_from_json([arm_to_json(plain)]) == [plain]
    with pytest.raises(TestbedConfigError):
        arms_from_json([arm_to_json(std), {**arm_to_json(plain), "name": "b"}])
    with pytest.raises(TestbedConfigError):
        arms_from_json([{**arm_to_json(std), "encoder_steps": None}])


def test_stage2_standardises_the_encoder_features_it_feeds_the_projector(monkeypatch):
    import mmicl.numerics.testbed.multimodal_experiments as mme
    from mmicl.numerics.testbed.multimodal_experiments import run_stage1, run_stage2

    seen = {}
    real = mme.train_multimodal

    def spy(system, mixture, *a, **k):
        x, _ = mixture.single_items(300, torch.Generator().manual_seed(5))
        seen["norm"] = system.encoder.features(x).pow(2).sum(-1).mean(1)
        return real(system, mixture, *a, **k)

    monkeypatch.setattr(mme, "train_multimodal", spy)
    m1 = DataConfig(K=64, L=4, D=4, N=4, B=2)
    tr = TrainConfig(steps=1, batch=8, lr=1e-3, eval_every=1, eval_size=64)
    s1 = run_stage1(ModelConfig(layers=1, heads=1, width=8, mlp_ratio=1, ape_slots=21), m1, [0, 1], tr)
    data = MultimodalConfig(m1, SecondModality(K=8, D=4, eps=1.0))
    run_stage2(s1, [MultimodalArm(f"d{s}", data, encoder_steps=s, standardise_features=True) for s in (0, 3)], tr)
    assert seen["norm"].shape == (4,)
    # mean squared norm 1 on the reference batch; on another batch of the same law, close to it
    assert torch.all((seen["norm"] > 0.7) & (seen["norm"] < 1.3))


# ---- standard errors -------------------------------------------------------------------------------
def test_follow_difference_se_is_the_multinomial_one():
    n = 1000
    assert mod.follow_difference_se(0.5, 0.5, 1.0, 0.0, n) == pytest.approx(math.sqrt(1 / n))   # ±1 coin; a sure arm
    assert mod.follow_difference_se(0.3, 0.2, 0.3, 0.2, n) == pytest.approx(math.sqrt(2 * (0.5 - 0.01) / n))
    rng = np.random.default_rng(0)          # Monte Carlo: X = 1[adjacent] − 1[other], p = (0.3, 0.2, 0.5)
    x = rng.choice([1, -1, 0], p=[0.3, 0.2, 0.5], size=(4000, n)).mean(1)
    assert x.std() == pytest.approx(mod.follow_difference_se(0.3, 0.2, 0, 0, n), rel=0.05)


def test_auc_is_the_area_under_and_its_se_bound_lies_between_the_independent_and_the_per_item_bounds():
    steps = [0, 25, 50, 100, 200]
    curve = np.array([[0.1, 0.5], [0.3, 0.5], [0.6, 0.5], [0.8, 0.5], [0.9, 0.5]])
    h = History(steps=steps, metrics={"acc": [torch.tensor(r, dtype=torch.float64) for r in curve]})
    auc, se = mod.auc_and_se(steps, curve, 400)
    np.testing.assert_allclose(auc, area_under(h, "acc"), rtol=1e-12)
    assert auc[1] == pytest.approx(0.5) and se[1] == pytest.approx(math.sqrt(0.25 / 400))  # constant curve
    w = np.array([12.5, 25, 37.5, 75, 50]) / 200                                          # trapezoid weights
    assert se[0] == pytest.approx(w @ np.sqrt(curve[:, 0] * (1 - curve[:, 0]) / 400))
    assert math.sqrt(w ** 2 @ (curve[:, 0] * (1 - curve[:, 0])) / 400) < se[0] <= math.sqrt(auc[0] * (1 - auc[0]) / 400)
    with pytest.raises(ValueError):
        mod.auc_and_se(steps, curve[:3], 400)


def test_slope_and_its_se_from_the_doses_se():
    x = np.array([[0.2, 0.2], [0.4, 0.4], [0.6, 0.6], [0.8, 0.8]])
    b_true = np.array([0.5, -1.0])
    y = 0.1 + b_true * x
    sxx = 0.2
    b, se = mod.slope_and_se(x, y, 0.0, 0.02)
    np.testing.assert_allclose(b, b_true, rtol=1e-12)
    np.testing.assert_allclose(se, 0.02 / math.sqrt(sxx), rtol=1e-12)       # Σ c_k² = 1/Sxx
    _, se_x = mod.slope_and_se(x, y, 0.01, 0.0)                             # a straight line: |b|·se_x/√Sxx
    np.testing.assert_allclose(se_x, np.abs(b_true) * 0.01 / math.sqrt(sxx), rtol=1e-12)
    rng = np.random.default_rng(1)                                          # Monte Carlo, both errors
    sims = [mod.slope_and_se(x + rng.normal(0, 0.01, x.shape), y + rng.normal(0, 0.02, x.shape), 0, 0)[0]
            for _ in range(4000)]
    _, se_both = mod.slope_and_se(x, y, 0.01, 0.02)
    np.testing.assert_allclose(np.std(sims, 0), se_both, rtol=0.06)
    b, se = mod.slope_and_se(np.full((4, 1), 0.5), np.arange(4.0).reshape(4, 1), 0.01, 0.01)
    assert np.isnan(b[0]) and np.isnan(se[0])


# ---- pilot rules and the committed pilots -----------------------------------------------------------
def test_claim6_rule_takes_the_smallest_grid_K_whose_median_unimodal_icl_reaches_the_level():
    f = {("ape", 256): [0.2, 0.95, 0.3, 0.91], ("ape", 1024): [0.99, 0.5, 0.98, 0.97], ("ape", 4096): [1, 1, 1, 1]}
    assert mod.choose_claim6(f)["K2"] == 1024
    assert mod.choose_claim6({**f, ("ape", 256): [0.9, 0.9, 0.2, 0.95]})["K2"] == 256
    assert mod.choose_claim6({("ape", 256): [0.1] * 4})["K2"] is None


def test_claim7_rule_takes_the_step_count_nearest_each_target_and_refuses_a_double_pick():
    acc = {0: [0.0, 0.02], 10: [0.38, 0.44], 20: [0.58, 0.6], 40: [0.7, 0.74], 80: [0.8, 0.82], 160: [0.9, 0.96]}
    assert mod.choose_claim7(acc, mod.FIRST_TARGETS)["encoder_steps"] == (10, 20, 80, 160)
    assert mod.choose_claim7(acc)["encoder_steps"] == (0, 10, 20, 80)  # the design's targets 0.2, 0.4, 0.6, 0.8
    assert mod.choose_claim7({0: [0.0], 10: [0.5], 20: [0.6]})["encoder_steps"] is None


@pytest.mark.skipif(not (STUDIES / "pilot_claim6.json").is_file(), reason="the pilot file is in the repository")
def test_the_committed_claim6_pilot_gives_version_3s_K2():
    doc = json.loads((STUDIES / "pilot_claim6.json").read_text())
    finals = {(k.split(" K=")[0], int(k.split(" K=")[1])): v for k, v in doc["finals"].items()}
    assert mod.choose_claim6(finals)["K2"] == mod.PILOTED_V3["claim6"]["K2"] == doc["K2"]
    assert doc["pilot_seeds"] == list(v3.PILOT_SEEDS)


def _fusion_curves(k2_counts: dict[int, dict[int, int]], n=8, copy=0.5):
    """Fusion pilot curves whose first ``count`` seeds at each grid step are far above the premise
    level and the rest on the copy plateau."""
    steps = list(range(0, max(mod.FUSION_STEP_GRID) + 1, 250))
    out = {}
    for k2, counts in k2_counts.items():
        acc = [[copy] * n for _ in steps]
        for s, c in counts.items():
            acc[steps.index(s)] = [0.99] * c + [copy] * (n - c)
        out[k2] = {"steps": steps, "acc_icl": acc, "copy": copy}
    return out


def test_fusion_premise_is_confounded_icl_above_copy_plus_two_binomial_se():
    level = 0.5 + 2 * math.sqrt(0.25 / 1024)   # 0.53125
    assert mod.above_copy([level - 1e-9, level, level + 1e-9, 0.99], 0.5, 1024).tolist() == \
        [False, False, True, True]
    assert mod.above_copy([0.52], 0.5, 4096).tolist() == [True]   # more items, a lower level


def test_claim6_v31_rule_takes_the_smallest_K2_then_the_fewest_steps_with_seven_of_eight():
    a, b, c = mod.FUSION_STEP_GRID
    picked = mod.choose_claim6_v31(_fusion_curves({1024: {a: 6, b: 7, c: 8}}))
    assert (picked["K2"], picked["fusion_steps"]) == (1024, b)
    assert picked["premise_counts"] == {f"K2=1024 steps={s}": n for s, n in ((a, 6), (b, 7), (c, 8))}
    # 1024 short everywhere: the rule needs 4096's run, then takes it
    short = mod.choose_claim6_v31(_fusion_curves({1024: {a: 6, b: 6, c: 6}}))
    assert short["K2"] is None and short["missing"] == 4096
    both = mod.choose_claim6_v31(_fusion_curves({1024: {a: 6, b: 6, c: 6}, 4096: {a: 7, b: 8, c: 8}}))
    assert (both["K2"], both["fusion_steps"]) == (4096, a)
    none = mod.choose_claim6_v31(_fusion_curves({1024: {a: 1, b: 2, c: 6}, 4096: {a: 0, b: 5, c: 6}}))
    assert none["K2"] is None and none["fusion_steps"] is None and "missing" not in none
    # a run that stopped before the last grid step decides nothing
    cut = _fusion_curves({1024: {a: 8}})
    cut[1024]["steps"] = cut[1024]["steps"][:-1]
    cut[1024]["acc_icl"] = cut[1024]["acc_icl"][:-1]
    assert mod.choose_claim6_v31(cut)["missing"] == 1024


def test_claim6_v32_rule_takes_the_longest_steps_only_where_every_pilot_seed_meets_the_premise():
    a, b, c = mod.FUSION_STEP_GRID
    every = mod.choose_claim6_v32(_fusion_curves({1024: {a: 7, b: 8, c: 8}}))
    assert (every["K2"], every["fusion_steps"]) == (1024, c)
    assert every["version_31"] == {"K2": 1024, "fusion_steps": a}
    assert mod.choose_claim6_v32(_fusion_curves({1024: {a: 7, b: 8, c: 7}}))["fusion_steps"] is None
    assert mod.choose_claim6_v32(_fusion_curves({1024: {a: 1, b: 2, c: 3}}))["fusion_steps"] is None  # no K2


@pytest.mark.skipif(not (STUDIES / "pilot_claim6_v31.json").is_file(), reason="the pilot file is in the repository")
def test_the_committed_claim6_v31_pilot_gives_the_piloted_K2_and_steps():
    doc = json.loads((STUDIES / "pilot_claim6_v31.json").read_text())
    curves = {int(k): v for k, v in doc["curves"].items()}
    picked = mod.choose_claim6_v31(curves)
    assert {k: picked[k] for k in ("K2", "fusion_steps")} == mod.PILOTED_V31["claim6"] == \
        {k: doc[k] for k in ("K2", "fusion_steps")}
    v32 = mod.choose_claim6_v32(curves)                  # version 3.2: the same run, the longest steps
    assert {k: v32[k] for k in ("K2", "fusion_steps")} == mod.PILOTED["claim6"]
    assert doc["pilot_seeds"] == list(mod.CLAIM6_V31_SEEDS) and not set(mod.CLAIM6_V31_SEEDS) & \
        {s for f in v3.FAMILIES.values() for s in f}
    assert doc["rule"] == mod.CLAIM6_V31_RULE


@pytest.mark.skipif(not (STUDIES / "pilot_claim7.json").is_file(), reason="the pilot file is in the repository")
def test_the_committed_claim7_pilot_gives_the_piloted_doses():
    doc = json.loads((STUDIES / "pilot_claim7.json").read_text())
    acc = {int(s): v for s, v in doc["accuracy"].items()}
    chosen = mod.PILOTED["claim7"]["encoder_steps"]
    assert tuple(mod.choose_claim7(acc)["encoder_steps"]) == chosen
    assert tuple(doc["encoder_steps"]) == mod.PILOTED["claim7"]["encoder_steps"]
    first = doc.get("first_design", doc.get("as_designed"))  # the file's name for the first design's choice
    assert tuple(mod.choose_claim7(acc, mod.FIRST_TARGETS)["encoder_steps"]) == tuple(first["encoder_steps"])
    assert doc["pilot_seeds"] == list(v3.PILOT_SEEDS) and sorted(acc) == sorted(mod.ENCODER_STEP_GRID)


# ---- the claims end to end at a toy size -------------------------------------------------------------
_TRAIN = TrainConfig(steps=3, batch=8, lr=1e-3, eval_every=2, eval_size=16)
TOY = replace(tbm.QUICK, m1=DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1),
              model=ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, pos="ape", ape_slots=21),
              stage1=_TRAIN, stage2=_TRAIN, m2=SecondModality(K=4, D=4, eps=0.1), seeds=2, encoder_K2=8)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setattr(tbm, "QUICK", TOY)
    monkeypatch.setattr(mod, "FAMILIES", {"A": (3000, 3001), "B": (4000, 4001)})
    monkeypatch.setattr(mod, "EVAL_SIZE", 16)
    monkeypatch.setattr(mod, "EVAL_SIZE7", 24)  # claim 7's own evaluation size (8192 in the design)
    monkeypatch.setattr(mod, "EVAL_EVERY_TRANSITION", 1)
    monkeypatch.setattr(mod, "PILOTED", {"claim6": {"K2": 8, "fusion_steps": 4},
                                        "claim7": {"encoder_steps": (0, 1, 2, 4)}})


def _uncovered(numbers, atol, rtol):
    return {k for k in number_keys(numbers) if tolerance_of(atol, rtol, k) is None}


@pytest.mark.parametrize("claim", ["claim6", "claim7"])
def test_each_claim_runs_at_toy_size_states_every_tolerance_and_resumes_from_its_store(claim, device, toy,
                                                                                       tmp_path, monkeypatch):
    fn = getattr(mod, f"{claim}_v3")
    cfg = RunConfig(quick=True, out=tmp_path, seed=1, device=device)
    hyps, checks, summary, figs = fn(cfg)
    design = v3.DESIGNS[claim]
    assert_checks_follow_the_design(checks, design)
    assert any(design.premises[0] in h.text for h in hyps)
    for c in checks:
        assert c.numbers_tolerance and not _uncovered(c.numbers, c.atol, c.rtol), c.name
    assert summary.why and not _uncovered(dict(summary), summary.atol, summary.rtol)
    verdict, _ = decide(hyps, checks)
    assert verdict in VERDICTS
    doc = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())
    assert doc["version"] == mod.VERSIONS[claim] and doc["families"] == {"A": [3000, 3001], "B": [4000, 4001]}
    assert doc["piloted"] == json.loads(json.dumps(mod.PILOTED[claim]))
    assert doc["device"] == device
    # a second run reads every run back from OUT/testbed/runs: nothing trains
    import mmicl.numerics.runs.runner as runner

    monkeypatch.setattr(runner, "execute", lambda *a, **k: pytest.fail("a stored run was trained again"))
    again = fn(cfg)
    assert again[1][0].numbers == checks[0].numbers


def test_both_claims_refuse_other_sizes_than_quick(toy, tmp_path):
    for fn in (mod.claim6_v3, mod.claim7_v3):
        with pytest.raises(TestbedConfigError, match="--quick"):
            fn(RunConfig(quick=False, out=tmp_path, seed=1))


def test_the_stage1_premise_needs_icl_and_an_induction_head():
    final = {"acc_icl": [0.99, 0.99, 0.6], "induction": [[[0.1], [0.8]], [[0.2], [0.25]], [[0.9], [0.1]]]}
    assert mod.stage1_does_icl(final).tolist() == [True, False, False]


def test_claim7_runs_at_another_evaluation_size_when_asked(toy, tmp_path):
    mod.claim7_v3(RunConfig(quick=True, out=tmp_path, seed=1), eval_size=40)  # the toy's own is 24
    doc = json.loads((tmp_path / "testbed" / "claim7.json").read_text())
    assert doc["eval_size"] == 40


def test_claim7s_design_evaluates_on_more_items_than_the_other_claims():
    assert mod.EVAL_SIZE7 == 8192 > v3.EVAL_SIZE and "8192 items" in v3.DESIGNS["claim7"].pilot_rule


def test_claim7s_stage1_is_claim4s_version_31_diverse_stage1_so_one_store_trains_it_once(tmp_path):
    from mmicl.proofs.claims import testbed_v3_transfer as tr
    from mmicl.numerics.runs import RunSpec
    from mmicl.numerics.runs.kinds import KINDS

    cfg = RunConfig(quick=True, out=tmp_path, seed=0)
    sz4 = tr._sizes(cfg, "claim4")
    for f, seeds in v3.FAMILIES.items():
        seven = KINDS["stage1"].normalise(mod._stage1(cfg, tbm.QUICK, seeds, heads=tr.STAGE1_HEADS_V31))
        four = KINDS["stage1"].normalise(tr._stage1_settings(cfg, sz4, f, model=replace(sz4.model,
                                                                                        heads=tr.STAGE1_HEADS_V31)))
        assert RunSpec("stage1", seven).key == RunSpec("stage1", four).key
        assert seven["model"]["heads"] == tr.STAGE1_HEADS_V31 == tr.CLAIM9_HEADS
