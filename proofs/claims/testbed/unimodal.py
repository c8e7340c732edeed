"""Claims 1, 2, 3 and 8 of the testbed: one modality (``design.DESIGNS``).

Each claim trains its model shapes as one ensemble per seed family (``common.run_family``: runs of
the results store ``OUT/testbed/runs``, so that a killed claim resumes), evaluates on sets of
``EVAL_SIZE`` sequences, and decides each pre-registered check by ``common.decide_check``.  Settings
a pilot chose come from ``pilots.PILOTED``.  Each returns ``(hypotheses, checks, Summary, figures)``.

- claim 1 (version 4): over three-level doses, K, burstiness and ε raise ICL; a Zipfian class law
  raises in-weights accuracy over the best query-blind rule and lowers ICL;
- claim 2: more heads or layers raise final in-weights accuracy (on seeds settled in both arms);
- claim 3: RoPE needs more classes for ICL and shows weaker previous-token and induction patterns;
- claim 8: mean-ablating the induction heads brings ICL down to copying and costs more than ablating
  the heads that are neither, and the top induction head rises while ICL does.
"""
from __future__ import annotations

import math
from dataclasses import asdict, replace

import numpy as np

from mmicl.numerics.testbed.experiments import Arm
from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.testbed.model import decoder_parameters, width_matching_parameters
from mmicl.numerics.testbed.sign_tests import binomial_se, slope_and_se

from .common import (BALANCED_SE, above_copy, acc_se, balanced_arm_se, balanced_se, base_hypotheses, blind_sd, chance,
                     decide_pairs, family_seeds, headroom, premise, run_family, verdict_summary, write_result)
from .design import DESIGNS, EVAL_SIZE
from .pilots import PILOTED, SETTLED_TOL
from .sizes import CLAIM1_V4, V4_HEADS, scope, v4_unimodal_size

__all__ = ["claim1", "CLAIM1_KNOBS", "claim1_arm", "claim1_doses", "dose_levels", "dose_trend", "dose_least_step", "claim2", "claim3", "claim8", "patch_differences", "BALANCED_SEED", "SELECTION_SEED", "REFERENCE_SEED", "CONTROL_SEED",
           "INDUCTION_HEAD", "PREV_TOKEN_HEAD", "PATTERN_SE", "last_quarter_range", "SETTLED_TOL", "claim2_shapes", "claim2_pilot_jobs", "settled_steps", "CLAIM3_K_V4", "claim3_pilot_jobs",
           "icl_gap",
           "first_crossing", "inside_window", "result_content"]

PATTERN_SE = "attention scores lie in [−1, 1], so one seed's mean over n sequences has se ≤ 1/√n"

BALANCED_SEED = 2_000_003
"""Seed of the label-balanced IWL set drawn after training (analysis ``iwl_balanced``): apart from the
evaluation sets' seed (data seed + 1 000 003) and the head-ranking seeds."""
SELECTION_SEED, REFERENCE_SEED, CONTROL_SEED = 3_000_017, 3_000_029, 0
"""Claim 8's head ranking: the selection set's seed, the reference set's (mean-ablation), the tie-break's."""
INDUCTION_HEAD = 0.5
"""A head counts as an induction head when its induction score (in [−1, 1]) exceeds this."""


def result_content(runs: dict, **extra) -> dict:
    """What a unimodal claim's result file holds beside ``extra``: every run's table and curves and
    the seconds each took, by ``<shape>_<family>``."""
    return {**extra,
            "tables": {f"{n}_{f}": fr.results.table() for n, per in runs.items() for f, fr in per.items()},
            "histories": {f"{n}_{f}": fr.results.run.history.to_json() for n, per in runs.items() for f, fr in per.items()},
            "seconds": {f"{n}_{f}": fr.record["provenance"]["seconds"] for n, per in runs.items() for f, fr in per.items()}}


# ---- claim 1: data complexity ---------------------------------------------------------------------
CLAIM1_KNOBS = ("K", "p_bursty", "eps", "zipf")
"""Claim 1's four doses, in the design's order."""


def claim1_arm(data) -> Arm:
    """The claim-1 arm of one data setting, named by its four knobs (so that two doses sharing a
    setting share the arm, trained once)."""
    return Arm(f"K{data.K}_pB{data.p_bursty:g}_eps{data.eps:g}_zipf{data.zipf:g}", data)


