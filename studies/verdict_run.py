"""Run the verdict run of one testbed claim and commit-ready its evidence.

    python studies/verdict_run.py claim1 [--threads 1] [--work results/verdicts] [--store DIR]

It runs what a user runs, ``mmicl verify --quick --claim testbed.CLAIM --out WORK/CLAIM --threads N``
(the claim's runs are kept in WORK/CLAIM/testbed/runs, so a killed run resumes where it stopped),
then copies ``verdicts.json`` and the claim's own ``testbed/CLAIM.json`` into
``studies/results/v3_quick/CLAIM_v<version>/`` (``v4_quick`` for a version-4 design; the version the
claim file records) and rewrites the
design and results blocks of docs/testbed.md.  It runs the claim on its verdict seeds: run it only
once the claim's design, pilots and code are committed.

``--store DIR``: the claim's results store is DIR (WORK/CLAIM/testbed/runs links to it), so that claims
whose runs share settings (claims 4, 5 and 9 of version 4 share their decoders and claim 4's K2 = L
stage 2) train them once, and runs already trained there with the same settings are read back.
Version 4's verdict runs keep theirs under ``studies/results/stores/v4_CLAIM`` (claims 6 and 7, which
share version 4's stage-1 decoders, ``studies/results/stores/v4_multimodal``) and commit it while
they are under way (records, stage-1 checkpoints, snapshots of runs in training), so that a run
continues on another machine from the committed store.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("claim", help="claim1 … claim9")
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads of the training (default 1)")
    ap.add_argument("--work", default=str(ROOT / "results" / "verdicts"), help="working folder of the runs")
    ap.add_argument("--store", default=None, help="a results store shared with other claims' runs (see above)")
    a = ap.parse_args(argv)
    out = Path(a.work) / a.claim
    if a.store is not None:
        link, store = out / "testbed" / "runs", Path(a.store).resolve()
        store.mkdir(parents=True, exist_ok=True)
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_symlink() and link.resolve() != store or (link.exists() and not link.is_symlink()):
            print(f"{link} exists and is not a link to {store}: remove it or run without --store")
            return 2
        if not link.is_symlink():
            link.symlink_to(store, target_is_directory=True)
    cmd = [sys.executable, "-m", "mmicl", "verify", "--quick", "--claim", f"testbed.{a.claim}", "--out", str(out), "--threads", str(a.threads)]
    print("running: mmicl", " ".join(cmd[3:]), flush=True)
    rc = subprocess.call(cmd)
    verdicts, own = out / "verdicts.json", out / "testbed" / f"{a.claim}.json"
    if not verdicts.is_file() or not own.is_file():
        print(f"the run left no {verdicts if not verdicts.is_file() else own}: nothing copied (exit {rc})")
        return rc or 1
    version = json.loads(own.read_text(encoding="utf-8"))["version"]
    from mmicl.proofs.claims.testbed.results import RESULT_ROOTS, results_root

    dest = ROOT / results_root(version) / f"{a.claim}_v{version}"
    dest.mkdir(parents=True, exist_ok=True)
    for src in (verdicts, own):
        tmp = dest / (src.name + ".tmp")
        shutil.copyfile(src, tmp)
        tmp.replace(dest / src.name)
    print(f"copied the evidence to {dest}")
    return subprocess.call([sys.executable, "-m", "mmicl.proofs.claims.testbed", "docs", "--docs",
                            str(ROOT / "docs" / "testbed.md"), "--results", *(str(ROOT / r) for r in RESULT_ROOTS)])


if __name__ == "__main__":
    sys.exit(main())
