"""Gradient flow on the schedule of the untied one-parameter LCA (an extension beyond arXiv:2602.04872).

The population excess ``L(α) = E[ζ² A(s) q(1+s)²]``, ``q(λ) = ∏_t (1 − α_t λ)`` (``numerics.untied``) is
a polynomial in ``α = (α_1 … α_T)``, not convex, and symmetric under permutations of the layers.
Its stationary points with pairwise distinct α's are all global minima: ``∂L/∂α_t = 0`` reads
``∫ q(λ) · λ ∏_{j≠t}(1 − α_j λ) dμ = 0``, and for distinct α's the products ``∏_{j≠t}`` span every
polynomial of degree < T (a Lagrange basis), so q is orthogonal to all of them with respect to
``λ dμ``: the optimal polynomial.  Stationary points with repeated α's are not excluded (the flow
keeps equal α's equal: from the tied start ``α_t ≡ α`` it can only reach the tied α_T), so whether
the flow from random starts reaches the optimum is measured here, not assumed.

The flow ``dα/dt = −∇L`` is integrated on the rescaled clock ``dα/dσ = −∇L/L = −∇ log L`` (a positive
rescaling of the vector field: the same orbit and the same limit; ``L`` itself spans many decades)
with LSODA and the exact Jacobian ``−∇² log L``.  The derivatives come from the layer's multiplier
``m(α, s) = 1 − α(1+s)`` and ``∂m/∂α`` (``theory.untied``, compiled): ``∂_t q = m′_t ∏_{j≠t} m_j``,
``∂_s∂_t q = m′_s m′_t ∏_{j≠s,t} m_j`` (s ≠ t) and ``∂_t² q = 0`` (q is linear in each α_t).

A flow is **at rest** when ``‖∇ log L‖_∞ ≤ GRADIENT_REST`` (then ``log L`` is within
``½ gᵀ H⁻¹ g`` of its local minimum, far below the rounding of L at the curvatures met here); it
**reaches the optimum** when its relative gap ``(L_end − L*)/L*`` to the optimal excess
``L* = untied_excess(optimal_schedule(law, T).alphas)`` (the same quadrature, so the gap is not
blurred by the discretisation) is at most ``GAP_REACHED``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .law_language import takes_law
from .task_law import TaskLaw
from .untied import (
    UntiedSchedule,
    _amplitude,
    _excess_rule,
    _multiplier,
    _schedule,
    _signal,
    optimal_schedule,
    untied_excess,
)
from .validate import InputError, check_depth, check_seed

__all__ = [
    "GAP_REACHED",
    "GRADIENT_REST",
    "FlowSurvey",
    "ScheduleFlow",
    "flows_from_random_starts",
    "log_excess_derivatives",
    "schedule_flow",
]

GRADIENT_REST = 1e-9
"""``‖∇ log L‖_∞`` at which a flow is at rest."""

GAP_REACHED = 1e-9
"""Largest relative gap ``(L − L*)/L*`` that counts as reaching the optimum: the optimum's own
relative accuracy (below 1e-9, ``numerics.untied``) and far above the gap at rest (of order
``GRADIENT_REST²`` over the curvature)."""

SIGMA_MAX = 1e4
"""End of the rescaled clock: a flow not at rest by then is reported as still moving."""

ESCAPE = 1e3
"""A flow with some ``|α_t| > ESCAPE`` is stopped as diverged."""

RTOL, ATOL = 1e-8, 1e-11
"""LSODA's tolerances: the orbit is followed to about 1e-8 relative; where the flow ends is decided
by the rest test and the gap to the optimum, not by these (1e-10 costs twice the steps for the same
end points)."""


@takes_law
def log_excess_derivatives(law: TaskLaw, alphas: Sequence[float]) -> tuple[float, np.ndarray, np.ndarray]:
    """``(log L, ∇ log L, ∇² log L)`` of the untied excess at the schedule ``alphas`` (natural log;
    computed with q scaled by its largest value on the nodes, which cancels in every ratio)."""
    a = _schedule(alphas)
    rule = _excess_rule(law, a.size)
    return _log_derivatives(rule.nodes, rule.weights * _amplitude()(rule.nodes)[0], a)


def _log_derivatives(s: np.ndarray, w: np.ndarray, a: np.ndarray, hessian: bool = True
                     ) -> tuple[float, np.ndarray, np.ndarray | None]:
    """``(log L, ∇ log L, ∇² log L or None)`` on the nodes ``s`` with weights ``w`` (``E[ζ²]·A(s)·P``)."""
    T = a.size
    m, dm = _multiplier()(a[None, :], s[:, None])
    m, dm = np.broadcast_to(m, (s.size, T)), np.broadcast_to(dm, (s.size, T))
    with np.errstate(divide="ignore"):
        top = float(np.log(np.abs(m)).sum(axis=1).max())
    scale = math.exp(-top / T)  # every factor scaled alike: the scaled q is at most 1 in size
    ms, dms = m * scale, dm * scale
    q = ms.prod(axis=1)
    L = float(np.dot(w, q * q))
    dq = dms * _leave_one_out(ms)  # ∂_t q = m′_t ∏_{j≠t} m_j
    g = 2 * (w * q) @ dq / L
    if not hessian:
        return math.log(L) + 2 * top, g, None
    hess = 2 * (dq.T * w) @ dq
    for t in range(T if T > 1 else 0):  # ∂_t∂_u q = m′_t m′_u ∏_{j≠t,u} (u ≠ t), ∂_t² q = 0
        both = np.insert(_leave_one_out(np.delete(ms, t, axis=1)), t, 0.0, axis=1)
        hess[t] += 2 * (w * q) @ (dms[:, [t]] * dms * both)
    return math.log(L) + 2 * top, g, hess / L - np.outer(g, g)


def _leave_one_out(x: np.ndarray) -> np.ndarray:
    """``out[:, t] = ∏_{j≠t} x[:, j]`` by prefix and suffix products (no division: factors may be 0)."""
    ones = np.ones((x.shape[0], 1))
    prefix = np.cumprod(np.hstack([ones, x[:, :-1]]), axis=1)
    suffix = np.cumprod(np.hstack([ones, x[:, :0:-1]]), axis=1)[:, ::-1]
    return prefix * suffix


@dataclass(frozen=True)
class ScheduleFlow:
    """One gradient flow on the schedule: its ``start``, its end point ``alphas`` (sorted), the
    log10 excess there, the relative gap ``(L_end − L*)/L*`` to the optimum, whether it came to rest
    (``‖∇ log L‖_∞ ≤ GRADIENT_REST``), the rescaled time ``sigma`` at its end and ``reason``:
    ``"at rest"``, ``"still moving at σ = …"``, ``"diverged"`` or the integrator's message."""

    start: tuple[float, ...]
    alphas: tuple[float, ...]
    log10_excess: float
    relative_gap: float
    at_rest: bool
    sigma: float
    reason: str

    @property
    def reached(self) -> bool:
        return self.relative_gap <= GAP_REACHED

    def to_json(self) -> dict:
        return {"start": list(self.start), "alphas": list(self.alphas), "log10_excess": self.log10_excess,
                "relative_gap": self.relative_gap, "at_rest": self.at_rest, "sigma": self.sigma,
                "reason": self.reason, "reached": self.reached}


