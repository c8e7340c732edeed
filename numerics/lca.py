"""Population losses of the reduced LCA models over a task law, and their minimisers.

The per-prompt formulas come from ``theory.lca`` (derived in SymPy, compiled, cached); here they
are integrated over the task law.  Everything is per ``E[ζ²·(·)]`` with ζ independent of m.

One-parameter model (depth T): the excess risk is ``E[ζ² A(s) r^{2T}]`` with ``r = α(1+s) − 1``.
``r^{2T}`` under/overflows float64 for large T, so sums are kept in log scale:
``Σ w A r^{n} = e^{n ℓ_max} · Σ w A sign(r)^n e^{n(log|r| − ℓ_max)}``, ``ℓ_max = max_support log|r|``
(``|r|`` is convex in s, so the max is at an end of the support).  The minimiser ``α_T`` is found
by bracketed root finding of the scaled derivative on ``[1/(1+s_hi), 1/(1+s_lo)]``, where its sign
is known to change; the scale factor is positive and does not move the root.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import mpmath as mp
import numpy as np
import sympy as sp
from scipy import optimize

from mmicl.theory import lca as th
from mmicl.theory.compile import compiled
from mmicl.theory.model import bayes_predictor, s as s_sym, zeta as zeta_sym

from mmicl.numerics.laws.language import as_law, takes_law
from .validate import check_depth, check_finite as _finite
from .validate import MAX_DEPTH_MP, MAX_DEPTH_ONE, MAX_DEPTH_TWO, check_real
from mmicl.numerics.laws.quadrature import Rule
from mmicl.numerics.laws.task import TaskLaw

_U = 2.0**-53  # float64's unit roundoff
_DOUBT = 2.0**-40  # a residual run whose excess is known to this relative bound (~1e-12) is kept as it is

__all__ = [
    "signal_bounds_for",
    "ScaledValue",
    "check_depth",
    "bayes_risk",
    "alpha_star",
    "alpha_T",
    "alpha_T_mp",
    "excess_risk",
    "excess_risk_scaled",
    "population_loss",
    "loss_gradient_one",
    "loss_curvature_one",
    "two_parameter_terms",
    "TwoParameterLoss",
    "minimise_two",
    "minimise_two_residual",
    "stable_interval",
]


@dataclass(frozen=True, repr=False)
class ScaledValue:
    """``mantissa · exp(log_scale)``: a number that float64 may not hold.

    The fields are as computed (``mantissa`` not normalised, ``log_scale`` a natural log); the repr
    shows the value in base 10, ``ScaledValue(3.52e-542)``: six significant digits of ``d`` in
    [1, 10) and the exponent ``k`` of ``d·10^k``, from ``log10``."""

    mantissa: float
    log_scale: float

    def __repr__(self) -> str:
        return f"ScaledValue({self.decimal()})"

    def decimal(self, digits: int = 6) -> str:
        """The value as text ``d.ddddde±k`` (``digits`` significant digits, ``1 ≤ d < 10``), also
        where float64 cannot hold it: ``"3.52e-542"``, ``"-1.5e+03"``, ``"0"`` (a mantissa or scale
        that is not finite: what float64 makes of the product, ``"inf"``, ``"nan"``, ``"0.0"``)."""
        m, scale = self.mantissa, self.log_scale
        if m == 0:
            return "0"  # as ``value``
        if not (math.isfinite(m) and math.isfinite(scale)):
            with np.errstate(all="ignore"):  # what float64 makes of it: inf, -inf, nan, 0.0
                return repr(float(np.float64(m) * np.exp(np.float64(scale))))
        log10 = self.log10
        k = math.floor(log10)
        d = float(f"{10.0 ** (log10 - k):.{digits}g}")
        if d >= 10:  # 9.9999996 rounds up to 10
            d, k = d / 10, k + 1
        return f"{'-' if m < 0 else ''}{d:.{digits}g}e{k:+03d}"

    @property
    def mp(self) -> mp.mpf:
        return mp.mpf(self.mantissa) * mp.exp(mp.mpf(self.log_scale))

    @property
    def log10(self) -> float:
        if self.mantissa == 0:
            return -math.inf
        return (math.log(abs(self.mantissa)) + self.log_scale) / math.log(10)

    @property
    def value(self) -> float | None:
        """The float64 value, or ``None`` if it under- or overflows (never a silent 0 or inf)."""
        if self.mantissa == 0:
            return 0.0
        if not -745 < self.log10 * math.log(10) < 709:
            return None
        return self.mantissa * math.exp(self.log_scale)

    def to_json(self, name: str) -> dict:
        """``{name, "log10_" + name}``, each null with its reason where float64 cannot hold it."""
        out: dict = {name: self.value, f"log10_{name}": self.log10 if self.mantissa != 0 else None}
        if self.value is None:
            out[f"{name}_null_reason"] = f"|{name}| = 10^{self.log10:.2f} is outside float64's range; see log10_{name}"
        if self.mantissa == 0:
            out[f"log10_{name}_null_reason"] = f"{name} is exactly 0"
        elif self.mantissa < 0:
            out[f"log10_{name}"] = None
            out[f"log10_{name}_null_reason"] = f"{name} is negative; log10 of |{name}| is {self.log10:.6g}"
        return out


@takes_law
def signal_bounds_for(law: TaskLaw, T: int = 1, hint: str | None = None) -> tuple[float, float]:
    """``(s_lo, s_hi)`` over the prompts with m ≠ 0: an atom at s = 0 weighs nothing in the loss.

    Refuses (``LawError``) a law that float64 cannot resolve at depth ``T``
    (``TaskLaw.float64_unresolved``: the spread ρ of 1 + s below 1024·T·eps); T = 1, the
    weakest test (ρ ≥ 2.3e-13), where the caller has no depth to give.  An unbounded law is an
    ``UnboundedSupportError`` that ends with ``hint`` (one of the ``UNBOUNDED_HINTS``) where given."""
    sig = law.require_signal("the LCA theorems", hint)
    law.require_float64_resolved("the LCA theorems", T)
    return sig


_ALPHA_T_UNBOUNDED = ("for s = exponential(rate) use mmicl.alpha_T_unbounded(law, T) (α_T at a finite depth, "
                      "exact moments)")
UNBOUNDED_HINTS = {
    "alpha_T": "in place of alpha_T, " + _ALPHA_T_UNBOUNDED,
    "alpha_T_mp": "in place of alpha_T_mp, " + _ALPHA_T_UNBOUNDED,
    "loss_gradient_one": ("in place of loss_gradient_one, for s = exponential(rate) use "
                          "mmicl.numerics.unbounded.stationarity_unbounded(law, T, alpha) = G(α): "
                          "dL/dα = 2T·E[ζ²]·G(α)"),
    "excess_risk": ("the excess risk has no counterpart for an unbounded law; for s = exponential(rate), "
                    "mmicl.alpha_T_unbounded(law, T) gives its minimiser α_T at a finite depth"),
}
"""The end of the error message that an unbounded law gets from each function here with a
counterpart for (some) unbounded laws: what to call instead (``numerics/unbounded.py``)."""


# ---------------------------------------------------------------------------------------------
# compiled per-prompt formulas
# ---------------------------------------------------------------------------------------------


def _bayes_risk_fn():
    return compiled("bayes_risk", lambda: ([sp.simplify(bayes_predictor().risk / zeta_sym**2)], [s_sym]))


def _one_parameter_build():
    """``(r, A0, A1, A2)``: ``excess/ζ² = A0 r^{2T}``, ``∂_α = A1 r^{2T−1}``, ``∂²_α = A2 r^{2T−2}``."""
    e = th.one_parameter().excess_per_zeta2
    (base,) = {p.base for p in e.atoms(sp.Pow) if p.exp == 2 * th.T}
    amps = [th.depth_factorisation(sp.diff(e, th.alpha, k), base, 2 * th.T - k) for k in range(3)]
    return [base, *amps], [th.alpha, s_sym, th.T]


def _one_parameter_fn(module: str = "numpy"):
    return compiled("one_parameter", _one_parameter_build, module)


COORDINATES = {
    # name: (parameter symbols, W^S, W^V, the combination of the parameters computed once)
    "alpha-beta": ((th.alpha, th.beta), th.alpha, th.beta, (th.gamma, th.alpha + th.beta)),
    "gamma-beta": ((th.gamma, th.beta), th.gamma - th.beta, th.beta, (th.alpha, th.gamma - th.beta)),
}


@dataclass(frozen=True)
class _JetFunctions:
    """The compiled pieces of one ``theory.lca.layer_jet`` (see there)."""

    initial: Callable
    step: Callable
    error_step: Callable
    value_error: Callable
    loss: Callable
    loss_error: Callable
    loss_error_value: Callable


@lru_cache(maxsize=None)
def _two_parameter_jet(coordinates: str, variable: str) -> _JetFunctions:
    """The jet of the residual ``ρ = λP − 1`` (``variable="residual"``) or of the query factor P
    (``"factor"``) at ``F⁰ = 0``, one layer on it with its rounding bound, and the excess with its
    derivatives and their rounding bounds (``theory.lca.layer_jet``), in the parameters (α, β) or
    (γ, β) with γ = α + β.  The step takes ``(*state, *params, v, s)`` where ``v`` is the third
    of α, β, γ, computed once from the other two."""
    params, w_skip, w_value, rounded = COORDINATES[coordinates]

    @lru_cache(maxsize=1)
    def jet():
        return th.layer_jet(params, w_skip, w_value, variable, rounded)

    tag = f"{coordinates.replace('-', '_')}_{variable}"
    inputs = [*params, rounded[0], s_sym]
    return _JetFunctions(
        initial=compiled(f"two_parameter_initial_{tag}", lambda: (jet().initial, [s_sym])),
        step=compiled(f"two_parameter_step_{tag}", lambda: (jet().step, [*jet().state, *inputs])),
        error_step=compiled(f"two_parameter_error_step_{tag}",
                            lambda: (jet().error_step, [*jet().errors, *jet().state, *inputs])),
        value_error=compiled(f"two_parameter_value_error_{tag}", lambda: (jet().value_error, inputs)),
        loss=compiled(f"two_parameter_loss_{tag}", lambda: (jet().loss, [*jet().state, s_sym])),
        loss_error=compiled(f"two_parameter_loss_error_{tag}",
                            lambda: (jet().loss_error, [*jet().errors, *jet().state, s_sym])),
        loss_error_value=compiled(f"two_parameter_loss_error_value_{tag}",
                                  lambda: (jet().loss_error[:1], [jet().errors[0], jet().state[0], s_sym])),
    )


@lru_cache(maxsize=256)
def _rule(law: TaskLaw, T: int) -> Rule:
    return law.rule(depth=T)


# ---------------------------------------------------------------------------------------------
# Bayes and the one-parameter model
# ---------------------------------------------------------------------------------------------


@takes_law
def bayes_risk(law: TaskLaw) -> float:
    """``E[ζ²/(1+s)]``-type Bayes risk, from the derived Bayes risk per prompt.

    **Accuracy.**  A weighted sum of non-negative terms on ``law.rule(depth=1)``: relative
    rounding of a few ``N·u`` (N nodes, u = 2⁻⁵³) against the same sum at the same nodes, plus the
    rule's own quadrature error (``law.rule``)."""
    f = _bayes_risk_fn()
    return _rule(law, 1).expect(lambda s: f(s)[0] * np.ones_like(s))


