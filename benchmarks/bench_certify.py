"""Timings of ``mmicl certify``: the certifier's steps and the independent checker, per law and depth.

Target: ``mmicl certify --law "s=uniform(0.5,4)" --T 100`` within seconds, and a stated largest depth
(``MAX_CERTIFY_DEPTH``) up to which it stays fast.  Rows: per (law, T) the certifier's steps as its
provenance block records them (``derive``: SymPy's derivative of theory/lca.py, once per process;
``moments``: the exact polynomial; ``float64_start``: numerics' α_T; ``locate``: arb Newton and grid
signs; ``exact_signs``), its total, and the checker's time on the same certificate; then the gap
certificate per law; then the command line end to end (a fresh process, so imports and SymPy count).
The default laws are one of each cost class: the uniform law (closed-form moments), a Beta law (a series
product) and two continuous modalities (two products; the checker's convolution).
Prints a table and writes JSON (atomically) with ``--out``.
Usage: python benchmarks/bench_certify.py [--law LAW ...] [--T T ...] [--out results/bench_certify.json]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from mmicl.numerics.atomic import write_json
from mmicl.proofs.certificates.alpha import certify_alpha_T
from mmicl.proofs.certificates.check import check
from mmicl.proofs.certificates.gap import certify_gap

LAWS = ["s=uniform(0.5,4)", "s=beta(2,3,0.5,4)", "sv=beta(2,3,0.1,1); sr=uniform(0.5,2)"]


def _checked(cert: dict) -> float:
    doc = json.loads(json.dumps(cert))
    t0 = time.perf_counter()
    ok, reasons = check(doc)
    if not ok:
        raise RuntimeError(f"the checker rejected a fresh certificate: {reasons}")
    return time.perf_counter() - t0


def bench(laws: list[str], Ts: list[int]) -> list[dict]:
    rows = []
    for law in laws:
        for T in Ts:
            cert = certify_alpha_T(law, T)
            steps = cert["provenance"]["seconds"]
            rows.append({"law": law, "what": "alpha_T", "T": T, **steps, "check": _checked(cert)})
        cert = certify_gap(law)
        rows.append({"law": law, "what": "gap", "T": None, "kappa_terms": cert["kappa"]["terms"],
                     "total": cert["provenance"]["seconds"]["total"], "check": _checked(cert)})
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "mmicl.cli", "certify", "--law", "s=uniform(0.5,4)", "--T", "100",
                    "--json"], check=True, capture_output=True)
    rows.append({"law": "s=uniform(0.5,4)", "what": "cli (fresh process)", "T": 100, "total": time.perf_counter() - t0})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--law", action="append", default=None)
    ap.add_argument("--T", type=int, nargs="+", default=[100, 300, 1000])
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    rows = bench(args.law or LAWS, args.T)
    cols = ("derive", "moments", "float64_start", "locate", "exact_signs", "total", "check")
    print(f"{'law':<42} {'what':<20} {'T':>5} " + " ".join(f"{c:>13}" for c in cols))
    for r in rows:
        cells = " ".join(f"{r[c]:>13.4f}" if isinstance(r.get(c), float) else f"{'':>13}" for c in cols)
        print(f"{r['law']:<42} {r['what']:<20} {r['T'] if r['T'] else '':>5} {cells}")
    if args.out:
        write_json(args.out, {"rows": rows})


if __name__ == "__main__":
    main()
