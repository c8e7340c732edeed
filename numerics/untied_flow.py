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

**When a flow has come to rest** (``rest_test``).  The rest event of the integrator
(``‖∇ log L‖_∞ ≤ GRADIENT_REST`` as computed) only starts the test; the test itself is sound for the
flow's loss, the quadrature sum ``L(α) = Σ_k W_k q(λ_k)²`` on the nodes and weights of
``excess_rule`` (``W_k`` = the rule's weight times ``A(s_k)``; the rule's own error against the
population is ``numerics.untied``'s ``ρ^{−2·margin}``), and cannot be met by a large curvature alone:

* ``∇ log L`` is evaluated with a **running error bound** ``e_t`` (``_bounded_derivatives``, rigorous
  in the standard model ``fl(x ∘ y) = (x ∘ y)(1 + δ) + η``, ``|δ| ≤ u = 2⁻⁵³``, ``|η| ≤ 2⁻¹⁰⁷⁵``):
  each factor ``m = 1 − α(1+s)`` (compiled as ``−αs − α + 1``) carries ``|m̂ − m| ≤ γ₄(1 + |α|(1+s))``;
  a product of factors with bounds ``ε_j`` and ``b_j = |x̂_j| + ε_j`` errs by at most
  ``∏_j b_j · (Σ_j ε_j/b_j + γ_n)`` (telescoping; leave-one-out sums and products, so a factor near
  0 does not blur the others); each sum ``Σ_k w_k a_k c_k`` errs by at most
  ``Σ_k [(ŵ+e_w)(|â|+e_a)(|ĉ|+e_c) − ŵ|â||ĉ|] + γ_{K+1} Σ_k ŵ|â||ĉ|``; the quotient by ``L`` by
  ``e_N/(L̂ − e_L) + |N̂| e_L/(L̂(L̂ − e_L))``.  Every bound is a sum and product of non-negative
  numbers, so its own rounding is covered by a final factor ``1 + 2γ_{2(K+T)+50}``.  The Hessian's
  entries get bounds ``E_tu`` the same way.  (Not an a-posteriori estimate: nothing is calibrated.)
* A flow is **stationary** (``at_rest``) when, after at most ``POLISH_STEPS`` Newton corrections from
  where the integrator stopped (each below ``POLISH_MAX_STEP`` relative), every component of the
  computed gradient is within its own rounding bound, ``|ĝ_t| ≤ e_t`` (float64 cannot tell it from
  0), *and* ``max_t (|ĝ_t| + e_t) ≤ GRADIENT_REST`` (the bound resolves it: the true
  ``‖∇ log L‖_∞`` is at most that number, ``gradient_bound``).  A large curvature makes ``e_t``
  large (``e_t`` grows like ``√(Σ_k W_k (∂_t q)²/L)``), so it cannot pass the test alone: such a
  point is ``"unresolved"``.
* The Hessian's definiteness is decided without cancellation: **positive definite** when a
  floating-point Cholesky factorisation ``R̂ᵀR̂`` of ``Ĥ − σI`` succeeds with
  ``σ > ‖E‖_F + γ_{T+1}‖R̂‖_F² + u·max_t|Ĥ_tt − σ|`` (Higham, *Accuracy and Stability*, Thm 10.3:
  ``R̂ᵀR̂ = Ĥ − σI + ΔA``, ``|ΔA| ≤ γ_{T+1}|R̂ᵀ||R̂|``; then ``H = R̂ᵀR̂ + σI − ΔA − D + (H − Ĥ)`` is
  positive definite); **a direction of negative curvature** when, for the eigenvector ``v`` of the
  smallest computed eigenvalue, ``vᵀĤv + γ_{2T}|v|ᵀ|Ĥ||v| + |v|ᵀE|v| < 0`` (a Rayleigh quotient
  with its rounding bound: no trust in the eigensolver is needed).

Outcomes (``ScheduleFlow.outcome``): ``"minimum"`` (stationary, Hessian positive definite: a strict
local minimum of L, one of the ``T!`` orderings of its schedule — the minimisers of L are a set of
isolated points permuted into each other; ``alphas`` are reported sorted), ``"saddle"`` (stationary,
with a certified direction of descent: not a minimum, e.g. the tied α_T from a tied start),
``"degenerate"`` (stationary, Hessian singular to within its rounding bound: a flat direction, the
minimiser may be a set or the point a degenerate saddle — float64 cannot tell which),
``"unresolved"`` (the integrator's rest event fired but the rest test above failed),
``"still moving"``, ``"diverged"`` and ``"integrator stopped"``.  A flow **reaches the optimum** when
its relative gap ``(L_end − L*)/L*`` to the optimal excess ``L* = untied_excess(optimal_schedule(law,
T).alphas)`` (the same quadrature, so the gap is not blurred by the discretisation) is at most
``GAP_REACHED``.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mmicl.numerics.laws.language import takes_law
from mmicl.numerics.laws.task import TaskLaw
from .untied import (
    UntiedSchedule,
    amplitude_fn,
    cached_excess_rule,
    multiplier_fn,
    as_schedule,
    signal_range,
    optimal_schedule,
    untied_excess,
)
from .validate import InputError, check_depth, check_seed

__all__ = [
    "GAP_REACHED",
    "GRADIENT_REST",
    "OUTCOMES",
    "FlowSurvey",
    "RestTest",
    "ScheduleFlow",
    "flows_from_random_starts",
    "log_excess_derivatives",
    "rest_test",
    "schedule_flow",
]

GRADIENT_REST = 1e-9
"""The rest event's ``‖∇ log L‖_∞`` (as computed), and the largest bound ``max_t (|ĝ_t| + e_t)`` on the
true ``‖∇ log L‖_∞`` that the rest test accepts (module docstring)."""

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

POLISH_STEPS = 6
"""Newton corrections tried after the rest event before the rest test gives up (quadratic
convergence takes a gradient of 1e-9 to its rounding in one or two)."""

POLISH_MAX_STEP = 1e-5
"""Largest Newton correction ``max_t |Δα_t|/(1 + |α_t|)`` taken: a local correction to where the flow
stopped, never a jump to another stationary point."""

OUTCOMES = ("minimum", "saddle", "degenerate", "unresolved", "still moving", "diverged", "integrator stopped")
"""The ends of a flow (module docstring); the first three are stationary (``at_rest``)."""

STATIONARY = OUTCOMES[:3]

_U = 2.0**-53
_ETA = 2.0**-1074  # ≥ the absolute error of one operation that underflows (2⁻¹⁰⁷⁵)


def _gamma(n: int) -> float:
    """``γ_n = n·u/(1 − n·u)``: the relative error of n roundings (Higham, Lemma 3.1)."""
    return n * _U / (1 - n * _U)


@takes_law
def log_excess_derivatives(law: TaskLaw, alphas: Sequence[float]) -> tuple[float, np.ndarray, np.ndarray]:
    """``(log L, ∇ log L, ∇² log L)`` of the untied excess at the schedule ``alphas`` (natural log;
    computed with q scaled by its largest value on the nodes, which cancels in every ratio).  Their
    rounding bounds: ``rest_test``."""
    a = as_schedule(alphas)
    rule = cached_excess_rule(law, a.size)
    return _log_derivatives(rule.nodes, rule.weights * amplitude_fn()(rule.nodes)[0], a)


def _scaled_factors(s: np.ndarray, a: np.ndarray):
    """``(m, ∂m/∂α, scale)`` on the nodes, broadcast to (nodes, layers), and the common scale of every
    factor (the scaled q is at most 1 in size at its largest node)."""
    T = a.size
    m, dm = multiplier_fn()(a[None, :], s[:, None])
    m, dm = np.broadcast_to(m, (s.size, T)), np.broadcast_to(dm, (s.size, T))
    with np.errstate(divide="ignore"):
        top = float(np.log(np.abs(m)).sum(axis=1).max())
    return m, dm, math.exp(-top / T)


def _log_derivatives(s: np.ndarray, w: np.ndarray, a: np.ndarray, hessian: bool = True
                     ) -> tuple[float, np.ndarray, np.ndarray | None]:
    """``(log L, ∇ log L, ∇² log L or None)`` on the nodes ``s`` with weights ``w`` (``E[ζ²]·A(s)·P``)."""
    T = a.size
    m, dm, scale = _scaled_factors(s, a)
    ms, dms = m * scale, dm * scale
    q = ms.prod(axis=1)
    L = float(np.dot(w, q * q))
    dq = dms * _leave_one_out(ms)  # ∂_t q = m′_t ∏_{j≠t} m_j
    g = 2 * (w * q) @ dq / L
    log_L = math.log(L) - 2 * T * math.log(scale)
    if not hessian:
        return log_L, g, None
    hess = 2 * (dq.T * w) @ dq
    for t in range(T if T > 1 else 0):  # ∂_t∂_u q = m′_t m′_u ∏_{j≠t,u} (u ≠ t), ∂_t² q = 0
        both = np.insert(_leave_one_out(np.delete(ms, t, axis=1)), t, 0.0, axis=1)
        hess[t] += 2 * (w * q) @ (dms[:, [t]] * dms * both)
    return log_L, g, hess / L - np.outer(g, g)


def _leave_one_out(x: np.ndarray) -> np.ndarray:
    """``out[:, t] = ∏_{j≠t} x[:, j]`` by prefix and suffix products (no division: factors may be 0)."""
    ones = np.ones((x.shape[0], 1))
    prefix = np.cumprod(np.hstack([ones, x[:, :-1]]), axis=1)
    suffix = np.cumprod(np.hstack([ones, x[:, :0:-1]]), axis=1)[:, ::-1]
    return prefix * suffix


def _leave_one_out_sum(x: np.ndarray) -> np.ndarray:
    """``out[:, t] = Σ_{j≠t} x[:, j]`` (x ≥ 0) by prefix and suffix sums: no subtraction."""
    zeros = np.zeros((x.shape[0], 1))
    prefix = np.cumsum(np.hstack([zeros, x[:, :-1]]), axis=1)
    suffix = np.cumsum(np.hstack([zeros, x[:, :0:-1]]), axis=1)[:, ::-1]
    return prefix + suffix


def _sum_bound(w, ew, a, ea, c, ec):
    """Bound on ``|Σ_k ŵ_k â_k ĉ_k − Σ_k w_k a_k c_k|`` from the entries' bounds (arrays over the nodes
    k, ``a``/``c`` may carry a second axis), before the rounding of the sum itself:
    ``(ŵ+e_w)(|â|+e_a)(|ĉ|+e_c) − ŵ|â||ĉ| = e_w(|â|+e_a)(|ĉ|+e_c) + ŵ e_a(|ĉ|+e_c) + ŵ|â|e_c``,
    summed; and ``Σ ŵ|â||ĉ|`` (for the sum's rounding)."""
    A, C = np.abs(a), np.abs(c)
    err = (ew * (A + ea).T) @ (C + ec) + (w * ea.T) @ (C + ec) + (w * A.T) @ ec
    return err, (w * A.T) @ C


def _bounded_derivatives(s: np.ndarray, w: np.ndarray, a: np.ndarray, hessian: bool = True):
    """``(log L, ĝ, e, Ĥ, E)``: the computed ``∇ log L`` and ``∇² log L`` of ``_log_derivatives`` with
    rigorous bounds ``|ĝ_t − g_t| ≤ e_t``, ``|Ĥ_tu − H_tu| ≤ E_tu`` against the exact derivatives of
    ``L = Σ_k W_k ∏_t (1 − α_t(1+s_k))²``, ``W_k`` = the rule weight times the exact ``A(s_k)``
    (module docstring; ``ŵ = w`` carries ``|ŵ − W| ≤ γ₄ŵ``: ``A = s/(s+1)`` and the product round 3
    times).  Bounds are ``inf`` where ``L̂`` does not exceed its own bound."""
    K, T = s.size, a.size
    m, dm, scale = _scaled_factors(s, a)
    xs, ds = m * scale, dm * scale
    lam_up = (1.0 + s) * (1 + _U)  # ≥ 1 + s
    # |x̂ − x| for x = m·scale (scale is exact by definition: it cancels in every ratio)
    eps_x = scale * _gamma(4) * (1.0 + np.abs(a)[None, :] * lam_up[:, None]) + _gamma(1) * np.abs(xs) + _ETA
    eps_d = scale * _gamma(2) * lam_up[:, None] + _gamma(1) * np.abs(ds) + _ETA
    eps_d = np.broadcast_to(eps_d, (K, T))
    bx = np.abs(xs) + eps_x  # ≥ |x| and |x̂|, > 0
    r = eps_x / bx
    big = np.prod(np.maximum(bx, 1.0), axis=1) * np.maximum(np.abs(ds).max(axis=1), 1.0) ** 2  # ≥ partial products
    under = (T + 2) * _ETA * big  # underflow in a chain of ≤ T + 2 products
    sum_under = 2 * K * _ETA * (1.0 + float(big.max()))  # underflow in the products of a sum over K nodes
    q = xs.prod(axis=1)
    e_q = bx.prod(axis=1) * (r.sum(axis=1) + _gamma(T)) + under
    loo = _leave_one_out(xs)
    dq = ds * loo
    e_dq = _leave_one_out(bx) * (np.abs(ds) * (_leave_one_out_sum(r) + _gamma(T + 1)) + eps_d) + under[:, None]
    e_w = _gamma(4) * w
    L = float(np.dot(w, q * q))
    err_L, abs_L = _sum_bound(w, e_w, q, e_q, q, e_q)
    e_L = float(err_L + _gamma(K + 1) * abs_L + sum_under)
    N = (w * q) @ dq
    g = 2 * N / L
    err_N, abs_N = _sum_bound(w, e_w, q, e_q, dq, e_dq)
    e_N = err_N + _gamma(K + 1) * abs_N + sum_under
    log_L = math.log(L) - 2 * T * math.log(scale) if L > 0 else -math.inf
    safety = 1 + 2 * _gamma(2 * (K + T) + 50)
    if not L > e_L:
        inf = np.full(T, math.inf)
        return log_L, g, inf, None, None
    low = L - e_L
    e_g = (2 * (e_N / low + np.abs(N) * e_L / (L * low)) + _gamma(1) * np.abs(g)) * safety
    if not hessian:
        return log_L, g, e_g, None, None
    S = (dq.T * w) @ dq
    err_S, abs_S = _sum_bound(w, e_w, dq, e_dq, dq, e_dq)
    e_S = err_S + _gamma(K + 1) * abs_S + sum_under
    Q, e_Q = np.zeros((T, T)), np.zeros((T, T))
    wq = w * q
    for t in range(T if T > 1 else 0):
        both = np.insert(_leave_one_out(np.delete(xs, t, axis=1)), t, 0.0, axis=1)
        both_b = np.insert(_leave_one_out(np.delete(bx, t, axis=1)), t, 0.0, axis=1)
        r_two = np.insert(_leave_one_out_sum(np.delete(r, t, axis=1)), t, 0.0, axis=1)
        p = ds[:, [t]] * ds * both
        dd = np.abs(ds[:, [t]] * ds)
        e_p = both_b * (dd * (r_two + _gamma(T + 2)) + eps_d[:, [t]] * (np.abs(ds) + eps_d)
                        + np.abs(ds[:, [t]]) * eps_d) + under[:, None]
        e_p[:, t] = 0.0  # ∂_t² q = 0 exactly (the code adds an exact 0)
        Q[t] = wq @ p
        err_Q, abs_Q = _sum_bound(w, e_w, q, e_q, p, e_p)
        e_Q[t] = err_Q + _gamma(K + 1) * abs_Q + sum_under
    X = 2 * S + 2 * Q
    e_X = 2 * e_S + 2 * e_Q + _gamma(1) * np.abs(X)
    Y = X / L
    e_Y = e_X / low + np.abs(X) * e_L / (L * low) + _gamma(1) * np.abs(Y)
    H = Y - np.outer(g, g)
    G = np.abs(g)
    e_H = (e_Y + np.outer(e_g, G + e_g) + np.outer(G, e_g) + _gamma(1) * np.outer(G, G)
           + _gamma(1) * np.abs(H)) * safety
    return log_L, g, e_g, H, e_H


def _definiteness(H: np.ndarray, E: np.ndarray) -> str:
    """``"positive definite"``, ``"negative curvature"`` or ``"unresolved"`` for the exact Hessian
    ``H_true`` with ``|H_true − H| ≤ E`` entrywise (module docstring: a shifted Cholesky factorisation
    with its backward error, or a Rayleigh quotient with its rounding bound)."""
    T = H.shape[0]
    Hs = (H + H.T) / 2
    Es = np.maximum(E, E.T) + _gamma(1) * np.abs(Hs)
    Es = Es * (1 + _gamma(4))
    if not (np.all(np.isfinite(Hs)) and np.all(np.isfinite(Es))):
        return "unresolved"
    norm_E = float(np.sqrt((Es * Es).sum())) * (1 + _gamma(T * T + 2))  # ‖E‖₂ ≤ ‖E‖_F
    diag = np.abs(np.diag(Hs))
    sigma = 2.0 * (norm_E + _gamma(T + 1) * float(diag.sum()) + _U * float(diag.max()))
    A = Hs - sigma * np.eye(T)
    try:
        R = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        R = None
    if R is not None and np.all(np.isfinite(R)) and np.all(np.diag(R) > 0):
        backward = _gamma(T + 1) * float((R * R).sum()) * (1 + _gamma(T * T + 2))
        shift_rounding = _U * float(np.abs(np.diag(A)).max())
        if sigma > (norm_E + backward + shift_rounding) * (1 + _gamma(4)):
            return "positive definite"
    _, vecs = np.linalg.eigh(Hs)
    v = vecs[:, 0]
    av = np.abs(v)
    rayleigh = float(v @ (Hs @ v))
    slack = (_gamma(2 * T + 2) * float(av @ (np.abs(Hs) @ av)) + float(av @ (Es @ av))) * (1 + _gamma(4 * T + 4))
    if rayleigh + slack < 0:
        return "negative curvature"
    return "unresolved"


@dataclass(frozen=True)
class RestTest:
    """The rest test at one schedule (module docstring): the computed gradient ``gradient`` of
    ``log L`` with its rounding bound ``gradient_error`` (per component), ``gradient_bound =
    max_t(|ĝ_t| + e_t)`` (a bound on the true ``‖∇ log L‖_∞``), ``stationary`` (``|ĝ_t| ≤ e_t`` for
    every t and ``gradient_bound ≤ GRADIENT_REST``), ``hessian``: ``"positive definite"``,
    ``"negative curvature"`` or ``"unresolved"`` (beyond the entries' rounding bounds), and
    ``outcome``: ``"minimum"``, ``"saddle"``, ``"degenerate"`` or ``"unresolved"`` (not stationary)."""

    gradient: tuple[float, ...]
    gradient_error: tuple[float, ...]
    gradient_bound: float
    stationary: bool
    hessian: str
    outcome: str


def _rest(s: np.ndarray, w: np.ndarray, a: np.ndarray) -> RestTest:
    _, g, e, H, E = _bounded_derivatives(s, w, a)
    bound = float(np.max(np.abs(g) + e))
    stationary = bool(np.all(np.abs(g) <= e) and bound <= GRADIENT_REST)
    hessian = "unresolved" if H is None else _definiteness(H, E)
    if not stationary:
        outcome = "unresolved"
    else:
        outcome = {"positive definite": "minimum", "negative curvature": "saddle"}.get(hessian, "degenerate")
    return RestTest(tuple(float(x) for x in g), tuple(float(x) for x in e), bound, stationary, hessian, outcome)


def _flow_nodes(law: TaskLaw, T: int) -> tuple[np.ndarray, np.ndarray]:
    rule = cached_excess_rule(law, T)
    s, w = rule.nodes, rule.weights * amplitude_fn()(rule.nodes)[0]
    keep = w > 0
    return s[keep], w[keep]


@takes_law
def rest_test(law: TaskLaw, alphas: Sequence[float]) -> RestTest:
    """The rest test of the untied flow at the schedule ``alphas``, on its loss (the quadrature of
    ``excess_rule(law, len(alphas))``): see ``RestTest`` and the module docstring.  No correction
    is applied: the point is judged as given."""
    a = as_schedule(alphas)
    return _rest(*_flow_nodes(law, a.size), a)


def _polish(s: np.ndarray, w: np.ndarray, a: np.ndarray) -> tuple[np.ndarray, RestTest]:
    """Up to ``POLISH_STEPS`` Newton corrections (each at most ``POLISH_MAX_STEP`` relative, taken only
    where the Hessian is certified nonsingular in sign and the step lowers ``max_t |ĝ_t|/e_t``);
    the point reached and its rest test."""
    best, rest = a, _rest(s, w, a)
    for _ in range(POLISH_STEPS):
        if rest.stationary or rest.hessian == "unresolved":
            break
        _, g, _, H, _ = _bounded_derivatives(s, w, best)
        try:
            step = np.linalg.solve(H, g)
        except np.linalg.LinAlgError:
            break
        if not (np.all(np.isfinite(step)) and np.max(np.abs(step) / (1 + np.abs(best))) <= POLISH_MAX_STEP):
            break
        trial = best - step
        new = _rest(s, w, trial)
        ratio = lambda r: max(abs(x) / y if y > 0 else math.inf for x, y in zip(r.gradient, r.gradient_error))
        if not ratio(new) < ratio(rest):
            break
        best, rest = trial, new
    return best, rest


@dataclass(frozen=True)
class ScheduleFlow:
    """One gradient flow on the schedule: its ``start``, its end point ``alphas`` (sorted), the
    log10 excess there, the relative gap ``(L_end − L*)/L*`` to the optimum, ``at_rest``: the end is
    stationary by the rest test (module docstring: the true ``‖∇ log L‖_∞ ≤ gradient_bound ≤
    GRADIENT_REST`` and the computed gradient within its rounding bound), ``outcome`` (one of
    ``OUTCOMES``), ``gradient_bound`` (``inf`` where the test was not run), the rescaled time
    ``sigma`` at its end and ``reason`` (the outcome in words, with its numbers)."""

    start: tuple[float, ...]
    alphas: tuple[float, ...]
    log10_excess: float
    relative_gap: float
    at_rest: bool
    sigma: float
    reason: str
    outcome: str = "unresolved"
    gradient_bound: float = math.inf

    @property
    def reached(self) -> bool:
        return self.relative_gap <= GAP_REACHED

    def to_json(self) -> dict:
        return {"start": list(self.start), "alphas": list(self.alphas), "log10_excess": self.log10_excess,
                "relative_gap": self.relative_gap, "at_rest": self.at_rest, "outcome": self.outcome,
                "gradient_bound": self.gradient_bound if math.isfinite(self.gradient_bound) else None,
                "sigma": self.sigma, "reason": self.reason, "reached": self.reached}


_REASONS = {
    "minimum": "at rest at a minimum: ‖∇ log L‖∞ ≤ {b:.2g} (the computed gradient is within its rounding bound), "
               "the Hessian positive definite beyond its rounding bound (shifted Cholesky)",
    "saddle": "at rest at a saddle: ‖∇ log L‖∞ ≤ {b:.2g} (the computed gradient is within its rounding bound), "
              "with a direction of negative curvature beyond the Hessian's rounding bound: not a minimum",
    "degenerate": "at rest at a degenerate stationary point: ‖∇ log L‖∞ ≤ {b:.2g}, the Hessian singular to "
                  "within its rounding bound (a flat direction: the minimiser may be a set)",
    "unresolved": "stopped with ‖∇ log L‖∞ ≤ {rest:g} as computed, but not stationary by the rest test: "
                  "the gradient is not within its rounding bound or that bound ({b:.2g}) exceeds {rest:g}",
}


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

    a0 = as_schedule(alpha0s)
    T = a0.size
    _, log_best = _optimal_log_excess(law, T, optimum)
    s, w = _flow_nodes(law, T)

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
    outcome, bound = None, math.inf
    if sol.status == 1 and sol.t_events[0].size:
        end, test = _polish(s, w, end)
        outcome, bound = test.outcome, test.gradient_bound
        reason = _REASONS[outcome].format(b=bound, rest=GRADIENT_REST)
    elif sol.status == 1:
        outcome, reason = "diverged", f"diverged: some |α_t| > {ESCAPE:g}"
    elif sol.status == 0:
        outcome, reason = "still moving", f"still moving at σ = {sol.t[-1]:g}"
    else:
        outcome, reason = "integrator stopped", f"integrator stopped: {sol.message}"
    log_L = _log_derivatives(s, w, end, hessian=False)[0]
    return ScheduleFlow(tuple(float(x) for x in a0), tuple(float(x) for x in np.sort(end)),
                        log_L / math.log(10), math.expm1(log_L - log_best), outcome in STATIONARY,
                        float(sol.t[-1]), reason, outcome, bound)


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
    lo, _ = signal_range(law)
    box = (0.0, 2.0 / (1.0 + lo)) if box is None else (float(box[0]), float(box[1]))
    if not (math.isfinite(box[0]) and math.isfinite(box[1]) and box[0] < box[1]):
        raise InputError(f"box must be two finite numbers lo < hi, got {box!r}")
    opt, _ = _optimal_log_excess(law, T, None)
    rng = np.random.default_rng(seed)
    flows = tuple(schedule_flow(law, rng.uniform(*box, size=T), optimum=opt) for _ in range(starts))
    return FlowSurvey(T, box, seed, opt, flows)
