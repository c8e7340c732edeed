"""What every testbed claim shares: running its arms through the results store, deciding its
pre-registered checks per seed, its premises, and writing its result file.

**Runs.**  Every claim trains through the sweep runner's results store ``OUT/testbed/runs``: a run
already there (same settings, seeds, device and mmicl version) is read back, not trained again, so a
claim killed midway resumes where it stopped; with ``config.scheduler`` the runs go to that Dask
cluster.  ``run_family`` trains unimodal model shapes as one ``ensemble`` run per seed family;
``run_specs`` runs the multimodal ``stage1`` / ``stage2`` / ``fusion`` runs, stage 1 first.

**Checks.**  ``decide_check`` decides one ``design.PlannedCheck``: per seed family, the paired
per-seed differences A − B against the margin with their evaluation standard errors
(``sign_tests.seed_outcomes``), an exact sign test per family, and the two families pooled with a
consistency guard (``sign_tests.combine_families``).  ``premise`` is a per-seed premise over both
families (met unless more than ``PREMISE_FAILURES`` seeds of a family fail it).

**Result file.**  ``write_result`` writes ``OUT/testbed/<claim>.json`` (atomically): the design's
version, the families, the data seed, the device, the evaluation size, and what the claim adds.
"""
from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from mmicl.numerics.atomic import write_json
from mmicl.numerics.runs.artifacts import using_store
from mmicl.numerics.runs.key import RunSpec
from mmicl.numerics.runs.kinds import KINDS
from mmicl.numerics.runs.runner import finished_records, recheck_stage1, run_pending, stored_arm_results
from mmicl.numerics.runs.store import Store
from mmicl.numerics.testbed.config import MultimodalConfig, TrainConfig
from mmicl.numerics.testbed.experiments import ArmResults, StoredRun
from mmicl.numerics.testbed.multimodal_experiments import arm_to_json
from mmicl.numerics.testbed.sign_tests import (accuracy_difference_se, combine_families, seed_outcomes, sign_test,
                                               sign_test_counts)
from mmicl.numerics.testbed.train import History

from ...claim import Check, Hypothesis, RunConfig, Summary
from ..number_tolerances import EXACT, SAMPLING_WHY, exact, sampling_atol
from .design import (ALPHA, DESIGNS, EVAL_SIZE, FAMILIES, PREMISE_FAILURES, PlannedCheck, data_seed, family_set,
                     outcome_words)
from mmicl.numerics.threads import torch_threads
from mmicl.numerics.testbed.config import stage1_ape_slots

__all__ = ["testbed_threads", "threaded", "testbed_folder", "base_hypotheses", "chance", "seed_sd", "mean_se",
           "mean_atol", "mean_entry", "family_seeds", "family_data_seeds", "family_sign_test", "oriented", "decide_check", "decide_pairs", "premise", "FamilyRun",
           "run_family", "run_specs", "arm_results", "acc_se", "balanced_arm_se", "balanced_se", "blind_sd", "ensemble_spec", "ensembles", "copy_level", "above_copy", "headroom",
           "verdict_summary", "write_result", "STAGE1_ICL", "STAGE1_INDUCTION", "stage1_premise", "stage1_settings",
           "multimodal_data", "arm_json", "BALANCED_SE", "pooled", "premise_seed_counts", "premise_summary"]


# ---- threads and folders ----------------------------------------------------------------------
@contextmanager
def testbed_threads(config: RunConfig):
    """torch's CPU thread count set to ``config.testbed_threads`` for the block (unchanged if None;
    ``numerics.threads.torch_threads`` sets and restores it)."""
    if config.testbed_threads is None:
        yield
        return

    with torch_threads(config.testbed_threads):
        yield


def threaded(claim_fn):
    """A testbed claim function run under ``testbed_threads``."""
    @functools.wraps(claim_fn)
    def run(config: RunConfig):
        with testbed_threads(config):
            return claim_fn(config)
    return run


