"""Claims 6 (early fusion) and 7 (encoder quality) of the testbed: which modality a multimodal model
follows, and what a better M2 encoder buys (``design.DESIGNS["claim6"]``, ``["claim7"]``; the decision:
``common.decide_check``).

**Claim 6** (version 4).  Four arms on each verdict seed at version 4's size (``transfer.v4_size``:
N = 8 pairs of one class each, the 2 layers × 4 heads decoder, M2 with distractor coordinates), M2 at
the piloted K2: early fusion (decoder and projector from scratch, the piloted steps) in three layouts
(``LAYOUTS6``) and staged training (version 4's diverse stage 1, shared with claims 4, 5 and 9, then
a stage 2 with the decoder's blocks frozen) in ``readout_last`` ([M1_i, M2_i, y_i] … [M1_q, M2_q, R],
R a learned readout token).  The layouts separate what version 3 could not:

- ``readout_last``: M2 is next to the label in the context, and the query keeps that order, so M2_q is
  also next to R;
- ``readout_last_m2_first``: M1 is next to the label (and M1_q next to R): a fusion that follows M2
  here follows the modality, not adjacency;
- ``readout_last_query_reversed``: M2 next to the label in the context, M1_q next to R in the query:
  label adjacency and readout adjacency differ.

Per seed and arm, the preference on the conflict set (the query's items point to different context
labels) is ``follow_adjacent_minus_other`` (label-adjacent minus other) or, for the staged arm,
``follow_m1_minus_m2``; a one-arm check reads it against 0, the corroborating check fusion − staged,
each with the multinomial se of ``follow_difference_se``.  The premise per seed and arm is "does
multimodal ICL": confounded ICL above B/N + ``pilots.V4_ICL_PLUS`` + 2 se (``common.above_copy``);
fusion's K2 and steps come from ``pilots.V4_CLAIM6_RULE``.  Version 3's claim 6 (one layout, fusion −
staged): ``docs/records/testbed-claim6-v3.md``.

**Claim 7** (version 4).  Four arms per seed: stage 2 on version 4's diverse decoder (shared with
claims 4, 5, 6 and 9) on the known-class M2-necessary set of version 4's claim-7 M2
(``pilots.v4_claim7_m2``: K2 = 64, ε2 = 1, with the distractors), with an M2 encoder pretrained for
the piloted step counts (``pilots.V4_CLAIM7_RULE``), its features standardised per member on a
reference batch (``MultimodalArm.standardise_features``), evaluated every ``EVAL_EVERY7`` steps on
``EVAL_SIZE7`` items (only the set the claim reads, ``EVAL_ON7``).  Per seed: the least-squares slope
of AUC (``area_under`` of ``acc_icl_m2known`` over stage 2) on the dose's encoder held-out accuracy,
with its se propagated from the per-dose se's (``sign_tests.slope_and_se``; the AUC's se by the bound of
``auc_and_se``); the decisive check reads slope × the seed's span of accuracy (the AUC the doses'
span buys) against 0.05, the corroborating one the slope's sign.  Premises per seed: the doses span
≥ ``SPAN`` of accuracy; claim 4's stage-1 premise (``STAGE1_PREMISE``); the lowest dose's AUC leaves
room for the margin (the ceiling check).

Both run at the quick size only, on version 4's families (``design.FAMILY_SETS[4]``, 8 + 8 seeds, each
family with its own data seed), through the results store
``OUT/testbed/runs`` (run kinds ``stage1``, ``stage2``, ``fusion``), so a killed claim resumes.
"""
from __future__ import annotations

import math
from dataclasses import asdict, replace

import numpy as np

from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm
from mmicl.numerics.testbed.multimodal_metrics import follow_adjacent_minus_other
from mmicl.numerics.testbed.multimodal_model import adjacent_modality
from mmicl.numerics.testbed.sign_tests import area_under_se, binomial_se, slope_and_se, trapezoid_weights

