"""Claims 1, 2, 3 and 8 of the testbed (``proofs/claims/testbed/unimodal.py``): their pieces on hand-made inputs with
known answers (crossings, settledness, claim 2's shapes, the balanced se), and each claim end to end at a toy size,
on the CPU and, where there is one, on a CUDA device.

At the toy size each claim gives the design's checks under the design's names and roles; every number of every
check and of the summary states its tolerance; the verdict is one of the registry's; the claim's result file is
written with the design's version, the toy seed families and the device it ran on; and a second run reads every
run back from the results store and trains nothing.  Nothing here asserts how training turns out."""
from __future__ import annotations
import math
import json

import numpy as np
import pytest
from claim_checks import assert_checks_follow_the_design, uncovered_numbers
from mmicl.proofs.claim import VERDICTS, RunConfig, Summary
from mmicl.proofs.claims.testbed import common, design, unimodal
from mmicl.proofs.registry import REGISTRY
from toy_testbed import TOY_FAMILIES, TOY_PILOTED_UNIMODAL, toy_unimodal
from mmicl.proofs.claims.testbed.design import DESIGNS, EVAL_SIZE


# ---- crossings and settledness ------------------------------------------------------------------
def test_first_crossing_is_the_first_evaluation_at_or_above_and_never_is_placed_after_the_end():
    curve = np.array([[0.1, 0.1, 0.6], [0.5, 0.2, 0.7], [0.9, 0.3, 0.8]])
    t = unimodal.first_crossing(curve, [0, 25, 50], 0.5, never=75)
    assert t.tolist() == [25.0, 75.0, 0.0]
    assert unimodal.first_crossing(curve, [0, 25, 50], [0.6, 0.2, 0.8], never=75).tolist() == [50.0, 25.0, 50.0]


def test_a_score_rising_inside_the_icl_window_is_inside_and_one_rising_after_it_is_outside():
    steps = [0, 25, 50, 75, 100, 125]
    # ICL from the copy baseline 0.5 to 1.0: 10 % of the way (0.55) at 50, 90 % (0.95) at 100
    icl = np.array([0.5, 0.5, 0.6, 0.8, 0.96, 1.0])
    during = np.array([0.0, 0.0, 0.1, 0.5, 0.8, 0.9])  # half of 0.9 first at 75: 25 steps inside either edge
    after = np.array([0.0, 0.0, 0.0, 0.0, 0.1, 0.9])   # half first at 125: 25 steps after the window
    edge = np.array([0.0, 0.0, 0.5, 0.6, 0.8, 0.9])    # half first at 50: on the edge
    depth = unimodal.inside_window(np.stack([icl] * 3, 1), np.stack([during, after, edge], 1), steps, 0.5, never=150)
    assert depth.tolist() == [25.0, -25.0, 0.0]


def test_last_quarter_range_reads_only_the_evaluations_at_or_after_three_quarters():
    steps = [0, 250, 500, 750, 1000]
    curve = np.array([[0.0, 0.5], [1.0, 0.5], [0.0, 0.5], [0.40, 0.5], [0.43, 0.9]])
    assert unimodal.last_quarter_range(curve, steps) == pytest.approx([0.03, 0.4])
    assert unimodal.SETTLED_TOL == pytest.approx(2 * math.sqrt(0.5 / EVAL_SIZE))


# ---- claim 2's shapes ---------------------------------------------------------------------------
def test_claim2s_shapes_double_heads_or_layers_and_the_matched_one_has_the_closest_parameter_count():
    from mmicl.numerics.testbed.model import decoder_parameters
    from mmicl.proofs.claims.testbed.sizes import V4_HEADS, v4_unimodal_size

    sz = v4_unimodal_size(RunConfig(quick=True), "claim2", V4_HEADS, 1)
    model, D, L = sz.model, sz.data.D, sz.data.L
    shapes = unimodal.claim2_shapes(model, D, L)
    base, matched = (decoder_parameters(shapes[n], D, L) for n in ("base", "deep_matched"))
    assert shapes["heads"].heads == 2 * V4_HEADS and shapes["heads"].width == model.width
    assert shapes["deep"].layers == shapes["deep_matched"].layers == 4 and shapes["deep_matched"].width < model.width
    step = 2 * model.heads                                    # the widths width_matching_parameters tries
    for w in (shapes["deep_matched"].width - step, shapes["deep_matched"].width + step):  # neighbours: no closer
        other = decoder_parameters(shapes["deep_matched"].__class__(**{**shapes["deep_matched"].__dict__, "width": w}), D, L)
        assert abs(other - base) >= abs(matched - base)


