"""What a multimodal stage-2 run spends on evaluation against training, and what ``eval_on`` saves.

Testbed claim 7 (version 3) trains 4 doses × 8 seeds = 32 members as one ensemble for 1500 steps
and evaluates every 25 steps (61 evaluations) on 8192 items per set.  This measures, on that
ensemble at the quick size (random decoder weights: the cost does not depend on them), the seconds
of one Adam step (batch 128), of one full evaluation (every set) and of one evaluation of the set the
claim reads (``eval_on=("icl_m2known",)``), and projects a run's time from them.

    python benchmarks/bench_multimodal_eval.py --threads 1       # about 10 minutes on one CPU thread
    python benchmarks/bench_multimodal_eval.py --members 8 --eval-size 1024   # the same ratio in seconds
    python benchmarks/bench_multimodal_eval.py --device cuda --out results/bench_multimodal_eval.json
"""
from __future__ import annotations

import argparse
import time
from dataclasses import replace

import torch

from mmicl.numerics.atomic import write_json
from mmicl.numerics.testbed.config import MultimodalConfig, MultimodalMember
from mmicl.numerics.testbed.metrics import random_shift
from mmicl.numerics.testbed.multimodal_data import MultimodalMixture
from mmicl.numerics.testbed.multimodal_metrics import MultimodalEvalSets, evaluate_multimodal
from mmicl.numerics.testbed.multimodal_model import EnsembleMLP, MultimodalSystem, decoder_from_states
from mmicl.numerics.testbed.train import member_cross_entropy


def _seconds(fn, repeats: int, device: str) -> float:
    fn()  # warm-up
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / repeats


def measure(E: int, eval_size: int, device: str, steps: int = 1500, eval_every: int = 25, repeats: int = 1) -> dict:
    from mmicl.proofs.claims.testbed.sizes import MULTIMODAL_QUICK

    sz = MULTIMODAL_QUICK
    data = MultimodalConfig(sz.m1, replace(sz.m2, K=sz.encoder_K2, eps=sz.encoder_eps2))
    seeds = list(range(E))
    mixture = MultimodalMixture([MultimodalMember(data, s) for s in seeds], device)
    decoder = decoder_from_states(sz.model, sz.m1.D, sz.m1.L, [None] * E, seeds, device)
    projector = EnsembleMLP([sz.m2.item_dim, sz.model.width, sz.m1.D], seeds, device, salt=1)
    system = MultimodalSystem(decoder, projector, mixture.label_vectors, mixture.layout)
    sets = MultimodalEvalSets.draw(mixture, eval_size, seed=1, ape_slots=sz.model.ape_slots)
    params = system.trainable("projector+readout")
    opt = torch.optim.Adam(params, lr=1e-3)
    g = torch.Generator(device=device).manual_seed(0)

    def step():
        batch = mixture.train_batch(sz.stage2.batch, g)
        shift = random_shift(E, sz.stage2.batch, 3 * sz.m1.N + 2, sz.model.ape_slots, g, device)
        loss = member_cross_entropy(system(batch, shift).logits, batch.target).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    t_step = _seconds(step, 20, device)
    t_full = _seconds(lambda: evaluate_multimodal(system, sets), repeats, device)
    t_one = _seconds(lambda: evaluate_multimodal(system, sets, eval_on=("icl_m2known",)), repeats, device)
    n_evals = steps // eval_every + 1
    run_full, run_one = steps * t_step + n_evals * t_full, steps * t_step + n_evals * t_one
    return {"device": device, "E": E, "eval_size": eval_size, "threads": torch.get_num_threads(),
            "step_s": round(t_step, 4), "eval_all_sets_s": round(t_full, 3), "eval_icl_m2known_s": round(t_one, 3),
            "steps": steps, "evaluations": n_evals, "run_all_sets_s": round(run_full, 1),
            "run_icl_m2known_s": round(run_one, 1), "speed_up": round(run_full / run_one, 2)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--members", type=int, default=32, help="ensemble members (claim 7: 4 doses × 8 seeds)")
    ap.add_argument("--eval-size", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=1, help="evaluations timed per kind, after one warm-up")
    ap.add_argument("--out", default=None, help="write the numbers as JSON here")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    r = measure(a.members, a.eval_size, a.device, repeats=a.repeats)
    for k, v in r.items():
        print(f"{k:>22}: {v}")
    if a.out:
        write_json(a.out, r)


if __name__ == "__main__":
    main()
