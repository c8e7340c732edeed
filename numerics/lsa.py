"""The best single-layer LSA for a task law, its gap to Bayes, and where it fails (Thm 4.1).

By ``theory.lsa``, for every task law of ``TaskLaw`` (directions are sign-symmetric, so the prompt
law is invariant under ``y ↦ −y``) the best full LSA is the best reduced one, ``ŷ = x_qᵀ Γ h``,
at every context length n.  Its excess risk over Bayes (task known) is, per prompt,

    e(Γ; m, ζ) = ζ² [(Γm − c m)ᵀ Λ (Γm − c m) + (1/n) tr(ΓᵀΛΓ(I + 2mmᵀ))],   c = 1/(1+s).

Every ``TaskLaw`` is also invariant under flipping the sign of any single coordinate of m, and the
risk is strictly convex in Γ, so the minimiser is diagonal, ``Γ = diag(γ)``.  Then (ζ ⊥ m)

    E e = E[ζ²] · (γᵀ A γ − 2 bᵀγ + κ),
    A = E[diag(m²) + m² m²ᵀ] + (1/n) E[diag(1 + 3m²) + 2 m² m²ᵀ],   b = E[m²],   κ = E[s/(1+s)],

(``m²`` elementwise) and the normal equations are ``A γ = b``.  Only the second and fourth moments
of the coordinates enter A and b; they are computed *given the norms* from the moments of the
directions (closed form when isotropic, a 1-D integral when anisotropic) and integrated over the
norms with the law's quadrature rule (exact sums for discrete laws).  The gap is evaluated as
``E[e(γ*)]`` — an average of non-negative terms, so a point law gives 0 to rounding and no
cancellation eats digits.

A second route, for cross-checks (``block_closed_form``): where the optimal Γ is constant on each
block of m (every law as n → ∞; isotropic directions at finite n), only the norm moments enter,

    A_ab = δ_ab E S_a + E[S_a S_b] + (1/n)(δ_ab (d_a + 3 E S_a) + 2 E[S_a S_b]),   b_a = E S_a,
    gap = E[ζ²](κ − bᵀA⁻¹b),

with ``S_b`` the squared norm of block b; the moments are integrated by mpmath (tanh-sinh).

The Monte Carlo and torch-training side (``mc_reduced_excess``, ``train_full_lsa``,
``paired_test_risks``, ``comparison``, …) is ``numerics.lsa_training``; its names are still
importable from here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import numpy as np
from scipy import integrate

from mmicl.numerics.laws.language import takes_law
from mmicl.numerics.laws.scalar import LawError
from .strict_json import context_length_fields
from mmicl.numerics.laws.task import TaskLaw
from .resolution import flag_resolution
from .validate import check_lsa_size

__all__ = [
    "direction_moments",
    "NormBlocks",
    "norm_blocks",
    "conditional_moments",
    "BestLSA",
    "best_lsa",
    "gap_resolution",
    "lsa_excess",
    "excess_given_norms",
    "per_prompt_excess",
    "best_gamma_general",
    "isotropic_gap_exact",
    "check_context_length",
    "bayes_weight",
    "block_closed_form",
    "block_closed_form_rule",
    "block_closed_form_applicable",
    "expand_blocks",
    "block_solution",
]

# ---------------------------------------------------------------------------------------------
# Moments of the directions
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=64)
def _anisotropic_moments(scales: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """θ = Dg/‖Dg‖ with a = diag(D)²: with ``1/Q = ∫₀^∞ e^{−tQ} dt``, ``1/Q² = ∫₀^∞ t e^{−tQ} dt``
    and ``E[g² e^{−tag²}] = (1+2ta)^{−3/2}``, ``E[g⁴ e^{−tag²}] = 3(1+2ta)^{−5/2}``:

        E θ_i²     = ∫₀^∞ a_i (1+2ta_i)^{−1} Π_k (1+2ta_k)^{−1/2} dt,
        E θ_i²θ_j² = ∫₀^∞ t a_i a_j (1 + 2δ_ij)(1+2ta_i)^{−1}(1+2ta_j)^{−1} Π_k (1+2ta_k)^{−1/2} dt.

    Integrated by adaptive quadrature (QUADPACK) to relative tolerance 1e-13."""
    a = np.asarray(scales, float) ** 2
    k = a.size
    base = lambda t: np.prod((1 + 2 * t * a) ** -0.5)  # noqa: E731
    opts = dict(epsabs=0.0, epsrel=1e-13, limit=200)
    m2 = np.array([integrate.quad(lambda t, i=i: a[i] / (1 + 2 * t * a[i]) * base(t), 0, np.inf, **opts)[0]
                   for i in range(k)])
    m4 = np.empty((k, k))
    for i in range(k):
        for j in range(i, k):
            f = lambda t, i=i, j=j: (t * a[i] * a[j] * (3.0 if i == j else 1.0)  # noqa: E731
                                     / ((1 + 2 * t * a[i]) * (1 + 2 * t * a[j])) * base(t))
            m4[i, j] = m4[j, i] = integrate.quad(f, 0, np.inf, **opts)[0]
    return m2, m4


def direction_moments(dim: int, scales: tuple[float, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``(E θ_i², E θ_i²θ_j²)`` for a random unit direction θ in ``R^dim``: uniform on the sphere
    (``scales=None``: ``1/dim`` and ``(1 + 2δ_ij)/(dim(dim+2))``) or ``Dg/‖Dg‖``."""
    if dim < 1:
        raise ValueError(f"dimension must be ≥ 1, got {dim}")
    if scales is None or len(set(scales)) == 1:
        m2 = np.full(dim, 1.0 / dim)
        m4 = (np.ones((dim, dim)) + 2 * np.eye(dim)) / (dim * (dim + 2))
        return m2, m4
    return _anisotropic_moments(tuple(float(x) for x in scales))