def _optimal_log_excess(law: TaskLaw, T: int, optimum: UntiedSchedule | None) -> tuple[UntiedSchedule, float]:
    """The optimum and ``log L*`` on the flows' own quadrature."""
    opt = optimum if optimum is not None else optimal_schedule(law, T)
    if opt.T != T:
        raise InputError(f"the optimum given is for T = {opt.T}, the flow has T = {T}")
    if opt.exact_zero:
        raise InputError(f"{law.spec()}: s takes at most {opt.atoms} values where m ≠ 0, so the optimal "
                         f"excess at T = {T} is exactly 0 and log L has no minimum to flow to; use T < {opt.atoms}")
    best = untied_excess(law, opt.alphas)
    return opt, math.log(best.mantissa) + best.log_scale


@takes_law
def schedule_flow(law: TaskLaw, alpha0s: Sequence[float], *, optimum: UntiedSchedule | None = None,
                  sigma_max: float = SIGMA_MAX) -> ScheduleFlow:
    """The gradient flow of the untied excess from ``alpha0s`` (module docstring), compared with
    ``optimum`` (default: ``optimal_schedule(law, len(alpha0s))``)."""
    from scipy.integrate import solve_ivp

    a0 = _schedule(alpha0s)
    T = a0.size
    _, log_best = _optimal_log_excess(law, T, optimum)
    rule = _excess_rule(law, T)
    s, w = rule.nodes, rule.weights * _amplitude()(rule.nodes)[0]
    keep = w > 0
    s, w = s[keep], w[keep]

    def field(_, y):
        return -_log_derivatives(s, w, y, hessian=False)[1]

    def jac(_, y):
        return -_log_derivatives(s, w, y)[2]

    def rest(_, y):
        return float(np.abs(_log_derivatives(s, w, y, hessian=False)[1]).max()) - GRADIENT_REST

    def escape(_, y):
        return ESCAPE - float(np.abs(y).max())

    rest.terminal = escape.terminal = True
    sol = solve_ivp(field, (0.0, sigma_max), a0, method="LSODA", jac=jac, rtol=RTOL, atol=ATOL,
                    events=[rest, escape])
    end = sol.y[:, -1]
    log_L = _log_derivatives(s, w, end, hessian=False)[0]
    at_rest = bool(sol.status == 1 and sol.t_events[0].size)
    if at_rest:
        reason = "at rest"
    elif sol.status == 1:
        reason = "diverged"
    elif sol.status == 0:
        reason = f"still moving at σ = {sol.t[-1]:g}"
    else:
        reason = f"integrator stopped: {sol.message}"
    return ScheduleFlow(tuple(float(x) for x in a0), tuple(float(x) for x in np.sort(end)),
                        log_L / math.log(10), math.expm1(log_L - log_best), at_rest, float(sol.t[-1]), reason)


