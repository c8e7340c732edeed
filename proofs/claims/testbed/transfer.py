"""Claims 4, 5 and 9 of the testbed: what stage 2 of the multimodal protocol transfers and refines
(``design.DESIGNS``).

Stage 1 trains a decoder on M1 alone (bursty).  Stage 2 freezes the decoder's blocks and trains a
projector of M2, plus the final norm and the readout.  Each stage-1 and stage-2 training is a run
of the results store ``OUT/testbed/runs`` (the kinds ``stage1`` and ``stage2`` of ``numerics.runs``;
``common.run_specs``), so a killed claim resumes where it stopped.  Runs with the same settings are
trained once for all three claims: claim 4's diverse stage 1 is claim 5's ``base`` stage 1, and
claim 4's ``diverse_L`` stage 2 is claim 5's ``base`` run.  That run is evaluated every
``EVAL_EVERY_TRANSITION`` steps for claim 5.  Evaluation draws nothing from the training stream, so
claim 4 reads the same finals as it would from a run evaluated less often.

**Seeds and pairing.**  Each verdict family (``FAMILIES``) is one ensemble per stage-1 setting, its
8 seeds the members.  Every stage-2 run is one arm on those members, so two arms of a check share,
per seed, the stage-1 decoder (where the design says so), the M2 tables, the training stream and
the evaluation sets.  Every set has ``EVAL_SIZE`` sequences.

**Standard errors of one seed's difference** (what ``decide_check`` resolves a seed against):

- an accuracy difference: ``accuracy_difference_se`` (binomial over EVAL_SIZE items; conservative
  when both arms are scored on the same items);
- a difference of areas under accuracy curves (claim 5): ``sign_tests.area_under_se`` of each arm,
  added in quadrature (the same assumption as ``accuracy_difference_se``: the arms' errors do not
  correlate negatively).  ``area_under_se`` bounds an area's evaluation se without any assumption
  about how the evaluations of one curve correlate;
- attention scores (claim 9): a head's score is the mean over the n multimodal ICL sequences of a
  per-sequence value, and each stage-2 run records, per head, the sample sd of those values (the
  analysis ``head_score_spread``).  A difference of two means over the same sequences, a and b,
  has se ≤ (sd_a + sd_b)/√n: sd(a_i − b_i) ≤ sd(a_i) + sd(b_i) (triangle inequality), whatever
  the correlation, so no pairing is assumed.  Claim 9's change(top) − change(control) is a sum of
  four such per-sequence terms, so its se is ≤ (the four sd's summed)/√n (``change_se``).

Quick size only (``TestbedConfigError`` otherwise).  The settings that DESIGNS leaves to the code
are fixed here: ``K1_DIVERSE``, ``K1_LOW``, ``K2_WIDE``, ``UNFROZEN_LR``; the stage-1 decoder's heads
per layer are the stage-1 pilot's choice (``STAGE1_HEADS``, ``pilots.PILOTED["stage1"]``) and its
premise is ``common.stage1_premise``.  Claim 9 runs on a 2-layer × ``CLAIM9_HEADS``-head decoder and
compares the unfrozen stage 2 with the frozen one, its heads chosen by ``select_heads`` (both in
``DESIGNS["claim9"].changes``).  Each claim returns ``(hypotheses, checks, Summary, figures)``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, replace

import numpy as np

from mmicl.numerics.testbed.config import MultimodalConfig, TestbedConfigError, stage1_ape_slots
from mmicl.numerics.testbed.model import decoder_parameters, width_matching_parameters
from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, arm_to_json
from mmicl.numerics.testbed.sign_tests import accuracy_difference_se, area_under_se

from ...claim import Summary
from ..number_tolerances import EXACT, SAMPLING_WHY, sampling_atol
from .common import (arm_results, base_hypotheses, decide_check, family_seeds, mean_atol, premise, run_specs,
                     stage1_premise, stage1_settings, write_result)
from .design import DESIGNS, EVAL_EVERY_TRANSITION, EVAL_SIZE, FAMILIES, FAMILY_SETS, data_seed, outcome_words
from .pilots import PILOTED
from .sizes import MultimodalSizes, multimodal_quick, multimodal_v4

__all__ = ["claim4", "claim5", "claim9", "K1_DIVERSE", "K1_LOW", "K2_WIDE", "STAGE1_HEADS", "UNFROZEN_LR", "CLAIM9_HEADS",
           "CLAIM9_ANALYSIS", "ARM_METRICS", "select_heads", "head_changes", "change_se", "CHANGE_METRICS",
           "non_induction_control", "paired_head_changes", "v4_size", "V4_DECODERS", "v4_decoders", "v4_stage1_settings"]

K1_DIVERSE = 16384
"""Claim 4's diverse stage 1 (the quick size's M1 K): the claims 4, 5 and 9 decoders."""
K1_LOW = 64
"""Claim 4's control stage 1: K1 = 64, the in-weights regime (the unimodal claims' K_lo)."""
K2_WIDE = 16
"""Claim 4's second M2 arm: K2 = K2_WIDE · L."""
STAGE1_HEADS = PILOTED["stage1"]["heads"]
"""Claim 4's stage-1 decoders (and claim 5's base) have 2 layers × this many heads (width 32), trained
for the quick stage 1's 5000 steps: the stage-1 pilot's choice (``pilots.STAGE1_RULE``)."""
UNFROZEN_LR = 0.1
"""Claim 9's unfrozen stage 2 trains every weight at this fraction of stage 2's learning rate."""
CLAIM9_HEADS = 4
"""Claim 9's decoder (a change to the design, ``DESIGNS["claim9"].changes``).  The quick decoder has
one head per layer, so the design's "same-layer control head" does not exist on it.  Claim 9
therefore runs on claim 8's shape: 2 layers × 4 heads, width 32 (head width 8).  Its stage 1 is claim 4's diverse stage 1 in every
other setting, and it must meet claim 4's premise.  It is a stage 1 of its own, not shared with
claims 4 and 5."""
CLAIM9_ANALYSIS = {"name": "head_score_spread"}
"""What claim 9's stage-2 runs analyse at their end: every head's score on the multimodal ICL set
and the per-sequence sd behind it (``numerics.runs.head_score_spread``)."""

