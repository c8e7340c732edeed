"""Wall time of the README's test command (``python -m pytest -q``) at a given number of workers.

The target: at most 5 minutes on a quiet 2-core machine with 2 workers (pytest-xdist; the suite's
default is ``-n auto``, one worker per core).  Each worker count is run once, as a fresh process in
the repository root with a fresh formula cache (``MMICL_CACHE`` in a temporary folder, as a clean
checkout has), and reports its wall time, pytest's summary line and its slowest tests
(``--durations``).  The machine's load is printed beside it, since a loaded machine measures the
load, not the suite, and so is a CPU calibration (a fixed pure-Python workload, timed on one core
before each run): two readings of the suite compare only in units of their calibrations, since the
same 2-core machine kind has been seen here to differ by 1.5x between days.

Usage: python benchmarks/bench_suite.py [--workers 1 2] [--durations 10] [--out results/bench_suite.json]
       (extra pytest arguments after --, e.g. -- -m "not docs")
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def calibration(repeats: int = 3) -> float:
    """Seconds (best of ``repeats``) for a fixed single-core pure-Python workload: a sum of
    2·10^6 floats and a sort of 2·10^5 of them, so that suite timings from different machines or
    days can be put side by side."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        acc = 0.0
        for i in range(2_000_000):
            acc += (i % 7) * 0.5
        sorted([(i * 7919) % 100_003 * 1.0 for i in range(200_000)])
        best = min(best, time.perf_counter() - t0)
    return best


def run(workers: int, durations: int, extra: list[str]) -> dict:
    with tempfile.TemporaryDirectory(prefix="mmicl-bench-cache-") as cache:
        env = {**os.environ, "MMICL_CACHE": cache}
        cmd = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), f"--durations={durations}", *extra]
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        calib = calibration()
        t0 = time.perf_counter()
        p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
    lines = p.stdout.splitlines()
    summary = next((ln for ln in reversed(lines) if re.search(r"\b(passed|failed|error)", ln)), "")
    slowest, inside = [], False
    for ln in lines:
        if "slowest" in ln and "durations" in ln:
            inside = True
            continue
        if inside:
            m = re.match(r"\s*([\d.]+)s\s+(\w+)\s+(\S+)", ln)
            if not m:
                break
            slowest.append({"seconds": float(m.group(1)), "phase": m.group(2), "test": m.group(3)})
    return {"workers": workers, "wall_seconds": round(wall, 1), "exit_status": p.returncode,
            "summary": summary.strip("= "), "load_before": load,
            "calibration_seconds": round(calib, 3), "slowest": slowest}


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts to time (default 1 2)")
    ap.add_argument("--durations", type=int, default=10, help="how many of the slowest tests to list (default 10)")
    ap.add_argument("--out", help="also write the results here (JSON)")
    a = ap.parse_args(argv)
    if any(w < 1 for w in a.workers):
        ap.error("--workers: each count must be at least 1")
    results = []
    for w in a.workers:
        r = run(w, a.durations, extra)
        results.append(r)
        print(f"{w} worker(s): {r['wall_seconds']:.0f} s, exit {r['exit_status']}, {r['summary']} "
              f"(load before: {r['load_before']}, calibration: {r['calibration_seconds']:.3f} s)")
        for s in r["slowest"]:
            print(f"    {s['seconds']:7.2f} s  {s['phase']:<8} {s['test']}")
    if a.out:
        out = Path(a.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(json.dumps({"cpus": os.cpu_count(), "runs": results}, indent=2) + "\n", encoding="utf-8")
        tmp.replace(out)
    return max(r["exit_status"] for r in results)


if __name__ == "__main__":
    sys.exit(main())
