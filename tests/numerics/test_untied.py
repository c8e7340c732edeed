"""The untied one-parameter LCA (one α_t per layer): an extension beyond arXiv:2602.04872.

The symbolic derivation against the tied model of ``theory.lca``; the closed form against the repo's
general LCA stack run as d×d matrices; the orthogonal-polynomial optimum against its independent
routes (mpmath, direct minimisation) and against the tied model, as properties over random bounded
laws; the gradient flow, the torch model, and the claim on small sizes."""
from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from mmicl.numerics import lca, untied, untied_flow
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.models import LCA, ReducedLCA, UntiedReducedLCA
from mmicl.numerics.montecarlo import conditional_excess
from mmicl.numerics.sampling import sample_moments
from mmicl.numerics.laws.scalar import Point, UnboundedSupportError
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw
from mmicl.numerics.training import train
from mmicl.theory import lca as th_lca
from mmicl.theory import untied as th
from mmicl.testing import (continuous_laws, discrete_laws, grid_norms, positive_norms,
                          plain_scalar_laws as scalar_laws, task_laws_from as task_laws)

UNIFORM = "s=uniform(0.5,4)"
REL = untied_flow.GAP_REACHED  # the optimum's stated relative accuracy (1e-9)


def _log(v) -> float:
    """natural log of a positive ScaledValue"""
    return math.log(v.mantissa) + v.log_scale


# --------------------------------------------------------------------------- the symbolic model


@pytest.mark.parametrize("T", [1, 2, 3, 4])
def test_with_every_alpha_equal_the_untied_excess_is_the_tied_one(T):
    """``untied_at_depth`` derives the factor from T layers and checks the factorisation itself;
    with α_t ≡ α its excess must be theory.lca's one-parameter excess at depth T."""
    model = th.untied_at_depth(T)
    tied = model.excess_per_zeta2.subs({a: th_lca.alpha for a in model.params})
    assert th.is_zero(tied - th_lca.one_parameter().excess_per_zeta2.subs(th_lca.T, T))
    assert th.is_zero(model.residual - sp.Mul(*[1 - a * (1 + th.s) for a in model.params]))


def test_the_untied_layer_is_the_layer_that_theory_lca_iterates():
    a = th_lca.alpha
    p = sp.Integer(0)
    for _ in range(4):
        p = th.untied_layer(p, a)
    assert sp.expand(p - th_lca.query_factor_at_depth(a, -a, 4)) == 0


def test_symbolic_depth_is_bounded():
    with pytest.raises(ValueError, match="symbolic depth"):
        th.untied_at_depth(5)


@given(st.floats(0.0, 5.0), st.floats(0.05, 20.0))
def test_the_derived_rates_are_the_kappa_forms(s_lo, width):
    """rate_exprs derives the tied rate from α* and the untied one from the Green's function of the
    interval; both must reduce to the κ forms of docs/untied.md."""
    tied, untied_rate = _rates(s_lo, s_lo + width)
    k = (1 + s_lo + width) / (1 + s_lo)
    assert tied == pytest.approx(((k - 1) / (k + 1)) ** 2, rel=1e-12)
    assert untied_rate == pytest.approx(((math.sqrt(k) - 1) / (math.sqrt(k) + 1)) ** 2, rel=1e-12)


def _rates(s_lo: float, s_hi: float) -> tuple[float, float]:
    tied, untied_rate, (lo, hi) = th.rate_exprs()
    f = sp.lambdify((lo, hi), (tied, untied_rate), "mpmath")  # high precision: no cancellation doubts
    return tuple(float(v) for v in f(s_lo, s_hi))


# --------------------------------------------------------------------------- closed form vs matrices


def _general_stack(d: int, alphas) -> LCA:
    """The repo's general LCA, untied, with W^K = W^Q = W^R = I and W^S_t = −W^V_t = α_t I."""
    model = LCA(d, len(alphas), tied=False, init_scale=0.0).double()  # float64 before the α's go in
    with torch.no_grad():
        for t, a in enumerate(alphas):
            model.w_s[t] = a * torch.eye(d, dtype=torch.float64)
            model.w_v[t] = -a * torch.eye(d, dtype=torch.float64)
    return model