def testbed_folder(config: RunConfig) -> Path:
    """``OUT/testbed``, made if missing: the claims' result files and their results store."""
    p = Path(config.out) / "testbed"
    p.mkdir(parents=True, exist_ok=True)
    return p


def base_hypotheses(config: RunConfig) -> list[Hypothesis]:
    """What every testbed claim reports of the run's ``--law``: the testbed has its own data law."""
    if config.law:
        return [Hypothesis("no task LAW applies to the testbed (it has its own data law)", True,
                           f"--law {config.law!r} ignored by the testbed claims")]
    return []


def chance(data) -> tuple[float, float]:
    """(uniform guess 1/L, copy a random in-context label B/N) of a ``DataConfig``."""
    return 1 / data.L, data.B / data.N


def _on_v4_families(claim: str | None) -> bool:
    """Whether ``claim`` is on a design whose families are version 4's (each with its own data seed);
    the others read this module's ``FAMILIES``."""
    return claim is not None and int(DESIGNS[claim].version) >= 4


def family_seeds(claim: str | None = None) -> dict[str, list[int]]:
    """The verdict seeds of each family of ``claim``'s design version, as lists (version 3's
    ``FAMILIES`` when ``claim`` is None or on a version-3 design)."""
    if not _on_v4_families(claim):
        return {f: list(s) for f, s in FAMILIES.items()}
    return {f: list(fam.seeds) for f, fam in family_set(claim).items()}


def family_data_seeds(config: RunConfig, claim: str | None = None) -> dict[str, int]:
    """The data seed of each family of ``claim``'s design version in this run (``design.data_seed``):
    the run's ``--seed`` for every family of a version-3 design."""
    if not _on_v4_families(claim):
        return {f: int(config.seed) for f in FAMILIES}
    return {f: data_seed(config.seed, fam) for f, fam in family_set(claim).items()}


# ---- how far a number may move between two runs (``Check.atol``; number_tolerances) ----------
# Training diverges between machines (CPU vs CUDA, BLAS, threads, torch patch release), so each
# seed's trained model is, at worst, a fresh draw: a per-seed number moves like one seed against
# another, a mean over seeds like an independent re-run of the mean.
def seed_sd(values, n_eval: int | None = None) -> float:
    """How far one seed's number may differ from a run to an independent one, as a standard
    deviation: the sample sd over the seeds, and, for an accuracy on ``n_eval`` sequences, at least
    the binomial sd √(p(1−p)/n_eval) at the mean p (p kept within [1/n_eval, 1 − 1/n_eval], so that
    seeds all at 0 or 1 may still move by about one sequence).  0 when neither is available."""
    v = np.asarray(values, float).ravel()
    v = v[np.isfinite(v)]
    sd = float(v.std(ddof=1)) if v.size >= 2 else 0.0
    if n_eval and v.size:
        p = min(max(float(v.mean()), 1 / n_eval), 1 - 1 / n_eval)
        sd = max(sd, math.sqrt(p * (1 - p) / n_eval))
    return sd


def mean_se(values, n_eval: int | None = None) -> float:
    """Standard error of the mean over seeds of ``values`` (``seed_sd``/√n, finite values only)."""
    n = int(np.isfinite(np.asarray(values, float)).sum())
    return seed_sd(values, n_eval) / math.sqrt(n) if n else 0.0


def mean_atol(values, n_eval: int | None = None) -> float:
    """``sampling_atol`` of a mean over seeds of ``values`` (its ``mean_se``)."""
    return sampling_atol(mean_se(np.asarray(values, float), n_eval))


def mean_entry(numbers: dict, atol: dict, key: str, values, n_eval: int | None = None) -> None:
    """Report the mean over seeds of ``values`` as ``numbers[key]``, with its ``mean_atol`` (accuracies
    on ``n_eval`` items: at least their binomial sd) as ``atol[key]``."""
    v = np.asarray(values, float)
    numbers[key], atol[key] = float(v.mean()), mean_atol(v, n_eval)