def test_balanced_se_adds_the_blind_rules_sd_to_the_binomial_sd_per_arm_and_arms_in_quadrature():
    p = np.array([0.5])
    one = (math.sqrt(0.25) + 0.5) / math.sqrt(EVAL_SIZE)  # the blind rule's sd unrecorded: its largest, 0.5
    assert common.balanced_se(p, p) == pytest.approx([math.sqrt(2) * one])
    a, b = (math.sqrt(0.25) + 0.01) / math.sqrt(EVAL_SIZE), (math.sqrt(0.09) + 0.02) / math.sqrt(EVAL_SIZE)
    assert common.balanced_se(p, np.array([0.1]), [0.01], [0.02]) == pytest.approx([math.hypot(a, b)])
    assert common.acc_se(np.zeros(0), np.zeros(0)).size == 0


# ---- claim 1's doses ------------------------------------------------------------------------------------
def test_claim1s_doses_share_the_arms_they_have_in_common_and_match_the_designs_words():
    from mmicl.proofs.claims.testbed.sizes import CLAIM1_V4, V4_M1

    doses = unimodal.claim1_doses(V4_M1, CLAIM1_V4, 1024)
    assert list(doses) == list(unimodal.CLAIM1_KNOBS) and all(len(v) == 3 for v in doses.values())
    names = {a.name for v in doses.values() for a in v}
    assert len(names) == 10                                  # K16384 = p_B 1; K1024 = ε 0.1 at K_edge 1024
    assert doses["K"][-1].name == doses["p_bursty"][-1].name and doses["K"][1].name == doses["eps"][0].name
    for knob, field in (("K", "K"), ("p_bursty", "p_bursty"), ("eps", "eps"), ("zipf", "zipf")):
        assert [getattr(a.data, field) for a in doses[knob]] == list(getattr(CLAIM1_V4, field))
    assert {a.data.p_bursty for a in doses["zipf"]} == {CLAIM1_V4.zipf_p_bursty}
    assert {a.data.K for a in doses["eps"]} == {1024}
    words = DESIGNS["claim1"]
    for knob in unimodal.CLAIM1_KNOBS:                       # the design's words name the code's levels
        text = words.arms[knob] + " ".join(c.name for c in words.checks if c.a == knob)
        assert all(f"{v:g}" in text for v in getattr(CLAIM1_V4, knob)), knob
    assert len(unimodal.claim1_doses(V4_M1, CLAIM1_V4, 256)["eps"][0].name) and len(
        {a.name for v in unimodal.claim1_doses(V4_M1, CLAIM1_V4, 256).values() for a in v}) == 11


def test_dose_trend_is_the_fitted_rise_and_its_se_is_the_rises_sampling_sd():
    y = np.array([[0.2, 0.9], [0.5, 0.6], [0.8, 0.3]])      # a rise of 0.6 and a fall of 0.6, exactly linear
    se = np.full_like(y, 0.02)
    rise, rise_se = unimodal.dose_trend(y, se)
    np.testing.assert_allclose(rise, [0.6, -0.6], atol=1e-12)
    np.testing.assert_allclose(rise_se, 0.02 * math.sqrt(2), rtol=1e-12)   # (y_3 − y_1)/2 · 2 at three levels
    rng = np.random.default_rng(5)
    sims = np.array([unimodal.dose_trend(y + rng.normal(0, 0.02, y.shape), se)[0] for _ in range(4000)])
    np.testing.assert_allclose(sims.std(0), rise_se, rtol=0.06)           # 4000 draws: the sd's own error ≈ 1.1 %


def test_dose_least_step_takes_the_smallest_step_in_the_claimed_direction_with_its_se():
    y = np.array([[0.1, 0.5], [0.6, 0.4], [0.55, 0.2]])
    se = np.array([[0.01, 0.01], [0.02, 0.02], [0.03, 0.03]])
    step, step_se = unimodal.dose_least_step(y, se, up=True)
    np.testing.assert_allclose(step, [-0.05, -0.2], atol=1e-12)           # seed 1 dips by 0.05 at the top
    np.testing.assert_allclose(step_se, [math.hypot(0.02, 0.03), math.hypot(0.02, 0.03)], rtol=1e-12)
    down, _ = unimodal.dose_least_step(y, se, up=False)
    np.testing.assert_allclose(down, [-0.5, 0.1], atol=1e-12)


def test_dose_levels_reads_binomial_or_balanced_se_and_refuses_other_metrics():
    with pytest.raises(ValueError, match="acc_icl or iwl_balanced_over_blind"):
        unimodal.dose_levels(None, "auc_icl", [])


