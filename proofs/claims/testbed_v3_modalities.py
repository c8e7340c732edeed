"""Version 3 of testbed claims 6 (early fusion) and 7 (encoder quality), as the registry will run
them (the designs: ``testbed_v3.DESIGNS["claim6"]``, ``["claim7"]``; the decision: ``v3_check``).

**Claim 6.**  Two arms on each verdict seed, in the layout ``readout_last`` ([M1_i, M2_i, y_i] …
[M1_q, M2_q, R], R a learned readout token): early fusion (everything from scratch for the steps of
stage 1 and stage 2 together) and staged (stage 1 on M1, then stage 2 with the decoder's blocks
frozen), at the piloted K2.  Per seed d = follow_adjacent_minus_other(fusion) −
follow_adjacent_minus_other(staged) on the conflict set, with the multinomial se of a difference of
two follow rates (``follow_difference_se``).  Version 3.1 (``VERSIONS``; ``DESIGNS["claim6"].changes``):
both arms' decoders have 2 layers × ``STAGE1_HEADS_V31`` heads (the staged arm's stage 1 is claim
4's version-3.1 one), fusion trains for the piloted steps at the piloted K2 (``choose_claim6_v31``,
``CLAIM6_V31_RULE``; version 3.2 trains fusion for the longest piloted step count,
``CLAIM6_V32_RULE``), and the premise per seed is fusion's ICL on the confounded set above
B/N + 2 se (``above_copy``: se binomial at B/N on ``EVAL_SIZE`` items).  Version 3 (1 head, K2 by
``choose_claim6``, stage 1 + stage 2 steps) required M2-necessary and M1-necessary ICL both above
that level, which excludes a fusion that matches through the label-adjacent M2 alone: the outcome
the claim predicts.

*What the layout separates.*  In ``readout_last`` the readout position is R, not the query's M2 item
as in ``m1_first``, so "M2 is read out last" no longer coincides with "M2 is next to the label".  It
does not separate label adjacency from *readout* adjacency: the query keeps the context's item
order, so the query's M2 item is R's previous token exactly as M2_i is y_i's, and a previous-token +
induction circuit matches through M2 in this layout as it did in ``m1_first``.  A layout whose query
order is reversed ([M1_i, M2_i, y_i] … [M2_q, M1_q, R]) would separate the two; it is proposed in the
report, not implemented (``config.LAYOUTS`` is not this module's to change).

**Claim 7.**  Four arms per seed, stage 2 (known-class M2-necessary set, K2 = ``encoder_K2``, ε2 =
``encoder_eps2``) with an M2 encoder pretrained for the piloted step counts (``choose_claim7``), its
features standardised per member on a reference batch (``MultimodalArm.standardise_features``:
mean 0 per coordinate, mean squared norm 1, the mean squared norm of a raw M2 item; one scale per
member), evaluated every ``EVAL_EVERY_TRANSITION`` steps.  Per seed: the least-squares slope of
AUC (``area_under`` of ``acc_icl_m2known`` over stage 2) on the dose's encoder held-out accuracy,
with its se propagated from the per-dose se's (``slope_and_se``; the AUC's se by the bound of
``auc_and_se``).  Premise per seed: the highest dose's encoder accuracy minus the lowest's ≥ 0.3.
Version 3.1 (``VERSIONS``): the stage-1 decoder has 2 layers × ``STAGE1_HEADS_V31`` heads, claim 4's
version-3.1 stage 1 (``DESIGNS["claim7"].changes``).

Changes to the first designs, made after the pilots and before any verdict run (recorded in
``DESIGNS[...].changes``): claim 7's pilot targets ``ENCODER_TARGETS`` (0.2, 0.4, 0.6, 0.8) instead
of ``FIRST_TARGETS`` (0.4, 0.6, 0.8, 0.95), which the encoder cannot reach; claim 4's stage-1
premise (``STAGE1_PREMISE``) in both claims; and claim 7 evaluated on ``EVAL_SIZE7`` items, since at
``EVAL_SIZE`` almost no seed resolves against its margin (a run on the pilot seeds).

Both run at the quick size only, on ``testbed_v3.FAMILIES`` (8 + 8 seeds), through the results store
``OUT/testbed/runs`` (run kinds ``stage1``, ``stage2``, ``fusion``), so a killed claim resumes.
"""
from __future__ import annotations

import math
from dataclasses import asdict, replace

import numpy as np

from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.testbed.experiments import area_under

from ..claim import Hypothesis, RunConfig, Summary
from .number_tolerances import EXACT, SAMPLING_WHY, sampling_atol
from .testbed_v3 import DESIGNS, EVAL_EVERY_TRANSITION, EVAL_SIZE, FAMILIES, PILOT_SEEDS, outcome_words
from .testbed_v3_claims import _premise, above_copy, copy_level, v3_check

