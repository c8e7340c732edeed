"""A full-size pilot of testbed claims 2, 3, 5 and 7 on one GPU, inside a fixed time budget.

    python studies/gpu_pilot.py --device cuda [--budget-s 480] [--seeds 4] [--out studies/results/gpu_pilot.json]
    python studies/gpu_pilot.py --size toy --device cpu      # the same code at a toy size (the test suite)
    bash studies/gpu_pilot.sh                                  # on a lent device machine (installs, then runs)

Why: the testbed claims are piloted and decided at a quick size that runs on a CPU (N = 4-8 context
pairs, width 32, a few thousand steps: 0.5-4 % of the paper's training), and four of them ask whether
a statement survives a larger size: claim 2 (layers and heads against in-weights learning, with its
arms settled), claim 3 (RoPE's ICL threshold in K), claim 5 (a deeper decoder learns multimodal ICL
faster) and claim 7 (a better M2 encoder gives better multimodal ICL).  This pilot trains their arms
at the full sizes (``sizes.FULL``: N = 8, B = 2, L = 32, D = 64, width 64; ``sizes.MULTIMODAL_FULL``)
and records what a design at that size would need to know: where ICL and in-weights accuracy end,
whether each arm is settled over its last quarter, the stage-2 areas and their no-stage-2 baselines,
and the encoder doses' accuracies.  It decides nothing: no verdict seeds, no margins, pilot seeds
9100 onward (used by nothing else).

**The budget.**  Each part (claim) gets a quarter of ``--budget-s`` and divides it among its trainings.
Before each training the script times two short runs of the same ensemble (``calibrate``: the
difference of a 2k-step and a k-step run gives the seconds per step, the rest the fixed cost of
building and two evaluations) and trains for the step count that fills its share (``plan_steps``), at
most the full size's steps and at least ``MIN_STEPS``; the record keeps every planned step count, the
calibration and the seconds each training really took, so a reader sees how far short of the full
size's training each arm stopped.  At ``--size toy`` every training runs ``TOY_STEPS`` steps and the
budget is not read (unless ``--plan``: the suite's test of the planning).

Output: one JSON document (atomic write) with, per part, the settings, steps, seconds and per-seed
numbers; ``--out`` defaults to studies/results/gpu_pilot.json.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PILOT_SEEDS_FROM = 9100
"""The pilot's seeds are 9100, 9101, …: used by no verdict and by no other pilot."""
MIN_STEPS = 200
"""Fewest steps a budgeted training runs (below it the numbers say nothing about training)."""
TOY_STEPS = 4
EVALUATIONS = 9
"""Evaluations per training (every steps/8, the first at step 0)."""
PARTS = ("claim2", "claim3", "claim5", "claim7")


def plan_steps(per_step: float, fixed: float, budget: float, full_steps: int, evaluations: int = EVALUATIONS,
               min_steps: int = MIN_STEPS) -> int:
    """The step count that fills ``budget`` seconds when a step costs ``per_step`` and building the run
    with two evaluations costs ``fixed`` (so ``evaluations`` of them cost about ``fixed · evaluations /
    2``): at least ``min_steps``, at most ``full_steps`` (which wins), and rounded down to a multiple of
    8 (``EVALUATIONS`` − 1 intervals) from 8 steps on.  A ``ValueError`` for a per-step time that is not positive and finite."""
    if not (math.isfinite(per_step) and per_step > 0) or not math.isfinite(fixed) or budget < 0:
        raise ValueError(f"plan_steps needs a positive per-step time, a finite fixed cost and a budget ≥ 0; got "
                         f"{per_step!r}, {fixed!r}, {budget!r}")
    room = budget - max(fixed, 0.0) * evaluations / 2
    steps = int(room / per_step) if room > 0 else 0
    steps = min(int(full_steps), max(min_steps, steps))
    return steps if steps < 8 else steps - steps % 8


def calibrate(train_fn, k: int = 20) -> dict:
    """Seconds per step and fixed cost of ``train_fn(steps)`` (which trains that many steps, evaluating
    at the start and the end), from a k-step and a 2k-step run: per_step = (t_2k − t_k)/k, fixed = t_k
    − k·per_step; a per-step time that comes out ≤ 0 (timer noise) is taken as t_2k/(2k)."""
    t = []
    for steps in (k, 2 * k):
        t0 = time.perf_counter()
        train_fn(steps)
        t.append(time.perf_counter() - t0)
    per_step = (t[1] - t[0]) / k
    if per_step <= 0:
        per_step = t[1] / (2 * k)
    return {"per_step_s": per_step, "fixed_s": max(t[0] - k * per_step, 0.0), "k": k, "t_k_s": t[0], "t_2k_s": t[1]}


