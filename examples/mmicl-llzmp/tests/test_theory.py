"""The Marchenko–Pastur function and the asymptotic error: the derivation, its stable evaluation,
and the ridge formula against the ridgeless closed forms."""
import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings, strategies as st

from mmicl_llzmp import theory


@settings(max_examples=25, derandomize=True)
@given(st.floats(1e-8, 1e3), st.floats(0.05, 50))
def test_the_stable_evaluation_is_the_derived_root(x, kappa):
    """M_κ(x) solves its quadratic to rounding and agrees with SymPy's root (at 50 digits) wherever the
    closed form itself is accurate."""
    m = theory.M(x, kappa)
    assert m > 0
    q = (x / kappa) * m * m + (x + 1 - 1 / kappa) * m - 1
    assert abs(q) <= 1e-12 * max(1.0, (x / kappa) * m * m + abs(x + 1 - 1 / kappa) * m + 1)
    root = theory.mp_function()["root"]
    exact = sp.N(root.subs({theory.x_sym: sp.Float(x, 50), theory.kappa_sym: sp.Float(kappa, 50)}), 30)
    assert m == pytest.approx(float(exact), rel=1e-10)


@settings(max_examples=20, derandomize=True)
@given(st.floats(1e-4, 100), st.floats(0.1, 20))
def test_the_derivative_is_the_slope(x, kappa):
    h = 1e-6 * max(x, 1e-3)
    fd = (theory.M(x + h, kappa) - theory.M(x - h, kappa)) / (2 * h) if x > h else None
    if fd is not None:
        assert theory.dM(x, kappa) == pytest.approx(fd, rel=1e-5)
    assert theory.dM(x, kappa) < 0


def test_infinite_diversity_is_the_limit():
    assert sp.simplify(theory.mp_function()["kappa_infinite"] - 1 / (theory.x_sym + 1)) == 0
    assert theory.M(0.3, 1e9) == pytest.approx(theory.M(0.3, math.inf), rel=1e-8)


@settings(max_examples=25, derandomize=True)
@given(st.floats(0.5, 50), st.sampled_from([0.3, 0.8, 1.5, 4.0, math.inf]), st.floats(0.1, 5).filter(lambda t: abs(t - 1) > 0.05),
       st.floats(0.0, 1.0))
def test_the_ridge_formula_tends_to_the_ridgeless_closed_forms(alpha, kappa, tau, rho):
    closed = theory.ridgeless(alpha, kappa, tau, rho)
    assert theory.e_icl(alpha, kappa, tau, rho, 1e-12) == pytest.approx(closed, rel=1e-6, abs=1e-9)


def test_a_ridge_caps_the_peak_and_the_null_predictor_bounds_a_strong_ridge():
    """λ → ∞ shrinks Γ to 0, whose error is 1 + ρ; the ridgeless error at τ → 1 grows without bound."""
    assert theory.e_icl(10, 0.5, 2, 0.01, 1e6) == pytest.approx(1.01, rel=1e-4)
    assert theory.ridgeless(10, 0.5, 1.001, 0.01) > 100 * theory.ridgeless(10, 0.5, 2, 0.01)
    with pytest.raises(ValueError, match="diverges"):
        theory.ridgeless(10, 0.5, 1.0, 0.01)
