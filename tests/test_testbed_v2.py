"""The second version of the unimodal testbed claims, as properties: the time-stratified association
test, the control heads and the induction ablation, the stored curves, the learning-rate warm-up,
the claim-3 decision rule, the ``ensemble`` sweep kind and the resumption of a claim from its store.

Every test is tiny (a few training steps of width-8 models); each test name is the property it checks.
"""
from __future__ import annotations

import itertools
import json
import math
from dataclasses import asdict, replace

import mmicl.numerics.testbed.train as train_module
import mmicl.proofs.claims.testbed as tb
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from mmicl.numerics.testbed import experiments
from mmicl.numerics.testbed.config import (
    DataConfig,
    ModelConfig,
    TestbedConfigError,
    TrainConfig,
)
from mmicl.numerics.testbed.experiments import Arm, run_arms
from mmicl.numerics.testbed.heads import ANALYSES, _control_heads, induction_ablation
from mmicl.numerics.testbed.metrics import (
    EvalSets,
    ablated_icl_accuracy,
    ablation_drop,
    chance_levels,
    evaluate,
)
from mmicl.numerics.testbed.stats import Association, stratified_association, t_interval
from mmicl.numerics.testbed.train import History, training_loop
from mmicl.proofs.claim import RunConfig
from mmicl.proofs.registry import REGISTRY
from mmicl.numerics.runs import Store, expand
from mmicl.numerics.runs.runner import run_here
from mmicl.numerics.runs.kinds import KINDS
from mmicl.numerics.runs.record import finite_or_none
from mmicl.numerics.runs.spec import RunSpec, SweepSpecError
from test_testbed_claims import TOY

torch.set_num_threads(1)

FEW = settings(deadline=None)
"""Few examples (the profile of tests/conftest.py: 25; ``HYPOTHESIS_PROFILE=thorough`` for 300)."""


def _same_association(a: Association, b: Association) -> bool:
    """Field by field, NaN equal to NaN."""
    for x, y in zip(asdict(a).values(), asdict(b).values()):
        if isinstance(x, float) and math.isnan(x):
            if not (isinstance(y, float) and math.isnan(y)):
                return False
        elif x != y:
            return False
    return True


@st.composite
def integer_curves(draw, min_seeds: int = 3, max_seeds: int = 6, max_steps: int = 6, lo: int = -6, hi: int = 6):
    """(steps, seeds) curves with whole-number values (so that adding or scaling them is exact);
    the small range makes ties and constant steps common."""
    shape = (draw(st.integers(1, max_steps)), draw(st.integers(min_seeds, max_seeds)))
    ints = st.integers(lo, hi).map(float)
    return draw(arrays(np.float64, shape, elements=ints)), draw(arrays(np.float64, shape, elements=ints))


# ---- 1. the time-stratified association -------------------------------------------------------
@FEW
@given(curves=integer_curves(), data=st.data())
def test_a_common_function_of_time_added_to_x_or_y_changes_nothing(curves, data):
    """Time moves every seed together, so x[t, i] → a_t·x[t, i] + g_t (a_t > 0, the same for every
    seed) leaves the statistic, both p-values and the informative steps exactly as they were."""
    x, y = curves
    steps = x.shape[0]
    g = data.draw(arrays(np.float64, (steps, 1), elements=st.integers(-1000, 1000).map(float)))
    a = data.draw(arrays(np.float64, (steps, 1), elements=st.integers(1, 7).map(float)))
    before = stratified_association(x, y)
    assert _same_association(stratified_association(a * x + g, y), before)
    assert _same_association(stratified_association(x, a * y + g), before)


@FEW
@given(curves=integer_curves())
def test_negating_y_mirrors_the_association_and_swapping_x_and_y_changes_nothing(curves):
    """Ranks of −y are the mirrored ranks of y: the statistic changes sign and p_greater and
    p_less trade places.  The statistic is symmetric in x and y, and so is its exact null."""
    x, y = curves
    a, m, s = stratified_association(x, y), stratified_association(x, -y), stratified_association(y, x)
    if math.isnan(a.statistic):
        assert math.isnan(m.statistic) and math.isnan(s.statistic)
    else:
        assert m.statistic == -a.statistic
        assert s.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert (m.p_greater, m.p_less) == (a.p_less, a.p_greater)
    assert (s.p_greater, s.p_less) == pytest.approx((a.p_greater, a.p_less), abs=1e-12)
    assert m.decision() == (None if a.decision() is None else not a.decision())


