"""Task laws: the prompt-to-prompt law of (v, r, ζ) of the latent-factor model (docs/model.md).

A prompt's task is ``m = [v; r] ∈ R^{d1+d2}`` and a label scale ``ζ``.  The theory of the reduced
LCA models only sees ``s = ‖m‖²`` and ``ζ²``; Monte Carlo needs the vectors themselves.

Building blocks
---------------
``ScalarLaw``      a law of a non-negative scalar (a squared norm): ``Point``, ``Beta`` (``Uniform`` is
                   ``Beta(1, 1, a, b)``), ``Discrete``, ``Mixture``, ``SumLaw`` (law of a sum of two
                   independent scalars), ``Exponential`` (unbounded: allowed for sampling, refused by
                   anything whose theorem needs ``s`` bounded).
``ZetaLaw``        the law of ζ: normal, Rademacher, constant, or given samples.
``TaskLaw``        d1, d2, the law of the squared norms (of m, or per modality), the direction model
                   and the ζ law; validates itself at construction.

Every expectation is a quadrature *rule* ``(nodes, weights)`` on ``s``: exact for discrete laws, and
for continuous ones a composite Gauss rule whose pieces shrink geometrically towards both ends of
the support (depth-T integrands ``|1 − αλ|^{2T}`` live within O(1/T) of the ends: a known trap), with
Gauss–Jacobi pieces at the ends so that Beta densities with singular ends are integrated exactly.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Sequence

import mpmath
import numpy as np

from .validate import check_finite

__all__ = [
    "LawError",
    "UnboundedSupportError",
    "ScalarLaw",
    "Point",
    "Beta",
    "Uniform",
    "Discrete",
    "TwoPoint",
    "Mixture",
    "SumLaw",
    "Exponential",
    "ZetaLaw",
    "TaskLaw",
    "Rule",
]


class LawError(ValueError):
    """An invalid task law or law parameter."""


class UnboundedSupportError(LawError):
    """A law with unbounded support where a theorem needs ``s`` bounded."""


def _num(x: float) -> str:
    """The shortest text that reads back as the same float (``4`` for 4.0)."""
    t = repr(float(x))
    return t[:-2] if t.endswith(".0") else t


def _finite(name: str, x: float) -> float:
    return check_finite(name, x, LawError)


def _nonneg(name: str, x: float) -> float:
    x = _finite(name, x)
    if x < 0:
        raise LawError(
            f"{name} = {x} is negative, but it is a squared norm: give a law on [0, ∞)"
        )
    return x


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


# ---------------------------------------------------------------------------------------------
# Scalar laws
# ---------------------------------------------------------------------------------------------


class ScalarLaw(ABC):
    """The law of a non-negative scalar ``S`` (a squared norm)."""

    @abstractmethod
    def support(self) -> tuple[float, float]:
        """``(ess inf S, ess sup S)``; ``hi`` may be ``inf``."""

    @abstractmethod
    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray: ...

    @abstractmethod
    def rule(self, depth: int = 1) -> Rule:
        """A quadrature rule for ``E[h(S)]``, accurate for integrands that vary on the scale
        ``(hi − lo)/depth`` near the ends of the support (``depth`` is the LCA depth T)."""

    @abstractmethod
    def spec(self) -> str:
        """The LAW-language text of this law."""

    def signal_support(self) -> tuple[float, float] | None:
        """``(inf, sup)`` of the support of the law restricted to ``S > 0`` (None if ``S = 0`` a.s.).

        An atom at ``S = 0`` (a prompt with m = 0) carries no information and weighs nothing in
        the LCA losses (their integrands carry a factor s), so the depth-T limits see this support,
        not ``support()``.  A continuous law reaching 0 keeps 0 as its lower end."""
        lo, hi = self.support()
        return None if hi == 0 else (lo, hi)

    @property
    def is_bounded(self) -> bool:
        return math.isfinite(self.support()[1])

    @property
    def is_degenerate(self) -> bool:
        lo, hi = self.support()
        return lo == hi

    def require_bounded(self, what: str = "this theorem") -> None:
        if not self.is_bounded:
            raise UnboundedSupportError(
                f"{what}: s = ‖m‖² must be bounded (s_hi < ∞), but the law {self.spec()} has "
                "unbounded support; use a bounded law such as uniform(a,b) or beta(p,q,a,b)"
            )

    def expect_mp(self, f: Callable, depth: int = 1):
        """``E[f(S)]`` in mpmath at the working precision (tanh-sinh quadrature on the graded
        pieces of ``rule``; exact sums for atoms).  An independent check of ``rule``."""
        raise NotImplementedError(f"{type(self).__name__} has no mpmath expectation")

    def mean(self) -> float:
        return self.rule().expect(lambda s: s)

    def __str__(self) -> str:
        return self.spec()


@dataclass(frozen=True)
class Point(ScalarLaw):
    """The point mass at ``c``."""

    c: float

    def __post_init__(self):
        object.__setattr__(self, "c", _nonneg("point(c): c", self.c))

    def support(self):
        return (self.c, self.c)

    def signal_support(self):
        return None if self.c == 0 else (self.c, self.c)

    def sample(self, n, rng):
        return np.full(n, self.c)

    def rule(self, depth=1):
        return Rule(np.array([self.c]), np.array([1.0]))

    def expect_mp(self, f, depth=1):
        return f(mpmath.mpf(self.c))

    def spec(self):
        return f"point({_num(self.c)})"


@lru_cache(maxsize=64)
def _gauss_jacobi(n: int, a: float, b: float) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1] for the weight ``(1−x)^a x^b``, normalised to total mass 1."""
    from scipy import special  # SciPy loads on first use: parsing a LAW stays light

    x, w = special.roots_jacobi(n, a, b)
    return (x + 1) / 2, w / w.sum()


