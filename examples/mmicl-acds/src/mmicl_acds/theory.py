r"""The losses of one linear-transformer layer and of L steps of preconditioned gradient descent,
derived with SymPy.

**Model** (the paper's, and its authors' code's): context x_1 … x_n and query x_q i.i.d. N(0, Σ) in
R^d, a task w ~ N(0, Σ⁻¹) and labels y = wᵀx, no noise.  The loss is the plain mean square
E[(ŷ − y_q)²] (no ½, as in the paper).  Write x = Σ^{1/2} ξ and v = Σ^{1/2 T} w: then ξ, v ~ N(0, I)
and y = vᵀξ, so the labels do not see Σ.

**One layer** (Theorem 1 of the paper).  With P = [[B, 0], [0, 1]], Q = [[A, 0], [0, 0]] the layer
predicts ŷ = −x_qᵀ Aᵀ h, h = (1/n) Σ_i y_i x_i: one step of gradient descent from w = 0 on
R(w) = (1/2n) Σ_i (y_i − wᵀx_i)², preconditioned by Γ = −Aᵀ.  Then
E[(ŷ − y_q)²] = tr(ΓᵀΣΓM) − 2 tr(ΓB) + E y² with M = E[hhᵀ] and B = E[ββᵀ], β = E[yx | w];
``one_layer_moments`` integrates M and B coordinate by coordinate for a diagonal Σ with symbolic
entries (Gaussian moments by Isserlis' theorem), and ``one_layer_optimum`` solves ΣΓM = B for Γ.
The closed form it must equal is Γ* = n/(n + d + 1)·Σ⁻¹: the preconditioner adapts to the covariance
(Σ⁻¹) and to the finite context (the factor n/(n + d + 1) < 1).

**L steps** (the paper's multi-layer results).  Preconditioned GD with preconditioner Σ⁻¹ and step
sizes a_1 … a_L, from w = 0, leaves in whitened coordinates the error e_L = p(S) v with
S = (1/n) Σ_i ξ_i ξ_iᵀ and p(s) = Π_ℓ (1 − a_ℓ s), so its loss is E[(ξ_qᵀ e_L)²] = E tr p(S)², a
linear combination of the trace moments m_k = E tr S^k (k ≤ 2L).  ``trace_moment`` derives
E tr (XXᵀ)^k for a d × n standard Gaussian X by Wick's theorem: a sum over the (2k − 1)!! pairings
of the 2k entries of the trace, each worth d^{#row classes}·n^{#column classes} — a polynomial in
n and d.  The best L steps minimise E tr p(S)² over polynomials p of degree L with p(0) = 1: a
quadratic in p's coefficients, solved exactly (``best_steps``); the step sizes are the reciprocals
of p's roots, real because p is orthogonal to lower degrees under the law of S's eigenvalues.
A layer with B = 0 and A_ℓ = −a_ℓ Σ⁻¹ computes exactly these L steps (``numerics``).
"""
from __future__ import annotations

from functools import lru_cache
from math import prod

import numpy as np
import sympy as sp

__all__ = ["n_sym", "d_sym", "s_sym", "trace_moment", "trace_moments", "pgd_loss_poly", "best_steps", "pgd_loss",
           "one_layer_moments", "one_layer_optimum", "one_layer_closed_form", "one_layer_loss"]

n_sym, d_sym = sp.symbols("n d", positive=True)
s_sym = sp.Symbol("s")  # the variable of the step polynomial p(s)


def _pairings(m: int) -> np.ndarray:
    """All perfect matchings of 0 … m−1 (m even) as an array (count, m) of partners."""
    if m == 0:
        return np.zeros((1, 0), dtype=np.int8)
    rest = _pairings(m - 2)  # matchings of m − 2 elements, relabelled below
    blocks = []
    for j in range(1, m):
        others = np.array([i for i in range(1, m) if i != j], dtype=np.int8)  # element t of rest ↦ others[t]
        part = np.empty((rest.shape[0], m), dtype=np.int8)
        part[:, 0], part[:, j] = j, 0
        part[:, others] = others[rest]
        blocks.append(part)
    return np.concatenate(blocks)


