"""The pilots of the testbed claims: the rules that chose the settings a design leaves open, the
settings they chose (``PILOTED``), and how each rule reads its pilot's store.

Every pilot runs on pilot seeds only (``design.PILOT_SEEDS``, 9000-9003, and ``STAGE1_PILOT_SEEDS``,
9004-9011), never on verdict seeds; each rule was stated and committed before its pilot ran.  The
pilot runs' outcomes are committed under ``studies/results/pilot_<name>.json``, and a test applies
each rule below to its committed file and finds the setting in ``PILOTED``.  Rules that an earlier
version of a design used and a later one replaced are not code: docs/records/testbed-superseded-rules.md
states them with their outcomes.

    python -m mmicl.proofs.claims.testbed pilot --pilot NAME --store DIR [--out FILE]

applies pilot NAME's rule (``PILOTS``) to a pilot sweep's store and prints the choice as JSON
(``--out`` also writes it, atomically); ``--pilot claim7`` runs claim 7's encoder measurement here
(about a minute) instead of reading a store.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from mmicl.numerics.runs.store import Store

from .common import above_copy, multimodal_data, stage1_premise
from .design import DESIGNS, EVAL_SIZE, PILOT_SEEDS, STAGE1_PILOT_SEEDS, V4_PILOT_SEEDS
from .sizes import CLAIM1_V4, MULTIMODAL_QUICK, V4_M1, V4_STAGE2_STEPS
from mmicl.numerics.testbed.config import MemberSpec, SecondModality
from mmicl.numerics.testbed.multimodal_data import MultimodalMixture
from mmicl.numerics.testbed.multimodal_experiments import ENCODER_HIDDEN, MultimodalArm, arm_members
from mmicl.numerics.testbed.multimodal_model import EnsembleMLP
from mmicl.numerics.testbed.multimodal_train import train_encoder
from mmicl.numerics.atomic import write_json

__all__ = ["PILOTED", "STAGE1_PILOT_SEEDS", "pilot_finals", "stage1_curves",
           "STAGE1_STEP_GRID", "STAGE1_HEADS", "STAGE1_RULE",
           "stage1_premise_counts", "stage1_choice", "choose_stage1", "FUSION_STEP_GRID", "FUSION_K2_GRID",
           "CLAIM6_RULE", "choose_claim6", "ENCODER_STEP_GRID", "ENCODER_TARGETS", "choose_claim7", "encoder_pilot",
           "V4_PILOT_SEEDS", "V4_PILOT_DATA_SEED", "V4_M1", "V4_STAGE1_STEP_GRID", "V4_STAGE1_RULE", "V4_DISTRACTOR_DIMS",
           "V4_DISTRACTOR_SCALES", "V4_STAGE2_STEPS", "V4_DISTRACTOR_RULE", "choose_v4_stage1", "choose_v4_distractors",
           "V4_CLAIM8_RULE", "choose_v4_claim8_heads", "V4_CLAIM8_8HEADS_RULE", "V4_STAGE2_MARGIN_RULE", "v4_stage2_reading", "V4_FUSION_K2_GRID", "V4_FUSION_STEP_GRID",
           "V4_ICL_PLUS", "V4_CLAIM6_RULE", "choose_v4_claim6", "V4_CLAIM6_FALLBACK", "v4_claim6_settings", "v4_claim7_m2", "V4_CLAIM7_RULE",
           "V4_CLAIM1_RULE", "choose_v4_claim1", "V4_SETTLED_STEP_GRID", "V4_SETTLED_PILOT_SEEDS",
           "SETTLED_TOL", "settled_by_steps", "choose_settled_steps", "V4_CLAIM2_RULE", "V4_CLAIM3_RULE", "Pilot", "PILOTS", "main"]

PILOTED = {
    "stage1": {"heads": 4, "steps": 5000},
    "claim6": {"K2": 1024, "fusion_steps": 13000},
    "claim7": {"encoder_steps": (40, 100, 160, 640)},
    "v4_stage1": {"steps": 5000},
    "v4_m2": {"distractor_dims": 48, "distractor_scale": 3.0},
    "v4_claim8": {"heads": 8},
    "v4_claim7": {"encoder_steps": (100, 160, 200, 1280)},
    "v4_claim1": {"K_edge": 1024},
    "v4_claim3": {"steps": 15000},
    "v4_claim2": {"steps": 15000},
    "v4_claim6": {"K2": None, "fusion_steps": None},
}
"""The settings each pilot rule chose on its pilot seeds, which the claims run on:

- ``stage1``: the multimodal claims' stage-1 decoder (heads per layer, 2 layers, width 32) and steps
  by ``choose_stage1`` (``pilot_stage1_v31.json``);
- ``claim6``: fusion's K2 and steps by ``choose_claim6`` (``pilot_claim6_v31.json``);
- ``claim7``: the encoder's pretraining doses by ``choose_claim7`` (``pilot_claim7.json``);
- ``v4_stage1``: the version-4 stage-1 steps (N = 8, B = 1, 2 layers × 4 heads) by ``choose_v4_stage1``
  (``pilot_v4_size.json``: 8 of 8 pilot seeds meet the premise from 5000 steps);
