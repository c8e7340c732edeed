"""The induction-head ablation analysis of a trained ensemble (``numerics.testbed.heads.induction_ablation``) and its
control heads, on a tiny trained ensemble; and a training history through JSON and the store."""
from __future__ import annotations
import itertools
import json
from dataclasses import replace
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
from mmicl.numerics.testbed.experiments import Arm, run_arms
from mmicl.numerics.testbed.heads import ANALYSES, _control_heads, induction_ablation
from mmicl.numerics.testbed.metrics import EvalSets, ablated_icl_accuracy, ablation_drop, evaluate
from mmicl.numerics.testbed.train import History
from mmicl.numerics.runs.record import finite_or_none


FEW = settings(deadline=None)
"""Few examples (the profile of tests/conftest.py: 25; ``HYPOTHESIS_PROFILE=thorough`` for 300)."""

# ---- 3. the induction ablation on a tiny trained ensemble ---------------------------------------
TINY_DATA = DataConfig(K=64, L=4, D=4, N=4, B=2)

TINY_MODEL = ModelConfig(layers=2, heads=2, width=8, ape_slots=16)

TINY_TRAIN = TrainConfig(steps=4, batch=8, eval_every=2, eval_size=16)

@pytest.fixture(scope="module")
def tiny():
    return run_arms(TINY_MODEL, [Arm("a", TINY_DATA), Arm("b", replace(TINY_DATA, K=128))], [0, 1], TINY_TRAIN)

def _ablate(run, threshold: float, selection_seed: int = 5, control_seed: int = 7) -> dict:
    return induction_ablation(run, eval_size=TINY_TRAIN.eval_size, selection_seed=selection_seed,
                              threshold=threshold, control_seed=control_seed)

def _all_heads(c: ModelConfig) -> list[tuple[int, int]]:
    return list(itertools.product(range(c.layers), range(c.heads)))

# ---- 4. History through JSON ---------------------------------------------------------------------
def _assert_same_history(back: History, h: History) -> None:
    assert back.steps == h.steps
    assert len(back.loss) == len(h.loss)
    for a, b in zip(back.loss, h.loss):
        assert a.dtype == torch.float32 and torch.equal(a.isnan(), b.isnan())
        assert torch.equal(a.nan_to_num(), b.float().nan_to_num())
    assert back.metrics.keys() == h.metrics.keys()
    for k in h.metrics:
        assert len(back.metrics[k]) == len(h.metrics[k])
        for a, b in zip(back.metrics[k], h.metrics[k]):
            assert a.shape == b.shape and a.dtype == torch.float32
            assert torch.equal(a.isnan(), b.isnan()) and torch.equal(a.nan_to_num(), b.float().nan_to_num())

def _through_the_store(h: History) -> dict:
    """What a store record keeps of a history: strict JSON, non-finite numbers as null."""
    return json.loads(json.dumps(finite_or_none(h.to_json()), allow_nan=False))


# ---- 2. control heads ------------------------------------------------------------------------
@FEW
@given(ind=arrays(bool, st.tuples(st.integers(1, 4), st.integers(1, 5))), seed=st.integers(0, 2**32 - 1))
def test_the_control_is_as_large_as_the_induction_mask_disjoint_from_it_and_layer_matched_when_it_can_be(ind, seed):
    """For a member's induction mask (layers, H): when there are at least as many non-induction heads
    as induction heads, the control has exactly as many heads, none of them induction heads, and it
    is layer-matched exactly when every layer has at least as many non-induction heads as induction
    heads (then layer by layer the counts agree); otherwise there is no control.  The induction mask
    is left as it was, and the draw depends only on the generator."""
    given_mask = ind.copy()
    control, matched = _control_heads(ind, np.random.default_rng(seed))
    assert np.array_equal(ind, given_mask)
    free = ~ind
    if not free.any() or free.sum() < ind.sum():
        assert control is None and matched is False
        return
    assert control.shape == ind.shape and control.dtype == bool
    assert control.sum() == ind.sum()
    assert not (control & ind).any()
    enough = all(free[layer].sum() >= ind[layer].sum() for layer in range(ind.shape[0]))
    assert matched == enough
    if matched:
        assert np.array_equal(control.sum(1), ind.sum(1))
    again, matched_again = _control_heads(ind, np.random.default_rng(seed))
    assert np.array_equal(again, control) and matched_again == matched


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (4, 4)])
def test_a_member_whose_heads_are_all_induction_heads_has_no_control(shape):
    assert _control_heads(np.ones(shape, bool), np.random.default_rng(0)) == (None, False)


def test_the_control_head_is_drawn_among_all_free_heads_of_the_layer():
    """Not always the first free head: over a few generators every free head of the layer is drawn."""
    ind = np.array([[True, False, False, False], [False, False, False, False]])
    drawn = {tuple(np.argwhere(_control_heads(ind, np.random.default_rng(s))[0])[0]) for s in range(60)}
    assert drawn == {(0, 1), (0, 2), (0, 3)}


@pytest.mark.train
@pytest.mark.parametrize("threshold", [-2.0, 0.0, 2.0])
def test_induction_and_control_heads_are_disjoint_and_equally_many_per_member(tiny, threshold):
    res = _ablate(tiny.run, threshold)
    ind, ctl = np.array(res["induction_heads"]), np.array(res["control_heads"])
    E = tiny.run.model.E
    assert ind.shape == ctl.shape == (E, TINY_MODEL.layers, TINY_MODEL.heads)
    assert not (ind & ctl).any()
    assert (ind.reshape(E, -1).sum(1) >= 1).all(), "every member ablates at least one head"
    for e in range(E):
        if res["has_control"][e]:
            assert ctl[e].sum() == ind[e].sum() and res["icl_without_control_heads"][e] is not None
        else:
            assert not ctl[e].any() and res["icl_without_control_heads"][e] is None
    json.dumps(res, allow_nan=False)