@takes_law
def alpha_star(law: TaskLaw) -> float:
    """``α* = 2/(2 + s_lo + s_hi)``, evaluated from the derived minimax expression.

    **Accuracy.**  The SymPy expression is evaluated in 53-bit arithmetic at the float64 ends
    s_lo, s_hi: a few roundings, so within a few ulps of α* at those ends."""
    lo, hi = signal_bounds_for(law)
    expr, (s_lo, s_hi) = th.alpha_star_expr()
    return float(expr.subs({s_lo: lo, s_hi: hi}))


@takes_law
def stable_interval(law: TaskLaw) -> tuple[float, float]:
    """α with ``|1 − α(1+s)| < 1`` on the whole support: ``(0, 2/(1 + s_hi))``."""
    _, hi = signal_bounds_for(law)
    return (0.0, 2.0 / (1.0 + hi))


def _one_parameter_sums(law: TaskLaw, T: int, alpha: float, order: int, hint: str | None = None) -> ScaledValue:
    """``E[ζ² ∂^order_α (excess/ζ²)]`` in log scale (``hint``: as in ``signal_bounds_for``)."""
    lo, hi = signal_bounds_for(law, T, hint)
    f = _one_parameter_fn()
    rule = _rule(law, T)
    base, *amps = f(alpha, rule.nodes, T)
    amp = np.broadcast_to(amps[order], rule.nodes.shape)
    n = 2 * T - order
    ends = np.abs(np.asarray(f(alpha, np.array([lo, hi]), T)[0], float))
    with np.errstate(divide="ignore"):
        lmax = float(np.max(np.log(ends)))
        logabs = np.log(np.abs(base))
    if not math.isfinite(lmax):  # r = 0 at both ends: a point law at α = 1/(1+s)
        lmax = 0.0
    sign = np.where((base < 0) & (n % 2 == 1), -1.0, 1.0)
    with np.errstate(invalid="ignore", over="ignore"):  # atoms at s = 0 have amplitude 0
        terms = np.where(amp == 0, 0.0, amp * sign * np.exp(n * (logabs - lmax)))
    return ScaledValue(float(np.dot(rule.weights, terms)), n * lmax)


