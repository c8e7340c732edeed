"""Properties of the reduced LCA over random bounded task laws, each stated as a sentence.

Laws: mixtures of point masses and Beta/uniform intervals in [0, 5], discrete laws, random ζ
laws, random d1 and d2 (mmicl.testing)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mmicl.numerics import flows, lca
from mmicl.numerics.laws.scalar import Discrete, Mixture, Point
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw
from mmicl.testing import (has_signal, non_degenerate_task_laws, plain_scalar_laws as scalar_laws,
                          task_laws_from as task_laws, zero_atom_mixtures)

depths = st.sampled_from([1, 2, 3, 8, 40, 500])
FEWER = settings(max_examples=max(5, settings().max_examples // 3))
"""A third of the profile's examples, for properties whose examples each run a minimiser or a flow
(~0.5 s): keeps the file near 30 s by default and still scales with HYPOTHESIS_PROFILE."""


@given(non_degenerate_task_laws, st.sampled_from([1, 2, 3, 8, 40, 500, 10_000]))
def test_the_minimiser_lies_strictly_between_the_inverse_extreme_eigenvalues(law, T):
    """Where s has spread over m ≠ 0, α_T lies strictly inside (1/(1+s_hi), 1/(1+s_lo)) (s_lo,
    s_hi over m ≠ 0): the gradient is < 0 at one end and > 0 at the other.  ``alpha_T`` returns
    an end only when the gradient it computes there has the wrong sign or vanishes, e.g. by
    underflow at large T, so this is the property that can fail (a value in the closed bracket
    is guaranteed by the root finder)."""
    lo, hi = law.signal_bounds()
    assert 1 / (1 + hi) < lca.alpha_T(law, T) < 1 / (1 + lo)


@given(task_laws(), depths, st.floats(-0.5, 2.0))
def test_no_alpha_has_a_smaller_excess_risk_than_alpha_T(law, T, a):
    """For every α, the excess risk at α is at least the excess risk at α_T (relative 1e-12:
    the rounding of the log-scaled sums)."""
    best = lca.excess_risk_scaled(law, T, lca.alpha_T(law, T))
    other = lca.excess_risk_scaled(law, T, a)
    assert other.mp >= best.mp * (1 - 1e-12)


@given(task_laws(), depths)
def test_the_minimiser_does_not_depend_on_the_law_of_zeta(law, T):
    """ζ independent of m only scales the loss by E[ζ²], so α_T is the same for every ζ law."""
    other = dataclasses.replace(law, zeta=ZetaLaw("const", 2.5))
    assert lca.alpha_T(other, T) == pytest.approx(lca.alpha_T(law, T), abs=1e-13)


U = np.finfo(float).eps / 2


def _hand_written_excess(law, T, a, b):
    """``(E[ζ² s/(1+s) ρ²], tolerance)`` with ρ = λ·α Σ_{k<T} (1 + βλ)^k − 1 written out, on the
    rule that ``lca`` uses.  Per node, ρ computed this way is off by δρ ≤ 4(T + 1)u(3 + λ|α|Σ|q|^k)
    (T powers and their sum, two products, the subtraction); where |1 + βλ| ≤ 1 so is the jet
    recurrence under test (per layer ρ ↦ qρ + (α + β)λ, errors not amplified, |β|λ ≤ 2).  Both
    together move the excess by at most E[ζ² s/(1+s)(2|ρ|·2δρ + (2δρ)²)]."""
    rule = law.rule(T)
    lam = 1 + rule.nodes
    q = 1 + b * lam
    powers = np.array([q**k for k in range(T)])
    rho = lam * a * powers.sum(0) - 1
    weight = rule.nodes / lam
    d_rho = 2 * 4 * (T + 1) * U * (3 + lam * abs(a) * np.abs(powers).sum(0))
    return (float(rule.weights @ (weight * rho**2)),
            float(rule.weights @ (weight * (2 * np.abs(rho) * d_rho + d_rho**2))))


@given(task_laws(), st.sampled_from([1, 2, 5, 30]), st.floats(-1.0, 2.0), st.floats(0.0, 1.0))
def test_the_two_parameter_excess_is_the_squared_bayes_residual_of_the_query_factor(law, T, a, u):
    """For W^S = αI, W^V = βI the query factor is P_T(λ) = α Σ_{k<T} (1 + βλ)^k (λ = 1 + s), and
    the excess risk is E[ζ² s/(1+s) (λP_T(λ) − 1)²], written out here by hand and summed with the
    same quadrature rule; β in the stable region −2/(1 + s_hi) ≤ β ≤ 0, every α.  (This replaces
    "the excess is ≥ 0", which the code guarantees by construction: its loss is a weighted sum of
    squares.)"""
    b = -2 * u / (1 + law.s_bounds()[1])
    want, tol = _hand_written_excess(law, T, a, b)
    assert abs(lca.excess_risk(law, T, a, b) - want) <= tol


def test_the_two_parameter_excess_with_no_skip_weight_is_the_signal_risk_at_any_beta():
    """α = 0 gives P_T ≡ 0 at every β, so the excess is E[ζ² s/(1+s)] = 1 − log 2 on U(0, 1).  At
    β = 1, T = 30 (unstable: 1 + βλ ∈ [2, 3]) the residual's recurrence ρ ↦ qρ + βλ from ρ = −1
    sits on its repelling fixed point (it returned 0.3068656 instead of 0.3068528); the loss runs the
    query factor there, which is exactly 0."""
    from mmicl.numerics.laws.language import parse_law

    law = parse_law("s=uniform(0,1)")
    want, tol = _hand_written_excess(law, 30, 0.0, 1.0)
    assert want == pytest.approx(1 - np.log(2), rel=1e-14)
    assert abs(lca.excess_risk(law, 30, 0.0, 1.0) - want) <= tol


@FEWER
@given(non_degenerate_task_laws, st.sampled_from([2, 3, 5]))
def test_two_parameters_do_at_least_as_well_as_one(law, T):
    """The two-parameter model contains β = −α, so its best excess risk is at most the
    one-parameter model's (relative 1e-9: the profile minimisation's tolerance)."""
    a, b = lca.minimise_two(law, T)
    one = lca.excess_risk(law, T, lca.alpha_T(law, T))
    assert lca.excess_risk(law, T, a, b) <= one * (1 + 1e-9) + 1e-15


@given(task_laws(), st.sampled_from([1, 2, 4, 16, 128]))
def test_one_more_layer_never_increases_the_best_excess_risk(law, T):
    """min_α excess at depth T + 1 ≤ min_α excess at depth T."""
    e_T = lca.excess_risk_scaled(law, T, lca.alpha_T(law, T)).mp
    e_next = lca.excess_risk_scaled(law, T + 1, lca.alpha_T(law, T + 1)).mp
    assert e_next <= e_T * (1 + 1e-12)


@FEWER
@given(non_degenerate_task_laws, st.sampled_from([1, 4, 40]), st.floats(0.0, 1.0, exclude_min=True))
def test_the_flow_from_any_stable_start_ends_at_alpha_T(law, T, u):
    """From every α₀ in the stable interval (0, 2/(1+s_hi)], the flow's limit is α_T.

    (Laws with spread in s: on a point law the minimum is a zero of order 2T, L''(α_T) = 0, and
    the real flow only creeps in like t^{−1/(2T−2)}; see
    test_point_law_flow_creeps_in_real_time_and_rests_on_the_normalised_clock.)"""
    lo, hi = lca.stable_interval(law)
    a0 = lo + u * (hi - lo)  # lo = 0 < a0 ≤ hi
    r = flows.gradient_flow_one(law, T, a0)
    assert r.converged and abs(r.alpha - lca.alpha_T(law, T)) < 5e-12


def test_point_law_flow_creeps_in_real_time_and_rests_on_the_normalised_clock():
    """On s ≡ 1 at T = 4 the loss is ∝ (2α − 1)^8, a degenerate minimum: in real time the flow
    approaches 1/2 but is not at rest by t = 10^26 (the distance then is ~ t^{−1/6}, about 1e-4 to
    1e-5), and the tool says so; the default clock switches to the normalised one, which comes to
    rest where L' changes sign within ±5e-13 of 1/2."""
    from mmicl.numerics.laws.language import parse_law

    law = parse_law("s=point(1)")
    real = flows.gradient_flow_one(law, 4, 1.0, time="real")
    assert not real.converged and 1e-7 < abs(real.alpha - 0.5) < 1e-3 and real.t_end > 1e25
    r = flows.gradient_flow_one(law, 4, 1.0)
    assert r.converged and r.clock == "normalised" and abs(r.alpha - 0.5) <= 5e-13


