"""The untied flow's rest test (issue 18): "at rest" means stationary, checked independently.

The reference is a 50-digit mpmath evaluation of the same loss: the quadrature sum
``L = Σ_k W_k ∏_t (1 − α_t(1+s_k))²`` on the flow's own nodes, with ``W_k`` = the rule weight times
the exact ``A(s_k) = s_k/(1+s_k)``; its gradient and Hessian of ``log L`` by the product rule, with no
cancellation at 50 digits.  Invariants only (no platform's trajectory is assumed).
"""
from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from mmicl.numerics import lca, untied, untied_flow
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.untied_flow import _flow_nodes as _nodes


def _flow_nodes(law, T):
    return _nodes(parse_law(law), T)

UNIFORM = "s=uniform(0.5,4)"
LAWS = [UNIFORM, "s=beta(0.5,2,0.2,8)", "s=discrete(0.5:0.2,1:0.3,2:0.3,4:0.2)"]


def _mp_derivatives(law, alphas, dps=50):
    """``(∇ log L, ∇² log L)`` of the flow's loss at ``alphas`` in mpmath (module docstring)."""
    T = len(alphas)
    rule = untied.excess_rule(law, T)
    keep = rule.weights * untied.amplitude_fn()(rule.nodes)[0] > 0
    with mp.workdps(dps):
        nodes = [mp.mpf(float(x)) for x in rule.nodes[keep]]
        weights = [mp.mpf(float(v)) * x / (1 + x) for v, x in zip(rule.weights[keep], nodes)]
        a = [mp.mpf(float(x)) for x in alphas]
        L, N = mp.mpf(0), [mp.mpf(0)] * T
        S = [[mp.mpf(0)] * T for _ in range(T)]
        for x, wk in zip(nodes, weights):
            lam = 1 + x
            m = [1 - at * lam for at in a]
            q = mp.fprod(m)
            loo = [mp.fprod(m[j] for j in range(T) if j != t) for t in range(T)]
            dq = [-lam * loo[t] for t in range(T)]
            L += wk * q * q
            for t in range(T):
                N[t] += wk * q * dq[t]
                for u in range(T):
                    second = (lam * lam * mp.fprod(m[j] for j in range(T) if j not in (t, u))) if u != t else 0
                    S[t][u] += wk * (dq[t] * dq[u] + q * second)
        g = [2 * n / L for n in N]
        H = mp.matrix(T, T)
        for t in range(T):
            for u in range(T):
                H[t, u] = 2 * S[t][u] / L - g[t] * g[u]
        return g, H


def _check_bounds(law, alphas):
    T = len(alphas)
    s, w = _flow_nodes(law, T)
    _, g, e, H, E = untied_flow._bounded_derivatives(s, w, np.asarray(alphas, float))
    g_mp, H_mp = _mp_derivatives(law, alphas)
    for t in range(T):
        assert abs(mp.mpf(float(g[t])) - g_mp[t]) <= e[t], (law, alphas, t)
        for u in range(T):
            assert abs(mp.mpf(float(H[t, u])) - H_mp[t, u]) <= E[t, u], (law, alphas, t, u)
    return g, e, H, E


