"""Claims 4, 5 and 9 of the testbed, version 4: what stage 2 of the multimodal protocol transfers and
refines (``design.DESIGNS``).

Stage 1 trains a decoder on M1 alone (bursty).  Stage 2 freezes the decoder's blocks and trains a
projector of M2, plus the final norm and the readout (claim 9's unfrozen arm trains every weight).
Each stage-1 and stage-2 training is a run of the results store ``OUT/testbed/runs`` (the kinds
``stage1`` and ``stage2`` of ``numerics.runs``; ``common.run_specs``), so a killed claim resumes where
it stopped, and runs with the same settings are trained once for all three claims: the version-4
decoders (``v4_decoders``, ``v4_stage1_settings``) and stage-2 runs (``v4_stage2_settings``) are one
table, from which each claim takes what it reads.  Claim 4's diverse decoder is claim 5's base and
claim 9's decoder, and its ``diverse_L`` stage 2 is claim 5's base run and claim 9's frozen arm.

**Size** (``v4_size``, ``sizes.multimodal_v4``): M1 with N = 8 context pairs of one class each (copy
baseline 1/8), the 2 layers × 4 heads decoder, the piloted stage-1 steps, an M2 with class-free
distractor coordinates so that a random projector does not already solve it, stage 2 for 2000 steps
evaluated every ``EVAL_EVERY_V4`` steps; every evaluation set has ``EVAL_SIZE`` sequences.  The
no-stage-2 baseline of a run is its evaluation at step 0 (``no_stage2``): the decoder with stage 2's
initial projector.

**Seeds and pairing.**  Each version-4 family (``design.FAMILY_SETS[4]``, each with its own data seed)
is one ensemble per stage-1 setting, its 8 seeds the members.  Every stage-2 run is one arm on those
members, so two arms of a check share, per seed, the stage-1 decoder (where the design says so), the
M2 tables, the training stream and the evaluation sets.

**Standard errors of one seed's difference** (what ``decide_check`` resolves a seed against):

- an accuracy difference: ``accuracy_difference_se`` (binomial over EVAL_SIZE items; conservative
  when both arms are scored on the same items);
- a difference of areas under accuracy curves (claim 5): ``sign_tests.area_under_se`` of each arm,
  added in quadrature.  ``area_under_se`` bounds an area's evaluation se without any assumption
  about how the evaluations of one curve correlate;
- attention scores (claim 9): a head's score is the mean over the n multimodal ICL sequences of a
  per-sequence value, and both arms score the same sequences, so a change is the mean of per-sequence
  differences with se sd(d)/√n (``paired_head_changes``); version 3's unpaired bound
  (``change_se``: (sd_a + sd_b)/√n by the triangle inequality) is reported beside it.

Quick size only (``TestbedConfigError`` otherwise).  The settings that DESIGNS leaves to the code
are fixed here: ``K1_DIVERSE``, ``K1_LOW``, ``K2_WIDE``, ``UNFROZEN_LR``; claim 9's heads come from
``select_heads`` and ``non_induction_control``.  Version 3's code of these claims is retired
(``docs/records/testbed-transfer-v3.md``); ``STAGE1_HEADS`` stays for claims 6 and 7, still on
version 3.  Each claim returns ``(hypotheses, checks, Summary, figures)``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, replace

import numpy as np

from mmicl.numerics.testbed.config import MultimodalConfig, stage1_ape_slots
from mmicl.numerics.testbed.model import decoder_parameters, width_matching_parameters
from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, arm_to_json
from mmicl.numerics.testbed.sign_tests import accuracy_difference_se, area_under_se

from ..number_tolerances import EXACT, SAMPLING_WHY, sampling_atol
from .common import (arm_results, base_hypotheses, decide_check, family_seeds, headroom, mean_atol, mean_entry, pooled, premise,
                     premise_summary, run_specs, stage1_premise, stage1_settings, write_result)
from .design import DESIGNS, EVAL_SIZE, FAMILY_SETS, data_seed
from .pilots import PILOTED
from .sizes import MultimodalSizes, multimodal_v4, scope
from .unimodal import INDUCTION_HEAD

__all__ = ["claim4", "claim5", "claim9", "K1_DIVERSE", "K1_LOW", "K2_WIDE", "STAGE1_HEADS", "UNFROZEN_LR",
           "V4_ANALYSIS", "V4_STAGE2", "v4_stage2_settings", "no_stage2", "must_learn", "area_headroom", "CLAIM5_DECODERS", "ARM_METRICS", "select_heads", "head_changes", "change_se", "CHANGE_METRICS",
           "non_induction_control", "paired_head_changes", "v4_size", "V4_DECODERS", "v4_decoders", "v4_stage1_settings"]

K1_DIVERSE = 16384
"""Claim 4's diverse stage 1 (M1's K): the claims 4, 5 and 9 decoders."""
K1_LOW = 64
"""Claim 4's control stage 1: K1 = 64, the in-weights regime (the unimodal claims' K_lo)."""
K2_WIDE = 16
"""Claim 4's second M2 arm: K2 = K2_WIDE · L."""
STAGE1_HEADS = PILOTED["stage1"]["heads"]
"""Version 3's stage-1 decoders (claims 6 and 7, still on version 3) have 2 layers × this many heads
(width 32), trained for the quick stage 1's 5000 steps: the stage-1 pilot's choice
(``pilots.STAGE1_RULE``)."""
UNFROZEN_LR = 0.1
"""Claim 9's unfrozen stage 2 trains every weight at this fraction of stage 2's learning rate."""
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
    per head are ``sd_a`` / ``sd_b`` (``induction_sd``, ``prev_token_sd``: version 3 read them from ``head_score_spread``,
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


def _runs(config, kind: str, settings: dict[str, dict]) -> dict[str, dict]:
    """Each named ``kind`` run through the store (``common.run_specs``): the finished record of each."""
    return run_specs(config, {name: (kind, s) for name, s in settings.items()})


def _result(config, name: str, records1: dict[str, dict], records2: dict[str, dict], scope: str | None = None,
            **extra) -> None:
    write_result(config, name, {
        "code": "proofs/claims/testbed/transfer.py", "store": "runs/ beside this file",
        "run_keys": {"stage1": {k: r["key"] for k, r in records1.items()},
                     "stage2": {k: r["key"] for k, r in records2.items()}},
        "seconds": {"stage1": {k: r["provenance"]["seconds"] for k, r in records1.items()},
                    "stage2": {k: r["provenance"]["seconds"] for k, r in records2.items()}}, **extra}, scope=scope)


def _stage1_table(final: dict) -> dict:
    acc = np.asarray(final["acc_icl"], float)
    ind = np.asarray(final["induction"], float).reshape(acc.size, -1)
    return {"acc_icl": acc.round(4).tolist(), "induction_max": ind.max(1).round(4).tolist(),
            "induction_min": ind.min(1).round(4).tolist(),
            "prev_token_max": np.asarray(final["prev_token"], float).reshape(acc.size, -1).max(1).round(4).tolist()}


# ---- version 4's stage-2 runs ----------------------------------------------------------------------------
V4_ANALYSIS = {"name": "head_score_sequences"}
"""What claim 9's two stage-2 runs analyse at their end: every head's induction and previous-token value
on each multimodal ICL sequence (``numerics.runs.kinds.multimodal.head_score_sequences``), so that the
two arms' scores pair by sequence."""


def _v4_stage2_table(sz: MultimodalSizes) -> dict[str, tuple]:
    """Each version-4 stage-2 run as (decoder, K2, training, trainable, analysis)."""
    L = sz.m1.L
    frozen = "projector+readout"
    return {"diverse_L": ("diverse", L, sz.stage2, frozen, V4_ANALYSIS),     # claim 4, claim 5's base, claim 9's frozen
            "diverse_16L": ("diverse", K2_WIDE * L, sz.stage2, frozen, None),
            "lowK1_L": ("lowK1", L, sz.stage2, frozen, None),
            "deep_L": ("deep", L, sz.stage2, frozen, None),
            "deep_matched_L": ("deep_matched", L, sz.stage2, frozen, None),
            "unfrozen_L": ("diverse", L, replace(sz.stage2, lr=sz.stage2.lr * UNFROZEN_LR), "all", V4_ANALYSIS)}


V4_STAGE2 = ("diverse_L", "diverse_16L", "lowK1_L", "deep_L", "deep_matched_L", "unfrozen_L")
"""The version-4 stage-2 runs of claims 4, 5 and 9 (``v4_stage2_settings``)."""


def v4_stage2_settings(config, sz: MultimodalSizes, runs=V4_STAGE2) -> dict[str, dict]:
    """``{"<run>_<family>": stage2 settings}`` of the version-4 stage-2 runs named in ``runs``: each on
    its decoder's stage-1 run (``v4_stage1_settings``), one arm (K2 M2 classes), 2000 steps evaluated
    every ``EVAL_EVERY_V4``; ``diverse_L`` is claim 4's arm, claim 5's base and claim 9's frozen arm,
    ``unfrozen_L`` claim 9's unfrozen arm (every weight trainable at ``UNFROZEN_LR`` × the rate)."""
    table, shapes = _v4_stage2_table(sz), v4_decoders(sz)
    s1 = v4_stage1_settings(config, sz)
    out = {}
    for name in runs:
        decoder, K2, train, trainable, analysis = table[name]
        for f in FAMILY_SETS[4]:
            s = _stage2_settings(s1[f"{decoder}_{f}"], _arm(sz, K2, shapes[decoder][1]), train, trainable)
            if analysis is not None:
                s["analysis"] = dict(analysis)
            out[f"{name}_{f}"] = s
    return out


def _v4_records(config, sz, decoders, runs) -> tuple[dict, dict]:
    """The finished stage-1 and stage-2 records of the named version-4 decoders and runs."""
    return (_runs(config, "stage1", v4_stage1_settings(config, sz, decoders)),
            _runs(config, "stage2", v4_stage2_settings(config, sz, runs)))


def _arm_name(sz, run: str) -> str:
    return f"K2={_v4_stage2_table(sz)[run][1]}"


def no_stage2(r, metric: str, arm: str) -> np.ndarray:
    """Per seed, a stage-2 run's ``metric`` before any stage-2 step: its evaluation at step 0, the
    decoder with stage 2's initial (random) projector (a ``RuntimeError`` when step 0 is not evaluated)."""
    if not len(r.steps) or r.steps[0] != 0:
        raise RuntimeError(f"this stage-2 run was not evaluated at step 0 (its first evaluation is at "
                           f"{r.steps[0] if len(r.steps) else None}): its no-stage-2 baseline is unknown")
    return np.asarray(r.curve(metric, arm)[0], float)


def must_learn(before, copy: float) -> np.ndarray:
    """Per seed, version 4's premise "stage 2 has to learn M2": M2-necessary ICL before stage 2 is at
    most B/N + 0.10 (``pilots.V4_DISTRACTOR_RULE``'s level (a))."""
    return np.asarray(before, float) <= copy + 0.10


def area_headroom(auc, se, margin: float) -> np.ndarray:
    """Per seed, whether an area under an accuracy curve leaves room for an effect of ``margin``: auc +
    margin + 2 se < 1 (``se`` the area's evaluation se bound), the area's form of ``common.headroom``
    (claims 5 and 7, version 4)."""
    return np.asarray(auc, float) + float(margin) + 2 * np.asarray(se, float) < 1.0


def _stage1_ok(rec1: dict, decoder: str) -> dict[str, np.ndarray]:
    return {f: stage1_premise(rec1[f"{decoder}_{f}"]["result"]["final"]) for f in FAMILY_SETS[4]}


# ---- claim 4 -------------------------------------------------------------------------------------------
def claim4(config):
    """Few M2 classes suffice after diverse M1 pretraining (``DESIGNS["claim4"]``, version 4).  Per
    family: the diverse and the low-K1 stage 1; stage 2 at K2 = L and 16L on the diverse decoder and
    at K2 = L on the low-K1 one.  Premises per seed: the diverse stage 1 (claim 4's stage-1 premise);
    stage 2 has to learn M2 (``must_learn`` on the diverse_L run's step 0); headroom of the low-K1
    arm for the first check (``common.headroom`` at its margin).  A seed failing a premise is left out
    of the checks that need it: the first two of both checks, the third of the first."""
    sz = v4_size(config, "claim4")
    design = DESIGNS["claim4"]
    runs_ = ("diverse_L", "diverse_16L", "lowK1_L")
    rec1, rec2 = _v4_records(config, sz, ("diverse", "lowK1"), runs_)
    runs = arm_results(rec2)
    fams = FAMILY_SETS[4]
    seeds = family_seeds("claim4")
    copy = sz.m1.B / sz.m1.N

    def final(metric, run, f):
        return runs[f"{run}_{f}"].final(metric, _arm_name(sz, run))

    before = {run: {f: no_stage2(runs[f"{run}_{f}"], "acc_icl_m2only", _arm_name(sz, run)) for f in fams}
              for run in runs_}
    c1, c2 = design.checks
    ok = _stage1_ok(rec1, "diverse")
    learn = {f: must_learn(before["diverse_L"][f], copy) for f in fams}
    room = {f: headroom(final(c1.metric, c1.b, f), c1.margin) for f in fams}
    hyps = base_hypotheses(config) + [
        premise(f"{design.premises[0]} [diverse stage 1, K1 = {K1_DIVERSE}, 2 layers × {sz.model.heads} heads]", ok,
                seeds),
        premise(f"{design.premises[1]} (B/N + 0.10 = {copy + 0.10:.3f})", learn, seeds),
        premise(f"{design.premises[2]} (se binomial on {EVAL_SIZE} sequences; needed by '{c1.name}')", room, seeds)]
    checks = []
    for c, keep in ((c1, {f: ok[f] & learn[f] & room[f] for f in fams}), (c2, {f: ok[f] & learn[f] for f in fams})):
        diffs, ses = {}, {}
        for f in fams:
            a, b = final(c.metric, c.a, f), final(c.metric, c.b, f)
            diffs[f], ses[f] = (a - b)[keep[f]], accuracy_difference_se(a, b, EVAL_SIZE)[keep[f]]
        checks.append(decide_check(c, diffs, ses, ACC_SE))
    every = {run: pooled({f: final("acc_icl_m2only", run, f) for f in fams}) for run in runs_}
    confounded = {run: pooled({f: final("acc_icl", run, f) for f in fams}) for run in runs_}
    baseline = {run: pooled(v) for run, v in before.items()}
    s1_icl = {k: pooled({f: rec1[f"{k}_{f}"]["result"]["final"]["acc_icl"] for f in fams}) for k in ("diverse", "lowK1")}
    _result(config, "claim4", rec1, rec2, scope=scope(sz), copy_baseline=copy, K1={"diverse": K1_DIVERSE, "lowK1": K1_LOW},
            K2={run: _v4_stage2_table(sz)[run][1] for run in runs_}, m2=asdict(sz.m2),
            premise={"stage1": {f: v.tolist() for f, v in ok.items()},
                     "must_learn": {f: v.tolist() for f, v in learn.items()},
                     "headroom_lowK1_L": {f: v.tolist() for f, v in room.items()}},
            no_stage2={run: {f: v.tolist() for f, v in b.items()} for run, b in before.items()},
            stage1={name: _stage1_table(r["result"]["final"]) for name, r in rec1.items()},
            tables={name: r.table(ARM_METRICS) for name, r in runs.items()},
            checks_detail={c.name: c.detail for c in checks})
    numbers, atol = {}, {}
    for group, values in (("ICL_M2necessary", every), ("ICL_confounded", confounded), ("no_stage2_ICL_M2necessary",
                                                                                         baseline)):
        for run, v in values.items():
            mean_entry(numbers, atol, f"{group}_{run}", v, EVAL_SIZE)
    for k, v in s1_icl.items():
        mean_entry(numbers, atol, f"stage1_ICL_{k}", v, EVAL_SIZE)
    summary = premise_summary(numbers, atol, {"stage1": ok, "must_learn": learn, "headroom": room}, checks, why=(
        f"{SAMPLING_WHY}: a mean over the verdict seeds by its se over seeds (at least the binomial se on "
        f"{EVAL_SIZE} sequences); the count of seeds meeting a premise by the family's size (each seed is a "
        "fresh draw on another machine); the verdicts are text"))
    return hyps, checks, summary, []


# ---- claim 5 -------------------------------------------------------------------------------------------
CLAIM5_DECODERS = {"base": ("diverse", "diverse_L"), "deep": ("deep", "deep_L"),
                   "deep_matched": ("deep_matched", "deep_matched_L")}
"""Claim 5's arms: (version-4 decoder, its stage-2 run); the base is claim 4's diverse decoder and run."""


def claim5(config):
    """A larger decoder learns multimodal ICL faster (``DESIGNS["claim5"]``, version 4): the 2-layer
    base, 4 layers at the same width and 4 layers at the base's parameter count
    (``width_matching_parameters``), each a diverse stage 1 and a stage 2 at K2 = L evaluated every
    ``EVAL_EVERY_V4`` steps.  Decided per seed on the area under the stage-2 curve of M2-necessary ICL
    (``area_under``) with the evaluation se bound ``area_under_se``.  Premises per seed: each
    decoder's stage 1; stage 2 has to learn M2 (the base's step 0, ``must_learn``); the base's
    headroom, area + margin + 2 se < 1.  A seed is left out of a check when either decoder's stage 1
    fails, or the base fails the other two."""
    sz = v4_size(config, "claim5")
    design = DESIGNS["claim5"]
    shapes = {k: v4_decoders(sz)[d][0] for k, (d, _) in CLAIM5_DECODERS.items()}
    params = {k: decoder_parameters(m, sz.m1.D, sz.m1.L) for k, m in shapes.items()}
    rec1, rec2 = _v4_records(config, sz, tuple(d for d, _ in CLAIM5_DECODERS.values()),
                             tuple(r for _, r in CLAIM5_DECODERS.values()))
    runs = arm_results(rec2)
    fams = FAMILY_SETS[4]
    seeds = family_seeds("claim5")
    copy = sz.m1.B / sz.m1.N
    arm = _arm_name(sz, "diverse_L")
    run = {(k, f): runs[f"{r}_{f}"] for k, (_, r) in CLAIM5_DECODERS.items() for f in fams}
    auc = {(k, f): r.area_under("acc_icl_m2only", arm) for (k, f), r in run.items()}
    se = {(k, f): area_under_se(r.curve("acc_icl_m2only", arm), r.steps, EVAL_SIZE) for (k, f), r in run.items()}
    before = {(k, f): no_stage2(r, "acc_icl_m2only", arm) for (k, f), r in run.items()}
    margin = design.checks[0].margin
    ok = {k: _stage1_ok(rec1, d) for k, (d, _) in CLAIM5_DECODERS.items()}
    learn = {f: must_learn(before["base", f], copy) for f in fams}
    room = {f: area_headroom(auc["base", f], se["base", f], margin) for f in fams}
    hyps = base_hypotheses(config) + [
        premise(f"{design.premises[0]}: the {k} decoder ({shapes[k].layers} layers, width {shapes[k].width}): "
                f"{DESIGNS['claim4'].premises[0]}", ok[k], seeds) for k in shapes]
    hyps += [premise(f"{design.premises[1]} (B/N + 0.10 = {copy + 0.10:.3f})", learn, seeds),
             premise(f"{design.premises[2]} (margin {margin:g})", room, seeds)]
    checks = []
    for c in design.checks:
        diffs, ses = {}, {}
        for f in fams:
            keep = ok[c.a][f] & ok[c.b][f] & learn[f] & room[f]
            diffs[f] = (auc[c.a, f] - auc[c.b, f])[keep]
            ses[f] = np.sqrt(se[c.a, f] ** 2 + se[c.b, f] ** 2)[keep]
        checks.append(decide_check(c, diffs, ses, (
            f"each area's evaluation se bounded by sign_tests.area_under_se (the trapezoid area under the per-evaluation "
            f"binomial se's on {EVAL_SIZE} sequences, which holds however the evaluations correlate), the two arms' "
            "bounds added in quadrature")))
    by_decoder = {k: {"auc": pooled({f: auc[k, f] for f in fams}), "auc_se": pooled({f: se[k, f] for f in fams}),
                  "final": pooled({f: run[k, f].final("acc_icl_m2only", arm) for f in fams}),
                  "no_stage2": pooled({f: before[k, f] for f in fams})} for k in shapes}
    _result(config, "claim5", rec1, rec2, scope=scope(sz), shapes={k: asdict(m) for k, m in shapes.items()}, parameters=params,
            copy_baseline=copy, m2=asdict(sz.m2),
            premise={"stage1": {k: {f: v.tolist() for f, v in ok[k].items()} for k in shapes},
                     "must_learn": {f: v.tolist() for f, v in learn.items()},
                     "headroom_base": {f: v.tolist() for f, v in room.items()}},
            stage1={name: _stage1_table(r["result"]["final"]) for name, r in rec1.items()},
            auc={f"{k}_{f}": v.round(5).tolist() for (k, f), v in auc.items()},
            auc_se={f"{k}_{f}": v.round(5).tolist() for (k, f), v in se.items()},
            no_stage2={f"{k}_{f}": v.tolist() for (k, f), v in before.items()},
            tables={name: r.table(ARM_METRICS) for name, r in runs.items()},
            curves={f"{k}_{f}": {"steps": r.steps, "acc_icl_m2only": r.curve("acc_icl_m2only", arm).round(4).T.tolist()}
                    for (k, f), r in run.items()},
            checks_detail={c.name: c.detail for c in checks})
    numbers, atol = {}, {}
    for k, v in by_decoder.items():
        numbers[f"AUC_ICL_M2necessary_{k}"] = float(v["auc"].mean())
        # an area is a weighted mean of accuracies on EVAL_SIZE items: at least its own evaluation se
        atol[f"AUC_ICL_M2necessary_{k}"] = max(mean_atol(v["auc"]), sampling_atol(float(v["auc_se"].mean())))
        for name in ("final", "no_stage2"):
            mean_entry(numbers, atol, f"{name}_ICL_M2necessary_{k}", v[name], EVAL_SIZE)
    numbers |= {f"parameters_{k}": v for k, v in params.items()} | {"width_deep_matched": shapes["deep_matched"].width}
    atol |= {f"parameters_{k}": EXACT for k in params} | {"width_deep_matched": EXACT}
    summary = premise_summary(numbers, atol, {"headroom": room}, checks, why=(
        f"{SAMPLING_WHY}: a mean over the verdict seeds by its se over seeds (a final accuracy at least the binomial "
        f"se on {EVAL_SIZE} sequences, an area at least its auc_se); parameter counts and widths exact (settings); "
        "a count of seeds by the family's size; the verdicts are text"))
    return hyps, checks, summary, []


# ---- claim 9 -------------------------------------------------------------------------------------------
CHANGE_METRICS = ("induction_change_top", "induction_change_top_minus_control", "prev_token_change")


def _per_sequence(record: dict) -> dict[str, np.ndarray]:
    """A claim-9 stage-2 run's per-sequence head scores (E, n, layers, H) from its ``V4_ANALYSIS``."""
    a = record["result"]["analysis"]
    return {m: np.asarray(a[f"{m}_per_sequence"], float) for m in ("induction", "prev_token")}


def claim9(config):
    """Stage 2 refines the induction head and the previous-token head stays (``DESIGNS["claim9"]``,
    version 4).  Per family, claim 4's diverse decoder (2 layers × 4 heads) and two stage-2 runs on it
    at K2 = L: ``frozen`` (claim 4's diverse_L run: attention frozen, as published) and ``unfrozen``
    (every weight trainable at ``UNFROZEN_LR`` × the rate).  They share, per seed, the stage-1 decoder,
    the M2 tables, the training stream and the multimodal evaluation sequences, and each ends with
    ``V4_ANALYSIS`` (every head's value on every sequence).  The heads come from the stage-1 decoder's
    own unimodal scores: ``select_heads``'s top and previous-token heads and ``non_induction_control``
    (score ≤ ``INDUCTION_HEAD``).  Per seed, change(x) = score_unfrozen(x) − score_frozen(x), paired by
    sequence with its se (``paired_head_changes``).  Version 3's unpaired bound (``change_se``) and the
    raw stage-1 → stage-2 changes of both arms are reported beside them, not decided."""
    sz = v4_size(config, "claim9")
    design = DESIGNS["claim9"]
    arms = {"frozen": "diverse_L", "unfrozen": "unfrozen_L"}
    rec1, rec2 = _v4_records(config, sz, ("diverse",), tuple(arms.values()))
    runs = arm_results(rec2)
    fams = FAMILY_SETS[4]
    seeds = family_seeds("claim9")
    arm = _arm_name(sz, "diverse_L")
    ok = _stage1_ok(rec1, "diverse")
    stage1 = {f: {m: np.asarray(rec1[f"diverse_{f}"]["result"]["final"][m], float) for m in ("induction", "prev_token")}
              for f in fams}
    heads = {}
    for f in fams:
        heads[f] = select_heads(stage1[f]["induction"], stage1[f]["prev_token"])
        heads[f]["control"] = non_induction_control(stage1[f]["induction"], heads[f]["top"], INDUCTION_HEAD)
    has_control = {f: heads[f]["control"][:, 0] >= 0 for f in fams}
    hyps = base_hypotheses(config) + [
        premise(f"{design.premises[0]}: {DESIGNS['claim4'].premises[0]} [the 2-layer × {sz.model.heads}-head diverse decoder]",
                ok, seeds),
        premise(design.premises[1], has_control, seeds)]
    seq = {(a, f): _per_sequence(rec2[f"{r}_{f}"]) for a, r in arms.items() for f in fams}
    n_seq = {int(rec2[f"{r}_{f}"]["result"]["analysis"]["n"]) for r in arms.values() for f in fams}
    if n_seq != {EVAL_SIZE}:
        raise RuntimeError(f"claim 9's stage-2 runs scored the heads on {sorted(n_seq)} sequences, not {EVAL_SIZE}")
    paired = {f: paired_head_changes(heads[f], seq["unfrozen", f], seq["frozen", f]) for f in fams}
    means = {(a, f): {m: v.mean(1) for m, v in seq[a, f].items()} for a in arms for f in fams}
    sds = {(a, f): {m: v.std(1, ddof=1) for m, v in seq[a, f].items()} for a in arms for f in fams}
    unpaired = {f: change_se(heads[f], sds["unfrozen", f], sds["frozen", f], EVAL_SIZE) for f in fams}
    raw = {(a, f): head_changes(heads[f], means[a, f], stage1[f]) for a in arms for f in fams}
    why = (f"paired by sequence: each score a mean over the same {EVAL_SIZE} multimodal ICL sequences, in both arms, "
           "of a per-sequence value; the change's se is the sample sd of the per-sequence differences over √n "
           "(paired_head_changes), the top-minus-control change's that of the differences of the two heads' "
           "differences")
    checks = []
    for c in design.checks:
        needs_control = "control" in c.metric
        diffs, ses = {}, {}
        for f in fams:
            keep = ok[f] & (has_control[f] if needs_control else True)
            diffs[f], ses[f] = paired[f][c.metric][keep], paired[f][f"{c.metric}_se"][keep]
        checks.append(decide_check(c, diffs, ses, why))
    icl = {a: pooled({f: runs[f"{r}_{f}"].final("acc_icl_m2only", arm) for f in fams}) for a, r in arms.items()}
    icl["no_stage2"] = pooled({f: no_stage2(runs[f"diverse_L_{f}"], "acc_icl_m2only", arm) for f in fams})
    changes = {m: pooled({f: paired[f][m] for f in fams}) for m in CHANGE_METRICS}
    pooled_se = {m: pooled({f: paired[f][f"{m}_se"] for f in fams}) for m in CHANGE_METRICS}
    _result(config, "claim9", rec1, rec2, scope=scope(sz), unfrozen_lr=sz.stage2.lr * UNFROZEN_LR, control_threshold=INDUCTION_HEAD,
            premise={"stage1": {f: v.tolist() for f, v in ok.items()},
                     "has_control": {f: v.tolist() for f, v in has_control.items()}},
            selected={f: {k: v.tolist() for k, v in h.items()} for f, h in heads.items()},
            head_scores={"stage1": {f: {m: v.round(4).tolist() for m, v in s.items()} for f, s in stage1.items()},
                         **{f"{a}_{f}": {m: v.round(4).tolist() for m, v in s.items()} for (a, f), s in means.items()}},
            paired_changes={f: {k: np.round(v, 5).tolist() for k, v in p.items()} for f, p in paired.items()},
            unpaired_se_bound={f: {k: np.round(v, 5).tolist() for k, v in u.items()} for f, u in unpaired.items()},
            raw_changes={f"{a}_{f} − stage1": {m: np.round(v, 4).tolist() for m, v in d.items()}
                         for (a, f), d in raw.items()},
            icl_m2only={k: v.tolist() for k, v in icl.items()},
            tables={name: r.table(ARM_METRICS) for name, r in runs.items()},
            checks_detail={c.name: c.detail for c in checks})
    numbers, atol = {}, {}
    for m, v in changes.items():
        fin, s = v[np.isfinite(v)], pooled_se[m][np.isfinite(pooled_se[m])]
        if fin.size:        # absent when no seed has the head (a control): nothing to average
            mean_entry(numbers, atol, f"{m}_unfrozen_minus_frozen", fin)
            mean_entry(numbers, atol, f"{m}_paired_se", s)
    for a in arms:
        for m in ("induction_change_top", "prev_token_change"):
            v = pooled({f: raw[a, f][m] for f in fams})
            mean_entry(numbers, atol, f"raw_{m}_{a}_minus_stage1", v)
    for k, v in icl.items():
        mean_entry(numbers, atol, f"ICL_M2necessary_{k}", v, EVAL_SIZE)
    summary = premise_summary(numbers, atol, {"has_control": has_control}, checks, why=(
        f"{SAMPLING_WHY}: a mean over the verdict seeds by its se over seeds (accuracies at least the binomial se on "
        f"{EVAL_SIZE} sequences; attention scores, their changes and their se's without a floor); a count of seeds by the family's size; the verdicts are text"))
    return hyps, checks, summary, []
