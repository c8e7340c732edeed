"""Depth T → ∞ of the one-parameter LCA: how α_T approaches α*, derived by endpoint analysis.

The one-parameter excess per prompt is ``ζ² A(s) r^{2T}`` with ``r = α(1+s) − 1`` (``theory.lca``),
so the stationarity condition of the depth-T loss is

    G_T(α) = E[w(s) r(s)^n] = 0,     n = 2T − 1,

where ``w = (∂_α excess)/(2T ζ² r^{2T−1}) = A(s)(1+s)`` — derived below (``stationarity_weight``),
and it is ``s``.  For large n only the two ends of the support count (|r| is largest there, with
opposite signs).  Near an end at distance u the weight of the law is

    w(s) f(s) ds = u^{b−1} (C₀ + C₁ u + O(u²)) du          (a density that behaves like a power), or
    an atom of weight C₀ = s_e·P(s = s_e)                     (written b = 0, C₁ = 0),

and r is *linear* in s, so each end's integral is a Beta function, exactly:

    ∫₀ u^{b+k−1} (r_e − α u)^n du = (r_e/α)^{b+k} r_e^n B(b + k, n + 1)   (up to exponentially small
    tails).

Writing ``α = α*(1 + ε)`` with ``α* = 2/(λ_lo + λ_hi)``, ``λ = 1 + s`` and ``ρ = (λ_hi − λ_lo)/(λ_hi + λ_lo)``
gives ``r_hi = ρ + ε(1 + ρ)`` and ``|r_lo| = ρ − ε(1 − ρ)``; the balance of the two ends, taken in
logarithms and expanded in x = 1/n, is solved order by order:

- equal exponents b_lo = b_hi = b (atoms at both ends, or e.g. a density finite and non-zero at
  both ends):  ``ε = e₁/n + e₂/n² + O(n⁻³)``  (``equal_exponent_expansion``);
- different exponents:  ``ε = (e₁ + f₁ log n)/n + o(1/n)``, with ``f₁ = ρ(b_hi − b_lo)/2``
  (``unequal_exponent_expansion``): a logarithm enters the leading term.

The excess at α_T then falls like ``ρ^{2T} (2T)^{−p}`` with ``p = (b_hi(1 − ρ) + b_lo(1 + ρ))/2``
(``excess_leading``).  Nothing here is typed in by hand beyond the model's definition: the weight
comes from ``theory.lca.one_parameter``, the expansions from SymPy series of the balance.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from . import lca as th
from .model import s

__all__ = [
    "rho", "alpha_star", "b", "b_lo", "b_hi", "C0_lo", "C1_lo", "C0_hi", "C1_hi", "K_lo", "K_hi", "lam_lo",
    "lam_hi", "depth_n", "stationarity_weight", "endpoint_integral", "EqualExpansion", "equal_exponent_expansion",
    "UnequalExpansion", "unequal_exponent_expansion", "ExcessLeading", "excess_leading", "LocalWeight",
    "beta_local_weight",
]

rho, alpha_star = sp.symbols("rho alpha_star", positive=True)
b, b_lo, b_hi = sp.symbols("b b_lo b_hi", nonnegative=True)
C0_lo, C1_lo, C0_hi, C1_hi = sp.symbols("C0_lo C1_lo C0_hi C1_hi", real=True)
K_lo, K_hi = sp.symbols("K_lo K_hi", positive=True)
lam_lo, lam_hi = sp.symbols("lambda_lo lambda_hi", positive=True)
depth_n = sp.Symbol("n", positive=True)          # n = 2T − 1, the power of r in the stationarity condition
_x = sp.Symbol("x", positive=True)               # 1/n
_eps, _e1, _e2, _f1 = sp.symbols("epsilon e1 e2 f1", real=True)
_u = sp.Symbol("u", positive=True)


@lru_cache(maxsize=None)
def stationarity_weight() -> sp.Expr:
    """``w(s)`` with ``∂_α (excess/ζ²) = 2T · w(s) · r^{2T−1}``, from the derived one-parameter excess."""
    e = th.one_parameter().excess_per_zeta2
    (base,) = {p.base for p in e.atoms(sp.Pow) if p.exp == 2 * th.T}
    amp = th.depth_factorisation(sp.diff(e, th.alpha), base, 2 * th.T - 1)
    return sp.simplify(amp / (2 * th.T))


def endpoint_integral(bb: sp.Expr, k: int, r_end: sp.Expr, alpha: sp.Expr, n: sp.Expr) -> sp.Expr:
    """``∫₀^∞ u^{bb+k−1} (r_end − α u)₊^n du = (r_end/α)^{bb+k} r_end^n B(bb + k, n + 1)``."""
    return (r_end / alpha) ** (bb + k) * r_end**n * sp.beta(bb + k, n + 1)


def _ends(eps: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(α, r_hi, |r_lo|) at ``α = α*(1 + ε)``, from ``α*λ_hi = 1 + ρ`` and ``α*λ_lo = 1 − ρ``."""
    a = alpha_star * (1 + eps)
    lh, ll = (1 + rho) / alpha_star, (1 - rho) / alpha_star
    return a, sp.expand(a * lh - 1), sp.expand(1 - a * ll)


