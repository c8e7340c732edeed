"""Quadrature rules on the squared norm ``s``: ``E[h(S)] ≈ Σ_k w_k h(s_k)``.

Every expectation over a task law goes through a rule ``(nodes, weights)``.  Discrete laws have exact
rules (their atoms).  Continuous laws on ``[a, b]`` get composite Gauss rules on pieces that halve in
width towards both ends (``graded_breaks``): a depth-T integrand ``|1 − αλ|^{2T}`` lives within
O(1/T) of the ends of the support, so the finest pieces are ``(b − a)/(8T)`` wide.  The pieces at the
ends are Gauss–Jacobi, so that a Beta density with a singular end is integrated exactly, the others
Gauss–Legendre.

A rule with too many nodes (the product rule of a sum of two independent norms) is compressed piece
by piece (``compress_rule``): the nodes of each piece are replaced by the n-point Gauss rule of the
discrete measure they carry (``discrete_gauss``: Lanczos on that measure, then Golub–Welsch), which
keeps its mass and its moments up to degree 2n − 1.

SciPy is imported on first use, so that reading a LAW string stays light.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Sequence

import numpy as np

__all__ = [
    "Rule",
    "gauss_jacobi",
    "gauss_legendre",
    "graded_breaks",
    "compress_rule",
    "discrete_gauss",
    "lanczos",
]


@dataclass(frozen=True)
class Rule:
    """A quadrature rule: ``E[h(s)] ≈ Σ_k weights[k] · h(nodes[k])`` (weights sum to 1)."""

    nodes: np.ndarray
    weights: np.ndarray

    def expect(self, h: Callable[[np.ndarray], np.ndarray]) -> float:
        return float(np.dot(self.weights, h(self.nodes)))

    @staticmethod
    def join(rules: Sequence["Rule"], probs: Sequence[float]) -> "Rule":
        nodes = np.concatenate([r.nodes for r in rules])
        weights = np.concatenate([p * r.weights for r, p in zip(rules, probs)])
        return Rule(nodes, weights)


@lru_cache(maxsize=64)
def gauss_jacobi(n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1] for the weight ``(1−x)^a x^b``, normalised to total mass 1."""
    from scipy import special  # SciPy loads on first use: parsing a LAW stays light

    x, w = special.roots_jacobi(n, a, b)
    return (x + 1) / 2, w / w.sum()


