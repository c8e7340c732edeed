"""Start-up time of the command line: ``mmicl --help``, ``--version``, ``laws``, ``claims``, and
``verify`` of one trivial plugin claim.

Each is run ``--repeat`` times as a fresh process (the way a user runs it); the median and the
range of the wall times are printed and, with ``--out``, written as JSON.  Sub-commands are imported
lazily and the built-in claims are listed from their table (``proofs.claims.catalog``), so none of
these loads torch, SymPy or matplotlib (``tests/shell/test_api.py`` checks which modules load; this
script measures the seconds).  Target: ``mmicl claims`` ≤ 1 s on a quiet machine, and a plugin's
claim that needs nothing heavy run in about as long.

Usage: python benchmarks/bench_startup.py [--repeat 7] [--out results/bench_startup.json]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS = {"help": ["--help"], "version": ["--version"], "laws": ["laws"], "claims": ["claims"]}

PLUGIN = '''import mmicl


@mmicl.claim("bench.trivial", title="one is one", statement="1 == 1")
def trivial(config):
    return [], [mmicl.Check("one", "exact", True, {"one": 1})]
'''
"""The plugin of the ``verify`` row: one claim that computes nothing."""


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
    work = Path(tempfile.mkdtemp(prefix="mmicl-bench-startup-"))
    (work / "bench_plugin.py").write_text(PLUGIN, encoding="utf-8")
    commands = {**COMMANDS, "verify a plugin claim": ["verify", "--plugin", str(work / "bench_plugin.py"), "--claim",
                                                      "bench.*", "--out", str(work / "out")]}
    for name, args in commands.items():
        t = wall_times(args, a.repeat)
        results[name] = {"median_s": statistics.median(t), "min_s": min(t), "max_s": max(t), "repeat": a.repeat}
        print(f"mmicl {name:22s} median {statistics.median(t):.3f} s (min {min(t):.3f}, max {max(t):.3f})")
    if a.out:
        from mmicl.numerics.atomic import write_json

        write_json(a.out, {"benchmark": "startup", "results": results})

if __name__ == "__main__":
    main()
