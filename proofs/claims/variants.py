"""Claim variant.floor: what is derived for each LCA variant (``theory.variants``) holds.

For a variant with readout, F⁰, skip and parametrisation as given, the least excess risk over
Bayes at depth T, ``E_T = min_θ L_T(θ) − Bayes``, tends as T → ∞ to the derived *floor* ``F``: the
least excess over the stable family (fixed parameters with ``|1 + w_V λ| < 1``) and the 1/T-scaled
family (``θ = φ/T``).  For mmicl's default ``F = 0`` (the paper's Bayes optimality, a control
here); with both sides of the readout evolved, or with ``F⁰ = X`` and no skip, ``F > 0``.

Checks (decisive: the limit; corroborating: the routes to the same loss, the minimiser's scaling,
the flow and Monte Carlo):

- the excess computed by iterating the derived layer map equals d×d matrix recurrences;
- it equals the closed form in symbolic T (``rsolve``) at random parameters;
- ``E_T → F`` (the decision rule of ``_limit_rule``);
- where the scaled family attains F: ``T·θ_T → φ``;
- the gradient flow from θ = 0 ends at the minimiser (or where, and why not);
- (quick, full) the torch model's Monte Carlo excess at θ_T equals ``L_T(θ_T)``.

Without ``--variant`` the claim runs on ``DEFAULT_VARIANTS``: the default (the control, F = 0), both
sides evolved, and F⁰ = X without the skip.
"""
from __future__ import annotations

import math

import numpy as np

from mmicl.numerics import variants as nv
from mmicl.numerics.asymptotics import ends
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.task import TaskLaw
from mmicl.proofs import hypotheses as hyp
from mmicl.proofs.claims.number_tolerances import EXACT, SAMPLING_WHY, exact, sampling_atol
from mmicl.proofs.claim import CORROBORATING, Check, Hypothesis, RunConfig, Summary

__all__ = ["LAW", "DEFAULT_VARIANTS", "EPS", "CLOSED_RTOL", "EXCESS_RTOL", "evaluate_floor"]


LAW = "sv=beta(2,5,0.2,3); sr=twopoint(0.5,2,0.5); zeta=rademacher; d1=3; d2=2"
"""The default law: both modalities, a Beta piece and atoms, Rademacher labels."""
DEFAULT_VARIANTS = ("default", "readout=evolved-keys-and-query", "f0=tokens,skip=off")
EPS = 2.0**-52
MATRIX_RTOL, MATRIX_ATOL_PER_SCALE = 1e-9, 1e-14
"""The matrix route's agreement: 1e-9 relative plus 1e-14·ζ²(1 + s)² absolute (float64 rounding of
≤ T d×d products and of the cancellation risk − Bayes risk, both O(ζ²))."""
CLOSED_RTOL = 1e-8
"""The closed form in symbolic T against the iterated layer: the closed form divides by
``w_V λ`` (two parameters) and forms ``q^T`` by a power; at the parameters drawn (|w_V|λ ≥ 0.05,
T ≤ 12) both are accurate to about T·cond·u ≤ 1e-10 relative, and 1e-8 leaves room."""
EXCESS_RTOL = 1e-9
"""The variants' excess by quadrature (``law.rule``) of the iterated layer: about T·u relative per
node (T ≤ 10⁴: ≤ 1e-12) plus the rule's own error (Jacobi weights ~5e-12); 1e-9 relative."""


def _sizes(config: RunConfig) -> dict:
    if config.smoke:
        return dict(Ts=[10, 100], mc=None)
    if config.quick:
        return dict(Ts=[10, 100, 1000], mc=dict(T=10, samples=20_000))
    return dict(Ts=[10, 30, 100, 300, 1000, 3000], mc=dict(T=10, samples=200_000))


def _hypotheses(law: TaskLaw) -> list[Hypothesis]:
    """The hypotheses of the default theorems: bounded s, signal, a finite label scale."""
    return [hyp.bounded_s(law), hyp.has_signal(law), hyp.label_scale(law)]


