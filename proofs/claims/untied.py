"""Claim ext.untied: the untied one-parameter LCA, an extension beyond arXiv:2602.04872 (not a
claim of the paper; docs/untied.md).

Layer t gets its own ``W^S_t = −W^V_t = α_t I``.  The large-context excess is
``E[ζ² A(s) q(1+s)²]`` with ``q(λ) = ∏(1 − α_t λ)`` (``theory.untied``), minimised by the Gauss nodes of
``λ dμ`` (``numerics.untied``).  The checks: the closed form against d×d matrices; the optimum against
two independent routes (mpmath, and SciPy minimising the excess directly on the law's own quadrature);
the optimum never above the tied model's excess at α_T; exactly 0 from T = m on for a law with m
atoms; the per-layer rate against potential theory's ``((√κ − 1)/(√κ + 1))²``; gradient flow from
random starts; Monte Carlo training of the torch model.

Roles (``claim.decide``): the statement names each of these, so they are decisive (the closed
form against matrices included: the statement gives the excess's form), except the mpmath check and
the Monte Carlo excess against the population excess, second routes to numbers the others use.

Not run by a plain ``mmicl verify``: it is not a claim of the paper, and at the quick size it takes
about 20 s on 2 cores (its Monte Carlo training and the flows), more than the default claims together
should; run it with ``mmicl verify --claim ext.untied``.
"""
from __future__ import annotations

import math

import numpy as np
from mmicl.numerics import lca, untied, untied_flow
from mmicl.numerics.atomic import save_figure
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.scalar import Beta, Discrete, Mixture, Point, ScalarLaw, SumLaw
from mmicl.numerics.laws.task import TaskLaw
from mmicl.proofs import hypotheses as hyp
from mmicl.proofs.claims.lca import (CLOSED_FORM_RTOL, MATRIX_ATOL, MATRIX_NUMBERS_WHY, MATRIX_TOLERANCE,
                                     random_prompt)
from mmicl.proofs.claims.number_tolerances import EXACT, SAMPLING_WHY, exact, sampling_atol
from mmicl.proofs.claim import CORROBORATING, Check, Hypothesis, RunConfig, Summary

__all__ = ["QUICK_LAWS", "FULL_LAWS", "REL_ACCURACY", "LOG10_ACCURACY", "EPS", "Z", "ALPHA_RTOL",
           "BFGS_ALPHA_ACCURACY", "AT_REST_ELSEWHERE_RTOL", "evaluate_untied"]


QUICK_LAWS = ["s=uniform(0.5,4)", "s=beta(0.5,2,0.2,8)", "s=twopoint(1,3,0.3)",
              "s=discrete(0.5:0.2,1:0.3,2:0.3,4:0.2)"]
FULL_LAWS = QUICK_LAWS + ["s=beta(4,0.3,0,5); zeta=rademacher", "s=mix(0.5*uniform(0.5,1),0.5*uniform(3,4))",
                          "sv=uniform(0,2); sr=uniform(0.5,1); d1=2; d2=3", "s=mix(0.3*point(0),0.7*uniform(1,3))"]

REL_ACCURACY = 1e-9
"""Relative accuracy of the float64 optimum (``numerics.untied``: measured ≤ 1e-9 up to T = 1000
against a doubled discretisation margin, ~1e-12 against mpmath at moderate T)."""
LOG10_ACCURACY = math.log10(1 + REL_ACCURACY)
EPS = 2.0**-52
Z = 3.0  # Monte Carlo agreement in standard errors (two-sided p ≈ 0.003)

# How far the numbers may move between two runs (``number_tolerances``; not the decision tolerances).
ALPHA_RTOL = 1e-10
"""α_t and the Gauss nodes: float64 eigenvalues of a Jacobi matrix (~1e-13 relative, ``numerics.untied``),
with the room for the Cholesky step that the mpmath check allows."""
BFGS_ALPHA_ACCURACY = 1e-6
"""BFGS's α's on a flat minimum: known to the square root of its ~1e-12 relative precision on the
value (``_scipy_check``); measured ≤ 4e-8."""
AT_REST_ELSEWHERE_RTOL = 1.0
"""A flow at rest away from the optimum: its end is where the stop test first passes along a
flat direction (its rescaled time, its α's); not stated in the code: only its presence is the result."""


def _slope_move(Ts) -> list[float]:
    """The first-order move of each window slope Δ log10 excess / ΔT, each end LOG10_ACCURACY."""
    return [2 * LOG10_ACCURACY / (b - a) for a, b in zip(Ts[:-1], Ts[1:])]


