"""Version-3 metrics of the testbed: the label-balanced in-weights set and its best query-blind rule,
the area under a curve, and the multimodal layout with a readout token after both query items.

Fast (CPU, a few seconds): small mixtures, a few training steps."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mmicl.numerics.testbed.config import (DataConfig, MemberSpec, ModelConfig, MultimodalConfig, MultimodalMember,
                                           SecondModality, TestbedConfigError, TrainConfig)
from mmicl.numerics.testbed.data import Mixture, blind_best_accuracy, blind_best_prediction
from mmicl.numerics.testbed.experiments import Arm, area_under, run_arms
from mmicl.numerics.testbed.metrics import (EvalSets, balanced_metrics, draw_iwl_balanced, evaluate,
                                            evaluate_iwl_balanced)
from mmicl.numerics.testbed.model import EnsembleDecoder
from mmicl.numerics.testbed.multimodal_data import MultimodalMixture
from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, run_fusion
from mmicl.numerics.testbed.multimodal_metrics import (MultimodalEvalSets, baselines,
                                                       follow_adjacent_minus_other, uniform_baselines)
from mmicl.numerics.testbed.multimodal_model import (EnsembleMLP, MultimodalSystem, adjacent_modality,
                                                     token_positions)
from mmicl.numerics.testbed.multimodal_train import train_multimodal
from mmicl.numerics.testbed.train import History

L = 16
ZIPF = DataConfig(K=2048, L=L, D=8, N=4, B=2, p_bursty=0.9, eps=0.1, zipf=1.5)
UNIFORM = DataConfig(K=2048, L=L, D=8, N=4, B=2, p_bursty=0.9, eps=0.1, zipf=0.0)
SIZE = 4096


def within(x: float, p: float, n: int, z: float = 4.5) -> bool:
    """|x − p| within z binomial standard errors of n trials."""
    return abs(x - p) <= z * math.sqrt(p * (1 - p) / n)


@pytest.fixture(scope="module")
def balanced():
    mix = Mixture([MemberSpec(ZIPF, 1), MemberSpec(UNIFORM, 2)])
    s, shift, blind = draw_iwl_balanced(mix, SIZE, seed=11, ape_slots=None)
    return mix, s, blind


# ---- 1. the label-balanced in-weights set ------------------------------------------------------
def test_balanced_set_label_histogram_is_uniform_and_the_context_avoids_the_query_label(balanced):
    mix, s, _ = balanced
    for e in range(2):
        counts = torch.bincount(s.target[e], minlength=L).double()
        assert all(within(float(c) / SIZE, 1 / L, SIZE) for c in counts)
        chi2 = float(((counts - SIZE / L) ** 2 / (SIZE / L)).sum())
        assert chi2 < 45.0                                   # 15 degrees of freedom: P(χ² > 45) ≈ 1e-4
    assert not bool((s.context_labels == s.target.unsqueeze(-1)).any())
    assert torch.equal(s.query_class % L, s.target)          # the query class has the query's label
    # within a label, the query class follows the class law restricted to it: under Zipf the
    # label's lowest class (k = ℓ) is the most frequent one
    ell = s.target[0] == 1
    k = s.query_class[0][ell]
    p = mix.class_probs()[0][1::L]
    assert within(float((k == 1).float().mean()), float(p[0] / p.sum()), int(ell.sum()))


def test_a_query_blind_constant_predictor_scores_one_over_L(balanced):
    mix, s, blind = balanced
    for label in (0, 5):
        pred = torch.full_like(s.target, label)
        m = balanced_metrics(pred, s.target, blind, L)
        assert all(within(float(a), 1 / L, SIZE) for a in m["acc_iwl_balanced"])
        assert all(within(float(a), 1 / L, SIZE, z=6) for a in m["iwl_blind_marginal"])
        # the constant rule is no better than the best query-blind rule
        assert bool((m["iwl_balanced_over_blind"] <= 4.5 * math.sqrt(0.25 / SIZE)).all())


def test_the_exact_blind_rule_scores_its_computed_accuracy_so_its_gain_over_blind_is_zero(balanced):
    mix, s, blind = balanced
    post = mix.blind_posterior(s.context_labels, balanced=True)
    pred = blind_best_prediction(post)
    assert not bool((s.context_labels == pred.unsqueeze(-1)).any())     # it never names a context label
    m = balanced_metrics(pred, s.target, blind, L)
    for e in range(2):
        assert within(float(m["acc_iwl_balanced"][e]), float(blind[e]), SIZE)
        assert abs(float(m["iwl_balanced_over_blind"][e])) < 4.5 * math.sqrt(0.25 / SIZE)
    # the Bayes rule beats 1/L by elimination, and more under Zipf (the frequent labels that are absent)
    assert float(blind[1]) > 1 / L and float(blind[0]) > float(blind[1]) + 0.03


def test_blind_posterior_under_a_uniform_law_is_uniform_over_the_labels_absent_from_the_context(balanced):
    mix, s, blind = balanced
    post = mix.blind_posterior(s.context_labels, balanced=True)[1]
    absent = torch.stack([(torch.arange(L).view(1, L) != c.view(-1, 1)).all(0) for c in s.context_labels[1]])
    torch.testing.assert_close(post, absent.double() / absent.sum(-1, keepdim=True))
    torch.testing.assert_close(blind[1].double(), (1 / absent.sum(-1).double()).mean(), rtol=1e-6, atol=1e-7)


def test_a_perfect_in_weights_oracle_scores_one(balanced):
    mix, s, blind = balanced
    m = balanced_metrics(s.query_class % L, s.target, blind, L)
    assert torch.equal(m["acc_iwl_balanced"], torch.ones(2))
    torch.testing.assert_close(m["iwl_balanced_over_blind"], 1 - blind)


def test_on_the_published_iwl_set_the_blind_rule_is_a_label_prior():
    """What the reviewer found: on the query-weighted IWL set under Zipf α = 1.5 the Bayes query-blind
    rule scores far above 1/L (about 0.58 at this size), and the balanced set removes most of it."""
    mix = Mixture([MemberSpec(DataConfig(K=16384, L=L, D=8, N=4, B=2, zipf=1.5), 1)])
    g = torch.Generator().manual_seed(0)
    s = mix.iwl_batch(SIZE, g)
    post = mix.blind_posterior(s.context_labels, balanced=False)
    best = float(blind_best_accuracy(post)[0])
    assert 0.5 < best < 0.65
    assert within(float((blind_best_prediction(post) == s.target).float().mean()), best, SIZE)
    b = mix.iwl_balanced_batch(SIZE, g)
    assert float(blind_best_accuracy(mix.blind_posterior(b.context_labels))[0]) < 0.25


def test_eval_sets_with_the_balanced_set_keep_the_other_sets_and_keys_and_add_the_new_keys():
    d = DataConfig(K=256, L=8, D=8, N=4, B=2, zipf=1.0)
    mix = Mixture([MemberSpec(d, 3), MemberSpec(d, 4)])
    plain = EvalSets.draw(mix, 64, 5, 16)
    more = EvalSets.draw(mix, 64, 5, 16, balanced=True)
    for name in ("icl", "flip", "iwl"):
        assert torch.equal(getattr(plain, name).tokens, getattr(more, name).tokens)
        assert torch.equal(plain.shifts[name], more.shifts[name])
    assert plain.iwl_balanced is None and more.iwl_balanced is not None
    model = EnsembleDecoder(ModelConfig(layers=1, heads=1, width=8, ape_slots=16), 8, 8, [0, 1])
    a, b = evaluate(model, plain), evaluate(model, more)
    new = {"acc_iwl_balanced", "iwl_blind_best", "iwl_balanced_over_blind", "iwl_blind_marginal"}
    assert set(b) - set(a) == new and not new & set(a)
    for k in a:
        assert torch.equal(a[k], b[k])
    torch.testing.assert_close(b["iwl_balanced_over_blind"], b["acc_iwl_balanced"] - b["iwl_blind_best"])
    one = evaluate_iwl_balanced(model, mix, 64, seed=9)
    assert set(one) == new and one["acc_iwl_balanced"].shape == (2,)


@pytest.mark.train
def test_arm_results_give_the_balanced_metric_per_seed():
    d = DataConfig(K=64, L=8, D=8, N=4, B=2)
    r = run_arms(ModelConfig(layers=1, heads=1, width=8, ape_slots=16), [Arm("a", d), Arm("b", d)], [0, 1],
                 TrainConfig(steps=4, batch=8, eval_every=2, eval_size=16))
    v = r.balanced_iwl("b", size=64, seed=3)
    assert v.shape == (2,) and np.all(np.abs(v) <= 1)
    auc = r.area_under("acc_icl", "a")
    assert auc.shape == (2,) and np.all((0 <= auc) & (auc <= 1))


# ---- 2. area under a curve ------------------------------------------------------------------------
def _history(steps, values) -> History:
    h = History()
    for s, v in zip(steps, values):
        h.add(s, {"acc": torch.tensor(v, dtype=torch.float32)}, torch.zeros(len(v)))
    return h


def test_area_under_known_curves():
    steps = [0, 25, 50, 100]
    # member 0 constant 0.3; member 1 the ramp step/100; member 2 a step 0 → 1 at 50 (uneven spacing)
    vals = [[0.3, s / 100, 0.0 if s < 50 else 1.0] for s in steps]
    h = _history(steps, vals)
    np.testing.assert_allclose(area_under(h, "acc"), [0.3, 0.5, (25 * 0.5 + 50) / 100], rtol=1e-6)
    np.testing.assert_allclose(area_under(h, "acc", steps=(50, 100)), [0.3, 0.75, 1.0], rtol=1e-6)
    np.testing.assert_allclose(area_under(h, "acc", steps=(25, 25)), [0.3, 0.25, 0.0], rtol=1e-6)
    np.testing.assert_allclose(area_under(h.to_json(), "acc"), area_under(h, "acc"))
    with pytest.raises(ValueError):
        area_under(h, "acc", steps=(60, 90))
    full = area_under(_history([0, 10], [[1.0], [1.0]]), "acc")
    assert float(full[0]) == 1.0


# ---- 3. the readout-token layout ----------------------------------------------------------------
TINY = ModelConfig(layers=1, heads=2, width=8, pos="ape", ape_slots=24)


def mm_member(layout: str, seed: int = 0) -> MultimodalMember:
    m1 = DataConfig(K=64, L=4, D=4, N=4, B=2)
    return MultimodalMember(MultimodalConfig(m1, SecondModality(K=8, D=3), 1.0, layout), seed)


def system_for(mx: MultimodalMixture, layout: str, seeds=(0, 1)) -> MultimodalSystem:
    dec = EnsembleDecoder(TINY, 4, 4, list(seeds))
    return MultimodalSystem(dec, EnsembleMLP([3, 8, 4], list(seeds), salt=1), mx.label_vectors, layout,
                            seeds=list(seeds))


def test_config_accepts_the_readout_layouts_and_refuses_others():
    for layout in ("readout_last", "readout_last_m2_first", "readout_last_query_reversed",
                   "readout_last_m2_first_query_reversed"):
        assert mm_member(layout).data.seq_len == 3 * 4 + 3
    assert mm_member("m1_first").data.seq_len == 3 * 4 + 2
    with pytest.raises(TestbedConfigError, match="readout_last"):
        mm_member("readout_first")


@pytest.mark.parametrize("layout", ["readout_last", "readout_last_m2_first", "readout_last_query_reversed",
                                    "readout_last_m2_first_query_reversed"])
def test_readout_layout_builds_3N_plus_3_tokens_with_R_last(layout):
    N = 4
    mx = MultimodalMixture([mm_member(layout, e) for e in range(2)])
    s = mx.train_batch(5, torch.Generator().manual_seed(0))
    system = system_for(mx, layout)
    tok = system.tokens(s)
    assert tok.shape == (2, 5, 3 * N + 3, 4)
    pos = token_positions(layout, N)
    assert int(pos["readout"]) == 3 * N + 2
    torch.testing.assert_close(tok[:, :, -1], system.readout_token.detach()[:, None].expand(2, 5, 4))
    torch.testing.assert_close(tok[:, :, pos["m1"]], s.m1[:, :, :N], rtol=0, atol=0)
    torch.testing.assert_close(tok[:, :, int(pos["m1_q"])], s.m1[:, :, N], rtol=0, atol=0)
    z = system.projector(s.m2)
    torch.testing.assert_close(tok[:, :, pos["m2"]], z[:, :, :N])
    torch.testing.assert_close(tok[:, :, int(pos["m2_q"])], z[:, :, N])
    y = torch.stack([mx.label_vectors[e][s.labels[e]] for e in range(2)])
    torch.testing.assert_close(tok[:, :, pos["label"]], y, rtol=0, atol=0)
    # the modality next to the label: the item just before each label token
    adj = adjacent_modality(layout)
    assert torch.equal(pos[adj] + 1, pos["label"])
    assert adj == ("m1" if "m2_first" in layout else "m2")
    # R is a parameter of the member's seed, trained with the projector under every choice
    for what in ("projector", "projector+readout", "all"):
        assert any(p is system.readout_token for p in system.trainable(what))
    again = system_for(mx, layout)
    assert torch.equal(again.readout_token, system.readout_token)
    # shifts drawn for 3N+2 tokens (as the training loop draws them) still fit the APE slots
    shift = torch.full((2, 5), TINY.ape_slots - (3 * N + 2))
    assert system(s, shift).logits.shape == (2, 5, 4)


@pytest.mark.train
def test_readout_layout_trains_and_its_metrics_run():
    layout = "readout_last"
    mx = MultimodalMixture([mm_member(layout, e) for e in range(2)])
    system = system_for(mx, layout)
    sets = MultimodalEvalSets.draw(mx, 32, seed=5, ape_slots=TINY.ape_slots, balanced=True)
    assert sets.shifts["icl"].max() <= TINY.ape_slots - (3 * 4 + 3)
    before = system.readout_token.detach().clone()
    params = system.trainable("projector+readout")
    h = train_multimodal(system, mx, params, TrainConfig(steps=4, batch=16, lr=1e-2, eval_every=2, eval_size=32),
                         sets, data_seed=0)
    assert not torch.equal(before, system.readout_token.detach())
    m = {k: v[-1] for k, v in h.metrics.items()}
    for k in ("conflict_follow_m1", "conflict_follow_m2", "induction", "attn_match_m2", "pair_attn_m1",
              "acc_iwl_balanced", "iwl_blind_best", "iwl_balanced_over_blind"):
        assert k in m and bool(torch.isfinite(m[k]).all())
    d = follow_adjacent_minus_other(m, layout)
    torch.testing.assert_close(d, m["conflict_follow_m2"] - m["conflict_follow_m1"])
    torch.testing.assert_close(follow_adjacent_minus_other(m, "m2_first"), -d)
    curve = follow_adjacent_minus_other({k: h.curve(k) for k in ("conflict_follow_m1", "conflict_follow_m2")},
                                        layout)
    assert curve.shape == (3, 2)
    base = uniform_baselines(4, 2, layout)
    assert base["attn_match_m1"] == 2 / 15 and baselines(mx.members[0].data.m1, layout)["copy"] == 0.5
    assert uniform_baselines(4, 2) == uniform_baselines(4, 2, "m1_first")


@pytest.mark.train
def test_early_fusion_runs_in_the_readout_layout():
    m1 = DataConfig(K=64, L=4, D=4, N=4, B=2)
    arm = MultimodalArm("r", MultimodalConfig(m1, SecondModality(K=8, D=3), 1.0, "readout_last"))
    r = run_fusion(ModelConfig(layers=1, heads=1, width=8, ape_slots=15), m1, [arm], [0, 1],
                   TrainConfig(steps=3, batch=8, eval_every=3, eval_size=16))
    assert r.run.model.readout_token is not None
    assert r.final("conflict_follow_m1", "r").shape == (2,)


def test_multimodal_balanced_set_is_label_balanced_and_keeps_the_other_sets():
    mem = [MultimodalMember(MultimodalConfig(DataConfig(K=64, L=8, D=4, N=4, B=2),
                                             SecondModality(K=64, D=3, zipf=1.5), 1.0, "m1_first"), e)
           for e in range(2)]
    mx = MultimodalMixture(mem)
    plain = MultimodalEvalSets.draw(mx, 2048, seed=3, ape_slots=None)
    more = MultimodalEvalSets.draw(mx, 2048, seed=3, ape_slots=None, balanced=True)
    assert set(more.sets) - set(plain.sets) == {"iwl_balanced"}
    for k, s in plain.sets.items():
        assert torch.equal(s.m1, more.sets[k].m1) and torch.equal(s.m2, more.sets[k].m2)
    s = more.sets["iwl_balanced"]
    assert not bool((s.labels == s.target.unsqueeze(-1)).any())
    for e in range(2):
        counts = torch.bincount(s.target[e], minlength=8)
        assert all(within(float(c) / 2048, 1 / 8, 2048) for c in counts)
    const = balanced_metrics(torch.zeros_like(s.target), s.target, more.iwl_blind_best, 8)
    assert all(within(float(a), 1 / 8, 2048) for a in const["acc_iwl_balanced"])
    exact = blind_best_prediction(mx.m2.blind_posterior(s.labels))
    m = balanced_metrics(exact, s.target, more.iwl_blind_best, 8)
    assert bool((m["iwl_balanced_over_blind"].abs() < 4.5 * math.sqrt(0.25 / 2048)).all())


# ---- 4. the existing layouts are unchanged ------------------------------------------------------
@pytest.mark.parametrize("layout", ["m1_first", "m2_first"])
def test_existing_layouts_build_the_same_sequences_as_before(layout):
    """The layout as it was written before the readout layouts (the formula, re-implemented here),
    seeded: byte-identical tokens, no readout parameter, the same positions."""
    N = 4
    mx = MultimodalMixture([mm_member(layout, e) for e in range(2)])
    sets = MultimodalEvalSets.draw(mx, 16, seed=7, ape_slots=TINY.ape_slots)
    system = system_for(mx, layout)
    assert system.readout_token is None
    assert all("readout" not in n for n, _ in system.named_parameters())
    for s in sets.sets.values():
        z2 = system.projector(s.m2)
        E, b, n1, D = s.m1.shape
        y = torch.stack([mx.label_vectors[e][s.labels[e]] for e in range(E)])
        first, second = (s.m1, z2) if layout == "m1_first" else (z2, s.m1)
        ctx = torch.stack([first[:, :, :N], second[:, :, :N], y], dim=3).reshape(E, b, 3 * N, D)
        old = torch.cat([ctx, first[:, :, N:], second[:, :, N:]], dim=2)
        new = system.tokens(s)
        assert new.shape == old.shape and new.detach().numpy().tobytes() == old.detach().numpy().tobytes()
    assert sets.shifts["icl"].max() <= TINY.ape_slots - (3 * N + 2)
    assert set(token_positions(layout, N)) == {"m1", "m2", "label", "m1_q", "m2_q"}


# ---- metrics --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_run():
    from mmicl.numerics.testbed.config import DataConfig, MemberSpec, ModelConfig, TrainConfig
    from mmicl.numerics.testbed.train import train_ensemble

    torch.set_num_threads(1)
    data = DataConfig(K=64, L=16, D=8, N=4, B=2, p_bursty=1.0, eps=0.1)
    return train_ensemble(ModelConfig(layers=2, heads=2, width=8, ape_slots=16), [MemberSpec(data, 1), MemberSpec(data, 2)],
                          TrainConfig(steps=6, batch=8, eval_every=3, eval_size=32), data_seed=5)


@pytest.mark.train
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


# ---- version 4: the layer- and count-matched control, and the previous-token ablation ---------------
@st.composite
def _head_classes(draw):
    """Disjoint induction and eligible masks (layers, H)."""
    layers, H = draw(st.integers(1, 4)), draw(st.integers(1, 6))
    cls = np.array(draw(st.lists(st.sampled_from([0, 1, 2]), min_size=layers * H, max_size=layers * H)))
    cls = cls.reshape(layers, H)
    return cls == 1, cls == 2


@given(classes=_head_classes(), seed=st.integers(0, 2 ** 16))
def test_a_matched_control_has_each_layers_count_of_eligible_heads_or_is_none_when_a_layer_is_short(classes, seed):
    from mmicl.numerics.testbed.heads import matched_control

    ind, eligible = classes
    got = matched_control(ind, eligible, np.random.default_rng(seed))
    short = (ind.sum(1) > eligible.sum(1)).any()
    if not ind.any() or short:
        assert got is None
        return
    assert got.shape == ind.shape and not (got & ~eligible).any()
    assert (got.sum(1) == ind.sum(1)).all()


def test_a_matched_control_draws_every_eligible_choice_of_a_layer():
    """Uniform among the eligible heads: one induction head and three eligible heads in its layer, each
    drawn in 300 tries (each is missed by all of them with probability (2/3)^300)."""
    from mmicl.numerics.testbed.heads import matched_control

    ind = np.array([[True, False, False, False], [False, False, False, False]])
    eligible = np.array([[False, True, True, True], [True, True, False, False]])
    rng = np.random.default_rng(3)
    drawn = {int(np.flatnonzero(matched_control(ind, eligible, rng)[0])[0]) for _ in range(300)}
    assert drawn == {1, 2, 3}
    with pytest.raises(ValueError, match="both"):
        matched_control(ind, ind, rng)
    with pytest.raises(ValueError, match="shape"):
        matched_control(ind, eligible[:1], rng)


def test_the_circuit_analysis_ablates_the_matched_and_the_previous_token_heads_it_names(tiny_run):
    from mmicl.numerics.testbed.heads import ANALYSES
    from mmicl.numerics.testbed.metrics import ablated_icl_accuracy, reference_means

    kw = dict(eval_size=32, selection_seed=7, reference_seed=8, control_seed=0)
    means = reference_means(tiny_run.model, tiny_run.mixture, 32, 8)
    for threshold, prev_threshold in ((-2.0, 2.0), (2.0, -2.0), (0.0, 0.0)):
        out = ANALYSES["induction_circuit"](tiny_run, threshold=threshold, prev_threshold=prev_threshold, **kw)
        ind, nei = np.array(out["induction_heads"]), np.array(out["neither_heads"])
        prev, matched = np.array(out["prev_token_heads"]), np.array(out["matched_heads"])
        assert not (ind & prev).any() and not (nei & prev).any() and (ind | nei | prev).all()
        for e, ok in enumerate(out["has_matched_control"]):
            if ok:
                assert (matched[e].sum(-1) == ind[e].sum(-1)).all() and not (matched[e] & ~nei[e]).any()
            else:
                assert not matched[e].any()
        for name, mask in (("matched", matched), ("prev_token", prev)):
            direct = ablated_icl_accuracy(tiny_run.model, tiny_run.eval_sets, [], torch.from_numpy(mask), means=means)
            assert out[f"icl_without_{name}_heads_mean"] == pytest.approx(direct.tolist())
    # every head an induction head: no matched control on any member
    out = ANALYSES["induction_circuit"](tiny_run, threshold=-2.0, prev_threshold=2.0, **kw)
    assert not any(out["has_matched_control"])