def _top_atom(law: TaskLaw, fl: nv.Floor) -> Hypothesis:
    """The stable and scaled families hold every limit unless the law has an atom at s_hi, which
    adds the alternating regime α ≈ 2/(1 + s_hi); a floor of 0 cannot be undercut by it."""
    top = ends(law)[1]
    atom = top.kind == "atom"
    return Hypothesis(
        "no atom at the top of the signal support, or a floor of 0 (the stable and scaled families then "
        "hold every limit; an atom at s_hi adds the alternating regime α ≈ 2/(1 + s_hi), not derived)",
        (not atom) or fl.zero,
        f"s_hi = {top.value:g} is {'an atom' if atom else 'the end of a density'}; floor {fl.value:.6g}")


def _routes_check(text: str, variant: nv.Variant, rng: np.random.Generator, trials: int = 12) -> Check:
    """The excess from the iterated derived layer (on a point law) against d×d matrices and
    against the closed form in symbolic T, at random prompts and parameters."""
    model = nv.tv.derive(variant)
    closed = nv.closed_form(variant)
    worst_m = worst_c = 0.0
    for _ in range(trials):
        d = int(rng.integers(2, 6))
        m = rng.standard_normal(d)
        m *= math.sqrt(rng.uniform(0.1, 4.0)) / np.linalg.norm(m)
        s, zeta, T = float(m @ m), float(rng.standard_normal()), int(rng.integers(1, 12))
        theta = _random_params(model, s, rng)
        law = f"s=point({s!r})"
        iterated = zeta**2 * nv.excess_at(law, T, variant, theta)
        direct = nv.matrix_excess_variant(m, zeta, variant, theta, T)
        worst_m = max(worst_m, abs(iterated - direct) / (MATRIX_RTOL * abs(direct) + MATRIX_ATOL_PER_SCALE * zeta**2 * (1 + s) ** 2))
        c = zeta**2 * closed(theta, s, T)
        worst_c = max(worst_c, abs(c - iterated) / (CLOSED_RTOL * abs(iterated) + MATRIX_ATOL_PER_SCALE * zeta**2 * (1 + s) ** 2))
    return Check(
        f"[{text}] the iterated layer's excess = d×d matrix recurrences = the closed form in symbolic T",
        "symbolic + matrix", worst_m < 1 and worst_c < 1,
        {"trials": trials, "worst_matrix_error_over_allowed": worst_m, "worst_closed_form_error_over_allowed": worst_c},
        f"matrix: {MATRIX_RTOL:g} relative + {MATRIX_ATOL_PER_SCALE:g}·ζ²(1+s)²; closed form: {CLOSED_RTOL:g} relative",
        "random d ∈ [2, 5], s ∈ [0.1, 4], T ∈ [1, 11], parameters with |w_V|(1+s) ∈ [0.05, 1.5]",
        role=CORROBORATING,  # a second and third route to the loss the limit check minimises
        atol={"trials": EXACT, "worst_matrix_error_over_allowed": 1.0, "worst_closed_form_error_over_allowed": 1.0},
        numbers_tolerance="each ratio is a rounding error over its allowance: anywhere in [0, 1) is the same result")


def _random_params(model, s: float, rng: np.random.Generator) -> tuple[float, ...]:
    """Parameters with |w_V|(1 + s) ∈ [0.05, 1.5] (the closed form divides by w_V λ), any sign of α."""
    out = []
    for name in map(str, model.params):
        mag = rng.uniform(0.05, 1.5) / (1 + s)
        out.append(float(mag if name == "alpha" and model.variant.param == "one" else
                          -mag if name == "beta" else rng.uniform(-1.0, 1.0) / (1 + s)))
    return tuple(out)


def _slope(Ts: list[int], x: np.ndarray, k: int) -> float | None:
    """log-log slope of ``x`` between sweep points k−1 and k."""
    if k < 1 or x[k] <= 0 or x[k - 1] <= 0:
        return None
    return float(math.log(x[k] / x[k - 1]) / math.log(Ts[k] / Ts[k - 1]))


