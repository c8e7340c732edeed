"""The pieces of version 3 of the unimodal testbed claims (1, 2, 3.1, 8), on hand-made inputs with
known answers: the area's standard error, crossings, settledness, the shapes of claim 2, the pilot
rules and the committed pilot files, the copy rate of the ICL set and the balanced-IWL analysis."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from mmicl.numerics.testbed.decide_v3 import area_under_se
from mmicl.proofs.claims import testbed_v3 as v3
from mmicl.proofs.claims import testbed_v3_claims as v3c

ROOT = Path(__file__).resolve().parents[1]


# ---- the area's standard error ------------------------------------------------------------------
def test_a_constant_curve_has_the_binomial_se_of_one_evaluation():
    p, n = 0.3, 400
    assert area_under_se([p] * 5, [0, 10, 30, 60, 100], n) == pytest.approx(math.sqrt(p * (1 - p) / n))


def test_the_area_se_weights_evaluations_as_the_trapezoid_does():
    # steps 0, 1, 3: trapezoid weights (1/2·1, 1/2·1 + 1/2·2, 1/2·2) / 3 = (1/6, 1/2, 1/3)
    s = area_under_se(np.array([[0.5, 0.0], [0.0, 0.5], [0.0, 0.0]]), [0, 1, 3], 100)
    assert s == pytest.approx([0.05 / 6, 0.05 / 2])


def test_the_area_se_bounds_the_sd_of_the_area_whatever_the_correlation():
    """Simulated evaluation errors, independent and perfectly correlated: the sd of the area never
    exceeds the bound (equal to it when perfectly correlated)."""
    rng = np.random.default_rng(0)
    p, steps, n = np.array([0.2, 0.5, 0.9, 0.95]), np.array([0, 250, 500, 1000]), 256
    bound = area_under_se(p, steps, n)
    w = np.array([250 / 2, 250 / 2 + 250 / 2, 250 / 2 + 500 / 2, 500 / 2]) / 1000
    sd_one = np.sqrt(p * (1 - p) / n)
    independent = math.sqrt(float(np.sum((w * sd_one) ** 2)))
    correlated = float(np.sum(w * sd_one))
    assert independent < bound and correlated == pytest.approx(bound)
    z = rng.standard_normal(20000)
    area = (w * (p + np.outer(z, sd_one))).sum(1)  # one shared error: perfectly correlated
    assert area.std() == pytest.approx(bound, rel=0.05)  # 20 000 draws: the sd's relative se is 0.5 %


@pytest.mark.parametrize("bad", [dict(curve=[0.5, 1.2], steps=[0, 1]), dict(curve=[0.5, 0.4], steps=[1, 1]),
                                 dict(curve=[0.5], steps=[0, 1])])
def test_the_area_se_refuses_what_is_not_an_accuracy_curve(bad):
    with pytest.raises(ValueError):
        area_under_se(bad["curve"], bad["steps"], 100)


# ---- crossings and settledness ------------------------------------------------------------------
def test_first_crossing_is_the_first_evaluation_at_or_above_and_never_is_placed_after_the_end():
    curve = np.array([[0.1, 0.1, 0.6], [0.5, 0.2, 0.7], [0.9, 0.3, 0.8]])
    t = v3c.first_crossing(curve, [0, 25, 50], 0.5, never=75)
    assert t.tolist() == [25.0, 75.0, 0.0]
    assert v3c.first_crossing(curve, [0, 25, 50], [0.6, 0.2, 0.8], never=75).tolist() == [50.0, 25.0, 50.0]


def test_a_score_rising_inside_the_icl_window_is_inside_and_one_rising_after_it_is_outside():
    steps = [0, 25, 50, 75, 100, 125]
    # ICL from the copy baseline 0.5 to 1.0: 10 % of the way (0.55) at 50, 90 % (0.95) at 100
    icl = np.array([0.5, 0.5, 0.6, 0.8, 0.96, 1.0])
    during = np.array([0.0, 0.0, 0.1, 0.5, 0.8, 0.9])  # half of 0.9 first at 75: 25 steps inside either edge
    after = np.array([0.0, 0.0, 0.0, 0.0, 0.1, 0.9])   # half first at 125: 25 steps after the window
    edge = np.array([0.0, 0.0, 0.5, 0.6, 0.8, 0.9])    # half first at 50: on the edge
    depth = v3c.inside_window(np.stack([icl] * 3, 1), np.stack([during, after, edge], 1), steps, 0.5, never=150)
    assert depth.tolist() == [25.0, -25.0, 0.0]


def test_last_quarter_range_reads_only_the_evaluations_at_or_after_three_quarters():
    steps = [0, 250, 500, 750, 1000]
    curve = np.array([[0.0, 0.5], [1.0, 0.5], [0.0, 0.5], [0.40, 0.5], [0.43, 0.9]])
    assert v3c.last_quarter_range(curve, steps) == pytest.approx([0.03, 0.4])
    assert v3c.SETTLED_TOL == pytest.approx(2 * math.sqrt(0.5 / v3.EVAL_SIZE))


# ---- claim 2's shapes ---------------------------------------------------------------------------
def test_claim2s_matched_shape_has_four_layers_and_the_closest_parameter_count():
    from mmicl.proofs.claims.testbed import QUICK
    from mmicl.proofs.claims.testbed_multimodal import decoder_parameters

    shapes = v3c.claim2_shapes(QUICK.model, QUICK.data.D, QUICK.data.L)
    base = decoder_parameters(shapes["base"], QUICK.data.D, QUICK.data.L)
    matched = decoder_parameters(shapes["deep_matched"], QUICK.data.D, QUICK.data.L)
    assert shapes["heads"].heads == 4 and shapes["heads"].width == QUICK.model.width
    assert shapes["deep"].layers == shapes["deep_matched"].layers == 4 and shapes["deep_matched"].width < QUICK.model.width
    for w in (shapes["deep_matched"].width - 2, shapes["deep_matched"].width + 2):  # its neighbours are no closer
        other = decoder_parameters(shapes["deep_matched"].__class__(**{**shapes["deep_matched"].__dict__, "width": w}),
                                   QUICK.data.D, QUICK.data.L)
        assert abs(other - base) >= abs(matched - base)


# ---- pilot rules --------------------------------------------------------------------------------
def test_claim1s_pilot_rule_takes_the_largest_K_where_icl_is_not_saturated():
    finals = {("ape", 128): [0.1, 0.2, 0.15], ("ape", 256): [0.2, 0.95, 0.5], ("ape", 512): [0.95, 0.99, 0.3]}
    assert v3.choose_claim1(finals)["K_edge"] == 256          # medians 0.15, 0.5, 0.95
    finals[("ape", 512)] = [0.95, 0.2, 0.3]
    assert v3.choose_claim1(finals)["K_edge"] == 512
    assert v3.choose_claim1({("ape", 256): [0.2]})["K_edge"] is None  # a run of the grid is missing


def test_claim3s_second_pilot_rule_counts_seeds_with_both_arms_doing_icl_and_breaks_ties_as_stated():
    hi, lo = [0.95] * 4, [0.95, 0.95, 0.5, 0.5]
    finals = {(p, k, st): hi for p in ("ape", "rope") for k in (1024, 2048, 4096) for st in (3000, 6000)}
    assert (v3.choose_claim3_v31(finals)["steps_both"], v3.choose_claim3_v31(finals)["K_both"]) == (3000, 1024)
    finals |= {("rope", 1024, 3000): lo, ("ape", 2048, 3000): lo, ("ape", 4096, 3000): lo}
    c = v3.choose_claim3_v31(finals)
    assert (c["steps_both"], c["K_both"]) == (6000, 1024) and c["both_icl_counts"]["K=1024, 3000 steps"] == 2
    del finals[("ape", 4096, 6000)]
    assert v3.choose_claim3_v31(finals)["K_both"] is None


@pytest.mark.skipif(not (ROOT / "studies").is_dir(), reason="the pilot files are in the repository, not in a package")
@pytest.mark.parametrize("pilot, claim", [("claim1", "claim1"), ("claim3_v31", "claim3")])
def test_the_piloted_settings_are_what_each_committed_pilot_file_gives_by_its_rule(pilot, claim):
    doc = json.loads((ROOT / "studies" / "results" / f"pilot_{pilot}.json").read_text())
    finals = {}
    for key, v in doc["finals"].items():
        pos, rest = key.split(" K=")
        k, _, steps = rest.partition(" steps=")
        finals[(pos, int(k)) + ((int(steps),) if steps else ())] = v
    chosen = v3.PILOTS[pilot].choose(finals)
    assert {k: chosen[k] for k in chosen if k in v3c.PILOTED[claim]} == \
        {k: v for k, v in v3c.PILOTED[claim].items() if k in chosen}
    assert any(k in chosen for k in v3c.PILOTED[claim])
    assert doc["pilot_seeds"] == list(v3.PILOTS[pilot].seeds) and doc["rule"] == v3.PILOTS[pilot].rule


# ---- metrics --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_run():
    from mmicl.numerics.testbed.config import DataConfig, MemberSpec, ModelConfig, TrainConfig
    from mmicl.numerics.testbed.train import train_ensemble

    torch.set_num_threads(1)
    data = DataConfig(K=64, L=16, D=8, N=4, B=2, p_bursty=1.0, eps=0.1)
    return train_ensemble(ModelConfig(layers=2, heads=2, width=8, ape_slots=16), [MemberSpec(data, 1), MemberSpec(data, 2)],
                          TrainConfig(steps=6, batch=8, eval_every=3, eval_size=32), data_seed=5)


def test_every_correct_icl_prediction_is_a_copy_of_a_context_label(tiny_run):
    """On the ICL set the answer is in the context, so the copy rate is at least the accuracy."""
    h = tiny_run.history
    rate, acc = h.curve("icl_context_rate"), h.curve("acc_icl")
    assert rate.shape == acc.shape and bool((rate >= acc - 1e-6).all()) and bool(((rate >= 0) & (rate <= 1)).all())


def test_the_balanced_analysis_is_the_balanced_evaluation_of_every_member(tiny_run):
    from mmicl.numerics.testbed.heads import ANALYSES
    from mmicl.numerics.testbed.metrics import evaluate_iwl_balanced

    out = ANALYSES["iwl_balanced"](tiny_run, eval_size=32, seed=11)
    direct = evaluate_iwl_balanced(tiny_run.model, tiny_run.mixture, 32, 11)
    assert out["seed"] == 11
    assert len(out["iwl_blind_best_sd"]) == 2 and all(0 <= x <= 0.5 for x in out["iwl_blind_best_sd"])
    for k, v in direct.items():
        assert out[k] == pytest.approx(v.double().numpy().tolist(), abs=1e-6)


def test_balanced_se_adds_the_blind_rules_sd_to_the_binomial_sd_per_arm_and_arms_in_quadrature():
    p = np.array([0.5])
    one = (math.sqrt(0.25) + 0.5) / math.sqrt(v3.EVAL_SIZE)  # the blind rule's sd unrecorded: its largest, 0.5
    assert v3c.balanced_se(p, p) == pytest.approx([math.sqrt(2) * one])
    a, b = (math.sqrt(0.25) + 0.01) / math.sqrt(v3.EVAL_SIZE), (math.sqrt(0.09) + 0.02) / math.sqrt(v3.EVAL_SIZE)
    assert v3c.balanced_se(p, np.array([0.1]), [0.01], [0.02]) == pytest.approx([math.hypot(a, b)])
    assert v3c.acc_se(np.zeros(0), np.zeros(0)).size == 0


def test_the_circuit_analysis_ablates_disjoint_head_sets_chosen_on_the_selection_set(tiny_run):
    """The induction and neither sets never share a head; a threshold no score reaches leaves the
    induction set empty, and ablating an empty set changes nothing; the set ablations are the
    accuracies that ablating those masks gives directly."""
    from mmicl.numerics.testbed.heads import ANALYSES
    from mmicl.numerics.testbed.metrics import ablated_icl_accuracy, reference_means

    kw = dict(eval_size=32, selection_seed=7, reference_seed=8, control_seed=0)
    out = ANALYSES["induction_circuit"](tiny_run, threshold=-2.0, prev_threshold=2.0, **kw)
    ind, nei = np.array(out["induction_heads"]), np.array(out["neither_heads"])
    assert ind.all() and not nei.any()  # every score exceeds −2: every head is an induction head
    assert out["icl_without_neither_heads_mean"] == pytest.approx(out["icl"])
    means = reference_means(tiny_run.model, tiny_run.mixture, 32, 8)
    direct = ablated_icl_accuracy(tiny_run.model, tiny_run.eval_sets, [], torch.from_numpy(ind), means=means)
    assert out["icl_without_induction_heads_mean"] == pytest.approx(direct.tolist())
    out = ANALYSES["induction_circuit"](tiny_run, threshold=2.0, prev_threshold=2.0, **kw)
    ind, nei = np.array(out["induction_heads"]), np.array(out["neither_heads"])
    assert not ind.any() and nei.all() and not (ind & nei).any()
    assert out["icl_without_induction_heads_zero"] == pytest.approx(out["icl"])
    out = ANALYSES["induction_circuit"](tiny_run, threshold=2.0, prev_threshold=-2.0, **kw)
    assert not np.array(out["neither_heads"]).any()  # every head is a previous-token head: none is neither