@lru_cache(maxsize=8)
def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of the n-point Gauss–Legendre rule on [0, 1] (weights sum to 1)."""
    x, w = np.polynomial.legendre.leggauss(n)
    return (x + 1) / 2, w / 2


def graded_breaks(depth: int) -> np.ndarray:
    """Break points in [0, 1] that halve towards both ends, down to ``1/(8·depth)``."""
    finest = min(0.25, 1.0 / (8.0 * max(depth, 1)))
    left = [0.0]
    h = finest
    while h < 0.25:
        left.append(h)
        h *= 2.0
    left.append(0.25)
    left = np.array(left)
    inner = np.array([0.5])
    return np.unique(np.concatenate([left, inner, 1.0 - left[::-1]]))


def compress_rule(rule: Rule, edges: np.ndarray, n: int) -> Rule:
    """``rule`` with its nodes in each piece ``[edges[j], edges[j+1]]`` replaced by the ``n``-point
    Gauss rule of that discrete measure where there are more than ``2n`` distinct ones (see
    ``SumLaw.rule`` for the accuracy argument); elsewhere its nodes stay, equal ones merged and
    zero weights dropped.  Returns ``rule`` itself if no piece has more than ``2n`` nodes."""
    nodes, weights = np.asarray(rule.nodes, float), np.asarray(rule.weights, float)
    pieces = len(edges) - 1
    idx = np.clip(np.searchsorted(edges, nodes, side="right") - 1, 0, pieces - 1)
    if np.bincount(idx, minlength=pieces).max() <= 2 * n:
        return rule
    order = np.argsort(idx, kind="stable")
    starts = np.searchsorted(idx[order], np.arange(pieces + 1))
    xs, ws = [], []
    for j in range(pieces):
        sel = order[starts[j]:starts[j + 1]]
        x, w = nodes[sel], weights[sel]
        x, inverse = np.unique(x[w > 0], return_inverse=True)  # equal nodes merged, in order
        w = np.bincount(inverse, weights=w[w > 0], minlength=x.size)
        if x.size > 2 * n:
            c, h = (x[-1] + x[0]) / 2, (x[-1] - x[0]) / 2  # the nodes' hull (sorted) onto [−1, 1]
            t, g = discrete_gauss((x - c) / h, w, n)
            x, w = np.clip(c + h * t, x[0], x[-1]), g
        xs.append(x)
        ws.append(w)
    return Rule(np.concatenate(xs), np.concatenate(ws))


def discrete_gauss(x: np.ndarray, w: np.ndarray, n: int, lanczos_fn: Callable | None = None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The ``n``-point Gauss rule of the discrete measure ``Σ_k w_k δ(x_k)`` (``w > 0``, ``x`` in
    [−1, 1], more than ``n`` distinct points): the Lanczos process on ``diag(x)`` from ``√(w/mass)``
    (the discretised Stieltjes procedure in orthonormal form) gives the Jacobi matrix, and its
    eigen-decomposition (Golub–Welsch) the rule.  Exact for polynomials of degree ≤ 2n − 1.

    Plain Lanczos first (each vector orthonormalised against the two before it); if the last two
    vectors have lost orthogonality to the others beyond 1e-13 (Ritz values converging onto
    heavy, isolated nodes), it is redone with full re-orthogonalisation (two passes per step).
    Dot products go through ``einsum``, not BLAS: a threaded BLAS on long vectors stalls on a
    shared machine.  ``lanczos_fn`` replaces the Lanczos routine (default: ``lanczos``; tests pass a
    wrapper to see which variant ran)."""
    run = lanczos_fn if lanczos_fn is not None else lanczos
    Q, a, b = run(x, w, n, full=False)
    if a.size < n or _lost_orthogonality(Q) > 1e-13:  # (an early stop is confirmed the slow way)
        Q, a, b = run(x, w, n, full=True)
    from scipy.linalg import eigh_tridiagonal

    theta, V = eigh_tridiagonal(a, b)
    return theta, float(w.sum()) * V[0] ** 2


def lanczos(x: np.ndarray, w: np.ndarray, n: int, full: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(Q, a, b)``: Lanczos vectors (rows) and the Jacobi matrix's diagonal and off-diagonal of
    the measure ``Σ_k w_k δ(x_k)``; ``full`` re-orthogonalises against every earlier vector.
    Stops early if the measure lives, to rounding, on fewer than ``n`` points."""
    Q = np.empty((n, x.size))
    Q[0] = np.sqrt(w / w.sum())
    a, b = np.empty(n), np.empty(n - 1)
    for k in range(n):
        xq = x * Q[k]
        a[k] = np.einsum("i,i->", Q[k], xq)
        if k == n - 1:
            break
        r = xq - a[k] * Q[k]
        if k:
            r -= b[k - 1] * Q[k - 1]
        for _ in range(2 if full else 1):
            basis = Q[: k + 1] if full else Q[max(k - 1, 0): k + 1]
            r -= np.einsum("ji,j->i", basis, np.einsum("ji,i->j", basis, r))
        b[k] = math.sqrt(np.einsum("i,i->", r, r))
        if b[k] < 1e-13:  # μ lives (to rounding) on k + 1 points: its (k+1)-point rule is exact
            return Q[: k + 1], a[: k + 1], b[:k]
        Q[k + 1] = r / b[k]
    return Q, a, b


def _lost_orthogonality(Q: np.ndarray) -> float:
    """``max |q_i·q_j − δ_ij|`` over the last two rows against all rows (in Lanczos the loss of
    orthogonality only grows from step to step, so the last vectors show it)."""
    G = np.einsum("ji,ki->jk", Q[-2:], Q)
    G[0, -2] -= 1.0
    G[1, -1] -= 1.0
    return float(np.abs(G).max())