def test_claim1_refuses_to_run_before_its_pilot_has_chosen_K_edge(tmp_path, monkeypatch):
    from mmicl.numerics.testbed.config import TestbedConfigError
    from mmicl.proofs.claims.testbed import pilots

    monkeypatch.delitem(pilots.PILOTED, "v4_claim1", raising=False)
    with pytest.raises(TestbedConfigError, match="pilot_v4_claim1.py"):
        unimodal.claim1(RunConfig(quick=True, out=tmp_path, seed=1))


# ---- each claim end to end at a toy size ----------------------------------------------------------------
@pytest.mark.train
@pytest.mark.parametrize("claim", ["claim1", "claim2", "claim3", "claim8"])
def test_each_claim_runs_at_toy_size_states_every_tolerance_and_resumes_from_its_store(claim, device, tmp_path,
                                                                                       monkeypatch):
    toy_unimodal(monkeypatch)
    cfg = RunConfig(quick=True, out=tmp_path, seed=1, device=device)
    res = REGISTRY[f"testbed.{claim}"].run(cfg)          # through the registry: threads, verdict, evidence
    hyps, checks, summary = res.hypotheses, res.checks, Summary(res.summary, atol=res.summary_atol,
                                                                    rtol=res.summary_rtol, why=res.summary_tolerance)
    assert res.verdict in VERDICTS and res.verdict != "error", res.verdict_reason
    assert_checks_follow_the_design(checks, DESIGNS[claim])
    for c in checks:
        assert c.numbers_tolerance and "sign test" in c.tolerance, c.name
        assert c.numbers["plus"] + c.numbers["minus"] + c.numbers["unresolved"] <= 4, c.name
        assert all(len(c.numbers[f"diff_{f}"]) == len(c.numbers[f"outcomes_{f}"]) <= 2 for f in TOY_FAMILIES), c.name
    families = design.family_set(claim) if DESIGNS[claim].version >= 4 else TOY_FAMILIES
    assert any("seeds of a family may fail" in h.text for h in hyps)
    assert summary.why and uncovered_numbers(checks, summary) == []
    assert res.figures == []
    doc = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())
    assert doc["version"] == DESIGNS[claim].version
    if DESIGNS[claim].version >= 4:   # fresh families, each with its own data stream (100·seed + offset)
        assert doc["families"] == {f: list(fam.seeds) for f, fam in families.items()}
        assert doc["family_data_seeds"] == {f: 100 + fam.data_offset for f, fam in families.items()}
    else:
        assert doc["families"] == {f: list(s) for f, s in families.items()}
    assert doc["device"] == device and doc["data_seed"] == 1 and set(doc["seconds"]) == set(doc["tables"])
    if claim in ("claim1", "claim2", "claim3"):
        assert doc["piloted"] == json.loads(json.dumps(TOY_PILOTED_UNIMODAL[f"v4_{claim}"]))
    assert not [p for p in (tmp_path / "testbed").iterdir() if p.name.startswith(".")]   # no temp files left
    # a second run reads every run back from OUT/testbed/runs: nothing trains
    import mmicl.numerics.runs.runner as runner

    monkeypatch.setattr(runner, "execute", lambda *a, **k: pytest.fail("a stored run was trained again"))
    again = getattr(unimodal, claim)(cfg)
    assert json.dumps([c.numbers for c in again[1]]) == json.dumps([c.numbers for c in checks])  # NaN-safe


def test_the_unimodal_claims_refuse_other_sizes_than_quick(tmp_path):
    from mmicl.numerics.testbed.config import TestbedConfigError

    for claim in ("claim1", "claim2", "claim3", "claim8"):
        with pytest.raises(TestbedConfigError, match="--quick"):
            getattr(unimodal, claim)(RunConfig(quick=False, out=tmp_path, seed=1))


def test_claim8s_patch_differences_read_the_uniform_patch_against_copy_and_the_matching_patch_against_it():
    uniform, matching, copy = np.array([0.125, 0.30, 0.05]), np.array([0.96, 0.40, 0.90]), 0.125
    got = unimodal.patch_differences(uniform, matching, copy)
    np.testing.assert_allclose(got["collapse"][0], copy - uniform, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got["not_broken"][0], uniform - copy, rtol=0, atol=1e-15)
    np.testing.assert_allclose(got["specific"][0], matching - uniform, rtol=0, atol=1e-15)
    binomial = np.sqrt(uniform * (1 - uniform) / EVAL_SIZE)
    np.testing.assert_allclose(got["collapse"][1], binomial, rtol=1e-12)
    np.testing.assert_allclose(got["not_broken"][1], binomial, rtol=1e-12)
    both = np.sqrt(binomial ** 2 + matching * (1 - matching) / EVAL_SIZE)
    np.testing.assert_allclose(got["specific"][1], both, rtol=1e-12)