class Budget:
    """Step counts for the trainings of one part: ``steps_for(train_fn, share, full_steps)``."""

    def __init__(self, seconds: float | None, toy: bool, k: int = 20):
        self.seconds, self.toy, self.k, self.log = seconds, toy, k, []

    def steps_for(self, name: str, train_fn, share: float, full_steps: int) -> int:
        if self.toy:
            self.log.append({"training": name, "steps": TOY_STEPS})
            return TOY_STEPS
        cal = calibrate(train_fn, self.k)
        steps = plan_steps(cal["per_step_s"], cal["fixed_s"], self.seconds * share, full_steps)
        self.log.append({"training": name, "steps": steps, "full_size_steps": int(full_steps), "share_s":
                         self.seconds * share, **cal})
        return steps


def _train(sz_train, steps: int):
    return replace(sz_train, steps=int(steps), eval_every=max(1, int(steps) // (EVALUATIONS - 1)))


def _settled(curve: np.ndarray, steps, n_eval: int) -> dict:
    """Max − min over the last quarter per seed, against two binomial se of a difference of two rates at
    p = ½ on ``n_eval`` items (claim 2's settledness)."""
    s = np.asarray(steps, float)
    tail = np.asarray(curve, float)[s >= 0.75 * s[-1]]
    rng = tail.max(0) - tail.min(0)
    tol = 2 * math.sqrt(2 * 0.25 / n_eval)
    return {"last_quarter_range": rng.round(4).tolist(), "tolerance": tol, "settled": (rng <= tol).tolist()}


def _seconds(r) -> float:
    return float(getattr(r.run.history, "seconds", float("nan")))


# ---- the sizes ------------------------------------------------------------------------------------
def sizes(size: str):
    """(unimodal, multimodal) sizes of the pilot: the full ones, or a toy pair for the suite."""
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, SecondModality, TrainConfig
    from mmicl.proofs.claims.testbed.sizes import FULL, MULTIMODAL_FULL

    if size == "full":
        return FULL, MULTIMODAL_FULL
    if size != "toy":
        raise SystemExit(f"--size must be full or toy, got {size!r}")
    train = TrainConfig(steps=TOY_STEPS, batch=8, lr=1e-3, eval_every=2, eval_size=16)
    uni = replace(FULL, data=DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1),
                  model=ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, pos="ape", ape_slots=9), train=train,
                  K_lo=8, K_mid=16, K_hi=64)
    multi = replace(MULTIMODAL_FULL, m1=DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1),
                    model=ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, pos="ape", ape_slots=21),
                    stage1=train, stage2=train, m2=SecondModality(K=4, D=4, eps=0.1), deep_layers=3,
                    encoder_K2=8, encoder_steps=(0, 1, 2))
    return uni, multi


# ---- the parts --------------------------------------------------------------------------------------
def part_claim2(uni, seeds, device, budget: Budget) -> dict:
    """Claim 2: 2 layers × 1 head, 2 × 4 and 4 × 1 at K_mid, bursty; final ICL, in-weights accuracy,
    flip accuracy and the ICL set's copy rate, settled or not over the last quarter."""
    from mmicl.numerics.testbed.experiments import Arm, run_arms

    data = replace(uni.data, K=uni.K_mid)
    arms = [Arm(f"K={uni.K_mid}", data)]
    shapes = {"base": uni.model, "heads": replace(uni.model, heads=4), "deep": replace(uni.model, layers=4)}
    out = {"data": asdict(data), "shapes": {k: asdict(m) for k, m in shapes.items()}, "arms": {}}
    for name, model in shapes.items():
        def train(steps, model=model):
            return run_arms(model, arms, seeds, _train(uni.train, steps), device=device, data_seed=PILOT_SEEDS_FROM)
        steps = budget.steps_for(f"claim2 {name}", train, 1 / 3, uni.train.steps)
        r = train(steps)
        arm = arms[0].name
        out["arms"][name] = {"steps": steps, "seconds": _seconds(r),
                             **{m: r.final(m, arm).round(4).tolist() for m in ("acc_icl", "acc_iwl", "acc_flip",
                                                                               "icl_context_rate")},
                             "copy_rate": _settled(r.curve("icl_context_rate", arm), r.steps, uni.train.eval_size)}
    return out


