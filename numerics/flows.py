"""Gradient flows of the reduced LCA models on the population loss, integrated with SciPy.

``dθ/dt = −∇L(θ)``.  Two numerical traps (docs/model.md) shape the integrators:

- The two-parameter flow falls quickly into the valley ``β ≈ −α`` and then creeps along it for
  times like 10^10: it is integrated in log-time ``τ = log(1 + t)``, where
  ``dθ/dτ = −(1 + t) ∇L(θ)``, with LSODA (which switches to BDF, a stiff method, once the
  problem is stiff) and the exact Jacobian ``−(1 + t) ∇²L`` from the SymPy Hessian; it stops
  when the Newton step to the minimum is below 1e-12.
- For the one-parameter model at large T the gradient is ``e^{(2T−1)ℓ_max}`` times an O(1) number
  and real time to converge exceeds any float.  ``time="rescaled"`` integrates
  ``dα/dσ = −L'(α)/e^{(2T−1)ℓ_max(α)}`` instead: a positive rescaling of the vector field, so the
  orbit and the limit are the same as the real flow's (only the clock differs).  ``time="real"``
  integrates the real flow in log-time; ``"auto"`` picks real where it converges before ``t = e^60``.
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.integrate import LSODA, OdeSolution

from mmicl.numerics.laws.language import takes_law
from mmicl.numerics.laws.task import TaskLaw
from .validate import MAX_DEPTH_FLOW_TWO, MAX_DEPTH_ONE, check_count, check_real
from .lca import (TwoParameterLoss, signal_bounds_for, alpha_star, check_depth, loss_curvature_one,
                  loss_gradient_one)

__all__ = ["CONVERGED_TWO", "FlowResult", "OUTCOMES_TWO", "RestTwo", "at_rest_one", "basin_two", "gradient_flow_one",
           "flow_two_horizon", "gradient_flow_two", "rest_two"]


@dataclass
class FlowResult:
    """End point and trajectory of a gradient flow.

    ``t``: times of the trajectory (real flow time, or the rescaled clock σ, see ``clock``);
    ``path``: parameters at those times, shape (len(t), n_params); ``converged``: the flow came to
    rest (see ``reason``); ``t_end``: the time at the end."""

    alpha: float
    beta: float | None
    converged: bool
    t_end: float
    clock: str  # "real" | "rescaled"
    reason: str
    t: np.ndarray = field(repr=False)
    path: np.ndarray = field(repr=False)
    gamma: float | None = None  # α + β, kept as its own coordinate by the two-parameter flow
    outcome: str | None = None
    """The two-parameter flow's named outcome (``OUTCOMES_TWO``); None for the other flows."""
    real_time_log10: Callable[[], np.ndarray] | None = field(default=None, repr=False, compare=False)
    """Computes ``log10_time`` on first use (a quadrature along the orbit: not paid by callers
    that only want the end point)."""

    @functools.cached_property
    def log10_time(self) -> np.ndarray:
        """log10 of the real flow time at each point of ``path`` (−inf at the start, t = 0)."""
        if self.real_time_log10 is not None:
            return self.real_time_log10()
        with np.errstate(divide="ignore"):
            return np.log10(np.asarray(self.t, float))

    @property
    def alphas(self) -> np.ndarray:
        """α along the trajectory (1-D)."""
        return np.asarray(self.path, float)[:, 0]

    @property
    def betas(self) -> np.ndarray | None:
        """β along the trajectory (1-D), or None for the one-parameter flow."""
        return None if self.beta is None else np.asarray(self.path, float)[:, 1]

    @property
    def time(self) -> np.ndarray:
        """Real flow time at each point of ``path``, whatever clock the integrator used (inf where
        it exceeds float64: read ``log10_time`` there)."""
        if self.clock == "real":
            return np.asarray(self.t, float)
        with np.errstate(over="ignore"):
            return np.power(10.0, self.log10_time)

    def to_json(self) -> dict:
        return {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma, "converged": self.converged,
                "outcome": self.outcome, "t_end": self.t_end, "clock": self.clock, "reason": self.reason}


