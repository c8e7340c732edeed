"""Seconds per law of the claims thm6.2, thm6.3, thm4.1, appF and depth at the ``smoke`` size.

The smoke size (``RunConfig.sized("smoke")``) is for property tests over many random laws: each of
these five claims should take at most 1 s (median over laws) on a 2-core machine once its formulas
are compiled and its caches filled, so that a property over 50 laws fits in about a minute.

What it does: draws ``--laws`` random task laws (default 20) from a seeded generator of LAW text
(``--seed``, default 0: the same laws on every run): atoms (``point``, ``twopoint``, ``discrete``),
``uniform``, ``beta``, mixtures of those, and per-modality laws (``sv=…; sr=…; d1; d2``, d1, d2 ∈
{1, 2, 3}), with ζ normal, Rademacher or a constant; only bounded laws, and continuous pieces most
often (an unbounded law, and a point law for most of these claims, is ``hypothesis-not-met`` at
once and would flatter the median).  Then, per claim, one untimed run on ``s=uniform(0.5,4)`` to
warm up (compiled formulas, caches), and one timed ``Claim.run`` per law (wall time,
``time.perf_counter``; a law's own quadrature rules are built in its timed run).  torch runs on one
CPU thread, as ``mmicl verify`` runs these claims.  Each verdict's reason is kept in the JSON: at
smoke thm4.1 trains briefly (4 restarts; a best restart above the optimum is undecided there).  Printed (and with ``--json FILE`` written as JSON): per claim
the median and the maximum seconds over the laws and the count of each verdict; the machine's load
average (``os.getloadavg``) before and after, since the machine may be shared.

``--size quick`` also times the quick size on the first ``--quick-laws`` laws (default 5; thm4.1
trains there, about 10 s per law).

Usage: python benchmarks/bench_smoke.py [--laws 20] [--seed 0] [--claim thm6.2 ...]
                                        [--size quick] [--quick-laws 5] [--json results/bench_smoke.json]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

CLAIMS = ("thm6.2", "thm6.3", "thm4.1", "appF", "depth")
WARM_UP_LAW = "s=uniform(0.5,4)"
BUDGET_S = 1.0  # the smoke size's target: median seconds per law


def _num(x: float) -> str:
    return f"{x:.4g}"


def _norm(rng: random.Random) -> float:
    """A squared norm: 0 one time in six (prompts with m = 0), else in [0.05, 5]."""
    return 0.0 if rng.random() < 1 / 6 else round(rng.uniform(0.05, 5.0), 4)


KINDS = {"point": 0.1, "twopoint": 0.15, "discrete": 0.15, "uniform": 0.3, "beta": 0.3}
"""How often each kind of piece is drawn: continuous pieces most (a point law is hypothesis-not-met for
most of these claims, at once, and would flatter the median)."""


def _piece(rng: random.Random) -> str:
    """One law of a squared norm, as LAW text."""
    kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
    if kind == "point":
        return f"point({_num(_norm(rng))})"
    if kind == "twopoint":
        a = _norm(rng)
        b = round(a + rng.uniform(0.1, 3.0), 4)
        return f"twopoint({_num(a)},{_num(b)},{_num(rng.uniform(0.1, 0.9))})"
    if kind == "discrete":
        values = sorted({_norm(rng) for _ in range(rng.randint(3, 4))})
        raw = [rng.uniform(0.1, 1.0) for _ in values]
        return "discrete(" + ",".join(f"{_num(v)}:{w / sum(raw):.17g}" for v, w in zip(values, raw)) + ")"
    a = _norm(rng)
    b = round(a + rng.uniform(0.05, 3.0), 4)
    if kind == "uniform":
        return f"uniform({_num(a)},{_num(b)})"
    return f"beta({_num(rng.uniform(0.3, 4.0))},{_num(rng.uniform(0.3, 4.0))},{_num(a)},{_num(b)})"


def _scalar_law(rng: random.Random) -> str:
    """A piece, or one time in four a mixture of 2–3 pieces."""
    if rng.random() >= 0.25:
        return _piece(rng)
    parts = [_piece(rng) for _ in range(rng.randint(2, 3))]
    raw = [rng.randint(1, 9) for _ in parts]
    return "mix(" + ",".join(f"{w / sum(raw):.17g}*{p}" for w, p in zip(raw, parts)) + ")"


def random_laws(count: int, seed: int) -> list[str]:
    """``count`` LAW texts: two in three of one squared norm s, one in three per modality."""
    from mmicl.numerics.laws.language import check_law_limits, parse_law
    from mmicl.numerics.validate import MAX_DIM_VERIFY

    rng = random.Random(seed)
    laws = []
    while len(laws) < count:
        zeta = rng.choice(["normal", "rademacher", "const(1.5)"])
        if rng.random() < 2 / 3:
            text = f"s={_scalar_law(rng)}; zeta={zeta}"
        else:
            text = (f"sv={_scalar_law(rng)}; sr={_scalar_law(rng)}; d1={rng.randint(1, 3)}; "
                    f"d2={rng.randint(1, 3)}; zeta={zeta}")
        parse_law(text)
        check_law_limits(text, "verify", MAX_DIM_VERIFY)  # a law `mmicl verify --law` accepts
        laws.append(text)
    return laws


def time_claims(claims, laws: list[str], size: str, seed: int, out: Path) -> dict:
    """Per claim: one warm-up run, then the seconds and the verdict of one run per law."""
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.registry import REGISTRY

    results = {}
    for cid in claims:
        claim = REGISTRY[cid]
        claim.run(RunConfig.sized(size, law=WARM_UP_LAW, seed=seed, out=out))
        runs = []
        for text in laws:
            config = RunConfig.sized(size, law=text, seed=seed, out=out)
            t0 = time.perf_counter()
            r = claim.run(config)
            runs.append({"law": text, "seconds": time.perf_counter() - t0, "verdict": r.verdict,
                         "verdict_reason": r.verdict_reason})
        seconds = [r["seconds"] for r in runs]
        results[cid] = {"median_s": statistics.median(seconds), "max_s": max(seconds),
                        "verdicts": dict(Counter(r["verdict"] for r in runs)), "runs": runs}
        print(f"  {cid:7s} median {results[cid]['median_s']:6.3f} s   max {results[cid]['max_s']:6.3f} s   "
              + ", ".join(f"{v} {k}" for k, v in sorted(results[cid]["verdicts"].items()))
              + ("" if size != "smoke" or results[cid]["median_s"] <= BUDGET_S else f"   (median above {BUDGET_S:g} s)"),
              flush=True)
    return results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--laws", type=int, default=20, help="random laws timed at the smoke size")
    p.add_argument("--seed", type=int, default=0, help="seed of the law generator and of the claims")
    p.add_argument("--claim", action="append", choices=CLAIMS, help="a claim to time (repeatable; default all five)")
    p.add_argument("--size", action="append", choices=["smoke", "quick"], default=None,
                   help="smoke is always timed; --size quick times the quick size too")
    p.add_argument("--quick-laws", type=int, default=5, help="laws timed at the quick size (the first ones)")
    p.add_argument("--json", type=Path, default=None, help="write the results here as JSON")
    a = p.parse_args()

    import rich
    import torch

    import mmicl.proofs.claims  # noqa: F401  (registers the claims)

    torch.set_num_threads(1)  # as `mmicl verify` runs these claims: many small models, one thread each
    rich.get_console().quiet = True  # the claims' progress bars (this prints with print)
    claims = a.claim or list(CLAIMS)
    laws = random_laws(a.laws, a.seed)
    sizes = ["smoke"] + (["quick"] if "quick" in (a.size or []) else [])
    load_before = os.getloadavg()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in load_before)} ({os.cpu_count()} CPUs)")
    report = {"benchmark": "smoke", "seed": a.seed, "laws": laws, "claims": claims, "torch_threads": 1,
              "budget_median_s": BUDGET_S, "cpus": os.cpu_count(), "load_before": list(load_before), "sizes": {}}
    with tempfile.TemporaryDirectory(prefix="mmicl-bench-smoke-") as tmp:
        for size in sizes:
            chosen = laws if size == "smoke" else laws[: a.quick_laws]
            print(f"{size}: {len(chosen)} laws, seconds per law after one warm-up run")
            report["sizes"][size] = time_claims(claims, chosen, size, a.seed, Path(tmp) / size)
    report["load_after"] = list(os.getloadavg())
    print(f"load average after: {' '.join(f'{x:.2f}' for x in report['load_after'])}")
    if a.json:
        from mmicl.numerics.atomic import write_json

        write_json(a.json, report)


if __name__ == "__main__":
    main()