def claim1_doses(data, levels, k_edge: int) -> dict[str, list[Arm]]:
    """Claim 1's doses (version 4): per knob of ``CLAIM1_KNOBS``, its arms lowest level first, each
    ``data`` with that knob at its level of ``levels`` (``sizes.CLAIM1_V4``) and the others fixed: K
    bursty at ε = 0.1; p_B at the largest K; ε at ``k_edge``, bursty; the Zipf exponent at the
    largest K and ``levels.zipf_p_bursty``."""
    top = levels.K[-1]
    at = lambda **kw: claim1_arm(replace(data, **{"p_bursty": 1.0, "eps": 0.1, "zipf": 0.0, **kw}))  # noqa: E731
    return {"K": [at(K=k) for k in levels.K],
            "p_bursty": [at(K=top, p_bursty=p) for p in levels.p_bursty],
            "eps": [at(K=k_edge, eps=e) for e in levels.eps],
            "zipf": [at(K=top, p_bursty=levels.zipf_p_bursty, zipf=z) for z in levels.zipf]}


def dose_levels(run, metric: str, arms) -> tuple[np.ndarray, np.ndarray]:
    """(levels, seeds) values of ``metric`` over a dose's ``arms`` and their evaluation se: final
    ``acc_icl`` (binomial on ``EVAL_SIZE`` items) or ``iwl_balanced_over_blind`` (``BALANCED_SE``)."""
    if metric == "acc_icl":
        y = np.stack([run.final("acc_icl", a.name) for a in arms]).astype(float)
        return y, binomial_se(np.clip(y, 0, 1), EVAL_SIZE)
    if metric != "iwl_balanced_over_blind":
        raise ValueError(f"claim 1 reads acc_icl or iwl_balanced_over_blind, not {metric!r}")
    y = np.stack([np.asarray(run.analysis(metric, a.name), float) for a in arms])
    se = np.stack([balanced_arm_se(run.analysis("acc_iwl_balanced", a.name), blind_sd(run, a.name)) for a in arms])
    return y, se