@pytest.mark.parametrize("law", LAWS)
def test_the_rounding_bounds_hold_against_mpmath(law):
    """The running error bounds are bounds: at random schedules, far ones, and one with a root on a node."""
    rng = np.random.default_rng(7)
    for T in (1, 2, 4):
        for _ in range(2):
            _check_bounds(law, rng.uniform(0.0, 1.5, T).tolist())
        _check_bounds(law, rng.uniform(-5.0, 8.0, T).tolist())
        s, _ = _flow_nodes(law, T)
        on_node = rng.uniform(0.1, 0.6, T)
        on_node[0] = 1.0 / (1.0 + s[len(s) // 2])  # a layer's root (to rounding) on a node
        _check_bounds(law, on_node.tolist())


@pytest.mark.parametrize("law,T", [(UNIFORM, 3), (UNIFORM, 5), ("s=beta(0.5,2,0.2,8)", 4)])
def test_a_flow_at_rest_is_stationary_checked_in_mpmath(law, T):
    """The invariant: if a flow from a random start says it is at rest, the 50-digit gradient at its
    end is below the bound it reports (≤ GRADIENT_REST), and its Hessian is what the outcome says."""
    survey = untied_flow.flows_from_random_starts(law, T, 3, seed=100 + T)
    for flow in survey.flows:
        assert flow.outcome in untied_flow.OUTCOMES
        assert flow.at_rest == (flow.outcome in ("minimum", "saddle", "degenerate"))
        if not flow.at_rest:
            continue
        assert flow.gradient_bound <= untied_flow.GRADIENT_REST
        assert f"{flow.gradient_bound:.2g}" in flow.reason
        g_mp, H_mp = _mp_derivatives(law, flow.alphas)
        assert max(abs(x) for x in g_mp) <= flow.gradient_bound
        eig = mp.eigsy(H_mp, eigvals_only=True)
        if flow.outcome == "minimum":
            assert min(eig) > 0
        if flow.outcome == "saddle":
            assert min(eig) < 0
        if flow.outcome == "minimum" and flow.reached:  # the independent optimum (mpmath Stieltjes)
            opt = untied.optimal_schedule_mp(law, T, dps=30)
            assert np.allclose(flow.alphas, opt.alphas, rtol=1e-6)


def test_the_tied_saddle_is_at_rest_but_not_a_minimum():
    """α_t ≡ α_T is stationary (equal α's get equal gradients) and a saddle: the rest test must say
    "saddle", never "minimum" (a rest test that ignored the Hessian's sign would accept it)."""
    T = 3
    a_T = lca.alpha_T(UNIFORM, T)
    rest = untied_flow.rest_test(UNIFORM, [a_T] * T)
    assert rest.stationary and rest.hessian == "negative curvature" and rest.outcome == "saddle"
    _, H_mp = _mp_derivatives(UNIFORM, [a_T] * T)
    assert min(mp.eigsy(H_mp, eigvals_only=True)) < 0
    flow = untied_flow.schedule_flow(UNIFORM, [0.1] * T)
    assert flow.outcome == "saddle" and flow.at_rest and not flow.reached and "saddle" in flow.reason


LARGE_CURVATURE = "s=discrete(1:0.5,3:0.4999999,8:1e-7)"
"""μ nearly on two points at T = 2: the curvature of log L at the optimum is ~7e6 and L* ~ 1e-6."""


def test_a_large_curvature_alone_does_not_pass():
    opt = np.array(untied.optimal_schedule(LARGE_CURVATURE, 2).alphas)
    # off the optimum by 1e-13 relative: the Newton step is ~5e-14 (a step test would accept it),
    # the gradient ~2e-7 is far outside its rounding bound
    off = opt * (1 + np.array([1e-13, -1e-13]))
    _, g, H = untied_flow.log_excess_derivatives(LARGE_CURVATURE, off)
    assert np.abs(np.linalg.solve(H, g)).max() < 1e-12
    rest = untied_flow.rest_test(LARGE_CURVATURE, off)
    assert not rest.stationary and rest.outcome == "unresolved"
    assert rest.hessian == "positive definite"  # the curvature is real; it is the gradient that fails
    # at the optimum itself the gradient is within its rounding bound, but that bound exceeds
    # GRADIENT_REST: float64 cannot resolve stationarity there, and the test says so
    at = untied_flow.rest_test(LARGE_CURVATURE, opt)
    assert np.all(np.abs(at.gradient) <= at.gradient_error)
    assert at.gradient_bound > untied_flow.GRADIENT_REST and not at.stationary and at.outcome == "unresolved"


def test_a_non_stationary_point_is_refused():
    rng = np.random.default_rng(1)
    opt = np.array(untied.optimal_schedule(UNIFORM, 4).alphas)
    for scale in (1e-3, 1e-8, 1e-11):
        rest = untied_flow.rest_test(UNIFORM, opt * (1 + scale * rng.standard_normal(4)))
        assert not rest.stationary and rest.outcome == "unresolved"
    assert untied_flow.rest_test(UNIFORM, opt).outcome == "minimum"


def test_definiteness_is_decided_beyond_the_bounds():
    """The Hessian test is sound at the boundary: a matrix whose smallest eigenvalue is inside the
    entries' bound is neither positive definite nor of certified negative curvature."""
    H = np.diag([1.0, 1e-12])
    E = np.full((2, 2), 1e-10)
    assert untied_flow._definiteness(H, E) == "unresolved"
    assert untied_flow._definiteness(np.diag([1.0, -1e-12]), E) == "unresolved"
    assert untied_flow._definiteness(np.diag([1.0, 1e-8]), E) == "positive definite"
    assert untied_flow._definiteness(np.diag([1.0, -1e-8]), E) == "negative curvature"
    # cancellation: entries ±1e29 whose determinant is below their rounding
    big = np.array([[1e29, 1e29], [1e29, 1e29 * (1 + 1e-15)]])
    assert untied_flow._definiteness(big, np.full((2, 2), 1e29 * 1e-16)) == "unresolved"