@takes_law
def excess_risk_scaled(law: TaskLaw, T: int, alpha: float | None = None) -> ScaledValue:
    """The one-parameter excess risk over Bayes, ``E[ζ² s/(1+s) (1 − α(1+s))^{2T}]``, in log scale
    (a ``ScaledValue``: ``.value`` is the float64 number or None where float64 cannot hold it,
    ``.log10`` always holds).  ``alpha=None``: at the minimiser ``α_T``.

    **Accuracy** (against the same sum evaluated exactly at the same nodes of ``law.rule(depth=T)``;
    the rule's own error is ``law.rule``'s): the sum has non-negative terms, each with relative
    rounding about ``2T·4u(|α|(1+s) + 1)/|r|`` (``r = α(1+s) − 1`` is formed to ~4u absolutely) plus
    ``u·2T(|log|r|| + |ℓ_max|)`` (the log-scaled exponent) plus a few u, and the sum adds ``N·u``
    (N nodes).  So the relative error is a few ``T·u/|r|`` averaged over the terms by their size:
    about ``T·1e-16/ρ`` near α_T (ρ the spread of 1 + s, ``TaskLaw.spread``), which is why laws
    with ``ρ < 1024·T·eps`` are refused.  ``.log10`` is accurate to that relative error / ln 10,
    also where the value itself under- or overflows."""
    T = check_depth(T, MAX_DEPTH_ONE, "excess_risk")
    alpha = None if alpha is None else check_real("alpha", alpha)
    signal_bounds_for(law, T, UNBOUNDED_HINTS["excess_risk"])
    alpha = alpha_T(law, T) if alpha is None else alpha
    return _one_parameter_sums(law, T, _finite("alpha", alpha), 0)


