"""Version 3 of the testbed claims, as the registry runs them (the design: ``testbed_v3``).

Each check of a design is decided by ``v3_check``: per seed family, the paired per-seed differences
A − B against the margin with their evaluation standard errors (``decide_v3.seed_outcomes``), an
exact sign test per family, and the two families pooled with a consistency guard
(``decide_v3.combine_families``).  Settings a pilot chose are in ``PILOTED`` (with the file of the
pilot run beside them in the repository, ``studies/results/pilot_<claim>.json``, and a test that the
file's finals give the same choice).  The unimodal claims 1, 2, 3 (version 3.1) and 8 are here; the
two-modality claims are in ``testbed_v3_transfer`` (4, 5, 9) and ``testbed_v3_modalities`` (6, 7).

Every unimodal claim trains each of its model shapes as one ensemble per seed family (runs of the
sweep runner in the results store ``OUT/testbed/runs``, so that a killed claim resumes), evaluates
on sets of ``EVAL_SIZE`` sequences, and decides each pre-registered check by ``v3_check``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.testbed.decide_v3 import (accuracy_difference_se, combine_families, seed_outcomes, sign_test,
                                              sign_test_counts)
from mmicl.numerics.testbed.experiments import Arm, ArmResults

from ..claim import Check, Hypothesis, RunConfig, Summary
from .number_tolerances import EXACT, SAMPLING_WHY, exact, sampling_atol
from .testbed_v3 import (ALPHA, DESIGNS, EVAL_EVERY_TRANSITION, EVAL_SIZE, FAMILIES, PREMISE_FAILURES, Check3,
                         outcome_words)

VERSIONS = {"claim1": 3, "claim2": 3, "claim3": 3.1, "claim8": 3}
"""The version each unimodal claim runs (docs/testbed.md lists what each version changed)."""

PILOTED = {"claim1": {"K_edge": 256},
           "claim3": {"K_both": 2048, "steps_both": 3000, "K_thr": 512}}
"""Settings chosen by each claim's pilot rule on the pilot seeds (``testbed_v3.DESIGNS[...].pilot_rule``).
Claim 3 (version 3.1): K_both and steps_both from its second pilot (9004–9011), K_thr from its first;
version 3 ran K_both = 1024 (its result file records it)."""

PATTERN_SE = "attention scores lie in [−1, 1], so one seed's mean over n sequences has se ≤ 1/√n"


def _oriented(c: Check3, d: np.ndarray) -> tuple[np.ndarray, float]:
    """The differences and margin that ``seed_outcomes`` compares for this kind of check (the
    claimed side positive)."""
    if c.kind == "superiority":
        return d, c.margin
    if c.kind == "inferiority":
        return -d, c.margin
    return d, -c.margin  # non-inferiority: d > −margin


def family_sign_test(outcomes):
    """One family's exact sign test of a check over its per-seed outcomes (``decide_v3.sign_test``
    at ``ALPHA``); a family whose seeds a premise all left out has nothing to say (no seed either
    way, decision None)."""
    return sign_test(outcomes, ALPHA) if len(outcomes) else sign_test_counts(0, 0, 0, ALPHA)


def v3_check(c: Check3, diffs: dict[str, np.ndarray], ses: dict[str, np.ndarray], se_why: str) -> Check:
    """One pre-registered check decided over the families (module docstring).  ``diffs[f]``: the
    per-seed A − B of family f (seeds left out by a premise already removed); ``ses[f]`` their
    evaluation standard errors."""
    tests, nums = {}, {}
    for f in sorted(diffs):
        d, m = _oriented(c, np.asarray(diffs[f], float))
        outcomes = seed_outcomes(d, np.asarray(ses[f], float), m) if d.size else np.zeros(0, int)
        tests[f] = family_sign_test(outcomes)
        nums[f"diff_{f}"] = [float(x) for x in diffs[f]]
        nums[f"outcomes_{f}"] = [int(x) for x in outcomes]
    comb = combine_families(tests["A"], tests["B"], ALPHA)
    nums |= {"plus": comb.pooled.plus, "minus": comb.pooled.minus, "unresolved": comb.pooled.unresolved,
             "p_above": comb.pooled.p_above, "p_below": comb.pooled.p_below, "margin": c.margin}
    from .testbed import seed_sd  # testbed imports this module

    n = sum(len(v) for v in diffs.values())
    spread = seed_sd(np.concatenate([np.asarray(v, float) for v in diffs.values()]))
    side = {"superiority": f"A − B > {c.margin:g}", "inferiority": f"A − B < −{c.margin:g}",
            "non-inferiority": f"A − B > −{c.margin:g}"}[c.kind]
    return Check(
        name=c.name, method="empirical (seeds, exact sign test)", passed=comb.decision,
        numbers=nums, role=c.role,
        tolerance=(f"per seed {side} beyond 2 evaluation se ({se_why}); exact one-sided sign test at α = {ALPHA} "
                   f"over the resolved seeds of both families pooled, inconclusive when one family alone decides "
                   f"the opposite; margin {c.margin:g}: {c.margin_why}"),
        detail=f"{comb.reason}; family A {tests['A'].decision}, family B {tests['B'].decision} "
               f"({c.metric}: {c.a} − {c.b})",
        atol={**{k: sampling_atol(spread) for k in nums if k.startswith("diff_")},
              **{k: 2.0 for k in nums if k.startswith("outcomes_")},
              **{k: float(n) for k in ("plus", "minus", "unresolved")}, "p_above": 1.0, "p_below": 1.0,
              **exact("margin")},
        numbers_tolerance=(f"{SAMPLING_WHY}: a seed's difference by the spread over seeds; outcomes, counts and "
                           "p-values by their whole range (a rerun on another machine is a fresh draw of every "
                           "trained model); the margin exact"))


def _premise(name: str, flags: dict[str, np.ndarray], seeds: dict[str, list[int]]) -> Hypothesis:
    """A per-seed premise over both families: met unless more than ``PREMISE_FAILURES`` seeds of a
    family fail it."""
    parts, met = [], True
    for f in sorted(flags):
        ok = np.asarray(flags[f], bool)
        failing = [seeds[f][i] for i in np.flatnonzero(~ok)]
        met &= len(failing) <= PREMISE_FAILURES
        parts.append(f"family {f}: {int(ok.sum())} of {ok.size} seeds" + (f" (failing: {failing})" if failing else ""))
    return Hypothesis(f"{name} (at most {PREMISE_FAILURES} seeds of a family may fail)", bool(met), "; ".join(parts))


# ---- shared pieces of the unimodal claims -------------------------------------------------------
BALANCED_SEED = 2_000_003
"""Seed of the label-balanced IWL set drawn after training (analysis ``iwl_balanced``): apart from the
evaluation sets' seed (data seed + 1 000 003) and the head-ranking seeds."""
SELECTION_SEED, REFERENCE_SEED, CONTROL_SEED = 3_000_017, 3_000_029, 0
"""Claim 8's head ranking: the selection set's seed, the reference set's (mean-ablation), the tie-break's."""
BALANCED_SE = (f"per arm (√(p(1 − p)) + sd_blind)/√{EVAL_SIZE}: the model's binomial sd per label-balanced item "
               "plus the sd over the same items of the query-blind rule's expected accuracy (recorded by the "
               "analysis), added, not in quadrature, since both are read on one set (sd(x − y) ≤ sd(x) + sd(y)); two "
               "arms' members are independent, so their se's add in quadrature")