def test_the_heads_are_those_above_the_threshold_on_the_selection_set_or_else_the_strongest(tiny):
    """Induction heads: the heads whose score on the selection set exceeds the threshold; a member
    with none ablates its single strongest head."""
    run = tiny.run
    selection = EvalSets.draw(run.mixture, TINY_TRAIN.eval_size, seed=5, ape_slots=run.model.config.ape_slots)
    scores = evaluate(run.model, selection)["induction"].numpy()
    E = run.model.E
    only = np.array(_ablate(run, 2.0, selection_seed=5)["induction_heads"])     # no score in [-1, 1] exceeds 2
    assert (only.reshape(E, -1).sum(1) == 1).all()
    assert (only.reshape(E, -1).argmax(1) == scores.reshape(E, -1).argmax(1)).all()
    mid = float(np.median(scores))
    heads = np.array(_ablate(run, mid, selection_seed=5)["induction_heads"])
    above = scores > mid
    assert above.any() and not above.all()
    for e in range(E):
        if above[e].any():
            assert np.array_equal(heads[e], above[e])
        else:
            assert heads[e].sum() == 1 and heads[e].flat[scores[e].argmax()]


def test_icl_before_ablation_is_the_final_icl_of_the_training_history(tiny):
    """Both are measured on the run's fixed evaluation set."""
    assert _ablate(tiny.run, 0.0)["icl"] == tiny.run.history.final("acc_icl").tolist()


def test_heads_are_selected_on_a_held_out_set_drawn_from_the_selection_seed(tiny):
    """The selection scores are the induction scores on the ICL set drawn from ``selection_seed``, a
    set other than the evaluation set; another selection seed gives other scores."""
    run = tiny.run
    c = run.model.config
    selection = EvalSets.draw(run.mixture, TINY_TRAIN.eval_size, seed=5, ape_slots=c.ape_slots)
    assert not torch.equal(selection.icl.tokens, run.eval_sets.icl.tokens)
    res = _ablate(run, 0.0, selection_seed=5)
    expected = evaluate(run.model, selection)["induction"].numpy()
    np.testing.assert_allclose(res["selection_induction"], expected, atol=5e-5)
    assert not np.allclose(res["selection_induction"], run.history.final("induction").numpy(), atol=1e-3)
    other = _ablate(run, 0.0, selection_seed=6)
    assert not np.allclose(other["selection_induction"], res["selection_induction"], atol=1e-3)


def test_the_ablations_are_those_of_metrics_member_by_member(tiny):
    """ICL without the induction (control) heads of member e is what ``ablated_icl_accuracy`` gives
    member e when those heads are zeroed in every member (members are independent models)."""
    run = tiny.run
    res = _ablate(run, 0.0)
    for e in range(run.model.E):
        for mask_key, acc_key in (("induction_heads", "icl_without_induction_heads"),
                                  ("control_heads", "icl_without_control_heads")):
            heads = [tuple(h) for h in np.argwhere(np.array(res[mask_key][e]))]
            if acc_key == "icl_without_control_heads" and not res["has_control"][e]:
                continue
            assert res[acc_key][e] == float(ablated_icl_accuracy(run.model, run.eval_sets, heads)[e])
    np.testing.assert_allclose(res["single_head_drop"], ablation_drop(run.model, run.eval_sets).numpy(), atol=5e-5)


def test_zeroing_every_head_is_the_ablation_of_every_head_and_leaves_no_control(tiny):
    run = tiny.run
    res = _ablate(run, -2.0)                              # every score in [-1, 1] exceeds −2
    assert np.array(res["induction_heads"]).all()
    assert res["has_control"] == [False] * run.model.E
    assert res["icl_without_control_heads"] == [None] * run.model.E
    every = ablated_icl_accuracy(run.model, run.eval_sets, _all_heads(run.model.config)).tolist()
    assert res["icl_without_induction_heads"] == every


def test_the_induction_ablation_is_reproducible_and_registered(tiny):
    assert ANALYSES["induction_ablation"] is induction_ablation
    assert _ablate(tiny.run, 0.0) == _ablate(tiny.run, 0.0)


def test_a_trained_history_survives_the_store(tiny):
    h = tiny.run.history
    assert torch.isnan(h.loss[0]).all()
    back = History.from_json(_through_the_store(h))
    _assert_same_history(back, h)
    assert torch.isnan(back.loss[0]).all()
    assert back.curve("induction").shape == h.curve("induction").shape


@FEW
@given(E=st.integers(1, 3), evaluations=st.integers(1, 4), layers=st.integers(1, 3), heads=st.integers(1, 3),
       data=st.data())
def test_from_json_inverts_to_json_even_through_strict_json(E, evaluations, layers, heads, data):
    """Any float32 curves, NaN in the per-member vectors (the loss at step 0, an undefined rate)."""
    vec = arrays(np.float32, (E,), elements=st.floats(width=32, allow_infinity=False))
    per_head = arrays(np.float32, (E, layers, heads), elements=st.floats(-1, 1, width=32))
    h = History()
    for step in sorted(data.draw(st.sets(st.integers(0, 10_000), min_size=evaluations, max_size=evaluations))):
        h.add(step, {"acc_icl": torch.from_numpy(data.draw(vec)), "induction": torch.from_numpy(data.draw(per_head))},
              torch.from_numpy(data.draw(vec)))
    _assert_same_history(History.from_json(_through_the_store(h)), h)