from ..number_tolerances import EXACT, SAMPLING_WHY, sampling_atol
from .common import (above_copy, arm_json, arm_results, base_hypotheses, copy_level, decide_check, family_seeds,
                     mean_entry, mean_se, multimodal_data, pooled, premise, premise_summary, run_specs,
                     stage1_premise, write_result)
from .design import DESIGNS, EVAL_SIZE, FAMILY_SETS, data_seed
from .pilots import PILOTED, V4_ICL_PLUS, v4_claim6_settings, v4_claim7_m2
from .sizes import scope
from .transfer import area_headroom, v4_size, v4_stage1_settings

__all__ = ["claim6", "claim7", "LAYOUT6", "LAYOUTS6", "SPAN", "STAGE1_PREMISE", "EVAL_SIZE7", "EVAL_ON7", "EVAL_EVERY7", "claim6_arm",
           "fusion_spec", "follow_difference_se", "auc_and_se"]

LAYOUT6 = "readout_last"
"""Claim 6's layout: the readout token after both query items, M2 next to the label."""
SPAN = 0.3
"""Claim 7's premise: the doses' encoder accuracies span at least this on the seed."""
STAGE1_PREMISE = "the seed's stage-1 decoder does ICL on M1 (≥ 0.95) with an induction head (score > 0.3)"
"""Claim 4's stage-1 premise, also claims 6's and 7's (``DESIGNS[...].premises``):
both claims' staged arms start from the seed's stage-1 decoder, and on version 3's claim-7 feasibility run of
the pilot seeds one of four (9001) had stage-1 ICL 0.65 after 5000 steps and a stage-2 AUC of 0.34
against 0.75-0.87 for the others: a seed without the mechanism says nothing about what stage 2 does
with it.  Seeds that fail it are left out of the checks, and it counts like the design's premises."""
EVAL_SIZE7 = 8192
"""Claim 7's stage-2 evaluation size.  Version 3's pilot seeds at ``EVAL_SIZE`` = 1024 had per-seed
slopes with se 0.024-0.033; 8 × the items divides the se by √8.  At version 4's doses (accuracies
about 0.17-0.80, Sxx ≈ 0.21) and an AUC se of about 0.005 per dose at 8192 items, the slope's se is
about 0.011 and the gain over a 0.6 span about 0.007, so a seed resolves against the 0.05 margin at a
gain above about 0.064."""
EVAL_ON7 = ("icl_m2known",)
"""The one evaluation set claim 7 reads (its AUC and final ICL); the encoder's accuracy is measured
apart.  Measuring only it skips six of the seven sets' forward passes on ``EVAL_SIZE7`` items at
each of the 61 evaluations, the bulk of the claim's cost, and changes none of its numbers
(``evaluate_multimodal``'s ``eval_on``)."""



def claim6_arm(sz, K2: int, layout: str = LAYOUT6):
    """Claim 6's arm in ``layout`` (named by it): the multimodal data of ``sz`` with M2 at ``K2`` classes
    (the pilot's and the claim's, so that both train the same thing)."""
    return MultimodalArm(layout, multimodal_data(sz, layout=layout, m2=replace(sz.m2, K=K2)))


def fusion_spec(config, sz, arm, seeds, steps: int, heads: int, data_seed: int | None = None) -> tuple[str, dict]:
    """The ``fusion`` run of one seed family: ``sz``'s decoder with ``heads`` heads per layer,
    trained from scratch for ``steps`` steps on ``arm``'s data (``sz``'s stage-1 optimiser,
    evaluated on ``EVAL_SIZE`` items every 250 steps), its data stream ``data_seed`` (the run's
    ``--seed`` by default; a version-4 family's own, ``design.data_seed``)."""
    train = replace(sz.stage1, steps=int(steps), eval_size=EVAL_SIZE)
    return ("fusion", {"model": asdict(replace(sz.model, heads=int(heads))), "m1": asdict(sz.m1),
                       "arms": [arm_json(arm)], "seeds": list(seeds), "train": asdict(train),
                       "device": config.device, "data_seed": int(config.seed if data_seed is None else data_seed)})