def _trajectory(sol, t_eval):
    """Real times and parameters: the solver's own steps, or ``t_eval`` read off the dense output
    (times past the end of the integration are dropped).  ``sol``: a ``solve_ivp`` result or an
    ``_Integration`` (both: ``t`` in log-time, ``y`` of shape (dim, steps))."""
    if t_eval is None:
        return np.expm1(sol.t), sol.y.T
    taus = np.log1p(np.asarray(t_eval, float))
    taus = taus[taus <= sol.t[-1]]
    return np.expm1(taus), sol.sol(taus).T


@dataclass
class _Integration:
    """What ``_integrate_until`` did: ``t`` (the solver's clock at each accepted step, from 0),
    ``y`` (shape (dim, steps), as ``solve_ivp``'s), ``stopped`` (the stop test's answer, or None), ``failed`` (the
    solver's message if it gave up), ``sol`` (dense output, or None)."""

    t: np.ndarray
    y: np.ndarray
    stopped: str | None
    failed: str | None
    sol: OdeSolution | None


def _integrate_until(rhs, jac, y0, t_max: float, stop, *, rtol: float, atol: float,
                     dense: bool = False, max_restarts: int = 3) -> _Integration:
    """LSODA from 0 to ``t_max``, asking ``stop(y)`` after every accepted step and ending at the
    first step where it answers (a string).  Unlike ``solve_ivp``'s events, nothing is root-found on
    the interpolant: the stop tests of the two-parameter flow jump (where the loss overflows or the
    Hessian stops being positive definite), and a root finder then has no sign change to find.  A
    solver that gives up is restarted from its last accepted point (at most ``max_restarts``
    times), then reported (``failed``), never raised."""
    solver = LSODA(rhs, 0.0, np.asarray(y0, float), t_max, jac=jac, rtol=rtol, atol=atol)
    ts, ys, pieces = [0.0], [solver.y.copy()], []
    stopped, failed, restarts = stop(solver.y), None, 0
    while stopped is None and solver.status == "running":
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            message = solver.step()
        warned = [str(w.message) for w in caught]
        if solver.status != "failed" and not np.all(np.isfinite(solver.y)):
            solver.status, message = "failed", "a step produced a non-finite state"
        if solver.status == "failed" and restarts < max_restarts:
            # LSODA gave up (repeated convergence failures on the stiff valley): start it afresh
            # from the last accepted point, which resets its step-size and method history
            restarts += 1
            solver = LSODA(rhs, ts[-1], ys[-1], t_max, jac=jac, rtol=rtol, atol=atol)
            continue
        if solver.status == "failed":
            failed = (message or "the solver failed") + f" (after {restarts} restarts)"
            failed += f"; last warning: {warned[-1]}" if warned else ""
            break
        if dense:
            pieces.append(solver.dense_output())
        ts.append(solver.t)
        ys.append(solver.y.copy())
        stopped = stop(solver.y)
    sol = OdeSolution(ts, pieces) if dense and pieces else None
    return _Integration(np.asarray(ts), np.asarray(ys).T, stopped, failed, sol)


REST_HALF_WIDTH = 0.5e-12
"""The one-parameter flow is at rest when L' changes sign within ±this of α: the minimiser is
then provably within this distance (L' is increasing: the loss is convex)."""