@lru_cache(maxsize=8)
def _gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(n)
    return (x + 1) / 2, w / 2


def _graded_breaks(depth: int) -> np.ndarray:
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


@dataclass(frozen=True)
class Beta(ScalarLaw):
    """``S = a + (b − a)·B`` with ``B ~ Beta(p, q)``; ``uniform(a, b)`` is ``p = q = 1``."""

    p: float
    q: float
    a: float
    b: float

    NODES_PER_PIECE = 30

    def __post_init__(self):
        p = _finite("beta(p,q,a,b): p", self.p)
        q = _finite("beta(p,q,a,b): q", self.q)
        a = _nonneg("beta(p,q,a,b): a", self.a)
        b = _nonneg("beta(p,q,a,b): b", self.b)
        if p <= 0 or q <= 0:
            raise LawError(f"beta(p,q,a,b) needs p > 0 and q > 0, got p={p}, q={q}")
        if not b > a:
            raise LawError(
                f"the support [a, b] = [{a}, {b}] is empty or a single point; "
                "use point(c) for a point mass"
            )
        for k, v in dict(p=p, q=q, a=a, b=b).items():
            object.__setattr__(self, k, v)

    def support(self):
        return (self.a, self.b)

    def sample(self, n, rng):
        return self.a + (self.b - self.a) * rng.beta(self.p, self.q, size=n)

    def rule(self, depth=1):
        """Composite rule on graded pieces of [0, 1]; the end pieces carry the Beta weight's
        singular factor exactly (Gauss–Jacobi), the others evaluate the density."""
        p, q, n = self.p, self.q, self.NODES_PER_PIECE
        breaks = _graded_breaks(depth)
        from scipy import special

        log_norm = -special.betaln(p, q)
        xs, ws = [], []
        last = len(breaks) - 2
        for k, (u0, u1) in enumerate(zip(breaks[:-1], breaks[1:])):
            h = u1 - u0
            if k == 0:  # x^(p−1) exact on [0, h]; the smooth (1−x)^(q−1) evaluated
                t, w = _gauss_jacobi(n, 0.0, p - 1.0)
                x = u0 + h * t
                mass = h**p / p  # ∫_0^h x^(p−1) dx
                wx = w * mass * (1 - x) ** (q - 1)
            elif k == last:  # (1−x)^(q−1) exact on [1−h, 1]
                t, w = _gauss_jacobi(n, q - 1.0, 0.0)
                x = u0 + h * t
                mass = h**q / q
                wx = w * mass * x ** (p - 1)
            else:
                t, w = _gauss_legendre(n)
                x = u0 + h * t
                wx = w * h * x ** (p - 1) * (1 - x) ** (q - 1)
            xs.append(x)
            ws.append(wx * math.exp(log_norm))
        x = np.concatenate(xs)
        w = np.concatenate(ws)
        return Rule(self.a + (self.b - self.a) * x, w)

    def expect_mp(self, f, depth=1):
        p, q = mpmath.mpf(self.p), mpmath.mpf(self.q)
        a, w = mpmath.mpf(self.a), mpmath.mpf(self.b) - mpmath.mpf(self.a)
        breaks = [mpmath.mpf(float(x)) for x in _graded_breaks(depth)]
        dens = lambda x: x ** (p - 1) * (1 - x) ** (q - 1) / mpmath.beta(p, q)  # noqa: E731
        return mpmath.quad(lambda x: f(a + w * x) * dens(x), breaks)

    def mean(self):
        return self.a + (self.b - self.a) * self.p / (self.p + self.q)

    def spec(self):
        if self.p == 1 and self.q == 1:
            return f"uniform({_num(self.a)},{_num(self.b)})"
        return f"beta({_num(self.p)},{_num(self.q)},{_num(self.a)},{_num(self.b)})"