@dataclass(frozen=True)
class FlowSurvey:
    """Flows from ``len(flows)`` random starts at depth ``T`` (α_t i.i.d. uniform on ``box``):
    how many reached the optimum, and their gaps."""

    T: int
    box: tuple[float, float]
    seed: int
    optimum: UntiedSchedule
    flows: tuple[ScheduleFlow, ...]

    @property
    def reached(self) -> int:
        return sum(f.reached for f in self.flows)

    @property
    def fraction(self) -> float:
        return self.reached / len(self.flows)

    @property
    def worst_gap(self) -> float:
        return max(f.relative_gap for f in self.flows)

    def to_json(self) -> dict:
        return {"T": self.T, "box": list(self.box), "seed": self.seed, "starts": len(self.flows),
                "reached": self.reached, "fraction": self.fraction, "worst_relative_gap": self.worst_gap,
                "gap_reached": GAP_REACHED, "optimum": self.optimum.to_json(),
                "flows": [f.to_json() for f in self.flows]}


@takes_law
def flows_from_random_starts(law: TaskLaw, T: int, starts: int = 10, *, seed: int = 0,
                             box: tuple[float, float] | None = None) -> FlowSurvey:
    """``starts`` gradient flows from schedules with α_t i.i.d. uniform on ``box`` (default
    ``(0, 2/λ_lo)``, ``λ_lo = 1 + s_lo``: it holds every root ``1/α_t`` of the optimum and starts
    outside the region where every layer contracts)."""
    T = check_depth(T)
    seed = check_seed(seed)
    if isinstance(starts, bool) or not isinstance(starts, int) or starts < 1:
        raise InputError(f"starts must be a positive whole number, got {starts!r}")
    lo, _ = _signal(law)
    box = (0.0, 2.0 / (1.0 + lo)) if box is None else (float(box[0]), float(box[1]))
    if not (math.isfinite(box[0]) and math.isfinite(box[1]) and box[0] < box[1]):
        raise InputError(f"box must be two finite numbers lo < hi, got {box!r}")
    opt, _ = _optimal_log_excess(law, T, None)
    rng = np.random.default_rng(seed)
    flows = tuple(schedule_flow(law, rng.uniform(*box, size=T), optimum=opt) for _ in range(starts))
    return FlowSurvey(T, box, seed, opt, flows)
