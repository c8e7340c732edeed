"""Timings of the theory computations: α_T, the excess risk, the flows, the two-parameter minimiser.

Target (issue 2): `mmicl alpha --law "s=uniform(0.5,4)" --T 1 10 100 1000 10000` within seconds, and the
T = 10⁵ point with it.  Prints a table and writes JSON (atomically) with ``--out``.
Usage: python benchmarks/bench_theory.py [--law LAW] [--out results/bench_theory.json]
"""
from __future__ import annotations

import argparse
import time

from mmicl.numerics import flows, lca
from mmicl.numerics.atomic import write_json
from mmicl.numerics.law_language import parse_law


def timed(f, *args, repeats: int = 3, **kw):
    """Best of ``repeats`` wall-clock times (the first call also compiles; it is timed apart)."""
    t0 = time.perf_counter()
    f(*args, **kw)
    first = time.perf_counter() - t0
    best = min(_once(f, *args, **kw) for _ in range(repeats))
    return first, best


def _once(f, *args, **kw):
    t0 = time.perf_counter()
    f(*args, **kw)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--law", default="s=uniform(0.5,4)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    law = parse_law(args.law)
    rows = []
    for T in (1, 10, 100, 1000, 10_000, 100_000):
        a = lca.alpha_T(law, T)
        rows.append({"what": "alpha_T", "T": T, **dict(zip(("first_s", "best_s"), timed(lca.alpha_T, law, T)))})
        rows.append({"what": "excess_risk_scaled", "T": T,
                     **dict(zip(("first_s", "best_s"), timed(lca.excess_risk_scaled, law, T, a)))})
        rows.append({"what": "gradient_flow_one", "T": T,
                     **dict(zip(("first_s", "best_s"), timed(flows.gradient_flow_one, law, T, 0.0, repeats=1)))})
    for T in (2, 5, 10, 20):
        rows.append({"what": "minimise_two", "T": T,
                     **dict(zip(("first_s", "best_s"), timed(lca.minimise_two, law, T, repeats=1)))})
        rows.append({"what": "gradient_flow_two", "T": T,
                     **dict(zip(("first_s", "best_s"), timed(flows.gradient_flow_two, law, T, 0.0, 0.0, repeats=1)))})
    print(f"law: {law.spec()}")
    print(f"{'computation':<22}{'T':>8}{'first call (s)':>16}{'best (s)':>12}")
    for r in rows:
        print(f"{r['what']:<22}{r['T']:>8}{r['first_s']:>16.4f}{r['best_s']:>12.4f}")
    if args.out:
        write_json(args.out, {"law": law.spec(), "rows": rows})


if __name__ == "__main__":
    main()