# ---- standard errors ------------------------------------------------------------------------
def follow_difference_se(adj_a, oth_a, adj_b, oth_b, n_eval: int) -> np.ndarray:
    """se of (adj_a − oth_a) − (adj_b − oth_b), follow rates of two arms on ``n_eval`` conflict items.
    Per item a prediction follows the adjacent modality, the other, or neither (the two pointed
    labels differ), so X = 1[adjacent] − 1[other] ∈ {−1, 0, 1} has variance p_adj + p_oth −
    (p_adj − p_oth)² exactly (≤ 1); the two arms' items taken as independent, which over-states the
    noise when both err on the same items (as ``accuracy_difference_se``)."""
    def var(adj, oth):
        adj, oth = np.asarray(adj, float), np.asarray(oth, float)
        return np.clip(adj + oth - (adj - oth) ** 2, 0.0, None)

    return np.sqrt((var(adj_a, oth_a) + var(adj_b, oth_b)) / int(n_eval))


def auc_and_se(steps, curve, n_eval: int) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the normalised area under an accuracy curve (``experiments.area_under``: trapezoid
    weights w_t ≥ 0, Σ w_t = 1) and a bound on its evaluation se.  The curve is measured on one fixed
    evaluation set, so its points share their items and are correlated; whatever their correlation,
    Var(Σ w_t a_t) ≤ (Σ w_t sd_t)² (Cauchy–Schwarz), so se ≤ Σ_t w_t √(a_t(1 − a_t)/n) — the se if
    every evaluation were perfectly correlated, which is never less than the true one and never more
    than √(AUC(1 − AUC)/n) (concavity).  ``curve``: (evaluations, seeds) accuracies at ``steps``."""
    x = np.asarray(steps, float)
    y = np.asarray(curve, float)
    if y.ndim != 2 or y.shape[0] != x.size:
        raise ValueError(f"curve must be (evaluations, seeds) with {x.size} evaluations, got {y.shape}")
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    return trapezoid_weights(x) @ y, area_under_se(np.clip(y, 0.0, 1.0), x, int(n_eval))


def _listed(a) -> list:
    """An array as a JSON list, non-finite values (a slope without spread in x) as None."""
    return [float(v) if math.isfinite(v) else None for v in np.asarray(a, float).ravel()]


# ---- running through the store ----------------------------------------------------------------
def _stage1_premise(records: dict, seeds: dict):
    ok = {f: stage1_premise(records[f"stage1_{f}"]["result"]["final"]) for f in seeds}
    return ok, premise(STAGE1_PREMISE, ok, seeds)


# ---- claim 6 ------------------------------------------------------------------------------------
LAYOUTS6 = {"fusion_readout": "readout_last", "fusion_swapped": "readout_last_m2_first",
            "fusion_reversed": "readout_last_query_reversed"}
"""Claim 6's fusion arms (version 4) and their layouts: M2 next to the label; M1 next to it; M2 next to
the label in the context with the query's order reversed (M1_q next to the readout token)."""


def _follow(rates: dict[str, np.ndarray], metric: str, layout: str) -> np.ndarray:
    """An arm's per-seed conflict preference ``metric``: ``follow_adjacent_minus_other`` (the modality
    next to the label in ``layout``'s context minus the other) or ``follow_m1_minus_m2``."""
    if metric == "follow_m1_minus_m2":
        return rates["m1"] - rates["m2"]
    return follow_adjacent_minus_other({f"conflict_follow_{m}": v for m, v in rates.items()}, layout)