def Uniform(a: float, b: float) -> Beta:
    """The uniform law on [a, b] (a ``Beta(1, 1, a, b)``)."""
    return Beta(1.0, 1.0, a, b)


@dataclass(frozen=True)
class Discrete(ScalarLaw):
    """Finitely many atoms ``values[k]`` with probabilities ``probs[k]``."""

    values: tuple[float, ...]
    probs: tuple[float, ...]

    def __post_init__(self):
        vals = tuple(_nonneg("discrete: value", v) for v in self.values)
        probs = tuple(_finite("discrete: probability", p) for p in self.probs)
        if not vals or len(vals) != len(probs):
            raise LawError("a discrete law needs as many probabilities as values, at least one")
        if any(p < 0 for p in probs):
            raise LawError(f"probabilities must be ≥ 0, got {probs}")
        total = sum(probs)
        if not abs(total - 1) < 1e-9:
            raise LawError(f"probabilities must sum to 1, they sum to {total}")
        keep = [(v, p) for v, p in zip(vals, probs) if p > 0]
        object.__setattr__(self, "values", tuple(v for v, _ in keep))
        object.__setattr__(self, "probs", tuple(p / total for _, p in keep))

    def support(self):
        return (min(self.values), max(self.values))

    def signal_support(self):
        pos = [v for v in self.values if v > 0]
        return (min(pos), max(pos)) if pos else None

    def sample(self, n, rng):
        idx = rng.choice(len(self.values), size=n, p=np.array(self.probs))
        return np.asarray(self.values)[idx]

    def rule(self, depth=1):
        return Rule(np.asarray(self.values, float), np.asarray(self.probs, float))

    def expect_mp(self, f, depth=1):
        return mpmath.fsum(mpmath.mpf(p) * f(mpmath.mpf(v)) for v, p in zip(self.values, self.probs))

    def spec(self):
        if len(self.values) == 2:
            return f"twopoint({_num(self.values[0])},{_num(self.values[1])},{_num(self.probs[0])})"
        return "discrete(" + ",".join(f"{_num(v)}:{_num(p)}" for v, p in zip(self.values, self.probs)) + ")"


def TwoPoint(a: float, b: float, p: float) -> ScalarLaw:
    """``a`` with probability ``p``, ``b`` with probability ``1 − p``."""
    p = _finite("twopoint(a,b,p): p", p)
    if not 0 <= p <= 1:
        raise LawError(f"twopoint(a,b,p) needs 0 ≤ p ≤ 1, got p={p}")
    if a == b or p in (0.0, 1.0):
        return Point(a if p > 0 else b)
    return Discrete((a, b), (p, 1 - p))