@pytest.mark.parametrize("seed", range(4))
def test_closed_form_equals_the_general_stack_run_as_matrices(seed):
    """Per prompt: ζ²·A(s)·∏(1 − α_t(1+s))² (compiled from SymPy) against (i) the general untied
    ``LCA`` on the large-context moments (C = Λ, h = ζm), its excess taken with the query integrated
    out (``conditional_excess``; every prompt of a point law has the same excess), (ii) the numpy
    matrix recurrence.  Tolerance: 1e-9 relative + 1e-14·ζ²(1+s)² (float64 rounding of ≤ 9 layers of
    d×d products and of the cancellation risk − Bayes risk)."""
    rng = np.random.default_rng(seed)
    d1, d2 = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    s, zeta = float(rng.uniform(0.1, 4)), float(rng.uniform(0.5, 2))
    alphas = rng.uniform(0.05, 1.8 / (1 + s), int(rng.integers(1, 9)))
    law = TaskLaw(s=Point(s), zeta=ZetaLaw("const", zeta), d1=d1, d2=d2)
    closed = untied.untied_excess(law, alphas).value
    stack = conditional_excess(_general_stack(d1 + d2, alphas), law, n=None, samples=64, seed=seed)
    m = rng.standard_normal(d1 + d2)
    numpy_matrices = untied.matrix_excess_untied(m * math.sqrt(s) / np.linalg.norm(m), zeta, alphas)
    allowed = 1e-9 * closed + 1e-14 * zeta**2 * (1 + s) ** 2
    assert abs(stack.mean - closed) <= allowed and stack.se <= allowed
    assert abs(numpy_matrices - closed) <= allowed


# --------------------------------------------------------------------------- the optimum


def test_the_optimum_by_two_formulas_agrees():
    """1/Σπ_k(0)² against the excess of the schedule the Christoffel step returns (the same
    discretisation, two computations)."""
    for T in (1, 3, 20, 200):
        opt = untied.optimal_schedule(UNIFORM, T)
        assert _log(untied.untied_excess(UNIFORM, opt.alphas)) == pytest.approx(opt.log10_excess * math.log(10),
                                                                                  abs=REL)


def test_the_optimum_is_stable_at_depth_hundreds(monkeypatch):
    """T = 640 on a Beta law with singular ends: doubling the discretisation margin moves the
    optimum by less than the stated 1e-9 relative, and the α's by less than 1e-12."""
    law = "s=beta(0.5,0.7,0.2,3)"
    first = untied.optimal_schedule(law, 640)
    monkeypatch.setattr(untied, "DIGITS", 2 * untied.DIGITS)
    untied.cached_excess_rule.cache_clear()
    try:
        finer = untied.optimal_schedule(law, 640)
    finally:
        untied.cached_excess_rule.cache_clear()
    assert finer.nodes > first.nodes
    assert abs(first.log10_excess - finer.log10_excess) <= math.log10(1 + REL)
    assert np.allclose(first.alphas, finer.alphas, rtol=1e-12, atol=0)


def test_direct_minimisation_finds_the_same_optimum():
    """SciPy's Nelder–Mead on the excess over the law's own quadrature (not the Gauss discretisation
    of ``numerics.untied``), from the tied α_T spread apart: at T ≤ 3 the minimum it reaches is within
    its xatol-driven error (value to ~1e-10 relative) of the optimum."""
    from scipy import optimize

    law = parse_law("s=beta(2,0.5,0,3)")
    for T in (2, 3):
        rule = law.rule(depth=T)
        res = optimize.minimize(lambda a, rule=rule: _log(untied.untied_excess(law, a, rule=rule)),
                                lca.alpha_T(law, T) * np.linspace(0.8, 1.3, T), method="Nelder-Mead",
                                options={"xatol": 1e-10, "fatol": 1e-14, "maxiter": 20_000})
        opt = untied.optimal_schedule(law, T)
        assert res.fun == pytest.approx(opt.log10_excess * math.log(10), abs=1e-8)
        assert np.allclose(np.sort(res.x), opt.alphas, rtol=1e-4)