- ``v4_m2``: version 4's M2 distractors by ``choose_v4_distractors`` (``pilot_v4_size.json``: σ = 3,
  where M2-necessary ICL without stage 2 is at the copy baseline, median 0.127, and 0.914 after 2000
  stage-2 steps; without distractors it is 0.930 before stage 2);
- ``v4_claim8``: claim 8's heads per layer by ``choose_v4_claim8_heads`` (``pilot_v4_claim8.json``: 0 of 8
  seeds have a matched control at 4 heads; at 8, ``pilot_v4_claim8_8heads.json``, 0 of 8 too: 6–8 of
  layer 2's 8 heads are induction heads on every seed);
- ``v4_claim7``: claim 7's version-4 encoder doses by ``choose_claim7`` under ``V4_CLAIM7_RULE``
  (``pilot_v4_claim7.json``: median held-out accuracies 0.167, 0.430, 0.569 and 0.798);
- ``v4_claim1``: claim 1's K_edge by ``choose_v4_claim1`` (``pilot_v4_claim1.json``: median final ICL 0.065
  at K = 256 and 1024, at guessing level 1/16 and below the copy baseline 1/8, with a copy rate of
  0.51–0.56; 0.989 at K = 4096, where every seed copies: the largest K below 0.9 is 1024);
- ``v4_claim3``: claim 3's step count by ``choose_settled_steps`` under ``V4_CLAIM3_RULE``
  (``pilot_v4_claim3.json``: APE and RoPE at K = 1024, 4096 and 16384 on pilot seeds 9012–9015; no step
  count settles every arm: RoPE at K = 4096 is settled on 1 of 4 seeds even at 15000 steps, its ICL
  0.50–0.90 there against APE's 0.99, so the rule gives the largest, 15000);
- ``v4_claim2``: claim 2's step count by ``choose_settled_steps`` under ``V4_CLAIM2_RULE``
  (``pilot_v4_claim2.json``: the four shapes at K = 1024 on pilot seeds 9012–9015; no step count
  settles every shape: the 4-layer shapes settle on 0 of 4 seeds at 15000 steps and at most 2 of 4
  before, their copy rate still 0.59–0.64 against the base's 0.52–0.54, so the rule gives the largest,
  15000; every shape's ICL stays at guessing level, 0.06–0.09, at this K);
- ``v4_claim6``: fusion's K2 and steps by ``choose_v4_claim6`` (``pilot_v4_claim6.json``): none, so claim
  6's verdict run takes ``V4_CLAIM6_FALLBACK``'s (4096, 20000). Fusion leaves the copy plateau on 1 of
  8 pilot seeds at K2 = 1024 (confounded ICL 0.40–0.50 from step 10000; the others 0.08–0.14) and on
  0 of 8 at K2 = 4096 (0.11–0.14 at every step count), against a copy baseline of 1/8."""


# ---- reading a pilot's store ------------------------------------------------------------------
def pilot_finals(store_path, metric: str = "acc_icl", by_steps: bool = False) -> dict[tuple, list[float]]:
    """From a store of one-arm ``ensemble`` runs (a pilot sweep), the final ``metric`` per seed of
    each finished run, keyed by (position code, K), or (position code, K, steps) with ``by_steps``."""
    out = {}
    for r in Store(store_path, writable=False).records():
        if r["kind"] != "ensemble" or r["status"] != "done":
            continue
        cfg = r["config"]
        key = (cfg["model"]["pos"], int(cfg["arms"][0]["data"]["K"]))
        out[key + ((int(cfg["train"]["steps"]),) if by_steps else ())] = list(r["result"]["summary"]["run"][metric])
    return out


def stage1_curves(store_path) -> dict[int, dict]:
    """The finished ``ensemble`` runs of a stage-1 pilot store, by heads per layer: each run's
    evaluation steps, ICL curve (evaluations, seeds) and induction scores (evaluations, seeds, layers,
    heads)."""
    out = {}
    for r in Store(store_path, writable=False).records():
        if r["kind"] != "ensemble" or r["status"] != "done":
            continue
        h, heads = r["result"]["history"], int(r["config"]["model"]["heads"])
        if heads in out:
            raise ValueError(f"the stage-1 pilot store {store_path} holds two finished runs with {heads} heads per "
                             "layer: run studies/pilot_stage1.toml into an empty store")
        out[heads] = {"steps": list(h["steps"]), "acc_icl": h["metrics"]["acc_icl"],
                      "induction": h["metrics"]["induction"], "seeds": list(r["config"]["seeds"])}
    return out


# ---- claim 1 -------------------------------------------------------------------------------------------
V4_CLAIM1_RULE = (
    "claim 1's K_edge at version 4's size (N = 8 context pairs of one class each, B = 1, the 2 layers × 4 heads "
    "decoder, width 32, bursty, ε = 0.1, trained for the version-4 stage-1 steps, lr 2e-3, batch 128): the largest K "
    "of (256, 1024, 4096) at which the median final ICL of the 8 pilot seeds (9012–9019, data seed 9) is below 0.9, so "
    "that ε has room to raise it; the smallest, 256, when none is (the headroom premise then says, seed by seed, "
    "whether ε can be read there); read on one ensemble of the three K's")
"""Claim 1's version-4 pilot rule (``studies/pilot_v4_claim1.py``), stated before the pilot ran.
Version 3's rule (the largest K of (128, 256, 512) with median pilot ICL below 0.9, on claim 3's first
pilot at N = 4) is in docs/records/testbed-claim1-v3.md."""


def choose_v4_claim1(finals: dict[int, list[float]], grid=None) -> dict:
    """``V4_CLAIM1_RULE`` on the pilot's final ICL per seed, keyed by K: ``{"K_edge"}`` (None, with
    ``"missing"``, while a K of ``grid`` (``sizes.CLAIM1_V4.K_edge_grid`` by default) has no finished
    run) and the medians it read."""
    grid = CLAIM1_V4.K_edge_grid if grid is None else tuple(grid)
    missing = [k for k in grid if k not in finals]
    if missing:
        return {"K_edge": None, "missing": missing, "medians": {}}
    medians = {k: float(np.median(finals[k])) for k in grid}
    below = [k for k in grid if medians[k] < 0.9]
    return {"K_edge": max(below) if below else min(grid), "medians": {str(k): m for k, m in medians.items()}}


# ---- claims 2 and 3 of version 4: trained until settled --------------------------------------------------
V4_SETTLED_STEP_GRID = (5000, 10000, 15000)
"""The step counts version 4's claims 2 and 3 choose among, read on one run of the longest."""
V4_SETTLED_PILOT_SEEDS = V4_PILOT_SEEDS[:4]
"""The settledness pilots' seeds (9012-9015): four, so that each pilot (2 to 4 model shapes × 15000 steps) costs
about an hour and a half on one CPU thread."""
SETTLED_TOL = 2 * (2 * 0.25 / EVAL_SIZE) ** 0.5
"""A curve is settled when it moved by at most two binomial se of a difference of two rates on
``EVAL_SIZE`` items at their largest (p = ½), 2·√(2·¼/n) ≈ 0.044, over the last quarter of training
(version 3's claim 2 premise, ``unimodal.SETTLED_TOL``)."""