@FEW
@given(n=st.integers(5, 7), steps=st.integers(1, 6), seed=st.integers(0, 2**32 - 1))
def test_y_with_the_ranks_of_x_is_a_perfect_association_with_the_smallest_exact_p(n, steps, seed):
    """y = x + noise smaller than half the gap between any two seeds at any step ranks the seeds like
    x at every step: statistic 1, and only the identity permutation reaches it, so p_greater = 1/n!
    (≤ 0.025 from five seeds on: 1/5! = 1/120) and the decision is True; −y gives the mirror."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(steps, 1)) + rng.normal(size=(steps, n))        # a common trend plus seed effects
    gap = np.diff(np.sort(x, 1), axis=1).min()
    assert gap > 0
    y = x + rng.uniform(-0.49, 0.49, size=x.shape) * gap
    smallest = 1 / math.factorial(n)
    pos, neg = stratified_association(x, y), stratified_association(x, -y)
    assert pos.statistic == pytest.approx(1.0) and neg.statistic == pytest.approx(-1.0)
    assert pos.exact and pos.p_greater == pytest.approx(smallest) and pos.p_less == 1.0
    assert neg.p_less == pytest.approx(smallest) and neg.p_greater == 1.0
    assert pos.p_greater <= (1 - 0.95) / 2 and pos.decision() is True and neg.decision() is False
    assert pos.informative_steps == steps


@FEW
@given(curves=integer_curves())
def test_when_every_seed_has_the_same_curve_nothing_is_informative_and_nothing_is_decided(curves):
    """If only time varies (every seed has the same curve, in x or in y), no step is informative,
    the statistic is undefined and the test decides nothing."""
    x, y = curves
    common = x[:, :1] * np.ones_like(x)
    for a in (stratified_association(common, y), stratified_association(x, common)):
        assert a.informative_steps == 0
        assert math.isnan(a.statistic) and a.decision() is None
        assert a.p_greater == 1.0 and a.p_less == 1.0


@FEW
@given(curves=integer_curves(), at=st.integers(0, 6), flat=st.integers(-6, 6))
def test_a_step_where_x_is_the_same_for_every_seed_leaves_the_p_values_unchanged(curves, at, flat):
    """Inserting a step where every seed has the same x (whatever y does there) changes neither
    p-value nor the count of informative steps."""
    x, y = curves
    at = min(at, x.shape[0])
    x2 = np.insert(x, at, float(flat), axis=0)
    y2 = np.insert(y, at, np.arange(x.shape[1], dtype=float)[::-1], axis=0)   # y varies there
    a, b = stratified_association(x, y), stratified_association(x2, y2)
    assert (b.p_greater, b.p_less) == pytest.approx((a.p_greater, a.p_less), abs=1e-12)
    assert b.informative_steps == a.informative_steps


def test_a_step_where_x_is_the_same_for_every_seed_leaves_the_statistic_unchanged():
    """The docstring: "Steps where x or y is the same for every seed carry no information and add
    nothing."  Perfectly concordant seeds must still read 1 after a step with a constant x."""
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0]])
    y = x.copy()
    assert stratified_association(x, y).statistic == pytest.approx(1.0)
    x2 = np.vstack([x, np.zeros((1, 5))])
    y2 = np.vstack([y, [[5.0, 4.0, 3.0, 2.0, 1.0]]])
    assert stratified_association(x2, y2).statistic == pytest.approx(1.0)


@FEW
@given(curves=integer_curves(min_seeds=3, max_seeds=7))
def test_up_to_max_exact_seeds_the_test_is_exact_over_all_n_factorial_permutations(curves):
    """With 3 ≤ n ≤ max_exact_seeds seeds every permutation is used once: permutations = n!, the
    test says it is exact, and each p-value is a count over n!."""
    x, y = curves
    n = x.shape[1]
    a = stratified_association(x, y)
    if math.isnan(a.statistic):       # nothing varies: no test is run
        assert a.permutations == 0 and a.decision() is None
        return
    assert a.exact and a.permutations == math.factorial(n)
    for p in (a.p_greater, a.p_less):
        assert p * a.permutations == pytest.approx(round(p * a.permutations), abs=1e-9)
        assert 1 / a.permutations <= p <= 1


