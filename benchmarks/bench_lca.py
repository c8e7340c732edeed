"""Forward+backward throughput of the tied LCA: layer-by-layer against the fast paths.

For each (batch, n, d, T) of the grid, the time of one step "draw prompts → loss → gradient":

  layers    tokens drawn (sample_prompts), every column through every layer (LCA.forward_layers)
  query     tokens drawn, moments formed once (C = X_cX_cᵀ/n), query column only (LCA.forward)
  moments   moments drawn directly (Bartlett Wishart, sample_moments), query column only
  eigen     moments drawn directly, the reduced one-parameter model in the eigenbasis of C

Reports prompts/s and tokens/s (prompts × (n+1)) and each path's speed-up over ``layers``.
Usage: python benchmarks/bench_lca.py [--device cuda] [--grid B,n,d,T ...] [--out results/bench.json]

``--sizes issue`` runs the issue's size (B, n, d, T) = (4096, 1024, 16, 20) on the CPU.  The layer-by-layer
path cannot run there at B = 4096 (its attention scores alone are B·n²·T·4 bytes ≈ 344 GB), so it runs at
the small batches ``--layers-batch`` (default 8 and 16 there) with ``--layers-repeats`` timed steps
(default 1, after one warm-up step) and the speed-up is per prompt:
``(seconds_layers / B_layers) / (seconds_fast / 4096)``, taking the layers batch with the fewest seconds
per prompt (the smaller, conservative speed-up).  Every prompt goes through the layers independently, so
the cost would be linear in B but for caches and memory traffic; the seconds per prompt at each layers
batch are reported (they were not equal on our CPU: larger batches were slower per prompt).
"""
from __future__ import annotations

import argparse
import time

import torch

from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.models import LCA, ReducedLCA
from mmicl.numerics.sampling import moments_of, sample_moments, sample_prompts

CPU_GRID = [(64, 64, 4, 5), (64, 256, 16, 20), (256, 256, 16, 20)]
CUDA_GRID = [(1024, 256, 16, 20), (4096, 1024, 16, 20)]
ISSUE_SIZE = (4096, 1024, 16, 20)


def _sync(device):
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def _time(step, device, repeats):
    step()  # warm-up
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(repeats):
        step()
    _sync(device)
    return (time.perf_counter() - t0) / repeats


def bench(B, n, d, T, device, repeats, skip_layers=False, layers_batches=None, layers_repeats=None):
    law = parse_law(f"s=uniform(0.5,4); d1={d // 2}; d2={d - d // 2}")
    gen = torch.Generator(device=device).manual_seed(0)
    lca = LCA(d, T, tied=True, init_scale=0.05, generator=torch.Generator().manual_seed(0)).to(device)
    red = ReducedLCA(T, "one", 0.2).to(device)

    def loss_step(model, batch, fwd):
        model.zero_grad(set_to_none=True)
        ((fwd(batch) - batch.query_y) ** 2).mean().backward()

    paths = {
        "layers": lambda: loss_step(lca, sample_prompts(law, B, n, gen, device), lca.forward_layers),
        "query": lambda: loss_step(lca, moments_of(sample_prompts(law, B, n, gen, device)), lca.forward),
        "moments": lambda: loss_step(lca, sample_moments(law, B, n, gen, device), lca.forward),
        "eigen": lambda: loss_step(red, sample_moments(law, B, n, gen, device), red.forward),
    }
    row = {"batch": B, "n": n, "d": d, "T": T, "device": str(device)}
    for name, step in paths.items():
        if name == "layers" and skip_layers:
            row[name] = None
            continue
        if name == "layers" and layers_batches:  # small batches, speed-up per prompt (see the docstring)
            by_batch = []
            for bl in layers_batches:
                sec = _time(lambda bl=bl: loss_step(lca, sample_prompts(law, bl, n, gen, device), lca.forward_layers),
                            device, layers_repeats or repeats)
                by_batch.append({"batch": bl, "seconds_per_step": sec, "seconds_per_prompt": sec / bl,
                                 "repeats": layers_repeats or repeats})
                print(f"  layers at batch {bl}: {sec:.3g} s/step, {sec / bl:.3g} s/prompt", flush=True)
            last = min(by_batch, key=lambda r: r["seconds_per_prompt"])  # conservative
            row[name] = {"batch": last["batch"], "seconds_per_step": last["seconds_per_step"],
                         "prompts_per_s": 1 / last["seconds_per_prompt"],
                         "tokens_per_s": (n + 1) / last["seconds_per_prompt"], "by_batch": by_batch,
                         "note": f"run at batch {last['batch']}, not {B}; speed-ups per prompt"}
            continue
        sec = _time(step, device, repeats)
        row[name] = {"seconds_per_step": sec, "prompts_per_s": B / sec, "tokens_per_s": B * (n + 1) / sec}
    if row["layers"]:
        for name in ("query", "moments", "eigen"):
            row[name]["speedup_over_layers"] = row[name]["prompts_per_s"] / row["layers"]["prompts_per_s"]
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--grid", nargs="*", default=None, help="B,n,d,T tuples")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--skip-layers-above", type=float, default=2e9,
                    help="skip the layer-by-layer path when B·n²·T·4 bytes exceeds this (its memory)")
    ap.add_argument("--sizes", choices=["default", "issue"], default="default",
                    help="issue: (4096, 1024, 16, 20) with the layers path at --layers-batch (default 8 16)")
    ap.add_argument("--layers-batch", type=int, nargs="*", default=None,
                    help="run the layer-by-layer path at these batches; speed-ups per prompt (fastest of them)")
    ap.add_argument("--layers-repeats", type=int, default=None, help="timed steps of the layers path")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.sizes == "issue":
        grid = [ISSUE_SIZE]
        args.layers_batch = args.layers_batch or [8, 16]
        args.layers_repeats = args.layers_repeats or 1
    else:
        grid = [tuple(int(v) for v in g.split(",")) for g in args.grid] if args.grid else (
            CUDA_GRID if args.device.startswith("cuda") else CPU_GRID)
    rows = []
    for B, n, d, T in grid:
        bl = max(args.layers_batch) if args.layers_batch else B
        row = bench(B, n, d, T, args.device, args.repeats, skip_layers=bl * n * n * T * 4 > args.skip_layers_above,
                    layers_batches=args.layers_batch, layers_repeats=args.layers_repeats)
        rows.append(row)
        cells = [f"{k}={v['prompts_per_s']:.3g}/s" + (f" (×{v['speedup_over_layers']:.0f})" if "speedup_over_layers" in v else "")
                 for k, v in row.items() if isinstance(v, dict)]
        print(f"B={B} n={n} d={d} T={T} [{args.device}]: " + ", ".join(cells), flush=True)
    if args.out:
        from mmicl.numerics.atomic import write_json

        write_json(args.out, {"rows": rows, "threads": args.threads, "torch": torch.__version__,
                              "repeats": args.repeats, "layers_batch": args.layers_batch,
                              "layers_repeats": args.layers_repeats})


if __name__ == "__main__":
    main()
