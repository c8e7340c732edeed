"""Pilot of testbed claim 6: the fusion arm's K2 and step count on the 4-head decoder.

    OMP_NUM_THREADS=1 python studies/pilot_claim6.py [--store results/pilot_claim6] [--threads 1]

Why: version 3's early fusion (2 layers x 1 head, K2 = 1024, 6500 steps) learnt ICL on 4 of the 16
verdict seeds; version 3.1 trains every decoder of the claim with 2 layers x 4 heads, as the
version-3.1 stage 1 (studies/results/pilot_stage1_v31.json), and takes "fusion learns ICL" (the
confounded ICL set above B/N + 2 se) as its premise.  The rule in code is pilots.choose_claim6 (pilots.CLAIM6_RULE): the smallest K2 of (1024, 4096)
at which, at some step count of (6500, 9750, 13000), at least 7 of the 8 pilot seeds (9004-9011)
meet the fusion premise, and at that K2 the longest step count, provided all 8 meet it there; read
on one 13000-step run per K2 (Adam at a constant learning rate, no warm-up: the model at step s is
the one an s-step run ends with); K2 = 4096 is run only if K2 = 1024 meets it at no step count.  The
K2 part was committed before the pilot ran, the step part after a verdict run that took the fewest
steps with 7 of 8 (docs/records/testbed-superseded-rules.md); the committed file records the
choice of that earlier step rule beside the pilot's counts.

The runs go through a results store, so a killed pilot resumes where it stopped.  It writes the
choice, the premise counts and the curves to studies/results/pilot_claim6.json (atomically; the
committed run is studies/results/pilot_claim6_v31.json).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def curves(record: dict, copy: float) -> dict:
    h = record["result"]["history"]
    return {"steps": list(h["steps"]), "acc_icl": h["metrics"]["acc_icl"], "copy": copy,
            "seconds": record["provenance"].get("seconds")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", default=str(ROOT / "results" / "pilot_claim6"), help="the pilot's results store")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--out", default=str(ROOT / "studies" / "results" / "pilot_claim6.json"))
    a = ap.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    from mmicl.numerics.atomic import write_json
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.claims.testbed import modalities as m
    from mmicl.proofs.claims.testbed import pilots
    from mmicl.proofs.claims.testbed.sizes import MULTIMODAL_QUICK as QUICK
    from mmicl.proofs.claims.testbed.transfer import STAGE1_HEADS
    from mmicl.numerics.runs.runner import finished_records, run_pending
    from mmicl.numerics.runs.artifacts import using_store
    from mmicl.numerics.runs.kinds import KINDS
    from mmicl.numerics.runs.spec import RunSpec
    from mmicl.numerics.runs.store import Store

    config, sz = RunConfig(quick=True), QUICK
    copy = sz.m1.B / sz.m1.N
    store = Store(Path(a.store))
    got, choice = {}, None
    for k2 in pilots.FUSION_K2_GRID:
        arm = m.claim6_arm(sz, k2)
        kind, settings = m.fusion_spec(config, sz, arm, pilots.STAGE1_PILOT_SEEDS, max(pilots.FUSION_STEP_GRID), STAGE1_HEADS)
        spec = RunSpec(kind, KINDS[kind].normalise(settings))
        with using_store(store):
            run_pending([spec], store)
        got[k2] = curves(finished_records({f"fusion K2={k2}": spec}, store, "pilot run")[f"fusion K2={k2}"], copy)
        choice = pilots.choose_claim6(got)
        if choice["K2"] is not None:
            break
    doc = {"claim": "claim6", "pilot_seeds": list(pilots.STAGE1_PILOT_SEEDS), "rule": pilots.CLAIM6_RULE,
           "heads": STAGE1_HEADS, "layout": m.LAYOUT6, **choice,
           "curves": {str(k): v for k, v in got.items()}}
    write_json(a.out, doc)
    print(json.dumps({k: v for k, v in doc.items() if k != "curves"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
