"""The pre-registered designs of the testbed claims 1-9, as data: arms, seeds, metrics, margins,
premises, pilot rules, and each design's version.

Mirrored in docs/testbed.md (its design block is generated from ``design_markdown``; a test keeps the
two in step).  Nothing here trains: the claims (``unimodal``, ``transfer``, ``modalities``) read
their arms, seeds and rules from this module.  A change to any of them after a verdict run is a new
version of that design (``Design.version``, ``Design.changes``), reported beside the old one; the
results of every version stay committed under ``studies/results/``, and a design whose code was
retired has a page under ``docs/records/``.

**Seeds.**  Two fresh verdict families of 8 seeds each (``FAMILIES``), never used by the earlier
interval designs or by a pilot; pilots use ``PILOT_SEEDS`` (and 9004-9011) only.  Settings a pilot
chooses are chosen by the rule stated in ``Design.pilot_rule`` before the pilot runs (``pilots``).

**Outcomes per seed.**  A check compares two arms on the same seed (shared data streams and, in
stage 2, the same stage-1 decoder): d_i = metric(A) − metric(B).  With the evaluation standard error
se_i (binomial over ``EVAL_SIZE`` items, ``sign_tests.accuracy_difference_se``) the seed is +1 when
d_i − margin > 2·se_i, −1 when d_i − margin < −2·se_i, 0 (unresolved) otherwise
(``sign_tests.seed_outcomes``).  No interval over seeds is formed, so zero observed variance decides
nothing by itself.

**Decision.**  An exact one-sided sign test over the resolved seeds at ``ALPHA`` per direction
(``sign_tests.sign_test``), the two families pooled with a consistency guard
(``sign_tests.combine_families``): holds when the pooled test decides +, fails when it decides −,
inconclusive otherwise or when one family alone decides the opposite of the pooled result.  A check
*passes* when decided +, *fails* when decided −; the claim's verdict follows the registry's rule from
its decisive and corroborating checks (``claim.decide``).  Power (all seeds resolved): 16 pooled
seeds decide at 12, with power 0.80 when a seed shows the effect with probability 0.8 and 0.98 at
0.9 (``power_table``).

**Premises** hold per seed (``sign_tests.premise_count``): a claim whose premise fails on more than
``PREMISE_FAILURES`` of a family's seeds in an arm it needs is ``hypothesis-not-met``; seeds that fail
a premise are reported and left out of the checks that need it.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ALPHA", "EVAL_EVERY_V4", "Family", "FAMILY_SETS", "family_set", "data_seed", "FAMILIES", "PILOT_SEEDS", "STAGE1_PILOT_SEEDS", "V4_PILOT_SEEDS", "EVAL_SIZE", "EVAL_EVERY_TRANSITION", "PREMISE_FAILURES",
           "PlannedCheck", "Design", "design_of_run", "REGIME", "SHIFT", "PATTERN", "DESIGNS", "outcome_word", "outcome_words",
           "power_table", "design_markdown"]

ALPHA = 0.05
"""One-sided level of the sign test, per direction."""
@dataclass(frozen=True)
class Family:
    """One verdict family: its model seeds, and where its data stream comes from."""

    seeds: tuple[int, ...]
    data_offset: int | None = None
    """None: the run's ``--seed`` is the family's data seed (version 3: both families share it);
    else the family's data seed is ``100·seed + data_offset`` (``data_seed``), its own per family."""


FAMILY_SETS = {
    3: {"A": Family(tuple(range(3000, 3008))), "B": Family(tuple(range(4000, 4008)))},
    4: {"A": Family(tuple(range(5000, 5008)), data_offset=1), "B": Family(tuple(range(6000, 6008)), data_offset=2)},
    4.1: {"A": Family(tuple(range(7000, 7008)), data_offset=3), "B": Family(tuple(range(8000, 8008)), data_offset=4)},
}
"""The verdict families of each design version (a design reads the latest set at or below its version).
Version 4's are fresh (no earlier design, verdict run or pilot used them) and each has its own data
stream, so that two families agreeing replicates the data as well as the initialisation.  Version
4.1's (a design changed after its version-4 verdict run) are fresh again, with data streams of their
own."""
FAMILIES = {f: fam.seeds for f, fam in FAMILY_SETS[3].items()}
"""Version 3's family seeds (the claims still on a version-3 design read these)."""


def family_set(claim: str | None = None) -> dict[str, Family]:
    """The families of ``claim``'s design version (version 3's when ``claim`` is None)."""
    version = 3 if claim is None else float(DESIGNS[claim].version)
    return FAMILY_SETS[max(v for v in FAMILY_SETS if v <= version)]


def data_seed(run_seed: int, family: Family) -> int:
    """The data seed of ``family`` in a run with ``--seed run_seed`` (``Family.data_offset``)."""
    return int(run_seed) if family.data_offset is None else 100 * int(run_seed) + family.data_offset


