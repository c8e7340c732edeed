"""Training throughput of the testbed: model-steps per second, data generation included.

One model-step = one Adam step of one model on a batch of ``--batch`` sequences, counting the
generation of those sequences on the device.  Measured for a single model (E=1) and for batched
ensembles (E models as one job), on the CPU and, when present, on CUDA.  The reference setting of
issue 5 is 2 layers, width 64, batch 128, N=8 (17 tokens); the goal there is ≥ 20,000
model-steps/s on an H200 for an ensemble.

    python benchmarks/bench_testbed.py --device cpu --ensembles 1,8 --steps 30   # threads 1 vs every core
    python benchmarks/bench_testbed.py --device cpu --threads 2 --compile both   # torch.compile off vs on
    python benchmarks/bench_testbed.py --device cuda --ensembles 1,64,256 --steps 200 --out results/bench_testbed.json
"""
from __future__ import annotations

import argparse
import time

import torch
import torch.nn.functional as F

from mmicl.numerics.atomic import write_json
from mmicl.numerics.testbed.config import DataConfig, MemberSpec, ModelConfig
from mmicl.numerics.testbed.data import Mixture
from mmicl.numerics.testbed.metrics import random_shift
from mmicl.numerics.testbed.model import EnsembleDecoder


def model_steps_per_second(E: int, steps: int, device: str, width: int, batch: int, N: int,
                           warmup: int = 5, compiled: bool = False) -> dict:
    data = DataConfig(K=8192, L=32, D=64, N=N, B=2, p_bursty=0.9, eps=0.1)
    mix = Mixture([MemberSpec(data, s) for s in range(E)], device)
    cfg = ModelConfig(layers=2, heads=1, width=width, mlp_ratio=2, pos="ape", ape_slots=2 * data.seq_len)
    model = EnsembleDecoder(cfg, data.D, data.L, list(range(E)), device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    g = torch.Generator(device=device).manual_seed(0)
    forward = torch.compile(model) if compiled else model

    def step():
        b = mix.train_batch(batch, g)
        shift = random_shift(E, batch, data.seq_len, cfg.ape_slots, g, device)
        logits = forward(b.tokens, shift).logits
        loss = F.cross_entropy(logits.flatten(0, 1), b.target.flatten(), reduction="none").view(E, -1).mean(-1).sum()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    t_first = time.perf_counter()
    for _ in range(warmup):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    if device == "cuda":
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    return {"device": device, "E": E, "steps": steps, "seconds": round(dt, 3), "width": width, "batch": batch,
            "tokens": data.seq_len, "compiled": compiled, "warmup_seconds": round(t0 - t_first, 2),
            "steps_per_s": round(steps / dt, 2), "model_steps_per_s": round(E * steps / dt, 1)}


def main() -> None:
    import os

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--ensembles", default="1,8")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--N", type=int, default=8)
    p.add_argument("--threads", default=f"1,{os.cpu_count() or 1}",
                   help="comma-separated torch thread counts to compare; by default the old default of the "
                        "testbed commands (1) and the new one (every core)")
    p.add_argument("--compile", default="off", choices=["off", "on", "both"],
                   help="torch.compile the model's forward (and so its backward): off, on, or both to compare "
                        "(the warm-up time, which includes compiling, is reported apart)")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    if a.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device here: run with --device cpu")
    rows = []
    for threads in dict.fromkeys(int(t) for t in a.threads.split(",")):
        torch.set_num_threads(threads)
        for compiled in {"off": (False,), "on": (True,), "both": (False, True)}[a.compile]:
            for E in (int(e) for e in a.ensembles.split(",")):
                r = model_steps_per_second(E, a.steps, a.device, a.width, a.batch, a.N, compiled=compiled)
                rows.append(r | {"threads": threads})
                print(f"{a.device} threads={threads:2d} compile={'on ' if compiled else 'off'} E={E:4d}: "
                      f"{r['steps_per_s']:9.1f} steps/s  {r['model_steps_per_s']:10.1f} model-steps/s "
                      f"(warm-up {r['warmup_seconds']} s)")
    if a.out:
        write_json(a.out, {"cpu_count": os.cpu_count(), "torch": torch.__version__, "rows": rows})


if __name__ == "__main__":
    main()