def part_claim3(uni, seeds, device, budget: Budget) -> dict:
    """Claim 3: APE and RoPE at K_lo, K_mid and K_hi (one ensemble per position code, the three K's its
    arms); final ICL and the strongest induction and previous-token scores."""
    from mmicl.numerics.testbed.experiments import Arm, run_arms

    Ks = (uni.K_lo, uni.K_mid, uni.K_hi)
    arms = [Arm(f"K={k}", replace(uni.data, K=k)) for k in Ks]
    out = {"K": list(Ks), "arms": {}}
    for pos in ("ape", "rope"):
        model = replace(uni.model, pos=pos)

        def train(steps, model=model):
            return run_arms(model, arms, seeds, _train(uni.train, steps), device=device, data_seed=PILOT_SEEDS_FROM + 1)
        steps = budget.steps_for(f"claim3 {pos}", train, 1 / 2, uni.train.steps)
        r = train(steps)
        out["arms"][pos] = {"steps": steps, "seconds": _seconds(r),
                            **{a.name: {m: r.final(m, a.name).round(4).tolist()
                                        for m in ("acc_icl", "induction_max", "prev_token_max")} for a in arms}}
    return out


def _stage1(multi, model, seeds, device, budget: Budget, name: str, share: float):
    from mmicl.numerics.testbed.multimodal_experiments import run_stage1

    def train(steps):
        return run_stage1(model, multi.m1, seeds, _train(multi.stage1, steps), device=device,
                          data_seed=PILOT_SEEDS_FROM + 2)
    steps = budget.steps_for(name, train, share, multi.stage1.steps)
    return train(steps), steps


def _stage2(s1, arms, multi, device, budget: Budget, name: str, share: float):
    from mmicl.numerics.testbed.multimodal_experiments import run_stage2

    def train(steps):
        return run_stage2(s1, arms, _train(multi.stage2, steps), device=device, data_seed=PILOT_SEEDS_FROM + 2)
    steps = budget.steps_for(name, train, share, multi.stage2.steps)
    return train(steps), steps


def _m2(multi):
    """The pilot's M2: the full size's, with class-free distractor coordinates at version 4's ratio
    (three per class coordinate, scale 3: not piloted at this size)."""
    return replace(multi.m2, distractor_dims=3 * multi.m2.D, distractor_scale=3.0)


def _stage1_numbers(s1) -> dict:
    final = s1.final
    acc = np.asarray(final["acc_icl"], float)
    return {"acc_icl": acc.round(4).tolist(),
            "induction_max": np.asarray(final["induction"], float).reshape(acc.size, -1).max(1).round(4).tolist()}


def part_claim5(multi, seeds, device, budget: Budget) -> dict:
    """Claim 5: the 2-layer base and a deeper decoder (4 heads per layer, as version 4), stage 1 on M1,
    then stage 2 at K2 = L on an M2 with distractors; the area under the stage-2 curve of M2-necessary ICL,
    its no-stage-2 value (step 0) and its final value."""
    from mmicl.numerics.testbed.config import MultimodalConfig
    from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm

    base = replace(multi.model, heads=4)
    shapes = {"base": base, "deep": replace(base, layers=multi.deep_layers)}
    arm = MultimodalArm(f"K2={multi.m1.L}", MultimodalConfig(multi.m1, replace(_m2(multi), K=multi.m1.L)))
    out = {"m2": asdict(arm.data.m2), "shapes": {k: asdict(m) for k, m in shapes.items()}, "arms": {}}
    stage1 = {}
    for name, model in shapes.items():
        s1, steps1 = _stage1(multi, model, seeds, device, budget, f"claim5 stage 1 {name}", 1 / 3)
        r, steps2 = _stage2(s1, [arm], multi, device, budget, f"claim5 stage 2 {name}", 1 / 6)
        curve = r.curve("acc_icl_m2only", arm.name)
        out["arms"][name] = {"stage1_steps": steps1, "stage2_steps": steps2, "stage1": _stage1_numbers(s1),
                             "auc_icl_m2only": r.area_under("acc_icl_m2only", arm.name).round(4).tolist(),
                             "no_stage2": curve[0].round(4).tolist(), "final": curve[-1].round(4).tolist(),
                             "seconds": _seconds(r)}
        stage1[name] = s1
    out["_stage1"] = stage1["base"]
    return out