# ---- per-seed outcomes and the sign test ---------------------------------------------------------
def oriented(c: PlannedCheck, d: np.ndarray) -> tuple[np.ndarray, float]:
    """The differences and margin that ``seed_outcomes`` compares for this kind of check (the
    claimed side positive)."""
    if c.kind == "superiority":
        return d, c.margin
    if c.kind == "inferiority":
        return -d, c.margin
    return d, -c.margin  # non-inferiority: d > −margin


def family_sign_test(outcomes):
    """One family's exact sign test of a check over its per-seed outcomes (``sign_tests.sign_test``
    at ``ALPHA``); a family whose seeds a premise all left out has nothing to say (no seed either
    way, decision None)."""
    return sign_test(outcomes, ALPHA) if len(outcomes) else sign_test_counts(0, 0, 0, ALPHA)


def decide_check(c: PlannedCheck, diffs: dict[str, np.ndarray], ses: dict[str, np.ndarray], se_why: str) -> Check:
    """One pre-registered check decided over the families (module docstring).  ``diffs[f]``: the
    per-seed A − B of family f (seeds left out by a premise already removed); ``ses[f]`` their
    evaluation standard errors."""
    tests, nums = {}, {}
    for f in sorted(diffs):
        d, m = oriented(c, np.asarray(diffs[f], float))
        outcomes = seed_outcomes(d, np.asarray(ses[f], float), m) if d.size else np.zeros(0, int)
        tests[f] = family_sign_test(outcomes)
        nums[f"diff_{f}"] = [float(x) for x in diffs[f]]
        nums[f"se_{f}"] = [float(x) for x in ses[f]]  # each seed's evaluation se: what a power simulation needs
        nums[f"outcomes_{f}"] = [int(x) for x in outcomes]
    comb = combine_families(tests["A"], tests["B"], ALPHA)
    nums |= {"plus": comb.pooled.plus, "minus": comb.pooled.minus, "unresolved": comb.pooled.unresolved,
             "p_above": comb.pooled.p_above, "p_below": comb.pooled.p_below, "margin": c.margin}
    pooled = np.concatenate([np.asarray(v, float) for v in diffs.values()])
    n = pooled.size
    spread = seed_sd(pooled)
    # the magnitude beside the decision: a verdict reads "below the margin" or "above it", and how far
    nums |= ({"mean_diff": float(pooled.mean()), "mean_diff_se": mean_se(pooled)} if n else
             {"mean_diff": None, "mean_diff_se": None, "mean_diff_null_reason": "a premise left no seed in the check",
              "mean_diff_se_null_reason": "a premise left no seed in the check"})
    magnitude = (f"mean A − B {pooled.mean():+.3g} ± {mean_se(pooled):.2g} (se over {n} seeds) against the margin "
                 f"{c.margin:g}" if n else "no seed left to measure")
    side = {"superiority": f"A − B > {c.margin:g}", "inferiority": f"A − B < −{c.margin:g}",
            "non-inferiority": f"A − B > −{c.margin:g}"}[c.kind]
    return Check(
        name=c.name, method="empirical (seeds, exact sign test)", passed=comb.decision,
        numbers=nums, role=c.role,
        tolerance=(f"per seed {side} beyond 2 evaluation se ({se_why}); exact one-sided sign test at α = {ALPHA} "
                   f"over the resolved seeds of both families pooled, inconclusive when one family alone decides "
                   f"the opposite; margin {c.margin:g}: {c.margin_why}"),
        detail=f"{comb.reason}; family A {tests['A'].decision}, family B {tests['B'].decision} "
               f"({c.metric}: {c.a} − {c.b}); {magnitude}",
        atol={**{k: sampling_atol(spread) for k in nums if k.startswith(("diff_", "se_"))},
              **{k: 2.0 for k in nums if k.startswith("outcomes_")},
              **{k: float(n) for k in ("plus", "minus", "unresolved")}, "p_above": 1.0, "p_below": 1.0,
              "mean_diff": sampling_atol(spread), "mean_diff_se": sampling_atol(spread),
              **exact("margin")},
        numbers_tolerance=(f"{SAMPLING_WHY}: a seed's difference by the spread over seeds; outcomes, counts and "
                           "p-values by their whole range (a rerun on another machine is a fresh draw of every "
                           "trained model); the seeds' se's as the differences; the margin exact"))


