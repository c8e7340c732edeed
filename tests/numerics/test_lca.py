"""Expectations, minimisers and gradient flows of the reduced LCA over task laws."""
from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from mmicl.numerics import flows, lca
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.scalar import Beta
from mmicl.numerics.validate import MAX_DEPTH_MP

UNIFORM = parse_law("s=uniform(0.5,4)")
LAWS = [UNIFORM, parse_law("s=twopoint(1,3,0.3)"), parse_law("s=beta(0.5,2,0.2,3)"),
        parse_law("sv=uniform(0,2); sr=point(1); d1=3; d2=2")]


@pytest.mark.parametrize("T", [1, 10, 1000])
def test_rule_matches_adaptive_quadrature(T):
    """The graded Gauss–Jacobi rule against scipy's adaptive quad on a Beta law with singular
    ends, for the depth-T integrand e^{−4T(b − s)}; tolerance 1e-9 relative (quad's own limit on
    the singular density, which the Jacobi rule integrates exactly)."""
    law = Beta(0.5, 0.7, 1.0, 2.0)
    f = lambda s: np.exp(-4 * T * (2.0 - s))  # noqa: E731
    ours = law.rule(T).expect(f)
    dens = stats.beta(0.5, 0.7, loc=1.0, scale=1.0).pdf
    ref = integrate.quad(lambda s: f(s) * dens(s), 1.0, 2.0, points=[2 - 1 / T, 2 - 0.1 / T], limit=500,
                         epsabs=0, epsrel=1e-12)[0]
    assert ours == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("law", LAWS, ids=lambda l: l.spec())
@pytest.mark.parametrize("T", [1, 3, 30, 3000])
def test_flow_limit_is_the_root(law, T):
    """The one-parameter flow from 0 ends within 5e-12 of Brent's root (rest: Newton step < 1e-12)."""
    r = flows.gradient_flow_one(law, T, 0.0)
    assert r.converged
    assert r.alpha == pytest.approx(lca.alpha_T(law, T), abs=5e-12)