def part_claim7(multi, seeds, device, budget: Budget, s1=None) -> dict:
    """Claim 7: on the claim-5 base stage 1 (or a fresh one), stage 2 on known-class M2-necessary ICL
    with an M2 encoder pretrained for each of the full size's doses (features standardised); per dose
    the encoder's held-out accuracy and the area under the stage-2 curve, and per seed the least-squares
    slope of the area on the accuracy."""
    from mmicl.numerics.testbed.config import MultimodalConfig
    from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm

    if s1 is None:
        s1, _ = _stage1(multi, replace(multi.model, heads=4), seeds, device, budget, "claim7 stage 1", 1 / 2)
    data = MultimodalConfig(multi.m1, replace(multi.m2, K=multi.encoder_K2, eps=multi.encoder_eps2))
    arms = [MultimodalArm(f"dose{k}_steps{s}", data, encoder_steps=s, standardise_features=True)
            for k, s in enumerate(multi.encoder_steps)]
    r, steps = _stage2(s1, arms, multi, device, budget, "claim7 stage 2", 1 / 2)
    acc = np.stack([r.final("encoder_acc", a.name) for a in arms]).astype(float)
    auc = np.stack([r.area_under("acc_icl_m2known", a.name) for a in arms]).astype(float)
    xc = acc - acc.mean(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (xc * (auc - auc.mean(0))).sum(0) / (xc ** 2).sum(0)
    return {"encoder_steps": list(multi.encoder_steps), "stage2_steps": steps, "seconds": _seconds(r),
            "encoder_accuracy": acc.round(4).tolist(), "auc_icl_m2known": auc.round(4).tolist(),
            "slope": [None if not math.isfinite(v) else round(float(v), 4) for v in slope]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="full", choices=("full", "toy"))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--budget-s", type=float, default=480.0, help="seconds of training for all four parts together")
    ap.add_argument("--seeds", type=int, default=4, help="pilot seeds per ensemble (9100 onward)")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    ap.add_argument("--plan", action="store_true", help="plan the steps from the budget at --size toy too (a test of "
                    "the planning; at the full size it always is)")
    ap.add_argument("--out", default=str(ROOT / "studies" / "results" / "gpu_pilot.json"))
    a = ap.parse_args(argv)
    parts = [p for p in a.parts.split(",") if p]
    if not parts or set(parts) - set(PARTS):
        ap.error(f"--parts takes names of {', '.join(PARTS)}, got {a.parts!r}")
    if a.seeds < 1 or a.budget_s <= 0:
        ap.error("--seeds must be ≥ 1 and --budget-s > 0")

    import torch

    if a.device == "cuda" and not torch.cuda.is_available():
        print("gpu_pilot: --device cuda but torch sees no CUDA device; on a CPU run --size toy --device cpu",
              file=sys.stderr)
        return 2
    from mmicl.numerics.atomic import write_json
    from mmicl.numerics.provenance import __version__

    uni, multi = sizes(a.size)
    seeds = list(range(PILOT_SEEDS_FROM, PILOT_SEEDS_FROM + a.seeds))
    budget = Budget(a.budget_s / len(parts), a.size == "toy" and not a.plan, k=2 if a.size == "toy" else 20)
    doc = {"schema_version": 4, "pilot": "gpu_pilot", "size": a.size, "device": a.device, "seeds": seeds,
           "budget_s": a.budget_s, "mmicl": __version__, "torch": torch.__version__,
           "gpu": torch.cuda.get_device_name(0) if a.device == "cuda" else None, "parts": {}}
    t0, stage1 = time.perf_counter(), None
    for p in parts:
        t = time.perf_counter()
        if p == "claim2":
            got = part_claim2(uni, seeds, a.device, budget)
        elif p == "claim3":
            got = part_claim3(uni, seeds, a.device, budget)
        elif p == "claim5":
            got = part_claim5(multi, seeds, a.device, budget)
            stage1 = got.pop("_stage1")
        else:
            got = part_claim7(multi, seeds, a.device, budget, stage1)
        doc["parts"][p] = {**got, "wall_s": round(time.perf_counter() - t, 2)}
        print(f"gpu_pilot: {p} done in {doc['parts'][p]['wall_s']:.1f} s", flush=True)
    doc["plan"] = budget.log
    doc["wall_s"] = round(time.perf_counter() - t0, 2)
    write_json(a.out, doc)
    print(json.dumps({"wall_s": doc["wall_s"], "parts": {p: v["wall_s"] for p, v in doc["parts"].items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