@given(task_laws(scalar_laws))
def test_optimum_is_below_tied_decreasing_and_inside_the_support(law):
    lo, hi = law.signal_bounds()
    previous = math.inf
    for T in (1, 2, 3, 6, 12):
        opt = untied.optimal_schedule(law, T)
        tied = lca.excess_risk_scaled(law, T).log10
        slack = math.log10(1 + 2 * REL)
        assert opt.log10_excess <= tied + slack  # α_t ≡ α_T is one of the schedules
        assert opt.log10_excess <= previous + slack  # a layer with α = 0 does nothing
        previous = opt.log10_excess
        a = np.asarray(opt.alphas)
        assert a.size == T and np.all(np.diff(a) >= 0)
        assert np.all(a >= (1 - 1e-12) / (1 + hi)) and np.all(a <= (1 + 1e-12) / (1 + lo))


def _apart(scalar) -> bool:
    """Atoms at least 1e-9 apart: closer ones are one point to float64 (1 + s rounds them together,
    or the Lanczos process, whose stopping test is 1e-13 of the support's width, cannot split them)."""
    return bool(np.all(np.diff(np.sort(scalar.values)) >= 1e-9))


@given(discrete_laws(st.one_of(grid_norms, positive_norms), min_size=1, max_size=5).filter(_apart))
def test_a_law_with_m_atoms_has_zero_optimum_exactly_from_T_equal_m(scalar):
    law = TaskLaw(s=scalar)
    m = int(np.unique([v for v in scalar.values if v > 0]).size)
    if m == 0:
        return
    for T in range(1, m + 2):
        opt = untied.optimal_schedule(law, T)
        assert opt.exact_zero == (T >= m)
        assert (opt.log10_excess == -math.inf) == (T >= m)