def _fit_move(Ts) -> float:
    """The largest move of any number of a least-squares line through (T, log10 excess) (``RateFit``:
    the values, slope, intercept, rate and residuals) when each value may move by LOG10_ACCURACY:
    the fit is linear in the values, so δ·(1 + Σ|intercept weights| + max T·Σ|slope weights|)."""
    x = np.asarray(Ts, float)
    c = (x - x.mean()) / np.sum((x - x.mean()) ** 2)  # slope = c·y
    d = 1 / x.size - x.mean() * c  # intercept = d·y
    return LOG10_ACCURACY * (1 + np.abs(d).sum() + x.max() * np.abs(c).sum())


def _rounding_floor_move(kappa: float, atoms: int) -> float:
    """How far the log10 of the zero schedule's float64 excess may move: a non-zero root factor
    1 − α_t λ_k is at least u = 2⁻⁵³ and at most 8κ·eps = 16κ·u, and the bound adds log10(atoms), so
    the value lies within log10(atoms) + 2·log10(16κ) decades below its bound."""
    return math.log10(atoms) + 2 * math.log10(16 * kappa)


def _sizes(config: RunConfig) -> dict:
    if config.smoke or config.quick:
        return {"Ts": [1, 2, 3, 5, 10, 20, 40, 80, 160], "windows": [20, 40, 80, 160], "mp_T": 12,
                "scipy_Ts": [2, 3], "flow_Ts": [4, 8], "starts": 6, "mc_Ts": [] if config.smoke else [3],
                "steps": 800, "samples": 100_000}
    return {"Ts": [1, 2, 3, 5, 10, 20, 40, 80, 160, 320, 640], "windows": [20, 40, 80, 160, 320, 640], "mp_T": 30,
            "scipy_Ts": [2, 3, 4], "flow_Ts": [3, 6, 10], "starts": 16, "mc_Ts": [3, 5], "steps": 3000,
            "samples": 400_000}


def _laws(config: RunConfig) -> list[str]:
    if config.law:
        return [config.law]
    return QUICK_LAWS if config.quick or config.smoke else FULL_LAWS


# ---------------------------------------------------------------------------------------------
# facts of a law, computed from it
# ---------------------------------------------------------------------------------------------


def _pieces(law: ScalarLaw) -> tuple[list[tuple[float, float]], list[float]]:
    """``(intervals, atoms)``: where the law of s has a positive density, and its atoms."""
    if isinstance(law, Beta):
        return [(law.a, law.b)], []
    if isinstance(law, (Point, Discrete)):
        return [], [float(x) for x in law.rule().nodes]
    if isinstance(law, Mixture):
        parts = [_pieces(c) for c, p in zip(law.components, law.probs) if p > 0]
        return [i for ints, _ in parts for i in ints], [a for _, ats in parts for a in ats]
    if isinstance(law, SumLaw):
        (i1, a1), (i2, a2) = _pieces(law.first), _pieces(law.second)
        ints = [(x0 + y0, x1 + y1) for x0, x1 in i1 for y0, y1 in i2]
        ints += [(x0 + a, x1 + a) for x0, x1 in i1 for a in a2] + [(a + y0, a + y1) for a in a1 for y0, y1 in i2]
        return ints, [x + y for x in a1 for y in a2]
    return [], []


def _density_covers_support(law: TaskLaw) -> Hypothesis:
    """The rate of potential theory needs a density on the whole of ``[s_lo, s_hi]`` (over m ≠ 0)."""
    lo, hi = law.signal_bounds()
    ints, _ = _pieces(law.s_law())
    reach = lo
    for a, b in sorted(ints):
        if a > reach:
            break
        reach = max(reach, b)
    met = reach >= hi and lo < hi
    return Hypothesis("s has a density on the whole of [s_lo, s_hi] (the rate of potential theory; otherwise "
                      "the predicted untied rate is only an upper bound)", met,
                      f"pieces with a density: {sorted(ints)}; signal support [{lo:g}, {hi:g}]")


def _atoms(law: TaskLaw) -> int | None:
    """Number of distinct values of s > 0 for a purely atomic law, else None."""
    scalar = law.s_law()
    if not scalar.is_atomic:
        return None
    nodes = np.asarray(scalar.rule(1).nodes, float)
    return int(np.unique(nodes[nodes > 0]).size)


# ---------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------


