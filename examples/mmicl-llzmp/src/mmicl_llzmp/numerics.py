r"""Finite-dimensional simulation of the model: pretraining sequences, the ridge fit of Γ over the
d(d+1) features of H_Z, and the ICL test error on fresh tasks, by Monte Carlo.

A sequence has ℓ + 1 tokens x ~ N(0, I_d/d) and labels y = βᵀx + ε, ε ~ N(0, ρ);
H_Z = x_q·[(d/ℓ)Σ_{i≤ℓ} y_i x_iᵀ, (1/ℓ)Σ_{i≤ℓ} y_i²].  Pretraining draws k = round(κd) tasks
(β ~ N(0, I_d), rescaled to ‖β‖ = √d) and n = round(τd²) sequences, task i mod k for sequence i (each
task used equally often, up to one); κ = inf gives every sequence a task of its own.  Γ minimises
Σ_μ (y_q^μ − ⟨Γ, H^μ⟩)² + (n/d)λ‖Γ‖²_F.  The test error draws fresh β ~ N(0, I_d).
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["features", "fit_gamma", "icl_errors", "simulate"]


def _sequences(tasks: np.ndarray, ell: int, rho: float, rng: np.random.Generator):
    m, d = tasks.shape
    X = rng.standard_normal((m, ell + 1, d)) / math.sqrt(d)
    y = np.einsum("mtd,md->mt", X, tasks) + math.sqrt(rho) * rng.standard_normal((m, ell + 1))
    return X, y


def features(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """vec H_Z (m, d(d+1)), row-major, and the query labels (m,)."""
    m, t, d = X.shape
    ell = t - 1
    h = np.concatenate([(d / ell) * np.einsum("mid,mi->md", X[:, :ell], y[:, :ell]),
                        (y[:, :ell] ** 2).mean(1)[:, None]], 1)
    return (X[:, ell, :, None] * h[:, None, :]).reshape(m, d * (d + 1)), y[:, ell]


def _tasks(k: int, d: int, rng: np.random.Generator, unit_norm: bool) -> np.ndarray:
    B = rng.standard_normal((k, d))
    return B * (math.sqrt(d) / np.linalg.norm(B, axis=1, keepdims=True)) if unit_norm else B


def fit_gamma(d: int, alpha: float, kappa: float, tau: float, rho: float, lam: float, rng: np.random.Generator,
              chunk: int = 400) -> np.ndarray:
    """Γ (d × (d+1)) fitted by ridge on n = round(τd²) pretraining sequences (module docstring)."""
    ell, n = max(1, round(alpha * d)), max(1, round(tau * d * d))
    k = n if math.isinf(kappa) else max(1, round(kappa * d))
    pool = None if math.isinf(kappa) else _tasks(k, d, rng, True)
    F = d * (d + 1)
    G, v = np.zeros((F, F)), np.zeros(F)
    for start in range(0, n, chunk):
        idx = np.arange(start, min(n, start + chunk))
        tasks = _tasks(len(idx), d, rng, True) if pool is None else pool[idx % k]
        H, yq = features(*_sequences(tasks, ell, rho, rng))
        G += H.T @ H
        v += H.T @ yq
    G[np.diag_indices(F)] += n / d * lam
    return np.linalg.solve(G, v).reshape(d, d + 1)


def icl_errors(gamma: np.ndarray, alpha: float, rho: float, M: int, rng: np.random.Generator, chunk: int = 2000) -> np.ndarray:
    """(y_q − ⟨Γ, H_Z⟩)² on M test sequences, each with a fresh task β ~ N(0, I_d)."""
    d = gamma.shape[0]
    ell = max(1, round(alpha * d))
    out = []
    for start in range(0, M, chunk):
        m = min(chunk, M - start)
        H, yq = features(*_sequences(_tasks(m, d, rng, False), ell, rho, rng))
        out.append((yq - H @ gamma.reshape(-1)) ** 2)
    return np.concatenate(out)


def simulate(d: int, alpha: float, kappa: float, tau: float, rho: float, lam: float, trials: int, M_test: int,
             rng: np.random.Generator) -> np.ndarray:
    """Per trial (a fresh pretraining set and fit), the mean ICL test error over M_test sequences."""
    return np.array([icl_errors(fit_gamma(d, alpha, kappa, tau, rho, lam, rng), alpha, rho, M_test, rng).mean()
                     for _ in range(trials)])