_SETTLED_RULE = (
    "the smallest step count of (5000, 10000, 15000) at which {what} is settled (its {curve} moved by at most "
    "2·√(2·¼/1024) ≈ 0.044 over the last quarter of that many steps) on every one of the 4 pilot seeds 9012–9015 (data "
    "seed 9), at version 4's size (N = 8 pairs of one class each, B = 1; lr 2e-3, batch 128); 15000 when none is (the "
    "claim's settled premise then decides seed by seed); read on one 15000-step run per model shape (a constant "
    "learning rate: the model at step s is the one an s-step run ends with)")
V4_CLAIM2_RULE = _SETTLED_RULE.format(
    what="each of claim 2's four shapes (2 × 4 heads, 2 × 8, 4 × 4, 4 × 4 at the base's parameter count; width 32) "
         "at K_mid = claim 1's piloted K_edge, bursty",
    curve="ICL set's copy rate")
"""Claim 2's version-4 step count (``studies/pilot_v4_settled.py claim2``), stated before its pilot ran."""
V4_CLAIM3_RULE = _SETTLED_RULE.format(
    what="each of claim 3's arms (APE and RoPE, 2 × 4 heads, width 32, at each K of unimodal.CLAIM3_K_V4, bursty)",
    curve="final ICL")
"""Claim 3's version-4 step count (``studies/pilot_v4_settled.py claim3``), stated before its pilot ran."""


def settled_by_steps(curve, steps, grid=V4_SETTLED_STEP_GRID, tol: float = SETTLED_TOL) -> dict[int, list[bool]]:
    """Per step count s of ``grid``, whether each seed's ``curve`` (evaluations, seeds) at ``steps`` moved
    by at most ``tol`` over the last quarter of s steps (the evaluations at steps in [¾ s, s]); step
    counts beyond the run's last evaluation are left out."""
    x, y = np.asarray(steps, float), np.asarray(curve, float)
    out = {}
    for s in grid:
        if s > x[-1]:
            continue
        tail = y[(x >= 0.75 * s) & (x <= s)]
        out[int(s)] = ((tail.max(0) - tail.min(0)) <= tol).tolist()
    return out


def choose_settled_steps(curves: dict[str, dict], grid=V4_SETTLED_STEP_GRID) -> dict:
    """``V4_CLAIM2_RULE`` / ``V4_CLAIM3_RULE`` on a settledness pilot's curves by arm (each ``{"steps",
    "curve" (evaluations × seeds)}``): ``{"steps"}``, the smallest step count of ``grid`` at which every
    arm is settled on every seed (the largest when none is; None, with ``"missing"``, while a curve
    does not reach the largest), with the seeds settled per arm and step count."""
    short = sorted(a for a, c in curves.items() if not c["steps"] or c["steps"][-1] < max(grid))
    if short or not curves:
        return {"steps": None, "missing": short or ["every arm"], "settled": {}}
    settled = {a: settled_by_steps(c["curve"], c["steps"], grid) for a, c in curves.items()}
    every = [s for s in grid if all(all(settled[a][s]) for a in curves)]
    return {"steps": min(every) if every else max(grid),
            "settled": {f"{a} steps={s}": v for a, by in settled.items() for s, v in by.items()},
            "settled_counts": {f"{a} steps={s}": int(sum(v)) for a, by in settled.items() for s, v in by.items()}}


