"""Timings of the theory computations: α_T, the excess risk, the flows, the two-parameter minimiser.

Target (issue 2): `mmicl alpha --law "s=uniform(0.5,4)" --T 1 10 100 1000 10000` within seconds, and the
T = 10⁵ point with it.  Target (two modalities): the same on `sv=uniform(0.2,1); sr=uniform(0.5,2); d1=3;
d2=2`, whose s = ‖v‖² + ‖r‖² rule (``SumLaw.rule``) is the product of the two component rules compressed
to a graded Gauss rule (600 nodes at T = 100 instead of 360,000).  Both laws run by default.

Rows: ``rule`` (building the s-rule, caches cleared), ``alpha_cmd`` (what ``mmicl alpha`` computes per T:
α_T, the excess risk there and the one-parameter flow, rule built beforehand), then each computation
alone.  ``--product-rule`` times sum laws with the old full product rule instead (``SumLaw.product_rule``;
the "before"; slow: use it with ``--T 1 10 100``).  ``--T`` and ``--T2`` set the depths.
Prints a table and writes JSON (atomically) with ``--out``.
Usage: python benchmarks/bench_theory.py [--law LAW ...] [--T T ...] [--T2 T ...] [--product-rule]
                                          [--out results/bench_theory.json]
"""
from __future__ import annotations

import argparse
import time

from mmicl.numerics import flows, lca
from mmicl.numerics.laws import scalar as scalar_laws
from mmicl.numerics.atomic import write_json
from mmicl.numerics.laws.language import parse_law

LAWS = ["s=uniform(0.5,4)", "sv=uniform(0.2,1); sr=uniform(0.5,2); d1=3; d2=2"]


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


def _build_rule(law, T):
    scalar_laws.sum_rule.cache_clear()
    lca._rule.cache_clear()
    return law.rule(T)


def _alpha_cmd(law, T):
    """One row of ``mmicl alpha``: α_T, the excess risk at α_T, the flow from 0."""
    a = lca.alpha_T(law, T)
    lca.excess_risk_scaled(law, T, a)
    return flows.gradient_flow_one(law, T, 0.0)


def bench(law, Ts, T2s):
    rows = []

    def row(what, T, times):
        rows.append({"law": law.spec(), "what": what, "T": T, **dict(zip(("first_s", "best_s"), times))})

    for T in Ts:
        row("rule", T, timed(_build_rule, law, T, repeats=1))
        law.rule(T)  # the timings below are without the build, as in a run that has it cached
        row("alpha_cmd", T, timed(_alpha_cmd, law, T, repeats=1))
        a = lca.alpha_T(law, T)
        row("alpha_T", T, timed(lca.alpha_T, law, T))
        row("excess_risk_scaled", T, timed(lca.excess_risk_scaled, law, T, a))
        row("gradient_flow_one", T, timed(flows.gradient_flow_one, law, T, 0.0, repeats=1))
    for T in T2s:
        row("minimise_two", T, timed(lca.minimise_two, law, T, repeats=1))
        row("gradient_flow_two", T, timed(flows.gradient_flow_two, law, T, 0.0, 0.0, repeats=1))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--law", action="append", default=None, help="repeatable; default: the two LAWS above")
    ap.add_argument("--T", type=int, nargs="+", default=[1, 10, 100, 1000, 10_000, 100_000])
    ap.add_argument("--T2", type=int, nargs="*", default=[2, 5, 10, 20])
    ap.add_argument("--product-rule", action="store_true",
                    help="sum laws use the full product rule (the old SumLaw.rule): the 'before' timing")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    if args.product_rule:
        laws.SumLaw.rule = laws.SumLaw.product_rule
    rows = []
    for text in args.law or LAWS:
        law = parse_law(text)
        rule_kind = "product" if args.product_rule and law.s is None else "default"
        print(f"law: {law.spec()}  (s-rule: {rule_kind})", flush=True)
        law_rows = bench(law, args.T, args.T2)
        for r in law_rows:
            r["s_rule"] = rule_kind
            r["nodes"] = law.rule(r["T"]).nodes.size
        rows += law_rows
        print(f"{'computation':<22}{'T':>8}{'nodes':>9}{'first call (s)':>16}{'best (s)':>12}")
        for r in law_rows:
            print(f"{r['what']:<22}{r['T']:>8}{r['nodes']:>9}{r['first_s']:>16.4f}{r['best_s']:>12.4f}")
    if args.out:
        write_json(args.out, {"laws": args.law or LAWS, "product_rule": args.product_rule, "rows": rows})


if __name__ == "__main__":
    main()