@takes_law
def gradient_flow_one(
    law: TaskLaw,
    T: int,
    alpha0: float = 0.0,
    *,
    time: str = "auto",
    t_eval: np.ndarray | None = None,
    tau_max: float = 60.0,
    sigma_max: float | None = None,
    rtol: float = 1e-11,
    atol: float = 1e-14,
) -> FlowResult:
    """The one-parameter flow ``dα/dt = −L'(α)`` from ``alpha0``.

    Clocks (each a positive rescaling of the same vector field, so the orbit and its limit are the
    real flow's; only the time axis differs, and ``log10_time`` always gives the real time):

    - ``"real"``: log-time ``τ = log(1 + t)``, ``dα/dτ = −e^τ L'(α)``;
    - ``"rescaled"``: ``dα/dσ = −L'(α)/e^{(2T−1)ℓ_max(α)}`` (the O(1) mantissa of L');
    - ``"normalised"``: ``dα/dσ = −L'/(|L''| + |L'|)``, which approaches the minimiser like
      e^{−σ} at a regular minimum and like e^{−σ/(2T−1)} at a degenerate one (s a point mass,
      T ≥ 2, where L ∝ (α − α_T)^{2T} and the real flow takes a time ∝ distance^{−(2T−2)});
    - ``"auto"``: real where the curvature at α* is not astronomically small, rescaled where it is,
      normalised where it is 0; a clock whose run does not come to rest is followed by the
      normalised one.

    ``t_eval`` (real clock only): times at which to record α.  Converged means the flow reached a
    point where L' changes sign within ±5e-13 (``REST_HALF_WIDTH``): the minimiser is then within
    that distance, whatever the curvature there."""
    T = check_depth(T, MAX_DEPTH_ONE, "flow_one")
    alpha0 = check_real("alpha0", alpha0)
    tau_max, rtol, atol = (check_real(k, v, lo=0.0) for k, v in (("tau_max", tau_max), ("rtol", rtol), ("atol", atol)))
    sigma_max = None if sigma_max is None else check_real("sigma_max", sigma_max, lo=0.0)
    signal_bounds_for(law)
    alpha0 = float(alpha0)
    if not math.isfinite(alpha0):
        raise ValueError(f"alpha0 must be finite, got {alpha0}")
    if time not in ("auto", "real", "rescaled", "normalised"):
        raise ValueError(f"time must be auto, real, rescaled or normalised, got {time!r}")
    if t_eval is not None and time not in ("real", "auto"):
        raise ValueError("t_eval needs the real clock (time='real')")
    if time != "auto":
        return _flow_one(law, T, alpha0, time, t_eval, tau_max, sigma_max, rtol, atol)
    curvature = loss_curvature_one(law, T, alpha_star(law))
    first = ("normalised" if curvature.mantissa <= 0 else
             "real" if curvature.log_scale > -40 else "rescaled")
    if t_eval is not None:
        first = "real"
    result = _flow_one(law, T, alpha0, first, t_eval, tau_max, sigma_max, rtol, atol)
    if result.converged or first == "normalised" or t_eval is not None:
        return result
    return _flow_one(law, T, alpha0, "normalised", None, tau_max, sigma_max, rtol, atol)


def _signed_log(v) -> tuple[float, float]:
    """(sign, log|v|) of a ``ScaledValue``."""
    if v.mantissa == 0:
        return 0.0, -math.inf
    return math.copysign(1.0, v.mantissa), v.log_scale + math.log(abs(v.mantissa))


def _flow_one(law, T, alpha0, clock, t_eval, tau_max, sigma_max, rtol, atol) -> FlowResult:
    def grad(a):
        return loss_gradient_one(law, T, a)

    def curv(a):
        return loss_curvature_one(law, T, a)

    if clock == "real":
        def rhs(tau, y):
            g = grad(y[0])
            return [-math.exp(tau) * g.mantissa * math.exp(g.log_scale)]

        def jac(tau, y):
            h = curv(y[0])
            return [[-math.exp(tau) * h.mantissa * math.exp(h.log_scale)]]

        t_max = tau_max
    elif clock == "rescaled":
        def rhs(sigma, y):
            return [-grad(y[0]).mantissa]

        jac, t_max = None, sigma_max or 1e15
    else:
        def rhs(sigma, y):
            sg, lg = _signed_log(grad(y[0]))
            _, lh = _signed_log(curv(y[0]))
            return [-sg * math.exp(lg - np.logaddexp(lh, lg))] if sg else [0.0]

        # e^{−σ/(2T−1)} at worst (a degenerate minimum): 60·(2T−1) covers a distance ratio of e^60
        jac, t_max = None, sigma_max or 60.0 * (2 * T - 1)

    def stop(y):
        return "rest" if at_rest_one(law, T, float(y[0])) else None

    run = _integrate_until(rhs, jac, [alpha0], t_max, stop, rtol=rtol, atol=atol,
                           dense=t_eval is not None and clock == "real")
    if clock == "real":
        t, path = _trajectory(run, t_eval)
        t_end = float(np.expm1(run.t[-1]))
    else:
        t, path = run.t, run.y.T
        t_end = float(run.t[-1])
    end = float(run.y[0, -1])
    ok = run.stopped == "rest"  # the stop test has already been asked at the last accepted point
    if ok:
        reason = f"came to rest (L' changes sign within ±{REST_HALF_WIDTH:g} of α)"
    elif run.failed:
        reason = f"stiff failure at {'t' if clock == 'real' else 'σ'} = {t_end:.3g}: {run.failed}"
    else:
        reason = f"did not come to rest by {'t' if clock == 'real' else 'σ'} = {t_end:.3g}"
    real_time = None if clock == "real" else functools.partial(_log10_real_time, law, T, path[:, 0])
    return FlowResult(end, None, bool(ok), t_end, clock, reason, t, path, real_time_log10=real_time)


