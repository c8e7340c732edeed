"""The association of two per-seed curves at matched training time (``numerics.testbed.stats.stratified_association``),
as properties: time moving every seed together contributes nothing, the test is exact up to ``max_exact`` seeds and a
Monte Carlo test with the plus-one correction beyond, and curves it cannot compare are refused."""
from __future__ import annotations
import math
from dataclasses import asdict
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from mmicl.numerics.testbed.stats import Association, stratified_association


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