def dose_trend(y: np.ndarray, se: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the fitted rise across a dose of equally spaced levels: the least-squares slope of
    ``y`` (levels, seeds) on the level's index times (levels − 1), and its se
    (``sign_tests.slope_and_se``, the levels' errors independent)."""
    k = y.shape[0]
    x = np.broadcast_to(np.arange(k, dtype=float)[:, None], y.shape)
    b, b_se = slope_and_se(x, y, 0.0, se)
    return b * (k - 1), b_se * (k - 1)


def dose_least_step(y: np.ndarray, se: np.ndarray, up: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the dose's smallest step between adjacent levels in the claimed direction (``up``:
    y_{j+1} − y_j; else y_j − y_{j+1}) and that step's se (its two levels' se's in quadrature)."""
    steps = np.diff(y, axis=0) * (1.0 if up else -1.0)
    j = np.argmin(steps, axis=0)
    cols = np.arange(y.shape[1])
    return steps[j, cols], np.sqrt(se[j, cols] ** 2 + se[j + 1, cols] ** 2)


def claim1(config):
    """ICL needs data complexity (``DESIGNS["claim1"]``, version 4): over doses of three levels each
    (``sizes.CLAIM1_V4``), K, burstiness and ε raise final ICL, and the Zipf exponent raises in-weights
    accuracy over the best query-blind rule and lowers ICL, read per seed as the fitted rise across
    the dose (``dose_trend``), with a corroborating check per dose that no step reverses it
    (``dose_least_step``).  Every arm × seed is one ensemble per version-4 family at the version-4
    unimodal size (2 layers × 4 heads), evaluated on ``EVAL_SIZE`` sequences."""
    sz = v4_unimodal_size(config, "claim1", V4_HEADS, PILOTED["v4_stage1"]["steps"])
    if "v4_claim1" not in PILOTED:
        raise TestbedConfigError("testbed.claim1 (version 4) reads K_edge from its pilot, which has not chosen it yet: "
                                 "run python studies/pilot_v4_claim1.py and record its choice in "
                                 "pilots.PILOTED['v4_claim1']")
    levels, k_edge = CLAIM1_V4, int(PILOTED["v4_claim1"]["K_edge"])
    doses = claim1_doses(sz.data, levels, k_edge)
    arms = list({a.name: a for dose in doses.values() for a in dose}.values())
    runs = run_family(config, {"claim1": (sz.model, arms, {"name": "iwl_balanced", "seed": BALANCED_SEED})},
                      sz.train, claim="claim1")
    fam = runs["claim1"]
    _, copy = chance(sz.data)
    seeds = family_seeds("claim1")
    design = DESIGNS["claim1"]
    eps_margin = next(c.margin for c in design.checks if c.a == "eps" and c.role == "decisive")
    top, eps_low = doses["K"][-1].name, doses["eps"][0].name
    works = {f: above_copy(fam[f].final("acc_icl", top), copy) for f in fam}
    room = {f: headroom(np.clip(fam[f].final("acc_icl", eps_low), 0, 1), eps_margin) for f in fam}
    hyps = base_hypotheses(config)
    hyps += [premise(f"the K = {levels.K[-1]} bursty arm does ICL at the end (above B/N + 2 se) on the seed",
                     works, seeds),
             premise(f"headroom for ε: the ε = {levels.eps[0]:g} arm at K_edge = {k_edge} ends below 1 − "
                     f"{eps_margin:g} − 2 se on the seed", room, seeds)]
    keep = {"K": works, "p_bursty": works, "eps": room}
    checks, trends = [], {}
    for c in design.checks:
        base, _, read = c.metric.partition("_trend") if c.metric.endswith("_trend") else c.metric.partition("_least_step_")
        diffs, ses = {}, {}
        for f in fam:
            y, se = dose_levels(fam[f], base, doses[c.a])
            d, d_se = dose_trend(y, se) if c.metric.endswith("_trend") else dose_least_step(y, se, read == "up")
            if c.metric.endswith("_trend"):
                trends.setdefault(f, {})[f"{c.a}:{base}"] = {"rise": d.round(4).tolist(), "se": d_se.round(4).tolist()}
            mask = keep.get(c.a, {}).get(f, np.ones(d.size, bool))
            diffs[f], ses[f] = d[mask], d_se[mask]
        why = (f"binomial, {EVAL_SIZE} sequences per arm" if base == "acc_icl" else BALANCED_SE)
        why += ("; the dose's levels independent (separate arms), the rise's se from theirs (sign_tests.slope_and_se)"
                if c.metric.endswith("_trend") else "; the step's two levels' se's in quadrature")
        if c.a in keep:
            why += "; seeds meeting the dose's premise"
        checks.append(decide_pairs(c, diffs, ses, why))
    reported = {f: {"arms": {a.name: {"acc_icl": fam[f].final("acc_icl", a.name).round(4).tolist(),
                                      "acc_icl_step0": np.asarray(fam[f].results.curve("acc_icl", a.name))[0]
                                      .round(4).tolist(),
                                      "icl_copy_rate": fam[f].final("icl_context_rate", a.name).round(4).tolist(),
                                      "auc_icl": fam[f].auc("acc_icl", a.name).round(4).tolist(),
                                      "acc_iwl_balanced": fam[f].analysis("acc_iwl_balanced", a.name),
                                      "iwl_blind_best": fam[f].analysis("iwl_blind_best", a.name)} for a in arms},
                    "trends": trends[f], "first_step": int(fam[f].results.steps[0])}
                for f in fam}
    write_result(config, "claim1", result_content(runs, piloted=PILOTED["v4_claim1"], copy_baseline=copy,
                                                    doses={k: [a.name for a in v] for k, v in doses.items()},
                                                    levels=asdict(levels), reported=reported),
                 scope=scope(sz))
    return hyps, checks, verdict_summary(checks, {"K_edge": k_edge}), []


# ---- claims 2 and 3: settled runs --------------------------------------------------------------------
def last_quarter_range(curve: np.ndarray, steps) -> np.ndarray:
    """Per seed, max − min of a curve (evaluations, seeds) over the evaluations in the last quarter
    of training (steps ≥ ¾ of the last step)."""
    steps = np.asarray(steps, float)
    tail = np.asarray(curve, float)[steps >= 0.75 * steps[-1]]
    return tail.max(0) - tail.min(0)


def settled_steps(claim: str) -> int:
    """The piloted step count of version 4's claim 2 or 3 (``pilots.PILOTED["v4_<claim>"]``); a
    ``TestbedConfigError`` naming the pilot while it has not chosen one."""
    if f"v4_{claim}" not in PILOTED:
        raise TestbedConfigError(f"testbed.{claim} (version 4) reads its step count from its pilot, which has not chosen "
                                 f"it yet: run python studies/pilot_v4_settled.py {claim} and record its choice in "
                                 f"pilots.PILOTED['v4_{claim}']")
    return int(PILOTED[f"v4_{claim}"]["steps"])


# ---- claim 2: larger models favour in-weights learning ---------------------------------------------
def claim2_shapes(model, D: int, L: int) -> dict:
    """Claim 2's four shapes around the base ``model``: twice its heads at its width (narrower
    heads), twice its layers at its width, and twice its layers at the width whose parameter count
    is closest to the base's."""
    deep = model.layers * 2
    return {"base": model, "heads": replace(model, heads=model.heads * 2), "deep": replace(model, layers=deep),
            "deep_matched": replace(model, layers=deep, width=width_matching_parameters(model, deep, D, L))}


def claim2_pilot_jobs(sz, k_mid: int) -> dict:
    """Claim 2's model shapes at the size ``sz`` with their one arm (K_mid bursty) and the label-balanced
    analysis, as ``run_family`` / ``common.ensembles`` jobs: what the claim and its settledness pilot train."""
    arm = Arm("mid_bursty", replace(sz.data, K=int(k_mid), p_bursty=1.0))
    shapes = claim2_shapes(sz.model, sz.data.D, sz.data.L)
    return {n: (m, [arm], {"name": "iwl_balanced", "seed": BALANCED_SEED}) for n, m in shapes.items()}


def claim2(config):
    """Scaling heads or layers favours in-weights learning (``DESIGNS["claim2"]``, version 4): four
    shapes around the version-4 decoder (2 layers × 4 heads) at K_mid (claim 1's piloted K_edge),
    bursty, trained for the piloted steps, 8 seeds per version-4 family, paired by seed (shared data
    streams); decided on final label-balanced in-weights accuracy over the best query-blind rule, on
    seeds settled in both arms of a check."""
    sz0 = v4_unimodal_size(config, "claim2", V4_HEADS, 1)
    steps = settled_steps("claim2")
    if "v4_claim1" not in PILOTED:
        raise TestbedConfigError("testbed.claim2 (version 4) runs at claim 1's K_edge, which its pilot has not chosen "
                                 "yet: run python studies/pilot_v4_claim1.py first")
    sz = replace(sz0, train=replace(sz0.train, steps=steps))
    k_mid = int(PILOTED["v4_claim1"]["K_edge"])
    jobs = claim2_pilot_jobs(sz, k_mid)
    shapes = {n: job[0] for n, job in jobs.items()}
    arm = jobs["base"][1][0]
    runs = run_family(config, jobs, sz.train, claim="claim2")
    seeds = family_seeds("claim2")
    settled = {n: {f: last_quarter_range(runs[n][f].results.curve("icl_context_rate", arm.name),
                                         runs[n][f].results.steps) <= SETTLED_TOL for f in runs[n]} for n in shapes}
    hyps = base_hypotheses(config)
    needed = sorted({x for c in DESIGNS["claim2"].checks if c.role == "decisive" for x in (c.a, c.b)})
    for n in needed:
        hyps.append(premise(f"{n}: settled (the ICL set's copy rate moved by at most {SETTLED_TOL:.3f} over the last "
                             "quarter of training) on the seed", settled[n], seeds))
    checks = []
    for c in DESIGNS["claim2"].checks:
        diffs, ses = {}, {}
        for f in seeds:
            ra, rb = runs[c.a][f], runs[c.b][f]
            keep = settled[c.a][f] & settled[c.b][f]
            if c.metric == "acc_flip":
                a, b = ra.final("acc_flip", arm.name), rb.final("acc_flip", arm.name)
                d, se = a - b, acc_se(a, b)
            else:
                a, b = (np.asarray(r.analysis(c.metric, arm.name), float) for r in (ra, rb))
                pa, pb = (np.asarray(r.analysis("acc_iwl_balanced", arm.name), float) for r in (ra, rb))
                d, se = a - b, balanced_se(pa, pb, blind_sd(ra, arm.name), blind_sd(rb, arm.name))
            diffs[f], ses[f] = d[keep], se[keep]
        why = BALANCED_SE if c.metric != "acc_flip" else f"binomial, {EVAL_SIZE} sequences per arm"
        checks.append(decide_pairs(c, diffs, ses, why + "; seeds settled in both arms only"))
    params = {n: decoder_parameters(m, sz.data.D, sz.data.L) for n, m in shapes.items()}
    reported = {n: {f: {"auc_icl": runs[n][f].auc("acc_icl", arm.name).round(4).tolist(),
                        "acc_icl": runs[n][f].final("acc_icl", arm.name).round(4).tolist(),
                        "acc_icl_step0": np.asarray(runs[n][f].results.curve("acc_icl", arm.name))[0].round(4).tolist(),
                        "copy_rate_last_quarter_range": last_quarter_range(
                            runs[n][f].results.curve("icl_context_rate", arm.name), runs[n][f].results.steps)
                        .round(4).tolist(),
                        "iwl_balanced_over_blind": runs[n][f].analysis("iwl_balanced_over_blind", arm.name),
                        "settled": settled[n][f].tolist()} for f in seeds} for n in shapes}
    write_result(config, "claim2", result_content(runs, shapes={n: asdict(m) for n, m in shapes.items()},
                                                    parameters=params, settled_tolerance=SETTLED_TOL, K_mid=k_mid,
                                                    piloted=PILOTED["v4_claim2"], reported=reported),
                 scope=scope(sz))
    return hyps, checks, verdict_summary(checks, {"K_mid": k_mid, "steps": steps,
                                                  **{f"params_{n}": p for n, p in params.items()}}), []


# ---- claim 3: rotary positions ----------------------------------------------------------------------
CLAIM3_K_V4 = (1024, 4096, 16384)
"""Claim 3's K dose (version 4), equally spaced on a log scale, up to version 4's stage-1 K (where APE
does ICL on every pilot seed); the pattern checks read its largest."""


def claim3_pilot_jobs(sz) -> dict:
    """Claim 3's two position codes, each one ensemble over the K dose (bursty): the jobs the claim
    and its settledness pilot train."""
    arms = [Arm(f"K{k}", replace(sz.data, K=int(k), p_bursty=1.0)) for k in CLAIM3_K_V4]
    return {pos: (replace(sz.model, pos=pos), arms, None) for pos in ("ape", "rope")}


def icl_gap(run_a, run_b, arms, at: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the mean over ``arms`` (a K dose) of ICL(A) − ICL(B) at evaluation ``at`` (the last by
    default), and its se: the arms' binomial se's in quadrature, over the dose's size."""
    a = np.stack([np.asarray(run_a.results.curve("acc_icl", x.name))[at] for x in arms]).astype(float)
    b = np.stack([np.asarray(run_b.results.curve("acc_icl", x.name))[at] for x in arms]).astype(float)
    var = binomial_se(np.clip(a, 0, 1), EVAL_SIZE) ** 2 + binomial_se(np.clip(b, 0, 1), EVAL_SIZE) ** 2
    return (a - b).mean(0), np.sqrt(var.sum(0)) / len(arms)


def claim3(config):
    """RoPE raises the ICL threshold and weakens the previous-token and induction patterns
    (``DESIGNS["claim3"]``, version 4): APE and RoPE over the K dose ``CLAIM3_K_V4``, bursty, at the
    version-4 unimodal size, trained for the piloted steps, 8 seeds per version-4 family.  The
    threshold check reads the gap in final ICL averaged over the dose on seeds where every arm is
    settled; its corroborating check asks that the gap not shrink over the second half of training (a
    delay would close it); the pattern checks read K = 16384, where both arms must do ICL."""
    sz0 = v4_unimodal_size(config, "claim3", V4_HEADS, 1)
    sz = replace(sz0, train=replace(sz0.train, steps=settled_steps("claim3")))
    jobs = claim3_pilot_jobs(sz)
    arms = jobs["ape"][1]
    runs = run_family(config, jobs, sz.train, claim="claim3")
    seeds = family_seeds("claim3")
    steps = runs["ape"][next(iter(seeds))].results.steps
    half = int(np.argmin(np.abs(np.asarray(steps, float) - steps[-1] / 2)))
    top = arms[-1].name

    settled, both_icl = {}, {}
    for f in seeds:
        flags = [last_quarter_range(runs[p][f].results.curve("acc_icl", a.name), steps) <= SETTLED_TOL
                 for p in ("ape", "rope") for a in arms]
        settled[f] = np.logical_and.reduce(flags)
        both_icl[f] = (runs["ape"][f].final("acc_icl", top) >= 0.9) & (runs["rope"][f].final("acc_icl", top) >= 0.9)
    hyps = base_hypotheses(config)
    hyps += [premise(f"settled: every arm's final ICL moved by at most {SETTLED_TOL:.3f} over the last quarter of "
                     "training on the seed", settled, seeds),
             premise(f"both arms do ICL at {top} (ICL ≥ 0.9) on the seed", both_icl, seeds)]
    gap_check, change_check, *pattern_checks = DESIGNS["claim3"].checks
    checks, gaps = [], {}
    for c in DESIGNS["claim3"].checks:
        diffs, ses = {}, {}
        for f in seeds:
            ra, rr = runs["ape"][f], runs["rope"][f]
            end, end_se = icl_gap(ra, rr, arms)
            mid, mid_se = icl_gap(ra, rr, arms, half)
            gaps[f] = {"end": end.round(4).tolist(), "half": mid.round(4).tolist(), "half_step": int(steps[half])}
            if c is gap_check:
                d, se, keep = end, end_se, settled[f]
            elif c is change_check:
                d, se, keep = end - mid, np.hypot(end_se, mid_se), settled[f]
            else:
                d = ra.final(c.metric, top) - rr.final(c.metric, top)
                se, keep = np.full(d.size, math.sqrt(2.0 / EVAL_SIZE)), both_icl[f]
            diffs[f], ses[f] = d[keep], se[keep]
        why = {gap_check.name: f"binomial, {EVAL_SIZE} sequences per arm, the dose's arms independent; settled seeds",
               change_check.name: (f"binomial, {EVAL_SIZE} sequences per arm, both ends taken as independent (the same "
                                   "items, so this over-states the noise); settled seeds")}.get(
            c.name, f"{PATTERN_SE}, so a difference has se ≤ √(2/{EVAL_SIZE}); seeds where both arms do ICL at {top}")
        checks.append(decide_pairs(c, diffs, ses, why))
    minimum = {f"{pos}_{a.name}_{f}": [float(np.min(h)) for h in
                                       np.asarray(runs[pos][f].results.run.history.final("induction"))[
                                           runs[pos][f].results.member_indices(a.name)]]
               for pos in ("ape", "rope") for a in arms for f in seeds}
    finals = {f"{pos}_{a.name}_{f}": {"end": runs[pos][f].final("acc_icl", a.name).round(4).tolist(),
                                      "half": np.asarray(runs[pos][f].results.curve("acc_icl", a.name))[half]
                                      .round(4).tolist(),
                                      "step0": np.asarray(runs[pos][f].results.curve("acc_icl", a.name))[0]
                                      .round(4).tolist()}
              for pos in ("ape", "rope") for a in arms for f in seeds}
    write_result(config, "claim3", result_content(runs, piloted=PILOTED["v4_claim3"], copy_baseline=chance(sz.data)[1],
                                                    K_dose=list(CLAIM3_K_V4),
                                                    reported={"induction_min_per_seed": minimum, "acc_icl": finals,
                                                              "gap": gaps,
                                                              "settled": {f: v.tolist() for f, v in settled.items()}}),
                 scope=scope(sz))
    return hyps, checks, verdict_summary(checks, {"steps": sz.train.steps, "half_step": int(steps[half])}), []


# ---- claim 8: induction heads ---------------------------------------------------------------------
PREV_TOKEN_HEAD = 0.5
"""A head counts as a previous-token head when its previous-token score exceeds this (claim 8's
"neither" heads are the heads that are neither induction nor previous-token heads)."""


def first_crossing(curve: np.ndarray, steps, level, never: float) -> np.ndarray:
    """Per seed, the first evaluation step at which ``curve`` (evaluations, seeds) reaches ``level``
    (a number, or one per seed); ``never`` for a seed whose curve never does."""
    curve = np.asarray(curve, float)
    above = curve >= np.asarray(level, float)
    t = np.asarray(steps, float)[above.argmax(0)]
    return np.where(above.any(0), t, float(never))


def inside_window(icl: np.ndarray, score: np.ndarray, steps, copy: float, never: float) -> np.ndarray:
    """Per seed, how far inside ICL's rise window the score's half-rise falls, in steps: with t10
    and t90 the first evaluations at which ICL (evaluations, seeds) reaches 10 % and 90 % of its way
    from ``copy`` to its final value, and t½ the first at which ``score`` reaches half its final
    value, min(t½ − t10, t90 − t½): positive inside, negative outside, 0 on an edge."""
    icl, score = np.asarray(icl, float), np.asarray(score, float)
    rise = icl[-1] - copy
    t10 = first_crossing(icl, steps, copy + 0.1 * rise, never)
    t90 = first_crossing(icl, steps, copy + 0.9 * rise, never)
    half = first_crossing(score, steps, 0.5 * score[-1], never)
    return np.minimum(half - t10, t90 - half)


def _or_nan(values) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values])


def patch_differences(uniform, matching, copy: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Claim 8's decisive per-seed differences and their se's (version 4.1), from ICL under the uniform
    patch and under the matching patch (per seed, on ``EVAL_SIZE`` sequences) and the copy baseline:
    ``"collapse"``: copy − uniform, ``"not_broken"``: uniform − copy (both with the binomial se of the
    uniform-patched accuracy; the baseline is exact), ``"specific"``: matching − uniform (both
    accuracies' binomial se's in quadrature)."""
    uniform, matching = np.asarray(uniform, float), np.asarray(matching, float)
    se = binomial_se(np.clip(uniform, 0, 1), EVAL_SIZE)
    return {"collapse": (copy - uniform, se), "not_broken": (uniform - copy, se),
            "specific": (matching - uniform, acc_se(matching, uniform))}


def claim8(config):
    """Induction heads carry ICL (``DESIGNS["claim8"]``, version 4.1): 2 layers × the piloted heads at
    the version-4 size (``sizes.v4_unimodal_size``), on version 4.1's families, evaluated every
    ``EVAL_EVERY_V4`` steps.  Heads are classed on a selection set (``heads.induction_patching``).
    Patching every induction head's query attention to uniform over the context labels must bring
    ICL down to copying, from above and from below (the model copies, it is not broken), and leave
    it lower than the same patch with the match made perfect (the answer's labels only); ablating
    the previous-token heads must lower it too (corroborating), and the top induction head's score
    must rise while ICL does (corroborating)."""
    sz = v4_unimodal_size(config, "claim8", PILOTED["v4_claim8"]["heads"], PILOTED["v4_stage1"]["steps"])
    train, model = sz.train, sz.model
    arm = Arm("hi_bursty", sz.data)
    analysis = {"name": "induction_patching", "selection_seed": SELECTION_SEED, "reference_seed": REFERENCE_SEED,
                "threshold": INDUCTION_HEAD, "prev_threshold": PREV_TOKEN_HEAD, "control_seed": CONTROL_SEED}
    runs = run_family(config, {"claim8": (model, [arm], analysis)}, train, claim="claim8")
    fam = runs["claim8"]
    _, copy = chance(sz.data)
    seeds = family_seeds("claim8")
    count = lambda r, key: np.array([int(np.sum(m)) for m in r.analysis(key, arm.name)])  # noqa: E731
    icl_ok = {f: above_copy(fam[f].final("acc_icl", arm.name), copy) for f in fam}
    has_ind = {f: count(fam[f], "induction_heads") > 0 for f in fam}
    has_prev = {f: count(fam[f], "prev_token_heads") > 0 for f in fam}
    hyps = base_hypotheses(config)
    hyps += [premise("the model does ICL at the end (above B/N + 2 se)", icl_ok, seeds),
             premise(f"an induction head exists (selection-set induction score above {INDUCTION_HEAD})", has_ind, seeds)]
    collapse, not_broken, specific, prev_check, timing = DESIGNS["claim8"].checks
    numbers = {c.name: ({}, {}) for c in DESIGNS["claim8"].checks}
    reported = {}
    for f in fam:
        r = fam[f]
        get = lambda key: _or_nan(r.analysis(key, arm.name))  # noqa: E731
        icl = get("icl")
        uniform, matching = get("icl_patched_induction_uniform"), get("icl_patched_induction_matching")
        without_prev = get("icl_without_prev_token_heads_mean")
        keep = icl_ok[f] & has_ind[f]
        differences = patch_differences(uniform, matching, copy)
        for check, key in ((collapse, "collapse"), (not_broken, "not_broken"), (specific, "specific")):
            diff, se = differences[key]
            numbers[check.name][0][f], numbers[check.name][1][f] = diff[keep], se[keep]
        with_prev = icl_ok[f] & has_prev[f]
        numbers[prev_check.name][0][f] = (icl - without_prev)[with_prev]
        numbers[prev_check.name][1][f] = acc_se(icl[with_prev], without_prev[with_prev])
        steps = r.results.steps
        never = steps[-1] + train.eval_every
        ind = np.asarray(r.results.run.history.curve("induction"))[:, r.results.member_indices(arm.name)]  # (evals, seeds, l, H)
        tops = r.analysis("top_head", arm.name)
        top_curve = np.stack([ind[:, i, l, h] for i, (l, h) in enumerate(tops)], axis=1)
        depth = inside_window(r.results.curve("acc_icl", arm.name), top_curve, steps, copy, never)
        numbers[timing.name][0][f] = depth[icl_ok[f]]
        numbers[timing.name][1][f] = np.zeros(int(icl_ok[f].sum()))
        patches = [f"icl_patched_{k}" for k in ("induction_uniform", "induction_matching", "count_matched_uniform")]
        reported[f] = {
            "induction_heads_per_seed": count(r, "induction_heads").tolist(),
            "induction_heads_per_layer": np.asarray(r.analysis("induction_heads", arm.name)).sum(-1).tolist(),
            "neither_heads_per_layer": np.asarray(r.analysis("neither_heads", arm.name)).sum(-1).tolist(),
            "prev_token_heads_per_seed": count(r, "prev_token_heads").tolist(),
            "has_count_matched_control": list(r.analysis("has_count_matched_control", arm.name)),
            "has_matched_control": list(r.analysis("has_matched_control", arm.name)),
            "icl": icl.round(4).tolist(),
            "icl_context_rate": np.asarray(r.final("icl_context_rate", arm.name), float).round(4).tolist(),
            **{k: get(k).round(4).tolist() for k in patches},
            **{f"{k}_context_rate": get(f"{k}_context_rate").round(4).tolist() for k in patches},
            **{f"icl_without_{k}_heads_{m}": get(f"icl_without_{k}_heads_{m}").round(4).tolist()
               for k in ("induction", "matched", "neither", "prev_token") for m in ("mean", "zero")},
            "single_head": {"top_head": tops, "control_head": r.analysis("control_head", arm.name),
                            "drop_top_minus_control_mean": (get("icl_without_control_mean")
                                                            - get("icl_without_top_mean")).round(4).tolist()},
            "induction_min": r.analysis("induction_min", arm.name),
            "top_head_depth_inside_icl_window_steps": depth.tolist()}
    binomial = f"binomial se of the patched accuracy on {EVAL_SIZE} sequences (the copy baseline B/N = {copy:g} is exact)"
    why = {collapse.name: f"{binomial}; seeds with ICL at the end and an induction head",
           not_broken.name: f"{binomial}; seeds with ICL at the end and an induction head",
           specific.name: (f"binomial, {EVAL_SIZE} sequences, both patches on the evaluation set; seeds with ICL at "
                           "the end and an induction head"),
           prev_check.name: (f"binomial, {EVAL_SIZE} sequences, intact and ablated on the evaluation set; seeds with "
                             "ICL at the end and a previous-token head"),
           timing.name: (f"steps read exactly on the evaluation grid (every {train.eval_every} steps): a half-rise on "
                         "a window edge is unresolved, a curve that never reaches its level is placed one evaluation "
                         "after the end; seeds with ICL at the end")}
    checks = [decide_pairs(c, *numbers[c.name], why[c.name],
                           **({"copy_baseline": copy} if c in (collapse, not_broken) else {}))
              for c in DESIGNS["claim8"].checks]
    write_result(config, "claim8", result_content(runs, copy_baseline=copy, head_classes=analysis,
                                                    heads=model.heads, steps=train.steps, reported=reported),
                 scope=scope(sz))
    return hyps, checks, verdict_summary(checks, {"heads": model.heads, "steps": train.steps,
                                                  "eval_every": train.eval_every}), []