def test_eight_seeds_still_get_the_exact_test():
    x = np.arange(8.0)[None, :] + np.zeros((3, 1))
    a = stratified_association(x, x[:, ::-1] ** 2)
    assert a.exact and a.permutations == math.factorial(8) and a.p_less == pytest.approx(1 / math.factorial(8))


@pytest.mark.parametrize("n, max_exact", [(9, 8), (5, 4)])
def test_beyond_max_exact_seeds_it_is_a_monte_carlo_test_with_the_plus_one_correction(n, max_exact):
    """More seeds than ``max_exact_seeds``: ``permutations`` random permutations, not exact, and each
    p-value is (count + 1)/(permutations + 1), so never below 1/(permutations + 1)."""
    rng = np.random.default_rng(n)
    x = rng.normal(size=(4, n))
    y = x + 1e-6 * rng.normal(size=(4, n))            # the same ranks: the observed value is the maximum
    m = 199
    a = stratified_association(x, y, max_exact_seeds=max_exact, permutations=m, seed=3)
    assert not a.exact and a.permutations == m
    for p in (a.p_greater, a.p_less):
        assert p >= 1 / (m + 1)
        assert p * (m + 1) == pytest.approx(round(p * (m + 1)), abs=1e-9)
    assert a.p_less == 1.0 and a.p_greater <= 0.05    # the identity permutation may be among the draws
    assert _same_association(a, stratified_association(x, y, max_exact_seeds=max_exact, permutations=m, seed=3))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_monte_carlo_p_value_agrees_with_the_exact_one_within_its_binomial_error(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(5, 6))
    y = 0.5 * x + rng.normal(size=(5, 6))
    exact = stratified_association(x, y)
    m = 4000
    mc = stratified_association(x, y, max_exact_seeds=5, permutations=m, seed=seed)
    assert exact.exact and not mc.exact and mc.statistic == exact.statistic
    for p, q in ((mc.p_greater, exact.p_greater), (mc.p_less, exact.p_less)):
        assert abs(p - q) <= 4 * math.sqrt(q * (1 - q) / m) + 2 / m


@pytest.mark.parametrize("x, y", [
    (np.zeros((3, 4)), np.zeros((3, 5))),
    (np.zeros((3, 4)), np.zeros((4, 4))),
    (np.zeros(4), np.zeros(4)),
    (np.zeros((2, 3, 4)), np.zeros((2, 3, 4))),
    (np.array([[0.0, np.nan, 1.0]]), np.zeros((1, 3))),
    (np.zeros((1, 3)), np.array([[0.0, np.inf, 1.0]])),
])
def test_curves_of_different_shapes_or_non_finite_curves_are_refused(x, y):
    with pytest.raises(ValueError):
        stratified_association(x, y)


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


# ---- 5. learning-rate warm-up ----------------------------------------------------------------------
ADAM_EPS = torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))]).defaults["eps"]


def _one_parameter_run(train: TrainConfig, g: float) -> np.ndarray:
    """Minimise g·p from p = 0 (a constant gradient g); p after every step."""
    p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    h = training_loop([p], lambda: (g * p).reshape(1), lambda: {"p": p.detach().clone()}, train, E=1)
    return h.curve("p")[:, 0].numpy()


@FEW
@given(warmup=st.integers(1, 6), steps=st.integers(1, 10), lr=st.floats(1e-4, 1e-1),
       g=st.floats(1e-3, 1e3) | st.floats(-1e3, -1e-3))
def test_warmup_moves_a_constant_gradient_parameter_by_lr_times_the_sum_of_t_over_warmup(warmup, steps, lr, g):
    """Adam's bias-corrected step for a constant gradient g is lr_t·g/(|g| + eps), i.e. lr_t up to a
    relative eps/|g|; with the linear warm-up lr_t = lr·min(t/W, 1), so after k steps the parameter
    has moved against g by lr·Σ_{t≤k} min(t/W, 1), within that relative eps/|g| (plus float64
    rounding)."""
    p = _one_parameter_run(TrainConfig(steps=steps, batch=1, lr=lr, eval_every=1, eval_size=1, warmup=warmup), g)
    assert p[0] == 0.0
    for k in range(1, steps + 1):
        expected = lr * sum(min(t / warmup, 1.0) for t in range(1, k + 1))
        moved = -math.copysign(1.0, g) * p[k]
        assert abs(moved - expected) <= expected * (ADAM_EPS / abs(g) + 1e-12)


