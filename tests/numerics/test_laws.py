"""Task laws and the LAW language: parsing, validation, sampling."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mmicl.numerics.laws.language import GRAMMAR, LawSyntaxError, parse_law
from mmicl.numerics.laws.scalar import Beta, Discrete, LawError, Mixture, Point, SumLaw, UnboundedSupportError, Uniform
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw
from mmicl.testing import plain_scalar_laws as scalar_laws


@pytest.mark.parametrize("text, match", [
    ("s=uniform(2,1)", "empty"),
    ("s=point(-1)", "negative"),
    ("s=uniform(nan,2)", "finite"),
    ("s=uniform(0,inf)", "finite"),
    ("s=beta(0,1,0,1)", "p > 0"),
    ("s=twopoint(1,2,1.5)", "0 ≤ p ≤ 1"),
    ("s=discrete(1:0.5,2:0.6)", "sum to 1"),
    ("s=mix(0.5*point(1),0.6*point(2))", "sum to 1"),
    ("s=point(1); zeta=const(0)", "no signal"),
    ("s=point(1); d1=0", "positive integer"),
    ("s=exponential(-1)", "rate > 0"),
    ("s=point(1); sv=point(1); sr=point(1)", "not both"),
    ("sv=point(1)", "both"),
])
def test_invalid_laws_give_clear_errors(text, match):
    with pytest.raises(LawError, match=match):
        parse_law(text)


@pytest.mark.parametrize("text", ["s=unifrm(1,2)", "s=uniform(1)", "s=uniform(1,2", "q=point(1)", "s point(1)",
                                  "s=point(1); zeta=cauchy", "d1=2"])
def test_syntax_errors_show_the_grammar(text):
    with pytest.raises(LawSyntaxError) as e:
        parse_law(text)
    assert GRAMMAR in str(e.value)


def test_unbounded_law_is_refused_where_a_bound_is_needed():
    law = parse_law("s=exponential(2)")
    assert law.s_law().sample(5, np.random.default_rng(0)).shape == (5,)
    with pytest.raises(UnboundedSupportError, match="bounded"):
        law.rule()


@given(scalar_laws)
def test_rule_weights_are_a_probability_and_nodes_lie_in_the_support(law):
    r = law.rule(100)
    lo, hi = law.support()
    assert r.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(r.nodes >= lo - 1e-12) and np.all(r.nodes <= hi + 1e-12)


@given(scalar_laws)
def test_rule_mean_matches_the_sample_mean(law):
    """The quadrature mean of S against 20,000 samples: within 5 standard errors."""
    x = law.sample(20_000, np.random.default_rng(0))
    se = x.std() / math.sqrt(x.size)
    assert abs(law.rule().expect(lambda s: s) - x.mean()) <= 5 * se + 1e-12


def _exact_power_moment(law, k: int) -> float:
    """E[S^k] in closed form: sums for atoms; for S = a + wX, X ~ Beta(p, q),
    Σ_j C(k, j) a^{k−j} w^j E[X^j] with E[X^j] = Π_{i<j} (p + i)/(p + q + i)."""
    if isinstance(law, Mixture):
        return sum(p * _exact_power_moment(c, k) for c, p in zip(law.components, law.probs))
    if isinstance(law, Discrete):
        return sum(p * v**k for v, p in zip(law.values, law.probs))
    if isinstance(law, Point):
        return law.c**k
    w, moments = law.b - law.a, [1.0]
    for i in range(k):
        moments.append(moments[-1] * (law.p + i) / (law.p + law.q + i))
    return sum(math.comb(k, j) * law.a ** (k - j) * w**j * moments[j] for j in range(k + 1))


def _exact_inverse_moment(law) -> float:
    """E[1/(1 + S)]: sums for atoms; for a Beta piece (1/(1+a))·₂F₁(1, p; p+q; −w/(1+a)) (mpmath,
    30 digits), from E[(1 + zX)^{−1}] = ₂F₁(1, p; p+q; −z)."""
    import mpmath as mp

    if isinstance(law, Mixture):
        return sum(p * _exact_inverse_moment(c) for c, p in zip(law.components, law.probs))
    if isinstance(law, Discrete):
        return sum(p / (1 + v) for v, p in zip(law.values, law.probs))
    if isinstance(law, Point):
        return 1 / (1 + law.c)
    with mp.workdps(30):
        return float(mp.hyp2f1(1, law.p, law.p + law.q, -(law.b - law.a) / (1 + mp.mpf(law.a))) / (1 + mp.mpf(law.a)))


RULE_RTOL = 5e-12 + 1e-14
"""A rule's expectation of a non-negative f is off by at most ρ·E[f] when each weight is off by at
most ρ relative: 5e-12 for the Gauss–Jacobi end pieces (scipy's weights, checked in
test_mpmath_crosscheck), plus 1e-14 for summing a few hundred terms.  The nodes integrate these
smooth functions exactly (Gauss rules of 30 points on each graded piece)."""


@given(scalar_laws, st.sampled_from([1, 100, 1000]))
def test_the_rule_has_the_moments_of_the_law(law, depth):
    """E[S^k] for k = 1..6 and E[1/(1 + S)] (not a polynomial) by the law's quadrature rule at
    depth 1, 100 and 1000 equal their closed forms to RULE_RTOL."""
    r = law.rule(depth)
    for k in range(1, 7):
        want = _exact_power_moment(law, k)
        assert abs(r.expect(lambda s: s**k) - want) <= RULE_RTOL * want, k
    want = _exact_inverse_moment(law)
    assert abs(r.expect(lambda s: 1 / (1 + s)) - want) <= RULE_RTOL * want


def test_tasks_have_the_law_of_their_squared_norm():
    law = TaskLaw(sv=Uniform(0.0, 2.0), sr=Uniform(1.0, 1.5), d1=3, d2=2)
    v, r, z = law.sample_tasks(50_000, np.random.default_rng(1))
    s = (v**2).sum(1) + (r**2).sum(1)
    assert v.shape == (50_000, 3) and r.shape == (50_000, 2)
    assert s.min() >= 1.0 - 1e-12 and s.max() <= 3.5 + 1e-12
    se = s.std() / math.sqrt(s.size)
    assert abs(s.mean() - law.s_law().mean()) < 5 * se


def test_zeta_second_moment_scales_the_rule():
    law = TaskLaw(s=Uniform(0.5, 4.0), zeta=ZetaLaw("const", 3.0))
    assert law.rule().weights.sum() == pytest.approx(9.0)


# ---------------------------------------------------------------------------------------------
# SumLaw.rule: the product rule compressed piece by piece into Gauss rules
# ---------------------------------------------------------------------------------------------

N_PIECE = SumLaw.NODES_PER_PIECE
SUMS = {
    "uniform+uniform": SumLaw(Uniform(0.2, 1.0), Uniform(0.5, 2.0)),
    "beta+uniform": SumLaw(Beta(0.5, 2.0, 0.2, 1.0), Uniform(0.5, 2.0)),
    "twopoint+uniform": SumLaw(Discrete((0.2, 1.0), (0.3, 0.7)), Uniform(0.5, 2.0)),
    "mix+mix": SumLaw(Mixture((Point(0.3), Uniform(0.0, 1.0)), (0.5, 0.5)),
                      Mixture((Point(0.5), Beta(0.5, 0.5, 0.0, 2.0)), (0.3, 0.7))),
}


def _by_piece(law: SumLaw, depth: int, rule):
    """``(edges, pieces)``: ``law.piece_edges(depth)`` and, per piece, the nodes and weights of
    ``rule`` in it."""
    edges = law.piece_edges(depth)
    idx = np.clip(np.searchsorted(edges, rule.nodes, side="right") - 1, 0, len(edges) - 2)
    order = np.argsort(idx, kind="stable")
    cuts = np.searchsorted(idx[order], np.arange(len(edges)))
    return edges, [(rule.nodes[order[a:b]], rule.weights[order[a:b]]) for a, b in zip(cuts[:-1], cuts[1:])]


def _chebyshev_moments(u, w, degree):
    """``Σ_k w_k T_j(u_k)`` for j = 0..degree (three-term recurrence, no big Vandermonde)."""
    dot = lambda a, b: np.einsum("i,i->", a, b)  # noqa: E731  (a threaded BLAS dot stalls on a shared machine)
    out, t0, t1 = [w.sum(), dot(w, u)], np.ones_like(u), u
    for _ in range(degree - 1):
        t0, t1 = t1, 2 * u * t1 - t0
        out.append(dot(w, t1))
    return np.array(out)


EIGEN_EPS = N_PIECE * np.finfo(float).eps
"""How far the eigen-solver may put a Gauss node in [−1, 1]: n·eps (‖J‖ ≤ 1)."""


def _node_rounding_bound(u, w, du, degree):
    """``Σ_k w_k |T_i'(u_k)| δu_k`` for i = 0..degree: the first-order change of the moments when
    the nodes ``u_k`` move by ``δu_k``, with ``|T_i'(u)| = i·|U_{i−1}(u)| ≤ i·min(i, 1/√(1 − u²))``."""
    inv = 1 / np.sqrt(np.maximum(1 - u**2, 1e-300))
    return np.array([i * (w * np.minimum(i, inv) * du).sum() for i in range(degree + 1)])