ARM_METRICS = ("acc_icl", "acc_icl_m2only", "acc_icl_m1only", "acc_icl_m2known", "acc_iwl", "acc_flip",
               "induction_max", "prev_token_max")
"""The final metrics a claim's result file tabulates per stage-2 run."""
ACC_SE = f"binomial, {EVAL_SIZE} sequences per arm (sign_tests.accuracy_difference_se)"


# ---- pure functions (unit-tested on hand-made inputs) ----------------------------------------------
def select_heads(induction: np.ndarray, prev_token: np.ndarray) -> dict[str, np.ndarray]:
    """Claim 9's heads per seed, from the stage-1 decoder's own unimodal scores (E, layers, H).
    PROPOSED RULE (DESIGNS states none).

    - ``top``: the head with the largest induction score;
    - ``control``: the head of the top head's layer with the smallest induction score (the first
      such head on ties; [−1, −1] when the layer has one head);
    - ``prev``: the head with the largest previous-token score.

    Ties go to the first head in (layer, head) order.  The heads are chosen on the very scores the
    changes are measured from.  Regression to the mean therefore lowers the top head's measured
    change and raises the control's: the choice works against the claim, never for it.
    Returns (E, 2) integer arrays [layer, head]."""
    ind = np.asarray(induction, float)
    prev = np.asarray(prev_token, float)
    if ind.ndim != 3 or prev.shape != ind.shape:
        raise ValueError(f"select_heads needs (E, layers, H) scores of one shape, got {ind.shape} and {prev.shape}")
    E, layers, H = ind.shape
    top = np.stack(np.unravel_index(ind.reshape(E, -1).argmax(1), (layers, H)), 1)
    control = np.full((E, 2), -1)
    if H >= 2:
        for e, (layer, h) in enumerate(top):
            row = ind[e, layer].copy()
            row[h] = np.inf
            control[e] = (layer, int(row.argmin()))
    pv = np.stack(np.unravel_index(prev.reshape(E, -1).argmax(1), (layers, H)), 1)
    return {"top": top, "control": control, "prev": pv}


def _at(x, where: np.ndarray) -> np.ndarray:
    """Per seed, ``x`` (E, layers, H) at the head ``where`` (E, 2) [layer, head]; nan at [−1, −1]."""
    x = np.asarray(x, float)
    E = len(where)
    ok = where[:, 0] >= 0
    out = np.full(E, np.nan)
    out[ok] = x[np.arange(E)[ok], where[ok, 0], where[ok, 1]]
    return out


def head_changes(heads: dict[str, np.ndarray], after: dict[str, np.ndarray], before: dict[str, np.ndarray]
                 ) -> dict[str, np.ndarray]:
    """Per seed, claim 9's changes of the heads of ``select_heads`` from ``before`` to ``after``; each
    dict holds ``induction`` and ``prev_token`` (E, layers, H).  The check reads the unfrozen arm's
    final scores (``after``) against the frozen arm's (``before``); the report reads each arm against
    the stage-1 scores.

    - ``induction_change_top`` / ``_control``: the induction score after minus before, of the top
      head and of the control head (nan without a control);
    - ``induction_change_top_minus_control``: the first minus the second;
    - ``prev_token_change``: the previous-token head's score after minus before."""
    d = {k: _at(after["induction"], heads[k]) - _at(before["induction"], heads[k]) for k in ("top", "control")}
    return {"induction_change_top": d["top"], "induction_change_control": d["control"],
            "induction_change_top_minus_control": d["top"] - d["control"],
            "prev_token_change": _at(after["prev_token"], heads["prev"]) - _at(before["prev_token"], heads["prev"])}