# ---- the stage-1 decoder of the multimodal claims ----------------------------------------------------
STAGE1_STEP_GRID = (5000, 7500, 10000)
STAGE1_HEADS = (1, 4)
STAGE1_RULE = (
    "stage-1 decoder and steps: of the quick decoder (2 layers × 1 head) and claim 9's (2 layers × 4 heads, "
    "width 32, head width 8), each at 5000, 7500 and 10000 steps, the pair with the most pilot seeds (9004–9011) "
    "meeting claim 4's stage-1 premise, ties to the quick decoder, then fewer steps; a version 3.1 of claims 4, 5, "
    "6 and 7 runs on it only if it is not the version-3 recipe (quick decoder, 5000 steps)")
"""The stage-1 pilot's rule (read on one 10000-step run per decoder: at a constant learning rate the
model at step s is the one an s-step run ends with).  It picked 4 heads at 5000 steps."""


def stage1_premise_counts(curves: dict) -> dict | None:
    """Per step count of ``STAGE1_STEP_GRID``, which seeds of one stage-1 pilot run (``stage1_curves``'s
    entry) meet claim 4's premise (``stage1_premise``) at that evaluation; None where a step is missing."""
    met = _premise_by_step(curves, STAGE1_STEP_GRID)
    return met if len(met) == len(STAGE1_STEP_GRID) else None


def _premise_by_step(curves: dict, grid) -> dict[int, list[bool]]:
    """For each step count of ``grid`` that the curves were evaluated at, which seeds meet claim 4's
    stage-1 premise (``stage1_premise``) there."""
    steps = list(curves["steps"])
    return {s: stage1_premise({"acc_icl": curves["acc_icl"][steps.index(s)],
                               "induction": curves["induction"][steps.index(s)]}).tolist()
            for s in grid if s in steps}


def stage1_choice(met: dict[int, dict[int, list[bool]] | None]) -> dict:
    """``STAGE1_RULE`` on the seeds meeting the premise per heads and step count
    (``stage1_premise_counts`` of each run; None for a run that is missing or stopped early)."""
    out = {"premise_met": {f"{h} heads, {s} steps": m for h in sorted(met) if met[h] for s, m in met[h].items()},
           "premise_counts": {f"{h} heads, {s} steps": int(sum(m)) for h in sorted(met) if met[h]
                              for s, m in met[h].items()}}
    if any(met.get(h) is None for h in STAGE1_HEADS):
        return {**out, "decoder": None, "missing": [h for h in STAGE1_HEADS if met.get(h) is None]}
    best = max(((h, s) for h in STAGE1_HEADS for s in STAGE1_STEP_GRID),
               key=lambda hs: (sum(met[hs[0]][hs[1]]), -hs[0], -hs[1]))
    return {**out, "decoder": {"heads": best[0], "steps": best[1]}}


def choose_stage1(curves_by_heads: dict[int, dict]) -> dict:
    """``stage1_choice`` on a stage-1 pilot's curves (``stage1_curves``), with the seeds of each run."""
    met = {h: stage1_premise_counts(c) for h, c in curves_by_heads.items()}
    return {**stage1_choice(met), "seeds": {str(h): c.get("seeds") for h, c in curves_by_heads.items()}}


# ---- claim 6 -------------------------------------------------------------------------------------------
FUSION_STEP_GRID = (6500, 9750, 13000)
"""Fusion step counts the pilot reads (6500 is stage 1 + stage 2 of the quick size)."""
FUSION_K2_GRID = (1024, 4096)
"""K2 values the pilot tries (4096 only if 1024 meets the rule at no step count)."""
CLAIM6_RULE = (
    "fusion K2 and steps, on the 2 layers × 4 heads decoder of the stage 1: the smallest K2 of (1024, 4096) at which, "
    "at some step count of (6500, 9750, 13000), at least 7 of the 8 pilot seeds (9004–9011) meet the fusion premise "
    "(ICL on the confounded set above B/N + 2 se, se binomial at B/N on 1024 items); at that K2 the longest of those "
    "step counts, provided every one of the 8 pilot seeds meets the premise there; read on one 13000-step fusion "
    "run per K2 (constant learning rate: the model at step s is the one an s-step run ends with); None if no K2 or "
    "no step count qualifies")
"""Claim 6's pilot rule.  It was stated in two steps, each before the run it governs: the K2 part
before the pilot ran, the step part (the longest step count, where all 8 pilot seeds meet the
premise) after the verdict run of an earlier version that took the fewest steps with 7 of 8
(docs/records/testbed-superseded-rules.md).  It picked K2 = 1024 and 13000 steps."""


def choose_claim6(curves: dict[int, dict]) -> dict:
    """``CLAIM6_RULE`` on the pilot's fusion curves by K2 (each ``{"steps", "acc_icl" (evaluations ×
    seeds), "copy"}``): ``{"K2", "fusion_steps"}`` (None where the rule picks none, ``"missing"``:
    the K2 to read next), and the seeds meeting the premise per K2 and step count."""
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
        if any(sum(met[k2][s]) >= 7 for s in FUSION_STEP_GRID):
            last = max(FUSION_STEP_GRID)
            return {"K2": k2, "fusion_steps": last if all(met[k2][last]) else None, **out}
    return {"K2": None, "fusion_steps": None, **out}


