"""Version 3 of the head analyses, as properties: per-head scores with both ends (``induction_min``
beside ``induction_max``), mean-ablation beside zeroing, and the single-head ranking with a
same-layer control (``heads.rank_heads``), for the unimodal decoder and the multimodal system.

Every model is tiny (width 8, untrained or a few training steps), on the CPU.
"""
from __future__ import annotations

import inspect
import itertools
import json
from dataclasses import replace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from mmicl.numerics.testbed.config import DataConfig, MemberSpec, ModelConfig, TrainConfig
from mmicl.numerics.testbed.data import Mixture, Sequences
from mmicl.numerics.testbed.experiments import Arm, run_arms
from mmicl.numerics.testbed.heads import (ANALYSES, choose_top_and_control, induction_ablation, rank_heads,
                                          rank_heads_multimodal)
from mmicl.numerics.testbed.metrics import (EvalSets, ablated_icl_accuracy, ablation_drop, accuracy, evaluate,
                                            head_means, head_scores, head_summary, induction_strength, reference_means)
from mmicl.numerics.testbed.model import EnsembleDecoder
from mmicl.numerics.testbed.multimodal_data import MultimodalMixture, PairSequences
from mmicl.numerics.testbed.multimodal_metrics import ablation_drop as mm_ablation_drop
from mmicl.numerics.testbed.multimodal_metrics import (MultimodalEvalSets, evaluate_multimodal, head_means_multimodal,
                                                       head_scores_multimodal)
from mmicl.numerics.testbed.multimodal_model import EnsembleMLP, MultimodalSystem
from mmicl.numerics.testbed.train import History, TrainedEnsemble
from mmicl.numerics.runs.kinds import KINDS

torch.set_num_threads(1)
FEW = settings(deadline=None)

DATA = DataConfig(K=64, L=4, D=4, N=4, B=2)
MODEL = ModelConfig(layers=2, heads=2, width=8, ape_slots=16)
TRAIN = TrainConfig(steps=4, batch=8, eval_every=2, eval_size=16)
RANK = {"selection_seed": 5, "reference_seed": 6, "threshold": 0.0, "control_seed": 7}


@pytest.fixture(scope="module")
def tiny():
    return run_arms(MODEL, [Arm("a", DATA), Arm("b", replace(DATA, K=128))], [0, 1], TRAIN).run


def untrained(model: ModelConfig, seeds: list[int], data_seed: int = 0, size: int = 16) -> TrainedEnsemble:
    """A ``TrainedEnsemble`` of freshly drawn (untrained) members: enough for the ranking's logic."""
    members = [MemberSpec(DATA, seed=s) for s in seeds]
    mixture = Mixture(members)
    net = EnsembleDecoder(model, mixture.D, mixture.L, seeds)
    sets = EvalSets.draw(mixture, size, seed=data_seed + 1_000_003, ape_slots=model.ape_slots if model.pos == "ape" else None)
    return TrainedEnsemble(net, mixture, sets, History(), members)


# ---- 1. per-head scores, both ends --------------------------------------------------------------
def test_a_head_attending_only_to_the_other_labels_scores_minus_one_and_shows_in_induction_min():
    """Hand-built attention (N = 4, B = 2): at the query, head 0 spreads its attention over the two
    label tokens that do NOT carry the answer (elimination), head 1 over the two that do.  Their
    induction scores are −1 and +1; ``induction_min`` sees head 0, ``induction_max`` only head 1."""
    N, T = 4, 9
    labels = torch.tensor([[[0, 1, 0, 1], [2, 2, 3, 3], [1, 0, 0, 1]]])          # (E=1, b=3, N)
    target = torch.tensor([[0, 3, 1]])
    seqs = Sequences(torch.zeros(1, 3, T, 4), target, labels, labels, target)
    attn = torch.zeros(1, 3, 2, T, T)
    pos = torch.arange(N) * 2 + 1
    for i in range(3):
        match = labels[0, i] == target[0, i]
        attn[0, i, 0, -1, pos[~match]] = 0.5
        attn[0, i, 1, -1, pos[match]] = 0.5
    score = induction_strength(attn, seqs)                                        # (E, H)
    torch.testing.assert_close(score, torch.tensor([[-1.0, 1.0]]))
    per_layer = torch.stack([score, torch.zeros_like(score)], dim=1)              # (E, layers=2, H)
    s = head_summary(per_layer, torch.zeros_like(per_layer))
    assert s["induction_min"].item() == -1.0 and s["induction_max"].item() == 1.0