def change_se(heads: dict[str, np.ndarray], sd_a: dict[str, np.ndarray], sd_b: dict[str, np.ndarray], n: int
              ) -> dict[str, np.ndarray]:
    """Per seed, bounds on the evaluation se of claim 9's ``head_changes(heads, a, b)``, when a's and
    b's scores are means over the same ``n`` sequences of per-sequence values whose sample sd's
    per head are ``sd_a`` / ``sd_b`` (``induction_sd``, ``prev_token_sd`` of ``head_score_spread``,
    as ``induction`` and ``prev_token`` (E, layers, H)).

    One head's change is the mean over the sequences of a_i − b_i, and sd(a_i − b_i) ≤ sd(a_i) +
    sd(b_i) (the triangle inequality for centred vectors, equality when a_i − mean and b_i − mean
    are exactly opposed), so se ≤ (sd_a + sd_b)/√n with no assumption about the pairing.  The top
    minus control difference has four per-sequence terms: se ≤ (sd_a(top) + sd_b(top) +
    sd_a(control) + sd_b(control))/√n.  Returns ``induction_change_top_minus_control`` and
    ``prev_token_change`` (E,)."""
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"n must be a whole number ≥ 1, got {n!r}")
    for sd in (sd_a, sd_b):
        for m in ("induction", "prev_token"):
            if np.any(np.asarray(sd[m], float) < 0):
                raise ValueError(f"change_se: a standard deviation is negative ({m})")
    root = math.sqrt(n)
    pair = {k: _at(sd_a["induction"], heads[k]) + _at(sd_b["induction"], heads[k]) for k in ("top", "control")}
    return {"induction_change_top_minus_control": (pair["top"] + pair["control"]) / root,
            "prev_token_change": (_at(sd_a["prev_token"], heads["prev"])
                                  + _at(sd_b["prev_token"], heads["prev"])) / root}


def non_induction_control(induction: np.ndarray, top: np.ndarray, threshold: float) -> np.ndarray:
    """Per seed, claim 9's version-4 control head: a head that is *not* an induction head (score ≤
    ``threshold`` on the stage-1 decoder's own unimodal scores (E, layers, H)), preferably in the top
    head's layer: the least-induction head of that layer when it is below the threshold, else the
    least-induction head of the whole decoder when that one is; [−1, −1] when every head is an
    induction head (the seed then fails the premise "a non-induction control head exists").  Ties
    go to the first head in (layer, head) order.  ``top``: (E, 2) [layer, head] (``select_heads``)."""
    ind = np.asarray(induction, float)
    top = np.asarray(top, int)
    if ind.ndim != 3 or top.shape != (len(ind), 2):
        raise ValueError(f"non_induction_control needs (E, layers, H) scores and (E, 2) top heads, got {ind.shape} "
                         f"and {top.shape}")
    E, layers, H = ind.shape
    out = np.full((E, 2), -1)
    for e, (layer, h) in enumerate(top):
        row = ind[e, layer].copy()
        row[h] = np.inf
        j = int(row.argmin())
        if row[j] <= threshold:
            out[e] = (layer, j)
            continue
        flat = ind[e].copy()
        flat[layer, h] = np.inf
        k = int(flat.argmin())
        if flat.flat[k] <= threshold:
            out[e] = np.unravel_index(k, (layers, H))
    return out


def paired_head_changes(heads: dict[str, np.ndarray], after: dict[str, np.ndarray], before: dict[str, np.ndarray]
                        ) -> dict[str, np.ndarray]:
    """Per seed, claim 9's changes (as ``head_changes``) from the per-sequence scores of two runs on the
    same n evaluation sequences (``after`` and ``before``: ``induction`` and ``prev_token``, (E, n,
    layers, H); ``head_score_sequences``), each with its *paired* se: the change of head x is the mean
    over sequences of d_i = after_i(x) − before_i(x), its se sd(d)/√n (ddof 1), and the top-minus-
    control change the mean of d_i(top) − d_i(control) with the sd of that difference.  Pairing by
    sequence removes the sequence-to-sequence spread the two runs share (``change_se``'s bound assumes
    none is shared).  A head at [−1, −1] gives nan."""
    def per_sequence(metric: str, where: np.ndarray) -> np.ndarray:
        a, b = np.asarray(after[metric], float), np.asarray(before[metric], float)
        if a.shape != b.shape or a.ndim != 4:
            raise ValueError(f"paired_head_changes needs two (E, n, layers, H) arrays of one shape, got {a.shape} "
                             f"and {b.shape} ({metric})")
        E, n = a.shape[:2]
        out = np.full((E, n), np.nan)
        for e, (layer, h) in enumerate(np.asarray(where, int)):
            if layer >= 0:
                out[e] = a[e, :, layer, h] - b[e, :, layer, h]
        return out

    d = {"induction_change_top": per_sequence("induction", heads["top"]),
         "induction_change_control": per_sequence("induction", heads["control"]),
         "prev_token_change": per_sequence("prev_token", heads["prev"])}
    d["induction_change_top_minus_control"] = d["induction_change_top"] - d["induction_change_control"]
    n = d["induction_change_top"].shape[1]
    if n < 2:
        raise ValueError(f"a paired se needs at least 2 sequences, got {n}")
    out = {}
    for k, v in d.items():
        out[k] = v.mean(1)
        out[f"{k}_se"] = v.std(1, ddof=1) / math.sqrt(n)
    return out