def quick_sizes(config: RunConfig, claim: str):
    """The quick sizes of the unimodal claims; version 3 is piloted at that size only."""
    from .testbed import QUICK, sizes

    sz = sizes(config)
    if sz is not QUICK:
        raise TestbedConfigError(f"version 3 of testbed.{claim} is piloted at the quick size only: run it with --quick "
                                 "(the full size needs pilots of its own at that size)")
    return sz


@dataclass
class FamilyRun:
    """One model shape's ensemble on one seed family: its curves (``ArmResults``) and stored record."""

    results: ArmResults
    record: dict

    def final(self, metric: str, arm: str) -> np.ndarray:
        return self.results.final(metric, arm)

    def auc(self, metric: str, arm: str) -> np.ndarray:
        return self.results.area_under(metric, arm)

    def analysis(self, key: str, arm: str) -> list:
        """Per seed of ``arm``, the entry ``key`` of the run's analysis (member-major lists)."""
        values = self.record["result"]["analysis"][key]
        return [values[i] for i in self.results._index(arm)]


def family_runs(config: RunConfig, jobs: dict, train) -> dict[str, dict[str, FamilyRun]]:
    """Each job (name → (model, arms, analysis)) trained as one ensemble per seed family:
    ``{name: {family: FamilyRun}}``."""
    from .testbed import _ensembles

    out: dict[str, dict[str, FamilyRun]] = {}
    for f, seeds in FAMILIES.items():
        done = _ensembles(config, {f"{n}_{f}": job for n, job in jobs.items()}, seeds=list(seeds), train=train)
        for n in jobs:
            out.setdefault(n, {})[f] = FamilyRun(*done[f"{n}_{f}"])
    return out


