"""The symbolic derivation (theory) and the compiled loss."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given

from mmicl_zfb import numerics as nm
from mmicl_zfb import theory
from strategies import spd_cases

EPS = np.finfo(float).eps


@pytest.mark.parametrize("d, diagonal", [(1, False), (2, False), (3, True)])
def test_sample_covariance_identity_is_derived(d, diagonal):
    """E[S A S] from the MGF moments equals ΛAΛ + (ΛAᵀΛ + tr(AΛ)Λ)/N, symbolic Λ, A, N."""
    assert theory.check_sample_cov_identity(d, diagonal)


def test_gaussian_moments_from_the_mgf():
    """The fourth and sixth moments come out of the MGF as Isserlis' pairings (1-D: 3λ², 15λ³)."""
    lam = sp.Symbol("lam", positive=True)
    assert theory.gaussian_moment((4,), sp.Matrix([[lam]])) == 3 * lam**2
    assert theory.gaussian_moment((6,), sp.Matrix([[lam]])) == 15 * lam**3
    assert theory.gaussian_moment((3,), sp.Matrix([[lam]])) == 0


@pytest.mark.parametrize("d, diagonal", [(1, False), (2, False), (3, True)])
def test_staged_expectation_equals_the_matrix_form(d, diagonal):
    assert theory.check_loss_form(d, diagonal)


@pytest.mark.parametrize("d, diagonal", [(1, False), (2, False), (3, True)])
def test_stationary_point_is_the_papers_gamma_star(d, diagonal):
    """Solving ∇L = 0 symbolically reproduces Γ* = ((1 + 1/N)Λ + tr(Λ)/N I)⁻¹ and L*."""
    out = theory.check_minimiser(d, diagonal)
    assert out["gamma_star_equal"] and out["min_loss_equal"]


def test_quick_case_numbers():
    """Λ = diag(1, 2, 4), N = 5: Γ* = diag(5/13, 5/19, 5/31), L* = ½Σλ(λ + 7)/(6λ + 7)."""
    Lam, N = np.diag([1.0, 2.0, 4.0]), 5
    np.testing.assert_allclose(theory.gamma_star(Lam, N), np.diag([5 / 13, 5 / 19, 5 / 31]), rtol=1e-14)
    want = 0.5 * sum(l * (l + 7) / (6 * l + 7) for l in (1.0, 2.0, 4.0))
    assert theory.min_loss(Lam, N) == pytest.approx(want, rel=1e-14)


def test_derived_loss_against_a_direct_simulation():
    """The compiled loss at a random Γ against the mean of ½(ŷ − y_q)² over M = 200 000 sampled
    prompts (Λ = diag(1, 2, 4), N = 5): within 4 standard errors (false alarm 6e-5)."""
    rng = np.random.default_rng(11)
    Lam, N = np.diag([1.0, 2.0, 4.0]), 5
    G = 0.2 * rng.standard_normal((3, 3))
    m, se = nm.mc_loss(G, Lam, N, 200_000, rng)
    assert abs(m - theory.loss(G, Lam, N)) <= 4 * se
    # and it separates: the loss at Γ* (1.49) is far from that at G
    assert abs(theory.min_loss(Lam, N) - m) > 20 * se


@given(spd_cases())
def test_gamma_star_is_stationary_and_minimal(case):
    """Γ* is a stationary point of the compiled loss, and the loss at random perturbations Γ* + Δ
    exceeds L* by ½tr(ΔᵀΛΔM) ≥ ½μ‖Δ‖² (μ the strong-convexity constant)."""
    Lam, N, seed = case
    Gs, Ls = theory.gamma_star(Lam, N), theory.min_loss(Lam, N)
    scale = np.linalg.norm(Lam) ** 2 * (np.linalg.norm(Gs) + 1)
    assert np.linalg.norm(theory.grad(Gs, Lam, N)) <= 1e3 * EPS * scale
    mu = theory.strong_convexity(Lam, N)
    rng = np.random.default_rng(seed)
    M = Lam @ np.linalg.inv(Gs)
    for _ in range(5):
        D = rng.standard_normal(Lam.shape) * np.linalg.norm(Gs) * 0.1
        up = theory.loss(Gs + D, Lam, N) - Ls
        slack = 1e3 * EPS * np.trace(Lam)
        assert up == pytest.approx(0.5 * np.trace(D.T @ Lam @ D @ M), rel=1e-8, abs=slack)
        assert up >= 0.5 * mu * np.linalg.norm(D) ** 2 * (1 - 1e-9) - slack


@given(spd_cases())
def test_minimal_loss_between_zero_and_trace(case):
    """0 < L* < L(0) = tr(Λ)/2 ≤ tr(Λ)."""
    Lam, N, _ = case
    Ls = theory.min_loss(Lam, N)
    assert 0 < Ls < np.trace(Lam) / 2 <= np.trace(Lam)
    assert theory.loss(np.zeros_like(Lam), Lam, N) == pytest.approx(np.trace(Lam) / 2, rel=1e-14)