@pytest.mark.train
def test_head_scores_are_the_per_head_values_of_evaluate_with_their_ends(tiny):
    sets = tiny.eval_sets
    full, scores = evaluate(tiny.model, sets, summaries=True), head_scores(tiny.model, sets)
    for k in ("induction", "prev_token", "induction_min", "induction_max", "prev_token_max"):
        torch.testing.assert_close(scores[k], full[k])
    torch.testing.assert_close(scores["induction_min"], full["induction"].flatten(1).min(1).values)
    assert (scores["induction_min"] <= scores["induction_max"]).all()


# ---- 2. mean-ablation ---------------------------------------------------------------------------
def _repeated(run: TrainedEnsemble, b: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    """b copies of each member's first ICL sequence (with its APE shift): over this reference batch
    every head's output is constant, position by position."""
    s = run.eval_sets
    return s.icl.tokens[:, :1].expand(-1, b, -1, -1).contiguous(), s.shifts["icl"][:, :1].expand(-1, b).contiguous()


def test_mean_ablating_a_head_constant_over_the_reference_batch_changes_nothing_zeroing_does(tiny):
    model, c = tiny.model, tiny.model.config
    tokens, shift = _repeated(tiny)
    means = head_means(model, tokens, shift)
    assert means.shape == (model.E, c.layers, c.heads, tokens.shape[2], c.head_dim)
    intact = model(tokens, shift).logits
    for layer, h in itertools.product(range(c.layers), range(c.heads)):
        mask = torch.ones(model.E, c.layers, c.heads)
        mask[:, layer, h] = 0.0
        mean_ablated = model(tokens, shift, head_mask=mask, head_mean=means).logits
        zeroed = model(tokens, shift, head_mask=mask).logits
        torch.testing.assert_close(mean_ablated, intact, atol=1e-5, rtol=0)
        assert (zeroed - intact).abs().max() > 1e-4, f"zeroing head {(layer, h)} changed nothing"


def test_without_a_mask_the_means_do_nothing_and_mean_ablation_uses_them(tiny):
    """head_mean alone (no mask) leaves the logits exactly; with a mask, ablated_icl_accuracy and
    ablation_drop under ``means`` are the forward with head_mean; without, zeroing as before."""
    model, sets = tiny.model, tiny.eval_sets
    means = reference_means(model, tiny.mixture, 16, seed=6)
    plain = model(sets.icl.tokens, sets.shifts["icl"]).logits
    assert torch.equal(model(sets.icl.tokens, sets.shifts["icl"], head_mean=means).logits, plain)
    mask = torch.ones(model.E, 2, 2)
    mask[:, 1, 0] = 0
    expected = accuracy(model(sets.icl.tokens, sets.shifts["icl"], head_mask=mask, head_mean=means).logits, sets.icl.target)
    assert torch.equal(ablated_icl_accuracy(model, sets, [(1, 0)], means=means), expected)
    mean_logits = model(sets.icl.tokens, sets.shifts["icl"], head_mask=mask, head_mean=means).logits
    zero_logits = model(sets.icl.tokens, sets.shifts["icl"], head_mask=mask).logits
    assert (mean_logits - plain).abs().max() > 1e-4 and (mean_logits - zero_logits).abs().max() > 1e-4
    base = accuracy(plain, sets.icl.target)
    torch.testing.assert_close(ablation_drop(model, sets, means=means)[:, 1, 0], base - expected)
    with pytest.raises(ValueError, match="head_mean"):
        model(sets.icl.tokens, sets.shifts["icl"], head_mask=mask, head_mean=means[..., :-1, :])


def _mm_system(heads: int = 2):
    from test_multimodal_testbed import member
    members = [member(seed=e) for e in range(2)]
    mx = MultimodalMixture(members)
    dec = EnsembleDecoder(ModelConfig(layers=2, heads=heads, width=8, mlp_ratio=1, ape_slots=21), 4, 4, [0, 1])
    return MultimodalSystem(dec, EnsembleMLP([4, 8, 4], [0, 1]), mx.label_vectors, "m1_first"), mx


def test_multimodal_mean_ablation_over_a_constant_reference_costs_nothing():
    system, mx = _mm_system()
    sets = MultimodalEvalSets.draw(mx, 16, 0, 21)
    s = sets.sets["icl_m2only"]
    one = PairSequences(*(t[:, :1].expand(-1, 4, *t.shape[2:]).contiguous() for t in
                          (s.m1, s.m2, s.labels, s.target, s.follow_m1, s.follow_m2)))
    rep = MultimodalEvalSets(sets.sets | {"icl_m2only": one},
                             sets.shifts | {"icl_m2only": sets.shifts["icl_m2only"][:, :1].expand(-1, 4).contiguous()})
    means = head_means_multimodal(system, rep)
    assert (mm_ablation_drop(system, rep, means=means) == 0).all()
    intact = system(one, rep.shifts["icl_m2only"]).logits
    mask = torch.ones(2, 2, 2)
    mask[:, 0, 0] = 0
    assert (system(one, rep.shifts["icl_m2only"], head_mask=mask).logits - intact).abs().max() > 1e-4


# ---- 3. ranking and the same-layer control --------------------------------------------------------
@FEW
@given(st.integers(1, 4), st.integers(1, 4), st.data())
def test_the_control_is_the_least_needed_other_head_of_the_top_heads_layer(layers, H, data):
    ind = data.draw(arrays(np.float64, (layers, H), elements=st.floats(-1, 1)))
    drop = data.draw(arrays(np.float64, (layers, H), elements=st.sampled_from([-0.25, 0.0, 0.125, 0.5])))
    threshold = data.draw(st.sampled_from([-2.0, 0.0, 0.5, 2.0]))
    p = choose_top_and_control(ind, drop, threshold, np.random.default_rng(data.draw(st.integers(0, 99))))
    above = ind > threshold
    pool = above if above.any() else np.ones_like(above)
    top = tuple(p["top"])
    assert pool[top] and drop[top] == drop[pool].max() and p["top_above_threshold"] == bool(above.any())
    if H == 1:
        assert p["control"] is None and "one head per layer" in p["control_reason"]
    else:
        assert p["control_reason"] is None
        layer, j = p["control"]
        assert layer == top[0] and j != top[1]
        assert drop[layer, j] == min(drop[layer, k] for k in range(H) if k != top[1])


def test_control_ties_are_broken_at_random_among_the_tied_heads_only():
    ind, drop = np.array([[0.9, 0.0, 0.0, 0.0]]), np.array([[0.5, 0.0, 0.0, 0.25]])
    drawn = {choose_top_and_control(ind, drop, 0.5, np.random.default_rng(s))["control"][1] for s in range(40)}
    assert drawn == {1, 2}


@pytest.mark.parametrize("layers,heads,seed", [(1, 2, 0), (2, 3, 1), (3, 2, 2), (2, 4, 3)])
def test_on_random_tiny_models_the_control_head_is_in_the_top_heads_layer(layers, heads, seed):
    run = untrained(ModelConfig(layers=layers, heads=heads, width=12 if heads == 3 else 8, ape_slots=16),
                    [seed, seed + 10, seed + 20])
    res = rank_heads(run, eval_size=16, **RANK)
    json.dumps(res, allow_nan=False)
    for top, ctl in zip(res["top_head"], res["control_head"]):
        assert ctl is not None and ctl[0] == top[0] and ctl[1] != top[1]
    assert all(v is not None for v in res["icl_without_control_mean"] + res["icl_without_control_zero"])


def test_one_head_per_layer_has_no_same_layer_control_and_says_why():
    res = rank_heads(untrained(ModelConfig(layers=2, heads=1, width=8, ape_slots=16), [0, 1]), eval_size=16, **RANK)
    assert res["control_head"] == [None, None]
    assert all("one head per layer" in r for r in res["control_reason"])
    assert res["icl_without_control_mean"] == res["icl_without_control_zero"] == [None, None]
    assert all(v is not None for v in res["icl_without_top_mean"])


def test_selection_and_evaluation_are_different_draws_and_each_number_is_measured_where_it_says(tiny):
    """selection_* are measured on the ICL set drawn from selection_seed (not the evaluation set);
    the evaluation numbers are the ablations of metrics on the run's evaluation set; choosing the
    evaluation set's own seed for the selection is refused."""
    run, c = tiny, tiny.model.config
    res = rank_heads(run, eval_size=16, **RANK)
    selection = EvalSets.draw(run.mixture, 16, seed=RANK["selection_seed"], ape_slots=c.ape_slots)
    assert not torch.equal(selection.icl.tokens, run.eval_sets.icl.tokens)
    np.testing.assert_allclose(res["selection_drop_zero"], ablation_drop(run.model, selection).numpy(), atol=1e-6)
    means = reference_means(run.model, run.mixture, 16, RANK["reference_seed"])
    np.testing.assert_allclose(res["selection_drop_mean"], ablation_drop(run.model, selection, means=means).numpy(),
                               atol=1e-6)
    np.testing.assert_allclose(res["selection_induction"], head_scores(run.model, selection)["induction"].numpy(),
                               atol=1e-4)
    assert res["icl"] == run.history.final("acc_icl").tolist()
    for e, (top, ctl) in enumerate(zip(res["top_head"], res["control_head"])):
        assert res["icl_without_top_zero"][e] == float(ablated_icl_accuracy(run.model, run.eval_sets, [tuple(top)])[e])
        assert res["icl_without_top_mean"][e] == float(
            ablated_icl_accuracy(run.model, run.eval_sets, [tuple(top)], means=means)[e])
        assert res["icl_without_control_mean"][e] == float(
            ablated_icl_accuracy(run.model, run.eval_sets, [tuple(ctl)], means=means)[e])
    with pytest.raises(ValueError, match="evaluation set"):
        rank_heads(run, eval_size=16, **(RANK | {"selection_seed": 1_000_003}))   # data_seed 0 + 1_000_003


def test_the_ranking_is_reproducible_registered_and_accepted_by_an_ensemble_run(tiny):
    assert ANALYSES["head_ranking"] is rank_heads
    assert rank_heads(tiny, eval_size=16, **RANK) == rank_heads(tiny, eval_size=16, **RANK)
    config = {"model": {"width": 8, "ape_slots": 16}, "train": {"steps": 2, "batch": 8, "eval_every": 2, "eval_size": 16},
              "arms": [{"name": "run", "data": {"K": 64, "L": 4, "D": 4, "N": 4, "B": 2}}], "seeds": [0],
              "analysis": {"name": "head_ranking", **RANK}}
    assert KINDS["ensemble"].normalise(config)["analysis"]["name"] == "head_ranking"
    assert set(inspect.signature(rank_heads).parameters) - {"run", "eval_size"} == set(RANK)


def test_the_multimodal_ranking_keeps_the_control_in_the_top_heads_layer():
    system, mx = _mm_system(heads=2)
    res = rank_heads_multimodal(system, mx, MultimodalEvalSets.draw(mx, 16, 0, 21), 16, **RANK)
    json.dumps(res, allow_nan=False)
    assert res["set"] == "icl_m2only"
    for top, ctl in zip(res["top_head"], res["control_head"]):
        assert ctl[0] == top[0] and ctl[1] != top[1]
    full = evaluate_multimodal(system, MultimodalEvalSets.draw(mx, 16, 0, 21), summaries=True)
    np.testing.assert_allclose(res["induction_min"], full["induction_min"].numpy(), atol=1e-4)
    scores = head_scores_multimodal(system, MultimodalEvalSets.draw(mx, 16, 0, 21))
    for k in ("induction", "prev_token", "induction_min", "induction_max", "prev_token_max"):
        torch.testing.assert_close(scores[k], full[k])
    with pytest.raises(ValueError, match="evaluation set"):
        rank_heads_multimodal(system, mx, MultimodalEvalSets.draw(mx, 16, 5, 21), 16, **RANK)


# ---- 4. the existing functions are unchanged -------------------------------------------------------
def _snapshot(run: TrainedEnsemble, system, mm_sets) -> dict:
    model, sets = run.model, run.eval_sets
    fwd = model(sets.icl.tokens, sets.shifts["icl"], return_attention=True)
    return {"evaluate": evaluate(model, sets, ablate=True), "logits": fwd.logits, "attention": fwd.attention,
            "drop": ablation_drop(model, sets),
            "ablated": ablated_icl_accuracy(model, sets, [(0, 1)], torch.eye(2, dtype=torch.bool).repeat(model.E, 1, 1)),
            "induction_ablation": induction_ablation(run, 16, selection_seed=5, threshold=0.0, control_seed=7),
            "mm_evaluate": evaluate_multimodal(system, mm_sets), "mm_drop": mm_ablation_drop(system, mm_sets)}


def _same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor):
        return torch.equal(a, b)
    return a == b


def test_existing_functions_give_the_same_results_before_and_after_the_new_analyses(tiny):
    system, mx = _mm_system()
    mm_sets = MultimodalEvalSets.draw(mx, 16, 0, 21)
    before = _snapshot(tiny, system, mm_sets)
    rank_heads(tiny, eval_size=16, **RANK)
    rank_heads_multimodal(system, mx, mm_sets, 16, **RANK)
    evaluate(tiny.model, tiny.eval_sets, summaries=True)
    after = _snapshot(tiny, system, mm_sets)
    assert _same(before, after)
    assert not {"induction_min", "induction_max", "prev_token_max"} & set(before["evaluate"])   # opt-in only
    assert not {"induction_min", "induction_max", "prev_token_max"} & set(before["mm_evaluate"])
    sets = tiny.eval_sets
    asked = tiny.model(sets.icl.tokens, sets.shifts["icl"], return_head_outputs=True)
    torch.testing.assert_close(asked.logits, before["logits"])
    assert asked.attention is None and before["logits"] is not None
    assert tiny.model(sets.icl.tokens, sets.shifts["icl"]).head_outputs is None