def decide_pairs(c: PlannedCheck, diffs: dict, ses: dict, why: str, **numbers) -> Check:
    """``decide_check`` with extra reported numbers (each stated exact: settings or counts)."""
    check = decide_check(c, diffs, ses, why)
    for k, v in numbers.items():
        check.numbers[k] = v
        check.atol[k] = EXACT
    return check


def premise(name: str, flags: dict[str, np.ndarray], seeds: dict[str, list[int]]) -> Hypothesis:
    """A per-seed premise over both families: met unless more than ``PREMISE_FAILURES`` seeds of a
    family fail it."""
    parts, met = [], True
    for f in sorted(flags):
        ok = np.asarray(flags[f], bool)
        failing = [seeds[f][i] for i in np.flatnonzero(~ok)]
        met &= len(failing) <= PREMISE_FAILURES
        parts.append(f"family {f}: {int(ok.sum())} of {ok.size} seeds" + (f" (failing: {failing})" if failing else ""))
    return Hypothesis(f"{name} (at most {PREMISE_FAILURES} seeds of a family may fail)", bool(met), "; ".join(parts))


# ---- running arms through the store -------------------------------------------------------------
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
        return [values[i] for i in self.results.member_indices(arm)]


def ensemble_spec(config: RunConfig, model, arms, seeds, train: TrainConfig, data: int | None = None,
                  analysis: dict | None = None) -> RunSpec:
    """The ``ensemble`` run of ``model`` trained on every arm × seed at once, with data seed ``data``
    (the run's ``--seed`` when None) and the analysis ``analysis`` of the final models (or none): what a
    claim's ``run_family`` trains, and what a pilot of the same shape runs on its own seeds."""
    raw = {"model": asdict(model), "train": asdict(train), "seeds": list(seeds),
           "data_seed": config.seed if data is None else int(data),
           "arms": [{"name": a.name, "data": asdict(a.data)} for a in arms], "device": config.device,
           "analysis": analysis}
    return RunSpec("ensemble", KINDS["ensemble"].normalise(raw))


def ensembles(config: RunConfig, jobs: dict, seeds: list[int], train: TrainConfig,
               data: int | None = None) -> dict[str, tuple[ArmResults, dict]]:
    """Each job (name → (model shape, arms, analysis or None)) as one ``ensemble`` run on ``seeds``
    with data seed ``data`` (the run's ``--seed`` when None), through the store (module docstring):
    per job its ``ArmResults`` (curves) and stored record."""
    specs = {name: ensemble_spec(config, model, arms, seeds, train, data, analysis)
             for name, (model, arms, analysis) in jobs.items()}
    store = Store(testbed_folder(config) / "runs")
    run_pending(list(specs.values()), store, config.scheduler)
    out = {}
    for name, record in finished_records(specs, store, "ensemble").items():
        history = History.from_json(record["result"]["history"])
        history.seconds = float(record["provenance"]["seconds"])
        out[name] = (ArmResults(jobs[name][1], seeds, StoredRun(history)), record)
    return out


