"""Pilot of testbed claim 6, version 4: fusion's K2 and step count at version 4's size.

    OMP_NUM_THREADS=1 python studies/pilot_v4_claim6.py [--store results/pilot_v4_claim6] [--threads 1]

Why: version 4 runs claim 6 at N = 8 pairs of one class each (copy baseline 1/8), on the 2 layers x 4
heads decoder, with an M2 whose items carry class-free distractor coordinates; early fusion trains
decoder and projector from scratch there, and how long it takes to leave the copy plateau at this size
is unknown (at version 3's N = 4 it took 3000-9750 steps, seed by seed).  The rule, stated and
committed before this pilot ran, is code in ``mmicl.proofs.claims.testbed.pilots``
(``V4_CLAIM6_RULE``, ``choose_v4_claim6``): the smallest K2 of (1024, 4096) at which, at some step
count of (10000, 15000, 20000), at least 7 of the 8 pilot seeds 9012-9019 (data seed 9) do multimodal
ICL (confounded ICL above B/N + 0.10 + 2 se), and at that K2 the grid point after the first at which
all 8 do (20000 when none is, or when that is the last); read on one 20000-step fusion run per K2 in
the layout ``readout_last`` (Adam at a constant learning rate: the model at step s is the one an
s-step run ends with); K2 = 4096 runs only if 1024 qualifies at no step count.

The runs go through a results store, so a killed pilot resumes where it stopped.  It writes the
choice, the premise counts and the curves to studies/results/pilot_v4_claim6.json (atomically).
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
            "acc_icl_m1only": h["metrics"]["acc_icl_m1only"], "acc_icl_m2only": h["metrics"]["acc_icl_m2only"],
            "conflict_follow_m1": h["metrics"]["conflict_follow_m1"],
            "conflict_follow_m2": h["metrics"]["conflict_follow_m2"], "seconds": record["provenance"].get("seconds")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", default=str(ROOT / "results" / "pilot_v4_claim6"), help="the pilot's results store")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--out", default=str(ROOT / "studies" / "results" / "pilot_v4_claim6.json"))
    a = ap.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    from mmicl.numerics.atomic import write_json
    from mmicl.numerics.runs.artifacts import using_store
    from mmicl.numerics.runs.kinds import KINDS
    from mmicl.numerics.runs.runner import finished_records, run_pending
    from mmicl.numerics.runs.spec import RunSpec
    from mmicl.numerics.runs.store import Store
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.claims.testbed import modalities as m
    from mmicl.proofs.claims.testbed import pilots
    from mmicl.proofs.claims.testbed.transfer import v4_size

    config = RunConfig(quick=True)
    sz = v4_size(config, "claim6")
    copy = sz.m1.B / sz.m1.N
    store = Store(Path(a.store))
    got, choice = {}, None
    for k2 in pilots.V4_FUSION_K2_GRID:
        arm = m.claim6_arm(sz, k2, m.LAYOUT6)
        kind, settings = m.fusion_spec(config, sz, arm, pilots.V4_PILOT_SEEDS, max(pilots.V4_FUSION_STEP_GRID),
                                       sz.model.heads, data_seed=pilots.V4_PILOT_DATA_SEED)
        spec = RunSpec(kind, KINDS[kind].normalise(settings))
        with using_store(store):
            run_pending([spec], store)
        got[k2] = curves(finished_records({f"fusion K2={k2}": spec}, store, "pilot run")[f"fusion K2={k2}"], copy)
        choice = pilots.choose_v4_claim6(got)
        if choice["K2"] is not None:
            break
    doc = {"schema_version": 4, "pilot": "v4_claim6", "claim": "claim6", "pilot_seeds": list(pilots.V4_PILOT_SEEDS),
           "data_seed": pilots.V4_PILOT_DATA_SEED, "rule": pilots.V4_CLAIM6_RULE, "heads": sz.model.heads,
           "layout": m.LAYOUT6, "m1": sz.m1.__dict__, "m2": sz.m2.__dict__, **choice,
           "curves": {str(k): v for k, v in got.items()}}
    write_json(a.out, doc)
    print(json.dumps({k: v for k, v in doc.items() if k not in ("curves", "premise_met")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