@takes_law
def loss_gradient_one(law: TaskLaw, T: int, alpha: float) -> ScaledValue:
    """``dL/dα`` of the one-parameter population loss, in log scale."""
    return _one_parameter_sums(law, check_depth(T, MAX_DEPTH_ONE, "the gradient"), check_real("alpha", alpha), 1,
                               UNBOUNDED_HINTS["loss_gradient_one"])


@takes_law
def loss_curvature_one(law: TaskLaw, T: int, alpha: float) -> ScaledValue:
    """``d²L/dα²`` of the one-parameter population loss, in log scale."""
    return _one_parameter_sums(law, check_depth(T, MAX_DEPTH_ONE, "the curvature"), check_real("alpha", alpha), 2)


@takes_law
def alpha_T(law: TaskLaw, T: int) -> float:
    """The unique minimiser of the one-parameter population loss at depth T.

    The loss is convex in α (its second derivative ``E[ζ² A2 r^{2T−2}]`` is ≥ 0) and its derivative
    is ≤ 0 at ``1/(1+s_hi)`` and ≥ 0 at ``1/(1+s_lo)`` (s_lo, s_hi over prompts with m ≠ 0), so
    Brent's method on that bracket finds it;
    the tolerance is relative (``xtol = 1e-16``, ``rtol = 4·eps``), never an absolute one on the
    gradient (it would stop at the initial guess).

    **Accuracy.**  Brent's method (scipy's ``brentq``) on the bracket ``[1/(1+s_hi), 1/(1+s_lo)]``,
    where the derivative's sign is known, returns a point within ``1e-16 + 4·eps·α`` of the root of
    the float64 derivative (the log-scaled sum of ``excess_risk_scaled``, its scale factor divided
    out); that derivative's rounding moves the root by a few u·α more (8u is a safe bound; the
    derivation is in ``tests/numerics/test_mpmath_crosscheck.float64_tolerance``).  So the exact derivative at
    the same quadrature nodes changes sign within ``1e-16 + 4·eps·α + 8u`` of the returned α; the
    quadrature rule adds its own error (for Beta pieces, Jacobi weights to ~5e-12 relative, a shift
    of at most ``5e-12·r_max/((2T − 1)(1 + s_lo))``).  Where the derivative has one sign on the
    whole bracket, the end is returned (exact to the rounding of ``1/(1+s)``)."""
    T = check_depth(T, MAX_DEPTH_ONE, "alpha_T")
    lo, hi = signal_bounds_for(law, T, UNBOUNDED_HINTS["alpha_T"])
    a_lo, a_hi = 1.0 / (1.0 + hi), 1.0 / (1.0 + lo)
    if a_lo == a_hi:
        return a_lo
    D = lambda a: _one_parameter_sums(law, T, a, 1).mantissa  # noqa: E731
    d_lo, d_hi = D(a_lo), D(a_hi)
    if d_lo >= 0:
        return a_lo
    if d_hi <= 0:
        return a_hi
    return float(optimize.brentq(D, a_lo, a_hi, xtol=1e-16, rtol=4 * np.finfo(float).eps, maxiter=500))