def test_without_warmup_the_loop_is_bit_identical_to_a_plain_adam_loop():
    """warmup = 0 is the constant learning rate of before: the same parameters, bit for bit, as
    torch.optim.Adam stepped by hand on the same losses."""
    gen = torch.Generator().manual_seed(0)
    X, Y = torch.randn(2, 6, 3, generator=gen), torch.randn(2, 6, generator=gen)
    w0, b0 = torch.randn(2, 3, generator=gen), torch.randn(2, generator=gen)
    train = TrainConfig(steps=7, batch=1, lr=0.05, eval_every=3, eval_size=1)
    assert train.warmup == 0

    def problem():
        w, b = torch.nn.Parameter(w0.clone()), torch.nn.Parameter(b0.clone())
        return [w, b], lambda: ((X @ w.unsqueeze(-1)).squeeze(-1) + b[:, None] - Y).pow(2).mean(-1)

    params, losses = problem()
    training_loop(params, losses, dict, train, E=2)
    by_hand, hand_losses = problem()
    opt = torch.optim.Adam(by_hand, lr=train.lr)
    for _ in range(train.steps):
        per_member = hand_losses()
        opt.zero_grad(set_to_none=True)
        per_member.sum().backward()
        opt.step()
    assert all(torch.equal(a, b) for a, b in zip(params, by_hand))
    warm, warm_losses = problem()
    training_loop(warm, warm_losses, dict, replace(train, warmup=3), E=2)
    assert not torch.equal(warm[0], params[0])


@pytest.mark.parametrize("warmup", [-1, 1.5, 2.0, True, "3", None])
def test_a_negative_or_non_integer_warmup_is_refused(warmup):
    with pytest.raises(TestbedConfigError, match="warmup"):
        TrainConfig(warmup=warmup)


# ---- 6. the claim-2 plateau rule and the claim-3 threshold rule ------------------------------------
COPY = chance_levels(TOY.data.N, TOY.data.B, TOY.data.L)["copy"]
EVAL_SIZE = TOY.train.eval_size