# ---- claim 7 -------------------------------------------------------------------------------------------
ENCODER_STEP_GRID = (0, 10, 20, 30, 40, 60, 80, 100, 120, 140, 160, 200, 240, 320, 480, 640, 960, 1280, 1920, 2560)
"""Claim 7's pilot: the pretraining step counts tried."""
ENCODER_TARGETS = (0.2, 0.4, 0.6, 0.8)
"""The design's target encoder accuracies (``DESIGNS["claim7"].pilot_rule``).  At the claim's M2
(K2 = 64, D2 = 16, ε2 = 1) the encoder's accuracy tops out near 0.83 (the pilot's best median, at
2560 steps); targets inside the attainable range space the four doses evenly over 0.6 of accuracy
and keep them off the ceiling."""


def choose_claim7(accuracy: dict[int, list[float]], targets=None) -> dict:
    """Claim 7's pilot rule: for each target accuracy the pretraining step count whose pilot median
    encoder accuracy is nearest it (a tie: the fewer steps).  ``targets``: ``ENCODER_TARGETS`` by
    default.  ``encoder_steps`` is None when two targets pick the same count (the grid is too coarse:
    pilot a finer one)."""
    targets = tuple(ENCODER_TARGETS if targets is None else targets)
    med = {int(s): float(np.median(v)) for s, v in accuracy.items()}
    steps = sorted(med)
    picks = [min(steps, key=lambda s: (abs(med[s] - t), s)) for t in targets]
    ok = len(set(picks)) == len(picks)
    return {"targets": list(targets), "encoder_steps": tuple(sorted(picks)) if ok else None, "picks": picks,
            "medians": {str(s): round(med[s], 6) for s in steps},
            "accuracy": {str(s): [round(float(x), 6) for x in accuracy[s]] for s in steps}}


def v4_claim7_m2() -> SecondModality:
    """Claim 7's M2 at version 4: version 3's claim-7 law (K2 = ``encoder_K2`` = 64 classes, ε2 =
    ``encoder_eps2`` = 1, D2 = 16) with version 4's distractor coordinates (``PILOTED["v4_m2"]``)."""
    sz = MULTIMODAL_QUICK
    return SecondModality(K=sz.encoder_K2, D=sz.m2.D, eps=sz.encoder_eps2, **PILOTED["v4_m2"])


def encoder_pilot(seeds=PILOT_SEEDS, steps=ENCODER_STEP_GRID, data_seed: int = PILOT_SEEDS[0],
                  device: str = "cpu", m1=None, m2=None) -> dict[int, list[float]]:
    """Claim 7's pilot measurement: the held-out accuracy of the M2 encoder after each of ``steps``
    pretraining steps, per seed, exactly as stage 2 trains it (the claim's M2 law, by default version
    3's at K2 = ``encoder_K2``, ε2 = ``encoder_eps2``; batch and lr of stage 2, ``EVAL_SIZE`` held-out
    items, the stream ``data_seed`` + 77, one member per (step count, seed) as a stage-2 grid would hold
    them).  ``m1``/``m2``: another size's M1 and M2 (version 4: ``V4_M1``, ``v4_claim7_m2()``)."""

    sz = MULTIMODAL_QUICK
    m1 = sz.m1 if m1 is None else m1
    data = multimodal_data(replace(sz, m1=m1), m2=m2 if m2 is not None else replace(sz.m2, K=sz.encoder_K2,
                                                                                     eps=sz.encoder_eps2))
    arms = [MultimodalArm(f"steps={s}", data, encoder_steps=s) for s in steps]
    members = arm_members(arms, [MemberSpec(m1, s) for s in seeds])
    mixture = MultimodalMixture(members, device)
    encoder = EnsembleMLP([data.m2.item_dim, *ENCODER_HIDDEN, data.m2.K], [m.seed for m in members], device, salt=2)
    acc = train_encoder(encoder, mixture, [s for s in steps for _ in seeds], batch=sz.stage2.batch,
                        lr=sz.stage2.lr, eval_size=EVAL_SIZE, seed=data_seed + 77)
    n = len(seeds)
    return {int(s): [float(a) for a in acc[i * n:(i + 1) * n]] for i, s in enumerate(steps)}


# ---- version 4: the size ------------------------------------------------------------------------------
V4_PILOT_DATA_SEED = 9
"""The data seed of the version-4 pilots (the verdict families have data seeds of their own)."""
V4_STAGE1_STEP_GRID = (5000, 7500, 10000)
V4_STAGE1_RULE = (
    "version-4 stage 1 at N = 8, B = 1 (copy baseline 1/8), K1 = 16384, on the 2 layers × 4 heads decoder (width 32, "
    "lr 2e-3, batch 128): its steps are the smallest of (5000, 7500, 10000) at which at least 7 of the 8 pilot seeds "
    "(9012–9019) meet claim 4's stage-1 premise (ICL on M1 ≥ 0.95 with an induction head, score > 0.3), read on one "
    "10000-step run (constant learning rate: the model at step s is the one an s-step run ends with); None: this "
    "size is not reached at width 32 within 10000 steps")