def _check_parameters(alpha, beta) -> None:
    """α (None: at α_T) and β (None: the one-parameter model) are each one real number, checked
    before anything is computed on the law."""
    for name, v in (("alpha", alpha), ("beta", beta)):
        if v is not None:
            check_real(name, v)


@takes_law
def excess_risk(law: TaskLaw, T: int, alpha: float, beta: float | None = None) -> float:
    """Excess risk over Bayes of the one-parameter model (``beta=None``) or the two-parameter
    model.  Raises if float64 cannot hold it (use ``excess_risk_scaled``).

    **Accuracy.**  That of ``excess_risk_scaled`` (one parameter) or of
    ``TwoParameterLoss.terms`` (two parameters: within the rounding bound that
    ``TwoParameterLoss.terms_and_bounds`` returns)."""
    check_depth(T, MAX_DEPTH_ONE if beta is None else MAX_DEPTH_TWO, "excess_risk")
    _check_parameters(alpha, beta)
    law.require_bounded("the LCA theorems", UNBOUNDED_HINTS["excess_risk"])
    if beta is None:
        v = excess_risk_scaled(law, T, alpha)
        if v.value is None:
            raise OverflowError(f"the excess risk is 10^{v.log10:.1f}: use excess_risk_scaled")
        return v.value
    return two_parameter_terms(law, T, alpha, beta)[0]


@takes_law
def population_loss(law: TaskLaw, T: int, alpha: float, beta: float | None = None) -> float:
    """``E[(ŷ − y)²]`` in the large-context limit: Bayes risk plus excess."""
    _check_parameters(alpha, beta)
    law.require_bounded("the LCA theorems", UNBOUNDED_HINTS["excess_risk"])
    return bayes_risk(law) + excess_risk(law, T, alpha, beta)