@dataclass(frozen=True)
class EqualExpansion:
    """``α_T = α*(1 + e1/n + e2/n² + O(n⁻³))``, n = 2T − 1, when both ends have the exponent b."""

    e1: sp.Expr
    e2: sp.Expr
    balance: sp.Expr
    """the log-balance whose expansion gave e1, e2 (a function of ε and n)"""


@lru_cache(maxsize=None)
def equal_exponent_expansion() -> EqualExpansion:
    """Solve ``log I_hi − log |I_lo| = 0`` order by order in 1/n, with each end's integral
    ``C₀·(first Beta term) + C₁·(second)`` (``endpoint_integral``) and the same exponent b."""
    a, rh, rl = _ends(_eps)
    n = depth_n
    # log of each end's integral, with the common factor B(b, n+1) divided out exactly:
    # B(b+1, n+1)/B(b, n+1) = b/(n + b + 1)
    ratio = b / (n + b + 1)
    log_hi = b * sp.log(rh / a) + n * sp.log(rh) + sp.log(C0_hi + C1_hi * (rh / a) * ratio)
    log_lo = b * sp.log(rl / a) + n * sp.log(rl) + sp.log(C0_lo + C1_lo * (rl / a) * ratio)
    balance = log_hi - log_lo
    # ε = e1 x + e2 x², n = 1/x; the balance is O(1) in x
    expr = balance.subs(_eps, _e1 * _x + _e2 * _x**2).subs(n, 1 / _x)
    ser = sp.series(expr, _x, 0, 2).removeO()
    c0 = sp.simplify(ser.coeff(_x, 0))
    c1 = sp.simplify(ser.coeff(_x, 1))
    (e1,) = sp.solve(c0, _e1)
    (e2,) = sp.solve(c1.subs(_e1, e1), _e2)
    return EqualExpansion(sp.simplify(e1), sp.simplify(e2), balance)


@dataclass(frozen=True)
class UnequalExpansion:
    """``α_T = α*(1 + (e1 + f1·log n)/n + o(1/n))`` when the ends' exponents differ."""

    e1: sp.Expr
    f1: sp.Expr


@lru_cache(maxsize=None)
def unequal_exponent_expansion() -> UnequalExpansion:
    """Leading order of the balance with ``I_e ≈ K_e (r_e/α)^{b_e} r_e^n n^{−b_e}`` (``K = C₀Γ(b)``
    for a power end, ``K = C₀`` for an atom, where the Beta factor is absent): with
    ``nε = e1 + f1 log n`` the O(1) part of the log-balance fixes e1 and the O(log n) part f1."""
    L = sp.Symbol("L", positive=True)               # log n, treated as an independent large symbol
    nu = sp.Symbol("nu", real=True)                 # nε, O(log n)
    # n log(r_hi/|r_lo|) = 2 nε/ρ + O(ε² n); r_e/α → ρ/α*
    balance = 2 * nu / rho + (b_hi - b_lo) * (sp.log(rho / alpha_star) - L) + sp.log(K_hi / K_lo)
    sol = sp.solve(balance, nu)[0]
    sol = sp.expand(sol)
    return UnequalExpansion(e1=sp.simplify(sol.coeff(L, 0)), f1=sp.simplify(sol.coeff(L, 1)))