PILOT_SEEDS = tuple(range(9000, 9004))
STAGE1_PILOT_SEEDS = tuple(range(9004, 9012))
"""The seeds of the second round of pilots (claim 3's steps, the stage-1 decoder, claim 6's fusion):
used by no verdict and by no first-round pilot."""
V4_PILOT_SEEDS = tuple(range(9012, 9020))
"""The version-4 pilot seeds: used by no verdict and by no earlier pilot."""
EVAL_SIZE = 1024
"""Evaluation items per set and seed: the binomial se of an accuracy difference is then at most
√(2·¼/1024) ≈ 0.022, so a seed's outcome against a 0.05 margin resolves at |d − margin| > 0.044."""
EVAL_EVERY_V4 = 50
"""Evaluation interval (steps) of the version-4 runs whose timing a claim reads (claim 8): at N = 8 the
transition spans more steps than at version 3's N = 4."""
EVAL_EVERY_TRANSITION = 25
"""Evaluation interval (steps) of the runs whose timing a claim reads (claims 5, 7, 8)."""
PREMISE_FAILURES = 2
"""At most this many seeds of a family may fail a premise before the claim is hypothesis-not-met."""


@dataclass(frozen=True)
class PlannedCheck:
    """One pre-registered check: ``a`` minus ``b`` on ``metric`` against ``margin`` (``kind``
    ``"superiority"``: d > margin; ``"non-inferiority"``: d > −margin; ``"inferiority"``:
    d < −margin), with the margin's reason and the check's role."""

    name: str
    metric: str
    a: str
    b: str
    margin: float
    margin_why: str
    kind: str = "superiority"
    role: str = "decisive"


@dataclass(frozen=True)
class Design:
    """One claim's pre-registered design."""

    claim: str
    version: float
    """The version of this design that the registry runs (3, then 3.1, 3.2 … for each change made
    after a verdict run); every result file records it, and ``changes`` says what each changed."""
    arms: dict[str, str]
    """arm name → what it is (settings in words; the code's arms carry the numbers)"""
    checks: tuple[PlannedCheck, ...]
    premises: tuple[str, ...]
    pilot_rule: str = ""
    """how a pilot (on ``PILOT_SEEDS``) chooses a setting left open here; empty when none is"""
    reported: tuple[str, ...] = ()
    changes: tuple[str, ...] = ()
    """changes to this design after it was first committed, each with its reason and what it was
    before (made before the claim's verdict run unless the text says otherwise)"""


REGIME = "a tenth of the accuracy range: the difference between two regimes, not a shift within one"
SHIFT = "a twentieth of the accuracy range, above two evaluation standard errors at EVAL_SIZE (0.044)"
V4_TRANSFER = "version 4's multimodal size (sizes.multimodal_v4): M1 with N = 8 context pairs of one class each (B = 1, copy baseline 1/8), K1 = 16384 bursty; the 2 layers × 4 heads decoder (width 32) trained for the piloted stage-1 steps; M2 at K2 = L = 16, D2 = 16, ε2 = 0.1 with the piloted class-free distractor coordinates (48 at σ = 3), so that a random projector does not already solve M2; stage 2 for 2000 steps, evaluated every EVAL_EVERY_V4 steps"
"""How claims 4, 5 and 9 of version 4 describe their size (the arms' shared part)."""
PATTERN = "0.05 of the attention scores' [−1, 1] range, twice the spread of the uniform baselines over N"
V4_UNIMODAL = ("version 4's unimodal size (sizes.v4_unimodal_size): N = 8 context pairs of one class each (B = 1, copy "
               "baseline 1/8), L = 16 labels, D = 16; the 2 layers × 4 heads decoder (width 32) trained for the "
               "version-4 stage-1 steps, every arm × seed in one ensemble")
TREND = ("the fitted rise across the dose: per seed, the least-squares slope of the metric on the level's index "
         "(0, 1, 2) times 2, its se from the levels' binomial se's (sign_tests.slope_and_se)")
MONOTONE = ("a twentieth of the range: the dose's smallest step in the claimed direction, its se that step's "
            "(choosing the smallest of two noisy steps biases it down, so the check is conservative when it passes)")

