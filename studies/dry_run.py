"""Dry run of a testbed claim on the pilot seeds (9000–9003), never on verdict seeds.

It runs the claim exactly as its verdict run would (arms, sizes, evaluation sets, rule), with the
two seed families replaced by the pilot seeds split in two (A: 9000–9001, B: 9002–9003), to see
before the verdict run whether the pre-registered design can decide (its premises hold, its
measures are off their ceilings).  Two seeds per family cannot decide a sign test at α = 0.05, so
a dry run's checks are undecided by construction: read its per-seed differences and premises, not
its verdict.  A design changed after a dry run is reported with the dry run that motivated it.

    python studies/dry_run.py claim8 [--out results/dry_run] [--json studies/results/dry_run_claim8.json]
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from mmicl.numerics.atomic import write_json
from mmicl.proofs.claim import RunConfig
from mmicl.proofs.claims.testbed import common, design, modalities, transfer, unimodal
from mmicl.proofs.claims.testbed.design import PILOT_SEEDS
from mmicl.proofs.registry import REGISTRY


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("claim", help="claim1, claim2, claim3, claim4, claim5, claim8 or claim9")
    ap.add_argument("--out", default="results/dry_run", help="results folder (the runs store is OUT/testbed/runs)")
    ap.add_argument("--json", help="also write the checks' numbers and the premises here (atomically)")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    families = {"A": PILOT_SEEDS[:2], "B": PILOT_SEEDS[2:]}
    for module in (design, common, unimodal, transfer, modalities):   # each binds FAMILIES at import
        module.FAMILIES = families
    t0 = time.time()
    res = REGISTRY[f"testbed.{a.claim}"].run(RunConfig(quick=True, out=a.out, seed=0))
    doc = {"claim": a.claim, "families": {f: list(s) for f, s in families.items()},
           "seconds": round(time.time() - t0, 1), "verdict": res.verdict, "reason": res.verdict_reason,
           "hypotheses": [{"text": h.text, "met": h.met, "detail": h.detail} for h in res.hypotheses],
           "checks": [{"name": c.name, "passed": c.passed, "numbers": c.numbers} for c in res.checks]}
    if a.json:
        write_json(a.json, doc)
    print(json.dumps(doc, indent=1, default=str))


if __name__ == "__main__":
    main()