def _moment_tolerance(s, w, mass, c, h):
    """The allowed |Δ| of the moments T_0..T_{2n−1} on a piece (centre c, half-width h) between
    the compressed rule (nodes ``s``, weights ``w``) and the product rule: see the next test."""
    du = EIGEN_EPS + np.spacing(s) / h  # found in [−1, 1], then stored as a float64 s
    return 1e-13 * mass + _node_rounding_bound((s - c) / h, w, du, 2 * N_PIECE - 1)


@pytest.mark.parametrize("name", list(SUMS))
def test_sum_rule_integrates_polynomials_on_each_piece_like_the_product_rule(name):
    """On every piece, the compressed rule and the product rule give the same integrals of the
    Chebyshev polynomials T_0..T_{2n−1} of the piece (mapped to [−1, 1]).

    Tolerance: 1e-13 × the piece's mass (the Lanczos and summation rounding; measured ≤ 1e-14 in
    the Gauss rule's own variable), plus the effect of storing each Gauss node as a float64 s: it
    moves by up to spacing(s) ≈ 4e-16, i.e. by spacing(s)/h in the piece's variable, ~3e-13 on
    the end pieces (half-width h ≈ 1.4e-3 at depth 100), which T_59' (up to 59² at ±1) amplifies.
    The product rule's nodes are the measure itself.  The same rounding is in any float64 rule
    on so small a piece, and below what the depth-T integrands resolve."""
    law, depth = SUMS[name], 100
    new, old = law.rule(depth), law.product_rule(depth)
    edges, p_new = _by_piece(law, depth, new)
    _, p_old = _by_piece(law, depth, old)
    assert new.nodes.size <= 2 * N_PIECE * (len(edges) - 1) and new.nodes.size < old.nodes.size
    for j, ((sn, wn), (so, wo)) in enumerate(zip(p_new, p_old)):
        c, h = (edges[j] + edges[j + 1]) / 2, (edges[j + 1] - edges[j]) / 2
        mass = wo.sum()
        m_new = _chebyshev_moments((sn - c) / h, wn, 2 * N_PIECE - 1)
        m_old = _chebyshev_moments((so - c) / h, wo, 2 * N_PIECE - 1)
        tol = _moment_tolerance(sn, wn, mass, c, h)
        assert np.all(np.abs(m_new - m_old) <= tol), (j, np.max(np.abs(m_new - m_old) / tol))