def run_family(config: RunConfig, jobs: dict, train: TrainConfig, claim: str | None = None
               ) -> dict[str, dict[str, FamilyRun]]:
    """Each job (name → (model, arms, analysis)) trained as one ensemble per seed family of
    ``claim``'s design version (``family_seeds``, each with its ``family_data_seeds``):
    ``{name: {family: FamilyRun}}``."""
    out: dict[str, dict[str, FamilyRun]] = {}
    data = family_data_seeds(config, claim)
    for f, seeds in family_seeds(claim).items():
        done = ensembles(config, {f"{n}_{f}": job for n, job in jobs.items()}, list(seeds), train, data[f])
        for n in jobs:
            out.setdefault(n, {})[f] = FamilyRun(*done[f"{n}_{f}"])
    return out


def run_specs(config: RunConfig, specs: dict[str, tuple[str, dict]]) -> dict[str, dict]:
    """Run (or read back) every named (kind, settings) in the store ``OUT/testbed/runs``, the
    ``stage1`` runs first (a stage-2 run needs its stage-1 record); runs that share a key train once.
    The finished record of each, by name (a RuntimeError naming the first that did not finish)."""
    built = {name: RunSpec(kind, KINDS[kind].normalise(s)) for name, (kind, s) in specs.items()}
    store = Store(testbed_folder(config) / "runs")
    with using_store(store):
        for first in (True, False):
            todo = [r for r in built.values() if (r.kind == "stage1") == first]
            if first:
                recheck_stage1(todo, store)  # a damaged stored checkpoint: set aside, trained again
            if todo:
                run_pending(todo, store, config.scheduler)
    kinds = {r.kind for r in built.values()}
    return finished_records(built, store, f"{kinds.pop()} run" if len(kinds) == 1 else "run")


def arm_results(records: dict[str, dict]) -> dict[str, ArmResults]:
    """The ``ArmResults`` (curves) of each finished ``stage2`` or ``fusion`` record, by name."""
    return {name: stored_arm_results(r) for name, r in records.items()}


# ---- standard errors and levels ------------------------------------------------------------------
BALANCED_SE = (f"per arm (√(p(1 − p)) + sd_blind)/√{EVAL_SIZE}: the model's binomial sd per label-balanced item "
               "plus the sd over the same items of the query-blind rule's expected accuracy (recorded by the "
               "analysis), added, not in quadrature, since both are read on one set (sd(x − y) ≤ sd(x) + sd(y)); two "
               "arms' members are independent, so their se's add in quadrature")


def acc_se(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The evaluation se of per-seed accuracy differences a − b on ``EVAL_SIZE`` items (none for no seed)."""
    if np.size(a) == 0:
        return np.zeros(0)
    return accuracy_difference_se(np.clip(a, 0, 1), np.clip(b, 0, 1), EVAL_SIZE)


def balanced_se(acc_a: np.ndarray, acc_b: np.ndarray, sd_blind_a=0.5, sd_blind_b=0.5) -> np.ndarray:
    """``BALANCED_SE`` of per-seed differences of ``iwl_balanced_over_blind`` between two arms, from
    their balanced accuracies and the per-item sd of their blind rule (0.5, the largest sd of a
    number in [0, 1], where it is not recorded)."""
    return np.sqrt(balanced_arm_se(acc_a, sd_blind_a) ** 2 + balanced_arm_se(acc_b, sd_blind_b) ** 2)


def balanced_arm_se(acc, sd_blind=0.5) -> np.ndarray:
    """``BALANCED_SE`` of one arm's per-seed ``iwl_balanced_over_blind`` on ``EVAL_SIZE`` items: (√(p(1 − p))
    + sd_blind)/√n, p its balanced accuracy and sd_blind its blind rule's per-item sd."""
    p = np.clip(np.asarray(acc, float), 0, 1)
    return (np.sqrt(p * (1 - p)) + np.asarray(sd_blind, float)) / math.sqrt(EVAL_SIZE)


def blind_sd(run: FamilyRun, arm: str) -> np.ndarray:
    """Per seed, the recorded sd of the blind rule's per-item accuracy (0.5 where not recorded)."""
    try:
        return np.asarray(run.analysis("iwl_blind_best_sd", arm), float)
    except KeyError:
        return np.full(len(run.results.seeds), 0.5)


