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
from .rounding import UNIT_ROUNDOFF, affine_error_step, running_error

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
    "JET_VARIABLES",
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
    """One LCA layer acting on the query factor (or on its Bayes residual) and on its parameter
    derivatives up to order 2, with a running bound on the rounding error of each.

    ``variable="residual"``: the state is ``ρ = λ P − 1`` (0 exactly for the Bayes predictor) and its
    derivatives; ``variable="factor"``: the state is ``P`` itself and its derivatives.  ``step`` is
    the state after one layer ``P ↦ (1 + w_V λ) P + w_S`` (rewritten in the state and
    differentiated by SymPy), ``initial`` its value at ``F⁰ = 0`` (``ρ = −1``, ``P = 0``), ``loss``
    the excess risk per ζ² and its derivatives as functions of the state.  Iterating ``step`` T
    times gives the exact depth-T derivatives with no closed form (no pole at β = 0).

    The two variables fail in opposite places.  The layer multiplies the state by
    ``q = 1 + w_V λ``: where ``|q| ≤ 1`` rounding errors shrink, and ρ keeps the tiny residual of a
    deep model accurate (``λP − 1`` computed from P loses every digit once it is below 1e-16);
    where ``|q| > 1`` they grow like ``|q|^T``, which ρ's fixed point cannot absorb (at ``α = 0``
    the true ρ is −1 at every depth, the iterated one drifts away), while P grows with them and
    keeps its relative accuracy (and is exactly 0 at ``α = 0``).

    ``error_step[i]`` bounds the rounding error of ``step[i]`` given bounds ``errors`` on the
    state's errors (``theory.rounding.running_error``; the parameters and ``s`` are exact inputs);
    ``loss_error[i]`` bounds the error of ``loss[i]`` in the same way.  ``value_error`` is
    ``error_step[0]`` written as ``A·e + B·|x| + C + D·|x'|`` (x the value, x' its step): the
    coefficients depend on the parameters and s only, so they are computed once per node."""

    variable: str
    params: tuple[sp.Symbol, ...]
    orders: tuple[tuple[sp.Symbol, ...], ...]
    state: tuple[sp.Symbol, ...]
    errors: tuple[sp.Symbol, ...]
    initial: tuple[sp.Expr, ...]
    step: tuple[sp.Expr, ...]
    loss: tuple[sp.Expr, ...]
    error_step: tuple[sp.Expr, ...]
    loss_error: tuple[sp.Expr, ...]
    value_error: tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]


JET_VARIABLES = ("residual", "factor")


def layer_jet(params: tuple[sp.Symbol, ...], w_skip: sp.Expr, w_value: sp.Expr,
              variable: str = "residual", rounded: tuple[sp.Symbol, sp.Expr] | None = None) -> LayerJet:
    """The jet of one layer (see ``LayerJet``) in the parameters ``params``, with
    ``W^S = w_skip``, ``W^V = w_value`` (expressions in ``params``).

    ``rounded = (v, expr)``: a combination of the parameters that the caller computes once, with
    one rounding (an input error at most ``u·|v|``), and passes as the extra input ``v``; the
    steps are written in ``v`` wherever ``expr`` appears in them (``γ = α + β`` in the residual's
    step, ``α = γ − β`` in the factor's), so that the rounding bound does not charge
    ``u·(|α| + |β|)`` for a difference that float64 forms exactly."""
    if variable not in JET_VARIABLES:
        raise ValueError(f"variable must be one of {JET_VARIABLES}, got {variable!r}")
    R = sp.Function("R")(*params)  # the state (λP − 1, or P) as a function of the parameters
    orders = [()] + [(p,) for p in params] + [
        (params[i], params[j]) for i in range(len(params)) for j in range(i, len(params))]
    head = "r" if variable == "residual" else "p"
    names = [head] + [head + "_" + "".join(str(v) for v in o) for o in orders[1:]]
    state = sp.symbols(names, real=True)
    errors = sp.symbols(["e_" + n for n in names], nonnegative=True)
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

    if variable == "residual":
        P = (R + 1) / lam
        step = lam * ((1 + w_value * lam) * P + w_skip) - 1
        initial = (lam * 0 - 1,) + (sp.Integer(0),) * (len(orders) - 1)
    else:
        P = R
        step = (1 + w_value * lam) * P + w_skip
        initial = (sp.Integer(0),) * len(orders)
    c = sp.Symbol("c", real=True)
    per_zeta2 = sp.expand((risk_of_coefficient(c) - bayes_predictor().risk).subs(c, zeta * sp.sqrt(s) * P) / zeta**2)
    steps = tuple(to_state(sp.diff(step, *o) if o else step) for o in orders)
    losses = tuple(sp.factor(sp.simplify(to_state(sp.diff(per_zeta2, *o) if o else per_zeta2))) for o in orders)
    bound = dict(zip(state, errors))
    if rounded is not None:
        v, combination = rounded
        steps = tuple(e.subs(combination, v) for e in steps)
        bound[v] = UNIT_ROUNDOFF * sp.Abs(v)
    error_step = tuple(running_error(e, bound) for e in steps)
    return LayerJet(
        variable=variable,
        params=tuple(params),
        orders=tuple(orders),
        state=tuple(state),
        errors=tuple(errors),
        initial=initial,
        step=steps,
        loss=losses,
        error_step=error_step,
        loss_error=tuple(running_error(e, bound) for e in losses),
        value_error=affine_error_step(error_step[0], errors[0], state[0], steps[0]),
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