@dataclass(frozen=True)
class Mixture(ScalarLaw):
    """``components[k]`` with probability ``probs[k]``."""

    components: tuple[ScalarLaw, ...]
    probs: tuple[float, ...]

    def __post_init__(self):
        if not self.components or len(self.components) != len(self.probs):
            raise LawError("a mixture needs as many weights as components, at least one")
        probs = tuple(_finite("mixture weight", p) for p in self.probs)
        if any(p < 0 for p in probs) or not abs(sum(probs) - 1) < 1e-9:
            raise LawError(f"mixture weights must be ≥ 0 and sum to 1, got {probs}")
        object.__setattr__(self, "probs", probs)

    def support(self):
        sups = [c.support() for c, p in zip(self.components, self.probs) if p > 0]
        return (min(s[0] for s in sups), max(s[1] for s in sups))

    def signal_support(self):
        sups = [c.signal_support() for c, p in zip(self.components, self.probs) if p > 0]
        sups = [x for x in sups if x is not None]
        return (min(x[0] for x in sups), max(x[1] for x in sups)) if sups else None

    def sample(self, n, rng):
        which = rng.choice(len(self.components), size=n, p=np.array(self.probs))
        out = np.empty(n)
        for k, comp in enumerate(self.components):
            idx = np.flatnonzero(which == k)
            if idx.size:
                out[idx] = comp.sample(idx.size, rng)
        return out

    def rule(self, depth=1):
        return Rule.join([c.rule(depth) for c in self.components], self.probs)

    def expect_mp(self, f, depth=1):
        return mpmath.fsum(mpmath.mpf(p) * c.expect_mp(f, depth) for c, p in zip(self.components, self.probs))

    def spec(self):
        return "mix(" + ",".join(f"{_num(p)}*{c.spec()}" for c, p in zip(self.components, self.probs)) + ")"


@dataclass(frozen=True)
class SumLaw(ScalarLaw):
    """The law of ``S1 + S2`` for independent ``S1, S2`` (``‖m‖² = ‖v‖² + ‖r‖²``)."""

    first: ScalarLaw
    second: ScalarLaw

    def support(self):
        (a0, a1), (b0, b1) = self.first.support(), self.second.support()
        return (a0 + b0, a1 + b1)

    def signal_support(self):
        """S1 + S2 > 0 iff S1 > 0 or S2 > 0: the lower end is the smaller of the two cases."""
        (a0, a1), (b0, b1) = self.first.support(), self.second.support()
        sig1, sig2 = self.first.signal_support(), self.second.signal_support()
        lows = ([sig1[0] + b0] if sig1 else []) + ([a0 + sig2[0]] if sig2 else [])
        return (min(lows), a1 + b1) if lows else None

    def sample(self, n, rng):
        return self.first.sample(n, rng) + self.second.sample(n, rng)

    NODES_PER_PIECE = 30  # n: as Beta.NODES_PER_PIECE, so each piece is exact to degree 2n − 1 = 59

    def product_rule(self, depth=1) -> Rule:
        """The tensor product of the two component rules (``n1·n2`` nodes: 360,000 for two Beta
        laws at depth 100).  The reference that ``rule`` compresses; too big for repeated use."""
        r1, r2 = self.first.rule(depth), self.second.rule(depth)
        nodes = (r1.nodes[:, None] + r2.nodes[None, :]).ravel()
        weights = (r1.weights[:, None] * r2.weights[None, :]).ravel()
        return Rule(nodes, weights)

    def piece_edges(self, depth=1) -> np.ndarray:
        """The graded pieces of ``rule``: ``lo + (hi − lo)·_graded_breaks(depth)`` on the support."""
        lo, hi = self.support()
        return lo + (hi - lo) * _graded_breaks(depth)

    def rule(self, depth=1):
        """The product rule compressed piece by piece into Gauss rules of the same measure.

        Let ``μ`` be the product rule (``product_rule``: a discrete measure, mass 1, on the support
        ``[lo, hi]`` of ``S1 + S2``) and ``I_j`` the graded pieces ``piece_edges(depth)`` (the
        pieces of ``Beta.rule``: they shrink geometrically to width ``(hi − lo)/(8·depth)`` at both
        ends, where the depth-T integrands live).  On each piece with more than ``2n`` nodes of
        ``μ`` (``n = NODES_PER_PIECE``), ``μ|I_j`` is replaced by its ``n``-point Gauss rule
        ``G_j``: the eigenvalues ``θ_i`` and first eigenvector components ``v_{0i}`` of the ``n×n``
        Jacobi matrix of ``μ|I_j`` (the recurrence coefficients of its orthonormal polynomials,
        computed by the discretised Stieltjes/Lanczos procedure on the nodes' hull mapped
        to ``[−1, 1]``, re-orthonormalised at every step), with weights ``μ(I_j)·v_{0i}²``.  Pieces
        with at most ``2n`` nodes (atoms, corners of the product) are kept node for node; equal
        nodes are merged first, so atoms are never smeared.

        Accuracy: ``G_j`` has the mass of ``μ|I_j``, positive weights, nodes in ``I_j``, and
        ``Σ_i G_j(p) = ∫_{I_j} p dμ`` for every polynomial of degree ≤ 2n − 1.  So for any ``h``,
        with ``p_j`` its best uniform approximation of degree 2n − 1 on ``I_j``,

            |G(h) − μ(h)| = |Σ_j (G_j − μ|I_j)(h − p_j)| ≤ 2 Σ_j μ(I_j) · E_{2n−1}(h; I_j),

        whatever ``μ`` looks like on the piece (kinks of the convolved density, atoms, both).
        The integrands here are analytic near ``[lo, hi]`` (``s/(1+s)·(1 − α(1+s))^{2T}`` and
        their α- and β-derivatives), and on a piece of width ``~ dist(I_j, end)`` their
        ``E_{59}`` is as small as for the graded Beta rule: the same accuracy argument, with
        ``μ`` in place of the Beta density.  ``expect_mp`` stays the independent check.

        Size: at most ``n`` nodes per piece past ``2n``: ``O(pieces·n)`` (≤ 1,200 at depth 100)
        instead of ``n1·n2``.  Built once per ``(law, depth)`` and cached (arrays read-only)."""
        return _sum_rule(self, max(int(depth), 1))

    def expect_mp(self, f, depth=1):
        return self.first.expect_mp(lambda x: self.second.expect_mp(lambda y: f(x + y), depth), depth)

    def spec(self):
        return f"sum({self.first.spec()},{self.second.spec()})"