def _matrix_check(rng: np.random.Generator, trials: int = 20) -> Check:
    """``E[ζ²]·A(s)·∏(1 − α_t(1+s))²`` (compiled from SymPy) against the d×d matrix recurrence."""
    worst = 0.0
    for _ in range(trials):
        d, m, s, zeta, T = random_prompt(rng)
        alphas = rng.uniform(0.05, 1.8 / (1 + s), T)
        direct = untied.matrix_excess_untied(m, zeta, alphas)
        closed = zeta**2 * untied.untied_excess(TaskLaw(s=Point(s), d1=1, d2=d - 1), alphas).value
        allowed = 1e-9 * abs(direct) + 1e-14 * zeta**2 * (1 + s) ** 2
        worst = max(worst, abs(closed - direct) / allowed)
    return Check(
        "untied excess: SymPy closed form A(s)·∏(1 − α_t(1+s))² = d×d matrix recurrence", "symbolic", worst < 1,
        {"trials": trials, "worst_error_over_allowed": worst}, MATRIX_TOLERANCE,
        "random d ∈ [2, 6], s ∈ [0.1, 4], T ∈ [1, 11], α_t i.i.d. in (0.05, 1.8/(1+s))",
        atol=MATRIX_ATOL, rtol=EXACT, numbers_tolerance=MATRIX_NUMBERS_WHY)


def _sweep(law: TaskLaw, Ts: list[int]) -> list[dict]:
    rows = []
    for T in Ts:
        opt = untied.optimal_schedule(law, T)
        tied = lca.excess_risk_scaled(law, T)
        rows.append({"T": T, "untied_log10": opt.log10_excess, "tied_log10": tied.log10,
                     "exact_zero": opt.exact_zero, "alphas": list(opt.alphas)})
    return rows


def _not_above_tied_check(text: str, rows: list[dict]) -> Check:
    """min over schedules ≤ the schedule α_t ≡ α_T; equal at T = 1 (one layer: the same model)."""
    over = [r["T"] for r in rows if r["untied_log10"] > r["tied_log10"] + 2 * LOG10_ACCURACY]
    gain = [r["tied_log10"] - r["untied_log10"] for r in rows]
    return Check(
        f"[{text}] the untied optimum is never above the tied excess at α_T", "quadrature", not over,
        {"T": [r["T"] for r in rows], "untied_log10": [_fin(r["untied_log10"]) for r in rows],
         "tied_log10": [r["tied_log10"] for r in rows], "decades_gained": [_fin(g) for g in gain],
         "T_where_above": over},
        f"untied ≤ tied·(1 + 2·{REL_ACCURACY:g}): the relative accuracy of both (the tied excess by log-scaled "
        "quadrature, the untied optimum by Lanczos on an exact discretisation)",
        "the tied schedule α_t ≡ α_T is one of the untied schedules, so the minimum cannot be above it",
        atol={"untied_log10": LOG10_ACCURACY, "tied_log10": LOG10_ACCURACY, "decades_gained": 2 * LOG10_ACCURACY,
              **exact("T", "T_where_above")}, rtol=EXACT,
        numbers_tolerance=f"log10 excesses: {REL_ACCURACY:g} relative each (LOG10_ACCURACY); their difference: "
                          "twice it; depths exact")


