"""Start-up time of the command line: ``mmicl --help``, ``mmicl --version`` and ``mmicl laws``.

Each is run ``--repeat`` times as a fresh process (the way a user runs it); the median and the
range of the wall times are printed and, with ``--out``, written as JSON.  Sub-commands are imported
lazily, so none of these loads torch, SymPy or matplotlib (``tests/shell/test_api.py`` checks which
modules load; this script measures the seconds).

Usage: python benchmarks/bench_startup.py [--repeat 7] [--out results/bench_startup.json]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

COMMANDS = {"help": ["--help"], "version": ["--version"], "laws": ["laws"]}


def wall_times(args: list[str], repeat: int) -> list[float]:
    exe = shutil.which("mmicl")
    cmd = [exe, *args] if exe else [sys.executable, "-m", "mmicl.cli", *args]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return times

def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--out", type=Path, default=None)
    a = p.parse_args()
    results = {}
    for name, args in COMMANDS.items():
        t = wall_times(args, a.repeat)
        results[name] = {"median_s": statistics.median(t), "min_s": min(t), "max_s": max(t), "repeat": a.repeat}
        print(f"mmicl {' '.join(args):10s} median {statistics.median(t):.3f} s (min {min(t):.3f}, max {max(t):.3f})")
    if a.out:
        from mmicl.numerics.atomic import write_json

        write_json(a.out, {"benchmark": "startup", "results": results})

if __name__ == "__main__":
    main()