@lru_cache(maxsize=64)
def _sum_rule(law: "SumLaw", depth: int) -> Rule:
    r = compress_rule(law.product_rule(depth), law.piece_edges(depth), law.NODES_PER_PIECE)
    for a in (r.nodes, r.weights):
        a.flags.writeable = False
    return r


def compress_rule(rule: Rule, edges: np.ndarray, n: int) -> Rule:
    """``rule`` with its nodes in each piece ``[edges[j], edges[j+1]]`` replaced by the ``n``-point
    Gauss rule of that discrete measure where there are more than ``2n`` distinct ones (see
    ``SumLaw.rule``); elsewhere its nodes stay, equal ones merged and zero weights dropped.
    Returns ``rule`` itself if no piece has more than ``2n`` nodes."""
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
            t, g = _discrete_gauss((x - c) / h, w, n)
            x, w = np.clip(c + h * t, x[0], x[-1]), g
        xs.append(x)
        ws.append(w)
    return Rule(np.concatenate(xs), np.concatenate(ws))


def _discrete_gauss(x: np.ndarray, w: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``n``-point Gauss rule of the discrete measure ``Σ_k w_k δ(x_k)`` (``w > 0``, ``x`` in
    [−1, 1], more than ``n`` distinct points): the Lanczos process on ``diag(x)`` from ``√(w/mass)``
    (the discretised Stieltjes procedure in orthonormal form) gives the Jacobi matrix, and its
    eigen-decomposition (Golub–Welsch) the rule.  Exact for polynomials of degree ≤ 2n − 1.

    Plain Lanczos first (each vector orthonormalised against the two before it); if the last two
    vectors have lost orthogonality to the others beyond 1e-13 (Ritz values converging onto
    heavy, isolated nodes), it is redone with full re-orthogonalisation (two passes per step).
    Dot products go through ``einsum``, not BLAS: a threaded BLAS on long vectors stalls on a
    shared machine."""
    Q, a, b = _lanczos(x, w, n, full=False)
    if a.size < n or _lost_orthogonality(Q) > 1e-13:  # (an early stop is confirmed the slow way)
        Q, a, b = _lanczos(x, w, n, full=True)
    from scipy.linalg import eigh_tridiagonal

    theta, V = eigh_tridiagonal(a, b)
    return theta, float(w.sum()) * V[0] ** 2


def _lanczos(x, w, n, full):
    """``(Q, a, b)``: Lanczos vectors (rows) and the Jacobi matrix's diagonal and off-diagonal.
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


@dataclass(frozen=True)
class Exponential(ScalarLaw):
    """The exponential law with the given rate: unbounded support, for sampling only."""

    rate: float

    def __post_init__(self):
        r = _finite("exponential(rate): rate", self.rate)
        if r <= 0:
            raise LawError(f"exponential(rate) needs rate > 0, got {r}")
        object.__setattr__(self, "rate", r)

    def support(self):
        return (0.0, math.inf)

    def sample(self, n, rng):
        return rng.exponential(1.0 / self.rate, size=n)

    def rule(self, depth=1):
        self.require_bounded("an expectation by quadrature")

    def mean(self):
        return 1.0 / self.rate

    def spec(self):
        return f"exponential({_num(self.rate)})"


# ---------------------------------------------------------------------------------------------
# ζ
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ZetaLaw:
    """The law of the label scale ζ, independent of m unless given as joint samples."""

    kind: str  # "normal" | "rademacher" | "const" | "samples"
    value: float = 1.0  # the constant for "const"
    samples: tuple[float, ...] = ()

    KINDS = ("normal", "rademacher", "const", "samples")

    def __post_init__(self):
        if self.kind not in self.KINDS:
            raise LawError(f"unknown ζ law {self.kind!r}; use one of normal, rademacher, const(c)")
        _finite("const(c): c", self.value)
        if self.kind == "samples":
            if not self.samples:
                raise LawError("ζ samples: give at least one value")
            for z in self.samples:
                _finite("ζ sample", z)
        if self.second_moment() == 0:
            raise LawError("ζ ≡ 0: the labels carry no signal; give ζ a non-zero law")

    def second_moment(self) -> float:
        if self.kind in ("normal", "rademacher"):
            return 1.0
        if self.kind == "const":
            return self.value**2
        return float(np.mean(np.square(self.samples)))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.kind == "normal":
            return rng.standard_normal(n)
        if self.kind == "rademacher":
            return rng.choice(np.array([-1.0, 1.0]), size=n)
        if self.kind == "const":
            return np.full(n, self.value)
        return rng.choice(np.asarray(self.samples), size=n)

    @property
    def is_symmetric(self) -> bool:
        """ζ and −ζ have the same law."""
        if self.kind in ("normal", "rademacher"):
            return True
        if self.kind == "const":
            return self.value == 0
        vals = np.sort(np.asarray(self.samples))
        return bool(np.allclose(vals, -vals[::-1]))

    def spec(self) -> str:
        if self.kind == "const":
            return f"const({_num(self.value)})"
        if self.kind == "samples":
            return f"samples({len(self.samples)})"
        return self.kind


# ---------------------------------------------------------------------------------------------
# The task law
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TaskLaw:
    """The law of a prompt's task (v, r, ζ).

    Either ``s`` (the law of ``‖m‖²``, with ``m/‖m‖`` uniform on the sphere of ``R^{d1+d2}``) or
    ``sv`` and ``sr`` (the laws of ``‖v‖²`` and ``‖r‖²``, independent, each direction uniform on its
    own sphere).  ``anisotropy_v``/``anisotropy_r`` (optional, positive) stretch the directions:
    ``v = ‖v‖ · D g / ‖D g‖`` with ``g ~ N(0, I)`` and ``D = diag(anisotropy)``.  ζ is independent
    of m.
    """

    d1: int = 1
    d2: int = 1
    s: ScalarLaw | None = None
    sv: ScalarLaw | None = None
    sr: ScalarLaw | None = None
    zeta: ZetaLaw = field(default_factory=lambda: ZetaLaw("normal"))
    anisotropy_v: tuple[float, ...] | None = None
    anisotropy_r: tuple[float, ...] | None = None

    def __post_init__(self):
        for name in ("d1", "d2"):
            val = getattr(self, name)
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 1:
                raise LawError(f"{name} must be a positive integer, got {val!r}")
        per_modality = self.sv is not None or self.sr is not None
        if (self.s is None) == (not per_modality):
            raise LawError(
                "give either s=LAW (the law of ‖m‖²) or both sv=LAW and sr=LAW "
                "(the laws of ‖v‖² and ‖r‖²), not both and not neither"
            )
        if per_modality and (self.sv is None or self.sr is None):
            raise LawError("per-modality laws need both sv=LAW and sr=LAW")
        for name, dim in (("anisotropy_v", self.d1), ("anisotropy_r", self.d2)):
            a = getattr(self, name)
            if a is not None:
                if len(a) != dim or any(not (math.isfinite(x) and x > 0) for x in a):
                    raise LawError(f"{name} needs {dim} positive finite scales, got {a}")
        if (self.anisotropy_v or self.anisotropy_r) and self.s is not None:
            raise LawError("anisotropic directions need per-modality laws sv=…, sr=…")

    @property
    def d(self) -> int:
        return self.d1 + self.d2

    def s_law(self) -> ScalarLaw:
        """The law of ``s = ‖m‖²``."""
        return self.s if self.s is not None else SumLaw(self.sv, self.sr)

    def s_bounds(self) -> tuple[float, float]:
        """``(s_lo, s_hi) = (ess inf s, ess sup s)``."""
        return self.s_law().support()

    def signal_bounds(self) -> tuple[float, float] | None:
        """``(s_lo, s_hi)`` over prompts with ``m ≠ 0`` (see ``ScalarLaw.signal_support``)."""
        return self.s_law().signal_support()

    def require_bounded(self, what: str = "this theorem") -> tuple[float, float]:
        law = self.s_law()
        law.require_bounded(what)
        return law.support()

    def rule(self, depth: int = 1) -> Rule:
        """A rule for ``E[ζ² h(s)]``: the s-rule with weights scaled by ``E[ζ²]`` (ζ ⊥ m)."""
        law = self.s_law()
        law.require_bounded("an expectation over s by quadrature")
        r = law.rule(depth)
        return Rule(r.nodes, r.weights * self.zeta.second_moment())

    def expect_zeta2(self, h: Callable[[np.ndarray], np.ndarray], depth: int = 1) -> float:
        """``E[ζ² h(s)]``."""
        return self.rule(depth).expect(h)

    def sample_tasks(self, n: int, rng: np.random.Generator):
        """``n`` independent tasks: arrays ``v (n, d1)``, ``r (n, d2)``, ``zeta (n,)``."""
        if self.s is not None:
            g = rng.standard_normal((n, self.d))
            g /= np.linalg.norm(g, axis=1, keepdims=True)
            m = g * np.sqrt(self.s.sample(n, rng))[:, None]
            v, r = m[:, : self.d1], m[:, self.d1 :]
        else:
            v = _directions(n, self.d1, self.anisotropy_v, rng) * np.sqrt(self.sv.sample(n, rng))[:, None]
            r = _directions(n, self.d2, self.anisotropy_r, rng) * np.sqrt(self.sr.sample(n, rng))[:, None]
        return v, r, self.zeta.sample(n, rng)

    def spec(self) -> str:
        parts = [f"s={self.s.spec()}"] if self.s is not None else [
            f"sv={self.sv.spec()}", f"sr={self.sr.spec()}"]
        parts += [f"zeta={self.zeta.spec()}", f"d1={self.d1}", f"d2={self.d2}"]
        return "; ".join(parts)

    def __str__(self) -> str:
        return self.spec()


def _directions(n: int, dim: int, scales, rng: np.random.Generator) -> np.ndarray:
    g = rng.standard_normal((n, dim))
    if scales is not None:
        g = g * np.asarray(scales)[None, :]
    return g / np.linalg.norm(g, axis=1, keepdims=True)