def _classes(partner: np.ndarray, node: np.ndarray, k: int) -> np.ndarray:
    """Per pairing, the number of classes of the k index variables that the pairing makes equal
    (entry f paired with g identifies node[f] with node[g]).  Labels start as the variables' own
    numbers and take the smaller label across every identification until nothing changes: then each
    class carries its least member's number, and the classes are counted by label[v] == v."""
    label = np.tile(np.arange(k, dtype=np.int8), (partner.shape[0], 1))
    rows = np.arange(partner.shape[0])
    while True:
        before = label.copy()
        for f in range(partner.shape[1]):
            other = node[partner[:, f]]
            low = np.minimum(label[:, node[f]], label[rows, other])
            label[:, node[f]] = low
            label[rows, other] = low
        if np.array_equal(before, label):
            return (label == np.arange(k)).sum(1)


@lru_cache(maxsize=None)
def trace_moment(k: int) -> sp.Expr:
    """E tr (X Xᵀ)^k for X a d × n matrix of independent N(0, 1) entries, as a polynomial in n, d
    (Wick's theorem, module docstring).  Entry 2t of the trace is X[i_t, j_t], entry 2t+1 is
    X[i_{t+1}, j_t] (i_{k} = i_0)."""
    if not isinstance(k, int) or not 0 <= k <= 8:
        raise ValueError(f"trace moments are derived for k = 0 … 8 (2 million pairings at 8), got {k!r}")
    if k == 0:
        return d_sym
    partner = _pairings(2 * k)
    row = np.array([t // 2 if t % 2 == 0 else (t // 2 + 1) % k for t in range(2 * k)], dtype=np.int8)
    col = np.array([t // 2 for t in range(2 * k)], dtype=np.int8)
    rows, cols = _classes(partner, row, k), _classes(partner, col, k)
    pairs, counts = np.unique(np.stack([rows, cols], 1), axis=0, return_counts=True)
    return sp.expand(sum(int(c) * d_sym ** int(a) * n_sym ** int(b) for (a, b), c in zip(pairs, counts)))


def trace_moments(top: int) -> list[sp.Expr]:
    """m_k = E tr S^k, S = (1/n) Σ_i ξ_i ξ_iᵀ, for k = 0 … top."""
    return [sp.factor(trace_moment(k) / n_sym**k) for k in range(top + 1)]


def pgd_loss_poly(p: sp.Expr, moments: list) -> sp.Expr:
    """E tr p(S)² for a polynomial p in ``s_sym``, from the trace moments."""
    q = sp.Poly(sp.expand(p**2), s_sym)
    return sp.expand(sum(c * moments[k] for (k,), c in q.terms()))


@lru_cache(maxsize=None)
def _moments_at(top: int, n: int, d: int) -> tuple:
    return tuple(sp.nsimplify(m.subs({n_sym: n, d_sym: d})) for m in trace_moments(top))


def best_steps(L: int, n: int, d: int) -> dict:
    """The best L steps of Σ⁻¹-preconditioned GD at (n, d): p's coefficients (exact rationals), its
    loss E tr p(S)² (exact), and the step sizes 1/root (floats, sorted)."""
    if not (isinstance(L, int) and 1 <= L <= 4):
        raise ValueError(f"L is a whole number of steps from 1 to 4, got {L!r}")
    m = _moments_at(2 * L, int(n), int(d))
    c = sp.symbols(f"c1:{L + 1}")
    p = 1 + sum(cj * s_sym ** (j + 1) for j, cj in enumerate(c))
    loss = pgd_loss_poly(p, list(m))
    (sol,) = sp.linsolve([sp.diff(loss, cj) for cj in c], c)
    best = sp.Poly(p.subs(dict(zip(c, sol))), s_sym)
    roots = np.roots([float(v) for v in best.all_coeffs()])
    return {"coeffs": [sp.Rational(v) for v in sol], "loss": sp.nsimplify(loss.subs(dict(zip(c, sol)))),
            "steps": sorted(float(1 / r.real) for r in roots), "roots_imag": float(max(abs(roots.imag), default=0.0))}


def pgd_loss(steps, n: int, d: int) -> float:
    """E tr p(S)² for p(s) = Π(1 − a s) at the given step sizes."""
    steps = [float(a) for a in steps]
    m = _moments_at(2 * len(steps), int(n), int(d))
    coeffs = np.polynomial.polynomial.polyfromroots([1 / a for a in steps]) * prod(-a for a in steps) if steps else np.ones(1)
    sq = np.polynomial.polynomial.polymul(coeffs, coeffs)
    return float(sum(float(m[k]) * c for k, c in enumerate(sq)))


# ---------------------------------------------------------------- one layer, any Γ
def _std_moment(k: int) -> int:
    return 0 if k % 2 else prod(range(k - 1, 0, -2))


def _expect(expr: sp.Expr, variables) -> sp.Expr:
    """E over independent N(0, 1) ``variables`` of a polynomial in them (Isserlis: E ξ^k = (k−1)!!)."""
    poly = sp.Poly(sp.expand(expr), *variables)
    return sp.expand(sum(c * prod(_std_moment(k) for k in mon) for mon, c in poly.terms()))


@lru_cache(maxsize=None)
def one_layer_moments(dim: int) -> dict:
    """M = E[hhᵀ] and B = E[ββᵀ] for Σ = diag(s_0 … s_{dim−1}) symbolic: x_a = √s_a ξ_a, w_a = v_a/√s_a
    (w ~ N(0, Σ⁻¹)), y = wᵀx; M = E[y² x xᵀ]/n + (1 − 1/n) B."""
    xi, v = sp.symbols(f"xi0:{dim}", real=True), sp.symbols(f"v0:{dim}", real=True)
    s = sp.symbols(f"s0:{dim}", positive=True)
    x = [sp.sqrt(s[a]) * xi[a] for a in range(dim)]
    y = sum(v[a] / sp.sqrt(s[a]) * x[a] for a in range(dim))
    beta = [_expect(y * x[a], xi) for a in range(dim)]
    B = sp.Matrix(dim, dim, lambda a, b: _expect(beta[a] * beta[b], v))
    Y2 = sp.Matrix(dim, dim, lambda a, b: _expect(y**2 * x[a] * x[b], xi + v))
    M = (Y2 / n_sym + (1 - 1 / n_sym) * B).applyfunc(sp.simplify)
    return {"M": M, "B": B, "Sigma": sp.diag(*s), "ey2": _expect(y**2, xi + v)}


def one_layer_optimum(dim: int) -> sp.Matrix:
    """Γ solving ∇L = 2(ΣΓM − B) = 0 over all dim × dim matrices (a linear solve)."""
    mo = one_layer_moments(dim)
    G = sp.Matrix(dim, dim, lambda a, b: sp.Symbol(f"g{a}{b}"))
    (sol,) = sp.linsolve(list(mo["Sigma"] * G * mo["M"] - mo["B"]), list(G))
    return sp.Matrix(dim, dim, [sp.simplify(v) for v in sol])


def one_layer_closed_form(Sigma) -> sp.Matrix:
    """n/(n + d + 1)·Σ⁻¹."""
    Sigma = sp.Matrix(Sigma)
    return n_sym / (n_sym + Sigma.shape[0] + 1) * Sigma.inv()


def one_layer_loss(Gamma: np.ndarray, Sigma: np.ndarray, n: int) -> float:
    """E[(x_qᵀΓh − y_q)²] at a numeric Σ, from the moments in closed form: B = Σ, M = (n + d + 1)/n·Σ
    (the diagonal derivation at Σ's eigenvalues, rotated: the law is equivariant)."""
    Sigma, G = np.asarray(Sigma, float), np.asarray(Gamma, float)
    d = Sigma.shape[0]
    vals, U = np.linalg.eigh((Sigma + Sigma.T) / 2)
    M, B, ey2 = _one_layer_numeric(d)
    Mn = U @ np.asarray(M(list(vals), n), float) @ U.T
    Bn = U @ np.asarray(B(list(vals)), float) @ U.T
    return float(np.trace(G.T @ Sigma @ G @ Mn) - 2 * np.trace(G @ Bn) + ey2)


@lru_cache(maxsize=None)
def _one_layer_numeric(dim: int):
    mo = one_layer_moments(dim)
    s = list(mo["Sigma"].diagonal())
    return sp.lambdify([s, n_sym], mo["M"], "numpy"), sp.lambdify([s], mo["B"], "numpy"), float(mo["ey2"])