V4_DISTRACTOR_DIMS = 48
"""Distractor coordinates beside M2's D2 = 16 class coordinates (``SecondModality.distractor_dims``)."""
V4_DISTRACTOR_SCALES = (1.0, 3.0)
"""The distractor scales σ the pilot tries; σ = 0 (no distractors, version 3's M2) runs beside them
as the control."""
V4_DISTRACTOR_RULE = (
    "version-4 M2 (K2 = L = 16, D2 = 16, ε2 = 0.1, 48 distractor coordinates): σ is the smallest of (1, 3) at which, "
    "over the pilot seeds whose stage 1 (the 10000-step decoder) meets claim 4's premise, (a) the median "
    "M2-necessary ICL without stage 2 (the random projector: stage 2's step 0) is at most B/N + 0.10 = 0.225, and "
    "(b) the median M2-necessary ICL after 2000 stage-2 steps (projector and readout trained, lr 2e-3) exceeds (a)'s "
    "median by at least 0.30: stage 2 has room and uses it; σ = 0 is the control (version 3's M2), reported; None: "
    "no σ qualifies")


def choose_v4_stage1(curves: dict) -> dict:
    """``V4_STAGE1_RULE`` on one stage-1 pilot run's curves (``{"steps", "acc_icl" (evaluations ×
    seeds), "induction" (evaluations × seeds × layers × heads)}``): ``{"steps"}`` (None where no step
    count qualifies or one is missing), with the seeds meeting the premise per step count."""
    met = _premise_by_step(curves, V4_STAGE1_STEP_GRID)
    out = {"premise_met": {str(s): m for s, m in met.items()},
           "premise_counts": {str(s): int(sum(m)) for s, m in met.items()}}
    if len(met) < len(V4_STAGE1_STEP_GRID):
        return {"steps": None, "missing": [s for s in V4_STAGE1_STEP_GRID if s not in met], **out}
    return {"steps": next((s for s in V4_STAGE1_STEP_GRID if sum(met[s]) >= 7), None), **out}


def choose_v4_distractors(curves: dict[float, dict], premise: list[bool], copy: float) -> dict:
    """``V4_DISTRACTOR_RULE`` on the stage-2 pilot's curves by σ (each ``{"steps", "acc_icl_m2only"
    (evaluations × seeds)}``, step 0 first and the last step ``V4_STAGE2_STEPS``), ``premise`` per
    seed (its stage 1 meets claim 4's premise) and the copy baseline B/N: ``{"sigma"}`` (None where no
    σ qualifies or a curve is missing), with each σ's no-stage-2 and final medians."""
    keep = np.asarray(premise, bool)
    table = {}
    for sigma, c in sorted(curves.items()):
        acc = np.asarray(c["acc_icl_m2only"], float)
        if list(c["steps"])[0] != 0 or list(c["steps"])[-1] != V4_STAGE2_STEPS:
            raise ValueError(f"the σ = {sigma:g} curve runs over steps {c['steps'][0]}–{c['steps'][-1]}; the rule "
                             f"reads steps 0 and {V4_STAGE2_STEPS}")
        table[float(sigma)] = {"no_stage2": acc[0][keep].tolist(), "final": acc[-1][keep].tolist(),
                               "no_stage2_median": float(np.median(acc[0][keep])) if keep.any() else None,
                               "final_median": float(np.median(acc[-1][keep])) if keep.any() else None}
    out = {"seeds_meeting_stage1": int(keep.sum()), "by_sigma": {f"{s:g}": v for s, v in table.items()}}
    if not keep.any():
        return {"sigma": None, **out}
    for sigma in V4_DISTRACTOR_SCALES:
        if sigma not in table:
            return {"sigma": None, "missing": sigma, **out}
        t = table[sigma]
        if t["no_stage2_median"] <= copy + 0.10 and t["final_median"] >= t["no_stage2_median"] + 0.30:
            return {"sigma": sigma, **out}
    return {"sigma": None, **out}


V4_STAGE2_MARGIN_RULE = (
    "version-4 margins of the stage-2 claims, read on the size pilot's stage 2 at the chosen σ (studies/results/"
    "pilot_v4_size.json: 8 pilot seeds, 2000 steps, evaluated every 250): per seed the rise of M2-necessary ICL "
    "(final minus no-stage-2) and of the area under its curve (the normalised trapezoid area over steps 0-2000 "
    "minus the no-stage-2 value); claim 5's margin is a tenth of the median area rise, rounded to 0.01 (version 3 "
    "stated 'a tenth of the base's typical rise' and wrote 0.03 where the rule gave 0.007); claim 4's margins "
    "(0.10 and 0.05) stay the accuracy range's tenth and twentieth, which the median final rise must exceed "
    "four times over, so that stage 2 moves ICL by more than the check asks of one arm over the other")


def v4_stage2_reading(pilot: dict) -> dict:
    """``V4_STAGE2_MARGIN_RULE`` on the size pilot's record (``pilot_v4_size.json`` as a dict): per
    seed the no-stage-2 and final M2-necessary ICL at the pilot's chosen σ, its rise, the area under
    the stage-2 curve and the area's rise, their medians, and ``claim5_margin``."""
    from mmicl.numerics.testbed.sign_tests import trapezoid_weights

    sigma = pilot["distractors"]["sigma"]
    c = pilot["stage2_curves"][f"{float(sigma):g}"]
    steps, acc = np.asarray(c["steps"], float), np.asarray(c["acc_icl_m2only"], float)
    if steps[0] != 0 or steps[-1] != V4_STAGE2_STEPS or acc.shape[0] != steps.size:
        raise ValueError(f"the pilot's σ = {sigma:g} curve runs over steps {steps[0]:g}-{steps[-1]:g} with "
                         f"{acc.shape[0]} evaluations; the rule reads steps 0-{V4_STAGE2_STEPS}, one row per step")
    area = trapezoid_weights(steps) @ acc
    rise, area_rise = acc[-1] - acc[0], area - acc[0]
    return {"sigma": float(sigma), "no_stage2": acc[0].tolist(), "final": acc[-1].tolist(), "area": area.tolist(),
            "rise_median": float(np.median(rise)), "area_median": float(np.median(area)),
            "area_rise_median": float(np.median(area_rise)),
            "claim5_margin": round(0.1 * float(np.median(area_rise)), 2)}


