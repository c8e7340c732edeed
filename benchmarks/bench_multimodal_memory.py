"""Peak memory of a multimodal stage-2 evaluation: every set drawn or only the measured one, one
forward pass per set or slices of ``EVAL_CHUNK_SEQUENCES`` sequences.

Testbed claim 7 (version 4) trains 4 doses × 8 seeds = 32 members as one ensemble and measures one
set (``icl_m2known``) of 8192 items.  Drawing all seven sets and running that set in one forward
pass took the process past 18 GB and the kernel killed it; slices of items and drawing only that
set keep it to a few GB.  Each configuration runs in a fresh process (its peak resident memory,
``ru_maxrss``, is its own), on claim 7's data at the quick size with random decoder weights (the
memory does not depend on them): it draws the sets as the configuration says and evaluates the
claim's set once.

    python benchmarks/bench_multimodal_memory.py                    # the sliced configurations, ~3 min
    python benchmarks/bench_multimodal_memory.py --one-pass         # also the unsliced ones (~20 GB!)
    python benchmarks/bench_multimodal_memory.py --members 8 --eval-size 1024 --one-pass   # small, seconds
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time

CONFIGS = {
    "all sets, one pass": (None, "one pass"),
    "all sets, sliced": (None, None),
    "claim's set, sliced": (("icl_m2known",), None),
    "claim's set, one pass": (("icl_m2known",), "one pass"),
}
"""name → (``only`` of ``MultimodalEvalSets.draw``, ``chunk`` of ``evaluate_multimodal``: None for
the default slices, "one pass" for the whole set at once)."""


def _measure(E: int, eval_size: int, only, chunk, threads: int, queue) -> None:
    import torch

    from mmicl.numerics.testbed.config import MultimodalMember
    from mmicl.numerics.testbed.multimodal_data import MultimodalMixture
    from mmicl.numerics.testbed.multimodal_experiments import stage1_ape_slots
    from mmicl.numerics.testbed.multimodal_metrics import MultimodalEvalSets, evaluate_multimodal
    from mmicl.numerics.testbed.multimodal_model import EnsembleMLP, MultimodalSystem, decoder_from_states
    from mmicl.proofs.claim import RunConfig
    from mmicl.proofs.claims.testbed.common import multimodal_data
    from mmicl.proofs.claims.testbed.pilots import v4_claim7_m2
    from mmicl.proofs.claims.testbed.transfer import v4_size

    torch.set_num_threads(threads)
    sz = v4_size(RunConfig(), "claim7")
    data = multimodal_data(sz, m2=v4_claim7_m2())
    model = stage1_ape_slots(sz.model, sz.m1)
    seeds = list(range(E))
    mixture = MultimodalMixture([MultimodalMember(data, s) for s in seeds])
    decoder = decoder_from_states(model, sz.m1.D, sz.m1.L, [None] * E, seeds, "cpu")
    projector = EnsembleMLP([mixture.m2_item_dim, model.width, sz.m1.D], seeds, "cpu", salt=1)
    system = MultimodalSystem(decoder, projector, mixture.label_vectors, mixture.layout)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    sets = MultimodalEvalSets.draw(mixture, eval_size, seed=1, ape_slots=model.ape_slots, only=only)
    after_draw = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    acc = evaluate_multimodal(system, sets, eval_on=("icl_m2known",), chunk=eval_size if chunk else None)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    queue.put({"E": E, "eval_size": eval_size, "before_gb": round(base / 1e6, 3),
               "peak_after_draw_gb": round(after_draw / 1e6, 3), "peak_gb": round(peak / 1e6, 3),
               "seconds": round(time.perf_counter() - t0, 1), "acc_icl_m2known_mean": float(acc["acc_icl_m2known"].mean())})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--members", type=int, default=32, help="ensemble members (claim 7: 4 doses × 8 seeds)")
    ap.add_argument("--eval-size", type=int, default=8192)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--one-pass", action="store_true",
                    help="also measure the unsliced configurations (claim 7's size needs about 20 GB)")
    ap.add_argument("--out", default=None, help="write the numbers as JSON here")
    a = ap.parse_args()
    ctx = mp.get_context("spawn")
    out = {}
    for name, (only, chunk) in CONFIGS.items():
        if chunk and not a.one_pass:
            continue
        q = ctx.Queue()
        p = ctx.Process(target=_measure, args=(a.members, a.eval_size, only, chunk, a.threads, q))
        p.start()
        p.join()
        out[name] = q.get() if p.exitcode == 0 else {"exit": p.exitcode, "note": "the process failed (killed for "
                                                                           "memory: exit -9)"}
        print(f"{name:>24}: {out[name]}", flush=True)
    if a.out:
        from mmicl.numerics.atomic import write_json

        write_json(a.out, out)


if __name__ == "__main__":
    main()