def test_sum_rule_matches_product_rule_on_the_depth_T_excess_integrand():
    """E[h(s)] with h = s/(1+s)·(1 − α(1+s))^{2T}, T = 100, α = α*, compressed vs product rule.

    The tolerance is the error bound of the construction, evaluated a posteriori: on each piece
    I_j both rules have the mass μ_j and integrate each T_i of the piece alike to tol_ij (the
    previous test), hence the degree-(2n−1) Chebyshev interpolant p_j = Σ_i c_ij T_i of h to
    Σ_i |c_ij|·tol_ij, so
    |G(h) − μ(h)| ≤ Σ_j [μ_j·(max_{G's nodes}|h − p_j| + max_{μ's nodes}|h − p_j|) + Σ_i |c_ij|·tol_ij]."""
    law, T = SUMS["uniform+uniform"], 100
    lo, hi = law.support()
    alpha = 2 / (2 + lo + hi)
    h = lambda s: s / (1 + s) * (1 - alpha * (1 + s)) ** (2 * T)  # noqa: E731
    new, old = law.rule(T), law.product_rule(T)
    edges, p_new = _by_piece(law, T, new)
    _, p_old = _by_piece(law, T, old)
    bound = 0.0
    for j, ((sn, wn), (so, wo)) in enumerate(zip(p_new, p_old)):
        c, hw = (edges[j] + edges[j + 1]) / 2, (edges[j + 1] - edges[j]) / 2
        coef = np.polynomial.chebyshev.chebinterpolate(lambda u: h(c + hw * u), 2 * N_PIECE - 1)
        err = lambda s: np.max(np.abs(h(s) - np.polynomial.chebyshev.chebval((s - c) / hw, coef)))  # noqa: E731
        bound += wo.sum() * (err(sn) + err(so)) + np.abs(coef) @ _moment_tolerance(sn, wn, wo.sum(), c, hw)
    ref = old.expect(h)
    assert bound < 1e-10 * ref  # the bound is tight enough to mean something
    assert abs(new.expect(h) - ref) <= bound