# ---------------------------------------------------------------------------------------------
# The norms: one block (s, isotropic in R^d) or two (‖v‖², ‖r‖²)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NormBlocks:
    """The coordinates of m split in blocks, each ``√(S_b) θ_b`` with an independent direction.

    ``nodes (K, B)``: quadrature nodes of the block norms ``S_b``; ``weights (K,)``;
    ``slices``: the coordinates of each block; ``m2``/``m4``: each block's direction moments."""

    nodes: np.ndarray
    weights: np.ndarray
    slices: tuple[slice, ...]
    m2: tuple[np.ndarray, ...]
    m4: tuple[np.ndarray, ...]
    d: int
    zeta2: float  # E[ζ²]


@takes_law
def norm_blocks(law: TaskLaw) -> NormBlocks:
    """The block structure and a quadrature rule for the norms of ``law``."""
    check_lsa_size(law, "the LSA's moments")
    if law.s is not None:
        law.s.require_bounded("the best LSA by quadrature")
        r = law.s.rule()
        m2, m4 = direction_moments(law.d)
        return NormBlocks(r.nodes[:, None], r.weights, (slice(0, law.d),), (m2,), (m4,), law.d,
                          law.zeta.second_moment())
    for part in (law.sv, law.sr):
        part.require_bounded("the best LSA by quadrature")
    rv, rr = law.sv.rule(), law.sr.rule()
    nodes = np.stack(np.broadcast_arrays(rv.nodes[:, None], rr.nodes[None, :]), -1).reshape(-1, 2)
    weights = (rv.weights[:, None] * rr.weights[None, :]).ravel()
    mv = direction_moments(law.d1, law.anisotropy_v)
    mr = direction_moments(law.d2, law.anisotropy_r)
    return NormBlocks(nodes, weights, (slice(0, law.d1), slice(law.d1, law.d)), (mv[0], mr[0]),
                      (mv[1], mr[1]), law.d, law.zeta.second_moment())


