"""The derivations: Wick's trace moments against known forms and a simulation, the best steps, one
layer's optimum."""
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

import mmicl
from mmicl_acds import theory

n, d = theory.n_sym, theory.d_sym


def test_the_first_trace_moments_are_the_wishart_ones():
    """E tr W = nd, E tr W² = nd(n + d + 1), E tr W³ = nd(n² + d² + 3nd + 3n + 3d + 4) for W = XXᵀ."""
    assert sp.expand(theory.trace_moment(1) - n * d) == 0
    assert sp.expand(theory.trace_moment(2) - n * d * (n + d + 1)) == 0
    assert sp.expand(theory.trace_moment(3) - n * d * (n**2 + d**2 + 3 * n * d + 3 * n + 3 * d + 4)) == 0


def test_a_trace_moment_is_symmetric_in_n_and_d():
    """tr (XXᵀ)^k = tr (XᵀX)^k: swapping the roles of rows and columns leaves every moment unchanged."""
    for k in range(1, 6):
        m = theory.trace_moment(k)
        assert sp.expand(m - m.subs({n: d, d: n}, simultaneous=True)) == 0


@pytest.mark.parametrize("k", [2, 4, 5])
def test_a_trace_moment_against_a_simulation(k):
    """E tr S^k at n = 7, d = 3 from 200 000 sampled contexts, within 5 standard errors (the examples
    are fixed; a false alarm would be one in 1.7 million)."""
    rng = np.random.default_rng(k)
    xi = rng.standard_normal((200_000, 7, 3))
    lam = np.linalg.eigvalsh(np.einsum("mnd,mne->mde", xi, xi) / 7)
    est = mmicl.Estimate.of((lam**k).sum(1))
    exact = float(theory.trace_moments(k)[k].subs({n: 7, d: 3}))
    assert abs(est.mean - exact) <= 5 * est.se


def test_the_best_single_step_is_n_over_n_plus_d_plus_1():
    m = theory.trace_moments(2)
    assert sp.simplify(m[1] / m[2] - n / (n + d + 1)) == 0
    best = theory.best_steps(1, 20, 5)
    assert best["steps"][0] == pytest.approx(20 / 26, rel=1e-12)


@settings(max_examples=6, derandomize=True)
@given(st.integers(1, 3), st.integers(1, 30), st.integers(1, 6))
def test_the_best_steps_are_real_and_minimise_the_exact_loss(L, nn, dd):
    best = theory.best_steps(L, nn, dd)
    assert best["roots_imag"] <= 1e-9 * max(1.0, max(abs(a) for a in best["steps"]))
    assert theory.pgd_loss(best["steps"], nn, dd) == pytest.approx(float(best["loss"]), rel=1e-9, abs=1e-12)
    assert 0 <= float(best["loss"]) < dd  # below the zero predictor's loss E y² = d
    rng = np.random.default_rng(L * 1000 + nn * 10 + dd)
    for _ in range(4):
        moved = [a * (1 + 0.05 * rng.standard_normal()) for a in best["steps"]]
        assert theory.pgd_loss(moved, nn, dd) >= float(best["loss"]) * (1 - 1e-12)


def test_one_layer_optimum_solved_over_all_matrices_is_the_closed_form():
    G = theory.one_layer_optimum(2)
    want = theory.one_layer_closed_form(theory.one_layer_moments(2)["Sigma"])
    assert (G - want).applyfunc(sp.simplify) == sp.zeros(2, 2)


def test_bad_orders_are_refused():
    with pytest.raises(ValueError, match="0 … 8"):
        theory.trace_moment(9)
    with pytest.raises(ValueError, match="from 1 to 4"):
        theory.best_steps(5, 10, 2)