@takes_law
def alpha_T_mp(law: TaskLaw, T: int, dps: int = 30) -> mp.mpf:
    """``α_T`` in high precision: mpmath quadrature of the derivative (no log scaling needed:
    mpf exponents do not overflow) and mpmath's root finder started from the float64 answer.

    An independent check of ``alpha_T``: different quadrature (tanh-sinh on graded pieces),
    different arithmetic, different root finder."""
    T = check_depth(T, MAX_DEPTH_MP, "alpha_T_mp")
    signal_bounds_for(law, T, UNBOUNDED_HINTS["alpha_T_mp"])
    f = _one_parameter_fn("mpmath")
    # α(1 + s) − 1 cancels the digits of 1 + s that the spread ρ does not reach: work with that many
    # more, so that ``dps`` digits remain where the root finder's tolerance is applied
    rho = law.spread()
    extra = max(0, math.ceil(-math.log10(rho))) if rho else 0
    with mp.workdps(dps + extra):
        lo, hi = (mp.mpf(x) for x in signal_bounds_for(law, T))

        def D(a):
            """dL/dα divided by max|r|^{2T−1} over the support (positive): values of order 1/T,
            so the root finder's tolerance on |D| means something (unscaled values ~10^(−T)).
            The scale is divided out *inside* the integrand: mpmath.quad's stopping test is
            absolute (10^−dps), and an unscaled integrand of size 10^−97 would stop every piece
            at its first degree."""
            scale = max(abs(f(a, lo, T)[0]), abs(f(a, hi, T)[0])) ** (2 * T - 1)

            def integrand(s):
                v = f(a, s, T)
                return v[2] * (v[0] ** (2 * T - 1) / scale)

            return law.s_law().expect_mp(integrand, depth=T)

        a0 = mp.mpf(alpha_T(law, T))
        if lo == hi:
            return a0
        # a bracket around the float64 answer where D changes sign (D is increasing: the loss is
        # convex), widened until it does; then a bracketing solver (the secant method can divide
        # by D(x1) − D(x0) = 0 where D is flat at working precision)
        # (1e-9·α, or ρ/T·α where that is smaller: D turns from −1 to +1 over |α − α_T| ~ ρ/T, and the
        # bracketing solver is slow on a bracket much wider than that)
        width = mp.mpf(min(1e-9, rho / T if rho else 1e-9)) * a0
        while True:
            left, right = a0 - width, a0 + width
            d_left, d_right = D(left), D(right)
            if d_left == 0:
                return +left
            if d_right == 0:
                return +right
            if d_left < 0 < d_right or width > a0:
                break
            width *= 10
        root = mp.findroot(D, (left, right), solver="anderson")
        return +root


# ---------------------------------------------------------------------------------------------
# The two-parameter model
# ---------------------------------------------------------------------------------------------


