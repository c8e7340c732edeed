"""Prompts of the latent-factor model (SPEC §1), vectorised in torch on any device.

For each prompt: a task (v, r, ζ) from the ``TaskLaw``; for each of its n context tokens and its
query, independently ``u ~ N(0,1)``, ``x = u·m + noise`` with ``noise ~ N(0, I_d)`` and ``y = ζ u``.
One ``torch.Generator`` seeds everything: the same seed gives the same prompts on the same device.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .laws import TaskLaw


@dataclass
class Prompts:
    """A batch of B prompts with n context tokens each.

    x: (B, n+1, d) tokens, the query last; y: (B, n+1) labels (the query's label is the target);
    m: (B, d) task vectors [v; r]; zeta: (B,) label scales.
    """

    x: torch.Tensor
    y: torch.Tensor
    m: torch.Tensor
    zeta: torch.Tensor

    @property
    def context_x(self) -> torch.Tensor:
        return self.x[:, :-1, :]

    @property
    def context_y(self) -> torch.Tensor:
        return self.y[:, :-1]

    @property
    def query_x(self) -> torch.Tensor:
        return self.x[:, -1, :]

    @property
    def query_y(self) -> torch.Tensor:
        return self.y[:, -1]

    @property
    def s(self) -> torch.Tensor:
        return (self.m**2).sum(-1)


def sample_tasks(law: TaskLaw, batch: int, generator: torch.Generator, device="cpu", dtype=torch.float32):
    """``batch`` tasks (m, ζ) as tensors on ``device``; the law is sampled by numpy from a seed
    drawn from ``generator`` (the task laws are numpy objects)."""
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device).item())
    v, r, zeta = law.sample_tasks(batch, np.random.default_rng(seed))
    m = torch.as_tensor(np.concatenate([v, r], axis=1), dtype=dtype, device=device)
    return m, torch.as_tensor(zeta, dtype=dtype, device=device)


def sample_prompts(
    law: TaskLaw,
    batch: int,
    n: int,
    generator: torch.Generator,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
) -> Prompts:
    """``batch`` prompts of ``n`` context tokens and one query each."""
    if n < 1 or batch < 1:
        raise ValueError(f"need batch ≥ 1 and n ≥ 1 context tokens, got batch={batch}, n={n}")
    m, zeta = sample_tasks(law, batch, generator, device, dtype)
    u = torch.randn(batch, n + 1, generator=generator, device=device, dtype=dtype)
    noise = torch.randn(batch, n + 1, law.d, generator=generator, device=device, dtype=dtype)
    x = u[..., None] * m[:, None, :] + noise
    y = zeta[:, None] * u
    return Prompts(x=x, y=y, m=m, zeta=zeta)
