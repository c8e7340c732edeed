"""Pilot of testbed claim 8's heads per layer at the version-4 size, on the size pilot's decoders.

    OMP_NUM_THREADS=1 python studies/pilot_v4_claim8.py [--work results/pilot_v4]
    OMP_NUM_THREADS=1 python studies/pilot_v4_claim8.py --heads 8   # the 8-head pilot (trains, ~10 min)

Reads the 10000-step stage-1 checkpoint that studies/pilot_v4_size.py leaves under ``--work`` (2 layers
x 4 heads, N = 8, B = 1, K = 16384, pilot seeds 9012-9019), runs claim 8's own analysis on it
(``heads.induction_circuit`` with claim 8's thresholds and seeds, evaluation sets of EVAL_SIZE
sequences) and applies the rule ``pilots.V4_CLAIM8_RULE`` (committed before this ran): 4 heads per
layer if at least 7 of the 8 seeds meet every version-4 premise of claim 8, else 8.  Writes the
choice and every per-seed number it read to studies/results/pilot_v4_claim8.json (atomically).

With ``--heads 8`` (``pilots.V4_CLAIM8_8HEADS_RULE``, committed before it ran) it first trains 2 layers x
8 heads for the version-4 stage-1 steps on the same seeds and data seed (checkpoint kept under
``--work``), analyses those decoders the same way and writes studies/results/pilot_v4_claim8_8heads.json.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default=str(ROOT / "results" / "pilot_v4"))
    ap.add_argument("--heads", type=int, choices=(4, 8), default=4,
                    help="4: read the size pilot's decoders; 8: train and read the 8-head ones")
    ap.add_argument("--out", default=None, help="default studies/results/pilot_v4_claim8[_8heads].json")
    a = ap.parse_args(argv)
    out_file = a.out or str(ROOT / "studies" / "results" / f"pilot_v4_claim8{'_8heads' if a.heads == 8 else ''}.json")

    import numpy as np
    import torch

    torch.set_num_threads(1)
    from mmicl.numerics.atomic import write_json
    from mmicl.numerics.testbed.checkpoint import Stage1
    from mmicl.numerics.testbed.data import Mixture
    from mmicl.numerics.testbed.heads import MATCHED_RULE, induction_circuit
    from mmicl.numerics.testbed.metrics import EvalSets
    from mmicl.numerics.testbed.multimodal_model import decoder_from_states
    from mmicl.numerics.testbed.train import History, TrainedEnsemble
    from mmicl.proofs.claims.testbed import pilots as p
    from mmicl.proofs.claims.testbed.design import EVAL_SIZE
    from mmicl.proofs.claims.testbed.unimodal import (CONTROL_SEED, INDUCTION_HEAD, PREV_TOKEN_HEAD, REFERENCE_SEED,
                                                      SELECTION_SEED)

    from dataclasses import replace

    from mmicl.numerics.testbed.config import TrainConfig
    from mmicl.numerics.testbed.multimodal_experiments import run_stage1

    if a.heads == 4:
        s1 = Stage1.load(Path(a.work) / "stage1.pt")
    else:
        ckpt = Path(a.work) / "claim8_8heads.pt"
        if ckpt.is_file():
            s1 = Stage1.load(ckpt)
        else:
            base = Stage1.load(Path(a.work) / "stage1.pt")
            chosen = p.choose_v4_stage1(json.loads((Path(a.work) / "stage1_curves.json").read_text()))["steps"]
            if chosen is None:
                raise SystemExit("the size pilot's stage-1 rule chose no step count: nothing to train")
            train = TrainConfig(steps=int(chosen), batch=128, lr=2e-3, eval_every=250, eval_size=EVAL_SIZE)
            s1 = run_stage1(replace(base.model, heads=8), p.V4_M1, list(p.V4_PILOT_SEEDS), train,
                            data_seed=p.V4_PILOT_DATA_SEED)
            s1.save(ckpt)
    mix = Mixture(s1.members)
    mix.means, mix.label_vectors = s1.means, s1.label_vectors
    dec = decoder_from_states(s1.model, mix.D, mix.L, [s1.state(e) for e in range(s1.E)], [m.seed for m in s1.members])
    sets = EvalSets.draw(mix, EVAL_SIZE, seed=s1.data_seed + 1_000_003, ape_slots=s1.model.ape_slots)
    out = induction_circuit(TrainedEnsemble(dec, mix, sets, History(), s1.members), EVAL_SIZE, SELECTION_SEED,
                            REFERENCE_SEED, INDUCTION_HEAD, PREV_TOKEN_HEAD, CONTROL_SEED)
    copy = p.V4_M1.B / p.V4_M1.N
    choice = p.choose_v4_claim8_heads(out, copy)
    per_layer = {k: np.asarray(out[f"{k}_heads"]).sum(-1).tolist() for k in ("induction", "neither", "prev_token")}
    doc = {"pilot": "v4_claim8" if a.heads == 4 else "v4_claim8_8heads", "pilot_seeds": [m.seed for m in s1.members],
           "decoder_heads": s1.model.heads, "steps": s1.train.steps,
           "rule": p.V4_CLAIM8_RULE if a.heads == 4 else p.V4_CLAIM8_8HEADS_RULE,
           "matched_rule": MATCHED_RULE, "copy": copy, **choice, "heads_per_layer": per_layer,
           "ablations": {k: np.round(v, 4).tolist() for k, v in out.items() if k.startswith("icl")},
           "analysis": out}
    write_json(out_file, doc)
    print(json.dumps({k: doc[k] for k in ("heads", "count", "all_premises", "heads_per_layer", "ablations")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
