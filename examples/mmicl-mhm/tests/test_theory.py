"""The derivation: the rotation argument against direct integration, the step's closed forms, the
stationary point, over random odd polynomial targets."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from mmicl_mhm import theory

z = theory.z


@st.composite
def odd_polynomials(draw, degree: int = 3):
    """g(z) = Σ c_k z^k over odd k ≤ degree, small integer coefficients, not all zero."""
    coeffs = draw(st.lists(st.integers(-3, 3), min_size=(degree + 1) // 2, max_size=(degree + 1) // 2).filter(any))
    return sum(c * z ** (2 * i + 1) for i, c in enumerate(coeffs))


def _same_moments(g):
    iso = theory.isotropic_moments(g)
    for dim in (1, 2):
        direct = theory.direct_moments(g, dim)
        assert (direct["M"] - iso["m"].subs(theory.d_sym, dim) * sp.eye(dim)).applyfunc(sp.simplify) == sp.zeros(dim, dim)
        assert (direct["B"] - iso["b"].subs(theory.d_sym, dim) * sp.eye(dim)).applyfunc(sp.simplify) == sp.zeros(dim, dim)
        assert sp.simplify(direct["ey2"] - iso["ey2"].subs(theory.d_sym, dim)) == 0


@settings(max_examples=3)
@given(odd_polynomials(3))
def test_the_rotation_argument_gives_the_direct_moments(g):
    _same_moments(g)


@pytest.mark.slow
@settings(max_examples=12)
@given(odd_polynomials(5))
def test_the_rotation_argument_gives_the_direct_moments_up_to_degree_5(g):
    _same_moments(g)


def test_the_steps_of_the_named_targets():
    """Linear regression's step is n/(n + d + 1); the others are derived, and each tends to a limit
    below 1 as n grows only through the target's own moments (η* → b/m∞)."""
    n, d, s2 = theory.n_sym, theory.d_sym, theory.s2_sym
    assert sp.simplify(theory.optimal_step(z) - n / (n + d + 1 + s2)) == 0
    assert sp.simplify(theory.optimal_step(z**3).subs(s2, 0) - 3 * n / (3 * n + 5 * d + 27)) == 0
    assert sp.simplify(theory.optimal_step(sp.sign(z)).subs(s2, 0) - 2 * n / (2 * n + sp.pi * d - 2)) == 0
    for g in (z, z**3, sp.sign(z), z * sp.Abs(z)):
        step = theory.optimal_step(g)
        assert sp.simplify(sp.limit(step, n, sp.oo) - 1) == 0  # infinitely many examples: the least-squares step, η = b/b


def test_the_linear_stationary_point_is_the_papers_preconditioner():
    direct = theory.direct_moments(z, 2, diagonal_sigma=True)
    G = theory.stationary_gamma(direct["M"], direct["B"], direct["Sigma"])
    assert (G - theory.preconditioner(direct["Sigma"])).applyfunc(sp.simplify) == sp.zeros(2, 2)


@given(st.integers(1, 4), st.integers(1, 40), st.sampled_from(["z", "z**3", "sign(z)", "z*Abs(z)"]),
       st.sampled_from([0.0, 0.5, 2.0]))
def test_gamma_star_is_the_minimiser_of_the_compiled_loss(d, n, target, noise):
    g = theory.parse_target(target)
    Gs = theory.gamma_star(g, np.eye(d), n, noise)
    Ls = theory.min_loss(g, np.eye(d), n, noise)
    rng = np.random.default_rng(d * 100 + n)
    for _ in range(5):
        D = rng.standard_normal((d, d)) * 1e-3
        assert theory.loss(g, Gs + D, np.eye(d), n, noise) >= Ls - 1e-12 * max(1.0, abs(Ls))
    assert np.allclose(Gs, Gs[0, 0] * np.eye(d))


def test_a_target_that_is_not_an_expression_in_z_is_refused():
    for text in ("x**3", "z +", "lambda: 1"):
        with pytest.raises(theory.TargetError):
            theory.parse_target(text)