# ---- the runs ----------------------------------------------------------------------------------------
def v4_size(config, claim: str) -> MultimodalSizes:
    """The version-4 multimodal size with the pilots' choices (``sizes.multimodal_v4``: the stage-1
    steps of ``PILOTED["v4_stage1"]``, the M2 distractors of ``PILOTED["v4_m2"]``)."""
    return multimodal_v4(config, claim, PILOTED["v4_stage1"]["steps"], **PILOTED["v4_m2"])


V4_DECODERS = ("diverse", "lowK1", "deep", "deep_matched")
"""The version-4 stage-1 decoders of claims 4, 5 and 9 (``v4_decoders``)."""


def v4_decoders(sz: MultimodalSizes) -> dict[str, tuple]:
    """Each version-4 stage-1 decoder as (``ModelConfig``, K1): ``diverse``, 2 layers × 4 heads at K1 =
    ``K1_DIVERSE`` (claim 4's diverse decoder, claim 5's base, claim 9's decoder); ``lowK1``, the same
    at K1 = ``K1_LOW``; ``deep``, ``sz.deep_layers`` layers at the same width; ``deep_matched``, that
    many layers at the width matching the diverse decoder's parameter count
    (``width_matching_parameters``)."""
    base = stage1_ape_slots(sz.model, replace(sz.m1, K=K1_DIVERSE))
    w_eq = width_matching_parameters(base, sz.deep_layers, sz.m1.D, sz.m1.L)
    return {"diverse": (base, K1_DIVERSE), "lowK1": (base, K1_LOW),
            "deep": (replace(base, layers=sz.deep_layers), K1_DIVERSE),
            "deep_matched": (replace(base, layers=sz.deep_layers, width=w_eq), K1_DIVERSE)}


def v4_stage1_settings(config, sz: MultimodalSizes, decoders=V4_DECODERS) -> dict[str, dict]:
    """``{"<decoder>_<family>": stage1 settings}`` of the version-4 decoders named in ``decoders``
    on version 4's families (``design.FAMILY_SETS[4]``), each family with its own data seed
    (``design.data_seed``).  Claims sharing a decoder share its run in one store."""
    shapes = v4_decoders(sz)
    return {f"{k}_{f}": stage1_settings(config, sz, fam.seeds, model=shapes[k][0], K1=shapes[k][1],
                                        data_seed=data_seed(config.seed, fam))
            for k in decoders for f, fam in FAMILY_SETS[4].items()}


def _arm(sz, K2: int, K1: int | None = None) -> MultimodalArm:
    """The one arm of a stage-2 run: K2 M2 classes (named ``K2=<K2>``, the same arm in every claim)."""
    return MultimodalArm(f"K2={K2}", MultimodalConfig(replace(sz.m1, K=K1 or K1_DIVERSE), replace(sz.m2, K=K2)))


def _stage2_settings(stage1: dict, arm, train, trainable: str = "projector+readout") -> dict:
    return {"stage1": stage1, "arms": [arm_to_json(arm)], "train": asdict(train), "trainable": trainable}


def _transition(train):
    """Stage-2 training evaluated every ``EVAL_EVERY_TRANSITION`` steps (claim 5's curves)."""
    return replace(train, eval_every=EVAL_EVERY_TRANSITION)


def _runs(config, kind: str, settings: dict[str, dict]) -> dict[str, dict]:
    """Each named ``kind`` run through the store (``common.run_specs``): the finished record of each."""
    return run_specs(config, {name: (kind, s) for name, s in settings.items()})


def _result(config, name: str, records1: dict[str, dict], records2: dict[str, dict], **extra) -> None:
    write_result(config, name, {
        "code": "proofs/claims/testbed/transfer.py", "store": "runs/ beside this file",
        "run_keys": {"stage1": {k: r["key"] for k, r in records1.items()},
                     "stage2": {k: r["key"] for k, r in records2.items()}},
        "seconds": {"stage1": {k: r["provenance"]["seconds"] for k, r in records1.items()},
                    "stage2": {k: r["provenance"]["seconds"] for k, r in records2.items()}}, **extra})


def _stage1_table(final: dict) -> dict:
    acc = np.asarray(final["acc_icl"], float)
    ind = np.asarray(final["induction"], float).reshape(acc.size, -1)
    return {"acc_icl": acc.round(4).tolist(), "induction_max": ind.max(1).round(4).tolist(),
            "induction_min": ind.min(1).round(4).tolist(),
            "prev_token_max": np.asarray(final["prev_token"], float).reshape(acc.size, -1).max(1).round(4).tolist()}