def copy_level(copy: float, n_eval: int | None = None, plus: float = 0.0) -> float:
    """B/N + ``plus`` + 2 se, the se binomial at B/N + ``plus`` on ``n_eval`` items (``EVAL_SIZE`` by
    default): the ICL accuracy a seed must exceed to count as doing ICL rather than copying (``plus``
    = 0), or as doing it clearly (version 4's claim 6: ``plus`` = 0.10, a tenth of the range)."""
    n = EVAL_SIZE if n_eval is None else int(n_eval)
    p = copy + plus
    if not (0.0 <= copy and plus >= 0.0 and p <= 1.0 and n >= 1):
        raise ValueError(f"copy_level needs 0 ≤ copy, plus ≥ 0, copy + plus ≤ 1 and n_eval ≥ 1; got copy {copy!r}, "
                         f"plus {plus!r}, n_eval {n}")
    return p + 2 * math.sqrt(p * (1 - p) / n)


def above_copy(icl, copy: float, n_eval: int | None = None, plus: float = 0.0) -> np.ndarray:
    """Per seed, ICL accuracy above ``copy_level`` (B/N + ``plus`` + 2 binomial se on ``n_eval`` items)."""
    return np.asarray(icl, float) > copy_level(copy, n_eval, plus)


def headroom(base, margin: float, n_eval: int | None = None, ceiling: float = 1.0) -> np.ndarray:
    """Per seed, whether an arm's baseline accuracy ``base`` leaves room for an effect of ``margin``:
    base + margin + 2 se < ``ceiling``, the se binomial at ``base`` on ``n_eval`` items (``EVAL_SIZE``
    by default).  A check whose baseline is within margin + 2 se of the ceiling cannot resolve a
    difference above the margin on that seed, whatever the truth (a ceiling artefact): such a seed
    fails the premise instead of counting as evidence against the claim."""
    n = EVAL_SIZE if n_eval is None else int(n_eval)
    b = np.asarray(base, float)
    if not np.all((b >= 0) & (b <= ceiling)) or not (margin >= 0 and n >= 1):
        raise ValueError(f"headroom needs accuracies in [0, {ceiling:g}], a margin ≥ 0 and n_eval ≥ 1; got base {b}, "
                         f"margin {margin!r}, n_eval {n}")
    return b + margin + 2 * np.sqrt(b * (1 - b) / n) < ceiling


# ---- the stage-1 premise of the multimodal claims ---------------------------------------------------
STAGE1_ICL = 0.95
STAGE1_INDUCTION = 0.3
"""Claim 4's stage-1 premise, per seed: final ICL on M1 ≥ ``STAGE1_ICL`` and some head's induction
score > ``STAGE1_INDUCTION`` (on the stage-1 evaluation set of EVAL_SIZE sequences); claims 5, 6, 7
and 9 and the stage-1 pilot use it too."""


def stage1_premise(final: dict, icl: float | None = None, induction: float | None = None) -> np.ndarray:
    """Claim 4's premise per seed, from a stage-1 run's ``final`` metrics (``acc_icl`` (E,),
    ``induction`` (E, layers, H)): ICL ≥ ``icl`` and the strongest head's induction score >
    ``induction`` (by default ``STAGE1_ICL`` and ``STAGE1_INDUCTION``)."""
    icl = STAGE1_ICL if icl is None else icl
    induction = STAGE1_INDUCTION if induction is None else induction
    acc = np.asarray(final["acc_icl"], float).ravel()
    ind = np.asarray(final["induction"], float).reshape(acc.size, -1).max(1)
    return (acc >= icl) & (ind > induction)