VERSIONS = {"claim6": 3.2, "claim7": 3.1}
"""The version each claim of this module runs (``DESIGNS[...].changes`` says what each changed)."""
PILOTED = {"claim6": {"K2": 1024, "fusion_steps": 13000}, "claim7": {"encoder_steps": (40, 100, 160, 640)}}
"""Settings chosen by the pilot rules on pilot seeds (claim 6's version 3.1 by ``CLAIM6_V31_RULE`` on
``CLAIM6_V31_SEEDS``, ``studies/results/pilot_claim6_v31.json``; claim 7's on ``PILOT_SEEDS``,
``pilot_claim7.json``; version 3 of claim 6 took K2 = 1024 from ``pilot_claim6.json``): a test checks
that each file gives this choice by its rule."""
PILOTED_V3 = {"claim6": {"K2": 1024}}
"""What version 3 of claim 6 ran on (its verdict run is committed beside the later versions')."""
PILOTED_V31 = {"claim6": {"K2": 1024, "fusion_steps": 6500}}
"""What version 3.1 of claim 6 ran on (``CLAIM6_V31_RULE``; version 3.2 keeps its K2 and takes
``CLAIM6_V32_RULE``'s steps)."""

LAYOUT6 = "readout_last"
"""Claim 6's layout: the readout token after both query items, M2 next to the label."""
K2_GRID6 = (256, 1024, 4096)
ICL_LEVEL = 0.9
"""Claim 6's pilot: a unimodal K is at or above the ICL threshold when the pilot median final ICL
is ≥ this (claim 3's K_thr rule)."""
ENCODER_STEP_GRID = (0, 10, 20, 30, 40, 60, 80, 100, 120, 140, 160, 200, 240, 320, 480, 640, 960, 1280, 1920, 2560)
"""Claim 7's pilot: the pretraining step counts tried."""
FIRST_TARGETS = (0.4, 0.6, 0.8, 0.95)
"""The first design's targets (replaced: ``DESIGNS["claim7"].changes``)."""
ENCODER_TARGETS = (0.2, 0.4, 0.6, 0.8)
"""The design's targets (``DESIGNS["claim7"].pilot_rule``).  At the claim's M2
(K2 = 64, D2 = 16, ε2 = 1) the encoder's accuracy tops out near 0.83 (the pilot's best median, at
2560 steps), so the design's 0.95 picks the longest pretraining, 0.02 of accuracy above the 0.8
dose: two doses at one accuracy, a span of 0.39.  Targets inside the attainable range space the
four doses evenly over 0.6 of accuracy, which shrinks the slope's se by √(Sxx ratio) ≈ 1.4 and
keeps the doses off the ceiling."""
SPAN = 0.3
"""Claim 7's premise: the doses' encoder accuracies span at least this on the seed."""
STAGE1_PREMISE = "the seed's stage-1 decoder does ICL on M1 (≥ 0.95) with an induction head (score > 0.3)"
"""Claim 4's stage-1 premise, also claims 6's and 7's (``DESIGNS[...].premises``):
both claims' staged arms start from the seed's stage-1 decoder, and on the claim-7 feasibility run of
the pilot seeds one of four (9001) had stage-1 ICL 0.65 after 5000 steps and a stage-2 AUC of 0.34
against 0.75-0.87 for the others: a seed without the mechanism says nothing about what stage 2 does
with it.  Seeds that fail it are left out of the checks, and it counts like the design's premises."""
EVAL_SIZE7 = 8192
"""Claim 7's stage-2 evaluation size (``DESIGNS["claim7"].pilot_rule``): on the pilot seeds at
``EVAL_SIZE`` = 1024 the per-seed slopes were 0.03-0.11 with se 0.024-0.033, so almost no seed
resolves against the 0.05 margin (it needs slope > 0.05 + 2 se ≈ 0.11); 8 × the items gives se
≈ 0.01, resolving a seed at slope ≳ 0.07."""
EVAL_ON7 = ("icl_m2known",)
"""The one evaluation set claim 7 reads (its AUC and final ICL); the encoder's accuracy is measured
apart.  Measuring only it skips six of the seven sets' forward passes on ``EVAL_SIZE7`` items at
each of the 61 evaluations, the bulk of the claim's cost, and changes none of its numbers
(``evaluate_multimodal``'s ``eval_on``)."""


FUSION_STEP_GRID = (6500, 9750, 13000)
"""Claim 6's version-3.1 pilot: fusion step counts tried (6500 is version 3's, stage 1 + stage 2)."""
FUSION_K2_GRID = (1024, 4096)
"""Claim 6's version-3.1 pilot: K2 values tried (1024 is version 3's pilot choice, at or above the
unimodal ICL threshold; 4096 is run only if 1024 meets the rule at no step count)."""
CLAIM6_V31_SEEDS = tuple(range(9004, 9012))
"""The pilot seeds of claim 6's version-3.1 pilot (the stage-1 pilot's: no verdict uses them)."""
CLAIM6_V31_RULE = (
    "fusion K2 and steps, on the 2 layers × 4 heads decoder of the version-3.1 stage 1: the smallest K2 of (1024, "
    "4096) at which, at some step count of (6500, 9750, 13000), at least 7 of the 8 pilot seeds (9004–9011) meet "
    "the fusion premise (ICL on the confounded set above B/N + 2 se, se binomial at B/N on 1024 items), and at that "
    "K2 the fewest such steps; read on one 13000-step fusion run per K2 (constant learning rate: the model at step "
    "s is the one an s-step run ends with); K2 = 4096 is run only if K2 = 1024 meets it at no step count; None if "
    "neither does")