@settings(max_examples=max(5, settings().max_examples // 5))  # mpmath's Gauss rule: up to ~0.5 s per example
@given(st.one_of(continuous_laws, discrete_laws()).filter(lambda x: x.signal_support() is not None),
       st.integers(2, 6))
def test_float64_route_agrees_with_the_mpmath_route(scalar, T):
    """mpmath's own Gauss–Jacobi discretisation (finer margin), Stieltjes at 30 digits, nodes of
    λ dμ directly: the optimum within 1e-9 relative, the α's within 1e-10 relative."""
    law = TaskLaw(s=scalar)
    f64, mpv = untied.optimal_schedule(law, T), untied.optimal_schedule_mp(law, T, dps=30)
    assert f64.exact_zero == mpv.exact_zero
    if not f64.exact_zero:
        assert abs(f64.log10_excess - mpv.log10_excess) <= math.log10(1 + REL)
        assert np.allclose(f64.alphas, mpv.alphas, rtol=1e-10, atol=0)


def test_the_product_of_two_modalities_is_compressed_to_its_gauss_rule():
    """The O(N)-memory Lanczos compression of a product of two Gauss rules (one singular) against
    the stored-basis, fully re-orthogonalised ``quadrature.discrete_gauss``, and its certificate."""
    from mmicl.numerics.laws.quadrature import discrete_gauss, gauss_jacobi

    n = 120
    x1, w1 = gauss_jacobi(n, 0.0, 0.0)
    x2, w2 = gauss_jacobi(n, 1.0, -0.5)
    x, w = (2 * x1[:, None] + 0.5 + 0.5 * x2[None, :]).ravel(), (w1[:, None] * w2[None, :]).ravel()
    t = (x - (x.max() + x.min()) / 2) / ((x.max() - x.min()) / 2)
    nodes, weights = untied._product_gauss(t, w, n)
    ref_nodes, ref_weights = discrete_gauss(t, w, n)
    assert np.allclose(nodes, ref_nodes, rtol=0, atol=1e-14)
    assert np.allclose(weights, ref_weights, rtol=1e-10, atol=0)
    assert untied._chebyshev_mismatch(t, w, nodes, weights, 2 * n) <= untied.CERTIFY
    assert untied._chebyshev_mismatch(t, w, nodes[:-1], weights[:-1], 2 * n) > untied.CERTIFY  # it can fail


def test_a_sum_of_two_modalities_agrees_with_the_mpmath_route():
    law = "sv=uniform(0,2); sr=beta(0.5,2,0.5,1); d1=2; d2=3"
    f64, mpv = untied.optimal_schedule(law, 6), untied.optimal_schedule_mp(law, 6, dps=30)
    assert abs(f64.log10_excess - mpv.log10_excess) <= math.log10(1 + REL)
    assert np.allclose(f64.alphas, mpv.alphas, rtol=1e-10, atol=0)


def test_predicted_rates_and_measured_rate_on_a_uniform_law():
    """The rate fitted over T ∈ [80, 160] is within 1e-4 (relative, in log10) of potential
    theory's: the finite-depth correction there is ~1e-5 (see the claim's Richardson tolerance)."""
    pred = untied.predicted_rates(UNIFORM)
    fit = untied.measured_rate(UNIFORM, [80, 120, 160])
    assert fit.log10_rate == pytest.approx(math.log10(pred["untied"]), rel=1e-4)
    assert fit.residual_max < 1e-3
    assert pred["untied"] < pred["tied"]
    tied_fit = untied.measured_rate(UNIFORM, [80, 160], model="tied")
    assert tied_fit.rate > 2 * fit.rate  # tied is far slower per layer


# --------------------------------------------------------------------------- errors at the boundary


def test_bad_inputs_are_refused_with_what_to_do():
    with pytest.raises(UnboundedSupportError, match="bounded"):
        untied.optimal_schedule("s=exponential(1)", 3)
    with pytest.raises(UnboundedSupportError):
        untied.predicted_rates("s=exponential(1)")
    with pytest.raises(ValueError, match="depth T"):
        untied.optimal_schedule(UNIFORM, 0)
    with pytest.raises(ValueError, match="up to T"):
        untied.optimal_schedule(UNIFORM, untied.MAX_DEPTH + 1)
    with pytest.raises(ValueError, match="depth T"):
        untied.untied_excess(UNIFORM, [])
    with pytest.raises(ValueError, match="finite"):
        untied.untied_excess(UNIFORM, [0.2, float("nan")])
    with pytest.raises(ValueError, match="1-D"):
        untied.untied_excess(UNIFORM, [[0.2, 0.3]])
    with pytest.raises(ValueError, match="two different depths"):
        untied.measured_rate(UNIFORM, [5, 5])
    with pytest.raises(ValueError, match="exactly 0"):
        untied.measured_rate("s=twopoint(1,3,0.3)", [1, 2, 3])
    with pytest.raises(ValueError, match="no information"):
        untied.optimal_schedule("s=point(0)", 2)
    with pytest.raises(ValueError, match="one start per layer"):
        UntiedReducedLCA(3, [0.1, 0.2])
    with pytest.raises(ValueError, match="exactly 0"):
        untied_flow.schedule_flow("s=twopoint(1,3,0.3)", [0.2, 0.3])


def test_law_text_and_task_laws_give_the_same_answers():
    law = parse_law(UNIFORM)
    assert untied.optimal_schedule(UNIFORM, 5) == untied.optimal_schedule(law, 5)
    assert untied.untied_excess(UNIFORM, [0.2, 0.3]) == untied.untied_excess(law, [0.2, 0.3])
    assert untied.predicted_rates(UNIFORM) == untied.predicted_rates(law)
    assert untied.measured_rate(UNIFORM, [5, 10]) == untied.measured_rate(law, [5, 10])


# --------------------------------------------------------------------------- flow and training


def test_gradient_flow_from_random_starts_reaches_the_optimum():
    survey = untied_flow.flows_from_random_starts(UNIFORM, 4, 3, seed=11)
    assert survey.fraction == 1.0 and survey.worst_gap <= untied_flow.GAP_REACHED


def test_gradient_flow_from_the_tied_start_stays_tied():
    """Equal α's get equal gradients: from α_t ≡ α₀ the flow rests at the tied α_T, a stationary
    point above the optimum (why the claim measures the flow from random starts), and a saddle."""
    T = 3
    flow = untied_flow.schedule_flow(UNIFORM, [0.1] * T)
    a_T = lca.alpha_T(UNIFORM, T)
    assert flow.at_rest and not flow.reached
    assert np.allclose(flow.alphas, a_T, rtol=1e-7)
    assert flow.log10_excess == pytest.approx(lca.excess_risk_scaled(UNIFORM, T).log10, abs=1e-8)
    # a saddle: the Hessian of log L at α_t ≡ α_T descends along every direction off the diagonal
    _, g, H = untied_flow.log_excess_derivatives(UNIFORM, [a_T] * T)
    curvatures = np.linalg.eigvalsh(H)
    assert np.abs(g).max() < 1e-10 and (curvatures < 0).sum() == T - 1 and curvatures[-1] > 0


def test_log_excess_derivatives_match_finite_differences():
    rng = np.random.default_rng(3)
    a = rng.uniform(0.1, 0.6, 4)
    _, g, H = untied_flow.log_excess_derivatives(UNIFORM, a)
    h = 1e-6
    for t in range(4):
        e = np.zeros(4)
        e[t] = h
        up, down = untied_flow.log_excess_derivatives(UNIFORM, a + e), untied_flow.log_excess_derivatives(UNIFORM, a - e)
        assert (up[0] - down[0]) / (2 * h) == pytest.approx(g[t], rel=1e-6)
        assert np.allclose((up[1] - down[1]) / (2 * h), H[t], rtol=1e-5, atol=1e-6 * np.abs(H).max())


def test_the_torch_model_is_the_untied_stack():
    law = parse_law("s=uniform(0.5,4); d1=2; d2=2")
    b = sample_moments(law, 32, 50, torch.Generator().manual_seed(0), "cpu", torch.float64)
    model = UntiedReducedLCA(4, [0.1, 0.25, 0.3, 0.5]).double()
    assert torch.allclose(model(b), model.forward_loop(b), rtol=1e-10, atol=1e-12)
    assert torch.allclose(model(b), _general_stack(4, model.schedule())(b), rtol=1e-10, atol=1e-12)
    tied = UntiedReducedLCA(3, [0.2] * 3).double()
    assert torch.allclose(tied(b), ReducedLCA(3, "one", 0.2).double()(b), rtol=1e-10, atol=1e-12)


@pytest.mark.train
def test_monte_carlo_training_agrees_with_the_population_excess_and_beats_tied():
    """Adam on sampled prompts (large-context limit, float64) from spread α's at T = 2: the excess of
    the learnt schedule, estimated on fresh prompts with the query integrated out, agrees with
    ``untied_excess`` within 3 standard errors, and is below the best tied excess."""
    T = 2
    model = UntiedReducedLCA(T, [0.22, 0.5])
    train(model, UNIFORM, n=None, steps=300, batch=512, lr=3e-3, schedule="cosine", seed=1, dtype=torch.float64)
    est = conditional_excess(model, UNIFORM, n=None, samples=20_000, seed=5)
    pop = untied.untied_excess(UNIFORM, model.schedule()).value
    assert abs(est.z(pop)) <= 3
    assert pop < lca.excess_risk_scaled(UNIFORM, T).value


# --------------------------------------------------------------------------- the claim


def test_the_claim_on_an_atomic_law_and_on_an_unbounded_one(tmp_path):
    import mmicl.proofs.claims  # noqa: F401  (registers the claims)
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.registry import REGISTRY

    claim = REGISTRY["ext.untied"]
    assert not claim.default and "extension" in claim.title
    res = claim.run(RunConfig(smoke=True, out=tmp_path, law="s=discrete(0.5:0.2,1:0.3,2:0.5)"))
    assert res.verdict == "holds", [c.name for c in res.checks if c.passed is not True]
    assert any("exactly 0 from T = 3" in c.name for c in res.checks)
    assert (tmp_path / "figures" / "ext.untied_rates.png").exists()
    res = claim.run(RunConfig(smoke=True, out=tmp_path, law="s=exponential(1)"))
    assert res.verdict == "hypothesis-not-met"


@pytest.mark.slow
def test_the_claim_holds_at_the_quick_size(tmp_path):
    import mmicl.proofs.claims  # noqa: F401
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.registry import REGISTRY

    res = REGISTRY["ext.untied"].run(RunConfig(quick=True, out=tmp_path))
    assert res.verdict == "holds", [c.name for c in res.checks if c.passed is not True]
