"""Properties of the reduced LCA over random bounded task laws, each stated as a sentence.

Laws: mixtures of point masses and Beta/uniform intervals in [0, 5], discrete laws, random ζ
laws, random d1 and d2 (strategies.py)."""
from __future__ import annotations

import dataclasses

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mmicl.numerics import flows, lca
from mmicl.numerics.laws import ZetaLaw
from strategies import non_degenerate_task_laws, task_laws

depths = st.sampled_from([1, 2, 3, 8, 40, 500])


@given(task_laws(), depths)
def test_the_minimiser_lies_between_the_inverse_extreme_eigenvalues(law, T):
    """α_T lies in [1/(1+s_hi), 1/(1+s_lo)]."""
    lo, hi = law.s_bounds()
    assert 1 / (1 + hi) - 1e-15 <= lca.alpha_T(law, T) <= 1 / (1 + lo) + 1e-15


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


@given(task_laws(), st.sampled_from([1, 2, 5, 30]), st.floats(-1.0, 2.0), st.floats(-2.0, 1.0))
def test_the_excess_risk_is_never_negative(law, T, a, b):
    """No (α, β) beats the Bayes predictor (the excess risk is ≥ 0, up to rounding 1e-13)."""
    assert lca.excess_risk(law, T, a, b) >= -1e-13


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


@given(non_degenerate_task_laws, st.sampled_from([1, 4, 40]), st.floats(0.0, 1.0))
def test_the_flow_from_any_stable_start_ends_at_alpha_T(law, T, u):
    """From every α₀ in the stable interval (0, 2/(1+s_hi)], the flow's limit is α_T.

    (Laws with spread in s: on a point law the minimum is a zero of order 2T, L''(α_T) = 0, and
    the flow only creeps in like t^{−1/(2T−2)}; see test_point_law_flow_creeps.)"""
    lo, hi = lca.stable_interval(law)
    a0 = lo + u * (hi - lo)
    assume(a0 > 0)
    r = flows.gradient_flow_one(law, T, a0)
    assert r.converged and abs(r.alpha - lca.alpha_T(law, T)) < 5e-12


def test_point_law_flow_creeps():
    """On s ≡ 1 at T = 4 the loss is ∝ (2α − 1)^8: the flow approaches 1/2 but is not at rest by
    t = 10^26 (the distance then is ~ t^{−1/6}, about 1e-4 to 1e-5), and the tool says so."""
    from mmicl.numerics.law_language import parse_law

    r = flows.gradient_flow_one(parse_law("s=point(1)"), 4, 1.0)
    assert not r.converged and 1e-7 < abs(r.alpha - 0.5) < 1e-3
