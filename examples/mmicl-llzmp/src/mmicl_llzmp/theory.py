r"""The asymptotic ICL error of linear attention in the proportional limit, after Lu, Letey,
Zavatone-Veth, Maiti & Pehlevan (arXiv:2405.11751).

**Model.** Tokens x ~ N(0, I_d/d); tasks β with E ββᵀ = I_d, k = κd of them in pretraining; labels
y = βᵀx + ε, ε ~ N(0, ρ); contexts of ℓ = αd examples; n = τd² pretraining sequences.  Linear
attention reduces to ŷ = ⟨Γ, H_Z⟩ with H_Z = x_q·[(d/ℓ)Σ y_i x_iᵀ, (1/ℓ)Σ y_i²] (a d × (d+1)
matrix), and Γ is fitted by ridge regression with penalty (n/d)λ‖Γ‖²_F.  e^ICL is the test error
E(y_q − ŷ)² on a fresh task (the noise ρ included; Γ = 0 scores 1 + ρ).

**The Marchenko–Pastur function.** M_κ(x) = lim (1/d) tr(BᵀB/k + xI)⁻¹ for a k × d Gaussian B is the
positive root of (x/κ)M² + (x + 1 − 1/κ)M − 1 = 0; ``mp_function`` solves that quadratic with SymPy
and keeps the root that is positive for x > 0; κ = ∞ is its limit 1/(1 + x).

**The error** (as the paper's authors compute it; the paper's own text could not be read here).
With x* = (1 + ρ)/α, ε ≥ 0 solves F(ε) = 1 − τ + τλ/ε − ε M_κ(ε + x*) = 0 (F falls strictly, so the
root is unique; ε = 0 when λ = 0 and τ > 1); with ν = x* + ε, M = M_κ(ν), M' = M_κ'(ν),

    c = [ρ + ν − ν²M − ε(1 − 2νM − ν²M')] / [1 − 2εM − ε²M' − τ],
    e^ICL = (1 + x*)[1 − 2νM − ν²M' − c(M + εM')] − 2(1 − νM) + 1 + ρ.

``ridgeless`` gives the λ → 0 limit in closed form on each side of τ = 1 (a second route:
μ* = x* M_{κ/τ}(x*) for τ < 1; m* = M_κ(x*) for τ > 1); both diverge at τ = 1, the interpolation
threshold n = d² (the double descent).
"""
from __future__ import annotations

import math
from functools import lru_cache

import sympy as sp
from scipy.optimize import brentq

__all__ = ["x_sym", "kappa_sym", "M_sym", "mp_function", "M", "dM", "e_icl", "ridgeless", "epsilon"]

x_sym, kappa_sym, M_sym = sp.symbols("x kappa M", positive=True)


@lru_cache(maxsize=None)
def mp_function() -> dict:
    """M_κ(x) derived with SymPy: the quadratic q(M) = (x/κ)M² + (x + 1 − 1/κ)M − 1, its root that is
    positive for x > 0, and dM/dx by implicit differentiation, −(∂q/∂x)/(∂q/∂M), as expressions in
    x, κ and M (evaluated at the root, so that no cancellation of the closed form enters)."""
    quad = (x_sym / kappa_sym) * M_sym**2 + (x_sym + 1 - 1 / kappa_sym) * M_sym - 1
    roots = sp.solve(quad, M_sym)
    positive = [r for r in roots if float(r.subs({x_sym: 1, kappa_sym: 2})) > 0]
    if len(positive) != 1:
        raise ArithmeticError(f"the quadratic of M_κ has {len(positive)} positive roots at x = 1, κ = 2")
    slope = sp.simplify(-sp.diff(quad, x_sym) / sp.diff(quad, M_sym))
    return {"quadratic": quad, "root": sp.simplify(positive[0]), "slope": slope,
            "kappa_infinite": sp.solve(sp.limit(quad, kappa_sym, sp.oo), M_sym)[0]}


@lru_cache(maxsize=None)
def _slope():
    return sp.lambdify((x_sym, kappa_sym, M_sym), mp_function()["slope"], "math")


def M(x: float, kappa: float) -> float:
    """M_κ(x) for x > 0 (κ = inf: 1/(1 + x)): the positive root of (x/κ)M² + bM − 1, b = x + 1 − 1/κ,
    as 2/(b + √(b² + 4x/κ)) for b ≥ 0 and (√(b² + 4x/κ) − b)/(2x/κ) for b < 0 (the same root, each
    form free of cancellation where it is used)."""
    x = float(x)
    if math.isinf(kappa):
        return 1.0 / (1.0 + x)
    a, b = x / kappa, x + 1 - 1 / kappa
    root = math.sqrt(b * b + 4 * a)
    return 2.0 / (b + root) if b >= 0 else (root - b) / (2 * a)


def dM(x: float, kappa: float) -> float:
    """dM_κ/dx (``mp_function``'s implicit derivative at the root)."""
    if math.isinf(kappa):
        return -1.0 / (1.0 + x) ** 2
    return float(_slope()(float(x), float(kappa), M(x, kappa)))


def epsilon(alpha: float, kappa: float, tau: float, rho: float, lam: float) -> float:
    """The root ε ≥ 0 of F(ε) = 1 − τ + τλ/ε − εM_κ(ε + x*) (bracketed: F falls strictly)."""
    xs = (1 + rho) / alpha
    F = lambda e: 1 - tau + tau * lam / e - e * M(e + xs, kappa)  # noqa: E731
    if lam == 0:
        if tau >= 1:
            return 0.0
        lo = 1e-300
    else:
        lo = min(tau * lam / (1 + tau), 1e-3) * 1e-6
    hi = 1.0
    while F(hi) > 0:
        hi *= 2
        if hi > 1e12:
            raise ArithmeticError("no root of F below 1e12")
    return brentq(F, lo, hi, xtol=1e-300, rtol=1e-15, maxiter=500)


def e_icl(alpha: float, kappa: float, tau: float, rho: float, lam: float) -> float:
    """e^ICL(τ, α, κ, ρ, λ) (module docstring); κ = inf allowed."""
    xs = (1 + rho) / alpha
    eps = epsilon(alpha, kappa, tau, rho, lam)
    nu = xs + eps
    m, dm = M(nu, kappa), dM(nu, kappa)
    c = (rho + nu - nu**2 * m - eps * (1 - 2 * nu * m - nu**2 * dm)) / (1 - 2 * eps * m - eps**2 * dm - tau)
    return (1 + xs) * (1 - 2 * nu * m - nu**2 * dm - c * (m + eps * dm)) - 2 * (1 - nu * m) + 1 + rho


def ridgeless(alpha: float, kappa: float, tau: float, rho: float) -> float:
    """The λ → 0 limit of e^ICL in closed form, τ ≠ 1."""
    xs = (1 + rho) / alpha
    if tau < 1:
        mu = xs * M(xs, kappa / tau)
        return tau * (1 + xs) / (1 - tau) * (1 - tau * (1 - mu) ** 2 - (xs - rho) / xs * mu) - 2 * tau * (1 - mu) + 1 + rho
    if tau > 1:
        m = M(xs, kappa)
        k = 1.0 if math.isinf(kappa) else 1.0 / (1 - kappa * (m / (kappa + m)) ** 2)
        return ((k - 1 / (tau - 1)) * (1 + xs) * (xs * m) ** 2 + (3 - 2 * tau) / (tau - 1) * m * xs**2
                + ((1 + rho) * m / (tau - 1) + 1) * xs + rho * m / (tau - 1) + rho)
    raise ValueError("the ridgeless error diverges at τ = 1")