@settings(max_examples=max(5, settings().max_examples // 3))  # each example runs a flow (~0.2 s)
@given(u=st.floats(0.01, 0.99), T=st.sampled_from([1, 2, 7, 50]))
def test_flow_converges_from_any_start_in_the_stable_region(u, T):
    """From any α₀ in (0, 2/(1+s_hi)) the one-parameter flow converges to α_T."""
    lo, hi = lca.stable_interval(UNIFORM)
    r = flows.gradient_flow_one(UNIFORM, T, lo + u * (hi - lo))
    assert r.converged and r.alpha == pytest.approx(lca.alpha_T(UNIFORM, T), abs=5e-12)


@pytest.mark.parametrize("T", [10, 300])
def test_alpha_T_agrees_with_mpmath(T):
    """30-digit mpmath (tanh-sinh, findroot) vs float64 log-scaled rule + Brent, to float64's
    tolerance (Brent's xtol and rtol, rounding, the Gauss–Jacobi weights: see
    test_mpmath_crosscheck.float64_tolerance) plus mpmath's own."""
    from test_mpmath_crosscheck import MP_TOLERANCE, float64_tolerance

    a64 = lca.alpha_T(UNIFORM, T)
    assert abs(float(lca.alpha_T_mp(UNIFORM, T)) - a64) <= float64_tolerance(UNIFORM.s, T, a64) + MP_TOLERANCE


def test_alpha_T_on_a_two_point_law_is_exact_in_mpmath():
    law = parse_law("s=twopoint(1,3,0.3)")
    with mp.workdps(40):
        # d/dα of 0.3·(1/2)(2α−1)^{2T} + 0.7·(3/4)(4α−1)^{2T} = 0, solved in 40 digits
        T = 6
        g = lambda a: 0.3 * mp.mpf(1) / 2 * 2 * (2 * a - 1) ** (2 * T - 1) + 0.7 * mp.mpf(3) / 4 * 4 * (4 * a - 1) ** (2 * T - 1)  # noqa: E731
        ref = mp.findroot(g, 0.33)
    assert lca.alpha_T(law, T) == pytest.approx(float(ref), abs=1e-14)


@pytest.mark.parametrize("law", LAWS, ids=lambda l: l.spec())
def test_alpha_T_lies_in_the_bracket_and_tends_to_alpha_star(law):
    lo, hi = law.s_bounds()
    dist = []
    for T in (1, 10, 100, 1000, 10_000):
        a = lca.alpha_T(law, T)
        assert 1 / (1 + hi) <= a <= 1 / (1 + lo)
        dist.append(abs(a - lca.alpha_star(law)))
    assert all(np.diff(dist[1:]) < 0) and dist[-1] < 1e-3


ZERO_ATOM = parse_law("s=mix(0.3*point(0),0.7*uniform(1,3))")


@pytest.mark.parametrize("T", [1000, 10_000])
def test_next_to_an_atom_at_zero_alpha_T_approaches_alpha_star_at_the_derived_rate(T):
    """s = mix(0.3·point(0), 0.7·U(1, 3)): s_lo = 1 over m ≠ 0, so α* = 2/(2 + 1 + 3) = 1/3 (not
    2/5, the value with s_lo = 0), and α_T − α* = c₁/T + c₂/T² + O(T⁻³).

    Derivation.  The atom carries the factor s = 0.  On the uniform part, D(α) = E[s r^n]
    (n = 2T − 1) splits at r = 0 into two exact integrals, and D = 0 reads
    (R_hi/R_lo)^{n+1} = (s_lo + R_lo/(α(n+2)))/(s_hi − R_hi/(α(n+2))), R_hi = α(1+s_hi) − 1,
    R_lo = 1 − α(1+s_lo).  With α = α* + δ, S = 2 + s_lo + s_hi, r* = (s_hi − s_lo)/S and
    x = δS/r*: log(R_hi/R_lo) = x − r*x²/2 + O(x³), and the right side is
    ℓ + k/(2T) + O(T⁻²) with ℓ = log(s_lo/s_hi), k = r*(1/s_lo + 1/s_hi)/α*.  So
    Tδ = c₁ + c₂/T + O(T⁻²), c₁ = r*ℓ/(2S), c₂ = r*(k + r*ℓ²/2)/(4S).
    Checked: T²(α_T − α* − c₁/T) = c₂ to 10% (the rest is O(1/T) of it; float64's error in α_T,
    ~1e-15, is 1e-7 of c₂ after the factor T² at T = 10⁴)."""
    lo, hi = 1.0, 3.0
    S = 2 + lo + hi
    r_star, a_star = (hi - lo) / S, 2 / S
    ell, k = math.log(lo / hi), r_star * (1 / lo + 1 / hi) / a_star
    c1, c2 = r_star * ell / (2 * S), r_star * (k + r_star * ell**2 / 2) / (4 * S)
    assert lca.alpha_star(ZERO_ATOM) == pytest.approx(a_star, rel=1e-15)
    a = lca.alpha_T(ZERO_ATOM, T)
    assert abs(T**2 * (a - a_star - c1 / T) - c2) <= 0.1 * abs(c2)
    assert abs(a - 2 / (2 + hi)) > 1000 * abs(a - a_star)


def test_point_law_alpha_is_inverse_eigenvalue_and_excess_is_the_closed_form():
    """s ≡ 2: the excess is (2/3)(3α − 1)^{2T} at every α (evaluated in 40-digit mpmath here), so
    the minimiser is 1/3 and the excess there 0.  (``alpha_T`` returns 1/(1+s) for a point law
    without searching, so the closed form at other α is what can fail.)"""
    law = parse_law("s=point(2)")
    for T in (1, 5, 100):
        assert lca.alpha_T(law, T) == pytest.approx(1 / 3, abs=1e-16)
        assert lca.excess_risk(law, T, 1 / 3) == pytest.approx(0.0, abs=1e-30)
        for a in (0.2, 0.3, 0.34, 0.5):
            with mp.workdps(40):
                want = mp.mpf(2) / 3 * (3 * mp.mpf(a) - 1) ** (2 * T)
            # r = 3α − 1 is rounded by u(3α + |r|), then raised to 2T in log scale (n·log|r| to u)
            u, r = np.finfo(float).eps / 2, abs(3 * a - 1)
            rtol = 2 * T * u * ((3 * a + r) / r + abs(math.log(r)) + 2)
            assert abs(lca.excess_risk_scaled(law, T, a).mp / want - 1) <= rtol


def test_two_parameter_on_the_line_beta_minus_alpha_is_the_one_parameter_model():
    for T in (1, 4, 20):
        for a in (0.1, 0.3, 0.45):
            assert lca.excess_risk(UNIFORM, T, a, -a) == pytest.approx(lca.excess_risk(UNIFORM, T, a), rel=1e-10, abs=1e-16)


def test_two_parameter_gradient_matches_finite_differences():
    """Jet derivatives vs central differences (h = 1e-6: truncation O(h²) ~ 1e-12, rounding
    ~1e-16/h = 1e-10 relative to the loss: tolerance 1e-6 relative)."""
    T, a, b, h = 6, 0.25, -0.2, 1e-6
    t = lca.two_parameter_terms(UNIFORM, T, a, b)
    e = lambda a, b: lca.two_parameter_terms(UNIFORM, T, a, b)[0]  # noqa: E731
    assert t[1] == pytest.approx((e(a + h, b) - e(a - h, b)) / (2 * h), rel=1e-6)
    assert t[2] == pytest.approx((e(a, b + h) - e(a, b - h)) / (2 * h), rel=1e-6)
    g = lambda a, b: lca.two_parameter_terms(UNIFORM, T, a, b)[2]  # noqa: E731
    assert t[4] == pytest.approx((g(a + h, b) - g(a - h, b)) / (2 * h), rel=1e-6)


@pytest.mark.parametrize("T", [2, 3, pytest.param(8, marks=pytest.mark.slow)])
def test_two_parameter_flow_reaches_the_minimiser(T):
    mini = lca.minimise_two(UNIFORM, T)
    r = flows.gradient_flow_two(UNIFORM, T, 0.0, 0.0)
    assert r.converged
    assert r.alpha == pytest.approx(mini[0], abs=5e-12) and r.beta == pytest.approx(mini[1], abs=5e-12)


def test_two_parameter_flow_reports_divergence():
    """From (0, −1) at T = 5 the flow runs off along α ≈ 0, β → −∞ (seen in the basin map)."""
    r = flows.gradient_flow_two(UNIFORM, 5, 0.0, -1.0)
    assert not r.converged and r.reason.startswith("diverged")


def test_excess_risk_in_log_scale_beyond_float64():
    v = lca.excess_risk_scaled(UNIFORM, 100_000, lca.alpha_T(UNIFORM, 100_000))
    assert v.value is None and -60_000 < v.log10 < -50_000
    with pytest.raises(OverflowError, match="excess_risk_scaled"):
        lca.excess_risk(UNIFORM, 100_000, 0.3)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "x", True])
