"""Linearised cross-attention (LCA) in the large-context limit, reduced symbolically.

With tied weights ``W^S = w_S I``, ``W^V = w_V I``, ``W^K = W^Q = I`` and ``(1/n) X_c X_cᵀ → Λ``, the
query column obeys

    F^t_q = F^{t−1}_q + w_S x_q + w_V Λ F^{t−1}_q,      F^0_q = 0,

so ``F^T_q = P_T(Λ) x_q`` for a polynomial ``P_T``.  Since ``Λ m = (1 + s) m``, the readout
``ŷ = (1/n) Σ y_i x_iᵀ F^T_q → ζ mᵀ F^T_q = ζ √s P_T(λ) a`` with ``λ = 1 + s`` and ``a = m̂ᵀ x_q``
(the complement of span{m} never reaches the readout).  ``P_T(λ)`` is the solution of the scalar
recurrence ``p_t = (1 + w_V λ) p_{t−1} + w_S``, ``p_0 = 0``, which SymPy's ``rsolve`` gives for a
symbolic depth ``T``; the risk then follows from ``theory.model.risk_of_coefficient``.

Models: one-parameter ``w_S = −w_V = α``; two-parameter ``w_S = α, w_V = β``; no skip ``w_S = 0``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import sympy as sp

from .model import bayes_predictor, lam, risk_of_coefficient, s, zeta

__all__ = [
    "T",
    "alpha",
    "beta",
    "gamma",
    "ReducedLCA",
    "query_factor",
    "query_factor_at_depth",
    "one_parameter",
    "two_parameter",
    "no_skip",
    "depth_factorisation",
    "LayerJet",
    "layer_jet",
    "alpha_star_expr",
    "READOUTS",
    "readout_factor",
]

T = sp.Symbol("T", integer=True, positive=True)  # depth
alpha, beta = sp.symbols("alpha beta", real=True)
gamma = sp.Symbol("gamma", real=True)  # α + β: the skip's mismatch with the value weight
_t = sp.Symbol("t", integer=True, nonnegative=True)


def query_factor(w_skip: sp.Expr, w_value: sp.Expr) -> sp.Expr:
    """``P_T(λ)`` for symbolic ``T``: solve ``p_{t+1} = (1 + w_V λ) p_t + w_S``, ``p_0 = 0``."""
    p = sp.Function("p")
    sol = sp.rsolve(p(_t + 1) - (1 + w_value * lam) * p(_t) - w_skip, p(_t), {p(0): 0})
    if sol is None:
        raise RuntimeError("rsolve could not solve the LCA recurrence")
    return sp.simplify(sol.subs(_t, T))


def query_factor_at_depth(w_skip: sp.Expr, w_value: sp.Expr, depth: int) -> sp.Expr:
    """``P_depth(λ)`` by running the recurrence ``depth`` times (a polynomial, no division)."""
    if depth < 1:
        raise ValueError(f"the depth T must be ≥ 1, got {depth}")
    p = sp.Integer(0)
    for _ in range(depth):
        p = sp.expand((1 + w_value * lam) * p + w_skip)
    return p


@dataclass(frozen=True)
class ReducedLCA:
    """One reduced LCA model in the large-context limit, per prompt (given ``s`` and ``ζ``).

    ``factor``: ``P_T(λ)``; ``coefficient``: ``ŷ = coefficient · a``; ``risk``: ``E[(y − ŷ)²]``;
    ``excess``: ``risk − Bayes risk``; all as functions of ``s, ζ``, the parameters and ``T``.
    """

    name: str
    params: tuple[sp.Symbol, ...]
    factor: sp.Expr
    coefficient: sp.Expr
    risk: sp.Expr
    excess: sp.Expr

    @property
    def excess_per_zeta2(self) -> sp.Expr:
        """``excess / ζ²`` (ζ enters every risk as the factor ζ²)."""
        out = sp.simplify(sp.expand(self.excess / zeta**2, deep=False))  # ζ² divides every term
        if out.has(zeta):
            raise RuntimeError(f"{self.name}: excess is not ζ² times a function of s")
        return out


def _build(name: str, params, w_skip, w_value) -> ReducedLCA:
    """Risk of ``ŷ = c·a`` for a symbol ``c`` (the Gaussian expectation is over the tokens only),
    then ``c`` replaced by the model's coefficient ``ζ √s P_T(λ)``."""
    factor = query_factor(w_skip, w_value)
    coefficient = zeta * sp.sqrt(s) * factor
    c = sp.Symbol("c", real=True)
    risk = sp.simplify(risk_of_coefficient(c).subs(c, coefficient))
    excess = sp.factor(sp.simplify(risk - bayes_predictor().risk))
    return ReducedLCA(name, tuple(params), factor, coefficient, risk, excess)


@lru_cache(maxsize=None)
def one_parameter() -> ReducedLCA:
    """``W^S = −W^V = α I``."""
    return _build("one-parameter", (alpha,), alpha, -alpha)


@lru_cache(maxsize=None)
def two_parameter() -> ReducedLCA:
    """``W^S = α I``, ``W^V = β I`` (symbolic T; the closed form has a removable pole at β = 0)."""
    return _build("two-parameter", (alpha, beta), alpha, beta)


@lru_cache(maxsize=None)
def no_skip() -> ReducedLCA:
    """``W^S = 0``, ``W^V = β I``: with ``F^0 = 0`` the recurrence never leaves 0."""
    return _build("no-skip", (beta,), sp.Integer(0), beta)