def test_settled_is_a_final_plateau_away_from_the_copy_baseline_one_answer_per_seed():
    """Per seed (column): flat at B/N → no (the copy plateau is a way station); flat within tol of
    B/N → no; flat more than tol away → yes; ICL or IWL still moving in the last quarter → no; risen
    early then flat → yes.  tol = 2·√(2·¼/eval_size)."""
    tol = 2 * math.sqrt(2 * 0.25 / EVAL_SIZE)
    n = 8

    def flat(v):
        return np.full(n, v)

    def late_jump(v):                                        # flat, then a step of 2·tol at the last evaluation
        return np.r_[np.full(n - 1, v), v + 2 * tol]

    early_rise = np.r_[np.linspace(COPY, COPY + 6 * tol, n // 2), np.full(n - n // 2, COPY + 6 * tol)]
    icl = np.stack([flat(COPY), flat(COPY + tol / 2), flat(COPY + 3 * tol), late_jump(COPY + 3 * tol),
                    flat(COPY + 3 * tol), early_rise, flat(COPY - 3 * tol)], 1)
    iwl = np.stack([flat(0.1)] * 4 + [late_jump(0.1)] + [flat(0.1)] * 2, 1)
    ok, got_tol = tb.settled(icl, iwl, COPY, EVAL_SIZE)
    assert got_tol == pytest.approx(tol)
    assert ok.tolist() == [False, False, True, False, False, True, True]


def test_icl_status_is_above_not_above_or_undecided_by_the_interval_against_b_over_n():
    spread = np.linspace(-0.01, 0.01, 5)
    assert tb.icl_status(COPY + 0.2 + spread, COPY)[0] == "above"
    assert tb.icl_status(COPY - 0.2 + spread, COPY)[0] == "not above"
    assert tb.icl_status(COPY + 20 * spread, COPY)[0] == "undecided"
    _, iv = tb.icl_status(COPY + 0.2 + spread, COPY)
    assert iv == t_interval(COPY + 0.2 + spread)


def test_icl_status_of_seeds_all_exactly_at_the_copy_baseline_is_not_above():
    assert tb.icl_status(np.full(5, COPY), COPY)[0] == "not above"


STATUSES = st.sampled_from(["above", "not above", "undecided"])


@FEW
@given(status=st.dictionaries(st.integers(1, 10_000), STATUSES, min_size=1, max_size=6))
def test_threshold_is_the_smallest_k_from_which_every_larger_k_is_above(status):
    ks = sorted(status)
    k = tb.threshold(status)
    if status[ks[-1]] != "above":
        assert k is None
        return
    assert all(status[j] == "above" for j in ks if j >= k)
    i = ks.index(k)
    assert i == 0 or status[ks[i - 1]] != "above"


SPREAD = np.linspace(-0.01, 0.01, 5)
HI, LO = COPY + 0.3 + SPREAD, COPY - 0.3 + SPREAD
KS = (64, 256, 1024)


def _grid(*values):
    return dict(zip(KS, values))


@pytest.mark.parametrize("ape, rope, passed, thresholds", [
    # APE does ICL from the smallest K, RoPE only from the largest, and APE is ahead there: holds
    (_grid(HI, HI, HI), _grid(LO, LO, HI), True, {"ape": 64, "rope": 1024}),
    # the mirror: fails
    (_grid(LO, LO, HI), _grid(HI, HI, HI), False, {"ape": 1024, "rope": 64}),
    # RoPE never does ICL: APE's threshold is the smaller one
    (_grid(LO, HI, HI), _grid(LO, LO, LO), True, {"ape": 256, "rope": None}),
    # equal thresholds: inconclusive even though APE is decisively ahead at every K
    (_grid(HI + 0.1, HI + 0.1, HI + 0.1), _grid(HI, HI, HI), None, {"ape": 64, "rope": 64}),
    # neither arm above B/N at any K: inconclusive, whichever is larger
    (_grid(LO + 0.2, LO + 0.2, LO + 0.2), _grid(LO, LO, LO), None, {"ape": None, "rope": None}),
    # APE's threshold is smaller but at it APE − RoPE is not decided (RoPE straddles B/N)
    (_grid(COPY + 0.05 + SPREAD, HI, HI), _grid(COPY + 0.05 + 40 * SPREAD, HI, HI), None, {"ape": 64, "rope": 256}),
])
def test_the_claim3_rule_holds_fails_or_is_inconclusive_as_its_docstring_states(ape, rope, passed, thresholds):
    c = tb.threshold_check({"ape": ape, "rope": rope}, COPY)
    assert c.passed is passed
    assert c.numbers["threshold"] == thresholds
    json.dumps(c.numbers, allow_nan=False)


def _icl_grids(draw, lo: float, hi: float):
    n = draw(st.integers(2, 5))
    values = arrays(np.float64, (n,), elements=st.floats(lo, hi))
    return {p: {k: draw(values) for k in KS} for p in ("ape", "rope")}


@FEW
@given(data=st.data())
def test_relabelling_the_arms_mirrors_the_claim3_verdict(data):
    """Swapping which arm is called APE and which RoPE turns holds into fails and back; inconclusive
    stays inconclusive."""
    icl = _icl_grids(data.draw, 0.0, 1.0)
    a = tb.threshold_check(icl, COPY).passed
    b = tb.threshold_check({"ape": icl["rope"], "rope": icl["ape"]}, COPY).passed
    assert b == (None if a is None else not a)


@FEW
@given(data=st.data())
def test_when_neither_arm_is_above_b_over_n_the_claim3_rule_never_decides(data):
    icl = _icl_grids(data.draw, 0.0, COPY)
    c = tb.threshold_check(icl, COPY)
    assert c.passed is None and c.numbers["threshold"] == {"ape": None, "rope": None}


# ---- 7. the ensemble sweep kind ----------------------------------------------------------------
FLAT = {"K": 64, "L": 4, "D": 4, "N": 4, "B": 2, "width": 8, "ape_slots": 16,
        "steps": 2, "batch": 8, "eval_every": 2, "eval_size": 16}
normalise = KINDS["ensemble"].normalise


def _nested(**changes) -> dict:
    base = {"model": asdict(ModelConfig(width=8, ape_slots=16)),
            "train": asdict(TrainConfig(steps=2, batch=8, eval_every=2, eval_size=16)),
            "arms": [{"name": "run", "data": asdict(DataConfig(K=64, L=4, D=4, N=4, B=2))}],
            "seeds": [0], "data_seed": 0}
    return base | changes


@FEW
@given(n=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_the_flat_sweep_form_is_one_arm_with_seeds_seed_to_seed_plus_n_minus_one(n, seed):
    """The flat form names the same run as the nested form it stands for (the same key)."""
    flat = normalise(FLAT | {"seeds": n, "seed": seed})
    assert flat["seeds"] == list(range(seed, seed + n)) and flat["data_seed"] == seed
    assert [a["name"] for a in flat["arms"]] == ["run"]
    assert flat["arms"][0]["data"] == asdict(DataConfig(K=64, L=4, D=4, N=4, B=2))
    assert flat["device"] == "cpu" and flat["analysis"] is None
    nested = normalise(_nested(seeds=list(range(seed, seed + n)), data_seed=seed))
    assert RunSpec("ensemble", flat).key == RunSpec("ensemble", nested).key


def test_the_same_settings_give_the_same_key_whatever_their_order_or_explicit_defaults():
    a = normalise(_nested())
    b = normalise(dict(reversed(list(_nested(device="cpu", analysis=None).items()))))
    c = normalise(_nested(train=asdict(TrainConfig(steps=2, batch=8, eval_every=2, eval_size=16, warmup=0))))
    assert RunSpec("ensemble", a).key == RunSpec("ensemble", b).key == RunSpec("ensemble", c).key
    assert RunSpec("ensemble", a).key != RunSpec("ensemble", normalise(_nested(seeds=[1]))).key
    assert RunSpec("ensemble", a).key != RunSpec("ensemble", normalise(
        _nested(train=asdict(TrainConfig(steps=2, batch=8, eval_every=2, eval_size=16, warmup=1))))).key


def test_a_sweep_file_of_kind_ensemble_expands_to_one_run_per_grid_point():
    runs = expand({"kind": "ensemble", "base": FLAT | {"seeds": 2}, "grid": {"seed": [0, 10], "warmup": [0, 1]}})
    assert len({r.key for r in runs}) == 4
    assert {tuple(r.config["seeds"]) for r in runs} == {(0, 1), (10, 11)}
    assert {r.config["train"]["warmup"] for r in runs} == {0, 1}
    with pytest.raises(SweepSpecError, match="no setting"):
        expand({"kind": "ensemble", "base": FLAT | {"analysis": "induction_ablation"}})


ANALYSIS = {"name": "induction_ablation", "threshold": 0.5, "selection_seed": 1, "control_seed": 2}


@pytest.mark.parametrize("config", [
    _nested(bogus=1),
    _nested(arms=[{"name": "a", "data": asdict(TINY_DATA)}, {"name": "a", "data": asdict(TINY_DATA)}]),
    _nested(analysis={"name": "no_such_analysis"}),
    _nested(analysis=ANALYSIS | {"name": "Induction_Ablation"}),
    _nested(device="tpu"),
    _nested(device="cuda:0"),
    _nested(arms=[]),
    _nested(seeds=[]),
    FLAT | {"seeds": 0},
    FLAT | {"seeds": True},
    FLAT | {"seeds": 2.0},
    FLAT | {"K": 66},                                # not a multiple of L
    _nested(analysis="induction_ablation"),
    FLAT | {"bogus": 1},
    {k: v for k, v in _nested().items() if k != "model"},
])
def test_bad_ensemble_settings_are_refused_with_a_value_error(config):
    with pytest.raises(ValueError):
        normalise(config)


def test_a_known_analysis_is_accepted_and_kept_in_the_configuration():
    assert normalise(_nested(analysis=ANALYSIS))["analysis"] == ANALYSIS


def test_run_here_runs_a_pending_ensemble_once_then_skips_it(tmp_path, monkeypatch):
    store = Store(tmp_path)
    spec = RunSpec("ensemble", normalise(FLAT | {"seeds": 2, "seed": 3}))
    first = run_here([spec, spec], store)
    assert (first.total, first.done, first.skipped, first.failed) == (1, 1, 0, 0)
    record = store.record(spec.key)
    assert record["status"] == "done"
    assert all(len(v) == 2 for v in record["result"]["summary"]["run"].values())
    history = History.from_json(record["result"]["history"])
    assert history.steps == [0, FLAT["steps"]] and history.final("acc_icl").shape == (2,)

    def no_training(*a, **k):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(experiments, "run_arms", no_training)
    second = run_here([spec], Store(tmp_path))                   # a fresh handle on the same folder
    assert (second.total, second.done, second.skipped, second.failed) == (1, 0, 1, 0)


def test_a_failed_ensemble_run_is_recorded_and_run_again_by_the_next_call(tmp_path, monkeypatch):
    store = Store(tmp_path)
    spec = RunSpec("ensemble", normalise(FLAT | {"seeds": 1, "seed": 4}))

    def broken(*a, **k):
        raise RuntimeError("out of memory")

    with monkeypatch.context() as m:
        m.setattr(experiments, "run_arms", broken)
        s = run_here([spec], store)
    assert (s.done, s.failed) == (0, 1) and "out of memory" in store.record(spec.key)["error"]
    s = run_here([spec], store)
    assert (s.done, s.failed, s.skipped) == (1, 0, 0) and store.record(spec.key)["status"] == "done"


# ---- 8. claims resume from their store ---------------------------------------------------------------
def _no_training(monkeypatch):
    def refuse(*a, **k):
        raise RuntimeError("trained again")

    for module, name in ((experiments, "run_arms"), (experiments, "train_ensemble"), (train_module, "train_ensemble")):
        monkeypatch.setattr(module, name, refuse)


def _evidence(res) -> str:
    ev = res.to_json()["evidence"]
    return json.dumps({"checks": ev["checks"], "summary": ev["summary"]}, sort_keys=True)


@pytest.mark.parametrize("claim", ["testbed.claim8", "testbed.claim3"])
def test_a_claim_run_again_is_read_back_from_its_store_with_the_same_verdict_and_numbers(claim, tmp_path, monkeypatch):
    import mmicl.proofs.claims.testbed_v3_claims as v3c

    monkeypatch.setattr(tb, "QUICK", TOY)
    monkeypatch.setattr(v3c, "FAMILIES", {"A": (3000, 3001), "B": (4000, 4001)})  # claim 3 runs version 3
    monkeypatch.setattr(v3c, "EVAL_SIZE", 16)
    # claim 3's piloted K_both arms train steps_both steps: the toy size's steps, not the quick size's 3000
    monkeypatch.setitem(v3c.PILOTED, "claim3", v3c.PILOTED["claim3"] | {"steps_both": TOY.train.steps})
    config = RunConfig(quick=True, out=tmp_path, seed=1)
    first = REGISTRY[claim].run(config)
    stored = sorted(p.name for p in (tmp_path / "testbed" / "runs" / "runs").glob("*.json"))
    assert stored
    _no_training(monkeypatch)
    again = REGISTRY[claim].run(config)
    assert again.verdict == first.verdict
    assert _evidence(again) == _evidence(first)
    assert sorted(p.name for p in (tmp_path / "testbed" / "runs" / "runs").glob("*.json")) == stored
    # other settings are not read from this store: training is refused here, so the claim's verdict is
    # 'error' with the reason (a claim that raises no longer stops the others: Claim.run)
    other = REGISTRY[claim].run(RunConfig(quick=True, out=tmp_path, seed=2))
    assert other.verdict == "error" and "did not finish" in other.verdict_reason


def test_testbed_threads_sets_torchs_threads_for_the_block_and_restores_them():
    old = torch.get_num_threads()
    with tb.testbed_threads(RunConfig(testbed_threads=old + 1)):
        assert torch.get_num_threads() == old + 1
    assert torch.get_num_threads() == old
    with pytest.raises(KeyError), tb.testbed_threads(RunConfig(testbed_threads=old + 1)):
        raise KeyError("a claim that fails midway")
    assert torch.get_num_threads() == old
    with tb.testbed_threads(RunConfig(testbed_threads=None)):
        assert torch.get_num_threads() == old
    seen = []
    tb.threaded(lambda config: seen.append(torch.get_num_threads()))(RunConfig(testbed_threads=old + 1))
    assert seen == [old + 1] and torch.get_num_threads() == old