def _limit_rule(Ts: list[int], gap: np.ndarray, accuracy: np.ndarray) -> tuple[bool | None, dict]:
    """Does ``|E_T − F|`` go to 0?  A finite sweep cannot prove a limit; the rule says what it can.
    At finite T the scaled family is reached with an error O(1/T) ((1 + x/T)^T = e^x(1 + O(1/T))),
    so ``holds``: |gap| within the numerical accuracy at the deepest T, or strictly falling over the
    deeper half of the sweep with a last log-log slope ≤ −1/2.  ``fails``: the last two slopes both
    flatter than −0.1 with |gap| above accuracy (the minimal excess approaches another value).
    Otherwise ``inconclusive``."""
    g = np.abs(gap)
    half = g[len(g) // 2:]
    last = _slope(Ts, g, len(g) - 1)
    before = _slope(Ts, g, len(g) - 2)
    nums = {"last_slope": last, "previous_slope": before}
    if g[-1] <= accuracy[-1]:
        return True, nums
    if bool(np.all(np.diff(half) < 0)) and last is not None and last <= -0.5:
        return True, nums
    if last is not None and before is not None and last > -0.1 and before > -0.1:
        return False, nums
    return None, nums


def _accuracy(Ts: list[int], ex: np.ndarray, F: float, law: TaskLaw) -> np.ndarray:
    """How well E_T − F is known: EXCESS_RTOL of the larger, plus the excess that a residual
    λP_T − 1 of 64·T·eps produces (``numerics.variants.resolution``: the iterated layer forms P_T to
    about T·u; where E_T is at that level its value is rounding, as the default's is at T ≥ 100)."""
    return EXCESS_RTOL * np.maximum(ex, F) + np.array([nv.resolution(law, T) for T in Ts])


def _limit_check(text: str, Ts: list[int], rows: list[dict], fl: nv.Floor, law: TaskLaw) -> Check:
    ex = np.array([r["excess"] for r in rows])
    gap = ex - fl.value
    accuracy = _accuracy(Ts, ex, fl.value, law)
    passed, slopes = _limit_rule(Ts, gap, accuracy)
    return Check(
        f"[{text}] the least excess E_T = min_θ L_T − Bayes → the derived floor F = {fl.value:.6g} ({fl.regime} family)",
        "optimisation + quadrature", passed,
        {"T": Ts, "excess": ex.tolist(), "floor": fl.value, "gap": gap.tolist(), "accuracy": accuracy.tolist(),
         **slopes, "grid": rows[0]["grid"]},
        "holds: |E_T − F| within accuracy (EXCESS_RTOL relative + the excess of a residual 64·T·eps) at the deepest T, "
        "or strictly falling over "
        "the deeper half with a last log-log slope ≤ −1/2 (the scaled family is reached at O(1/T)); fails: the last "
        "two slopes flatter than −0.1 above accuracy (a plateau at another value); otherwise inconclusive",
        "E_T by a global grid search and trust-region refinement (not certified: a search)",
        atol={"excess": EXCESS_RTOL * float(ex.max()), "floor": EXCESS_RTOL * fl.value, "gap": 2 * EXCESS_RTOL * float(ex.max()),
              "last_slope": _slope_move(ex, fl.value), "previous_slope": _slope_move(ex, fl.value),
              **exact("T", "accuracy", "grid")},
        numbers_tolerance="excess and floor: EXCESS_RTOL of the largest; gap: both; slopes: that move over the smallest "
                          "gap (first order, over ln of a decade ratio); depths, accuracies and the grid exact")


def _slope_move(ex: np.ndarray, F: float) -> float:
    """How far a log-log slope of |E_T − F| may move when each E_T and F move by EXCESS_RTOL: the
    relative move of the smallest |gap| twice over, divided by ln of the smallest depth ratio (3)."""
    g = np.abs(ex - F)
    smallest = float(g[g > 0].min()) if np.any(g > 0) else 0.0
    if smallest == 0.0:
        return 0.0
    return min(2 * 2 * EXCESS_RTOL * max(float(ex.max()), F) / smallest / math.log(3.0), 1e3)


def _scaling_check(text: str, Ts: list[int], rows: list[dict], fl: nv.Floor, k: int) -> Check:
    """Where the scaled family attains the floor at φ: T·θ_T → φ (same rule as the limit)."""
    if fl.regime != "scaled" or k == 0 or len(fl.params) != k:
        return Check(f"[{text}] T·θ_T → φ, the scaled family's minimiser", "optimisation", None,
                     {"regime": fl.regime}, "applies where the scaled family attains the floor",
                     f"the floor is attained by the {fl.regime} family: there the minimiser has no 1/T scaling",
                     role=CORROBORATING, atol=EXACT, numbers_tolerance="no numbers")
    phi = np.array(fl.params)
    dist = np.array([float(np.linalg.norm(np.array(r["params"]) * T - phi)) for T, r in zip(Ts, rows)])
    acc = 1e-6 * (1 + np.linalg.norm(phi)) * np.ones_like(dist)
    passed, slopes = _limit_rule(Ts, dist, acc)
    return Check(
        f"[{text}] T·θ_T → φ = {tuple(round(float(x), 6) for x in phi)}, the scaled family's minimiser",
        "optimisation", passed, {"T": Ts, "distance": dist.tolist(), "phi": phi.tolist(), **slopes},
        "the limit check's rule on |T·θ_T − φ|, accuracy 1e-6·(1 + |φ|) (the searches' refinement)",
        role=CORROBORATING,  # the minimiser's scaling: the statement is about the excess
        atol={"distance": 1e-6 * (1 + float(np.linalg.norm(phi))), "phi": 1e-6 * (1 + float(np.linalg.norm(phi))),
              "last_slope": 0.1, "previous_slope": 0.1, "T": EXACT},
        numbers_tolerance="θ_T and φ to the searches' 1e-6 refinement; slopes 0.1 (the rule's own resolution); T exact")


def _flow_check(text: str, law: TaskLaw, variant: nv.Variant, T: int, best: tuple[float, ...]) -> Check:
    fl = nv.gradient_flow(law, T, variant)
    if not best:
        return Check(f"[{text}] the gradient flow from θ = 0 (T = {T})", "ode", None, {"T": T},
                     "applies where the loss depends on the parameters", fl.reason, role=CORROBORATING,
                     atol=EXACT, numbers_tolerance="T exact")
    err = float(np.linalg.norm(np.array(fl.params) - np.array(best)))
    reached = fl.converged and err <= 1e-6 * (1 + float(np.linalg.norm(best)))
    return Check(
        f"[{text}] the gradient flow from θ = 0 ends at the global minimiser θ_T (T = {T})", "ode",
        True if reached else None,
        {"T": T, "flow_params": list(fl.params), "minimiser": list(best), "distance": err, "flow_excess": fl.excess,
         "converged": fl.converged},
        "1e-6·(1 + |θ_T|): the search's refinement; the flow stops within 1e-12 of a strict minimum",
        fl.reason + ("" if reached else "; not the global minimiser: the statement is about the minimum, so this "
                     "decides nothing (undecided)"),
        role=CORROBORATING,
        atol={"flow_params": 1e-6 * (1 + float(np.linalg.norm(best))), "minimiser": 1e-6 * (1 + float(np.linalg.norm(best))),
              "distance": 2e-6 * (1 + float(np.linalg.norm(best))), "flow_excess": EXCESS_RTOL * max(fl.excess, 1e-300),
              "T": EXACT},
        numbers_tolerance="parameters to the search's 1e-6; the flow's excess EXCESS_RTOL; T exact")


def _mc_check(text: str, law: TaskLaw, variant: nv.Variant, T: int, theta: tuple[float, ...], samples: int,
              config: RunConfig) -> Check:
    from mmicl.numerics.variant_models import sampled_excess_variant

    exact_value = nv.excess_at(law, T, variant, theta)
    est = sampled_excess_variant(law, T, variant, theta, n=None, samples=samples,
                                 seed=int(config.rng("variant.floor", variant.text).integers(2**31)), device=config.device)
    z = (est.mean - exact_value) / est.se if est.se > 0 else (0.0 if est.mean == exact_value else math.inf)
    return Check(
        f"[{text}] the torch model's Monte Carlo excess at θ_T = L_T(θ_T) (T = {T}, n = ∞)", "monte-carlo",
        abs(z) <= 4.0,
        {"T": T, "params": list(theta), "excess": exact_value, "mc_excess": est.mean, "mc_se": est.se, "z": z,
         "samples": samples},
        "4 standard errors (two-sided, a false alarm about 6e-5)",
        "the variant's torch model (numerics.variant_models) on sampled prompts with C = Λ, h = ζm, the query "
        "integrated out exactly",
        sampled=("mc_excess", "mc_se", "z"), se={"mc_excess": "mc_se"},
        role=CORROBORATING,  # a second route to the loss, through the real layer
        atol={"mc_excess": sampling_atol(est.se), "mc_se": sampling_atol(est.se), "z": 4 * math.sqrt(2.0),
              "excess": EXCESS_RTOL * exact_value, "params": 1e-6 * (1 + float(np.linalg.norm(theta))),
              **exact("T", "samples")},
        numbers_tolerance=SAMPLING_WHY + "; the derived excess EXCESS_RTOL; θ_T to the search's 1e-6")


def _one(config: RunConfig, law: TaskLaw, variant: nv.Variant, sizes: dict) -> tuple[list, list, dict]:
    text = f"{variant.short} on {law.spec()}"
    hyps = _hypotheses(law)
    if not all(h.met for h in hyps):
        return hyps, [], {}
    fl = nv.floor(law, variant)
    hyps.append(_top_atom(law, fl))
    rows = []
    for T in sizes["Ts"]:
        r = nv.minimise(law, T, variant)
        rows.append({"T": T, "params": r.params, "excess": r.excess, "grid": r.grid})
    k = len(rows[0]["params"])
    checks = [_routes_check(text, variant, config.rng("variant.routes", variant.text)),
              _limit_check(text, sizes["Ts"], rows, fl, law),
              _scaling_check(text, sizes["Ts"], rows, fl, k),
              _flow_check(text, law, variant, sizes["Ts"][0], rows[0]["params"])]
    if sizes["mc"] is not None and k:
        T_mc = sizes["mc"]["T"]
        theta = rows[sizes["Ts"].index(T_mc)]["params"] if T_mc in sizes["Ts"] else nv.minimise(law, T_mc, variant).params
        checks.append(_mc_check(text, law, variant, T_mc, theta, sizes["mc"]["samples"], config))
    return hyps, checks, {"floor": fl.value, "regime": fl.regime, "stable": fl.stable, "scaled": fl.scaled,
                          f"excess_T{sizes['Ts'][-1]}": rows[-1]["excess"]}


def evaluate_floor(config: RunConfig):
    law = parse_law(config.law or LAW)
    variants = [nv.parse_variant(config.variant)] if config.variant else [nv.parse_variant(v) for v in DEFAULT_VARIANTS]
    if any(v.param == "untied" for v in variants):
        return [Hypothesis("the variant has one or two tied parameters (param=one or two)", False,
                           "the untied LCA's own claim is ext.untied")], [], {}
    sizes = _sizes(config)
    hyps, checks, summary = [], [], {}
    for v in variants:
        h, c, s = _one(config, law, v, sizes)
        tag = v.short
        hyps += [Hypothesis(f"[{tag}] {x.text}", x.met, x.detail) for x in h]
        checks += c
        summary |= {(f"{tag}: {k}" if len(variants) > 1 else k): val for k, val in s.items()}
    moves = {k: (EXACT if isinstance(v, str) else EXCESS_RTOL * abs(v)) for k, v in summary.items()}
    return hyps, checks, Summary(summary, atol=moves, why="the floors and excesses to EXCESS_RTOL; regimes exact")

