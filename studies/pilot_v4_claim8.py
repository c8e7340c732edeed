"""Pilot of testbed claim 8's heads per layer at the version-4 size, on the size pilot's decoders.

    OMP_NUM_THREADS=1 python studies/pilot_v4_claim8.py [--work results/pilot_v4]

Reads the 10000-step stage-1 checkpoint that studies/pilot_v4_size.py leaves under ``--work`` (2 layers
x 4 heads, N = 8, B = 1, K = 16384, pilot seeds 9012-9019), runs claim 8's own analysis on it
(``heads.induction_circuit`` with claim 8's thresholds and seeds, evaluation sets of EVAL_SIZE
sequences) and applies the rule ``pilots.V4_CLAIM8_RULE`` (committed before this ran): 4 heads per
layer if at least 7 of the 8 seeds meet every version-4 premise of claim 8, else 8.  Writes the
choice and every per-seed number it read to studies/results/pilot_v4_claim8.json (atomically).
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
    ap.add_argument("--out", default=str(ROOT / "studies" / "results" / "pilot_v4_claim8.json"))
    a = ap.parse_args(argv)

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

    s1 = Stage1.load(Path(a.work) / "stage1.pt")
    mix = Mixture(s1.members)
    mix.means, mix.label_vectors = s1.means, s1.label_vectors
    dec = decoder_from_states(s1.model, mix.D, mix.L, [s1.state(e) for e in range(s1.E)], [m.seed for m in s1.members])
    sets = EvalSets.draw(mix, EVAL_SIZE, seed=s1.data_seed + 1_000_003, ape_slots=s1.model.ape_slots)
    out = induction_circuit(TrainedEnsemble(dec, mix, sets, History(), s1.members), EVAL_SIZE, SELECTION_SEED,
                            REFERENCE_SEED, INDUCTION_HEAD, PREV_TOKEN_HEAD, CONTROL_SEED)
    copy = p.V4_M1.B / p.V4_M1.N
    choice = p.choose_v4_claim8_heads(out, copy)
    per_layer = {k: np.asarray(out[f"{k}_heads"]).sum(-1).tolist() for k in ("induction", "neither", "prev_token")}
    doc = {"pilot": "v4_claim8", "pilot_seeds": [m.seed for m in s1.members], "rule": p.V4_CLAIM8_RULE,
           "matched_rule": MATCHED_RULE, "copy": copy, **choice, "heads_per_layer": per_layer,
           "ablations": {k: np.round(v, 4).tolist() for k, v in out.items() if k.startswith("icl")},
           "analysis": out}
    write_json(a.out, doc)
    print(json.dumps({k: doc[k] for k in ("heads", "count", "all_premises", "heads_per_layer", "ablations")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