def test_sum_of_discrete_laws_keeps_its_atoms_exactly():
    """Few atoms: the rule is the product rule itself, node for node.  Many coinciding atoms
    (1,600 products on 79 values): each value once, with the summed probability."""
    small = SumLaw(Discrete((0.0, 0.3, 1.0), (0.2, 0.5, 0.3)), Discrete((0.1, 0.7), (0.4, 0.6)))
    r, p = small.rule(100), small.product_rule(100)
    assert np.array_equal(r.nodes, p.nodes) and np.array_equal(r.weights, p.weights)
    grid = Discrete(tuple(k / 8 for k in range(40)), (1 / 40,) * 40)  # dyadic: sums are exact
    r, p = SumLaw(grid, grid).rule(100), SumLaw(grid, grid).product_rule(100)
    values, inverse = np.unique(p.nodes, return_inverse=True)
    assert r.nodes.size == values.size == 79
    order = np.argsort(r.nodes)
    assert np.array_equal(r.nodes[order], values)
    assert np.allclose(r.weights[order], np.bincount(inverse, weights=p.weights), rtol=1e-13, atol=0)


@pytest.mark.parametrize("depth", [1, 100, 1000])
def test_sum_rule_size_is_pieces_times_n_and_its_mass_is_one(depth):
    """At most 2n nodes per graded piece (n where a piece is compressed), against n1·n2 for the
    product rule; weights sum to 1; nodes in the support."""
    law = SUMS["uniform+uniform"]
    r = law.rule(depth)
    pieces = len(law.piece_edges(depth)) - 1
    n1, n2 = law.first.rule(depth).nodes.size, law.second.rule(depth).nodes.size
    assert r.nodes.size <= 2 * N_PIECE * pieces < n1 * n2 / 10
    assert r.weights.sum() == pytest.approx(1.0, abs=1e-14) and np.all(r.weights > 0)
    lo, hi = law.support()
    assert np.all((r.nodes >= lo) & (r.nodes <= hi))
    assert law.rule(depth) is r  # built once per (law, depth)


def test_discrete_gauss_is_exact_where_plain_lanczos_loses_orthogonality():
    """Two heavy atoms beside a light continuum: plain Lanczos loses orthogonality (its Ritz
    values lock onto the atoms), the check sends it to full re-orthogonalisation, and the
    30-point rule has the moments T_0..T_59 of the measure: to 1e-13 of the mass plus the effect
    of the eigen-solver's n·eps on the nodes (Gauss nodes sit near the atom at 1, where
    T_59' = 59²; here no float64 s is stored)."""
    from mmicl.numerics.laws.quadrature import discrete_gauss, lanczos

    calls = []
    x = np.concatenate([np.linspace(-1.0, 0.5, 400), [0.9, 1.0]])
    w = np.concatenate([np.full(400, 1e-3), [1.0, 2.0]])
    t, g = discrete_gauss(x, w, N_PIECE, lanczos_fn=lambda *a, full: calls.append(full) or lanczos(*a, full=full))
    assert calls == [False, True]
    assert np.all(g > 0) and np.all(np.abs(t) <= 1)
    degree = 2 * N_PIECE - 1
    tol = 1e-13 * w.sum() + _node_rounding_bound(t, g, EIGEN_EPS, degree)
    assert np.all(np.abs(_chebyshev_moments(t, g, degree) - _chebyshev_moments(x, w, degree)) <= tol)