class TwoParameterLoss:
    """The two-parameter population loss of one (law, T), ready for repeated evaluation.

    ``terms(α, β)`` is ``E[ζ² ·]`` of (excess, ∂α, ∂β, ∂αα, ∂αβ, ∂ββ), computed by T layers of the
    derived jet recurrence from ``F⁰ = 0`` (exact at every β: no pole at 0), and
    ``terms_and_bounds(α, β)`` adds a bound on the rounding error of each of the six numbers.

    **Accuracy.**  The recurrence runs on the Bayes residual ``ρ = λP − 1``, accurate where the
    layer contracts (``|1 + βλ| ≤ 1``, the valley of good predictors, where the excess can be far
    below 1e-16), and, where that run is not accurate, on the query factor P, accurate
    where the layer expands (the residual's fixed point ρ = −1 of the zero predictor is unstable
    there; P keeps its relative accuracy, and is exactly 0 at α = 0).  Each run carries a running
    bound on its rounding error (``theory.rounding``); the residual's run is kept where its bound on
    the excess is below 2⁻⁴⁰ (about 1e-12) relative, and otherwise each node keeps the run whose
    bound on its excess is smaller.  The returned bound is ``2·(Σ_k w_k·e_k + γ_N Σ_k w_k |g_k|)`` (e_k the node's
    bound, g_k its value, N nodes, ``γ_N = Nu/(1 − Nu)``); the factor 2 covers the rounding of the
    bound's own evaluation.  It bounds the difference from the same sum evaluated exactly at the
    same nodes (not the quadrature's own error, which ``law.rule`` controls).  The excess is a sum of
    non-negative terms, so its relative error is at most ``bound/excess``: a few times
    ``T·1e-16`` at α = 0 and along the valley; the derivatives are signed sums and their bound is
    absolute.

    **Overflow.**  Where the true excess exceeds float64 (outside the stable region the query
    factor grows like ``|1 + β(1+s)|^T``), it is ``inf``, never a wrong finite number; a derivative
    is then ``±inf``, or ``nan`` where nodes of both signs overflow, and its bound is ``inf``.

    ``α`` and ``β`` may be arrays (broadcast together); the result then has shape ``(6, *shape)``.
    ``coordinates="gamma-beta"`` takes ``(γ, β)`` with ``γ = α + β`` instead (derivatives in
    those): near the valley β ≈ −α, γ is tiny and a float64 γ keeps digits that α + β cannot."""

    def __init__(self, law: TaskLaw | str, T: int, coordinates: str = "alpha-beta"):
        check_depth(T, MAX_DEPTH_TWO, "TwoParameterLoss")
        law = as_law(law)
        self.T = check_depth(T)
        signal_bounds_for(law)
        if coordinates not in COORDINATES:
            raise ValueError(f"coordinates must be one of {list(COORDINATES)}, got {coordinates!r}")
        self.law = law
        self.coordinates = coordinates
        rule = _rule(law, self.T)
        self.nodes, self.weights = rule.nodes, rule.weights
        self._jets = {v: _two_parameter_jet(coordinates, v) for v in th.JET_VARIABLES}

    def _run(self, variable: str, p1, p2, s, zero, full: bool) -> tuple[np.ndarray, np.ndarray]:
        """Values and rounding bounds per node, shape (6, nodes, …), of one jet variable; with
        ``full=False`` only the excess's bound is carried (row 0; the other rows are nan)."""
        f = self._jets[variable]
        extra = p1 + p2 if self.coordinates == "alpha-beta" else p1 - p2  # γ = α + β, or α = γ − β
        x = tuple(v + zero for v in f.initial(s))
        e = tuple(zero for _ in x)
        if full:
            for _ in range(self.T):
                e = f.error_step(*e, *x, p1, p2, extra, s)
                x = f.step(*x, p1, p2, extra, s)
        else:  # the value's step involves the value alone, with coefficients fixed per node
            A, B, C, D = (v + zero for v in f.value_error(p1, p2, extra, s))
            e0 = zero
            for _ in range(self.T):
                e0 = A * e0 + B * np.abs(x[0]) + C
                x = f.step(*x, p1, p2, extra, s)
                e0 += D * np.abs(x[0])
            e = (e0,) + e[1:]
        values = np.stack(np.broadcast_arrays(*f.loss(*x, s), zero)[:-1])
        if full:
            bounds = np.stack(np.broadcast_arrays(*f.loss_error(*e, *x, s), zero)[:-1])
        else:
            bounds = np.full_like(values, np.nan)
            bounds[0] = f.loss_error_value(e[0], x[0], s)[0] + zero
        return values, bounds

    def terms_and_bounds(self, alpha, beta, *, full: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """``(terms, bounds)``: the six numbers of ``terms`` and a bound on the rounding error of
        each (see the class docstring), both of shape ``(6, *shape)``."""
        if np.ndim(alpha) == 0 and np.ndim(beta) == 0:
            alpha, beta = _finite("alpha", alpha), _finite("beta", beta)
            s = self.nodes
        else:
            alpha, beta = np.broadcast_arrays(np.asarray(alpha, float), np.asarray(beta, float))
            if not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(beta))):
                raise ValueError("alpha and beta must be finite")
            s = self.nodes.reshape((self.nodes.size,) + (1,) * alpha.ndim)
        zero = np.zeros(np.broadcast_shapes(s.shape, np.shape(alpha)))
        with np.errstate(over="ignore", invalid="ignore"):
            values, node_bounds = self._run("residual", alpha, beta, s, zero, full)
            # the factor's run too where the residual's run does not know the excess to 2^-40
            # relative (or is not finite); then, per node, the run with the smaller bound on it
            known = (np.tensordot(node_bounds[0], self.weights, axes=([0], [0]))
                     <= _DOUBT * np.tensordot(values[0], self.weights, axes=([0], [0])))
            if not np.all(known):
                v_fac, b_fac = self._run("factor", alpha, beta, s, zero, full)
                use_factor = ~known & ~(node_bounds[0] <= b_fac[0])
                values = np.where(use_factor, v_fac, values)
                node_bounds = np.where(use_factor, b_fac, node_bounds)
            terms = np.tensordot(values, self.weights, axes=([1], [0]))
            n = self.nodes.size + 1
            gamma_n = n * _U / (1 - n * _U)
            bounds = 2 * (np.tensordot(node_bounds, self.weights, axes=([1], [0]))
                          + gamma_n * np.tensordot(np.abs(values), self.weights, axes=([1], [0])))
        bounds = np.where(np.isfinite(terms), bounds, np.inf)
        return terms, bounds

    def terms(self, alpha, beta) -> np.ndarray:
        """``E[ζ² ·]`` of (excess, ∂₁, ∂₂, ∂₁₁, ∂₁₂, ∂₂₂) in this object's coordinates (the same
        numbers as ``terms_and_bounds``, which also carries the bounds of the derivatives)."""
        return self.terms_and_bounds(alpha, beta, full=False)[0]