def test_bad_depth_is_refused(bad):
    with pytest.raises(ValueError, match="depth"):
        lca.alpha_T(UNIFORM, bad)


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="finite"):
        lca.excess_risk(UNIFORM, 3, math.nan)
    with pytest.raises(ValueError, match="finite"):
        flows.gradient_flow_two(UNIFORM, 3, math.inf, 0.0)
    with pytest.raises(ValueError, match="T = 1"):
        lca.minimise_two(UNIFORM, 1)


def test_unbounded_or_signal_free_laws_are_refused():
    from mmicl.numerics.laws.scalar import LawError, UnboundedSupportError

    with pytest.raises(UnboundedSupportError, match="bounded"):
        lca.alpha_T(parse_law("s=exponential(1)"), 3)
    with pytest.raises(LawError, match="no information"):
        lca.alpha_T(parse_law("s=point(0)"), 3)


@pytest.mark.parametrize("T", [1000, pytest.param(100_000, marks=pytest.mark.slow)])
def test_alpha_T_on_the_uniform_law_matches_the_exact_antiderivative(T):
    """For s ~ U(a, b), ∫ s r^{2T−1} ds has a closed antiderivative in r = α(1+s) − 1; its root by
    60-digit bisection (200 halvings) is an independent reference. Tolerance 1e-15 absolute: the
    float64 spacing near 0.3 is 5.6e-17, the root finder's rtol 4·eps."""
    a, b = mp.mpf("0.5"), mp.mpf(4)
    n = 2 * T - 1
    with mp.workdps(60):
        def D(al):
            F = lambda r: (r ** (n + 2) / (n + 2) + r ** (n + 1) / (n + 1)) / al**2 - r ** (n + 1) / (n + 1) / al  # noqa: E731
            return F(al * (1 + b) - 1) - F(al * (1 + a) - 1)

        lo, hi = 1 / (1 + b), 1 / (1 + a)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if D(mid) < 0 else (lo, mid)
        ref = float(lo)
    assert lca.alpha_T(UNIFORM, T) == pytest.approx(ref, abs=1e-15)
    if T <= MAX_DEPTH_MP:  # the 30-digit path is served only up to its limit (its refusal: test_api_guards)
        assert float(lca.alpha_T_mp(UNIFORM, T)) == pytest.approx(ref, abs=1e-14)


