"""Settledness pilots of testbed claims 2 and 3, version 4: the step count at which every arm settles.

    OMP_NUM_THREADS=1 python studies/pilot_v4_settled.py claim2|claim3 [--work results/pilot_v4_settled] [--threads 1]

Why: version 3's claim 2 was hypothesis-not-met because its 4-layer arm was still moving after 3000
steps, and its claim 3 could not tell a higher ICL threshold from a delay; version 4 trains both for a
step count at which every arm has settled.  The rules, stated and committed before these pilots ran,
are code in ``mmicl.proofs.claims.testbed.pilots`` (``V4_CLAIM2_RULE``, ``V4_CLAIM3_RULE``,
``choose_settled_steps``): the smallest of (5000, 10000, 15000) steps at which every arm's curve (claim
2: the ICL set's copy rate; claim 3: ICL) moved by at most 0.044 over the last quarter on every one of
the 4 pilot seeds 9012-9015 (data seed 9), read on one 15000-step run of each of the claim's own model
shapes (``unimodal.claim2_pilot_jobs``, ``claim3_pilot_jobs``; claim 2 at claim 1's piloted K_edge, so
claim 1's pilot comes first).  The runs go through a results store under ``--work``, so a killed
pilot resumes.  It writes the choice, the per-seed settledness and the curves to
studies/results/pilot_v4_<claim>.json (atomically).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("claim", choices=("claim2", "claim3"))
    ap.add_argument("--work", default=str(ROOT / "results" / "pilot_v4_settled"), help="the pilots' working folder")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    ap.add_argument("--out", default=None, help="default studies/results/pilot_v4_<claim>.json")
    a = ap.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    from dataclasses import asdict

    from mmicl.numerics.atomic import write_json
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.claims.testbed import pilots, unimodal
    from mmicl.proofs.claims.testbed.common import ensembles
    from mmicl.proofs.claims.testbed.sizes import V4_HEADS, v4_unimodal_size

    config = RunConfig(quick=True, out=Path(a.work))
    sz = v4_unimodal_size(config, a.claim, V4_HEADS, max(pilots.V4_SETTLED_STEP_GRID))
    if a.claim == "claim2":
        if "v4_claim1" not in pilots.PILOTED:
            raise SystemExit("claim 2 runs at claim 1's K_edge: run studies/pilot_v4_claim1.py and record its choice first")
        jobs, metric, rule = unimodal.claim2_pilot_jobs(sz, pilots.PILOTED["v4_claim1"]["K_edge"]), "icl_context_rate", \
            pilots.V4_CLAIM2_RULE
    else:
        jobs, metric, rule = unimodal.claim3_pilot_jobs(sz), "acc_icl", pilots.V4_CLAIM3_RULE
    done = ensembles(config, jobs, list(pilots.V4_SETTLED_PILOT_SEEDS), sz.train, pilots.V4_PILOT_DATA_SEED)
    curves, finals, seconds = {}, {}, {}
    for name, (results, record) in done.items():
        for arm in jobs[name][1]:
            key = f"{name} {arm.name}"
            curves[key] = {"steps": [int(s) for s in results.steps],
                           "curve": results.curve(metric, arm.name).round(4).tolist()}
            finals[key] = {m: results.final(m, arm.name).round(4).tolist() for m in ("acc_icl", "icl_context_rate")}
        seconds[name] = float(record["provenance"]["seconds"])
    choice = pilots.choose_settled_steps(curves)
    doc = {"schema_version": 4, "pilot": f"v4_{a.claim}", "claim": a.claim,
           "pilot_seeds": list(pilots.V4_SETTLED_PILOT_SEEDS), "data_seed": pilots.V4_PILOT_DATA_SEED, "rule": rule,
           "metric": metric, "tolerance": pilots.SETTLED_TOL, "train": asdict(sz.train),
           "shapes": {n: asdict(job[0]) for n, job in jobs.items()}, **choice, "finals": finals,
           "seconds": seconds, "curves": curves}
    out = a.out or str(ROOT / "studies" / "results" / f"pilot_v4_{a.claim}.json")
    write_json(out, doc)
    print(json.dumps({k: doc[k] for k in ("steps", "settled_counts", "seconds") if k in doc}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