V4_FUSION_K2_GRID = (1024, 4096)
"""The K2 values version 4's claim-6 pilot tries (4096 only if 1024 meets the rule at no step count)."""
V4_FUSION_STEP_GRID = (10000, 15000, 20000)
"""The fusion step counts version 4's claim-6 pilot reads, on one 20000-step run per K2."""
V4_ICL_PLUS = 0.10
"""Version 4's claim-6 premise, "does multimodal ICL": confounded ICL above B/N + ``V4_ICL_PLUS`` + 2 se
(``common.above_copy(..., plus=V4_ICL_PLUS)``)."""
V4_CLAIM6_RULE = (
    "version-4 fusion K2 and steps (layout readout_last, the 2 layers × 4 heads decoder, version 4's M1 and M2 with "
    "its distractors, lr 2e-3, batch 128): the smallest K2 of (1024, 4096) at which, at some step count of (10000, "
    "15000, 20000), at least 7 of the 8 pilot seeds (9012–9019, data seed 9) do multimodal ICL (confounded ICL above "
    "B/N + 0.10 + 2 se, se binomial at B/N + 0.10 on 1024 items); at that K2 the step count after the first at which "
    "all 8 do (fusion leaves the copy plateau abruptly at a seed-dependent step, so the verdict seeds get one more "
    "grid point than the pilot's slowest needed), 20000 when that is the first or when none has all 8; read on one "
    "20000-step run per K2 (constant learning rate: the model at step s is the one an s-step run ends with); None "
    "if no K2 qualifies")


def choose_v4_claim6(curves: dict[int, dict]) -> dict:
    """``V4_CLAIM6_RULE`` on the pilot's fusion curves by K2 (each ``{"steps", "acc_icl" (evaluations ×
    seeds), "copy"}``): ``{"K2", "fusion_steps"}`` (None where the rule picks none; ``"missing"``: the
    K2 to read next), with the seeds meeting the premise per K2 and step count."""
    met = {}
    for k2, c in sorted(curves.items()):
        steps = list(c["steps"])
        met[k2] = {s: above_copy(c["acc_icl"][steps.index(s)], c["copy"], EVAL_SIZE, plus=V4_ICL_PLUS).tolist()
                   for s in V4_FUSION_STEP_GRID if s in steps}
    out = {"premise_met": {f"K2={k} steps={s}": m for k, ms in met.items() for s, m in ms.items()},
           "premise_counts": {f"K2={k} steps={s}": int(sum(m)) for k, ms in met.items() for s, m in ms.items()}}
    grid = V4_FUSION_STEP_GRID
    for k2 in V4_FUSION_K2_GRID:
        if k2 not in met or len(met[k2]) < len(grid):
            return {"K2": None, "fusion_steps": None, "missing": k2, **out}
        if any(sum(met[k2][s]) >= 7 for s in grid):
            first = next((i for i, s in enumerate(grid) if all(met[k2][s])), None)
            steps = grid[-1] if first is None else grid[min(first + 1, len(grid) - 1)]
            return {"K2": k2, "fusion_steps": steps, **out}
    return {"K2": None, "fusion_steps": None, **out}


V4_CLAIM6_FALLBACK = (
    "where V4_CLAIM6_RULE picks no K2 (fewer than 7 of 8 pilot seeds do multimodal ICL at every K2 and step count "
    "of its grids), claim 6's verdict run uses the grids' largest K2 and step count (4096, 20000), and its per-seed "
    "premise (each arm does multimodal ICL) reports how many verdict seeds fusion brings off the copy plateau")


def v4_claim6_settings(chosen: dict) -> tuple[int, int]:
    """``(K2, fusion_steps)`` of claim 6's verdict run from the pilot's choice (``PILOTED['v4_claim6']``,
    ``{"K2", "fusion_steps"}``): the choice, or ``V4_CLAIM6_FALLBACK``'s largest grid point where the
    rule picked none (both None)."""
    if (chosen["K2"] is None) != (chosen["fusion_steps"] is None):
        raise ValueError(f"claim 6's pilot choice {chosen} names a K2 without steps or steps without a K2")
    if chosen["K2"] is None:
        return max(V4_FUSION_K2_GRID), max(V4_FUSION_STEP_GRID)
    return int(chosen["K2"]), int(chosen["fusion_steps"])


