"""One quick run of the testbed claims as they were before their per-seed design: versions 1 and 2
(intervals over seeds), kept as a record before that code is retired.

    python studies/verdict_interval_claims.py [--out results/interval_claims] [--threads 1]

The registry runs the current design of claims 1-9.  The earlier functions (``claim1``, ``claim2``,
``claim3``, ``claim8`` of ``mmicl.proofs.claims.testbed``: version 2; ``claim4``, ``claim5``,
``claim6``, ``claim9`` of ``mmicl.proofs.claims.testbed_multimodal``: version 1, ``claim7`` there:
version 2) are put in place of the registry's for this one run, which is then what a user runs:
``mmicl verify --quick --claim 'testbed.*'``.  Each claim's result file records the version that
ran.  The evidence (``verdicts.json`` and ``testbed/claim*.json``) is copied to
``studies/results/interval_claims_quick/``.

This script works only on a commit where those functions exist (the tag named in
docs/records/testbed-interval-claims.md).
"""
from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ROOT / "results" / "interval_claims"), help="the run's results folder")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads of the training (default 1)")
    a = ap.parse_args(argv)

    from mmicl.proofs.claims import testbed as unimodal
    from mmicl.proofs.claims import testbed_multimodal as multimodal
    from mmicl.proofs.registry import REGISTRY
    from mmicl.proofs.verify import registered

    registered()
    earlier = {"claim1": unimodal.claim1, "claim2": unimodal.claim2, "claim3": unimodal.claim3,
               "claim8": unimodal.claim8, "claim4": multimodal.claim4, "claim5": multimodal.claim5,
               "claim6": multimodal.claim6, "claim7": multimodal.claim7, "claim9": multimodal.claim9}
    for name, evaluate in earlier.items():
        claim = REGISTRY[f"testbed.{name}"]
        REGISTRY[claim.id] = replace(claim, evaluate=unimodal.threaded(evaluate))

    from mmicl.cli import main as cli

    out = Path(a.out)
    try:
        cli(["verify", "--quick", "--claim", "testbed.*", "--out", str(out), "--threads", str(a.threads)],
            standalone_mode=False)
    except SystemExit as e:  # verify exits 1 when a claim fails: the evidence is still to be kept
        print(f"mmicl verify exited with {e.code}")
    dest = ROOT / "studies" / "results" / "interval_claims_quick"
    (dest / "testbed").mkdir(parents=True, exist_ok=True)
    files = [out / "verdicts.json", *sorted((out / "testbed").glob("claim*.json"))]
    for src in files:
        target = dest / src.relative_to(out)
        tmp = target.with_name(target.name + ".tmp")
        shutil.copyfile(src, tmp)
        tmp.replace(target)
    print(f"copied {len(files)} files to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
