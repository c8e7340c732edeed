r"""Sampled prompts, Monte Carlo losses and training of the full LSA layer.

**The full layer.** Z = [[x_1 … x_n, x_q], [y_1 … y_n, 0]] ∈ R^{(d+1)×(n+1)},
ŷ = [W^{PV} Z Zᵀ W^{KQ} z_q]_{d+1} / n with z_q = (x_q, 0), both (d+1)×(d+1) matrices trainable.
Write the last row of W^{PV} as (p₂₁ᵀ, p₂₂) and the first d columns of W^{KQ} as (K₁₁; k₂₁ᵀ).
Expanding Z Zᵀ:

    ŷ = x_qᵀ Γ'(θ) h + [p₂₁ᵀ (1/n)Σ_{all n+1 columns} x xᵀ K₁₁ x_q + p₂₂ (1/n)Σ_i y_i² k₂₁ᵀ x_q],
    Γ'(θ) = p₂₂ K₁₁ᵀ + k₂₁ p₂₁ᵀ,   h = (1/n) Σ_i y_i x_i.

The first term is odd in the labels, the bracket even.  For an odd target g, w ↦ −w flips every
label and keeps the law of the prompt, so E[(x_qᵀΓ'h − y_q) · even] = 0 and
L_full(θ) = L(Γ'(θ)) + ½E[even²] ≥ L(Γ*): the full layer's optimum is the reduced one (``odd_part``).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

import mmicl

from . import theory

__all__ = ["target_function", "sample_prompts", "reduced_errors", "full_predict", "odd_part", "train_full_layer",
           "paired_excess"]


def target_function(g: sp.Expr):
    """g as a numpy function."""
    return sp.lambdify(theory.z, g, "numpy")


def sample_prompts(Sigma: np.ndarray, n: int, M: int, g_fn, rng: np.random.Generator, noise: float = 0.0):
    """X (M, n+1, d) with the query last, Y (M, n+1): x ~ N(0, Σ), w ~ N(0, I), y = g(wᵀx) + noise·ε."""
    Sigma = np.asarray(Sigma, float)
    d = Sigma.shape[0]
    L = np.linalg.cholesky(Sigma)
    X = rng.standard_normal((M, n + 1, d)) @ L.T
    w = rng.standard_normal((M, d))
    Y = np.asarray(g_fn(np.einsum("mnd,md->mn", X, w)), float) * np.ones((M, n + 1))
    if noise:
        Y = Y + noise * rng.standard_normal((M, n + 1))
    return X, Y


def reduced_errors(Gamma: np.ndarray, X: np.ndarray, Y: np.ndarray, n: int) -> np.ndarray:
    """½(x_qᵀ Γ h − y_q)² per prompt."""
    h = np.einsum("mnd,mn->md", X[:, :n], Y[:, :n]) / n
    return 0.5 * (np.einsum("md,de,me->m", X[:, n], Gamma, h) - Y[:, n]) ** 2


def full_predict(PV: np.ndarray, KQ: np.ndarray, X: np.ndarray, Y: np.ndarray, n: int) -> np.ndarray:
    """The full layer's ŷ (module docstring), in numpy."""
    M, _, d = X.shape
    Z = np.concatenate([X, np.concatenate([Y[:, :n], np.zeros((M, 1))], 1)[:, :, None]], 2)  # (M, n+1, d+1)
    zq = np.concatenate([X[:, n], np.zeros((M, 1))], 1)
    left = Z @ PV[d]                                   # (M, n+1): row d+1 of W^PV times each column
    right = Z @ (KQ @ zq[:, :, None])[:, :, 0][:, :, None]  # (M, n+1, 1)
    return (left[:, :, None] * right).sum((1, 2)) / n


def odd_part(PV: np.ndarray, KQ: np.ndarray) -> np.ndarray:
    """Γ'(θ) = p₂₂ K₁₁ᵀ + k₂₁ p₂₁ᵀ (module docstring)."""
    d = PV.shape[0] - 1
    return PV[d, d] * KQ[:d, :d].T + np.outer(KQ[d, :d], PV[d, :d])


def paired_excess(PV, KQ, Gamma, Sigma, n, g_fn, M: int, rng: np.random.Generator, chunk: int = 50_000,
                  noise: float = 0.0) -> dict:
    """Mean and SE of ℓ(θ) − ℓ(Γ) over the same M fresh prompts, and ℓ(θ)'s own mean and SE."""
    diffs, own = [], []
    done = 0
    while done < M:
        m = min(chunk, M - done)
        X, Y = sample_prompts(Sigma, n, m, g_fn, rng, noise)
        full = 0.5 * (full_predict(PV, KQ, X, Y, n) - Y[:, n]) ** 2
        diffs.append(full - reduced_errors(Gamma, X, Y, n))
        own.append(full)
        done += m
    ex, lo = mmicl.Estimate.of(np.concatenate(diffs)), mmicl.Estimate.of(np.concatenate(own))
    return {"excess": ex.mean, "excess_se": ex.se, "loss": lo.mean, "loss_se": lo.se, "M": M}


def train_full_layer(Sigma, n: int, g_fn, steps: int, batch: int, lr: float, seed: int, init_scale: float = 0.1,
                     odd_init: bool = False, noise: float = 0.0) -> dict:
    """Adam on both (d+1)×(d+1) matrices, fresh prompts every step (from ``seed``), the learning rate
    decaying geometrically to lr/100; float64 on the CPU.  Every entry starts N(0, init_scale²); with
    ``odd_init`` every entry starts at 0 but p₂₂ = init_scale and K₁₁ = init_scale·I, so that
    Γ'(θ₀) = init_scale²·I and the even part is 0 (all entries still train)."""
    import torch

    Sigma = np.asarray(Sigma, float)
    d = Sigma.shape[0]
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    PV = (init_scale * torch.randn(d + 1, d + 1, generator=gen, dtype=torch.float64)).requires_grad_()
    KQ = (init_scale * torch.randn(d + 1, d + 1, generator=gen, dtype=torch.float64)).requires_grad_()
    if odd_init:
        with torch.no_grad():
            PV.zero_()
            KQ.zero_()
            PV[d, d] = init_scale
            KQ[:d, :d] = init_scale * torch.eye(d, dtype=torch.float64)
    opt = torch.optim.Adam([PV, KQ], lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda t: 0.01 ** (t / max(1, steps)))
    for _ in range(steps):
        X, Y = sample_prompts(Sigma, n, batch, g_fn, rng, noise)
        Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)
        Z = torch.cat([Xt, torch.cat([Yt[:, :n], torch.zeros(batch, 1, dtype=torch.float64)], 1)[:, :, None]], 2)
        zq = torch.cat([Xt[:, n], torch.zeros(batch, 1, dtype=torch.float64)], 1)
        yhat = ((Z @ PV[d]) * (Z @ (zq @ KQ.T)[:, :, None])[:, :, 0]).sum(1) / n
        loss = 0.5 * ((yhat - Yt[:, n]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return {"PV": PV.detach().numpy().copy(), "KQ": KQ.detach().numpy().copy()}