"""Claim 6's version-3.1 pilot rule (``choose_claim6_v31``; studies/pilot_claim6_v31.py runs it),
stated and committed before its run.  Why: version 3's 1-head fusion learnt ICL on 4 of 16 verdict
seeds at 6500 steps (the other 12 stayed on the copy plateau), and the 4 that learnt did it through
M2 alone, which version 3's premise (M2- and M1-necessary ICL both above copy) excluded."""
CLAIM6_V32_RULE = (
    "fusion steps: the longest of (6500, 9750, 13000), provided every one of the 8 pilot seeds meets the fusion "
    "premise there, at version 3.1's K2; read on the same pilot run")
"""Claim 6's version-3.2 rule (``choose_claim6_v32``), stated after version 3.1's verdict run and
before version 3.2's.  Version 3.1 took the fewest steps at which 7 of 8 pilot seeds met the premise
(6500); on the verdict seeds fusion escapes the copy plateau later: at 6500 steps 4 of family A's 8
seeds were still on it (ICL 0.48–0.53), against 1 of 8 pilot seeds, so the premise failed in family
A.  Fusion leaves the plateau abruptly at a seed-dependent step (pilot: 3000–9750), so the claim
needs a step count past the slow seeds' escape, not the median's: the longest piloted one."""


# ---- pilot rules ---------------------------------------------------------------------------
def choose_claim6(finals: dict[tuple[str, int], list[float]]) -> dict:
    """Claim 6's pilot rule (``DESIGNS["claim6"].pilot_rule``, made exact in studies/pilot_claim6.toml):
    K2, the smallest K of (256, 1024, 4096) whose unimodal pilot median final ICL (APE, at the
    fusion's step count) is ≥ 0.9 — the smallest grid value at or above the unimodal ICL threshold
    measured as claim 3's K_thr; None where none is (or a run is missing)."""
    def learnt(k):
        r = finals.get(("ape", k))
        return r is not None and float(np.median(r)) >= ICL_LEVEL

    return {"K2": next((k for k in K2_GRID6 if learnt(k)), None),
            "finals": {f"{p} K={k}": v for (p, k), v in sorted(finals.items())}}


def choose_claim6_v31(curves: dict[int, dict]) -> dict:
    """``CLAIM6_V31_RULE`` on the pilot's fusion curves by K2 (each ``{"steps", "acc_icl"
    (evaluations × seeds), "copy"}``): ``{"K2", "fusion_steps"}`` (None, None when no K2 of
    ``FUSION_K2_GRID`` meets it, or the K2 to try next is missing: ``"missing"``), and the seeds
    meeting the premise per K2 and step count."""
    met = {}
    for k2, c in sorted(curves.items()):
        steps = list(c["steps"])
        met[k2] = {s: above_copy(c["acc_icl"][steps.index(s)], c["copy"], EVAL_SIZE).tolist()
                   for s in FUSION_STEP_GRID if s in steps}
    out = {"premise_met": {f"K2={k} steps={s}": m for k, ms in met.items() for s, m in ms.items()},
           "premise_counts": {f"K2={k} steps={s}": int(sum(m)) for k, ms in met.items() for s, m in ms.items()}}
    for k2 in FUSION_K2_GRID:
        if k2 not in met or len(met[k2]) < len(FUSION_STEP_GRID):
            return {"K2": None, "fusion_steps": None, "missing": k2, **out}
        ok = [s for s in FUSION_STEP_GRID if sum(met[k2][s]) >= 7]
        if ok:
            return {"K2": k2, "fusion_steps": ok[0], **out}
    return {"K2": None, "fusion_steps": None, **out}


def choose_claim6_v32(curves: dict[int, dict]) -> dict:
    """``CLAIM6_V32_RULE`` on the pilot's fusion curves by K2 (as ``choose_claim6_v31``): version
    3.1's K2 and the longest grid step count if every pilot seed meets the premise there, else
    ``fusion_steps`` None."""
    v31 = choose_claim6_v31(curves)
    k2, last = v31["K2"], max(FUSION_STEP_GRID)
    met = v31["premise_met"].get(f"K2={k2} steps={last}")
    return {"K2": k2, "fusion_steps": last if met is not None and all(met) else None,
            "version_31": {k: v31[k] for k in ("K2", "fusion_steps")}}