def conditional_moments(blocks: NormBlocks, norms: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``E[m_i² | norms]`` (K, d) and ``E[m_i² m_j² | norms]`` (K, d, d) for norm rows (K, B)."""
    norms = np.atleast_2d(np.asarray(norms, float))
    k = norms.shape[0]
    mu2 = np.zeros((k, blocks.d))
    for b, sl in enumerate(blocks.slices):
        mu2[:, sl] = norms[:, b : b + 1] * blocks.m2[b][None, :]
    mu4 = mu2[:, :, None] * mu2[:, None, :]  # independent blocks: product of second moments
    for b, sl in enumerate(blocks.slices):
        mu4[:, sl, sl] = norms[:, b, None, None] ** 2 * blocks.m4[b][None]
    return mu2, mu4


def excess_given_norms(blocks: NormBlocks, gamma: np.ndarray, norms: np.ndarray, n: int | None = None) -> np.ndarray:
    """``E[e(diag γ; m, ζ) | norms] / ζ²`` for each row of ``norms``: with ``δ = γ − c``,
    ``Σ_i δ_i² μ2_i + δᵀ μ4 δ + (1/n)(Σ_i γ_i²(1 + 3μ2_i) + 2γᵀμ4γ)``.  Each term is ≥ 0
    (μ4 is a second-moment matrix)."""
    norms = np.atleast_2d(np.asarray(norms, float))
    mu2, mu4 = conditional_moments(blocks, norms)
    c = bayes_weight(norms.sum(1))
    delta = np.asarray(gamma, float)[None, :] - c[:, None]
    e = (delta**2 * mu2).sum(1) + np.einsum("ki,kij,kj->k", delta, mu4, delta)
    if n is not None:
        g = np.asarray(gamma, float)
        e = e + ((g**2 * (1 + 3 * mu2)).sum(1) + 2 * np.einsum("i,kij,j->k", g, mu4, g)) / n
    return e


# ---------------------------------------------------------------------------------------------
# The best LSA
# ---------------------------------------------------------------------------------------------


def check_context_length(n) -> int | None:
    """The context length ``n`` as an int ≥ 1, or None for the large-context limit n → ∞."""
    if n is None:
        return None
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"the context length n must be a positive integer (or None for n → ∞), got {n!r}")
    return int(n)


@dataclass(frozen=True)
class BestLSA:
    """The best LSA ``ŷ = x_qᵀ diag(γ) h`` for a law at context length n (None: n → ∞)."""

    law: str
    n: int | None
    gamma: np.ndarray  # the diagonal of Γ
    gap: float  # excess risk over Bayes (task-known), E[e(Γ)]; a BelowResolution at or below ``resolution``
    bayes_risk: float  # E[ζ²/(1+s)]
    undetermined: tuple[int, ...] = ()  # coordinates with E[m_i²] = 0 (γ_i set to 0)
    resolution: float = 0.0  # the gap that the rounding of δ = γ − 1/(1+s) alone produces (``gap_resolution``)

    @property
    def lsa_risk(self) -> float:
        return self.bayes_risk + self.gap

    @property
    def gamma_matrix(self) -> np.ndarray:
        return np.diag(self.gamma)

    @property
    def gamma_scalar(self) -> float | None:
        """γ when Γ = γI (all diagonal entries equal to rounding), else None."""
        g = self.gamma
        return float(g[0]) if np.allclose(g, g[0], rtol=1e-12, atol=0) else None

    def to_json(self) -> dict:
        g = self.gamma_scalar
        return {
            "law": self.law,
            **context_length_fields(self.n),
            "gamma": g if g is not None else self.gamma_matrix.tolist(),
            "gap": self.gap,
            "gap_resolution": self.resolution,
            "bayes_risk": self.bayes_risk,
            "lsa_risk": self.lsa_risk,
        }


def _normal_equations(blocks: NormBlocks, n: int | None) -> tuple[np.ndarray, np.ndarray]:
    mu2, mu4 = conditional_moments(blocks, blocks.nodes)
    w = blocks.weights
    E2 = w @ mu2
    E4 = np.einsum("k,kij->ij", w, mu4)
    A = np.diag(E2) + E4
    if n is not None:
        A = A + (np.diag(1 + 3 * E2) + 2 * E4) / n
    return A, E2


@takes_law
def best_lsa(law: TaskLaw, n: int | None = None) -> BestLSA:
    """Solve ``A γ = b`` and evaluate the gap and the Bayes risk with the same rule.

    Refused before any work (``numerics.validate.check_lsa_size``): ``d1 + d2 > MAX_DIM``, or more
    than ``MAX_LSA_FLOATS`` (quadrature nodes × d²): the normal equations hold a d×d moment matrix
    per quadrature node.

    As n → ∞ the gap is ``E[ζ²(δᵀ…δ)]`` with ``δ = γ − 1/(1+s)``, which float64 forms with rounding
    ~eps against a size ~ρ (the spread of 1 + s): a law that float64 cannot resolve at depth 1
    (``TaskLaw.float64_unresolved``: ρ < 1024·eps) is refused there with a ``LawError`` (it would
    read as a gap of 0).  At finite n the 1/n terms keep δ away from 0: no refusal."""
    check_lsa_size(law, "best_lsa")
    n = check_context_length(n)
    if n is None:
        law.require_float64_resolved("the best LSA as n → ∞")
    blocks = norm_blocks(law)
    A, b = _normal_equations(blocks, n)
    dead = tuple(int(i) for i in np.flatnonzero(b == 0))
    live = np.flatnonzero(b > 0)
    gamma = np.zeros(blocks.d)
    cond = 1.0
    if live.size:
        # Jacobi scaling: coordinates whose E[m_i²] is tiny (say 1e-168) next to O(1) ones make A
        # ill-conditioned only through its scale; S A S has a unit diagonal
        sub = A[np.ix_(live, live)]
        scale = 1.0 / np.sqrt(np.diag(sub))
        scaled = sub * scale[:, None] * scale[None, :]
        gamma[live] = scale * np.linalg.solve(scaled, scale * b[live])
        cond = float(np.linalg.cond(scaled))
    if not np.all(np.isfinite(gamma)):
        raise FloatingPointError(f"the normal equations of {law.spec()} gave a non-finite Γ: {gamma}")
    resolution = gap_resolution(blocks, A, gamma, cond)
    return BestLSA(law.spec(), n, gamma, flag_resolution(lsa_excess(law, gamma, n, blocks=blocks), resolution),
                   _bayes_risk(blocks), dead, resolution)


def gap_resolution(blocks: NormBlocks, A: np.ndarray, gamma: np.ndarray, cond: float) -> float:
    """The gap that the rounding of ``δ = γ − 1/(1+s)`` alone produces: below it the computed gap is
    rounding (``numerics.resolution``).  γ solves the (Jacobi-scaled) normal equations to a relative
    error ``cond·(K + d²)·ε`` (K quadrature nodes, the sums' rounding), and 1/(1+s) is formed to a few
    ε, so each δ_i is off by at most ``e = cond·(K + d²)·ε·max|γ| + 4ε``; the gap's quadratic form
    ``Σ_i δ_i²μ2_i + δᵀμ4δ`` (``excess_given_norms``) then moves by at most ``d·e²·tr(A)`` per unit of
    E[ζ²] (A = diag(E μ2) + E μ4 the normal matrix, μ4 positive semi-definite)."""
    eps = np.finfo(float).eps
    e = cond * (blocks.weights.size + blocks.d**2) * eps * float(np.max(np.abs(gamma), initial=0.0)) + 4 * eps
    return float(blocks.zeta2 * blocks.d * np.trace(A) * e**2)


def _bayes_risk(blocks: NormBlocks) -> float:
    """``E[ζ²/(1+s)]`` (the Bayes risk per prompt compiled from ``theory.model``; ζ ⊥ m)."""
    return blocks.zeta2 * float(blocks.weights @ _compiled().bayes_risk(blocks.nodes.sum(1))[0])


@takes_law
def lsa_excess(law: TaskLaw, gamma, n: int | None = None, blocks: NormBlocks | None = None) -> float:
    """``E[e(diag γ)]``: the excess risk over Bayes of the reduced LSA with ``Γ = diag(γ)``
    (a scalar γ means ``γI``)."""
    n = check_context_length(n)
    blocks = blocks or norm_blocks(law)
    g = np.broadcast_to(np.asarray(gamma, float), (blocks.d,))
    if not np.all(np.isfinite(g)):
        raise ValueError(f"γ must be finite, got {gamma}")
    return blocks.zeta2 * float(blocks.weights @ excess_given_norms(blocks, g, blocks.nodes, n))


def per_prompt_excess(gamma: np.ndarray, m: np.ndarray, zeta: np.ndarray, n: int | None = None) -> np.ndarray:
    """``e(Γ; m, ζ)`` for given tasks (rows of ``m``), Γ a (d, d) matrix or the diagonal (d,).

    The formula is ``theory.lsa.per_prompt_excess`` compiled: here only its rotation invariants
    are computed (the residual ``Γm − c m`` first, with ``c`` the compiled Bayes weight)."""
    m = np.atleast_2d(np.asarray(m, float))
    zeta = np.asarray(zeta, float)
    G = np.asarray(gamma, float)
    G = np.diag(G) if G.ndim == 1 else G
    excess = _compiled().excess
    Gm, Gtm = m @ G.T, m @ G  # rows Γm and Γᵀm
    r = Gm - bayes_weight((m**2).sum(1))[:, None] * m  # Γm − c m
    (e,) = excess((r**2).sum(1), (r * m).sum(1), (G**2).sum(), (Gtm**2).sum(1), (Gm**2).sum(1),
                  (Gm * m).sum(1), zeta, math.inf if n is None else n)
    return e


@dataclass(frozen=True)
class _Compiled:
    weight: Callable  # c(s)
    bayes_risk: Callable  # E[(ŷ_Bayes − y_q)²]/ζ² as a function of s
    excess: Callable  # ζ²-scaled excess from the invariants of theory.lsa.InvariantExcess


@lru_cache(maxsize=1)
def _compiled() -> _Compiled:
    """The formulas of ``theory.lsa.per_prompt_excess`` and ``theory.model.bayes_predictor``,
    compiled to Python operators (they take numpy arrays; ``theory.compile``).  SymPy loads here,
    on first use."""
    import sympy as sp

    from mmicl.theory.compile import compiled
    from mmicl.theory.lsa import per_prompt_excess as theory_excess
    from mmicl.theory.model import bayes_predictor, s, zeta

    return _Compiled(
        compiled("lsa_bayes_weight", lambda: ([theory_excess().bayes_weight], [theory_excess().s]), "operators"),
        compiled("bayes_risk_per_zeta2", lambda: ([sp.simplify(bayes_predictor().risk / zeta**2)], [s]),
                 "operators"),
        compiled("lsa_per_prompt_excess", lambda: ([theory_excess().excess], list(theory_excess().args)),
                 "operators"),
    )


def bayes_weight(s: np.ndarray) -> np.ndarray:
    """``c(s) = 1/(1 + s)``: the Bayes predictor per unit ζ is ``c mᵀx_q`` (compiled from
    ``theory.model.bayes_predictor``)."""
    return _compiled().weight(s)[0]


def best_gamma_general(m: np.ndarray, zeta: np.ndarray, weights: np.ndarray | None = None,
                       n: int | None = None) -> np.ndarray:
    """The best *full-matrix* Γ for an empirical law of tasks (rows of m, ζ, optional weights),
    from the general normal equations ``E[ζ² (C ⊗ Λ)] vec Γ = vec E[ζ² m mᵀ]`` with
    ``C = m mᵀ + (I + 2 m mᵀ)/n`` (column-major vec).  Used to confirm that Γ is diagonal."""
    m = np.atleast_2d(np.asarray(m, float))
    k, d = m.shape
    z2 = np.asarray(zeta, float) ** 2
    w = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, float)
    wz = w * z2
    mm = m[:, :, None] * m[:, None, :]
    Lam = np.eye(d)[None] + mm
    C = mm if n is None else mm + (np.eye(d)[None] + 2 * mm) / n
    lhs = np.einsum("k,kab,kij->aibj", wz, C, Lam).reshape(d * d, d * d)  # (C ⊗ Λ) in vec order
    rhs = np.einsum("k,kij->ji", wz, mm).reshape(d * d)
    return np.linalg.solve(lhs, rhs).reshape(d, d).T


def isotropic_gap_exact(mu1: float, mu2: float, kappa: float, zeta2: float = 1.0) -> float:
    """The closed form of ``theory.lsa.isotropic_best_gamma`` (for cross-checks):
    ``E[ζ²](κ − μ1²/(μ1 + μ2))``."""
    if not all(map(math.isfinite, (mu1, mu2, kappa, zeta2))):
        raise LawError("moments must be finite")
    return zeta2 * (kappa - mu1**2 / (mu1 + mu2))


# ---------------------------------------------------------------------------------------------
# A second route: the block closed form, by mpmath
# ---------------------------------------------------------------------------------------------


def _block_laws(law: TaskLaw) -> list[tuple[int, object]]:
    """(dimension, law of the squared norm) of each block of m: one block for an s-law."""
    return [(law.d, law.s)] if law.s is not None else [(law.d1, law.sv), (law.d2, law.sr)]


def _atomic(x) -> bool:
    return hasattr(x, "values") or x.is_degenerate


@takes_law
def block_closed_form_applicable(law: TaskLaw, n: int | None) -> str | None:
    """None if the block closed form applies to ``law`` at context length ``n``, else why not."""
    if n is not None and (law.anisotropy_v or law.anisotropy_r):
        return "anisotropic directions: at finite n the optimal Γ is not constant on a block"
    if law.s is None and not (_atomic(law.sv) or _atomic(law.sr)):
        return "E[s/(1+s)] would need a nested 2-D mpmath integral (minutes); the Monte Carlo checks cover this law"
    return None


def block_solution(d_b, E1, E2, kappa, z2, n, lin):
    """Γ constant on each block b (γ_b I).  With S_b the block's squared norm, c = 1/(1+s):

        e/ζ² = Σ_b (γ_b − c)² S_b + (Σ_b (γ_b − c) S_b)²
               + (1/n)[Σ_b d_b γ_b² + 3 Σ_b γ_b² S_b + 2(Σ_b γ_b S_b)²],

    so E e = E[ζ²](γᵀAγ − 2bᵀγ + κ) with A_ab = δ_ab E S_a + E[S_a S_b] + (1/n)(δ_ab (d_a + 3 E S_a)
    + 2 E[S_a S_b]), b_a = E S_a, κ = E[s/(1+s)] (blocks independent: E[S_a S_b] = E S_a E S_b).
    ``lin`` is the arithmetic (mpmath or numpy).  Returns (γ, gap, A)."""
    B = len(d_b)
    A = [[(E1[a] if a == c else 0) + (E2[a] if a == c else E1[a] * E1[c]) for c in range(B)] for a in range(B)]
    if n is not None:
        for a in range(B):
            for c in range(B):
                A[a][c] += ((d_b[a] + 3 * E1[a] if a == c else 0) + 2 * (E2[a] if a == c else E1[a] * E1[c])) / n
    gamma = lin(A, E1)
    gap = z2 * (kappa - sum(g * e for g, e in zip(gamma, E1)))
    return gamma, gap, A


def _mp_solve(A, b):
    import mpmath as mp

    x = mp.lu_solve(mp.matrix(A), mp.matrix(b))
    return [x[i] for i in range(len(b))]


def _np_solve(A, b):
    return list(np.linalg.solve(np.array(A, float), np.array(b, float)))


@takes_law
def block_closed_form(law: TaskLaw, n: int | None, dps: int = 30) -> tuple[list[float], float]:
    """(γ per block, gap) of the best LSA with Γ constant on each block of m, the moments
    ``E S_b``, ``E S_b²`` and ``κ = E[s/(1+s)]`` by mpmath (tanh-sinh, ``expect_mp``) at ``dps``
    digits.  Independent of ``best_lsa``'s route (d×d normal equations from coordinate moments on
    the graded Gauss rule): only the norm moments enter."""
    import mpmath as mp

    with mp.workdps(dps):
        blocks = _block_laws(law)
        E1 = [b.expect_mp(lambda x: x) for _, b in blocks]
        E2 = [b.expect_mp(lambda x: x * x) for _, b in blocks]
        kappa = law.s_law().expect_mp(lambda s: s / (1 + s))
        gamma, gap, _ = block_solution([d for d, _ in blocks], E1, E2, kappa, mp.mpf(law.zeta.second_moment()),
                                        n, _mp_solve)
        return [float(g) for g in gamma], float(gap)


@takes_law
def block_closed_form_rule(law: TaskLaw, n: int | None, depth: int):
    """The same closed form in float64, the moments by the project's rules at ``depth`` (the
    difference between two depths estimates the rule's truncation error).  Returns
    ``(γ per block, gap, A, κ)``."""
    blocks = _block_laws(law)
    rules = [b.rule(depth) for _, b in blocks]
    E1 = [float(r.weights @ r.nodes) for r in rules]
    E2 = [float(r.weights @ r.nodes**2) for r in rules]
    if len(rules) == 1:
        s, w = rules[0].nodes, rules[0].weights
    else:
        s = (rules[0].nodes[:, None] + rules[1].nodes[None, :]).ravel()
        w = (rules[0].weights[:, None] * rules[1].weights[None, :]).ravel()
    kappa = float(w @ (s / (1 + s)))
    gamma, gap, A = block_solution([d for d, _ in blocks], E1, E2, kappa, law.zeta.second_moment(), n, _np_solve)
    return np.array(gamma, float), float(gap), np.array(A, float), kappa


@takes_law
def expand_blocks(law: TaskLaw, gamma_blocks) -> np.ndarray:
    """The diagonal of Γ (length d) from one γ per block of m."""
    return np.concatenate([np.full(d, g) for (d, _), g in zip(_block_laws(law), gamma_blocks)])