# ---- claim 4 -------------------------------------------------------------------------------------------
def claim4(config):
    """Few M2 classes suffice after diverse M1 pretraining (``DESIGNS["claim4"]``).  Per family:
    stage 1 at K1 = ``K1_DIVERSE`` and at K1 = ``K1_LOW``.  Stage 2 (K2 = L and K2 = 16L) runs on the
    diverse decoder of each seed and stage 2 (K2 = L) on the low-K1 one, 8 seeds per family.  A
    seed whose diverse stage 1 fails the premise is left out of both checks (both read that decoder).
    Both stage-1 decoders have 2 layers × ``STAGE1_HEADS`` heads."""
    sz = multimodal_quick(config, "claim4")
    design, L = DESIGNS["claim4"], sz.m1.L
    heads = STAGE1_HEADS
    model = replace(sz.model, heads=heads)
    s1 = {}
    for f in FAMILIES:
        s1[f"diverse_{f}"] = stage1_settings(config, sz, FAMILIES[f], model=model, K1=K1_DIVERSE)
        s1[f"lowK1_{f}"] = stage1_settings(config, sz, FAMILIES[f], model=model, K1=K1_LOW)
    rec1 = _runs(config, "stage1", s1)
    arms = {"diverse_L": ("diverse", L, K1_DIVERSE), "diverse_16L": ("diverse", K2_WIDE * L, K1_DIVERSE),
            "lowK1_L": ("lowK1", L, K1_LOW)}
    s2 = {}
    for f in FAMILIES:
        for name, (s1name, k2, k1) in arms.items():
            # diverse_L is claim 5's base run: evaluated as often as claim 5 needs (finals unchanged)
            train = _transition(sz.stage2) if name == "diverse_L" else sz.stage2
            s2[f"{name}_{f}"] = _stage2_settings(s1[f"{s1name}_{f}"], _arm(sz, k2, k1), train)
    rec2 = _runs(config, "stage2", s2)
    runs = arm_results(rec2)

    def final(metric, arm, f):
        return runs[f"{arm}_{f}"].final(metric, f"K2={arms[arm][1]}")

    seeds = family_seeds()
    ok = {f: stage1_premise(rec1[f"diverse_{f}"]["result"]["final"]) for f in FAMILIES}
    hyps = base_hypotheses(config) + [premise(f"{design.premises[0]} [diverse stage 1, K1 = {K1_DIVERSE}, 2 layers × "
                                          f"{heads} heads]", ok, seeds)]
    checks = []
    for c in design.checks:
        diffs, ses = {}, {}
        for f in FAMILIES:
            a, b = final(c.metric, c.a, f), final(c.metric, c.b, f)
            diffs[f], ses[f] = (a - b)[ok[f]], accuracy_difference_se(a, b, EVAL_SIZE)[ok[f]]
        checks.append(decide_check(c, diffs, ses, ACC_SE))
    every = {arm: np.concatenate([final("acc_icl_m2only", arm, f) for f in FAMILIES]) for arm in arms}
    confounded = {arm: np.concatenate([final("acc_icl", arm, f) for f in FAMILIES]) for arm in arms}
    s1_icl = {k: np.concatenate([np.asarray(rec1[f"{k}_{f}"]["result"]["final"]["acc_icl"], float) for f in FAMILIES])
              for k in ("diverse", "lowK1")}
    _result(config, "claim4", rec1, rec2, heads=heads, copy_baseline=sz.m1.B / sz.m1.N, K1={"diverse": K1_DIVERSE,
            "lowK1": K1_LOW}, K2={arm: v[1] for arm, v in arms.items()},
            premise={f: ok[f].tolist() for f in FAMILIES},
            stage1={name: _stage1_table(r["result"]["final"]) for name, r in rec1.items()},
            tables={name: r.table(ARM_METRICS) for name, r in runs.items()},
            checks_detail={c.name: c.detail for c in checks})
    numbers = {f"ICL_M2necessary_{arm}": float(v.mean()) for arm, v in every.items()}
    numbers |= {f"ICL_confounded_{arm}": float(v.mean()) for arm, v in confounded.items()}
    numbers |= {f"stage1_ICL_{k}": float(v.mean()) for k, v in s1_icl.items()}
    numbers |= {f"premise_seeds_{f}": int(ok[f].sum()) for f in FAMILIES}
    atol = {f"ICL_M2necessary_{arm}": mean_atol(v, EVAL_SIZE) for arm, v in every.items()}
    atol |= {f"ICL_confounded_{arm}": mean_atol(v, EVAL_SIZE) for arm, v in confounded.items()}
    atol |= {f"stage1_ICL_{k}": mean_atol(v, EVAL_SIZE) for k, v in s1_icl.items()}
    atol |= {f"premise_seeds_{f}": float(len(FAMILIES[f])) for f in FAMILIES}
    numbers |= outcome_words(checks)
    summary = Summary(numbers, atol=atol, why=(
        f"{SAMPLING_WHY}: a mean over the verdict seeds by its se over seeds (at least the binomial se on "
        f"{EVAL_SIZE} sequences); the count of seeds meeting the premise by the family's size (each seed is a "
        "fresh draw on another machine); the verdicts are text"))
    return hyps, checks, summary, []


