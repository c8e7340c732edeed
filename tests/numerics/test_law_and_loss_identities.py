"""Properties that state the maths, written to kill the mutants that survived tests/mutation.py.
Each is exact or checked against an independent computation, and fast."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given

from mmicl.numerics import lca, lsa
from mmicl.numerics.laws.language import parse_law, parse_scalar_law
from mmicl.numerics.laws.scalar import Beta, Discrete, Point, SumLaw, Uniform
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw
from mmicl.testing import task_laws_from as task_laws


def beta_moments(p: float, q: float, a: float, b: float) -> tuple[float, float]:
    """E S and E S² of S = a + (b − a)·B, B ~ Beta(p, q), from E B = p/(p+q) and
    E B² = p(p+1)/((p+q)(p+q+1))."""
    m1 = p / (p + q)
    m2 = p * (p + 1) / ((p + q) * (p + q + 1))
    w = b - a
    return a + w * m1, a * a + 2 * a * w * m1 + w * w * m2


# ------------------------------------------------------------------ laws: moments in closed form


@pytest.mark.parametrize("p, q, a, b", [(2.0, 5.0, 0.5, 3.0), (0.5, 3.0, 1.0, 2.0), (4.0, 1.5, 0.0, 1.0)])
def test_beta_mean_and_second_moment_are_exact(p, q, a, b):
    """The Beta law's ``mean()`` and its quadrature rule (at depth 1 and 1000) give E S and E S²
    of S = a + (b − a)·Beta(p, q) (asymmetric shapes, so p and q cannot be confused)."""
    law = Beta(p, q, a, b)
    m1, m2 = beta_moments(p, q, a, b)
    assert law.mean() == pytest.approx(m1, rel=1e-14)
    for depth in (1, 1000):
        r = law.rule(depth)
        assert r.expect(lambda s: s) == pytest.approx(m1, rel=1e-12)
        assert r.expect(lambda s: s**2) == pytest.approx(m2, rel=1e-12)


def test_sum_law_moments_are_those_of_a_sum_of_independent_parts():
    """E[S1 + S2] and E[(S1 + S2)²] from the parts' moments, for an asymmetric Beta plus a two-point
    law, by the product rule and by the compressed rule (depths 1 and 100), and for the task law
    ``sv=…; sr=…`` that builds the same sum."""
    b1, b2 = beta_moments(2.0, 5.0, 0.0, 1.0)
    d1, d2 = 0.8 * 1.0, 0.8 * 1.0  # twopoint(0, 1, 0.2): 1 with probability 0.8
    want1, want2 = b1 + d1, b2 + 2 * b1 * d1 + d2
    law = SumLaw(Beta(2.0, 5.0, 0.0, 1.0), Discrete((0.0, 1.0), (0.2, 0.8)))
    for depth in (1, 100):
        for r in (law.product_rule(depth), law.rule(depth)):
            assert r.expect(lambda s: s) == pytest.approx(want1, rel=1e-12)
            assert r.expect(lambda s: s**2) == pytest.approx(want2, rel=1e-12)
    task = parse_law("sv=beta(2,5,0,1); sr=twopoint(0,1,0.2)")
    assert task.rule(1).expect(lambda s: s) == pytest.approx(want1, rel=1e-12)


@pytest.mark.parametrize("zeta, want", [(ZetaLaw("normal"), 1.0), (ZetaLaw("rademacher"), 1.0),
                                        (ZetaLaw("const", -3.0), 9.0),
                                        (ZetaLaw("samples", samples=(1.0, -2.0, 3.0)), 14 / 3)])
def test_zeta_second_moments_and_the_rule_they_scale(zeta, want):
    """E[ζ²] of each ζ law (samples: the mean of the squares), and the task rule's mass is E[ζ²]."""
    assert zeta.second_moment() == pytest.approx(want, rel=1e-15)
    law = TaskLaw(s=Uniform(0.5, 4.0), zeta=zeta)
    assert law.rule(3).weights.sum() == pytest.approx(want, rel=1e-12)


def test_sampled_tasks_have_squared_norm_s():
    """``s=`` is the law of ‖m‖²: sampled tasks of ``s=uniform(0.5,4)`` have ‖m‖² in [0.5, 4] with
    mean 2.25 (5 standard errors; reading s as ‖m‖ would give E‖m‖² = E s² = 6.08)."""
    law = TaskLaw(s=Uniform(0.5, 4.0), d1=2, d2=1)
    v, r, _ = law.sample_tasks(40_000, np.random.default_rng(3))
    s = (v**2).sum(1) + (r**2).sum(1)
    assert s.min() >= 0.5 - 1e-12 and s.max() <= 4.0 + 1e-12
    assert abs(s.mean() - 2.25) < 5 * s.std() / math.sqrt(s.size)


# ------------------------------------------------------------------ the LAW language