V4_CLAIM7_RULE = (
    "version-4 encoder doses: claim 7's rule (the four pretraining step counts of ENCODER_STEP_GRID whose median "
    "held-out encoder accuracy is nearest 0.2, 0.4, 0.6 and 0.8; a tie to the fewer steps; none when two targets pick "
    "one count) on version 4's claim-7 M2 (K2 = 64, ε2 = 1, D2 = 16 with version 4's 48 distractor coordinates at "
    "σ = 3: v4_claim7_m2), the 8 pilot seeds 9012–9019, data seed 9")


V4_CLAIM8_RULE = (
    "claim 8's heads per layer at the version-4 size: 4 if at least 7 of the 8 pilot seeds (9012–9019) of the size "
    "pilot's stage-1 decoders (2 layers × 4 heads, N = 8, B = 1, K = 16384, its 10000-step checkpoint) meet all of "
    "claim 8's version-4 premises under its own analysis (heads.induction_circuit with claim 8's thresholds and "
    "seeds): ICL above B/N + 2 se, an induction head, and a layer- and count-matched control (heads.MATCHED_RULE); "
    "else 8 heads per layer (width 32), to be piloted the same way before any verdict run")


V4_CLAIM8_8HEADS_RULE = (
    "claim 8's 8-head pilot, run because V4_CLAIM8_RULE chose 8 (on the 4-head decoders all four layer-2 heads were "
    "induction heads on 8 of 8 pilot seeds, so no seed had a matched control): 2 layers × 8 heads (width 32, head "
    "width 4) trained for the version-4 stage-1 steps (5000) on the pilot seeds 9012–9019, data seed 9, analysed as "
    "claim 8 analyses its models; claim 8's version 4 runs on 8 heads per layer whatever this gives, and the count "
    "of seeds meeting every premise says whether its verdict run can be decided (at least 7 of 8) or will be "
    "hypothesis-not-met by its matched-control premise (a control by attention-pattern patching would then be a new "
    "version)")


def choose_v4_claim8_heads(analysis: dict, copy: float) -> dict:
    """``V4_CLAIM8_RULE`` on ``heads.induction_circuit``'s output for the pilot's decoders: ``{"heads"}``
    (4 or 8) with the seeds meeting each premise."""
    icl = above_copy(analysis["icl"], copy, EVAL_SIZE)
    has_ind = np.array([np.any(m) for m in analysis["induction_heads"]])
    matched = np.asarray(analysis["has_matched_control"], bool)
    every = icl & has_ind & matched
    return {"heads": 4 if int(every.sum()) >= 7 else 8, "icl_above_copy": icl.tolist(),
            "has_induction_head": has_ind.tolist(), "has_matched_control": matched.tolist(),
            "all_premises": every.tolist(), "count": int(every.sum())}


# ---- the table -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pilot:
    """A pilot's rule as code and as words, the seeds it ran on, and how it reads its store: the
    finals of one-arm runs (``pilot_finals``, by step count too with ``by_steps``), or ``read``."""

    choose: object
    rule: str
    seeds: tuple[int, ...]
    by_steps: bool = False
    read: object = None

    def data(self, store):
        """What ``choose`` reads from the pilot's store."""
        return self.read(store) if self.read is not None else pilot_finals(store, by_steps=self.by_steps)


PILOTS = {
    "stage1": Pilot(choose_stage1, STAGE1_RULE, STAGE1_PILOT_SEEDS, read=stage1_curves),
}
"""The pilots whose rule reads a pilot sweep's store (claim 6's is run by studies/pilot_claim6.py,
claim 7's measures here: ``main``)."""


def main(argv=None) -> None:
    """The command of the module docstring."""
    import argparse
    import json

    ap = argparse.ArgumentParser(prog="python -m mmicl.proofs.claims.testbed pilot")
    ap.add_argument("--pilot", choices=[*sorted(PILOTS), "claim7", "v4_claim7"], required=True)
    ap.add_argument("--store", help="the pilot sweep's results store")
    ap.add_argument("--out", help="also write the choice here (JSON, atomically)")
    a = ap.parse_args(argv)
    if a.pilot == "claim7":
        import torch

        torch.set_num_threads(1)
        choice = {"claim": "claim7", "pilot_seeds": list(PILOT_SEEDS), "rule": DESIGNS["claim7"].pilot_rule,
                  "grid": list(ENCODER_STEP_GRID), **choose_claim7(encoder_pilot())}
    elif a.pilot == "v4_claim7":
        import torch
        from dataclasses import asdict

        torch.set_num_threads(1)
        acc = encoder_pilot(seeds=V4_PILOT_SEEDS, data_seed=V4_PILOT_DATA_SEED, m1=V4_M1, m2=v4_claim7_m2())
        choice = {"schema_version": 4, "claim": "claim7", "pilot": "v4_claim7", "pilot_seeds": list(V4_PILOT_SEEDS),
                  "data_seed": V4_PILOT_DATA_SEED, "rule": V4_CLAIM7_RULE, "m2": asdict(v4_claim7_m2()),
                  "grid": list(ENCODER_STEP_GRID), **choose_claim7(acc)}
    else:
        if not a.store:
            ap.error(f"--pilot {a.pilot} needs --store DIR (the pilot sweep's results store)")
        pilot = PILOTS[a.pilot]
        choice = {"claim": a.pilot, "pilot_seeds": list(pilot.seeds), "rule": pilot.rule,
                  **pilot.choose(pilot.data(a.store))}
    if a.out:

        write_json(a.out, choice)
    print(json.dumps(choice, indent=2))