# --------------------------------------------------------------------------- an atom at s = 0

BRENT_XTOL, BRENT_RTOL = 1e-16, 4 * np.finfo(float).eps  # what alpha_T passes to brentq


@given(scalar_laws.filter(lambda s: has_signal(s) and s.support()[1] > 0.05), st.floats(0.05, 0.9),
       st.sampled_from([1, 3, 40, 1000, 10_000]))
def test_an_atom_at_zero_does_not_move_alpha_T(s, w, T):
    """Adding prompts with m = 0 (an atom at s = 0 of weight w) leaves α_T where it was: their
    integrands carry a factor s, so the derivative is the old one times (1 − w).  Tolerance: each
    root is within Brent's xtol + rtol·α of the root of the function it was given, and the two
    functions differ by the factor and one rounding per weight (≤ 16u in α; see
    test_mpmath_crosscheck.float64_tolerance for the lever arm r_max/(n(1+s_lo)) ≤ 1)."""
    base = lca.alpha_T(TaskLaw(s=s), T)
    with_zero = lca.alpha_T(TaskLaw(s=Mixture((Point(0.0), s), (w, 1.0 - w))), T)
    assert abs(with_zero - base) <= 2 * (BRENT_XTOL + BRENT_RTOL * base) + 16 * U


def _partial_first_moment(law, c: float, d: float) -> float:
    """E[S·1{c ≤ S ≤ d}] in closed form: sums for atoms; for a Beta piece S = a + wX,
    a·P(X ∈ J) + w·E[X 1{X ∈ J}] with E[X 1{X ≤ t}] = p/(p+q)·I_t(p+1, q) (scipy's regularised
    incomplete beta; not the quadrature rule under test)."""
    from scipy.special import betainc

    if isinstance(law, Mixture):
        return sum(p * _partial_first_moment(comp, c, d) for comp, p in zip(law.components, law.probs))
    if isinstance(law, Discrete):
        return sum(p * v for v, p in zip(law.values, law.probs) if c <= v <= d)
    if isinstance(law, Point):
        return law.c if c <= law.c <= d else 0.0
    width = law.b - law.a
    t0, t1 = (min(max((x - law.a) / width, 0.0), 1.0) for x in (c, d))
    prob = betainc(law.p, law.q, t1) - betainc(law.p, law.q, t0)
    ex = law.p / (law.p + law.q) * (betainc(law.p + 1, law.q, t1) - betainc(law.p + 1, law.q, t0))
    return law.a * prob + width * ex