def claim6_arm(sz, K2: int):
    """Claim 6's one arm: the multimodal data in ``LAYOUT6`` with M2 at ``K2`` classes (the pilot's and
    the claim's, so that both train the same thing)."""
    from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm

    from .testbed_multimodal import _mm

    return MultimodalArm(LAYOUT6, _mm(sz, layout=LAYOUT6, m2=replace(sz.m2, K=K2)))


def fusion_spec(config: RunConfig, sz, arm, seeds, steps: int, heads: int) -> tuple[str, dict]:
    """The ``fusion`` run of one seed family: the quick decoder with ``heads`` heads per layer,
    trained from scratch for ``steps`` steps on ``arm``'s data (the quick stage 1's optimiser,
    evaluated on ``EVAL_SIZE`` items every 250 steps)."""
    train = replace(sz.stage1, steps=int(steps), eval_size=EVAL_SIZE)
    return ("fusion", {"model": asdict(replace(sz.model, heads=int(heads))), "m1": asdict(sz.m1),
                       "arms": [_arm_json(arm)], "seeds": list(seeds), "train": asdict(train),
                       "device": config.device, "data_seed": config.seed})


def choose_claim7(accuracy: dict[int, list[float]], targets=None) -> dict:
    """Claim 7's pilot rule: for each target accuracy the pretraining step count whose pilot median
    encoder accuracy is nearest it (a tie: the fewer steps).  ``targets``: the design's (0.4, 0.6,
    0.8) by default (``ENCODER_TARGETS``, ``DESIGNS["claim7"].pilot_rule``; the first design's
    were ``FIRST_TARGETS``).  ``encoder_steps`` is None when two targets pick the same
    count (the grid is too coarse: pilot a finer one)."""
    targets = tuple(ENCODER_TARGETS if targets is None else targets)
    med = {int(s): float(np.median(v)) for s, v in accuracy.items()}
    steps = sorted(med)
    picks = [min(steps, key=lambda s: (abs(med[s] - t), s)) for t in targets]
    ok = len(set(picks)) == len(picks)
    return {"targets": list(targets), "encoder_steps": tuple(sorted(picks)) if ok else None, "picks": picks,
            "medians": {str(s): round(med[s], 6) for s in steps},
            "accuracy": {str(s): [round(float(x), 6) for x in accuracy[s]] for s in steps}}


def encoder_pilot(seeds=PILOT_SEEDS, steps=ENCODER_STEP_GRID, data_seed: int = PILOT_SEEDS[0],
                  device: str = "cpu") -> dict[int, list[float]]:
    """Claim 7's pilot measurement: the held-out accuracy of the M2 encoder after each of ``steps``
    pretraining steps, per seed, exactly as stage 2 trains it (``multimodal_experiments._system``:
    the claim's M2 law at K2 = ``encoder_K2``, ε2 = ``encoder_eps2``, batch and lr of stage 2,
    ``EVAL_SIZE`` held-out items, the stream ``data_seed`` + 77, one member per (step count, seed)
    as a stage-2 grid would hold them)."""
    from mmicl.numerics.testbed.config import MemberSpec
    from mmicl.numerics.testbed.multimodal_data import MultimodalMixture
    from mmicl.numerics.testbed.multimodal_experiments import ENCODER_HIDDEN, MultimodalArm, _members
    from mmicl.numerics.testbed.multimodal_model import EnsembleMLP
    from mmicl.numerics.testbed.multimodal_train import train_encoder

    from .testbed_multimodal import QUICK, _mm

    sz = QUICK
    data = _mm(sz, m2=replace(sz.m2, K=sz.encoder_K2, eps=sz.encoder_eps2))
    arms = [MultimodalArm(f"steps={s}", data, encoder_steps=s) for s in steps]
    members = _members(arms, [MemberSpec(sz.m1, s) for s in seeds])
    mixture = MultimodalMixture(members, device)
    encoder = EnsembleMLP([data.m2.D, *ENCODER_HIDDEN, data.m2.K], [m.seed for m in members], device, salt=2)
    acc = train_encoder(encoder, mixture, [s for s in steps for _ in seeds], batch=sz.stage2.batch,
                        lr=sz.stage2.lr, eval_size=EVAL_SIZE, seed=data_seed + 77)
    n = len(seeds)
    return {int(s): [float(a) for a in acc[i * n:(i + 1) * n]] for i, s in enumerate(steps)}


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
    from mmicl.numerics.testbed.decide_v3 import area_under_se, trapezoid_weights

    x = np.asarray(steps, float)
    y = np.asarray(curve, float)
    if y.ndim != 2 or y.shape[0] != x.size:
        raise ValueError(f"curve must be (evaluations, seeds) with {x.size} evaluations, got {y.shape}")
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    return trapezoid_weights(x) @ y, area_under_se(np.clip(y, 0.0, 1.0), x, int(n_eval))