@takes_law
def at_rest_one(law: TaskLaw, T: int, alpha: float, half_width: float = REST_HALF_WIDTH) -> bool:
    """True when the minimiser of the (convex) one-parameter loss is provably within
    ``half_width`` of α: L'(α) = 0, or L'(α − w) ≤ 0 ≤ L'(α + w)."""
    if loss_gradient_one(law, T, alpha).mantissa == 0:
        return True
    return (loss_gradient_one(law, T, alpha - half_width).mantissa <= 0
            <= loss_gradient_one(law, T, alpha + half_width).mantissa)


def _log10_real_time(law: TaskLaw, T: int, alphas: np.ndarray, nodes: int = 8) -> np.ndarray:
    """Real time along a one-parameter orbit, in log10: α moves monotonically, so
    ``t(α) = ∫_{α₀}^{α} dα' / (−L'(α'))``, summed over the segments between consecutive points with
    an ``nodes``-point Gauss–Legendre rule, each term ``e^{−log_scale}/|mantissa|`` kept in logs
    (the real time at large T is far beyond float64)."""
    x, w = np.polynomial.legendre.leggauss(nodes)
    logs = [-math.inf]
    for a0, a1 in zip(alphas[:-1], alphas[1:]):
        h = (a1 - a0) / 2
        if h == 0:
            logs.append(logs[-1])
            continue
        terms = []
        for xi, wi in zip(x, w):
            g = loss_gradient_one(law, T, a0 + h * (xi + 1))
            terms.append(math.log(wi * abs(h)) - g.log_scale - math.log(abs(g.mantissa)) if g.mantissa else math.inf)
        logs.append(float(np.logaddexp(logs[-1], np.logaddexp.reduce(terms))))
    return np.asarray(logs) / math.log(10)


TAU_MAX_TWO = 80.0
"""The end of the two-parameter flow's log-time integration, ``τ = log(1 + t)`` (t ≈ 5.5·10^34)."""


# In φ = (γ, β) with γ = α + β: θ = (α, β) = A φ, A = [[1, −1], [0, 1]], and the flow
# dθ/dt = −∇_θ L reads dφ/dt = −(AᵀA)⁻¹ ∇_φ L = −M ∇_φ L with M = A⁻¹A⁻ᵀ:
_METRIC = np.array([[2.0, 1.0], [1.0, 1.0]])