def _follow_rates_se(rates_a: dict, rates_b: dict | None, metric: str, layout_a: str, n: int) -> np.ndarray:
    """The se of one arm's preference (``rates_b`` None: B is "zero") or of a difference of two arms'
    (``follow_difference_se``; both arms' preferences read the same modalities' order)."""
    first = "m1" if metric == "follow_m1_minus_m2" else adjacent_modality(layout_a)
    second = "m2" if first == "m1" else "m1"
    zero = np.zeros_like(rates_a["m1"])
    rb = rates_b or {"m1": zero, "m2": zero}
    return follow_difference_se(rates_a[first], rates_a[second], rb[first], rb[second], n)


def claim6(config):
    """After early fusion the label-adjacent modality is followed on conflicts in every layout, and
    staged training prefers M1 (``DESIGNS["claim6"]``, version 4; module docstring).  Fusion trains the
    2 layers × 4 heads decoder and M2's projector from scratch in the three ``LAYOUTS6``; the staged arm
    is version 4's diverse stage 1 (``transfer.v4_stage1_settings``, shared with claims 4, 5 and 9)
    with a stage 2 in ``readout_last``; fusion's K2 and steps are the pilot's
    (``pilots.V4_CLAIM6_RULE``).  Premise per seed and arm: confounded ICL above B/N +
    ``pilots.V4_ICL_PLUS`` + 2 se (``common.above_copy``); a seed is left out of a check when an arm it
    reads fails it (or, for the staged arm, its stage 1 fails claim 4's stage-1 premise)."""
    sz = v4_size(config, "claim6")
    if "v4_claim6" not in PILOTED:
        raise TestbedConfigError("testbed.claim6 (version 4) reads fusion's K2 and steps from its pilot, which has not "
                                 "chosen them yet: run python studies/pilot_v4_claim6.py and record its choice in "
                                 "pilots.PILOTED['v4_claim6']")
    chosen = PILOTED["v4_claim6"]
    K2, fusion_steps = v4_claim6_settings(chosen)
    settings, exact = {"K2": K2, "fusion_steps": fusion_steps}, {"K2": EXACT, "fusion_steps": EXACT}
    design = DESIGNS["claim6"]
    fams = FAMILY_SETS[4]
    seeds = family_seeds("claim6")
    arms = {name: claim6_arm(sz, K2, layout) for name, layout in LAYOUTS6.items()}
    staged = claim6_arm(sz, K2, "readout_last")
    s1 = v4_stage1_settings(config, sz, ("diverse",))
    specs = {}
    for f, fam in fams.items():
        specs[f"stage1_{f}"] = ("stage1", s1[f"diverse_{f}"])
        specs[f"staged_readout_{f}"] = ("stage2", {"stage1": s1[f"diverse_{f}"], "arms": [arm_json(staged)],
                                                   "train": asdict(sz.stage2), "trainable": sz.trainable})
        for name, arm in arms.items():
            specs[f"{name}_{f}"] = fusion_spec(config, sz, arm, fam.seeds, fusion_steps, sz.model.heads,
                                               data_seed=data_seed(config.seed, fam))
    records = run_specs(config, specs)
    runs = arm_results({k: r for k, r in records.items() if not k.startswith("stage1")})
    copy = sz.m1.B / sz.m1.N
    level = copy_level(copy, EVAL_SIZE, plus=V4_ICL_PLUS)
    layout = {**LAYOUTS6, "staged_readout": "readout_last"}
    arm_of = {**{n: a.name for n, a in arms.items()}, "staged_readout": staged.name}

    def final(metric, name, f):
        return runs[f"{name}_{f}"].final(metric, arm_of[name])

    learns = {name: {f: above_copy(final("acc_icl", name, f), copy, EVAL_SIZE, plus=V4_ICL_PLUS) for f in fams}
              for name in layout}
    s1_ok = {f: stage1_premise(records[f"stage1_{f}"]["result"]["final"]) for f in fams}
    hyps = base_hypotheses(config)
    for name in layout:
        hyps.append(premise(f"{design.premises[0]} [{name}, layout {layout[name]}] (level {level:.4f}, se binomial at "
                            f"B/N + {V4_ICL_PLUS:g} on {EVAL_SIZE} items)", learns[name], seeds))
    hyps.append(premise(design.premises[1], s1_ok, seeds))
    rates = {(name, f): {m: final(f"conflict_follow_{m}", name, f) for m in ("m1", "m2")} for name in layout for f in fams}
    checks, prefs = [], {}
    for c in design.checks:
        diffs, ses = {}, {}
        for f in fams:
            keep = learns[c.a][f] & (s1_ok[f] if c.a == "staged_readout" else True)
            a = _follow(rates[c.a, f], c.metric, layout[c.a])
            if c.b == "zero":
                d, se = a, _follow_rates_se(rates[c.a, f], None, c.metric, layout[c.a], EVAL_SIZE)
            else:
                keep = keep & learns[c.b][f] & (s1_ok[f] if c.b == "staged_readout" else True)
                d = a - _follow(rates[c.b, f], c.metric, layout[c.b])
                se = _follow_rates_se(rates[c.a, f], rates[c.b, f], c.metric, layout[c.a], EVAL_SIZE)
            diffs[f], ses[f] = d[keep], se[keep]
            prefs[f"{c.metric}_{c.a}_{f}"] = a.tolist()
        checks.append(decide_check(c, diffs, ses, (
            f"multinomial per conflict item (follows one modality, the other, or neither), {EVAL_SIZE} items per arm, "
            "arms independent (follow_difference_se)")))
    for c in checks:
        c.numbers |= settings
        c.atol |= exact
    # the reversed-query arm's rate of following the modality next to the readout (M1_q there): reported
    readout_follow = {f: rates["fusion_reversed", f]["m1"].tolist() for f in fams}
    icl = {(m, name): pooled({f: final(m, name, f) for f in fams}) for m in ("acc_icl", "acc_icl_m1only",
                                                                             "acc_icl_m2only") for name in layout}
    write_result(config, "claim6", {
        "piloted": chosen, "layouts": layout, "heads": sz.model.heads, "copy_baseline": copy, "premise_level": level,
        "m2": asdict(sz.m2), "preferences": prefs,
        "conflict_follow": {f"{name}_{f}": {m: v.tolist() for m, v in r.items()} for (name, f), r in rates.items()},
        "reversed_follows_readout_adjacent_m1": readout_follow,
        "premise": {name: {f: v.tolist() for f, v in d.items()} for name, d in learns.items()},
        "stage1_premise": {f: v.tolist() for f, v in s1_ok.items()},
        "stage1_icl": {f: records[f"stage1_{f}"]["result"]["final"]["acc_icl"] for f in fams},
        "tables": {k: r.table(("acc_icl", "acc_icl_m2only", "acc_icl_m1only", "conflict_follow_m1",
                               "conflict_follow_m2")) for k, r in runs.items()},
        "histories": {k: r["result"]["history"] for k, r in records.items() if not k.startswith("stage1")},
        "run_keys": {k: r["key"] for k, r in records.items()},
        "seconds": {k: r["provenance"]["seconds"] for k, r in records.items()}}, scope=scope(sz))
    numbers, atol = dict(settings), dict(exact)
    for (m, name), v in icl.items():
        mean_entry(numbers, atol, f"{m}_{name}", v, EVAL_SIZE)
    for name in layout:
        for m in ("m1", "m2"):
            v = pooled({f: rates[name, f][m] for f in fams})
            mean_entry(numbers, atol, f"conflict_follow_{m}_{name}", v, EVAL_SIZE)
    summary = premise_summary(numbers, atol, {f"icl_{name}": learns[name] for name in layout}, checks, why=(
        f"the piloted K2 and steps (settings) exact; {SAMPLING_WHY}: a mean over the seeds of both families by its se "
        f"over seeds, at least the binomial se on {EVAL_SIZE} items; a count of seeds by the family's size; the "
        "outcomes are text"))
    return hyps, checks, summary, []