# ---- claim 5 -------------------------------------------------------------------------------------------
def claim5(config):
    """A larger decoder learns multimodal ICL faster (``DESIGNS["claim5"]``): 2-layer base, 4-layer at
    the same width, 4-layer at the base's parameter count (``width_matching_parameters``).  Each has
    a diverse stage 1 (K1 = ``K1_DIVERSE``) and a stage 2 at K2 = L evaluated every
    ``EVAL_EVERY_TRANSITION`` steps.  Decided per seed on the area under the stage-2 curve of
    M2-necessary ICL (``area_under``), with the evaluation se bound ``area_under_se``.  A seed is left out of
    a check when either decoder's stage 1 fails claim 4's premise.  Every shape has
    ``STAGE1_HEADS`` heads per layer (the base is claim 4's diverse decoder)."""
    sz = multimodal_quick(config, "claim5")
    design, L = DESIGNS["claim5"], sz.m1.L
    base = stage1_ape_slots(replace(sz.model, heads=STAGE1_HEADS), replace(sz.m1, K=K1_DIVERSE))
    w_eq = width_matching_parameters(base, sz.deep_layers, sz.m1.D, L)
    shapes = {"base": base, "deep": replace(base, layers=sz.deep_layers),
              "deep_matched": replace(base, layers=sz.deep_layers, width=w_eq)}
    params = {k: decoder_parameters(m, sz.m1.D, L) for k, m in shapes.items()}
    s1 = {f"{k}_{f}": stage1_settings(config, sz, FAMILIES[f], model=m, K1=K1_DIVERSE) for k, m in shapes.items() for f in FAMILIES}
    rec1 = _runs(config, "stage1", s1)
    arm = _arm(sz, L)
    s2 = {name: _stage2_settings(s, arm, _transition(sz.stage2)) for name, s in s1.items()}
    rec2 = _runs(config, "stage2", s2)
    runs = arm_results(rec2)
    seeds = family_seeds()
    ok = {k: {f: stage1_premise(rec1[f"{k}_{f}"]["result"]["final"]) for f in FAMILIES} for k in shapes}
    hyps = base_hypotheses(config) + [
        premise(f"{design.premises[0]}: the {k} decoder ({shapes[k].layers} layers, width {shapes[k].width}): "
                 f"{DESIGNS['claim4'].premises[0]}", ok[k], seeds) for k in shapes]
    auc = {n: r.area_under("acc_icl_m2only", arm.name) for n, r in runs.items()}
    se = {n: area_under_se(r.curve("acc_icl_m2only", arm.name), r.steps, EVAL_SIZE) for n, r in runs.items()}
    checks = []
    for c in design.checks:
        diffs, ses = {}, {}
        for f in FAMILIES:
            keep = ok[c.a][f] & ok[c.b][f]
            diffs[f] = (auc[f"{c.a}_{f}"] - auc[f"{c.b}_{f}"])[keep]
            ses[f] = np.sqrt(se[f"{c.a}_{f}"] ** 2 + se[f"{c.b}_{f}"] ** 2)[keep]
        checks.append(decide_check(c, diffs, ses, (
            f"each area's evaluation se bounded by sign_tests.area_under_se (the trapezoid area under the per-evaluation binomial "
            f"se's on {EVAL_SIZE} sequences, which holds however the evaluations correlate), the two arms' bounds "
            "added in quadrature")))
    pooled = {k: {"auc": np.concatenate([auc[f"{k}_{f}"] for f in FAMILIES]),
                  "auc_se": np.concatenate([se[f"{k}_{f}"] for f in FAMILIES]),
                  "final": np.concatenate([runs[f"{k}_{f}"].final("acc_icl_m2only", arm.name) for f in FAMILIES])}
              for k in shapes}
    _result(config, "claim5", rec1, rec2, shapes={k: asdict(m) for k, m in shapes.items()}, parameters=params,
            premise={k: {f: v.tolist() for f, v in ok[k].items()} for k in shapes},
            stage1={name: _stage1_table(r["result"]["final"]) for name, r in rec1.items()},
            auc={n: v.round(5).tolist() for n, v in auc.items()}, auc_se={n: v.round(5).tolist() for n, v in se.items()},
            tables={name: r.table(ARM_METRICS) for name, r in runs.items()},
            curves={name: {"steps": r.steps,
                           "acc_icl_m2only": r.curve("acc_icl_m2only", arm.name).round(4).T.tolist()}
                    for name, r in runs.items()},
            checks_detail={c.name: c.detail for c in checks})
    numbers, atol = {}, {}
    for k, v in pooled.items():
        numbers[f"AUC_ICL_M2necessary_{k}"] = float(v["auc"].mean())
        # an area is a weighted mean of accuracies on EVAL_SIZE items: at least its own evaluation se
        atol[f"AUC_ICL_M2necessary_{k}"] = max(mean_atol(v["auc"]), sampling_atol(float(v["auc_se"].mean())))
        numbers[f"final_ICL_M2necessary_{k}"] = float(v["final"].mean())
        atol[f"final_ICL_M2necessary_{k}"] = mean_atol(v["final"], EVAL_SIZE)
    numbers |= {f"parameters_{k}": v for k, v in params.items()} | {"width_deep_matched": w_eq}
    atol |= {f"parameters_{k}": EXACT for k in params} | {"width_deep_matched": EXACT}
    numbers |= outcome_words(checks)
    summary = Summary(numbers, atol=atol, why=(
        f"{SAMPLING_WHY}: a mean over the verdict seeds by its se over seeds (a final accuracy at least the binomial "
        f"se on {EVAL_SIZE} sequences, an area at least its auc_se); parameter counts and widths exact (settings); "
        "the verdicts are text"))
    return hyps, checks, summary, []


