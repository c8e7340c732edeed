"""The untied one-parameter LCA (an extension beyond arXiv:2602.04872), derived in SymPy.

The paper's reduced model ties the weights of every layer, ``W^S = −W^V = α I``.  Untied, layer t
has its own scalar, ``W^S_t = −W^V_t = α_t I``.  Along an eigen-direction of the context covariance
``C`` with eigenvalue ``ℓ`` (``ℓ = λ = 1 + s`` on span{m} in the large-context limit) the query
column ``F^t_q = F^{t−1}_q + W^S_t x_q + W^V_t C F^{t−1}_q`` scales ``x_q`` by a factor ``p_t`` with

    p_t = (1 + w_V ℓ) p_{t−1} + w_S = (1 − α_t ℓ) p_{t−1} + α_t,      p_0 = 0        (``layer``).

What this module derives from that layer, rather than writes down:

- ``residual_multiplier``: the Bayes residual ``ρ = 1 − λ p`` (0 for the Bayes predictor
  ``p = 1/λ``) obeys ``ρ_t = (1 − α_t λ) ρ_{t−1}`` with ``ρ_0 = 1``, so the depth-T residual is the
  product ``∏_t (1 − α_t λ)``: a polynomial ``q(λ)`` of degree T with ``q(0) = 1``;
- ``excess_amplitude``: the per-prompt excess risk over Bayes is ``ζ² A(s) ρ²`` with
  ``A(s) = s/(1 + s)`` (from ``theory.model.risk_of_coefficient``, whatever the depth);
- ``untied_at_depth(T)``: for symbolic ``α_1 … α_T`` (small T) the whole chain from the layer to
  the excess, with the factorisation ``excess/ζ² = A(s) ∏_t (1 − α_t(1+s))²`` checked by
  expansion; with every ``α_t = α`` it is ``theory.lca.one_parameter()`` at depth T (a test);
- ``rate_exprs``: the per-layer rates of the excess as T → ∞ on a support ``[s_lo, s_hi]``, tied
  (the minimax contraction at ``α* = 2/(2 + s_lo + s_hi)``, squared) and untied (the Green's
  function of the complement of ``[λ_lo, λ_hi]`` evaluated at ``λ = 0``, where every ``q`` has
  ``q(0) = 1``: ``e^{−2 g(0)}``), both in terms of ``κ = (1 + s_hi)/(1 + s_lo)``:
  ``((κ − 1)/(κ + 1))²`` and ``((√κ − 1)/(√κ + 1))²``.

The optimal schedule itself is numerical (``numerics.untied``): minimising ``E[ζ² A(s) q(1+s)²]``
over polynomials with ``q(0) = 1`` is a least-squares problem whose answer is the normalised kernel
polynomial of the measure ``dμ(λ) = E[ζ²] A(s) dP(s)`` at 0; its roots, hence the ``1/α_t``, are the
Gauss nodes of ``λ dμ(λ)``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import sympy as sp

from .lca import alpha, alpha_star_expr
from .model import bayes_predictor, lam, risk_of_coefficient, s, zeta

__all__ = [
    "UntiedLCA",
    "eigenvalue",
    "excess_amplitude",
    "is_zero",
    "layer",
    "layer_map",
    "rate_exprs",
    "residual_multiplier",
    "schedule_symbols",
    "untied_at_depth",
    "untied_layer",
]

eigenvalue = sp.Symbol("ell", positive=True)  # an eigenvalue ℓ of the context covariance C
_p, _rho = sp.symbols("p rho", real=True)  # the query factor before a layer; the Bayes residual
_T_MAX_SYMBOLIC = 4  # the expansion grows like 3^T terms (1 s at T = 4, 25 s at T = 6)


def layer(p: sp.Expr, w_skip: sp.Expr, w_value: sp.Expr, ell: sp.Expr = lam) -> sp.Expr:
    """One LCA layer on the query factor along an eigen-direction of ``C`` with eigenvalue ``ℓ``:
    ``F ← F + W^S x_q + W^V C F`` with ``W^S = w_S I``, ``W^V = w_V I``, ``F = p·x_q`` gives
    ``p ↦ (1 + w_V ℓ) p + w_S`` (the recurrence that ``theory.lca`` solves for tied weights)."""
    return (1 + w_value * ell) * p + w_skip


def untied_layer(p: sp.Expr, a: sp.Expr, ell: sp.Expr = lam) -> sp.Expr:
    """Layer t of the untied one-parameter model: ``W^S_t = −W^V_t = α_t I``."""
    return layer(p, a, -a, ell)


def layer_map() -> tuple[sp.Expr, tuple[sp.Symbol, sp.Symbol, sp.Symbol]]:
    """``(expr, (p, α, ℓ))``: one untied layer on the query factor ``p`` along an eigen-direction
    of ``C`` with eigenvalue ``ℓ``, as an expression in three symbols (what the torch model of
    ``numerics.models`` compiles)."""
    return untied_layer(_p, alpha, eigenvalue), (_p, alpha, eigenvalue)


def schedule_symbols(T: int) -> tuple[sp.Symbol, ...]:
    """``(α_1, …, α_T)`` as real SymPy symbols."""
    if T < 1:
        raise ValueError(f"the depth T must be ≥ 1, got {T}")
    return tuple(sp.symbols(f"alpha_1:{T + 1}", real=True))


@cache
def residual_multiplier() -> sp.Expr:
    """``m(α, s)`` with ``ρ_t = m ρ_{t−1}`` for the Bayes residual ``ρ = 1 − λ p``: one untied layer
    rewritten in ``ρ`` (``p = (1 − ρ)/λ``).  Derived, then checked to be linear in ``ρ`` (so the
    depth-T residual is the product of the layers' multipliers, from ``ρ_0 = 1 − λ·0 = 1``)."""
    after = sp.expand(1 - lam * untied_layer((1 - _rho) / lam, alpha))
    if sp.simplify(after.subs(_rho, 0)) != 0:
        raise RuntimeError(f"the Bayes predictor is not a fixed point of the untied layer: {after}")
    mult = sp.factor(sp.simplify(after / _rho))
    if mult.has(_rho):
        raise RuntimeError(f"the untied layer is not linear in the Bayes residual: {after}")
    return mult


@cache
def excess_amplitude() -> sp.Expr:
    """``A(s)`` with per-prompt ``excess/ζ² = A(s) ρ²``: the risk of ``ŷ = ζ √s p a`` with
    ``p = (1 − ρ)/λ``, minus the Bayes risk, divided by ``ζ² ρ²`` (checked free of ``ρ`` and ζ)."""
    c = sp.Symbol("c", real=True)
    coefficient = zeta * sp.sqrt(s) * (1 - _rho) / lam
    excess = sp.simplify(risk_of_coefficient(c).subs(c, coefficient) - bayes_predictor().risk)
    amp = sp.factor(sp.simplify(excess / (zeta**2 * _rho**2)))
    if amp.has(_rho) or amp.has(zeta):
        raise RuntimeError(f"the excess is not ζ²·A(s)·ρ²: {excess}")
    return amp


@dataclass(frozen=True)
class UntiedLCA:
    """The untied one-parameter LCA at a fixed depth, per prompt (given ``s`` and ``ζ``).

    ``factor``: ``P_T(λ)`` by T applications of ``untied_layer`` from 0; ``residual``: ``1 − λ P_T``;
    ``product``: ``∏_t (1 − α_t λ)`` (equal to ``residual``, checked); ``excess_per_zeta2``: the
    excess over Bayes from ``risk_of_coefficient``, divided by ζ²; ``amplitude``: ``A(s)`` with
    ``excess_per_zeta2 = A(s)·product²`` (checked free of the α's)."""

    params: tuple[sp.Symbol, ...]
    factor: sp.Expr
    residual: sp.Expr
    product: sp.Expr
    excess_per_zeta2: sp.Expr
    amplitude: sp.Expr


@cache
def untied_at_depth(T: int) -> UntiedLCA:
    """Derive the untied model at depth ``T`` (``1 ≤ T ≤ 4``) for symbolic ``α_1 … α_T``: the factor
    from T layers, its residual checked against the product of the layers' multipliers, the excess
    from ``risk_of_coefficient`` checked against ``A(s)·product²`` (both checks by expanding the
    numerator of the difference: exact, and fast where ``simplify`` of the quotient is not)."""
    if not 1 <= T <= _T_MAX_SYMBOLIC:
        raise ValueError(f"symbolic depth must be 1 … {_T_MAX_SYMBOLIC} (the expansion grows like 3^T), got {T}")
    params = schedule_symbols(T)
    p = sp.Integer(0)
    for a in params:
        p = sp.expand(untied_layer(p, a))
    residual = sp.expand(1 - lam * p)
    product = sp.Mul(*[residual_multiplier().subs(alpha, a) for a in params])
    if not is_zero(residual - product):
        raise RuntimeError(f"the depth-{T} residual does not factor into the layers: {residual}")
    c = sp.Symbol("c", real=True)
    risk = risk_of_coefficient(c).subs(c, zeta * sp.sqrt(s) * p)
    excess = sp.expand((risk - bayes_predictor().risk) / zeta**2)
    amplitude = excess_amplitude()
    if excess.has(zeta) or not is_zero(excess - amplitude * product**2):
        raise RuntimeError(f"the depth-{T} excess is not A(s)·∏(1 − α_t λ)²: {excess}")
    return UntiedLCA(params, p, residual, product, excess, amplitude)


def is_zero(expr: sp.Expr) -> bool:
    """``expr ≡ 0`` for a rational function: the expanded numerator of ``together(expr)`` is 0."""
    num, _ = sp.fraction(sp.together(expr))
    return sp.expand(num) == 0


@cache
def rate_exprs() -> tuple[sp.Expr, sp.Expr, tuple[sp.Symbol, sp.Symbol]]:
    """``(tied, untied, (s_lo, s_hi))``: the per-layer rates ``lim excess^{1/T}`` on the support
    ``[s_lo, s_hi]``, as expressions in ``s_lo, s_hi``.

    Tied: at ``α* = 2/(2 + s_lo + s_hi)`` (``theory.lca.alpha_star_expr``) the largest contraction
    ``|1 − α* λ|`` is reached at both ends; the excess is an average of its 2T-th powers, so the rate
    is ``(1 − α* λ_lo)²``.  Untied: for a measure with a regular density on ``[λ_lo, λ_hi]`` the
    n-th root of the least-squares minimum with ``q(0) = 1`` equals that of the uniform minimum
    (potential theory), ``|q(0)| / max|q| ≤ e^{T g(0)}`` with ``g(z) = log|w + √(w² − 1)|`` the
    Green's function of the complement of the interval (``w`` its affine map onto [−1, 1]); so the
    rate is ``e^{−2 g(0)}``."""
    s_lo, s_hi = sp.symbols("s_lo s_hi", nonnegative=True)
    a_star, (lo_sym, hi_sym) = alpha_star_expr()
    a_star = a_star.subs({lo_sym: s_lo, hi_sym: s_hi})
    l_lo, l_hi = lam.subs(s, s_lo), lam.subs(s, s_hi)
    tied = sp.factor(sp.simplify((1 - a_star * l_lo) ** 2))
    w0 = (l_hi + l_lo - 2 * 0) / (l_hi - l_lo)  # the point λ = 0 mapped onto [−1, 1] (w0 > 1)
    untied = sp.simplify(1 / (w0 + sp.sqrt(w0**2 - 1)) ** 2)
    return tied, untied, (s_lo, s_hi)