@takes_law
def gradient_flow_two(
    law: TaskLaw,
    T: int,
    alpha0: float = 0.0,
    beta0: float = 0.0,
    *,
    t_eval: np.ndarray | None = None,
    tau_max: float = TAU_MAX_TWO,
    bound: float = 10.0,
    rtol: float = 1e-8,
    atol: float = 1e-12,
) -> FlowResult:
    """The two-parameter flow ``d(α, β)/dt = −∇L`` from ``(alpha0, beta0)``, in log-time
    ``τ = log(1 + t)``: ``dθ/dτ = −e^τ ∇L`` (as ``dt/dτ = e^τ``), with LSODA (BDF once stiff) and
    the exact Jacobian from the SymPy Hessian.

    The same flow is integrated in the coordinates ``(γ, β)``, ``γ = α + β``, where it reads
    ``dφ/dt = −M ∇_φ L`` with ``M = [[2, 1], [1, 1]]`` (the pull-back of the Euclidean metric):
    the trajectory is identical, and γ keeps its digits when the flow settles in the valley
    β ≈ −α (γ_T ~ 1e-16 by T = 50, below the rounding of α).

    Outcomes (``FlowResult.outcome``; ``converged`` is True for the first two only):

    - ``"minimum"``: the Hessian is positive definite beyond its rounding bound and the Newton step
      to the minimum, widened by the gradient's rounding bound, is below 1e-12 (``rest_two``; far
      above the solver's ``atol``, far below any difference the checks look at);
    - ``"degenerate"``: every gradient component is within its own rounding bound but the Hessian is
      not definite beyond its rounding bound (a flat minimiser, or a set of them);
    - ``"plateau"``: the flow ended outside the stable region with α = γ − β within 10⁴ ulps of β
      (``PLATEAU_ULPS``), on the plateau α ≈ 0 of the zero predictor, where float64 cannot resolve α;
    - ``"diverged"``: |α| or |β| exceeded ``bound`` or the excess exceeded float64 (the loss is
      evaluated accurately everywhere, so this is the true loss, not an overflow of its rounding);
    - ``"stiff-failure"``: the integrator gave up (after restarts);
    - ``"moving"``: none of these by ``τ_max`` (t ≈ 5·10^34).

    Each reason says whether the end is inside the stable region ``|1 + β(1+s)| ≤ 1``."""
    T = check_depth(T, MAX_DEPTH_FLOW_TWO, "flow_two")
    alpha0, beta0 = check_real("alpha0", alpha0), check_real("beta0", beta0)
    tau_max, bound, rtol, atol = (check_real(k, v, lo=0.0) for k, v in (("tau_max", tau_max), ("bound", bound), ("rtol", rtol), ("atol", atol)))
    T = check_depth(T)
    loss = TwoParameterLoss(law, T, "gamma-beta")
    if not (math.isfinite(float(alpha0)) and math.isfinite(float(beta0))):
        raise ValueError(f"the start (alpha0, beta0) must be finite, got {(alpha0, beta0)}")
    y0 = [float(alpha0) + float(beta0), float(beta0)]
    _, hi = signal_bounds_for(law)
    stable = (-2.0 / (1.0 + hi), 0.0)  # |1 + β(1+s)| ≤ 1 on the whole support

    last: dict = {}

    def terms(y):
        """The loss terms at y; the right-hand side, the Jacobian and the stop test ask at the same
        point, so keep the last."""
        key = (float(y[0]), float(y[1]))
        if not (math.isfinite(key[0]) and math.isfinite(key[1])):  # a trial point of a failing step
            return np.full(6, np.nan)
        if key not in last:
            last.clear()
            with np.errstate(over="ignore", invalid="ignore"):
                last[key] = loss.terms(*key)
        return last[key]

    def rhs(tau, y):
        _, gg, gb, *_ = terms(y)
        return -math.exp(tau) * (_METRIC @ np.array([gg, gb]))

    def jac(tau, y):
        _, _, _, hgg, hgb, hbb = terms(y)
        return -math.exp(tau) * (_METRIC @ np.array([[hgg, hgb], [hgb, hbb]]))

    def escaped(y) -> bool:
        size = max(abs(y[0] - y[1]), abs(y[1]))
        return size > bound or not np.all(np.isfinite(terms(y)))

    def stop(y) -> str | None:
        if escaped(y):
            return "escaped"
        # the cheap test on the values first; the bounded one decides
        if _newton_step_two(terms(y)) < REST_NEWTON_STEP and rest_two(loss, y[0], y[1]).minimum:
            return "rest"
        return None

    run = _integrate_until(rhs, jac, y0, tau_max, stop, rtol=rtol, atol=atol, dense=t_eval is not None)
    t, path = _trajectory(run, t_eval)
    path = np.column_stack([path[:, 0] - path[:, 1], path[:, 1]])  # back to (α, β)
    end, t_end = run.y[:, -1], float(np.expm1(run.t[-1]))
    outcome, reason = _classify_two(loss, end, escaped(end), run, t_end, bound, stable)
    return FlowResult(float(end[0] - end[1]), float(end[1]), outcome in CONVERGED_TWO, t_end, "real", reason,
                      t, path, gamma=float(end[0]), outcome=outcome)


REST_NEWTON_STEP = 0.5e-12
"""The two-parameter flow is at rest at a minimum when the Hessian is positive definite beyond its
rounding bound and the Newton step, widened by the gradient's rounding bound, is below this."""

PLATEAU_ULPS = 1e4
"""A flow that ends outside the stable region with |α| within this many ulps of β is on the
plateau α ≈ 0 of the zero predictor: α = γ − β has fewer than four significant digits there."""

CONVERGED_TWO = ("minimum", "degenerate")
"""Outcomes of the two-parameter flow that are stationary points (``FlowResult.converged``)."""

OUTCOMES_TWO = ("minimum", "degenerate", "plateau", "diverged", "stiff-failure", "moving")


