"""Overhead of running a sweep on Dask against the same runs in a plain loop.

The same runs are executed (1) one after another in this process with ``execute`` (no store) and
(2) with ``run_sweep`` on a LocalCluster of ``--workers`` single-threaded processes into a fresh
store (cluster start-up, task submission, result transfer and the atomic writes of every run file
and of the index included).  Reported: wall seconds of each and the overhead per run.

    python benchmarks/bench_sweep.py --kind theory --runs 24 --workers 2
    python benchmarks/bench_sweep.py --kind testbed --runs 8 --workers 2 --out results/bench_sweep.json
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

TESTBED_BASE = {"K": 256, "L": 16, "D": 16, "N": 4, "B": 2, "width": 16, "ape_slots": 16, "steps": 200,
                "batch": 32, "eval_every": 100, "eval_size": 64}


def main() -> None:
    from mmicl.numerics.atomic import write_json
    from mmicl.numerics.runs import Store, expand, run_sweep
    from mmicl.numerics.runs.record import execute

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", choices=["theory", "testbed"], default="theory")
    p.add_argument("--runs", type=int, default=24)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    if a.kind == "theory":
        spec = {"kind": "theory", "base": {"law": "s=uniform(0.5,4)"}, "grid": {"T": list(range(1, a.runs + 1))}}
    else:
        spec = {"kind": "testbed", "base": TESTBED_BASE, "grid": {"seed": list(range(a.runs))}}
    runs = expand(spec)
    import torch

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    for r in runs:
        execute(r.kind, r.config, r.key)
    loop = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        s = run_sweep(runs, Store(d), workers=a.workers)
        sweep = time.perf_counter() - t0
    row = {"kind": a.kind, "runs": len(runs), "workers": a.workers, "loop_s": round(loop, 2),
           "sweep_s": round(sweep, 2), "done": s.done, "failed": s.failed,
           "overhead_per_run_s": round((sweep * a.workers - loop) / len(runs), 3)}
    print(row)
    if a.out:
        write_json(a.out, row)


if __name__ == "__main__":
    main()
