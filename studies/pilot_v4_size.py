"""Pilot of the version-4 testbed size: an M1 with 8 context pairs (copy baseline 1/8) and an M2
that stage 2 must learn (class-free distractor coordinates beside M2's class coordinates).

    OMP_NUM_THREADS=1 python studies/pilot_v4_size.py [--work results/pilot_v4] [--threads 1]

Why: at version 3's size (N = 4, B = 2: copy baseline 1/2) a random projector of M2 already gives
M2-necessary ICL of 0.79-0.98 with no stage 2 at all, so the multimodal claims (4-7) had no room to
move.  The two rules, stated and committed before this pilot ran, are code in
``mmicl.proofs.claims.testbed.pilots`` (``V4_STAGE1_RULE``, ``V4_DISTRACTOR_RULE``):

1. stage 1 at N = 8, B = 1 on the 2 layers x 4 heads decoder (width 32), one 10000-step run of the 8
   pilot seeds 9012-9019 (data seed 9): the smallest of (5000, 7500, 10000) steps at which at least
   7 of 8 seeds meet claim 4's stage-1 premise;
2. stage 2 on that run's 10000-step decoders, three M2 laws: sigma = 0 (version 3's M2, the control,
   an ensemble of its own since its items have fewer coordinates) and 48 distractor coordinates at
   sigma = 1 and 3 (one ensemble), each 2000 steps: the smallest
   sigma at which the no-stage-2 M2-necessary ICL (median) is at most B/N + 0.10 and stage 2 raises
   it by at least 0.30.

Stage 1's checkpoint and curves are kept under ``--work``, so a rerun goes straight to stage 2.  The
outcome, with every per-seed number the rules read, is written (atomically) to
studies/results/pilot_v4_size.json.
"""
from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _preload() -> None:
    """Import every testbed module now, so that an edit of the working tree while this runs does not
    reach it half-way (its lazy imports would read the edited files)."""
    import mmicl.numerics.testbed as tb

    for m in pkgutil.iter_modules(tb.__path__):
        importlib.import_module(f"{tb.__name__}.{m.name}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default=str(ROOT / "results" / "pilot_v4"), help="stage 1's checkpoint and curves")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--out", default=str(ROOT / "studies" / "results" / "pilot_v4_size.json"))
    a = ap.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    _preload()
    from mmicl.numerics.atomic import write_json
    from mmicl.numerics.testbed.checkpoint import Stage1
    from mmicl.numerics.testbed.config import ModelConfig, MultimodalConfig, SecondModality, TrainConfig
    from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, run_stage1, run_stage2
    from mmicl.proofs.claims.testbed import pilots as p
    from mmicl.proofs.claims.testbed.common import stage1_premise
    from mmicl.proofs.claims.testbed.design import EVAL_SIZE

    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    ckpt, curves_file = work / "stage1.pt", work / "stage1_curves.json"
    model = ModelConfig(layers=2, heads=4, width=32, mlp_ratio=2, pos="ape", ape_slots=21)
    s1_train = TrainConfig(steps=max(p.V4_STAGE1_STEP_GRID), batch=128, lr=2e-3, eval_every=250, eval_size=EVAL_SIZE)
    seeds = list(p.V4_PILOT_SEEDS)
    if ckpt.is_file() and curves_file.is_file():
        s1 = Stage1.load(ckpt)
        curves = json.loads(curves_file.read_text())
        print(f"stage 1 read from {ckpt}", flush=True)
    else:
        t0 = time.time()
        s1 = run_stage1(model, p.V4_M1, seeds, s1_train, data_seed=p.V4_PILOT_DATA_SEED)
        h = s1.history
        curves = {"steps": list(h.steps), "acc_icl": h.curve("acc_icl").tolist(),
                  "induction": h.curve("induction").tolist(), "seconds": round(time.time() - t0, 1)}
        s1.save(ckpt)
        write_json(curves_file, curves)
        print(f"stage 1: {curves['seconds']} s", flush=True)
    stage1_choice = p.choose_v4_stage1(curves)
    premise = stage1_premise(s1.final).tolist()
    print(json.dumps({"stage1": {k: v for k, v in stage1_choice.items() if k != "premise_met"},
                      "premise_at_end": premise}), flush=True)

    copy = p.V4_M1.B / p.V4_M1.N
    m2 = SecondModality(K=p.V4_M1.L, D=16, eps=0.1)
    sigmas = (0.0, *p.V4_DISTRACTOR_SCALES)
    arms = [MultimodalArm(f"sigma={s:g}", MultimodalConfig(
        p.V4_M1, m2 if s == 0 else replace(m2, distractor_dims=p.V4_DISTRACTOR_DIMS, distractor_scale=s)))
        for s in sigmas]
    s2_train = TrainConfig(steps=p.V4_STAGE2_STEPS, batch=128, lr=2e-3, eval_every=250, eval_size=EVAL_SIZE)
    t0, n, s2_curves = time.time(), len(seeds), {}
    for group in (arms[:1], arms[1:]):          # the control's items have D2 coordinates, the others D2 + 48
        r = run_stage2(s1, group, s2_train, data_seed=p.V4_PILOT_DATA_SEED, eval_on=("icl_m2only",))
        h = r.run.history
        m2only = h.curve("acc_icl_m2only").numpy()
        for i, arm in enumerate(group):
            s2_curves[sigmas[arms.index(arm)]] = {"steps": list(h.steps),
                                                  "acc_icl_m2only": m2only[:, i * n:(i + 1) * n].tolist()}
        print(f"stage 2 ({', '.join(a.name for a in group)}): {round(time.time() - t0, 1)} s", flush=True)
    s2_seconds = round(time.time() - t0, 1)
    choice = p.choose_v4_distractors({s: c for s, c in s2_curves.items() if s > 0}, premise, copy)
    control = p.choose_v4_distractors({0.0: s2_curves[0.0]}, premise, copy)["by_sigma"]["0"]
    doc = {"pilot": "v4_size", "pilot_seeds": seeds, "data_seed": p.V4_PILOT_DATA_SEED,
           "rules": {"stage1": p.V4_STAGE1_RULE, "distractors": p.V4_DISTRACTOR_RULE},
           "m1": asdict(p.V4_M1), "decoder": asdict(model), "stage1_train": asdict(s1_train),
           "stage2_train": asdict(s2_train), "copy": copy, "stage1": stage1_choice, "stage1_premise_at_end": premise,
           "stage1_seconds": curves.get("seconds"), "distractors": choice, "control_sigma0": control,
           "stage2_seconds": s2_seconds, "stage1_curves": curves,
           "stage2_curves": {f"{s:g}": c for s, c in s2_curves.items()}}
    write_json(a.out, doc)
    print(json.dumps({k: doc[k] for k in ("stage1", "distractors", "control_sigma0", "stage2_seconds")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
