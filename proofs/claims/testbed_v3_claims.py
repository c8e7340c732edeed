"""Version 3 of the testbed claims, as the registry runs them (the design: ``testbed_v3``).

Each check of a design is decided by ``v3_check``: per seed family, the paired per-seed differences
A − B against the margin with their evaluation standard errors (``decide_v3.seed_outcomes``), an
exact sign test per family, and the two families pooled with a consistency guard
(``decide_v3.combine_families``).  Settings a pilot chose are in ``PILOTED`` (with the file of the
pilot run beside them in the repository, ``studies/results/pilot_<claim>.json``, and a test that the
file's finals give the same choice).  Claims converted so far: 3.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.testbed.decide_v3 import (accuracy_difference_se, combine_families, seed_outcomes, sign_test,
                                              sign_test_counts)
from mmicl.numerics.testbed.experiments import Arm

from ..registry import Check, Hypothesis, RunConfig, Summary
from .number_tolerances import EXACT, SAMPLING_WHY, exact, sampling_atol
from .testbed_v3 import ALPHA, DESIGNS, EVAL_SIZE, FAMILIES, PREMISE_FAILURES, Check3

PILOTED = {"claim3": {"K_both": 1024, "K_thr": 512}}
"""Settings chosen by each claim's pilot rule on the pilot seeds (``testbed_v3.DESIGNS[...].pilot_rule``)."""

PATTERN_SE = "attention scores lie in [−1, 1], so one seed's mean over n sequences has se ≤ 1/√n"


def _oriented(c: Check3, d: np.ndarray) -> tuple[np.ndarray, float]:
    """The differences and margin that ``seed_outcomes`` compares for this kind of check (the
    claimed side positive)."""
    if c.kind == "superiority":
        return d, c.margin
    if c.kind == "inferiority":
        return -d, c.margin
    return d, -c.margin  # non-inferiority: d > −margin


def v3_check(c: Check3, diffs: dict[str, np.ndarray], ses: dict[str, np.ndarray], se_why: str) -> Check:
    """One pre-registered check decided over the families (module docstring).  ``diffs[f]``: the
    per-seed A − B of family f (seeds left out by a premise already removed); ``ses[f]`` their
    evaluation standard errors."""
    tests, nums = {}, {}
    for f in sorted(diffs):
        d, m = _oriented(c, np.asarray(diffs[f], float))
        if d.size == 0:  # every seed of the family left out by a premise: it has nothing to say
            outcomes, tests[f] = np.zeros(0, int), sign_test_counts(0, 0, 0, ALPHA)
        else:
            outcomes = seed_outcomes(d, np.asarray(ses[f], float), m)
            tests[f] = sign_test(outcomes, ALPHA)
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


def claim3_v3(config: RunConfig):
    """RoPE raises the ICL threshold and weakens the previous-token and induction patterns
    (``testbed_v3.DESIGNS["claim3"]``): APE and RoPE, bursty, at K_thr and K_both (chosen by the
    pilot), 8 seeds per family, evaluation sets of ``EVAL_SIZE`` sequences."""
    from .testbed import QUICK, _chance, _ensembles, _hyps, _out, sizes

    sz = sizes(config)
    if sz is not QUICK:
        raise TestbedConfigError("version 3 of testbed.claim3 is piloted at the quick size only: run it with --quick "
                                 "(the full size needs its own pilot, studies/pilot_claim3.toml at that size)")
    design, chosen = DESIGNS["claim3"], PILOTED["claim3"]
    k_thr, k_both = chosen["K_thr"], chosen["K_both"]
    train = replace(sz.train, eval_size=EVAL_SIZE)
    sz = replace(sz, train=train)
    arms = [Arm(f"K{k}", replace(sz.data, K=k, p_bursty=1.0)) for k in (k_thr, k_both)]
    runs, records = {}, {}
    for f, seeds in FAMILIES.items():
        jobs = {f"{pos}_{f}": (replace(sz.model, pos=pos), arms, None) for pos in ("ape", "rope")}
        done = _ensembles(config, jobs, seeds=list(seeds), train=train)
        for name, (r, rec) in done.items():
            runs[name], records[name] = r, rec
    _, copy = _chance(sz.data)

    def final(metric, pos, f, k):
        return runs[f"{pos}_{f}"].final(metric, f"K{k}")

    seeds = {f: list(s) for f, s in FAMILIES.items()}
    both_icl = {f: (final("acc_icl", "ape", f, k_both) >= 0.9) & (final("acc_icl", "rope", f, k_both) >= 0.9)
                for f in FAMILIES}
    hyps = [h for h in _hyps(sz, config) if "seeds per arm" not in h.text]
    hyps.append(_premise(f"both arms do ICL at K_both = {k_both} (ICL ≥ 0.9) on the seed", both_icl, seeds))
    checks = []
    for c in design.checks:
        k = k_thr if c.a.endswith("thr") else k_both
        diffs, ses = {}, {}
        for f in FAMILIES:
            a, b = final(c.metric, "ape", f, k), final(c.metric, "rope", f, k)
            keep = np.ones_like(a, bool) if c.metric == "acc_icl" else both_icl[f]
            diffs[f] = (a - b)[keep]
            ses[f] = (accuracy_difference_se(a, b, EVAL_SIZE)[keep] if c.metric == "acc_icl"
                      else np.full(int(keep.sum()), math.sqrt(2.0 / EVAL_SIZE)))
        why = (f"binomial, {EVAL_SIZE} sequences per arm" if c.metric == "acc_icl"
               else f"{PATTERN_SE}, so a difference has se ≤ √(2/{EVAL_SIZE})")
        checks.append(v3_check(c, diffs, ses, why))
        checks[-1].numbers["K"] = k
        checks[-1].atol["K"] = EXACT
    out = _out(config)
    from mmicl.numerics.atomic import write_json

    write_json(out / "claim3.json", {
        "version": 3, "design": "proofs/claims/testbed_v3.py DESIGNS['claim3']", "piloted": chosen,
        "families": seeds, "data_seed": config.seed, "device": config.device, "eval_size": EVAL_SIZE,
        "copy_baseline": copy,
        "tables": {name: r.table() for name, r in runs.items()},
        "histories": {name: r.run.history.to_json() for name, r in runs.items()},
        "seconds": {name: rec["provenance"]["seconds"] for name, rec in records.items()}})
    summary = Summary({"K_thr": k_thr, "K_both": k_both,
                       **{f"verdict: {c.name}": ("passes" if c.passed else "fails" if c.passed is False else "undecided")
                          for c in checks}},
                      atol=EXACT, why="the piloted K values (settings) exact; the outcomes are text")
    return hyps, checks, summary, []