def slope_and_se(x, y, se_x, se_y) -> tuple[np.ndarray, np.ndarray]:
    """Per seed, the least-squares slope b of y on x over the doses and its se: x, y, se_x, se_y
    (doses, seeds).  b = Σ c_k y_k with c_k = (x_k − x̄)/Sxx, so the doses' independent evaluation
    errors in y give Var = Σ c_k² se_y,k² exactly; the errors in x enter to first order through
    ∂b/∂x_k = (r_k − b(x_k − x̄))/Sxx (r_k the residual), adding Σ (∂b/∂x_k)² se_x,k².  nan where
    the doses' x do not vary."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    se_x, se_y = np.broadcast_to(np.asarray(se_x, float), x.shape), np.broadcast_to(np.asarray(se_y, float), x.shape)
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"x and y must both be (doses, seeds), got {x.shape} and {y.shape}")
    xc, yc = x - x.mean(0), y - y.mean(0)
    sxx = (xc ** 2).sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        b = np.where(sxx > 0, (xc * yc).sum(0) / sxx, np.nan)
        c = xc / sxx
        r = yc - b * xc
        dbdx = (r - b * xc) / sxx
        se = np.sqrt((c ** 2 * se_y ** 2).sum(0) + (dbdx ** 2 * se_x ** 2).sum(0))
    return b, np.where(np.isfinite(b), se, np.nan)


def _listed(a) -> list:
    """An array as a JSON list, non-finite values (a slope without spread in x) as None."""
    return [float(v) if math.isfinite(v) else None for v in np.asarray(a, float).ravel()]


def binomial_se(p, n_eval: int) -> np.ndarray:
    """The binomial se √(p(1 − p)/n) of accuracies ``p`` on ``n_eval`` items."""
    p = np.asarray(p, float)
    return np.sqrt(np.clip(p * (1 - p), 0.0, None) / int(n_eval))


# ---- running through the store ----------------------------------------------------------------
def _quick(config: RunConfig, claim: str):
    from . import testbed_multimodal as tbm

    sz = tbm.sizes(config)
    if sz is not tbm.QUICK:
        raise TestbedConfigError(f"version 3 of testbed.{claim} is piloted at the quick size only: run it with --quick "
                                 f"(the full size needs its own pilot, studies/pilot_{claim}.* at that size)")
    chosen = PILOTED[claim]
    if any(v is None for v in chosen.values()):
        raise TestbedConfigError(f"version 3 of testbed.{claim} has no piloted settings yet: run its pilot "
                                 f"(studies/pilot_{claim}.*) and fill testbed_v3_modalities.PILOTED")
    return sz, chosen


def _stage1(config: RunConfig, sz, seeds, heads: int | None = None) -> dict:
    """The ``stage1`` run settings of one family (the multimodal quick stage 1, evaluated on
    ``EVAL_SIZE`` sequences; with ``heads``, on a decoder with that many heads per layer): the same
    settings are the same run, so claims that share them share it in one store (claim 7's version
    3.1 stage 1 is claim 4's version 3.1 diverse stage 1 and claim 9's)."""
    model = sz.model if heads is None else replace(sz.model, heads=heads)
    return {"model": asdict(model), "data": asdict(sz.m1), "train": asdict(replace(sz.stage1, eval_size=EVAL_SIZE)),
            "seeds": list(seeds), "data_seed": config.seed, "device": config.device}


def _run(config: RunConfig, specs: dict[str, tuple[str, dict]]) -> dict[str, dict]:
    """Run (or read back) every (kind, settings) in the store ``OUT/testbed/runs``, stage-1 runs
    first; the finished record of each, by name."""
    from mmicl.numerics.runs.runner import finished_records, run_pending
    from mmicl.numerics.runs.artifacts import using_store
    from mmicl.numerics.runs.kinds import KINDS
    from mmicl.numerics.runs.spec import RunSpec
    from mmicl.numerics.runs.store import Store
    from .testbed_multimodal import _out

    built = {name: RunSpec(kind, KINDS[kind].normalise(s)) for name, (kind, s) in specs.items()}
    store = Store(_out(config) / "runs")
    with using_store(store):
        for first in (True, False):  # a stage-2 run needs its stage-1 record
            todo = [r for r in built.values() if (r.kind == "stage1") == first]
            if todo:
                run_pending(todo, store, config.scheduler)
    return finished_records(built, store)


def _arm_json(arm) -> dict:
    from mmicl.numerics.testbed.multimodal_experiments import arm_to_json

    return arm_to_json(arm)


def _write(config: RunConfig, name: str, doc: dict) -> None:
    from mmicl.numerics.atomic import write_json

    from .testbed_multimodal import _out

    write_json(_out(config) / f"{name}.json", doc)


def stage1_does_icl(final: dict) -> np.ndarray:
    """Per seed of a stage-1 run's final metrics: ICL ≥ 0.95 and some head's induction score > 0.3
    (``STAGE1_PREMISE``: claim 4's, ``testbed_v3_transfer.stage1_premise``)."""
    from .testbed_v3_transfer import stage1_premise

    return stage1_premise(final)


def _stage1_premise(records: dict, seeds: dict) -> tuple[dict, Hypothesis]:
    ok = {f: stage1_does_icl(records[f"stage1_{f}"]["result"]["final"]) for f in seeds}
    return ok, _premise(STAGE1_PREMISE, ok, seeds)


# ---- claim 6 ------------------------------------------------------------------------------------
def claim6_v3(config: RunConfig):
    """After early fusion the label-adjacent modality is followed on conflicts, more than after
    staged training (``testbed_v3.DESIGNS["claim6"]``; module docstring)."""
    from mmicl.numerics.testbed.multimodal_metrics import follow_adjacent_minus_other
    from mmicl.numerics.runs.runner import stored_arm_results

    from .testbed_multimodal import _hyps
    from .testbed_v3_transfer import STAGE1_HEADS_V31

    sz, chosen = _quick(config, "claim6")
    design, K2 = DESIGNS["claim6"], chosen["K2"]
    arm = claim6_arm(sz, K2)
    stage2 = replace(sz.stage2, eval_size=EVAL_SIZE)
    heads = STAGE1_HEADS_V31  # version 3.1: both arms' decoders 2 layers × 4 heads (DESIGNS["claim6"].changes)
    specs = {}
    for f, seeds in FAMILIES.items():
        s1 = _stage1(config, sz, seeds, heads=heads)
        specs[f"stage1_{f}"] = ("stage1", s1)
        specs[f"staged_readout_{f}"] = ("stage2", {"stage1": s1, "arms": [_arm_json(arm)], "train": asdict(stage2),
                                                   "trainable": sz.trainable})
        specs[f"fusion_readout_{f}"] = fusion_spec(config, sz, arm, seeds, chosen["fusion_steps"], heads)
    records = _run(config, specs)
    runs = {k: stored_arm_results(r) for k, r in records.items() if not k.startswith("stage1")}
    copy = sz.m1.B / sz.m1.N
    level = copy_level(copy, EVAL_SIZE)
    seeds = {f: list(s) for f, s in FAMILIES.items()}

    def final(metric, name):
        return runs[name].final(metric, arm.name)

    # the fusion premise (versions 3.1, 3.2): ICL on the confounded set (both query items of the label's class)
    learns = {f: above_copy(final("acc_icl", f"fusion_readout_{f}"), copy, EVAL_SIZE) for f in FAMILIES}
    hyps = [h for h in _hyps(sz, config) if "seeds per arm" not in h.text]
    hyps.append(_premise(f"{design.premises[0]} (level B/N + 2 se = {level:.4f}, se binomial at B/N on {EVAL_SIZE} "
                         f"items)", learns, seeds))
    s1_ok, s1_hyp = _stage1_premise(records, seeds)
    hyps.append(s1_hyp)
    c = design.checks[0]
    diffs, ses, per_arm = {}, {}, {}
    for f in FAMILIES:
        rates = {a: {m: final(f"conflict_follow_{m}", f"{a}_{f}") for m in ("m1", "m2")} for a in (c.a, c.b)}
        fam = {a: follow_adjacent_minus_other({f"conflict_follow_{m}": v for m, v in r.items()}, LAYOUT6)
               for a, r in rates.items()}
        adj, oth = "m2", "m1"   # readout_last: M2 is next to the label
        keep = learns[f] & s1_ok[f]
        diffs[f] = (fam[c.a] - fam[c.b])[keep]
        ses[f] = follow_difference_se(rates[c.a][adj], rates[c.a][oth], rates[c.b][adj], rates[c.b][oth],
                                      EVAL_SIZE)[keep]
        for a in (c.a, c.b):
            per_arm[f"{a}_{f}"] = fam[a]
    check = v3_check(c, diffs, ses, f"multinomial per conflict item (follows the adjacent modality, the other, or "
                                    f"neither), {EVAL_SIZE} items per arm, arms independent")
    check.numbers["K2"] = K2
    check.atol["K2"] = EXACT
    checks = [check]
    stage1_icl = {f: records[f"stage1_{f}"]["result"]["final"]["acc_icl"] for f in FAMILIES}
    from .testbed import mean_se

    means = {a: np.concatenate([per_arm[f"{a}_{f}"] for f in FAMILIES]) for a in (c.a, c.b)}
    _write(config, "claim6", {
        "version": VERSIONS["claim6"], "design": "proofs/claims/testbed_v3.py DESIGNS['claim6']", "piloted": chosen,
        "layout": LAYOUT6, "heads": heads, "families": seeds, "data_seed": config.seed, "device": config.device,
        "eval_size": EVAL_SIZE, "copy_baseline": copy, "premise_level": level,
        "follow_adjacent_minus_other": {k: v.tolist() for k, v in per_arm.items()},
        "fusion_learns_icl": {f: v.tolist() for f, v in learns.items()}, "stage1_icl": stage1_icl,
        "stage1_premise": {f: v.tolist() for f, v in s1_ok.items()},
        "tables": {k: r.table(("acc_icl", "acc_icl_m2only", "acc_icl_m1only", "conflict_follow_m1",
                               "conflict_follow_m2")) for k, r in runs.items()},
        "histories": {k: r["result"]["history"] for k, r in records.items() if not k.startswith("stage1")},
        "seconds": {k: r["provenance"]["seconds"] for k, r in records.items()}})
    # a mean over seeds of a difference of two follow rates: se over seeds, at least the per-item
    # variance bound 1/n of X ∈ {−1, 0, 1} (√(1/n) per seed, so √(1/n)/√seeds for the mean)
    atol = {f"mean_follow_adjacent_minus_other_{a}": sampling_atol(max(mean_se(v), 1 / math.sqrt(EVAL_SIZE * v.size)))
            for a, v in means.items()}
    summary = Summary({"K2": K2, **{f"mean_follow_adjacent_minus_other_{a}": float(v.mean()) for a, v in means.items()},
                       **outcome_words(checks)},
                      atol={"K2": EXACT, **atol},
                      why=f"the piloted K2 (a setting) exact; {SAMPLING_WHY}: a mean over the seeds of both families "
                          "by its se over seeds, at least the evaluation se bound √(1/n)/√seeds; the outcomes are "
                          "text")
    return hyps, checks, summary, []


# ---- claim 7 ------------------------------------------------------------------------------------
def claim7_v3(config: RunConfig, eval_size: int | None = None):
    """A better M2 encoder gives better multimodal ICL: per seed, the slope of the stage-2 AUC of
    known-class M2-necessary ICL on encoder accuracy over four doses (``testbed_v3.DESIGNS["claim7"]``;
    module docstring).  ``eval_size``: the stage-2 evaluation sets' size (the design's ``EVAL_SIZE7``
    by default: about an hour of one CPU thread at the quick size, minutes on a GPU)."""
    n_eval = int(eval_size or EVAL_SIZE7)
    from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm
    from mmicl.numerics.runs.runner import stored_arm_results

    from .testbed_multimodal import _hyps, _mm

    sz, chosen = _quick(config, "claim7")
    design, doses = DESIGNS["claim7"], tuple(chosen["encoder_steps"])
    data = _mm(sz, m2=replace(sz.m2, K=sz.encoder_K2, eps=sz.encoder_eps2))
    arms = [MultimodalArm(f"dose{k}_steps{s}", data, encoder_steps=s, standardise_features=True)
            for k, s in enumerate(doses)]
    stage2 = replace(sz.stage2, eval_size=n_eval, eval_every=EVAL_EVERY_TRANSITION)
    from .testbed_v3_transfer import STAGE1_HEADS_V31

    heads = STAGE1_HEADS_V31  # version 3.1 (DESIGNS["claim7"].changes)
    specs = {}
    for f, seeds in FAMILIES.items():
        s1 = _stage1(config, sz, seeds, heads=heads)
        specs[f"stage1_{f}"] = ("stage1", s1)
        specs[f"doses_{f}"] = ("stage2", {"stage1": s1, "arms": [_arm_json(a) for a in arms], "train": asdict(stage2),
                                          "trainable": sz.trainable, "eval_on": list(EVAL_ON7)})
    records = _run(config, specs)
    seeds = {f: list(s) for f, s in FAMILIES.items()}
    x, y, sx, sy, final_icl = {}, {}, {}, {}, {}
    for f in FAMILIES:
        r = stored_arm_results(records[f"doses_{f}"])
        x[f] = np.stack([r.final("encoder_acc", a.name) for a in arms]).astype(float)           # (doses, seeds)
        sx[f] = binomial_se(x[f], n_eval)
        auc = [auc_and_se(r.steps, r.curve("acc_icl_m2known", a.name), n_eval) for a in arms]
        y[f], sy[f] = np.stack([a for a, _ in auc]), np.stack([s for _, s in auc])
        final_icl[f] = np.stack([r.final("acc_icl_m2known", a.name) for a in arms]).astype(float)
    spans = {f: x[f][-1] - x[f][0] for f in FAMILIES}
    spread = {f: spans[f] >= SPAN for f in FAMILIES}
    hyps = [h for h in _hyps(sz, config) if "seeds per arm" not in h.text]
    hyps.append(_premise(design.premises[0], spread, seeds))
    s1_ok, s1_hyp = _stage1_premise(records, seeds)
    hyps.append(s1_hyp)
    c = design.checks[0]
    slopes, ses = {}, {}
    for f in FAMILIES:
        b, se = slope_and_se(x[f], y[f], sx[f], sy[f])
        keep = spread[f] & s1_ok[f] & np.isfinite(b)
        slopes[f], ses[f] = b[keep], se[keep]
    check = v3_check(c, slopes, ses, "propagated from the doses' se's: each AUC's by its bound "
                     f"Σ w_t √(a_t(1−a_t)/n) over the evaluations every {EVAL_EVERY_TRANSITION} steps (perfect "
                     f"correlation between evaluations of one fixed set), each encoder accuracy's binomial on "
                     f"{n_eval} held-out items (first order); the doses' evaluation sets are independent")
    check.numbers["encoder_steps"] = list(doses)
    check.atol["encoder_steps"] = EXACT
    checks = [check]
    _write(config, "claim7", {
        "version": VERSIONS["claim7"], "design": "proofs/claims/testbed_v3.py DESIGNS['claim7']", "piloted": chosen,
        "stage1_heads": heads,
        "families": seeds, "data_seed": config.seed, "device": config.device, "eval_size": n_eval,
        "eval_every": EVAL_EVERY_TRANSITION, "features": "standardised per member (mean 0, mean squared norm 1)",
        "encoder_accuracy": {f: v.tolist() for f, v in x.items()},
        "auc_icl_m2known": {f: v.tolist() for f, v in y.items()},
        "auc_se_bound": {f: v.tolist() for f, v in sy.items()},
        "final_icl_m2known": {f: v.tolist() for f, v in final_icl.items()},
        "slope": {f: _listed(slope_and_se(x[f], y[f], sx[f], sy[f])[0]) for f in FAMILIES},
        "slope_se": {f: _listed(slope_and_se(x[f], y[f], sx[f], sy[f])[1]) for f in FAMILIES},
        "span": {f: v.tolist() for f, v in spans.items()},
        "histories": {k: r["result"]["history"] for k, r in records.items() if not k.startswith("stage1")},
        "stage1_icl": {f: records[f"stage1_{f}"]["result"]["final"]["acc_icl"] for f in FAMILIES},
        "stage1_premise": {f: v.tolist() for f, v in s1_ok.items()},
        "seconds": {k: r["provenance"]["seconds"] for k, r in records.items()}})
    allx = np.concatenate([x[f] for f in FAMILIES], 1)
    ally = np.concatenate([y[f] for f in FAMILIES], 1)
    from .testbed import mean_se

    n = allx.shape[1]
    summary = Summary(
        {"encoder_steps": list(doses), "encoder_accuracy_by_dose": allx.mean(1).round(4).tolist(),
         "auc_icl_m2known_by_dose": ally.mean(1).round(4).tolist(), **outcome_words(checks)},
        atol={"encoder_steps": EXACT,
              "encoder_accuracy_by_dose": max(sampling_atol(mean_se(v, n_eval)) for v in allx),
              "auc_icl_m2known_by_dose": max(sampling_atol(max(mean_se(v), 0.5 / math.sqrt(n_eval * n)))
                                             for v in ally)},
        why=f"the piloted step counts exact; {SAMPLING_WHY}: a mean over the seeds of both families by its se over "
            "seeds (at least the binomial se of an accuracy on {n_eval} items, or for an AUC its bound ½/√n per "
            "seed), a list by its largest; the outcomes are text")
    return hyps, checks, summary, []


# ---- pilots ---------------------------------------------------------------------------------------
def main(argv=None) -> None:
    """``python -m mmicl.proofs.claims.testbed_v3_modalities --pilot claim6 --store DIR [--out FILE]``:
    claim 6's pilot rule on the pilot sweep's store; ``--pilot claim7 [--out FILE]``: run claim 7's
    encoder pilot here (about a minute) and apply its rule.  Prints the choice as JSON; ``--out``
    also writes it, atomically."""
    import argparse
    import json

    from .testbed_v3 import _finals

    ap = argparse.ArgumentParser(prog="python -m mmicl.proofs.claims.testbed_v3_modalities")
    ap.add_argument("--pilot", choices=("claim6", "claim7"), required=True)
    ap.add_argument("--store")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.pilot == "claim6":
        if not a.store:
            ap.error("--pilot claim6 needs --store DIR (the pilot sweep's results store)")
        picked = choose_claim6(_finals(a.store))
    else:
        import torch

        torch.set_num_threads(1)
        acc = encoder_pilot()
        picked = {"grid": list(ENCODER_STEP_GRID), **choose_claim7(acc),
                  "first_design": {k: v for k, v in choose_claim7(acc, FIRST_TARGETS).items()
                                   if k in ("targets", "encoder_steps")},
                  "note": "encoder_steps: the choice by the design's targets (ENCODER_TARGETS); first_design: the "
                          "choice the first design's targets (FIRST_TARGETS) gave"}
    choice = {"claim": a.pilot, "pilot_seeds": list(PILOT_SEEDS), "rule": DESIGNS[a.pilot].pilot_rule, **picked}
    if a.out:
        from mmicl.numerics.atomic import write_json

        write_json(a.out, choice)
    print(json.dumps(choice, indent=2))


if __name__ == "__main__":
    main()