@dataclass(frozen=True)
class ExcessLeading:
    """``excess(α_T) ≈ E[ζ²]·ρ^{2T}·(2T)^{−power}·prefactor``: the rate per layer is ``ρ²``."""

    rate_per_layer: sp.Expr
    power: sp.Expr
    prefactor: sp.Expr


@lru_cache(maxsize=None)
def excess_leading() -> ExcessLeading:
    """Each end contributes ``(K_e/λ_e)(r_e/α)^{b_e} r_e^{2T} (2T)^{−b_e}`` to ``E[A r^{2T}]``
    (A = w/λ), and ``r_e^{2T} = ρ^{2T} exp(±(1 ± ρ)·2Tε/ρ)·(1 + o(1))`` with
    ``2Tε → e1 + f1 log(2T)`` (``unequal_exponent_expansion``; f1 = 0 for equal exponents)."""
    un = unequal_exponent_expansion()
    L = sp.Symbol("L", positive=True)   # log(2T)
    nu = un.e1 + un.f1 * L
    power = sp.simplify((b_hi * (1 - rho) + b_lo * (1 + rho)) / 2)
    # each end's power of 2T: −b_e plus what exp(±(1 ± ρ)·f1·log(2T)/ρ) adds; both must be −power
    for be, sign in ((b_hi, 1 + rho), (b_lo, -(1 - rho))):
        if sp.simplify(-be + un.f1 * sign / rho + power) != 0:
            raise RuntimeError("the two ends' powers of T differ: the excess expansion is inconsistent")
    hi = K_hi / lam_hi * (rho / alpha_star) ** b_hi * sp.exp(un.e1 * (1 + rho) / rho)
    lo = K_lo / lam_lo * (rho / alpha_star) ** b_lo * sp.exp(-un.e1 * (1 - rho) / rho)
    pref = hi + lo
    del nu, L
    return ExcessLeading(rate_per_layer=rho**2, power=power, prefactor=pref)


@dataclass(frozen=True)
class LocalWeight:
    """``w(s)f(s) = u^{b−1}(C0 + C1 u + …)`` at one end of a Beta law (u: distance to the end)."""

    b: sp.Expr
    C0: sp.Expr
    C1: sp.Expr


def beta_local_weight(p: sp.Expr, q: sp.Expr, a: sp.Expr, bb: sp.Expr, end: str) -> LocalWeight:
    """The local form of ``w(s) f(s)`` for ``s = a + (bb − a)·Beta(p, q)`` at ``end`` ("lo" or "hi"),
    with ``w`` from ``stationarity_weight``: the power of u is ``p − 1`` (resp. ``q − 1``), raised by
    one when the weight vanishes at the end (s = 0 there)."""
    w = stationarity_weight()
    width = bb - a
    norm = sp.beta(p, q) * width ** (p + q - 1)
    if end == "lo":
        power, rest = p - 1, w.subs(s, a + _u) * (width - _u) ** (q - 1) / norm
    elif end == "hi":
        power, rest = q - 1, w.subs(s, bb - _u) * (width - _u) ** (p - 1) / norm
    else:
        raise ValueError(f"end must be 'lo' or 'hi', got {end!r}")
    c = [sp.simplify(sp.diff(rest, _u, k).subs(_u, 0) / sp.factorial(k)) for k in range(3)]
    if c[0] == 0:                      # the weight vanishes at the end: one more power of u
        return LocalWeight(power + 2, c[1], c[2])
    return LocalWeight(power + 1, c[0], c[1])