def test_two_parameter_minimiser_resolves_deep_models():
    """At T = 60 the two-parameter excess (~1e-36) is far below float64's resolution of α + β in
    (α, β) coordinates; in (γ, β) the minimiser still beats the one-parameter optimum, as it must
    (β = −α is allowed), and γ_T > 0 is tiny but resolved."""
    T = 60
    g, b = lca.minimise_two_residual(UNIFORM, T)
    two = lca.TwoParameterLoss(UNIFORM, T, "gamma-beta").terms(g, b)[0]
    one = lca.excess_risk(UNIFORM, T, lca.alpha_T(UNIFORM, T))
    assert 0 < two <= one * (1 + 1e-9)
    assert 0 < g < 1e-16


def test_two_parameter_flow_in_gamma_beta_is_the_alpha_beta_flow():
    """The flow integrated in (γ, β) under the pulled-back metric is the (α, β) flow: compare with
    a direct explicit integration of d(α, β)/dt = −∇L over t ∈ [0, 2] (RK45, rtol 1e-10); the two
    trajectories agree to 1e-7 (both solvers' tolerances, well below the path's O(0.1) motion)."""
    from scipy.integrate import solve_ivp

    T, start = 4, (0.6, 0.1)
    loss = lca.TwoParameterLoss(UNIFORM, T)
    direct = solve_ivp(lambda t, y: -loss.terms(y[0], y[1])[1:3], (0, 2), start, method="RK45",
                       rtol=1e-10, atol=1e-12, dense_output=True)
    times = np.array([0.5, 1.0, 2.0])
    r = flows.gradient_flow_two(UNIFORM, T, *start, t_eval=times)
    np.testing.assert_allclose(r.path, direct.sol(r.t).T, atol=1e-7)
    assert np.max(np.abs(r.path[-1] - np.array(start))) > 0.05  # it did move


def test_a_two_parameter_flow_the_integrator_cannot_finish_is_a_result_not_a_crash():
    """From (0, −1.5) at T = 10 on U(0.5, 4) the flow heads out of the stable region (β(1+s) < −2),
    where LSODA may fail repeatedly, the flow may leave the box, or it may reach the plateau α ≈ 0;
    which one depends on the platform's rounding.  Whatever it does, it ends with a named outcome
    and a reason, a finite path, and it is not a minimum: the only minimiser lies in the stable
    region."""
    from mmicl.numerics.flows import OUTCOMES_TWO, gradient_flow_two

    r = gradient_flow_two(parse_law("s=uniform(0.5,4)"), 10, 0.0, -1.5)
    assert r.outcome in OUTCOMES_TWO and r.reason
    assert not (r.converged and not -0.4 <= r.beta <= 0.0)
    assert len(r.t) == len(r.path) and np.all(np.isfinite(r.path))