@pytest.mark.parametrize("text, law", [
    ("uniform(0.5,4)", Uniform(0.5, 4.0)),
    ("beta(2,5,0.5,3)", Beta(2.0, 5.0, 0.5, 3.0)),
    ("twopoint(1,3,0.3)", Discrete((1.0, 3.0), (0.3, 0.7))),
    ("discrete(1:0.2,2:0.5,4:0.3)", Discrete((1.0, 2.0, 4.0), (0.2, 0.5, 0.3))),
    ("point(2)", Point(2.0)),
])
def test_each_law_reads_its_numbers_in_the_documented_order(text, law):
    """The grammar's argument order: uniform(a,b), beta(p,q,a,b), twopoint(a,b,p) with p the
    probability of a, discrete(value:prob,…)."""
    got = parse_scalar_law(text)
    assert got == law
    r, want = got.rule(1), law.rule(1)
    np.testing.assert_array_equal(r.nodes, want.nodes)
    np.testing.assert_array_equal(r.weights, want.weights)


def test_mixture_weights_and_the_law_items_read_as_written():
    """mix(w1*D1, w2*D2): w_k is the probability of D_k; zeta=const(c) has E[ζ²] = c²;
    d1 and d2 default to 1."""
    mix = parse_scalar_law("mix(0.25*point(1),0.75*point(3))")
    assert mix.rule(1).expect(lambda s: s) == pytest.approx(0.25 * 1 + 0.75 * 3, rel=1e-15)
    law = parse_law("s=point(1); zeta=const(2)")
    assert law.zeta.second_moment() == 4.0
    assert (law.d1, law.d2) == (1, 1)


@given(task_laws())
def test_spec_round_trips_to_the_same_rule(law):
    """Writing a law as LAW text and reading it back gives the same law: the same E[ζ² h(s)]
    rule node for node (not only the same support), the same ζ law and dimensions."""
    back = parse_law(law.spec())
    assert back.zeta == law.zeta and (back.d1, back.d2) == (law.d1, law.d2)
    r, want = back.rule(1), law.rule(1)
    np.testing.assert_allclose(r.nodes, want.nodes, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(r.weights, want.weights, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------ atoms at s = 0 (convention)


@pytest.mark.parametrize("text", [
    "s=discrete(0:0.3,1:0.3,3:0.4)",
    "s=mix(0.3*point(0),0.7*uniform(1,3))",
    "sv=twopoint(0,1,0.5); sr=twopoint(0,3,0.5)",
])
def test_alpha_star_and_the_deep_minimiser_ignore_an_atom_at_zero(text):
    """s_lo is taken over the prompts with m ≠ 0 (docs/model.md): on each law the signal support
    is [1, 3] (the per-modality law: s ∈ {0, 1, 3, 4}, so [1, 4]), and α_T at T = 3000 is near
    2/(2 + s_lo + s_hi) with that s_lo, far from the value with s_lo = 0."""
    law = parse_law(text)
    lo, hi = (1.0, 4.0) if text.startswith("sv") else (1.0, 3.0)
    assert law.signal_bounds() == (lo, hi)
    star = 2 / (2 + lo + hi)
    assert lca.alpha_star(law) == pytest.approx(star, rel=1e-15)
    a = lca.alpha_T(law, 3000)
    assert abs(a - star) < 2e-3 < abs(a - 2 / (2 + 0 + hi)) / 10


# ------------------------------------------------------------------ Bayes risk and the loss


def test_bayes_risk_is_the_mean_of_zeta2_over_one_plus_s():
    """E[ζ²/(1 + s)] in closed form: ζ ≡ 2 and s ~ U(0.5, 4) give 4·log(5/1.5)/3.5; the LCA and
    the LSA modules report the same number."""
    law = parse_law("s=uniform(0.5,4); zeta=const(2)")
    want = 4 * math.log(5 / 1.5) / 3.5
    assert lca.bayes_risk(law) == pytest.approx(want, rel=1e-12)
    assert lsa.best_lsa(law).bayes_risk == pytest.approx(want, rel=1e-12)
    two = parse_law("s=twopoint(1,3,0.3)")
    assert lca.bayes_risk(two) == pytest.approx(0.3 / 2 + 0.7 / 4, rel=1e-15)
    assert lsa.best_lsa(two).bayes_risk == pytest.approx(0.3 / 2 + 0.7 / 4, rel=1e-15)


@pytest.mark.parametrize("T, alpha", [(1, 0.3), (4, 0.2), (7, 0.45)])
def test_population_loss_on_a_point_law_is_the_matrix_risk(T, alpha):
    """On s ≡ c (d = 3) the one-parameter population loss E[(ŷ − y)²] (Bayes risk plus excess)
    equals the risk of the d×d recurrence P ← P + W^S + W^V Λ P computed here by hand: with
    w = ζ Pᵀ m, the risk is ζ²(1 − 2 wᵀm + wᵀΛw); ζ normal, so E[ζ²] = 1."""
    c = 1.7
    m = np.array([0.3, -0.5, 0.0])
    m = m * math.sqrt(c) / np.linalg.norm(m)
    lam = np.eye(3) + np.outer(m, m)
    ws, wv = alpha * np.eye(3), -alpha * np.eye(3)
    P = np.zeros((3, 3))
    for _ in range(T):
        P = P + ws + wv @ lam @ P
    w = P.T @ m
    risk = 1 - 2 * w @ m + w @ lam @ w
    law = TaskLaw(s=Point(c), d1=2, d2=1)
    assert lca.population_loss(law, T, alpha) == pytest.approx(risk, rel=1e-12)