def _fin(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _zero_check(text: str, law: TaskLaw, atoms: int, rows: list[dict]) -> Check:
    """m atoms of s > 0: the optimum is exactly 0 at T ≥ m (roots on the atoms) and > 0 at T < m.
    The zero schedule's excess evaluated in float64 stays below its rounding bound
    ``Σ_k w_k A(s_k) (8κ·eps)² ∏_{t≠t_k} (1 − α_t λ_k)²`` (``t_k`` the layer rooted at atom k): its α's are
    the reciprocals of eigenvalues of the Jacobi matrix, each within a few ``eps·λ_hi`` of its atom, so
    the root factor ``1 − α_t λ_k`` is at most ``8κ·eps`` in size."""
    lo, hi = law.signal_bounds()
    kappa = (1 + hi) / (1 + lo)
    rule = law.rule()
    keep = rule.nodes > 0
    s, w = rule.nodes[keep], rule.weights[keep]
    wrong, floors = [], {}
    for r in rows:
        if r["T"] >= atoms:
            F = 1 - np.outer(1 + s, r["alphas"])
            terms = []
            for k in range(s.size):
                others = np.delete(F[k], int(np.argmin(np.abs(F[k]))))
                with np.errstate(divide="ignore"):  # another layer rooted at the same atom may give 0
                    rest = float(np.log10(np.abs(others)).sum())
                terms.append(math.log10(w[k] * s[k] / (1 + s[k])) + 2 * math.log10(8 * kappa * EPS) + 2 * rest)
            bound = max(terms) + math.log10(len(terms))
            value = untied.untied_excess(law, r["alphas"])
            floors[r["T"]] = {"log10_excess_in_float64": _fin(value.log10), "log10_bound": bound}
            if not r["exact_zero"] or (value.mantissa != 0 and value.log10 > bound):
                wrong.append(r["T"])
        elif r["exact_zero"] or not math.isfinite(r["untied_log10"]):
            wrong.append(r["T"])
    return Check(
        f"[{text}] s takes {atoms} values: the untied optimum is exactly 0 from T = {atoms} on, > 0 below",
        "quadrature", not wrong, {"atoms": atoms, "T": [r["T"] for r in rows], "T_wrong": wrong,
                                  "rounding_at_zero": floors},
        "exact (μ lives on the atoms: Lanczos stops there); the float64 excess of the zero schedule below "
        "Σ_k w_k A(s_k)(8κ·eps)²∏_{t≠t_k}(1 − α_t λ_k)², the rounding of its root factors",
        atol={"rounding_at_zero": _rounding_floor_move(kappa, s.size), **exact("atoms", "T", "T_wrong")}, rtol=EXACT,
        numbers_tolerance=("rounding_at_zero: the float64 excess of the zero schedule is rounding, anywhere within "
                           "log10(atoms) + 2·log10(16κ) decades below its bound (root factors between u and 16κ·u); "
                           "counts and depths exact"))


def _mpmath_check(text: str, law: TaskLaw, T: int) -> Check:
    f64 = untied.optimal_schedule(law, T)
    mpv = untied.optimal_schedule_mp(law, T)
    if f64.exact_zero or mpv.exact_zero:
        ok = f64.exact_zero and mpv.exact_zero
        return Check(f"[{text}] the optimum at T = {T}: float64 = 40-digit mpmath (both exactly 0)", "mpmath",
                     ok, {"float64_zero": f64.exact_zero, "mpmath_zero": mpv.exact_zero}, "exact",
                     role=CORROBORATING,  # the same optimum by another arithmetic
                     atol=EXACT, rtol=EXACT, numbers_tolerance="booleans only")
    d_log = abs(f64.log10_excess - mpv.log10_excess)
    d_alpha = float(np.max(np.abs(np.asarray(f64.alphas) / np.asarray(mpv.alphas) - 1)))
    return Check(
        f"[{text}] the optimum at T = {T}: float64 Lanczos = 40-digit mpmath Stieltjes", "mpmath",
        d_log <= LOG10_ACCURACY and d_alpha <= 1e-10,
        {"log10_float64": f64.log10_excess, "log10_mpmath": mpv.log10_excess, "log10_difference": d_log,
         "max_relative_alpha_difference": d_alpha, "nodes_float64": f64.nodes, "nodes_mpmath": mpv.nodes},
        f"excess: {REL_ACCURACY:g} relative (the float64 route's stated accuracy); α_t: 1e-10 relative (float64 "
        "eigenvalues of a Jacobi matrix of norm ≤ λ_hi, ~1e-14, with room for the Cholesky step)",
        "independent discretisation (mpmath's Gauss–Jacobi, finer margin), arithmetic (40 digits) and algorithm "
        "(Stieltjes on μ and on λ dμ, not Lanczos and the Christoffel step)",
        role=CORROBORATING,  # the same optimum by another arithmetic
        atol={"log10_float64": LOG10_ACCURACY, "log10_difference": LOG10_ACCURACY,
              "max_relative_alpha_difference": ALPHA_RTOL},
        rtol={"nodes_float64": ALPHA_RTOL, "log10_mpmath": EPS, "nodes_mpmath": EPS},
        numbers_tolerance=(f"float64 log10 optimum and its difference from mpmath: {REL_ACCURACY:g} relative "
                           "(LOG10_ACCURACY; the 40-digit side moves by its float64 rounding, eps); α_t and nodes: "
                           "ALPHA_RTOL (float64 eigenvalues)"))


def _log_excess_on(law: TaskLaw, rule):
    """``α ↦ log`` of the untied excess integrated on ``rule``."""
    def f(a):
        v = untied.untied_excess(law, a, rule=rule)
        return math.log(v.mantissa) + v.log_scale

    return f


def _scipy_check(text: str, law: TaskLaw, Ts: list[int]) -> Check:
    """Direct minimisation of the excess on the law's own quadrature (``TaskLaw.rule``, graded
    composite Gauss: not the discretisation of ``numerics.untied``), by BFGS (finite-difference
    gradients) from the tied minimiser spread apart, against the optimum.  At T ≤ 4 the integrand has degree ≤ 8 in s,
    which that rule integrates to rounding (59 per piece), and BFGS stops at ‖∇ log L‖ ≤ 1e-10, so
    the minimum it finds is within ~1e-12 relative: the tolerance is the optimum's, 1e-9."""
    from scipy import optimize

    rows, ok = [], True
    for T in Ts:
        log_excess = _log_excess_on(law, law.rule(depth=T))

        a_T = lca.alpha_T(law, T)
        start = a_T * np.linspace(0.7, 1.4, T)
        res = optimize.minimize(log_excess, start, method="BFGS", options={"gtol": 1e-10})
        opt = untied.optimal_schedule(law, T)
        rel = math.expm1(res.fun - opt.log10_excess * math.log(10))
        d_alpha = float(np.max(np.abs(np.sort(res.x) / np.asarray(opt.alphas) - 1)))
        ok &= abs(rel) <= REL_ACCURACY and d_alpha <= 1e-4
        rows.append({"T": T, "relative_difference": rel, "max_relative_alpha_difference": d_alpha,
                     "bfgs_message": res.message})
    return Check(
        f"[{text}] SciPy's BFGS on the excess (the law's own quadrature) = the orthogonal-polynomial optimum", "optimisation", ok,
        {"rows": rows},
        f"minimum: {REL_ACCURACY:g} relative (the optimum's accuracy; BFGS's own error is ~gtol² ≈ 1e-20); "
        "α_t: 1e-4 relative (a flat minimum: an error δ in α moves the excess by O(δ²), so the α's BFGS returns "
        "are only as good as the square root of its precision on the value, ~1e-8, with margin)",
        atol={"rows": BFGS_ALPHA_ACCURACY}, rtol=EXACT,
        numbers_tolerance=(f"rows (one tolerance for the key): BFGS's α's, {BFGS_ALPHA_ACCURACY:g} (BFGS_ALPHA_ACCURACY); "
                           f"the relative difference of the minima, an error of scale {REL_ACCURACY:g}, is within it"))


def _rate_check(text: str, law: TaskLaw, windows: list[int], covers: bool) -> tuple[Check, dict]:
    """The per-layer rate of the optimal excess against ((√κ − 1)/(√κ + 1))².

    Over a window ``[T, 2T]`` the slope of ``log10 excess`` is the rate plus a finite-depth
    correction: for a density on the interval (Szegő class) ``log excess_T = c + T·log r + C/T + o(1/T)``,
    so the window slopes approach ``log r`` like ``C′/T²`` and the last window's error is about a third
    of its change from the window before (measured: the deviations fall by 4× per doubling).  The
    tolerance is that change, |slope_last − slope_prev|, plus the rounding ``2·log10(1 + 1e-9)/T``.
    With a density on the whole interval the rates must agree; otherwise (gaps, atoms beyond the
    continuous part) the predicted value is an upper bound and the slope must not exceed it."""
    pred = untied.predicted_rates(law)
    fit = untied.measured_rate(law, windows)
    tied_fit = untied.measured_rate(law, windows, model="tied")
    x, y = np.asarray(fit.Ts, float), np.asarray(fit.log10_excess)
    slopes = np.diff(y) / np.diff(x)
    tied_slopes = np.diff(np.asarray(tied_fit.log10_excess)) / np.diff(x)
    target = math.log10(pred["untied"])
    tol = abs(slopes[-1] - slopes[-2]) + 2 * LOG10_ACCURACY / (x[-1] - x[-2])
    dev = slopes[-1] - target
    passed = abs(dev) <= tol if covers else dev <= tol
    numbers = {
        "windows": [[int(a), int(b)] for a, b in zip(fit.Ts[:-1], fit.Ts[1:])],
        "untied_window_rates": (10**slopes).tolist(), "untied_predicted_rate": pred["untied"],
        "untied_last_window_minus_predicted_log10": dev, "tolerance_log10": tol,
        "untied_fit": fit.to_json(),
        "tied_window_rates": (10**tied_slopes).tolist(), "tied_predicted_rate": pred["tied"],
        "tied_fit": tied_fit.to_json(),
        "decades_per_layer_untied_over_tied": float(slopes[-1] / tied_slopes[-1]),
    }
    moves = _slope_move(fit.Ts)  # the tied log10 excesses have the same relative accuracy (_not_above_tied_check)
    rate_rtol = math.log(10.0) * max(moves)
    atol = {"untied_last_window_minus_predicted_log10": moves[-1], "tolerance_log10": moves[-1] + moves[-2],
            "untied_fit": _fit_move(fit.Ts), "tied_fit": _fit_move(tied_fit.Ts), "windows": EXACT}
    rtol = {"untied_window_rates": rate_rtol, "tied_window_rates": rate_rtol,
            "untied_predicted_rate": CLOSED_FORM_RTOL, "tied_predicted_rate": CLOSED_FORM_RTOL,
            "decades_per_layer_untied_over_tied": moves[-1] / abs(slopes[-1]) + moves[-1] / abs(tied_slopes[-1])}
    name = ("the optimal untied excess falls per layer like ((√κ − 1)/(√κ + 1))²" if covers else
            "the optimal untied excess falls per layer at least like ((√κ − 1)/(√κ + 1))² (an upper bound here)")
    return Check(
        f"[{text}] {name}", "quadrature", passed, numbers,
        "|last window slope − predicted| ≤ |last − previous window slope| + rounding: the Richardson estimate "
        "of the finite-depth correction, which falls like 1/T² (see the method)",
        f"measured {10 ** slopes[-1]:.6g} per layer over T ∈ [{fit.Ts[-2]}, {fit.Ts[-1]}], predicted "
        f"{pred['untied']:.6g}; tied {10 ** tied_slopes[-1]:.6g} (predicted {pred['tied']:.6g})",
        atol=atol, rtol=rtol,
        numbers_tolerance=("each log10 excess LOG10_ACCURACY, propagated to first order over these windows: a window "
                           "slope 2·LOG10_ACCURACY/ΔT (a rate ln 10 times that, relative), the deviation and the "
                           "tolerance from the last two windows, the slope ratio from its two slopes, the fits "
                           "through their least-squares weights; predicted rates: closed forms of κ, a few ulps; "
                           "windows exact")), numbers


def _flow_check(text: str, law: TaskLaw, Ts: list[int], starts: int, seed: int) -> Check:
    """Gradient flow from random schedules: reaches the optimum (fails if one comes to rest at a higher
    excess: a stationary point that is not the optimum; inconclusive if one is still moving)."""
    surveys = [untied_flow.flows_from_random_starts(law, T, starts, seed=seed + T) for T in Ts]
    flows = [f for sv in surveys for f in sv.flows]
    stuck = [f for f in flows if f.at_rest and not f.reached]
    moving = [f for f in flows if not f.at_rest and not f.reached]
    passed = False if stuck else None if moving else True
    return Check(
        f"[{text}] gradient flow on (α_1 … α_T) from random starts reaches the optimum", "ode",
        passed,
        {"T": Ts, "starts_per_T": starts, "box": [list(sv.box) for sv in surveys],
         "reached": [sv.reached for sv in surveys], "fraction": [sv.fraction for sv in surveys],
         "worst_relative_gap": [sv.worst_gap for sv in surveys],
         "ends": [sorted({f.reason for f in sv.flows}) for sv in surveys],
         "at_rest_elsewhere": [f.to_json() for f in stuck]},
        f"reached: relative gap (L_end − L*)/L* ≤ {untied_flow.GAP_REACHED:g} (the optimum's accuracy); at rest: "
        f"‖∇ log L‖∞ ≤ {untied_flow.GRADIENT_REST:g}; fails only if a flow rests at a higher excess",
        "LSODA on the rescaled clock dα/dσ = −∇ log L (the same orbit as the real flow) with the exact Hessian; "
        "α_t i.i.d. uniform on (0, 2/(1 + s_lo))",
        atol={"worst_relative_gap": untied_flow.GAP_REACHED, **exact("T", "starts_per_T", "reached", "fraction", "box")},
        rtol={"worst_relative_gap": 2 * REL_ACCURACY, "box": CLOSED_FORM_RTOL,
              "at_rest_elsewhere": AT_REST_ELSEWHERE_RTOL},
        numbers_tolerance=(f"worst_relative_gap: an error, anywhere in [0, {untied_flow.GAP_REACHED:g}] where reached "
                           f"(GAP_REACHED), else 2·{REL_ACCURACY:g} relative (L_end and L*); box: 2/(1 + s_lo), a few "
                           "ulps; at_rest_elsewhere: AT_REST_ELSEWHERE_RTOL; counts exact"))


def _monte_carlo_checks(config: RunConfig, text: str, law: TaskLaw, T: int, sz: dict) -> list[Check]:
    """The torch ``UntiedReducedLCA`` trained by Adam on sampled prompts (large-context limit,
    float64) from random α's; its excess estimated with the query integrated out."""
    import torch
    from mmicl.numerics.models import UntiedReducedLCA
    from mmicl.numerics.montecarlo import conditional_excess
    from mmicl.numerics.training import train

    lo, hi = law.signal_bounds()
    rng = np.random.default_rng(config.seed + T)
    a0 = np.sort(rng.uniform(1 / (1 + hi), 1 / (1 + lo), T))
    model = UntiedReducedLCA(T, a0.tolist())
    res = train(model, law, n=None, steps=sz["steps"], batch=1024, lr=3e-3, schedule="cosine",
                seed=config.seed + T, device=config.device, dtype=torch.float64)
    learnt = model.schedule()
    nums = {"T": T, "start": a0.tolist(), "learnt": learnt, "steps": res.steps_done, "seconds": round(res.seconds, 2)}
    if res.diverged:
        return [Check(f"[{text}] Monte Carlo training of the untied model (T = {T})", "monte-carlo", False,
                      nums, detail=res.message, atol=exact("T", "start", "steps"), rtol={"learnt": 1.0},
                      numbers_tolerance="a diverged training's α's: 1 relative (only the divergence is the result); "
                                        "settings exact", sampled=UNTIED_SAMPLED)]
    est = conditional_excess(model, law, n=None, samples=sz["samples"], seed=config.seed + 1000 + T,
                             device=config.device)
    pop = untied.untied_excess(law, learnt).value
    opt = untied.optimal_schedule(law, T)
    tied = lca.excess_risk_scaled(law, T).value
    start = untied.untied_excess(law, a0).value
    z = est.z(pop)
    nums.update({"mc_excess": est.mean, "mc_se": est.se, "samples": est.samples, "population_excess": pop, "z": z,
                 "optimal_excess": opt.excess, "tied_excess_at_alpha_T": tied, "start_excess": start,
                 "relative_gap_to_optimum": (pop - opt.excess) / opt.excess,
                 "share_of_untied_gain": (tied - pop) / (tied - opt.excess), "optimal_alphas": list(opt.alphas)})
    # training: two runs are two trainings, each its own distance from the optimum (an error-type scale)
    pop_move = (pop - opt.excess) + REL_ACCURACY * opt.excess
    mean_move, se_move = sampling_atol(est.se), sampling_atol(est.se / math.sqrt(2 * est.samples))
    atol = {"mc_excess": mean_move, "mc_se": se_move, "population_excess": pop_move,
            "learnt": float(np.max(np.abs(np.asarray(learnt) - np.asarray(opt.alphas)))),
            "z": (mean_move + pop_move + abs(z) * se_move) / est.se,
            "relative_gap_to_optimum": pop_move / opt.excess, "share_of_untied_gain": pop_move / (tied - opt.excess),
            **exact("T", "start", "steps", "samples")}
    rtol = {"optimal_excess": REL_ACCURACY, "tied_excess_at_alpha_T": REL_ACCURACY, "start_excess": REL_ACCURACY,
            "optimal_alphas": ALPHA_RTOL}
    why = (f"{SAMPLING_WHY}; mc_se: the same for the se's own standard error se/√(2n); the trained schedule's α's "
           "and population excess: their distance from the optimum (another training's is of that size), propagated "
           f"to z, the gap and the share; optimal, tied and start excesses {REL_ACCURACY:g} relative, the optimal "
           "α's ALPHA_RTOL")
    return [
        Check(f"[{text}] Monte Carlo excess of the trained untied model = population excess of its schedule "
              f"(T = {T})", "monte-carlo", abs(z) <= Z, nums,
              f"{Z} standard errors (the query integrated out exactly; float64)",
              role=CORROBORATING,  # the sampled excess against the closed form
              atol=atol, rtol=rtol, numbers_tolerance=why, sampled=UNTIED_SAMPLED),
        Check(f"[{text}] Monte Carlo training of the untied model beats the best tied model (T = {T})",
              "monte-carlo", pop < tied, nums,
              "strict: the learnt schedule's population excess (accurate to 1e-9) below the tied excess at α_T",
              f"ends {nums['relative_gap_to_optimum']:.2%} above the untied optimum, with "
              f"{nums['share_of_untied_gain']:.1%} of the untied model's gain over the tied one",
              atol=atol, rtol=rtol, numbers_tolerance=why, sampled=UNTIED_SAMPLED),
    ]


UNTIED_SAMPLED = ("start", "learnt", "mc_excess", "mc_se", "population_excess", "z", "start_excess",
                  "relative_gap_to_optimum", "share_of_untied_gain")
"""The numbers of an untied training check that depend on the seed (``Check.sampled``): the random
start, the trained schedule and what is measured of it.  None has an se across seeds (another seed
trains another schedule), so two seeds compare these checks' outcomes only."""


# ---------------------------------------------------------------------------------------------
# the claim
# ---------------------------------------------------------------------------------------------


def evaluate_untied(config: RunConfig):
    sz = _sizes(config)
    hyps, checks, summary, curves = [], [_matrix_check(np.random.default_rng(config.seed))], {}, {}
    for k, text in enumerate(_laws(config)):
        law = parse_law(text)
        h = [hyp.bounded_s(law), hyp.has_signal(law), hyp.label_scale(law)]
        hyps += h
        if not all(x.met for x in h):
            continue
        rows = _sweep(law, sz["Ts"])
        checks.append(_not_above_tied_check(text, rows))
        atoms = _atoms(law)
        if atoms is not None:
            checks.append(_zero_check(text, law, atoms, rows))
        checks.append(_mpmath_check(text, law, sz["mp_T"] if atoms is None else max(atoms - 1, 1)))
        scipy_Ts = [T for T in sz["scipy_Ts"] if atoms is None or T < atoms]
        if scipy_Ts:
            checks.append(_scipy_check(text, law, scipy_Ts))
        curve = {"T": [r["T"] for r in rows], "untied_log10": [r["untied_log10"] for r in rows],
                 "tied_log10": [r["tied_log10"] for r in rows], "predicted": untied.predicted_rates(law),
                 "atoms": atoms}
        if atoms is None:
            covers = _density_covers_support(law)
            check, numbers = _rate_check(text, law, sz["windows"], covers.met)
            checks.append(check)
            curve["windows"] = numbers
            if "law" not in summary:  # the first law with a rate: the table's numbers
                summary = Summary({"law": text, "untied_per_layer": numbers["untied_window_rates"][-1],
                                   "untied_predicted": numbers["untied_predicted_rate"],
                                   "tied_per_layer": numbers["tied_window_rates"][-1],
                                   "tied_predicted": numbers["tied_predicted_rate"]},
                                  rtol={"untied_per_layer": check.rtol["untied_window_rates"],
                                        "tied_per_layer": check.rtol["tied_window_rates"],
                                        "untied_predicted": CLOSED_FORM_RTOL, "tied_predicted": CLOSED_FORM_RTOL},
                                  why="as the rate check's: the measured rates from their window slopes; the "
                                      "predicted ones closed forms of κ")
            if k == 0 or config.law:
                checks.append(_flow_check(text, law, sz["flow_Ts"], sz["starts"], config.seed))
                for T in sz["mc_Ts"]:
                    checks += _monte_carlo_checks(config, text, law, T, sz)
        curves[text] = curve
    figs = [_figure(config.figures / "ext.untied_rates.png", curves)] if curves else []
    return hyps, checks, summary, figs


def _figure(path, curves: dict):
    """Left: log10 excess against T, tied at α_T (solid) and the untied optimum (dashed), with the
    predicted per-layer slopes (dotted) through the deepest point.  Right: the per-layer rate measured
    over each window [T, 2T] against T, with the predicted rates."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 5.2 + 0.18 * len(curves)), layout="constrained")
    left, right = fig.subplots(1, 2)
    for i, (label, c) in enumerate(curves.items()):
        col = f"C{i % 10}"
        T = np.asarray(c["T"], float)
        for key, style, name in (("tied_log10", "o-", "tied at α_T"), ("untied_log10", "s--", "untied optimum")):
            y = np.asarray([np.nan if v is None else v for v in c[key]], float)
            keep = np.isfinite(y)
            note = "" if keep.all() else f" (exactly 0 from T = {c['atoms']} on)"
            left.plot(T[keep], y[keep], style, color=col, ms=4, label=f"{label}: {name}{note}")
            if keep.sum() >= 2 and keep.all():
                rate = c["predicted"]["tied" if key == "tied_log10" else "untied"]
                if rate > 0:
                    x0, y0 = T[keep][-1], y[keep][-1]
                    xs = np.array([T[keep][0], x0])
                    left.plot(xs, y0 + (xs - x0) * math.log10(rate), ":", color=col, lw=1)
        w = c.get("windows")
        if w:
            ends = [b for _, b in w["windows"]]
            right.plot(ends, w["untied_window_rates"], "s--", color=col, ms=4, label=f"{label}: untied")
            right.plot(ends, w["tied_window_rates"], "o-", color=col, ms=4, label=f"{label}: tied")
            right.axhline(w["untied_predicted_rate"], color=col, ls=":", lw=1)
            right.axhline(w["tied_predicted_rate"], color=col, ls=":", lw=1)
    left.set(xlabel="depth T", ylabel="log₁₀ excess risk over Bayes",
             title="tied (α_T) vs untied (optimal schedule); dotted: predicted slope")
    right.set(xlabel="end of the window [T/2, T]", ylabel="per-layer rate  10^(Δ log₁₀ excess / ΔT)",
              title="per-layer rate; dotted: ((κ−1)/(κ+1))² and ((√κ−1)/(√κ+1))²", xscale="log", yscale="log")
    if not any(c.get("windows") for c in curves.values()):
        right.text(0.5, 0.5, "no rate to draw: every law here is atomic\n(its optimal excess is exactly 0 from T = m)",
                   transform=right.transAxes, ha="center", va="center")
        right.set(xscale="linear", yscale="linear")
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12), frameon=False)
    save_figure(fig, path, dpi=110)
    return path