@dataclass(frozen=True)
class LayerJet:
    """One LCA layer acting on the Bayes residual of the query factor and its parameter
    derivatives up to order 2.

    The state is the residual ``ρ = λ P − 1`` (0 exactly for the Bayes predictor) and its
    derivatives ``(ρ, ∂_i ρ, ∂_i∂_j ρ)``; ``step`` is their value after one layer
    ``P ↦ (1 + w_V λ) P + w_S`` rewritten in ρ and differentiated by SymPy; ``initial`` their value
    at ``F⁰ = 0`` (``ρ = −1``); ``loss`` the excess risk per ζ² and its derivatives as functions of
    the state.  Iterating ``step`` T times gives the exact depth-T derivatives with no closed form
    (no pole at β = 0).  Working with ρ rather than P keeps the tiny excess of deep models
    accurate: ``λP − 1`` computed from P loses every digit once it is below 1e-16."""

    params: tuple[sp.Symbol, ...]
    orders: tuple[tuple[sp.Symbol, ...], ...]
    state: tuple[sp.Symbol, ...]
    initial: tuple[sp.Expr, ...]
    step: tuple[sp.Expr, ...]
    loss: tuple[sp.Expr, ...]


def layer_jet(params: tuple[sp.Symbol, ...], w_skip: sp.Expr, w_value: sp.Expr) -> LayerJet:
    R = sp.Function("R")(*params)  # the residual λP − 1 as a function of the parameters
    orders = [()] + [(p,) for p in params] + [
        (params[i], params[j]) for i in range(len(params)) for j in range(i, len(params))]
    names = ["r"] + ["r_" + "".join(str(v) for v in o) for o in orders[1:]]
    state = sp.symbols(names, real=True)
    table = {}
    for o, sym in zip(orders, state):
        table[sp.diff(R, *o) if o else R] = sym

    def to_state(expr):
        # replace the highest derivatives first, then R itself; group what multiplies no state
        for key in sorted(table, key=lambda k: -len(getattr(k, "variables", ()))):
            expr = expr.subs(key, table[key])
        expr = sp.expand(sp.simplify(expr))
        linear = sum(expr.coeff(x) * x for x in state)
        return sp.collect(linear, state) + sp.factor(sp.simplify(expr - linear))

    P = (R + 1) / lam
    step = lam * ((1 + w_value * lam) * P + w_skip) - 1
    c = sp.Symbol("c", real=True)
    per_zeta2 = sp.expand((risk_of_coefficient(c) - bayes_predictor().risk).subs(c, zeta * sp.sqrt(s) * P) / zeta**2)
    initial = (lam * 0 - 1,) + (sp.Integer(0),) * (len(orders) - 1)
    return LayerJet(
        params=tuple(params),
        orders=tuple(orders),
        state=tuple(state),
        initial=initial,
        step=tuple(to_state(sp.diff(step, *o) if o else step) for o in orders),
        loss=tuple(sp.factor(sp.simplify(to_state(sp.diff(per_zeta2, *o) if o else per_zeta2))) for o in orders),
    )


READOUTS = ("raw-keys", "evolved-keys", "evolved-keys-and-query")


def readout_factor(kind: str, factor: sp.Expr) -> sp.Expr:
    """The readout's multiplier of ``ζ √s a`` in the large-context limit, for three readouts.

    Every column of F evolves by the same recurrence, so ``F^T_i = P_T(Λ) x_i`` for context columns
    too, and ``P_T(Λ)`` is symmetric:

    - ``raw-keys`` (the convention): ``(1/n) Σ y_i x_iᵀ F^T_q → ζ mᵀ P x_q``: factor ``P_T(λ)``;
    - ``evolved-keys``: keys ``F^T_i``, raw query ``x_q``: ``ζ mᵀ P x_q``, the same;
    - ``evolved-keys-and-query``: ``(1/n) Σ y_i F^T_iᵀ F^T_q → ζ mᵀ P² x_q``: factor ``P_T(λ)²``,
      a different model (its Bayes-optimal depth limit needs ``P_T(λ) → λ^{−1/2}``)."""
    if kind in ("raw-keys", "evolved-keys"):
        return factor
    if kind == "evolved-keys-and-query":
        return factor**2
    raise ValueError(f"unknown readout {kind!r}; one of {READOUTS}")


def depth_factorisation(expr: sp.Expr, base: sp.Expr, power: sp.Expr) -> sp.Expr:
    """Return ``A`` with ``expr = A · base**power`` and ``A`` free of ``base`` and of ``T``.

    Used to evaluate depth-T integrands as ``A(s) · sign · exp(power · log|base|)`` in log scale
    (``(1 − α(1+s))^{2T}`` under- and overflows float64 for large T: a numerical trap of docs/model.md)."""
    R = sp.Symbol("R")
    amp = sp.simplify(sp.powsimp(expr.subs(sp.expand(base), R) / R**power, force=True))
    amp = sp.simplify(sp.powsimp(amp, force=True))
    if amp.has(R) or any(T in pw.exp.free_symbols for pw in amp.atoms(sp.Pow)):
        raise RuntimeError(f"{expr} is not of the form A·({base})^({power}): left {amp}")
    return amp


def alpha_star_expr() -> tuple[sp.Expr, tuple[sp.Symbol, sp.Symbol]]:
    """The depth-∞ limit of the one-parameter minimiser, derived as the minimax point: the
    contraction factor ``|1 − α(1 + s)|`` is largest at an end of the support, and
    ``max(|1 − α(1+s_lo)|, |1 − α(1+s_hi)|)`` is smallest where the two are equal and opposite."""
    s_lo, s_hi = sp.symbols("s_lo s_hi", nonnegative=True)
    (a,) = sp.solve(sp.Eq(1 - alpha * (1 + s_lo), -(1 - alpha * (1 + s_hi))), alpha)
    return sp.simplify(a), (s_lo, s_hi)