# ---- claim 9 -------------------------------------------------------------------------------------------
CHANGE_METRICS = ("induction_change_top_minus_control", "prev_token_change")


def claim9(config):
    """Stage 2 refines the induction head and the previous-token head stays (``DESIGNS["claim9"]``).

    Per family, a diverse stage 1 on a 2-layer × ``CLAIM9_HEADS``-head decoder (``CLAIM9_HEADS``),
    then two stage-2 runs on it at K2 = L: ``frozen`` (attention frozen, as published) and
    ``unfrozen`` (every weight trainable at ``UNFROZEN_LR`` × stage 2's rate).  The two share, per
    seed, the stage-1 decoder, the M2 tables, the training stream and the multimodal evaluation
    sequences, and each ends with the analysis ``CLAIM9_ANALYSIS`` (every head's score with its
    per-sequence sd).  The heads come from the stage-1 decoder's own unimodal scores
    (``select_heads``).  Per seed, change(x) = score_unfrozen(x) − score_frozen(x) at the end of
    stage 2: the frozen arm is the control for the change of layout (unimodal to multimodal).  The
    checks read ``induction_change_top_minus_control`` (change(top) − change(control)) and
    ``prev_token_change`` (change(prev)) with the se bounds of ``change_se``.  The raw stage-1 →
    stage-2 changes of both arms (stage-2 multimodal score minus the stage-1 unimodal one) are
    reported beside them, not decided."""
    sz = multimodal_quick(config, "claim9")
    design = DESIGNS["claim9"]
    if CLAIM9_HEADS < 2:
        raise TestbedConfigError(f"claim 9 needs ≥ 2 heads per layer for a same-layer control head, got "
                                 f"CLAIM9_HEADS = {CLAIM9_HEADS}: set it to 4 (claim 8's shape)")
    model = replace(sz.model, heads=CLAIM9_HEADS)
    s1 = {f: stage1_settings(config, sz, FAMILIES[f], model=model, K1=K1_DIVERSE) for f in FAMILIES}
    rec1 = _runs(config, "stage1", s1)
    arm = _arm(sz, sz.m1.L)
    arms = {"frozen": (sz.stage2, "projector+readout"),
            "unfrozen": (replace(sz.stage2, lr=sz.stage2.lr * UNFROZEN_LR), "all")}
    s2 = {f"{a}_{f}": {**_stage2_settings(s1[f], arm, train, trainable), "analysis": dict(CLAIM9_ANALYSIS)}
          for a, (train, trainable) in arms.items() for f in FAMILIES}
    rec2 = _runs(config, "stage2", s2)
    runs = arm_results(rec2)
    seeds = family_seeds()
    ok = {f: stage1_premise(rec1[f]["result"]["final"]) for f in FAMILIES}
    hyps = base_hypotheses(config) + [premise(
        f"{design.premises[0]}: {DESIGNS['claim4'].premises[0]} [the 2-layer × {CLAIM9_HEADS}-head decoder]",
        ok, seeds)]
    before = {f: {m: np.asarray(rec1[f]["result"]["final"][m], float) for m in ("induction", "prev_token")}
              for f in FAMILIES}
    heads = {f: select_heads(before[f]["induction"], before[f]["prev_token"]) for f in FAMILIES}
    spread = {name: r["result"]["analysis"] for name, r in rec2.items()}
    n_seq = {int(v["n"]) for v in spread.values()}
    if n_seq != {EVAL_SIZE}:
        raise RuntimeError(f"claim 9's stage-2 runs scored the heads on {sorted(n_seq)} sequences, not {EVAL_SIZE}")
    n = EVAL_SIZE
    after = {name: {m: np.asarray(v[m], float) for m in ("induction", "prev_token")} for name, v in spread.items()}
    sd = {name: {m: np.asarray(v[f"{m}_sd"], float) for m in ("induction", "prev_token")} for name, v in spread.items()}
    raw = {f"{a}_{f}": head_changes(heads[f], after[f"{a}_{f}"], before[f]) for a in arms for f in FAMILIES}
    why = {"induction_change_top_minus_control": (
               f"empirical: each score a mean over the same {n} multimodal ICL sequences of a per-sequence value, "
               "whose sample sd each stage-2 run records per head; change(top) − change(control) has four "
               "per-sequence terms (top and control head, unfrozen and frozen arm), so by the triangle inequality "
               "se ≤ (sd_top,unfrozen + sd_top,frozen + sd_control,unfrozen + sd_control,frozen)/√n, with no "
               "assumption about how the terms correlate (change_se)"),
           "prev_token_change": (
               f"empirical: each score a mean over the same {n} multimodal ICL sequences of a per-sequence value; "
               "a difference of two such means has se ≤ (sd_prev,unfrozen + sd_prev,frozen)/√n by the triangle "
               "inequality, with no assumption about how the two correlate (change_se)")}
    checks, change, ses = [], {}, {}
    for c in design.checks:
        diffs, sef = {}, {}
        for f in FAMILIES:
            a, b = f"{c.a}_{f}", f"{c.b}_{f}"
            change[a, b] = head_changes(heads[f], after[a], after[b])
            ses[a, b] = change_se(heads[f], sd[a], sd[b], n)
            diffs[f], sef[f] = change[a, b][c.metric][ok[f]], ses[a, b][c.metric][ok[f]]
        checks.append(decide_check(c, diffs, sef, why[c.metric]))
    c0 = design.checks[0]                                    # both checks read unfrozen − frozen
    ab = {f: (f"{c0.a}_{f}", f"{c0.b}_{f}") for f in FAMILIES}
    induction_min = {"stage1": np.concatenate([before[f]["induction"].reshape(len(seeds[f]), -1).min(1)
                                               for f in FAMILIES])}
    induction_min |= {a: np.concatenate([after[f"{a}_{f}"]["induction"].reshape(len(seeds[f]), -1).min(1)
                                         for f in FAMILIES]) for a in arms}
    icl = {a: np.concatenate([runs[f"{a}_{f}"].final("acc_icl_m2only", arm.name) for f in FAMILIES]) for a in arms}
    pooled = {m: np.concatenate([change[ab[f]][m] for f in FAMILIES]) for m in CHANGE_METRICS}
    pooled_se = {m: np.concatenate([ses[ab[f]][m] for f in FAMILIES]) for m in CHANGE_METRICS}
    pooled_raw = {(a, m): np.concatenate([raw[f"{a}_{f}"][m] for f in FAMILIES]) for a in arms for m in CHANGE_METRICS}
    _result(config, "claim9", rec1, rec2, heads=CLAIM9_HEADS, unfrozen_lr=sz.stage2.lr * UNFROZEN_LR,
            premise={f: ok[f].tolist() for f in FAMILIES},
            selected={f: {k: v.tolist() for k, v in h.items()} for f, h in heads.items()},
            head_scores={"stage1": {f: {m: v.round(4).tolist() for m, v in b.items()} for f, b in before.items()},
                         **{name: {m: v.round(4).tolist() for m, v in s.items()} for name, s in after.items()}},
            head_sd={"n": n, "ddof": 1, **{name: {m: v.round(4).tolist() for m, v in s.items()}
                                          for name, s in sd.items()}},
            changes={f"{a} − {b}": {m: np.round(v, 4).tolist() for m, v in d.items()} for (a, b), d in change.items()},
            change_se={f"{a} − {b}": {m: np.round(v, 4).tolist() for m, v in d.items()} for (a, b), d in ses.items()},
            raw_changes={f"{name} − stage1": {m: np.round(v, 4).tolist() for m, v in d.items()}
                         for name, d in raw.items()},
            induction_min={k: v.round(4).tolist() for k, v in induction_min.items()},
            tables={name: r.table(ARM_METRICS) for name, r in runs.items()},
            checks_detail={c.name: c.detail for c in checks})
    numbers, atol = {}, {}
    for m, v in pooled.items():
        numbers[f"{m}_unfrozen_minus_frozen"] = float(np.nanmean(v))
        atol[f"{m}_unfrozen_minus_frozen"] = mean_atol(v[np.isfinite(v)])
        numbers[f"{m}_se_bound"] = float(np.nanmean(pooled_se[m]))
        atol[f"{m}_se_bound"] = mean_atol(pooled_se[m][np.isfinite(pooled_se[m])])
    for (a, m), v in pooled_raw.items():
        numbers[f"raw_{m}_{a}_minus_stage1"] = float(np.nanmean(v))
        atol[f"raw_{m}_{a}_minus_stage1"] = mean_atol(v[np.isfinite(v)])
    for k, v in induction_min.items():
        numbers[f"induction_min_{k}"] = float(v.mean())
        atol[f"induction_min_{k}"] = mean_atol(v)
    for a, v in icl.items():
        numbers[f"ICL_M2necessary_{a}"] = float(v.mean())
        atol[f"ICL_M2necessary_{a}"] = mean_atol(v, EVAL_SIZE)
    numbers |= outcome_words(checks)
    summary = Summary(numbers, atol=atol, why=(
        f"{SAMPLING_WHY}: a mean over the verdict seeds by its se over seeds (accuracies at least the binomial se on "
        f"{EVAL_SIZE} sequences; attention scores, their changes and their se bounds without a floor); the "
        "verdicts are text"))
    return hyps, checks, summary, []