# ---- claim 7 ------------------------------------------------------------------------------------
EVAL_EVERY7 = 100
"""Claim 7's stage-2 evaluation interval (version 4): 21 evaluations of ``EVAL_SIZE7`` items over the
2000 steps of one set, a fourteenth of the forward passes that every 50 steps on all seven sets would
cost."""


def claim7(config, eval_size: int | None = None):
    """A better M2 encoder gives better multimodal ICL (``DESIGNS["claim7"]``, version 4; module
    docstring): per seed, the least-squares slope of the stage-2 AUC of known-class M2-necessary ICL on
    encoder accuracy over four doses, read as the AUC gained across the seed's span of accuracy.
    ``eval_size``: the stage-2 evaluation sets' size (the design's ``EVAL_SIZE7`` by default)."""
    n_eval = int(eval_size or EVAL_SIZE7)
    sz = v4_size(config, "claim7")
    chosen = PILOTED["v4_claim7"]
    design, doses = DESIGNS["claim7"], tuple(chosen["encoder_steps"])
    data = multimodal_data(sz, m2=v4_claim7_m2())
    arms = [MultimodalArm(f"dose{k}_steps{s}", data, encoder_steps=s, standardise_features=True)
            for k, s in enumerate(doses)]
    stage2 = replace(sz.stage2, eval_size=n_eval, eval_every=EVAL_EVERY7)
    fams = FAMILY_SETS[4]
    s1 = v4_stage1_settings(config, sz, ("diverse",))
    specs = {}
    for f in fams:
        specs[f"stage1_{f}"] = ("stage1", s1[f"diverse_{f}"])
        specs[f"doses_{f}"] = ("stage2", {"stage1": s1[f"diverse_{f}"], "arms": [arm_json(a) for a in arms],
                                          "train": asdict(stage2), "trainable": sz.trainable, "eval_on": list(EVAL_ON7)})
    records = run_specs(config, specs)
    seeds = family_seeds("claim7")
    x, y, sx, sy, final_icl, before = {}, {}, {}, {}, {}, {}
    for f in fams:
        r = arm_results({"doses": records[f"doses_{f}"]})["doses"]
        x[f] = np.stack([r.final("encoder_acc", a.name) for a in arms]).astype(float)           # (doses, seeds)
        sx[f] = binomial_se(x[f], n_eval)
        auc = [auc_and_se(r.steps, r.curve("acc_icl_m2known", a.name), n_eval) for a in arms]
        y[f], sy[f] = np.stack([a for a, _ in auc]), np.stack([s for _, s in auc])
        final_icl[f] = np.stack([r.final("acc_icl_m2known", a.name) for a in arms]).astype(float)
        if not len(r.steps) or r.steps[0] != 0:
            raise RuntimeError("claim 7's stage-2 runs were not evaluated at step 0: no no-stage-2 baseline")
        before[f] = np.stack([r.curve("acc_icl_m2known", a.name)[0] for a in arms]).astype(float)
    spans = {f: x[f][-1] - x[f][0] for f in fams}
    spread = {f: spans[f] >= SPAN for f in fams}
    c_gain, c_slope = design.checks
    room = {f: area_headroom(y[f][0], sy[f][0], c_gain.margin) for f in fams}      # the lowest dose
    s1_ok, s1_hyp = _stage1_premise(records, seeds)
    hyps = base_hypotheses(config) + [premise(design.premises[0], spread, seeds), s1_hyp,
                                      premise(f"{design.premises[2]} (the AUC's se bound on {n_eval} items)", room, seeds)]
    slope, slope_se = {}, {}
    for f in fams:
        slope[f], slope_se[f] = slope_and_se(x[f], y[f], sx[f], sy[f])
    why = ("propagated from the doses' se's: each AUC's by its bound Σ w_t √(a_t(1−a_t)/n) over the evaluations every "
           f"{EVAL_EVERY7} steps (perfect correlation between evaluations of one fixed set), each encoder accuracy's "
           f"binomial on {n_eval} held-out items (first order); the doses' evaluation sets are independent")
    checks = []
    for c in design.checks:
        diffs, ses = {}, {}
        for f in fams:
            keep = spread[f] & s1_ok[f] & room[f] & np.isfinite(slope[f])
            scale = spans[f] if c.metric == "auc_gain_over_span" else np.ones_like(spans[f])
            diffs[f], ses[f] = (slope[f] * scale)[keep], (slope_se[f] * np.abs(scale))[keep]
        checks.append(decide_check(c, diffs, ses, why + ("; the gain is slope × the seed's span of accuracy, its se "
                                                         "the slope's × the span" if c is c_gain else "")))
    for c in checks:
        c.numbers["encoder_steps"] = list(doses)
        c.atol["encoder_steps"] = EXACT
    write_result(config, "claim7", {
        "piloted": chosen, "stage1_heads": sz.model.heads, "eval_every": EVAL_EVERY7, "m2": asdict(data.m2),
        "features": "standardised per member (mean 0, mean squared norm 1)",
        "encoder_accuracy": {f: v.tolist() for f, v in x.items()},
        "auc_icl_m2known": {f: v.tolist() for f, v in y.items()},
        "auc_se_bound": {f: v.tolist() for f, v in sy.items()},
        "final_icl_m2known": {f: v.tolist() for f, v in final_icl.items()},
        "no_stage2_icl_m2known": {f: v.tolist() for f, v in before.items()},
        "slope": {f: _listed(v) for f, v in slope.items()}, "slope_se": {f: _listed(v) for f, v in slope_se.items()},
        "span": {f: v.tolist() for f, v in spans.items()},
        "premise": {"span": {f: v.tolist() for f, v in spread.items()}, "headroom": {f: v.tolist() for f, v in room.items()}},
        "histories": {k: r["result"]["history"] for k, r in records.items() if not k.startswith("stage1")},
        "stage1_icl": {f: records[f"stage1_{f}"]["result"]["final"]["acc_icl"] for f in fams},
        "stage1_premise": {f: v.tolist() for f, v in s1_ok.items()},
        "run_keys": {k: r["key"] for k, r in records.items()},
        "seconds": {k: r["provenance"]["seconds"] for k, r in records.items()}}, eval_size=n_eval,
        scope=scope(replace(sz, m2=data.m2)))
    allx, ally = (np.concatenate([d[f] for f in fams], 1) for d in (x, y))
    allb, allfin = (np.concatenate([d[f] for f in fams], 1) for d in (before, final_icl))
    n = allx.shape[1]
    numbers = {"encoder_steps": list(doses), "encoder_accuracy_by_dose": allx.mean(1).round(4).tolist(),
               "auc_icl_m2known_by_dose": ally.mean(1).round(4).tolist(),
               "final_icl_m2known_by_dose": allfin.mean(1).round(4).tolist(),
               "no_stage2_icl_m2known_by_dose": allb.mean(1).round(4).tolist()}
    atol = {"encoder_steps": EXACT,
            "encoder_accuracy_by_dose": max(sampling_atol(mean_se(v, n_eval)) for v in allx),
            "auc_icl_m2known_by_dose": max(sampling_atol(max(mean_se(v), 0.5 / math.sqrt(n_eval * n))) for v in ally),
            "final_icl_m2known_by_dose": max(sampling_atol(mean_se(v, n_eval)) for v in allfin),
            "no_stage2_icl_m2known_by_dose": max(sampling_atol(mean_se(v, n_eval)) for v in allb)}
    summary = premise_summary(numbers, atol, {"span": spread, "headroom": room}, checks, why=(
        f"the piloted step counts exact; {SAMPLING_WHY}: a mean over the seeds of both families by its se over seeds (at "
        f"least the binomial se of an accuracy on {n_eval} items, or for an AUC its bound ½/√n per seed), a list by its "
        "largest; a count of seeds by the family's size; the outcomes are text"))
    return hyps, checks, summary, []