def stage1_settings(config: RunConfig, sz, seeds, model=None, K1: int | None = None, data_seed: int | None = None
                    ) -> dict:
    """The ``stage1`` run settings of one family: the multimodal quick stage 1 (``sz``: its M1 data,
    decoder and training, each evaluation set of ``EVAL_SIZE`` sequences), with the decoder ``model``
    (a ``ModelConfig``; ``sz.model`` by default) and M1 at ``K1`` classes where given.  The same
    settings are the same run, so claims that share them share it in one store (claim 4's diverse
    stage 1 is claim 5's base, and claims 6's and 7's staged arm's).  ``data_seed``: the family's (a
    version-4 design, ``family_data_seeds``); the run's ``--seed`` by default."""

    m1 = sz.m1 if K1 is None else replace(sz.m1, K=int(K1))
    return {"model": asdict(stage1_ape_slots(model or sz.model, m1)), "data": asdict(m1),
            "train": asdict(replace(sz.stage1, eval_size=EVAL_SIZE)), "seeds": list(seeds),
            "data_seed": int(config.seed if data_seed is None else data_seed), "device": config.device}


def pooled(per_family: dict) -> np.ndarray:
    """The per-seed values of every family, one array (family order as given)."""
    return np.concatenate([np.asarray(v, float) for v in per_family.values()])


def premise_seed_counts(premises: dict[str, dict[str, np.ndarray]]) -> tuple[dict, dict]:
    """Summary numbers ``premise_<name>_seeds_<family>`` (how many of the family's seeds meet the
    premise) for each named premise's per-family flags, and their tolerances: the family's size (each
    seed is a fresh draw on another machine)."""
    numbers, atol = {}, {}
    for name, flags in premises.items():
        for f, v in flags.items():
            v = np.asarray(v, bool)
            numbers[f"premise_{name}_seeds_{f}"], atol[f"premise_{name}_seeds_{f}"] = int(v.sum()), float(v.size)
    return numbers, atol


def multimodal_data(sz, **changes) -> MultimodalConfig:
    """The quick size's two-modality data (M1 and M2 of ``sz``) with ``changes``."""
    return replace(MultimodalConfig(sz.m1, sz.m2), **changes)


def arm_json(arm) -> dict:
    """A ``MultimodalArm`` as the multimodal run kinds take it."""
    return arm_to_json(arm)


# ---- the result ------------------------------------------------------------------------------------
def verdict_summary(checks: list[Check], settings: dict) -> Summary:
    """A claim's key numbers when they are settings: those, and each check's outcome in words."""
    return Summary({**settings, **outcome_words(checks)},
                   atol=EXACT, why="the settings (piloted or fixed) exact; the outcomes are text")


def premise_summary(numbers: dict, atol: dict, premises: dict[str, dict[str, np.ndarray]], checks: list[Check],
                    why: str) -> Summary:
    """A claim's key numbers (``numbers`` with their tolerances ``atol``), then how many seeds of
    each family meet each premise (``premise_seed_counts``), then each check's outcome in words."""
    counts, count_atol = premise_seed_counts(premises)
    return Summary({**numbers, **counts, **outcome_words(checks)}, atol={**atol, **count_atol}, why=why)


def write_result(config: RunConfig, claim: str, content: dict, eval_size: int | None = None,
                 scope: str | None = None) -> Path:
    """``OUT/testbed/<claim>.json``: the design's version and address, the families, the data seed,
    the device, the evaluation size (``EVAL_SIZE`` unless given), the size in words (``scope``,
    ``sizes.scope``, where given: the docs' results table shows it beside the verdict), then
    ``content`` (atomic write)."""
    path = testbed_folder(config) / f"{claim}.json"
    write_json(path, {"version": DESIGNS[claim].version,
                      "design": f"proofs/claims/testbed/design.py DESIGNS['{claim}']",
                      "families": family_seeds(claim), "data_seed": config.seed,
                      **({"family_data_seeds": family_data_seeds(config, claim)} if _on_v4_families(claim) else {}),
                      "device": config.device,
                      "eval_size": EVAL_SIZE if eval_size is None else int(eval_size),
                      **({"scope": scope} if scope else {}), **content})
    return path