def alpha_star_distance_bound(s, lo: float, hi: float, T: int) -> float:
    """An upper bound on |α_T − α*| from the law's mass next to the ends of [s_lo, s_hi] (over
    m ≠ 0), with α* = 2/S, S = 2 + s_lo + s_hi, r* = (s_hi − s_lo)/S, n = 2T − 1.

    α_T is the root of D(α) = E[s r^n], r = α(1 + s) − 1: the part with r > 0 balances the part
    with r < 0.  If α_T = α* + δ with δ > 0, then r = r* + δ(1+s_hi) at s_hi and r* − δ(1+s_lo) at
    s_lo; the negative part is at most E[s]·(r* − δ(1+s_lo))^n, and the positive part at least
    M_hi(ε)·(r* + δ(1+s_hi) − αε)^n with M_hi(ε) = E[s; s_hi − ε ≤ s ≤ s_hi] (r drops by at most αε
    over the window).  With e^L = (E[s]/M_hi(ε))^{1/n} this gives
    δ ≤ max((r*(e^L − 1) + αε)/S, αε/(1 + s_hi)); δ < 0 is the same at the other end with M_lo(ε)
    = E[s; s_lo ≤ s ≤ s_lo + ε].  α ≤ 1/(1 + s_lo).  The bound is minimised over ε on a grid;
    with M(ε) ~ ε^k it is O(k·log T/T): the rate of approach of the theorem."""
    S = 2 + lo + hi
    r_star, n, a_max = (hi - lo) / S, 2 * T - 1, 1 / (1 + lo)
    mean = _partial_first_moment(s, 0.0, np.inf)
    best = np.inf
    for eps in (hi - lo) * 2.0 ** -np.arange(0.0, 60.0, 0.25):
        m_hi, m_lo = _partial_first_moment(s, hi - eps, hi), _partial_first_moment(s, lo, lo + eps)
        if m_hi <= 0 or m_lo <= 0:
            continue
        up = max((r_star * np.expm1(np.log(mean / m_hi) / n) + a_max * eps) / S, a_max * eps / (1 + hi))
        down = max((r_star * np.expm1(np.log(mean / m_lo) / n) + a_max * eps) / S, a_max * eps / (1 + lo))
        best = min(best, max(up, down))
    return best


@given(zero_atom_mixtures(), st.sampled_from([1000, 10_000]))
def test_alpha_T_tends_to_alpha_star_with_s_lo_over_the_prompts_with_signal(s, T):
    """s = mix(w·point(0), (1 − w)·C) with C a Beta piece on [a, b], a > 0: α* = 2/(2 + a + b)
    (s_lo = a over m ≠ 0, not 0), and at T = 10³ and 10⁴ α_T is within
    ``alpha_star_distance_bound`` of it (1e-13 added for α_T's rounding); at T = 10⁴ that bound is
    smaller than the distance to 2/(2 + 0 + b), the value with s_lo = 0."""
    a, b = s.components[1].support()
    want = 2 / (2 + a + b)
    law = TaskLaw(s=s)
    assert lca.alpha_star(law) == pytest.approx(want, rel=2 * U)
    bound = alpha_star_distance_bound(s, a, b, T)
    assert abs(lca.alpha_T(law, T) - want) <= bound + 1e-13
    if T == 10_000:
        assert bound < abs(want - 2 / (2 + b))