@dataclass(frozen=True)
class RestTwo:
    """The two-parameter rest test at one point, from ``TwoParameterLoss.terms_and_bounds``.

    ``definite``: the Hessian is positive definite beyond its rounding bound (``H₁₁ > e₁₁`` and
    ``det H`` above the bound on its own rounding, which includes the entries' bounds; where the
    entries are ±1e29 and det H cancels to noise, this is False, not a guess);
    ``newton``: ``max_i Σ_j |H⁻¹|_ij (|g_j| + e_j)``, a bound on the Newton step to the minimum of
    the local quadratic model whatever the gradient's rounding (inf unless ``definite``);
    ``resolved``: every gradient component is within its own rounding bound (``|g_i| ≤ e_i``):
    float64 cannot tell the gradient from 0 there.  No allowance is made for the spacing of float64
    at the point: where the curvature is ~1e29 (far outside the stable region) one ulp of β moves
    the gradient by 1e13, and such a point is unresolved, not stationary."""

    finite: bool
    definite: bool
    newton: float
    resolved: bool
    horizon: float = math.inf
    """``log(1 + t)`` the flow needs to come to rest here (``flow_two_horizon``); inf unless
    ``definite``."""

    @property
    def minimum(self) -> bool:
        return self.finite and self.definite and self.newton < REST_NEWTON_STEP


def rest_two(loss: TwoParameterLoss, x: float, y: float, contraction: float = 1e12) -> RestTwo:
    """The rest test of ``loss`` (in its own coordinates) at ``(x, y)``: see ``RestTwo``."""
    values, bounds = loss.terms_and_bounds(float(x), float(y))
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(bounds))):
        return RestTwo(False, False, math.inf, False)
    _, g1, g2, h11, h12, h22 = (float(v) for v in values)
    _, e1, e2, e11, e12, e22 = (float(v) for v in bounds)
    det = h11 * h22 - h12 * h12
    det_error = _det_error(h11, h12, h22, e11, e12, e22)
    definite = h11 > e11 and det > det_error
    resolved = abs(g1) <= e1 and abs(g2) <= e2
    if not definite:
        return RestTwo(True, False, math.inf, bool(resolved))
    with np.errstate(over="ignore", invalid="ignore"):
        inv = np.abs(np.array([[h22, -h12], [-h12, h11]])) / (det - det_error)  # ≥ |H⁻¹| entrywise
        step = inv @ np.array([abs(g1) + e1, abs(g2) + e2])
        # the slowest mode of dφ/dt = −M H φ: λ_min ≥ det(MH)/tr(MH) = det H/tr(MH) (det M = 1)
        trace = float(np.trace(_METRIC @ np.array([[h11, h12], [h12, h22]]))) + 3 * (e11 + 2 * e12 + e22)
        horizon = float(np.log1p(math.log(contraction) * trace / (det - det_error)))
    return RestTwo(True, True, float(np.max(step)), bool(resolved), horizon)


def flow_two_horizon(loss: TwoParameterLoss, gamma: float, beta: float, contraction: float = 1e12) -> float:
    """``log(1 + t)``, t the real time the two-parameter flow needs near its minimiser ``(γ, β)``
    (``loss`` in (γ, β) coordinates) to shrink a distance by ``contraction`` along its slowest
    mode: ``t = log(contraction)/λ_min`` for the linearised flow ``dφ/dt = −M H φ``.  Since
    ``det M = 1``, ``λ_min ≥ det H / tr(MH)``, and ``det H`` is taken at its rounding bound's low
    end: the time returned is an upper bound (within a factor 2).  ``inf`` where the Hessian is not
    positive definite beyond its rounding bound (the minimiser is then not resolved by float64).
    The same number as ``rest_two(...).horizon``.

    With ``τ_max = 80`` (t ≈ 5·10^34), a flow whose horizon exceeds 80 cannot come to rest before
    its integration ends: it creeps along the valley, which is stiff, for tens of thousands of
    steps (s ~ U(0, 1e-8) at T = 3: the soft mode's rate is below 10^-40)."""
    return rest_two(loss, gamma, beta, contraction).horizon


