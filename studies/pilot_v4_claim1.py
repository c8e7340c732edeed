"""Pilot of testbed claim 1, version 4: K_edge, the K at which the ε dose is read.

    OMP_NUM_THREADS=1 python studies/pilot_v4_claim1.py [--work results/pilot_v4_claim1] [--threads 1]

Why: version 4 runs claim 1 at N = 8 pairs of one class each (copy baseline 1/8) on the 2 layers x 4
heads decoder, where no run has yet said at which K bursty training with ε = 0.1 leaves ICL short of
its ceiling (version 3's K_edge, 256, was chosen at N = 4).  The rule, stated and committed before this
pilot ran, is code in ``mmicl.proofs.claims.testbed.pilots`` (``V4_CLAIM1_RULE``, ``choose_v4_claim1``):
the largest K of (256, 1024, 4096) at which the median final ICL of the 8 pilot seeds 9012-9019
(data seed 9) is below 0.9; the smallest when none is.  The three K's train as one ensemble of claim
1's own shape and steps (``common.ensembles``, its results store under ``--work``, so a killed pilot
resumes), about 25 minutes on one CPU thread.  It writes the choice, the medians and every seed's
final ICL and copy rate to studies/results/pilot_v4_claim1.json (atomically).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--work", default=str(ROOT / "results" / "pilot_v4_claim1"), help="the pilot's working folder")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--out", default=str(ROOT / "studies" / "results" / "pilot_v4_claim1.json"))
    a = ap.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    from dataclasses import asdict, replace

    from mmicl.numerics.atomic import write_json
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.claims.testbed import pilots
    from mmicl.proofs.claims.testbed.common import ensembles
    from mmicl.proofs.claims.testbed.sizes import CLAIM1_V4, V4_HEADS, v4_unimodal_size
    from mmicl.proofs.claims.testbed.unimodal import claim1_arm

    config = RunConfig(quick=True, out=Path(a.work))
    sz = v4_unimodal_size(config, "claim1", V4_HEADS, pilots.PILOTED["v4_stage1"]["steps"])
    arms = {k: claim1_arm(replace(sz.data, K=k, p_bursty=1.0, eps=0.1, zipf=0.0)) for k in CLAIM1_V4.K_edge_grid}
    results, record = ensembles(config, {"pilot": (sz.model, list(arms.values()), None)}, list(pilots.V4_PILOT_SEEDS),
                                sz.train, pilots.V4_PILOT_DATA_SEED)["pilot"]
    finals = {k: results.final("acc_icl", arm.name).round(4).tolist() for k, arm in arms.items()}
    copy_rate = {str(k): results.final("icl_context_rate", arm.name).round(4).tolist() for k, arm in arms.items()}
    choice = pilots.choose_v4_claim1(finals)
    doc = {"schema_version": 4, "pilot": "v4_claim1", "claim": "claim1", "pilot_seeds": list(pilots.V4_PILOT_SEEDS),
           "data_seed": pilots.V4_PILOT_DATA_SEED, "rule": pilots.V4_CLAIM1_RULE, "model": asdict(sz.model),
           "train": asdict(sz.train), "data": asdict(sz.data), "copy": sz.data.B / sz.data.N, **choice,
           "finals": {str(k): v for k, v in finals.items()}, "icl_copy_rate": copy_rate,
           "seconds": float(record["provenance"]["seconds"])}
    write_json(a.out, doc)
    print(json.dumps({k: doc[k] for k in ("K_edge", "medians", "finals", "seconds")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
