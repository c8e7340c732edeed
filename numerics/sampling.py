"""Prompts of the latent-factor model (docs/model.md), vectorised in torch on any device.

For each prompt: a task (v, r, ζ) from the ``TaskLaw``; for each of its n context tokens and its
query, independently ``u ~ N(0,1)``, ``x = u·m + noise`` with ``noise ~ N(0, I_d)`` and ``y = ζ u``.
One ``torch.Generator`` seeds everything: the same seed gives the same prompts on the same device.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from mmicl.numerics.laws.language import takes_law
from mmicl.numerics.laws.task import TaskLaw

__all__ = ["Prompts", "sample_tasks", "sample_prompts", "PromptMoments", "moments_of", "sample_wishart_identity",
           "sample_moments"]



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


@takes_law
def sample_tasks(law: TaskLaw, batch: int, generator: torch.Generator, device="cpu", dtype=torch.float32):
    """``batch`` tasks (m, ζ) as tensors on ``device``; the law is sampled by numpy from a seed
    drawn from ``generator`` (the task laws are numpy objects)."""
    seed = int(torch.randint(0, 2**62, (1,), generator=generator, device=generator.device).item())
    v, r, zeta = law.sample_tasks(batch, np.random.default_rng(seed))
    m = torch.as_tensor(np.concatenate([v, r], axis=1), dtype=dtype, device=device)
    return m, torch.as_tensor(zeta, dtype=dtype, device=device)


@takes_law
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


# ---------------------------------------------------------------------------------------------
# Sufficient statistics: what the linear-attention models actually read from a prompt
# ---------------------------------------------------------------------------------------------


@dataclass
class PromptMoments:
    """The context of B prompts reduced to its moments, plus the query.

    cov: (B, d, d)  ``C = (1/n) Σ_{i≤n} x_i x_iᵀ``        (→ Λ = I + m mᵀ as n → ∞)
    xy:  (B, d)     ``h = (1/n) Σ_{i≤n} y_i x_i``         (→ ζ m)
    yy:  (B,)       ``(1/n) Σ_{i≤n} y_i²``                (→ ζ²)
    query_x (B, d), query_y (B,), m (B, d), zeta (B,) as in ``Prompts``;
    n: the context length, ``None`` for the large-context limit.

    Every model (LSA, LCA) reads a prompt's context only through (C, h, (1/n)Σy²): its query
    prediction is a function of these and of x_q.
    """

    cov: torch.Tensor
    xy: torch.Tensor
    yy: torch.Tensor
    query_x: torch.Tensor
    query_y: torch.Tensor
    m: torch.Tensor
    zeta: torch.Tensor
    n: int | None

    @property
    def s(self) -> torch.Tensor:
        return (self.m**2).sum(-1)


def moments_of(prompts: Prompts) -> PromptMoments:
    """The moments of a sampled batch of prompts (exact, no new randomness)."""
    xc, yc = prompts.context_x, prompts.context_y
    n = xc.shape[1]
    return PromptMoments(
        cov=xc.transpose(1, 2) @ xc / n,
        xy=(yc[:, :, None] * xc).sum(1) / n,
        yy=(yc**2).sum(1) / n,
        query_x=prompts.query_x,
        query_y=prompts.query_y,
        m=prompts.m,
        zeta=prompts.zeta,
        n=n,
    )


def sample_wishart_identity(batch: int, dim: int, dof: int, generator: torch.Generator,
                            device="cpu", dtype=torch.float32) -> torch.Tensor:
    """``batch`` draws of ``W = Σ_{i≤dof} g_i g_iᵀ``, ``g_i ~ N(0, I_dim)`` (Wishart(I, dof)).

    Bartlett decomposition: ``W = A Aᵀ`` with A lower triangular, ``A_kk² ~ χ²(dof − k)``
    (k = 0…dim−1) and ``A_kl ~ N(0, 1)`` below the diagonal, all independent.  Costs O(dim²) per
    draw instead of O(dof·dim); needs ``dof ≥ dim``.
    """
    if dof < dim:
        raise ValueError(f"Bartlett sampling needs dof ≥ dim, got dof={dof} < dim={dim}; "
                         "sample the prompts themselves (sample_prompts + moments_of) instead")
    k = torch.arange(dim, device=device, dtype=dtype)
    shape = (dof - k) / 2  # χ²(ν) = 2·Gamma(ν/2)
    chi2 = 2 * torch._standard_gamma(shape.expand(batch, dim).contiguous(), generator=generator)
    a = torch.randn(batch, dim, dim, generator=generator, device=device, dtype=dtype).tril(-1)
    a = a + torch.diag_embed(chi2.sqrt())
    return a @ a.transpose(1, 2)


@takes_law
def sample_moments(
    law: TaskLaw,
    batch: int,
    n: int | None,
    generator: torch.Generator,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
) -> PromptMoments:
    """``batch`` prompts' moments with exactly the law that ``moments_of(sample_prompts(...))`` has,
    without drawing the n context tokens; ``n=None`` gives the large-context limit
    ``C = Λ, h = ζ m, (1/n)Σy² = ζ²``.

    Maths: with ``x_i = u_i m + ξ_i``, the context enters only through the Gram matrix
    ``G = (1/n) Σ_i w_i w_iᵀ`` of ``w_i = (u_i, ξ_i) ~ N(0, I_{d+1})``, which is Wishart(I, n)/n.
    Writing ``G = [[g, aᵀ], [a, Ξ]]``: ``C = g m mᵀ + m aᵀ + a mᵀ + Ξ``, ``h = ζ (g m + a)``,
    ``(1/n)Σy² = ζ² g``.  The query is drawn as in ``sample_prompts``.
    """
    if batch < 1 or (n is not None and n < 1):
        raise ValueError(f"need batch ≥ 1 and n ≥ 1 context tokens (or n=None), got batch={batch}, n={n}")
    d = law.d
    m, zeta = sample_tasks(law, batch, generator, device, dtype)
    uq = torch.randn(batch, generator=generator, device=device, dtype=dtype)
    xq = uq[:, None] * m + torch.randn(batch, d, generator=generator, device=device, dtype=dtype)
    yq = zeta * uq
    if n is None:
        eye = torch.eye(d, device=device, dtype=dtype)
        cov = eye + m[:, :, None] * m[:, None, :]
        xy = zeta[:, None] * m
        yy = zeta**2
    elif n >= d + 1:
        gram = sample_wishart_identity(batch, d + 1, n, generator, device, dtype) / n
        g, a, xi = gram[:, 0, 0], gram[:, 1:, 0], gram[:, 1:, 1:]
        ma = m[:, :, None] * a[:, None, :]
        cov = g[:, None, None] * m[:, :, None] * m[:, None, :] + ma + ma.transpose(1, 2) + xi
        xy = zeta[:, None] * (g[:, None] * m + a)
        yy = zeta**2 * g
    else:  # too few tokens for Bartlett: draw them
        u = torch.randn(batch, n, generator=generator, device=device, dtype=dtype)
        xc = u[..., None] * m[:, None, :] + torch.randn(batch, n, d, generator=generator, device=device, dtype=dtype)
        yc = zeta[:, None] * u
        cov = xc.transpose(1, 2) @ xc / n
        xy = (yc[:, :, None] * xc).sum(1) / n
        yy = (yc**2).sum(1) / n
    return PromptMoments(cov=cov, xy=xy, yy=yy, query_x=xq, query_y=yq, m=m, zeta=zeta, n=n)