def acc_se(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The evaluation se of per-seed accuracy differences a − b on ``EVAL_SIZE`` items (none for no seed)."""
    if np.size(a) == 0:
        return np.zeros(0)
    return accuracy_difference_se(np.clip(a, 0, 1), np.clip(b, 0, 1), EVAL_SIZE)


def balanced_se(acc_a: np.ndarray, acc_b: np.ndarray, sd_blind_a=0.5, sd_blind_b=0.5) -> np.ndarray:
    """``BALANCED_SE`` of per-seed differences of ``iwl_balanced_over_blind`` between two arms, from
    their balanced accuracies and the per-item sd of their blind rule (0.5, the largest sd of a
    number in [0, 1], where it is not recorded)."""
    def one(p, sd):
        p = np.clip(np.asarray(p, float), 0, 1)
        return (np.sqrt(p * (1 - p)) + np.asarray(sd, float)) / math.sqrt(EVAL_SIZE)

    return np.sqrt(one(acc_a, sd_blind_a) ** 2 + one(acc_b, sd_blind_b) ** 2)


def _blind_sd(run: "FamilyRun", arm: str) -> np.ndarray:
    """Per seed, the recorded sd of the blind rule's per-item accuracy (0.5 where not recorded)."""
    try:
        return np.asarray(run.analysis("iwl_blind_best_sd", arm), float)
    except KeyError:
        return np.full(len(run.results.seeds), 0.5)


def copy_level(copy: float, n_eval: int | None = None) -> float:
    """B/N + 2 se, the se binomial at B/N on ``n_eval`` items (``EVAL_SIZE`` by default): the ICL
    accuracy a seed must exceed to count as doing ICL rather than copying."""
    n = EVAL_SIZE if n_eval is None else int(n_eval)
    return copy + 2 * math.sqrt(copy * (1 - copy) / n)


def above_copy(icl, copy: float, n_eval: int | None = None) -> np.ndarray:
    """Per seed, ICL accuracy above ``copy_level`` (B/N + 2 binomial se on ``n_eval`` items)."""
    return np.asarray(icl, float) > copy_level(copy, n_eval)


def decide_pairs(c: Check3, diffs: dict, ses: dict, why: str, **numbers) -> Check:
    """``v3_check`` with extra reported numbers (each stated exact: settings or counts)."""
    check = v3_check(c, diffs, ses, why)
    for k, v in numbers.items():
        check.numbers[k] = v
        check.atol[k] = EXACT
    return check


def verdict_summary(checks: list[Check], settings: dict) -> Summary:
    return Summary({**settings, **outcome_words(checks)},
                   atol=EXACT, why="the settings (piloted or fixed) exact; the outcomes are text")


def write_result(config: RunConfig, claim: str, version, runs: dict[str, dict[str, FamilyRun]], **extra) -> None:
    """``OUT/testbed/<claim>.json``: version, design, seeds, every run's table and curves, the CPU
    seconds of each run, and what the claim adds (atomic write)."""
    from mmicl.numerics.atomic import write_json

    from .testbed import _out

    write_json(_out(config) / f"{claim}.json", {
        "version": version, "design": f"proofs/claims/testbed_v3.py DESIGNS['{claim}']",
        "families": {f: list(s) for f, s in FAMILIES.items()}, "data_seed": config.seed, "device": config.device,
        "eval_size": EVAL_SIZE, **extra,
        "tables": {f"{n}_{f}": fr.results.table() for n, per in runs.items() for f, fr in per.items()},
        "histories": {f"{n}_{f}": fr.results.run.history.to_json() for n, per in runs.items() for f, fr in per.items()},
        "seconds": {f"{n}_{f}": fr.record["provenance"]["seconds"] for n, per in runs.items() for f, fr in per.items()}})


def _design_check(claim: str, name_start: str) -> Check3:
    return next(c for c in DESIGNS[claim].checks if c.name.startswith(name_start))


def _hypotheses(config: RunConfig, sz) -> list[Hypothesis]:
    from .testbed import _hyps

    return [h for h in _hyps(sz, config) if "seeds per arm" not in h.text]


# ---- claim 1: data complexity ---------------------------------------------------------------------
def claim1_v3(config: RunConfig):
    """ICL needs data complexity (``testbed_v3.DESIGNS["claim1"]``): K, burstiness and ε raise ICL;
    Zipf-distributed classes raise in-weights accuracy over the best query-blind rule and lower ICL.
    Seven arms in one ensemble per family, 8 seeds each, evaluation sets of ``EVAL_SIZE``."""
    sz = quick_sizes(config, "claim1")
    from .testbed import _chance

    train = replace(sz.train, eval_size=EVAL_SIZE)
    d, k_edge = sz.data, PILOTED["claim1"]["K_edge"]
    arms = [Arm("lo_bursty", replace(d, K=sz.K_lo, p_bursty=1.0)),
            Arm("hi_bursty", replace(d, K=sz.K_hi, p_bursty=1.0)),
            Arm("hi_iid", replace(d, K=sz.K_hi, p_bursty=0.0)),
            Arm("edge_eps_lo", replace(d, K=k_edge, p_bursty=1.0, eps=0.1)),
            Arm("edge_eps_hi", replace(d, K=k_edge, p_bursty=1.0, eps=sz.eps_hi)),
            Arm("uniform", replace(d, K=sz.K_hi, p_bursty=0.9, zipf=0.0)),
            Arm("zipf", replace(d, K=sz.K_hi, p_bursty=0.9, zipf=sz.zipf_hi))]
    runs = family_runs(config, {"claim1": (sz.model, arms, {"name": "iwl_balanced", "seed": BALANCED_SEED})}, train)
    fam = runs["claim1"]
    _, copy = _chance(d)
    seeds = {f: list(s) for f, s in FAMILIES.items()}
    works = {f: above_copy(fam[f].final("acc_icl", "hi_bursty"), copy) for f in FAMILIES}
    hyps = _hypotheses(config, sz)
    hyps.append(_premise(f"the high-K bursty arm (K = {sz.K_hi}) leaves the copy plateau (ICL above B/N + 2 se) on "
                         "the seed", works, seeds))
    checks = []
    for c in DESIGNS["claim1"].checks:
        diffs, ses = {}, {}
        for f in FAMILIES:
            r = fam[f]
            if c.metric == "acc_icl":
                a, b = r.final("acc_icl", c.a), r.final("acc_icl", c.b)
                keep = works[f] if "hi_bursty" in (c.a, c.b) else np.ones(a.size, bool)
                diffs[f], ses[f] = (a - b)[keep], acc_se(a, b)[keep]
            else:  # iwl_balanced_over_blind, from the analysis of the final models
                a, b = (np.asarray(r.analysis(c.metric, arm), float) for arm in (c.a, c.b))
                pa, pb = (np.asarray(r.analysis("acc_iwl_balanced", arm), float) for arm in (c.a, c.b))
                diffs[f], ses[f] = a - b, balanced_se(pa, pb, _blind_sd(r, c.a), _blind_sd(r, c.b))
        why = {"acc_icl": f"binomial, {EVAL_SIZE} sequences per arm",
               "iwl_balanced_over_blind": BALANCED_SE}[c.metric]
        checks.append(decide_pairs(c, diffs, ses, why))
    reported = {f: {a.name: {"icl_copy_rate": fam[f].final("icl_context_rate", a.name).round(4).tolist(),
                             "acc_icl": fam[f].final("acc_icl", a.name).round(4).tolist(),
                             "auc_icl": fam[f].auc("acc_icl", a.name).round(4).tolist(),
                             "acc_iwl_balanced": fam[f].analysis("acc_iwl_balanced", a.name),
                             "iwl_blind_best": fam[f].analysis("iwl_blind_best", a.name)} for a in arms}
                for f in FAMILIES}
    write_result(config, "claim1", VERSIONS["claim1"], runs, piloted=PILOTED["claim1"], copy_baseline=copy,
                 reported=reported)
    return hyps, checks, verdict_summary(checks, {"K_edge": k_edge}), []


# ---- claim 2: larger models favour in-weights learning ---------------------------------------------
def last_quarter_range(curve: np.ndarray, steps) -> np.ndarray:
    """Per seed, max − min of a curve (evaluations, seeds) over the evaluations in the last quarter
    of training (steps ≥ ¾ of the last step)."""
    steps = np.asarray(steps, float)
    tail = np.asarray(curve, float)[steps >= 0.75 * steps[-1]]
    return tail.max(0) - tail.min(0)


SETTLED_TOL = 2 * math.sqrt(2 * 0.25 / EVAL_SIZE)
"""Claim 2's settledness: two binomial se of a difference of two rates on ``EVAL_SIZE`` sequences, at
its largest (p = ½): 2·√(2·¼/n) ≈ 0.044."""


def claim2_shapes(model, D: int, L: int) -> dict:
    """Claim 2's four shapes: the base, 4 heads at the base width (narrower heads), 4 layers at the
    base width, and 4 layers at the width whose parameter count is closest to the base's."""
    from .testbed_multimodal import width_matching_parameters

    return {"base": model, "heads": replace(model, heads=4), "deep": replace(model, layers=4),
            "deep_matched": replace(model, layers=4, width=width_matching_parameters(model, 4, D, L))}


def claim2_v3(config: RunConfig):
    """Scaling heads or layers favours in-weights learning (``testbed_v3.DESIGNS["claim2"]``): four
    shapes at K_mid, bursty, 8 seeds per family, paired by seed (shared data streams); decided on
    final label-balanced in-weights accuracy over the best query-blind rule, on seeds settled in
    both arms of a check."""
    sz = quick_sizes(config, "claim2")
    from .testbed_multimodal import decoder_parameters

    train = replace(sz.train, eval_size=EVAL_SIZE)
    arm = Arm("mid_bursty", replace(sz.data, K=sz.K_mid, p_bursty=1.0))
    shapes = claim2_shapes(sz.model, sz.data.D, sz.data.L)
    runs = family_runs(config, {n: (m, [arm], {"name": "iwl_balanced", "seed": BALANCED_SEED})
                                for n, m in shapes.items()}, train)
    seeds = {f: list(s) for f, s in FAMILIES.items()}
    settled = {n: {f: last_quarter_range(runs[n][f].results.curve("icl_context_rate", arm.name),
                                         runs[n][f].results.steps) <= SETTLED_TOL for f in FAMILIES} for n in shapes}
    hyps = _hypotheses(config, sz)
    needed = sorted({x for c in DESIGNS["claim2"].checks if c.role == "decisive" for x in (c.a, c.b)})
    for n in needed:
        hyps.append(_premise(f"{n}: settled (the ICL set's copy rate moved by at most {SETTLED_TOL:.3f} over the last "
                             "quarter of training) on the seed", settled[n], seeds))
    checks = []
    for c in DESIGNS["claim2"].checks:
        diffs, ses = {}, {}
        for f in FAMILIES:
            ra, rb = runs[c.a][f], runs[c.b][f]
            keep = settled[c.a][f] & settled[c.b][f]
            if c.metric == "acc_flip":
                a, b = ra.final("acc_flip", arm.name), rb.final("acc_flip", arm.name)
                d, se = a - b, acc_se(a, b)
            else:
                a, b = (np.asarray(r.analysis(c.metric, arm.name), float) for r in (ra, rb))
                pa, pb = (np.asarray(r.analysis("acc_iwl_balanced", arm.name), float) for r in (ra, rb))
                d, se = a - b, balanced_se(pa, pb, _blind_sd(ra, arm.name), _blind_sd(rb, arm.name))
            diffs[f], ses[f] = d[keep], se[keep]
        why = BALANCED_SE if c.metric != "acc_flip" else f"binomial, {EVAL_SIZE} sequences per arm"
        checks.append(decide_pairs(c, diffs, ses, why + "; seeds settled in both arms only"))
    params = {n: decoder_parameters(m, sz.data.D, sz.data.L) for n, m in shapes.items()}
    reported = {n: {f: {"auc_icl": runs[n][f].auc("acc_icl", arm.name).round(4).tolist(),
                        "acc_icl": runs[n][f].final("acc_icl", arm.name).round(4).tolist(),
                        "iwl_balanced_over_blind": runs[n][f].analysis("iwl_balanced_over_blind", arm.name),
                        "settled": settled[n][f].tolist()} for f in FAMILIES} for n in shapes}
    write_result(config, "claim2", VERSIONS["claim2"], runs, shapes={n: asdict(m) for n, m in shapes.items()},
                 parameters=params, settled_tolerance=SETTLED_TOL, reported=reported)
    return hyps, checks, verdict_summary(checks, {"K_mid": sz.K_mid, **{f"params_{n}": p for n, p in params.items()}}), []


# ---- claim 3: rotary positions ----------------------------------------------------------------------
def claim3_v3(config: RunConfig):
    """RoPE raises the ICL threshold and weakens the previous-token and induction patterns
    (``testbed_v3.DESIGNS["claim3"]``): APE and RoPE, bursty, at K_thr (3000 steps) and at K_both
    after ``steps_both`` steps (both chosen by the pilots), 8 seeds per family, evaluation sets of
    ``EVAL_SIZE`` sequences.  With ``steps_both`` equal to the size's steps the two K are one
    ensemble per position code (version 3); otherwise two (version 3.1)."""
    sz = quick_sizes(config, "claim3")
    from .testbed import _chance

    chosen = PILOTED["claim3"]
    k_thr, k_both, steps_both = chosen["K_thr"], chosen["K_both"], chosen.get("steps_both", sz.train.steps)
    train = replace(sz.train, eval_size=EVAL_SIZE)
    thr, both = (Arm(f"K{k}", replace(sz.data, K=k, p_bursty=1.0)) for k in (k_thr, k_both))
    if steps_both == train.steps:
        runs = family_runs(config, {pos: (replace(sz.model, pos=pos), [thr, both], None) for pos in ("ape", "rope")},
                           train)
        where = {(pos, k): runs[pos] for pos in ("ape", "rope") for k in (k_thr, k_both)}
    else:
        runs = family_runs(config, {f"{pos}_thr": (replace(sz.model, pos=pos), [thr], None) for pos in ("ape", "rope")},
                           train)
        runs |= family_runs(config, {f"{pos}_both": (replace(sz.model, pos=pos), [both], None)
                                     for pos in ("ape", "rope")}, replace(train, steps=steps_both))
        where = {(pos, k): runs[f"{pos}_{'thr' if k == k_thr else 'both'}"] for pos in ("ape", "rope")
                 for k in (k_thr, k_both)}
    _, copy = _chance(sz.data)

    def final(metric, pos, f, k):
        return where[(pos, k)][f].final(metric, f"K{k}")

    seeds = {f: list(s) for f, s in FAMILIES.items()}
    both_icl = {f: (final("acc_icl", "ape", f, k_both) >= 0.9) & (final("acc_icl", "rope", f, k_both) >= 0.9)
                for f in FAMILIES}
    hyps = _hypotheses(config, sz)
    hyps.append(_premise(f"both arms do ICL at K_both = {k_both} after {steps_both} steps (ICL ≥ 0.9) on the seed",
                         both_icl, seeds))
    checks = []
    for c in DESIGNS["claim3"].checks:
        k = k_thr if c.a.endswith("thr") else k_both
        diffs, ses = {}, {}
        for f in FAMILIES:
            a, b = final(c.metric, "ape", f, k), final(c.metric, "rope", f, k)
            keep = np.ones_like(a, bool) if c.metric == "acc_icl" else both_icl[f]
            diffs[f] = (a - b)[keep]
            ses[f] = acc_se(a, b)[keep] if c.metric == "acc_icl" else np.full(int(keep.sum()), math.sqrt(2.0 / EVAL_SIZE))
        why = (f"binomial, {EVAL_SIZE} sequences per arm" if c.metric == "acc_icl"
               else f"{PATTERN_SE}, so a difference has se ≤ √(2/{EVAL_SIZE})")
        checks.append(decide_pairs(c, diffs, ses, why, K=k))
    minimum = {f"{pos}_K{k}_{f}": [float(np.min(h)) for h in
                                   np.asarray(where[(pos, k)][f].results.run.history.final("induction"))[
                                       where[(pos, k)][f].results._index(f"K{k}")]]
               for pos in ("ape", "rope") for k in (k_thr, k_both) for f in FAMILIES}
    write_result(config, "claim3", VERSIONS["claim3"], runs, piloted=chosen, copy_baseline=copy,
                 reported={"induction_min_per_seed": minimum})
    return hyps, checks, verdict_summary(checks, {"K_thr": k_thr, "K_both": k_both, "steps_both": steps_both}), []


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


def claim8_v3(config: RunConfig):
    """Induction heads carry ICL (``testbed_v3.DESIGNS["claim8"]``): 2 layers × 4 heads, K_hi bursty,
    evaluated every ``EVAL_EVERY_TRANSITION`` steps.  Heads are classed on a selection set
    (``heads.induction_circuit``); mean-ablating every induction head at once must bring ICL down to
    the copy baseline and lower it more than mean-ablating every head that is neither an induction
    nor a previous-token head; and the top induction head's score must rise while ICL does."""
    sz = quick_sizes(config, "claim8")
    from .testbed import INDUCTION_HEAD, _chance

    train = replace(sz.train, eval_size=EVAL_SIZE, eval_every=EVAL_EVERY_TRANSITION)
    model = replace(sz.model, heads=sz.claim8_heads)
    arm = Arm("hi_bursty", replace(sz.data, K=sz.K_hi, p_bursty=1.0))
    analysis = {"name": "induction_circuit", "selection_seed": SELECTION_SEED, "reference_seed": REFERENCE_SEED,
                "threshold": INDUCTION_HEAD, "prev_threshold": PREV_TOKEN_HEAD, "control_seed": CONTROL_SEED}
    runs = family_runs(config, {"claim8": (model, [arm], analysis)}, train)
    fam = runs["claim8"]
    _, copy = _chance(sz.data)
    seeds = {f: list(s) for f, s in FAMILIES.items()}
    count = lambda r, key: np.array([int(np.sum(m)) for m in r.analysis(key, arm.name)])  # noqa: E731
    icl_ok = {f: above_copy(fam[f].final("acc_icl", arm.name), copy) for f in FAMILIES}
    has_ind = {f: count(fam[f], "induction_heads") > 0 for f in FAMILIES}
    has_neither = {f: count(fam[f], "neither_heads") > 0 for f in FAMILIES}
    hyps = _hypotheses(config, sz)
    hyps += [_premise("the model does ICL at the end (above B/N + 2 se)", icl_ok, seeds),
             _premise(f"an induction head exists (selection-set induction score above {INDUCTION_HEAD})", has_ind, seeds),
             _premise(f"a head that is neither exists (induction ≤ {INDUCTION_HEAD}, previous-token ≤ {PREV_TOKEN_HEAD})",
                      has_neither, seeds)]
    collapse, specific, timing = DESIGNS["claim8"].checks
    numbers = {c.name: ({}, {}) for c in (collapse, specific, timing)}
    reported = {}
    for f in FAMILIES:
        r = fam[f]
        get = lambda key: _or_nan(r.analysis(key, arm.name))  # noqa: E731
        icl = get("icl")
        without_ind, without_neither = get("icl_without_induction_heads_mean"), get("icl_without_neither_heads_mean")
        keep = icl_ok[f] & has_ind[f]
        numbers[collapse.name][0][f] = (copy - without_ind)[keep]
        numbers[collapse.name][1][f] = np.sqrt(np.clip(without_ind, 0, 1) * (1 - np.clip(without_ind, 0, 1))
                                               / EVAL_SIZE)[keep]
        both = keep & has_neither[f]
        # drop(induction) − drop(neither) = ICL without the neither heads − ICL without the induction heads
        numbers[specific.name][0][f] = (without_neither - without_ind)[both]
        numbers[specific.name][1][f] = acc_se(without_neither[both], without_ind[both])
        steps = r.results.steps
        never = steps[-1] + train.eval_every
        ind = np.asarray(r.results.run.history.curve("induction"))[:, r.results._index(arm.name)]  # (evals, seeds, l, H)
        tops = r.analysis("top_head", arm.name)
        top_curve = np.stack([ind[:, i, l, h] for i, (l, h) in enumerate(tops)], axis=1)
        depth = inside_window(r.results.curve("acc_icl", arm.name), top_curve, steps, copy, never)
        numbers[timing.name][0][f] = depth[icl_ok[f]]
        numbers[timing.name][1][f] = np.zeros(int(icl_ok[f].sum()))
        reported[f] = {
            "induction_heads_per_seed": count(r, "induction_heads").tolist(),
            "neither_heads_per_seed": count(r, "neither_heads").tolist(),
            "icl": icl.round(4).tolist(), "icl_without_induction_heads_mean": without_ind.round(4).tolist(),
            "icl_without_induction_heads_zero": get("icl_without_induction_heads_zero").round(4).tolist(),
            "icl_without_neither_heads_mean": without_neither.round(4).tolist(),
            "icl_without_neither_heads_zero": get("icl_without_neither_heads_zero").round(4).tolist(),
            "single_head": {"top_head": tops, "control_head": r.analysis("control_head", arm.name),
                            "drop_top_minus_control_mean": (get("icl_without_control_mean")
                                                            - get("icl_without_top_mean")).round(4).tolist(),
                            "drop_top_minus_control_zero": (get("icl_without_control_zero")
                                                            - get("icl_without_top_zero")).round(4).tolist()},
            "induction_min": r.analysis("induction_min", arm.name),
            "top_head_depth_inside_icl_window_steps": depth.tolist()}
    why = {collapse.name: (f"binomial se of the ablated accuracy on {EVAL_SIZE} sequences (the copy baseline B/N = "
                           f"{copy:g} is exact); seeds with ICL at the end and an induction head"),
           specific.name: (f"binomial, {EVAL_SIZE} sequences, both ablations on the evaluation set; seeds with ICL at "
                           "the end, an induction head and a head that is neither"),
           timing.name: (f"steps read exactly on the evaluation grid (every {train.eval_every} steps): a half-rise on "
                         "a window edge is unresolved, a curve that never reaches its level is placed one evaluation "
                         "after the end; seeds with ICL at the end")}
    checks = [decide_pairs(c, *numbers[c.name], why[c.name], **({"copy_baseline": copy} if c is collapse else {}))
              for c in (collapse, specific, timing)]
    write_result(config, "claim8", VERSIONS["claim8"], runs, copy_baseline=copy, head_classes=analysis,
                 reported=reported)
    return hyps, checks, verdict_summary(checks, {"heads": model.heads, "eval_every": train.eval_every}), []