def _det_error(h11, h12, h22, e11, e12, e22) -> float:
    """A bound on |det Ĥ − det H| for a 2×2 Hessian whose entries are within ``e_ij``, with the
    rounding of the three operations."""
    u = 2.0**-53
    return (abs(h11) * e22 + abs(h22) * e11 + e11 * e22 + 2 * abs(h12) * e12 + e12 * e12
            + 3 * u * (abs(h11 * h22) + h12 * h12)) * (1 + 1e-10)


def _classify_two(loss, end, escaped: bool, run, t_end: float, bound: float, stable) -> tuple[str, str]:
    """``(outcome, reason)`` of a two-parameter flow that ended at ``end = (γ, β)``."""
    gamma, beta = float(end[0]), float(end[1])
    alpha = gamma - beta
    outside = not (stable[0] <= beta <= stable[1])
    where = (f"outside the stable region β ∈ [{stable[0]:.4g}, 0] (|1 + β(1+s)| > 1 on part of the support)"
             if outside else "inside the stable region")
    if escaped:
        return "diverged", (f"diverged: left |α|, |β| ≤ {bound:g} or the excess exceeds float64, {where}")
    rest = rest_two(loss, gamma, beta)
    if rest.minimum:
        return "minimum", (f"came to rest at a minimum: the Hessian is positive definite beyond its rounding "
                           f"bound and the Newton step is < {REST_NEWTON_STEP:g}")
    # α = γ − β is known to float64 only up to the spacing of β: within 10⁴ of those (fewer than
    # four significant digits), the flow cannot resolve α (the plateau of the zero predictor, α ≈ 0)
    if abs(alpha) <= PLATEAU_ULPS * np.spacing(abs(beta)) and outside:
        gave_up = f"; the integrator gave up there: {run.failed}" if run.failed else ""
        return "plateau", (f"on the plateau α ≈ 0 of the zero predictor: α = {alpha:.3g} is within "
                           f"{PLATEAU_ULPS:g} ulps of β = {beta:.6g}, fewer digits than float64 needs to "
                           f"resolve it in γ = α + β, {where}{gave_up}")
    if rest.resolved:
        return "degenerate", ("stationary to float64's resolution (the gradient is within its rounding bound), "
                              "but the Hessian is not positive definite beyond its rounding: a degenerate minimiser "
                              "(flat, or a set)")
    if run.failed:
        return "stiff-failure", f"stiff failure at t = {t_end:.3g}: {run.failed}"
    return "moving", f"still moving at t = {t_end:.3g}, {where}"


def _newton_step_two(terms) -> float:
    """max |H⁻¹∇L| where the computed Hessian H is positive definite, else inf (a cheap first test:
    ``rest_two`` decides)."""
    _, ga, gb, haa, hab, hbb = terms
    det = haa * hbb - hab**2
    if not (np.isfinite(det) and haa > 0 and det > 0):
        return math.inf
    return float(max(abs((hbb * ga - hab * gb) / det), abs((haa * gb - hab * ga) / det)))


@takes_law
def basin_two(law: TaskLaw, T: int, n: int, minimiser, on_start=None) -> dict:
    """Run ``gradient_flow_two`` from an n×n grid of starts (α₀ ∈ [−0.5, 1.5], β₀ ∈ [−1.5, 0.5]) and
    classify where each ends: "rest" (a minimum within 1e-8 of ``minimiser``), "other" (a minimum
    elsewhere), or the flow's own outcome otherwise ("degenerate", "plateau", "diverged",
    "stiff-failure", "moving": see ``gradient_flow_two``).  ``on_start()`` is called after each
    start (progress)."""
    T, n = check_depth(T, MAX_DEPTH_FLOW_TWO, "basin_two"), check_count("the grid size n", n, 1, 101)
    alphas = np.linspace(-0.5, 1.5, n)
    betas = np.linspace(-1.5, 0.5, n)
    starts, paths = [], []
    for b0 in betas:
        for a0 in alphas:
            r = gradient_flow_two(law, T, a0, b0)
            if r.outcome == "minimum" and math.hypot(r.alpha - minimiser[0], r.beta - minimiser[1]) < 1e-8:
                status = "rest"
            elif r.outcome == "minimum":
                status = "other"
            else:
                status = r.outcome
            starts.append((float(a0), float(b0), status))
            paths.append(r.path)
            if on_start is not None:
                on_start()
    return {"alphas": alphas, "betas": betas, "starts": starts, "paths": paths}