@takes_law
def two_parameter_terms(law: TaskLaw, T: int, alpha, beta) -> np.ndarray:
    """``TwoParameterLoss(law, T).terms(alpha, beta)`` (build the object once for many calls)."""
    check_depth(T, MAX_DEPTH_TWO, "two_parameter_terms")
    return TwoParameterLoss(law, T).terms(alpha, beta)


@takes_law
def minimise_two(law: TaskLaw, T: int) -> tuple[float, float]:
    """The global minimiser ``(α_T, β_T)`` of the two-parameter population loss (α = γ − β from
    ``minimise_two_residual``).

    **Accuracy.**  No bound is proved: β is located on an 801-point grid of the profile, refined by
    Brent's bounded method (``xatol = 1e-15``) and polished by at most 30 Newton steps on the full
    gradient, stopped at a step below 1e-16 (β) and 1e-16·|γ| (γ) or where the Hessian is not
    positive definite in float64.  α = γ − β is then rounded once, so α carries an absolute error of
    about u·|β| even where γ is known to relative accuracy."""
    check_depth(T, MAX_DEPTH_TWO, "minimise_two")
    gamma, beta = minimise_two_residual(law, T)
    return float(gamma - beta), float(beta)


@takes_law
def minimise_two_residual(law: TaskLaw, T: int) -> tuple[float, float]:
    """The global minimiser as ``(γ_T, β_T)`` with ``γ_T = α_T + β_T``.

    In (γ, β) the Bayes residual is ``ρ_T = −q^T + γ λ Σ_k q^k`` (``q = 1 + βλ``): the loss is
    quadratic in γ, so for fixed β the Newton step from γ = 0 is exact, and the profile
    ``β ↦ min_γ L`` is one-dimensional: scan it on a grid of β, refine the best cell with Brent's
    bounded method, then polish (γ, β) with Newton steps on the full gradient.  Working in γ keeps
    γ_T accurate where it is far below the rounding of α (it is ~1e-16 by T = 50 on U(0.5, 4)).
    Independent of the gradient-flow integrator, which it is compared with."""
    check_depth(T, MAX_DEPTH_TWO, "minimise_two_residual")
    T = check_depth(T)
    lo, hi = signal_bounds_for(law)
    if T == 1:
        raise ValueError("at T = 1 the two-parameter loss does not depend on β: no unique minimiser")
    if lo == hi:
        raise ValueError(
            f"s = {lo:g} on every prompt with m ≠ 0: the two-parameter loss is 0 on a whole curve "
            "α(1+s)·Σ_k (1+β(1+s))^k = 1, so it has no unique minimiser; use a law with spread in s")
    loss = TwoParameterLoss(law, T, "gamma-beta")

    def gamma_of(beta):
        _, dg, _, dgg, _, _ = loss.terms(0.0, beta)
        return -dg / dgg

    def profile(beta):
        with np.errstate(all="ignore"):
            gamma = np.asarray(gamma_of(beta), float)
            bad = ~np.isfinite(gamma)  # |1 + β(1+s)|^T overflowed: no finite profile there
            vals = loss.terms(np.where(bad, 0.0, gamma), beta)[0]
        return np.where(bad | ~np.isfinite(vals), np.nan, vals)

    # |1 + β(1+s)| < 1 on the support needs β ∈ (−2/(1+s_hi), 0); the grid reaches beyond both ends
    grid = np.linspace(-4.0 / (1.0 + lo), 1.0 / (1.0 + hi), 801)
    vals = profile(grid)
    k = int(np.nanargmin(np.where(np.isfinite(vals), vals, np.nan)))
    k0, k1 = max(k - 1, 0), min(k + 1, len(grid) - 1)
    res = optimize.minimize_scalar(lambda b: float(profile(b)), bounds=(grid[k0], grid[k1]),
                                   method="bounded", options={"xatol": 1e-15})
    b = float(res.x)
    g = float(gamma_of(b))
    for _ in range(30):  # Newton polish on the full gradient
        _, gg, gb, hgg, hgb, hbb = loss.terms(g, b)
        det = hgg * hbb - hgb**2
        if not (np.isfinite(det) and det > 0 and hgg > 0):
            break
        dg = (hbb * gg - hgb * gb) / det
        db = (hgg * gb - hgb * gg) / det
        g, b = g - dg, b - db
        if abs(db) < 1e-16 and abs(dg) <= 1e-16 * max(abs(g), 1e-300):
            break
    return float(g), float(b)