DESIGNS: dict[str, Design] = {d.claim: d for d in (
    Design("claim1", 4,
           {"K": "K = 64, 1024, 16384 classes, bursty (p_B = 1), ε = 0.1 (" + V4_UNIMODAL + ")",
            "p_bursty": "p_B = 0, 0.5, 1 at K = 16384, ε = 0.1",
            "eps": "ε = 0.1, 0.3, 0.5 at the piloted K_edge, bursty",
            "zipf": "the class law's Zipf exponent 0, 0.75, 1.5 at K = 16384, p_B = 0.9 (some queries' classes are "
                    "not in the context, so in-weights learning is needed there)",
            "no_training": "baseline: every arm's ICL at step 0"},
           (PlannedCheck("ICL rises with K (K = 64, 1024, 16384)", "acc_icl_trend", "K", "zero", 0.10,
                   REGIME + "; " + TREND),
            PlannedCheck("ICL rises with burstiness (p_B = 0, 0.5, 1)", "acc_icl_trend", "p_bursty", "zero", 0.10,
                   REGIME + "; " + TREND),
            PlannedCheck("ICL rises with ε at K_edge (ε = 0.1, 0.3, 0.5)", "acc_icl_trend", "eps", "zero", 0.05,
                   SHIFT + "; " + TREND),
            PlannedCheck("Zipf raises in-weights accuracy over the best query-blind rule (exponent 0, 0.75, 1.5)",
                   "iwl_balanced_over_blind_trend", "zipf", "zero", 0.05, SHIFT + "; " + TREND),
            PlannedCheck("Zipf lowers ICL (exponent 0, 0.75, 1.5)", "acc_icl_trend", "zipf", "zero", 0.05,
                   SHIFT + "; " + TREND, kind="inferiority"),
            *(PlannedCheck(f"…{what}: no step of the dose goes against the trend by more than the shift", metric,
                           knob, "zero", 0.05, MONOTONE, kind="non-inferiority", role="corroborating")
              for what, metric, knob in (("K", "acc_icl_least_step_up", "K"),
                                         ("burstiness", "acc_icl_least_step_up", "p_bursty"),
                                         ("ε", "acc_icl_least_step_up", "eps"),
                                         ("Zipf, in-weights", "iwl_balanced_over_blind_least_step_up", "zipf"),
                                         ("Zipf, ICL", "acc_icl_least_step_down", "zipf")))),
           ("the K = 16384 bursty arm does ICL at the end (above B/N + 2 se), for the K and burstiness doses",
            "headroom for ε: the ε = 0.1 arm at K_edge ends below 1 − 0.05 − 2 se (a seed at the ceiling cannot show "
            "the ε check's margin, whatever the truth)"),
           pilot_rule="(version 4) K_edge by pilots.V4_CLAIM1_RULE (studies/results/pilot_v4_claim1.json); the "
                      "decoder and steps are version 4's stage 1's (pilots.V4_STAGE1_RULE)",
           reported=("per arm: final ICL, the ICL set's copy rate, the area under the ICL curve, ICL at step 0, "
                     "in-weights accuracy on label-balanced queries and the best query-blind rule's",
                     "per knob and seed: the fitted rise across the dose and its se"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size: N = 8 context pairs of one class each (copy baseline 1/8; version 3: N = 4, "
                    "B = 2, copy 1/2), the 2 layers × 4 heads decoder. Version 3 compared one pair of settings per "
                    "knob; version 4 reads a dose of three equally spaced levels per knob (K on a log scale) by the "
                    "per-seed least-squares trend, with a corroborating check that no step reverses it. Version 3's "
                    "design and results: docs/records/testbed-claim1-v3.md.",)),
    Design("claim2", 4,
           {"base": "2 layers × 4 heads, width 32 (" + V4_UNIMODAL + "), at K_mid = claim 1's piloted K_edge, bursty, "
                    "trained for the piloted steps",
            "heads": "2 layers × 8 heads, width 32", "deep": "4 layers × 4 heads, width 32",
            "deep_matched": "4 layers × 4 heads at the base's parameter count"},
           (PlannedCheck("more heads raise final in-weights accuracy", "iwl_balanced_over_blind", "heads", "base", 0.05,
                   SHIFT),
            PlannedCheck("more layers raise final in-weights accuracy", "iwl_balanced_over_blind", "deep", "base", 0.05,
                   SHIFT),
            PlannedCheck("more layers at matched parameters raise it", "iwl_balanced_over_blind", "deep_matched", "base",
                   0.05, SHIFT, role="corroborating"),
            PlannedCheck("more heads lower the flip rate (context over weights)", "acc_flip", "heads", "base", 0.05, SHIFT,
                   kind="inferiority", role="corroborating")),
           ("settled per seed: over the last quarter of training the copy rate of the ICL set moved by at most "
            "2 binomial se",),
           pilot_rule=("(version 4) the steps by pilots.V4_CLAIM2_RULE (studies/results/pilot_v4_claim2.json); K_mid is "
                       "claim 1's K_edge (pilots.V4_CLAIM1_RULE), where bursty training at this size leaves ICL short "
                       "of its ceiling, so that in-weights learning competes"),
           reported=("area under each ICL curve", "final ICL and the copy rate's last-quarter range per shape",
                     "ICL at step 0"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size (N = 8 pairs of one class each, copy baseline 1/8; version 3: N = 4, B = 2), "
                    "on the 2 layers × 4 heads decoder and its wider and deeper variants. Version 3 trained for 3000 "
                    "steps, at which its 4-layer arm was not settled on 5 of 16 seeds (hypothesis-not-met); version "
                    "4 trains for a step count piloted so that every shape settles on every pilot seed. Checks and "
                    "margins are version 3's. Version 3's design and results: docs/records/testbed-claim2-v3.md.",)),
    Design("claim3", 4,
           {"ape_K": "APE at K = 1024, 4096, 16384, bursty (" + V4_UNIMODAL + "), trained for the piloted steps",
            "rope_K": "RoPE at the same K's, steps and seeds",
            "ape_half": "the APE arms at the evaluation nearest half the steps (the same runs)",
            "rope_half": "the RoPE arms at half the steps"},
           (PlannedCheck("RoPE needs more classes for ICL: APE − RoPE final ICL averaged over the K dose, on settled "
                   "seeds", "icl_gap_over_K", "ape_K", "rope_K", 0.05, SHIFT + "; on a log-K grid the average gap "
                   "is the area between the two ICL curves, so a threshold moved by one level of the dose at an ICL "
                   "height h gives h/3"),
            PlannedCheck("…a higher threshold, not a delay: the gap does not shrink over the second half of training",
                   "icl_gap_change_second_half", "ape_K", "ape_half", 0.05, SHIFT + "; the gap at the end minus the "
                   "gap at half the steps, non-inferior: a delay closes the gap as training goes on",
                   kind="non-inferiority", role="corroborating"),
            PlannedCheck("weaker previous-token pattern under RoPE at K = 16384", "prev_token_max", "ape_K", "rope_K",
                   0.05, PATTERN),
            PlannedCheck("weaker induction pattern under RoPE at K = 16384", "induction_max", "ape_K", "rope_K", 0.05,
                   PATTERN)),
           ("settled: every arm's final ICL moved by at most 2 binomial se over the last quarter of training on the "
            "seed (so that a gap is not a curve still rising)",
            "both arms do ICL at K = 16384 (ICL ≥ 0.9) on the seed, for the pattern checks"),
           pilot_rule="(version 4) the steps by pilots.V4_CLAIM3_RULE (studies/results/pilot_v4_claim3.json)",
           reported=("final ICL per position code and K, at the end and at half the steps", "each head's minimum "
                     "induction score", "ICL at step 0"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size (N = 8 pairs of one class each, copy baseline 1/8; version 3.1: N = 4, B = 2), "
                    "on the 2 layers × 4 heads decoder. Version 3.1 compared APE and RoPE at one K after 3000 steps, "
                    "which could not tell a higher threshold from a delay; version 4 reads the gap over a dose of "
                    "three K's, on seeds where every arm is settled, after a piloted step count, and asks that the "
                    "gap not shrink over the second half of training. Version 3.1's design and results: "
                    "docs/records/testbed-claim3-v3.md.",)),
    Design("claim4", 4,
           {"diverse_L": "stage 1 at K1 = 16384 (" + V4_TRANSFER + "), stage 2 at K2 = L",
            "diverse_16L": "the same stage 1, stage 2 at K2 = 16L",
            "lowK1_L": "control: stage 1 at K1 = 64 (the in-weights regime), stage 2 at K2 = L",
            "no_stage2": "baseline: the diverse decoder with stage 2's initial (random) projector, i.e. diverse_L at "
                         "step 0"},
           (PlannedCheck("diverse M1 pretraining matters: ICL needing M2", "acc_icl_m2only", "diverse_L", "lowK1_L", 0.10,
                   REGIME + "; the size pilot's stage 2 raised this ICL by a median 0.78 (pilots.v4_stage2_reading)"),
            PlannedCheck("few M2 classes suffice: K2 = L not worse than 16L", "acc_icl_m2only", "diverse_L", "diverse_16L",
                   0.05, SHIFT, kind="non-inferiority")),
           ("the seed's diverse stage-1 decoder does ICL on M1 (≥ 0.95) with an induction head (score > 0.3)",
            "stage 2 has to learn M2: before stage 2 the diverse decoder's M2-necessary ICL is at most B/N + 0.10",
            "headroom: the low-K1 arm's final M2-necessary ICL + 0.10 + 2 se < 1 (a seed at the ceiling cannot show the "
            "first check's margin, whatever the truth)"),
           pilot_rule="(version 4) the size and M2 by pilots.V4_STAGE1_RULE and V4_DISTRACTOR_RULE; margins by "
                      "pilots.V4_STAGE2_MARGIN_RULE (studies/results/pilot_v4_size.json)",
           reported=("the no-stage-2 baseline of every arm's decoder (each stage-2 run at step 0)",
                     "confounded ICL (both query items of the label's class) per arm", "stage-1 ICL of both decoders"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size. Version 3's M2 was solved by stage 2's random projector before any training "
                    "(M2-necessary ICL 0.79-0.98 with no stage 2), so 'few M2 classes suffice' was vacuous there; "
                    "version 4's M2 carries class-free distractor coordinates (the size pilot: 0.127 before stage 2, "
                    "0.914 after 2000 steps), and 'stage 2 has to learn M2' and the low-K1 arm's headroom are per-seed "
                    "premises. Arms, checks and margins are version 3.1's. Version 3.1's design and results: "
                    "docs/records/testbed-transfer-v3.md.",)),
    Design("claim5", 4,
           {"base": "the 2 layers × 4 heads decoder (claim 4's diverse decoder, " + V4_TRANSFER + ")",
            "deep": "4 layers × 4 heads, the same width", "deep_matched": "4 layers × 4 heads at the base's parameter count",
            "no_stage2": "baseline: each decoder with stage 2's initial projector (its stage-2 run at step 0)"},
           (PlannedCheck("a larger decoder learns multimodal ICL faster (area under the stage-2 curve)", "auc_icl_m2only",
                   "deep", "base", 0.07, "a tenth of the base's median rise in area over its no-stage-2 value on the "
                   "size pilot (0.709: pilots.V4_STAGE2_MARGIN_RULE, pilots.v4_stage2_reading), rounded to 0.01"),
            PlannedCheck("the same at matched parameters", "auc_icl_m2only", "deep_matched", "base", 0.07,
                   "as above", role="corroborating")),
           ("each decoder's stage 1 meets claim 4's stage-1 premise",
            "stage 2 has to learn M2: before stage 2 the base's M2-necessary ICL is at most B/N + 0.10",
            "headroom: the base's area + the margin + 2 se < 1 (the area's se bound, sign_tests.area_under_se)"),
           pilot_rule="(version 4) the size and M2 by pilots.V4_STAGE1_RULE and V4_DISTRACTOR_RULE; the margin by "
                      "pilots.V4_STAGE2_MARGIN_RULE (studies/results/pilot_v4_size.json)",
           reported=("final M2-necessary ICL per decoder", "the no-stage-2 baseline per decoder",
                     "the headroom of the base's area per seed"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size. Version 3's check could not pass whatever the truth: with a random projector "
                    "M2-necessary ICL was already 0.79-0.98 and the base's area 0.940-0.992, so even a perfect deeper "
                    "decoder could clear 0.03 + 2 se on at most one seed per family; its margin, stated as 'a tenth "
                    "of the base's typical rise over stage 2', was 0.03 where that rule gives 0.007. Version 4's M2 "
                    "has to be learnt, the margin is computed by its stated rule on the size pilot (0.07), and the "
                    "base's headroom is a per-seed premise. The curves are evaluated every EVAL_EVERY_V4 = 50 steps "
                    "(version 3: 25, over 1500 steps). Version 3.1's design and results: "
                    "docs/records/testbed-transfer-v3.md.",)),
    Design("claim6", 4,
           {"fusion_readout": "early fusion: the 2 layers × 4 heads decoder and M2's projector from scratch, trained "
                              "together for the piloted steps on layout readout_last ([M1_i, M2_i, y_i] … [M1_q, M2_q, "
                              "R]: M2 next to the label), M2 at the piloted K2 (" + V4_TRANSFER + ")",
            "fusion_swapped": "the same in layout readout_last_m2_first ([M2_i, M1_i, y_i] … [M2_q, M1_q, R]: M1 next "
                              "to the label)",
            "fusion_reversed": "the same in layout readout_last_query_reversed ([M1_i, M2_i, y_i] … [M2_q, M1_q, R]: "
                               "M2 next to the label in the context, M1 next to the readout in the query)",
            "staged_readout": "staged: version 4's diverse stage 1 (claims 4, 5, 9), then stage 2 at the piloted K2 "
                              "in layout readout_last (the decoder's blocks frozen)"},
           (PlannedCheck("after fusion the label-adjacent modality is followed on conflicts (M2 next to the label)",
                   "follow_adjacent_minus_other", "fusion_readout", "zero", 0.10, REGIME),
            PlannedCheck("…and when the layout puts M1 next to the label: the preference follows adjacency, not M2",
                   "follow_adjacent_minus_other", "fusion_swapped", "zero", 0.10, REGIME),
            PlannedCheck("…and when the query's order is reversed: the label-adjacent modality, not the one next to "
                   "the readout token", "follow_adjacent_minus_other", "fusion_reversed", "zero", 0.10, REGIME),
            PlannedCheck("staged training prefers M1 though M2 is next to the label", "follow_m1_minus_m2",
                   "staged_readout", "zero", 0.10, REGIME),
            PlannedCheck("fusion follows the label-adjacent modality more than staged training does (version 3's "
                   "check)", "follow_adjacent_minus_other", "fusion_readout", "staged_readout", 0.10, REGIME,
                   role="corroborating")),
           ("each arm does multimodal ICL: ICL on the confounded set above B/N + 0.10 + 2 se",
            "the seed's stage-1 decoder does ICL on M1 (≥ 0.95) with an induction head (score > 0.3)"),
           pilot_rule="(version 4) fusion's K2 and steps by pilots.V4_CLAIM6_RULE (studies/results/pilot_v4_claim6.json), "
                      "the largest of its grids where it picks none (pilots.V4_CLAIM6_FALLBACK); "
                      "the size and M2 by pilots.V4_STAGE1_RULE and V4_DISTRACTOR_RULE",
           reported=("each arm's conflict follow rates of both modalities", "confounded, M1-necessary and M2-necessary "
                     "ICL per arm", "the reversed-query arm's rate of following the modality next to the readout"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size. Version 3.2's 'holds' had nothing to reverse: its staged arm did almost no "
                    "multimodal ICL (confounded ICL 0.50–0.72 at a copy baseline of 0.5, M1-necessary 0.45–0.54) and "
                    "preferred M1 on 0 of 16 seeds, and with one layout 'label-adjacent' could not be told from "
                    "'M2'. Version 4 requires every arm to do multimodal ICL (a per-seed premise), asks the staged arm "
                    "to prefer M1, and asks fusion to follow the label-adjacent modality in three layouts: M2 next "
                    "to the label, M1 next to it, and the query reversed so that label adjacency and readout "
                    "adjacency differ. Version 3.2's design and results: docs/records/testbed-claim6-v3.md.",)),
    Design("claim7", 4,
           {"dose_k": "stage 2 on version 4's diverse decoder (claims 4, 5, 6, 9; " + V4_TRANSFER + ") with an M2 "
                      "encoder pretrained for the k-th of 4 piloted step counts, its features standardised, on version "
                      "4's claim-7 M2 (K2 = 64, ε2 = 1, with the distractors), the known-class M2-necessary set "
                      "evaluated every 100 steps on 8192 items"},
           (PlannedCheck("a better encoder gives better multimodal ICL: across the doses' span of encoder accuracy the "
                   "per-seed slope of AUC buys at least a twentieth of the range", "auc_gain_over_span", "dose", "zero",
                   0.05, "a twentieth of the AUC range over the doses' span (slope × span): the claim's effect must be "
                   "a shift of ICL, not a trend inside one evaluation se"),
            PlannedCheck("…and the slope is positive (the direction alone)", "slope_auc_icl_m2known", "dose", "zero",
                   0.0, "the direction alone: version 3's slope was positive on 16 of 16 seeds below its margin",
                   role="corroborating")),
           ("the doses span encoder accuracy (the lowest and highest dose differ by ≥ 0.3 on the seed)",
            "the seed's stage-1 decoder does ICL on M1 (≥ 0.95) with an induction head (score > 0.3)",
            "headroom (the ceiling check): the lowest dose's AUC + 0.05 + 2 se < 1"),
           pilot_rule="(version 4) the encoder doses by pilots.V4_CLAIM7_RULE (studies/results/pilot_v4_claim7.json); "
                      "the size and M2's distractors by pilots.V4_STAGE1_RULE and V4_DISTRACTOR_RULE",
           reported=("per dose: encoder accuracy, AUC, final ICL and the no-stage-2 value (step 0)",
                     "the per-seed slope and its se"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size (N = 8, B = 1: copy baseline 1/8). Version 3.1's 'fails' was a magnitude "
                    "verdict at a size with no room: the slope was positive on 16 of 16 seeds (mean 0.032) but below "
                    "its 0.05 margin per unit of accuracy, and at N/B = 2 a 20 %-accurate encoder already gave final "
                    "ICL 0.84. Version 4 states the effect as AUC gained across the seed's span of encoder accuracy "
                    "against a twentieth of the range, adds the direction as a corroborating check and the lowest "
                    "dose's headroom as a premise (the ceiling check), and evaluates every 100 steps over 2000. "
                    "Version 3.1's design and results: docs/records/testbed-claim7-v3.md.",)),
    Design("claim8", 4.1,
           {"model": "2 layers × H heads (H by pilots.V4_CLAIM8_RULE), width 32, N = 8 context pairs of one class "
                     "each (B = 1: copy baseline 1/8), K = 16384 bursty, trained for the version-4 stage-1 step count, "
                     "evaluated every EVAL_EVERY_V4 steps",
            "induction_heads": "every head whose selection-set induction score exceeds 0.5",
            "uniform_patch": "the query's attention row of every induction head set to 1/N on each of the N context "
                             "label tokens (metrics.PATCH_ROWS['uniform_labels']): 'read a label' kept, 'which label' "
                             "(the match) removed",
            "matching_patch": "the control: the same heads' query rows set evenly on the context label tokens that "
                              "carry the answer (PATCH_ROWS['matching_labels']): the same intervention with the "
                              "match made perfect",
            "prev_token_heads": "every non-induction head whose selection-set previous-token score exceeds 0.5"},
           (PlannedCheck("patching the induction heads' query attention to uniform over the context labels brings ICL "
                   "down to the copy baseline (below B/N + 0.10)",
                   "copy_minus_icl_uniform_patch", "copy", "uniform_patch", 0.10,
                   "a tenth of the accuracy range above copying: patched, the model copies, it does no more ICL than "
                   "a model between the regimes", kind="non-inferiority"),
            PlannedCheck("…and not below it: patched, the model still copies (above B/N − 0.03), it is not broken",
                   "icl_uniform_patch_minus_copy", "uniform_patch", "copy", 0.03,
                   "half the gap between copying (B/N = 1/8) and guessing a label uniformly (1/L = 1/16): a model "
                   "that no longer finds the context's labels falls below the margin, one that copies stays above",
                   kind="non-inferiority"),
            PlannedCheck("the patch lowers ICL through the match alone: with the same heads patched to the answer's "
                   "labels instead, ICL is higher", "icl_matching_minus_uniform_patch", "matching_patch",
                   "uniform_patch", 0.10, REGIME),
            PlannedCheck("mean-ablating the previous-token heads lowers ICL (the circuit's first half)",
                   "icl_drop_prev_token", "intact", "prev_token_heads", 0.10, REGIME, role="corroborating"),
            PlannedCheck("induction strength rises with ICL: the top induction head's score reaches half its final value "
                   "inside the window in which ICL rises from 10 % to 90 % of its way from B/N to its final value",
                   "half_rise_inside_icl_window", "induction", "icl", 0.0,
                   "a position inside or outside a window read on the evaluation grid: any depth inside counts",
                   role="corroborating")),
           ("the model does ICL at the end (above B/N + 2 se)", "an induction head exists"),
           pilot_rule=("(version 4, unchanged) heads per layer by pilots.V4_CLAIM8_RULE on the size pilot's decoders "
                       "(studies/results/pilot_v4_claim8.json); steps by pilots.V4_STAGE1_RULE; version 4.1 chooses "
                       "nothing new"),
           reported=("the copy rate (a context label predicted, right or not) under each patch",
                     "the uniform patch on as many heads that are neither, from any layer (heads.COUNT_MATCHED_RULE), "
                     "where a member has that many",
                     "version 4's set ablations: every induction head, the layer- and count-matched set where one "
                     "exists, every head that is neither, mean-ablation and zeroing",
                     "the single-head ranking: the top induction head's mean-ablation drop against the least needed "
                     "head of its layer"),
           changes=("Version 4.1, a new design after version 4's verdict run, on fresh families (design.FAMILY_SETS[4.1]: "
                    "7000–7007 and 8000–8007, each with its own data stream). Version 4 was hypothesis-not-met: on 16 "
                    "of 16 seeds 6–8 of layer 2's 8 heads were induction heads, so no layer- and count-matched control "
                    "existed, and ablating the induction heads took ICL to 0.05–0.30, on both sides of the copy "
                    "baseline. Version 4.1 intervenes on the induction heads' attention instead of removing their "
                    "output: the uniform patch keeps 'read a context label' and removes the match, so a model whose "
                    "ICL runs through these heads should fall to copying, neither above nor below it; the control is "
                    "the same patch with the match made perfect, on the same heads, so the two differ in the match "
                    "alone. The size, heads, steps and seeds' roles are version 4's. Version 4's design and results: "
                    "docs/records/testbed-claim8-v4.md.",)),
    Design("claim9", 4,
           {"frozen": "stage 2 as published (attention frozen) on the 2 layers × 4 heads diverse decoder (claim 4's "
                       "diverse_L run, " + V4_TRANSFER + "): the control for the change of layout",
            "unfrozen": "stage 2 with every weight trainable at lr/10, on the same stage-1 decoder, seed and "
                        "multimodal evaluation sequences",
            "stage1": "the stage-1 decoder: its own unimodal scores choose the heads (top: largest induction score; "
                      "control: a head that is not an induction head, score ≤ 0.5, in the top head's layer when it has "
                      "one (transfer.non_induction_control); previous-token head: largest previous-token score)"},
           (PlannedCheck("unfrozen stage 2 raises the top induction head's score over the frozen arm's",
                   "induction_change_top", "unfrozen", "frozen", 0.05, PATTERN),
            PlannedCheck("…and by more than it raises a non-induction control head's",
                   "induction_change_top_minus_control", "unfrozen", "frozen", 0.05, PATTERN),
            PlannedCheck("the previous-token head stays: unfrozen stage 2 does not lower its score below the frozen arm's "
                   "by the margin", "prev_token_change", "unfrozen", "frozen", 0.05, PATTERN,
                   kind="non-inferiority")),
           ("claim 4's stage-1 premise", "a non-induction control head exists (a head with stage-1 induction score ≤ 0.5)"),
           pilot_rule="(version 4) the size and M2 by pilots.V4_STAGE1_RULE and V4_DISTRACTOR_RULE",
           reported=("the raw stage-1 → stage-2 changes of both arms at the same heads (stage-2 multimodal score minus "
                     "the stage-1 decoder's unimodal score)", "version 3's unpaired se bound beside the paired se",
                     "M2-necessary ICL of both arms and before stage 2"),
           changes=("Version 4, a new design on fresh families (design.FAMILY_SETS[4], each with its own data seed) at "
                    "version 4's size, on claim 4's diverse decoder (2 layers × 4 heads). Version 3's one decisive "
                    "induction check, change(top) − change(control) > 0.05, counted 'changed less than the control' "
                    "as support: unfreezing lowered the top induction head on 16 of 16 seeds, and its control was "
                    "itself an induction head on 12. Version 4 asks the direction explicitly (the top head rises, "
                    "and rises more than a control head that is not an induction head), and every change is paired "
                    "per evaluation sequence (transfer.paired_head_changes: se = sd of the per-sequence differences "
                    "/ √n) instead of version 3's unpaired triangle bound. Version 3's design and results: "
                    "docs/records/testbed-transfer-v3.md.",)),
)}


def design_of_run(claim: str, version: str | float, folder=None) -> Design:
    """The design that decided a committed verdict run of ``claim`` at ``version``: ``DESIGNS[claim]``
    when that is the version in force, else the ``design.json`` that the run's ``folder`` keeps (a
    retired version's design as data, beside its results); a ``ValueError`` when neither is there."""
    import json
    from pathlib import Path

    if float(DESIGNS[claim].version) == float(version):
        return DESIGNS[claim]
    path = None if folder is None else Path(folder) / "design.json"
    if path is None or not path.is_file():
        raise ValueError(f"{claim} version {version} is retired and its run folder keeps no design.json "
                         f"({path}): write it from the version's last code (docs/records/)")
    raw = json.loads(path.read_text(encoding="utf-8"))
    checks = tuple(PlannedCheck(**c) for c in raw["checks"])
    fields = {k: raw[k] for k in ("claim", "version", "arms", "premises", "pilot_rule", "reported", "changes")}
    return Design(**{**fields, "checks": checks, "premises": tuple(fields["premises"]),
                     "reported": tuple(fields["reported"]), "changes": tuple(fields["changes"])})


def outcome_word(passed) -> str:
    """One check's outcome in words: "passes" (decided on the claimed side), "fails" (decided on the
    other), "undecided" (None)."""
    return "passes" if passed else "fails" if passed is False else "undecided"


def outcome_words(checks) -> dict[str, str]:
    """``{"verdict: <check name>": outcome_word(passed)}`` for each check: how a claim's summary
    reports its checks' outcomes."""
    return {f"verdict: {c.name}": outcome_word(c.passed) for c in checks}


def power_table(ns=(8, 16), ps=(0.8, 0.9)) -> dict[int, dict[float, float]]:
    """The sign test's power at ``ALPHA`` for n seeds when each seed shows the effect with probability p."""
    from mmicl.numerics.testbed.sign_tests import power

    return {n: {p: power(n, p, alpha=ALPHA) for p in ps} for n in ns}


def design_markdown() -> str:
    """The designs as the Markdown that docs/testbed.md carries; regenerate it with
    ``python -m mmicl.proofs.claims.testbed docs --docs docs/testbed.md``."""
    pw = power_table()
    def families(v: float) -> str:
        out = []
        for f, fam in FAMILY_SETS[v].items():
            data = ("the run's --seed" if fam.data_offset is None else f"100·seed + {fam.data_offset}")
            out.append(f"family {f} {fam.seeds[0]}–{fam.seeds[-1]} (data seed {data})")
        return ", ".join(out)

    lines = [
        f"Verdict seeds: version 3, {families(3)}; version 4, {families(4)}; version 4.1, {families(4.1)}; "
        f"pilots {PILOT_SEEDS[0]}–"
        f"{PILOT_SEEDS[-1]} and {STAGE1_PILOT_SEEDS[0]}–{V4_PILOT_SEEDS[-1]}. Evaluation sets of {EVAL_SIZE} items. "
        f"Sign test at α = {ALPHA} per direction over the resolved seeds, the two families pooled with a "
        f"consistency guard; power with every seed resolved: n = 8 decides with power {pw[8][0.8]:.2f} "
        f"(p = 0.8) and {pw[8][0.9]:.2f} (p = 0.9), n = 16 pooled {pw[16][0.8]:.2f} and {pw[16][0.9]:.2f}.",
        "",
        "| claim | version | check (role) | A − B on | margin | why the margin | premises (per seed) | chosen by a pilot |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for d in DESIGNS.values():
        for i, c in enumerate(d.checks):
            side = {"superiority": f"> {c.margin:g}", "non-inferiority": f"> −{c.margin:g}",
                    "inferiority": f"< −{c.margin:g}"}[c.kind]
            lines.append(f"| {d.claim if i == 0 else ''} | {d.version if i == 0 else ''} | {c.name} ({c.role}) | "
                         f"`{c.metric}`: {c.a} − {c.b} | "
                         f"{side} | {c.margin_why} | {'; '.join(d.premises) if i == 0 else ''} | "
                         f"{d.pilot_rule if i == 0 else ''} |")
    changes = [(d.claim, c) for d in DESIGNS.values() for c in d.changes]
    if changes:
        lines += ["", "Changes to the design after it was first committed:", ""]
        lines += [f"- {claim}: {c}" for claim, c in changes]
    return "\n".join(lines)
