"""Depth T → ∞ of the one-parameter LCA: how α_T approaches α*, derived by endpoint analysis.

The one-parameter excess per prompt is ``ζ² A(s) r^{2T}`` with ``r = α(1+s) − 1`` (``theory.lca``),
so the stationarity condition of the depth-T loss is

    G_T(α) = E[w(s) r(s)^n] = 0,     n = 2T − 1,

where ``w = (∂_α excess)/(2T ζ² r^{2T−1}) = A(s)(1+s)`` — derived below (``stationarity_weight``),
and it is ``s``.  For large n only the two ends of the support count (|r| is largest there, with
opposite signs).  Near an end at distance u the weight of the law is

    w(s) f(s) ds = u^{b−1} (C₀ + C₁ u + O(u²)) du          (a density that behaves like a power), or
    an atom of weight C₀ = s_e·P(s = s_e)                     (written b = 0),

where C₁ gathers everything of the next power u^b: the density's own next term and, at an atom or
a density end, the pieces of the law whose exponent is one more (``local_rules`` derives the local
forms of Beta densities, of sums and of the weight times a density),

and r is *linear* in s, so each end's integral is a Beta function, exactly:

    ∫₀ u^{b+k−1} (r_e − α u)^n du = (r_e/α)^{b+k} r_e^n B(b + k, n + 1)   (up to exponentially small
    tails).

Writing ``α = α*(1 + ε)`` with ``α* = 2/(λ_lo + λ_hi)``, ``λ = 1 + s`` and ``ρ = (λ_hi − λ_lo)/(λ_hi + λ_lo)``
gives ``r_hi = ρ + ε(1 + ρ)`` and ``|r_lo| = ρ − ε(1 − ρ)``; the balance of the two ends, taken in
logarithms and expanded in x = 1/n with log n an independent symbol, is solved order by order
(``end_expansion``):

    ε = ν₀/n + ν₁/n² + O(log³n/n³),   ν₀ = e₁ + f₁ log n,   ν₁ quadratic in log n,

with ``f₁ = ρ(b_hi − b_lo)/2``: equal exponents (atoms at both ends, or a density finite and
non-zero at both) give the form e₁/n + e₂/n²; different exponents bring a logarithm into the
leading term and log² n into the second.  The same correction in T, ``α* − α_T = (a log T + c)/T +
(E₂ log²T + E₁ log T + E₀)/T² + …``, follows from n = 2T − 1.

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
    "rho", "alpha_star", "b_lo", "b_hi", "K_lo", "K_hi", "kappa_lo",
    "kappa_hi", "kappa2_lo", "kappa2_hi", "lam_lo", "lam_hi", "log_n", "log_T", "stationarity_weight", "endpoint_integral", "EndExpansion",
    "end_expansion", "ExcessLeading", "excess_leading", "LocalRules", "local_rules",
    "local_p", "local_q", "local_width", "local_a1", "local_a2", "local_c1", "local_c2", "local_d1", "local_d2",
    "local_e1", "local_e2", "local_s_end",
]

rho, alpha_star = sp.symbols("rho alpha_star", positive=True)
b_lo, b_hi = sp.symbols("b_lo b_hi", nonnegative=True)
K_lo, K_hi = sp.symbols("K_lo K_hi", positive=True)
kappa_lo, kappa_hi, kappa2_lo, kappa2_hi = sp.symbols("kappa_lo kappa_hi kappa2_lo kappa2_hi", real=True)
lam_lo, lam_hi = sp.symbols("lambda_lo lambda_hi", positive=True)
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


def _log_gamma_ratio(bb: sp.Expr, x: sp.Symbol, L: sp.Symbol, order: int) -> sp.Expr:
    """``log Γ(n + 1) − log Γ(n + bb + 1)`` expanded at n = 1/x → ∞ to ``x^order`` (Stirling, by
    SymPy's series of log Γ), with log n written as the symbol ``L``."""
    z = sp.Symbol("z", positive=True)
    ser = sp.series(sp.loggamma(1 / z + 1) - sp.loggamma(1 / z + bb + 1), z, 0, order + 1).removeO()
    return sp.expand(ser).subs(sp.log(z), -L).subs(z, x)


def _end_log(sign: int, bb: sp.Expr, K: sp.Expr, kappa: sp.Expr, kappa2: sp.Expr, eps: sp.Expr, x: sp.Symbol,
             L: sp.Symbol) -> sp.Expr:
    """log of one end's integral, the common ``log Γ(n + 1)`` and the sign of r^n left out, at
    ``α = α*(1 + ε)``, n = 1/x; ``sign`` +1 for the top end, −1 for the bottom one.

    With the local weight ``u^{b−1}(C₀ + C₁u + C₂u² + …)`` integrated against (r_e − αu)^n term by term
    (``endpoint_integral``), the end is ``K r_e^n (r_e/α)^b Γ(n+1)/Γ(n+b+1) [1 + κ (r_e/α)/(n+b+1) +
    κ₂ (r_e/α)²/((n+b+1)(n+b+2)) + …]`` with ``K = C₀Γ(b)`` (``C₀`` for an atom, b = 0), ``κ = Γ(b+1)C₁/K``
    and ``κ₂ = Γ(b+2)C₂/K``."""
    a, rh, rl = _ends(eps)
    r = rh if sign > 0 else rl
    n = 1 / x
    q = r / a
    return (sp.log(K) + n * sp.log(r) + bb * sp.log(q) + _log_gamma_ratio(bb, x, L, 2)
            + sp.log(1 + kappa * q / (n + bb + 1) + kappa2 * q**2 / ((n + bb + 1) * (n + bb + 2))))


@dataclass(frozen=True)
class EndExpansion:
    """``α_T = α*(1 + ε)`` with ``ε = ν₀/n + ν₁/n² + ν₂/n³ + O(log⁴n/n⁴)``, n = 2T − 1, ``ν_k`` a
    polynomial of degree k + 1 in ``log n`` (the symbol ``log_n``; of degree 0 when the exponents are
    equal), from the balance of the two ends with exponents ``b_lo``, ``b_hi``, strengths ``K_lo``,
    ``K_hi`` and corrections ``kappa_lo``, ``kappa2_lo``, ``kappa_hi``, ``kappa2_hi`` (``_end_log``);
    and the same correction as a function of T: ``α* − α_T = Σ_k P_k(log T)/T^k``, ``by_T[k − 1]`` the
    coefficients of P_k from the constant up (k = 1, 2, 3)."""

    nu: tuple[sp.Expr, ...]
    by_T: tuple[tuple[sp.Expr, ...], ...]


log_n = sp.Symbol("L", positive=True)
"""log n, n = 2T − 1: the ν_k of ``end_expansion`` are polynomials in it."""
log_T = sp.Symbol("ell", positive=True)
"""log T: the coefficients of ``EndExpansion.by_T`` multiply its powers."""


@lru_cache(maxsize=None)
def end_expansion(order: int = 3) -> EndExpansion:
    """Solve ``log I_hi − log I_lo = 0`` order by order in x = 1/n with ``ε = x(ν₀ + xν₁ + x²ν₂)`` (to
    ``order`` terms, 1 to 3) and log n an independent symbol (it is not analytic in x): the O(1) part
    fixes ν₀ (linear in log n when the exponents differ), the O(x) part ν₁, the O(x²) part ν₂.  Then
    ``α* − α_T = −α*ε`` is re-expanded in 1/T with ``n = 2T − 1``, ``log n = log 2 + log T + log(1 −
    1/(2T))``.  The third order takes a minute of SymPy: ``numerics.asymptotics`` compiles it once
    (``theory.compile``)."""
    if order not in (1, 2, 3):
        raise ValueError(f"order must be 1, 2 or 3, got {order}")
    x, L = sp.Symbol("x", positive=True), log_n
    unknowns = sp.symbols(f"nu0:{order}", real=True)
    eps = x * sum(v * x**k for k, v in enumerate(unknowns))
    balance = (_end_log(1, b_hi, K_hi, kappa_hi, kappa2_hi, eps, x, L)
               - _end_log(-1, b_lo, K_lo, kappa_lo, kappa2_lo, eps, x, L))
    ser = sp.expand(sp.series(balance, x, 0, order).removeO())
    known: dict = {}
    for k, v in enumerate(unknowns):
        (known[v],) = sp.solve(ser.coeff(x, k).subs(known), v)
    nu = tuple(sp.expand(sp.expand_log(known[v], force=True)) for v in unknowns)
    # in T: ν_k(log n) = Σ_j g_kj log^j n, re-expanded with generic g_kj (fast), then the g_kj put back
    tau, ell = sp.Symbol("tau", positive=True), log_T          # 1/T and log T
    g = [[sp.Symbol(f"g{k}_{j}") for j in range(k + 2)] for k in range(order)]
    L_of_T = sp.log(2) + ell + sp.log(1 - tau / 2)
    per_n = tau / (2 - tau)                                    # 1/n with n = 2T − 1
    gap = -alpha_star * sum(sum(c * L_of_T**j for j, c in enumerate(g[k])) * per_n ** (k + 1) for k in range(order))
    series = sp.expand(sp.series(gap, tau, 0, order + 1).removeO())
    values = {g[k][j]: nu[k].coeff(L, j) for k in range(order) for j in range(k + 2)}
    by_T = tuple(tuple(sp.expand(series.coeff(tau, k).coeff(ell, j).subs(values)) for j in range(k + 1))
                 for k in range(1, order + 1))
    return EndExpansion(nu, by_T)


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
    ``2Tε → e1 + f1 log(2T)`` (``ν₀`` of ``end_expansion``: e1 its part free of log n, f1 the
    coefficient of log n; f1 = 0 for equal exponents)."""
    nu0 = end_expansion(1).nu[0]
    e1, f1 = nu0.coeff(log_n, 0), nu0.coeff(log_n, 1)
    power = sp.simplify((b_hi * (1 - rho) + b_lo * (1 + rho)) / 2)
    # each end's power of 2T: −b_e plus what exp(±(1 ± ρ)·f1·log(2T)/ρ) adds; both must be −power
    for be, sign in ((b_hi, 1 + rho), (b_lo, -(1 - rho))):
        if sp.simplify(-be + f1 * sign / rho + power) != 0:
            raise RuntimeError("the two ends' powers of T differ: the excess expansion is inconsistent")
    hi = K_hi / lam_hi * (rho / alpha_star) ** b_hi * sp.exp(e1 * (1 + rho) / rho)
    lo = K_lo / lam_lo * (rho / alpha_star) ** b_lo * sp.exp(-e1 * (1 - rho) / rho)
    pref = hi + lo
    return ExcessLeading(rate_per_layer=rho**2, power=power, prefactor=pref)


# ---- local forms of the pieces a law is built from (every end class) ------------------------------------
@dataclass(frozen=True)
class LocalRules:
    """How the local form ``c·u^{a−1}(1 + d·u + e·u² + …)`` of a density near an end (u: distance to
    it) arises and combines, as formulas in the symbols ``p, q, width, a1, a2, c1, c2, d1, d2, e1, e2,
    s_end``:

    - ``beta_lo`` / ``beta_hi``: (a, c, d, e) of the Beta(p, q) density on an interval of ``width``;
    - ``convolution``: (a, c, d, e) of the density of a sum of two independent parts whose local forms
      are (a1, c1, d1, e1) and (a2, c2, d2, e2) at the ends that meet (∫₀^u f₁(v) f₂(u − v) dv);
    - ``weight_lo`` / ``weight_hi`` / ``weight_zero``: (b, C₀, C₁, C₂) of the stationarity weight times a
      density (a1, c1, d1, e1), ``w(s)f(s) = u^{b−1}(C₀ + C₁u + C₂u² + …)``, at a bottom end s_end > 0, a
      top end, and a bottom end at s = 0 (where w vanishes too)."""

    beta_lo: tuple[sp.Expr, ...]
    beta_hi: tuple[sp.Expr, ...]
    convolution: tuple[sp.Expr, ...]
    weight_lo: tuple[sp.Expr, ...]
    weight_hi: tuple[sp.Expr, ...]
    weight_zero: tuple[sp.Expr, ...]


local_p, local_q, local_width = sp.symbols("p q width", positive=True)
local_a1, local_a2, local_c1, local_c2 = sp.symbols("a1 a2 c1 c2", positive=True)
local_d1, local_d2, local_e1, local_e2, local_s_end = sp.symbols("d1 d2 e1 e2 s_end", real=True)


def _taylor(expr: sp.Expr, terms: int = 3) -> tuple[sp.Expr, ...]:
    """The first ``terms`` Taylor coefficients of ``expr`` in ``_u`` at u = 0."""
    return tuple(sp.simplify(sp.diff(expr, _u, k).subs(_u, 0) / sp.factorial(k)) for k in range(terms))


@lru_cache(maxsize=None)
def local_rules() -> LocalRules:
    """Derive ``LocalRules``: each rule is the Taylor series in u of the exact density (or weight)
    near the end, cut after three terms; the convolution's integrals ∫₀¹ t^{a1−1+i}(1 − t)^{a2−1+j} dt
    are Beta functions."""
    p, q, W = local_p, local_q, local_width
    norm = sp.beta(p, q) * W ** (p + q - 1)
    beta = {}
    for end, (power, other) in (("lo", (p, q)), ("hi", (q, p))):
        c0, c1, c2 = _taylor((W - _u) ** (other - 1) / norm)
        beta[end] = (power, c0, sp.simplify(c1 / c0), sp.simplify(c2 / c0))
    # convolution: u^{a1+a2−1} ∫₀¹ t^{a1−1}(1−t)^{a2−1} c1(1 + d1 ut + e1 u²t²) c2(1 + d2 u(1−t) + e2 u²(1−t)²) dt
    a1, a2, c1, c2 = local_a1, local_a2, local_c1, local_c2
    d1, d2, e1, e2 = local_d1, local_d2, local_e1, local_e2
    t, v = sp.symbols("t v", positive=True)                 # v stands for 1 − t
    inner = _taylor(sp.expand((1 + d1 * _u * t + e1 * (_u * t) ** 2) * (1 + d2 * _u * v + e2 * (_u * v) ** 2)))

    def integrate(poly: sp.Expr) -> sp.Expr:
        """∫₀¹ t^{a1−1} v^{a2−1} · poly(t, v) dt with v = 1 − t: each monomial t^i v^j a Beta function."""
        return sum(coef * sp.beta(a1 + i, a2 + j) for (i, j), coef in sp.Poly(poly, t, v).terms())

    k0, k1, k2 = (integrate(sp.expand(term)) for term in inner)
    conv = (a1 + a2, sp.simplify(c1 * c2 * k0), sp.simplify(sp.expand_func(k1 / k0)),
            sp.simplify(sp.expand_func(k2 / k0)))
    # the weight times a density c1 u^{a1−1}(1 + d1 u + e1 u²)
    w = stationarity_weight()
    dens = c1 * (1 + d1 * _u + e1 * _u**2)
    weights = {}
    for name, at in (("lo", local_s_end + _u), ("hi", local_s_end - _u)):
        weights[name] = (a1, *_taylor(w.subs(s, at) * dens))
    # at s = 0 the weight w(u) = u vanishes too: one more power of u, and the series of w/u
    weights["zero"] = (a1 + 1, *_taylor(sp.cancel(w.subs(s, _u) / _u) * dens))
    return LocalRules(beta["lo"], beta["hi"], conv, weights["lo"], weights["hi"], weights["zero"])
