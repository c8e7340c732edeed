"""The training loops of the multimodal protocol: the M2 encoder's pretraining, and stage 2 / early
fusion (one loop; what trains is the caller's parameter list).

``train_multimodal``: Adam on Σ_e (mean cross-entropy of member e at the readout) over the given
parameters; metrics (``evaluate_multimodal``) at step 0, every ``eval_every`` steps and at the end.
Step 0 is the model before any multimodal training (the "before" of stage 2).

``train_encoder``: Adam on the K2-way cross-entropy of single noisy M2 items of known classes;
member e stops after ``steps[e]`` steps (its weights are taken at that step; Adam's momentum would
otherwise keep moving a member whose gradient is zero), so encoder quality is varied by one knob.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .config import TrainConfig
from .metrics import random_shift
from .multimodal_data import MultimodalMixture
from .multimodal_metrics import MultimodalEvalSets, encoder_accuracy, evaluate_multimodal
from .multimodal_model import EnsembleMLP, MultimodalSystem
from .train import History, member_cross_entropy, training_loop

__all__ = ["train_multimodal", "train_encoder"]



def train_multimodal(system: MultimodalSystem, mixture: MultimodalMixture, params: list[torch.nn.Parameter],
                     train: TrainConfig, sets: MultimodalEvalSets, data_seed: int, progress: bool = False,
                     description: str = "multimodal", extra: dict[str, torch.Tensor] | None = None,
                     eval_on: tuple[str, ...] | None = None, snapshot=None) -> History:
    """Train ``params`` of ``system``; ``extra`` metrics (fixed per member, e.g. encoder quality)
    are recorded beside the others at every evaluation; ``eval_on``: the evaluation sets measured
    (``evaluate_multimodal``; None, all); ``snapshot``: a ``resume.Snapshot`` (``training_loop``)."""
    c = system.decoder.config
    ape_slots = c.ape_slots if c.pos == "ape" else None
    T = 3 * mixture.N + 2
    g = torch.Generator(device=mixture.device).manual_seed(int(data_seed))
    extra = {k: v.float().cpu() for k, v in (extra or {}).items()}

    def member_losses() -> torch.Tensor:
        batch = mixture.train_batch(train.batch, g)
        shift = random_shift(mixture.E, train.batch, T, ape_slots, g, mixture.device)
        return member_cross_entropy(system(batch, shift).logits, batch.target)

    def evaluate_now() -> dict[str, torch.Tensor]:
        return evaluate_multimodal(system, sets, eval_on=eval_on) | extra

    return training_loop(params, member_losses, evaluate_now, train, mixture.E, progress, description,
                         snapshot=snapshot, generators=(g,))


def train_encoder(encoder: EnsembleMLP, mixture: MultimodalMixture, steps: list[int], batch: int, lr: float,
                  eval_size: int, seed: int) -> torch.Tensor:
    """Pretrain member e of ``encoder`` for ``steps[e]`` steps; returns its quality (E,): accuracy
    on ``eval_size`` held-out single items (fresh noise, same ε2 as the multimodal runs)."""
    if len(steps) != mixture.E or any(s < 0 for s in steps):
        raise ValueError(f"give one number of steps ≥ 0 per member ({mixture.E}), got {steps}")
    g = torch.Generator(device=mixture.device).manual_seed(int(seed))
    held_out = mixture.single_items(eval_size, g)
    opt = torch.optim.Adam(encoder.parameters(), lr=lr)
    final = [[p.detach()[e].clone() for p in encoder.parameters()] for e in range(mixture.E)]
    for step in range(1, max(steps, default=0) + 1):
        x, k = mixture.single_items(batch, g)
        logits = encoder(x)
        loss = F.cross_entropy(logits.flatten(0, 1), k.flatten(), reduction="none").view(mixture.E, -1).mean(-1)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        opt.step()
        for e, s in enumerate(steps):
            if s == step:
                final[e] = [p.detach()[e].clone() for p in encoder.parameters()]
    with torch.no_grad():
        for e in range(mixture.E):
            for p, v in zip(encoder.parameters(), final[e]):
                p[e].copy_(v)
    return encoder_accuracy(encoder, *held_out)
