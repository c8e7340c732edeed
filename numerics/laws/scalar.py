"""Scalar laws: the law of a non-negative scalar ``S``, a squared norm (``‖m‖²``, ``‖v‖²`` or ``‖r‖²``).

``Point``        the point mass at c;
``Beta``         ``S = a + (b − a)·B`` with ``B ~ Beta(p, q)``; ``Uniform(a, b)`` is ``Beta(1, 1, a, b)``;
``Discrete``     finitely many atoms; ``TwoPoint(a, b, p)`` is a with probability p, b otherwise;
``Mixture``      a mixture of scalar laws;
``SumLaw``       the law of ``S1 + S2`` for independent ``S1, S2`` (``‖m‖² = ‖v‖² + ‖r‖²``);
``Exponential``  unbounded support: allowed for sampling, refused by anything whose theorem needs
                 ``s`` bounded (``UnboundedSupportError``).

Each law gives its support, samples, a quadrature rule for ``E[h(S)]`` (``numerics.laws.quadrature``;
exact sums for atoms, graded composite Gauss rules for densities), an mpmath expectation that checks
the rule independently, and its LAW text (``spec``).

Errors name what the user wrote: every constructor checks its own arguments and reports them in
LAW syntax, e.g. ``uniform(-1, 2): a = -1 is negative …``, even when it builds another law
(``Uniform`` a ``Beta``, ``TwoPoint`` a ``Discrete`` or a ``Point``).
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from itertools import zip_longest
from typing import Callable

import mpmath
import numpy as np

from mmicl.theory.errors import InputError

from .quadrature import Rule, compress_rule, gauss_jacobi, gauss_legendre, graded_breaks
from ..validate import check_finite

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
    "number_text",
    "call_text",
    "finite_parameter",
    "sum_rule",
]


class LawError(InputError):
    """An invalid task law or law parameter."""

    option: str | None = None
    """The command-line option the mistake is in, where it is not the law text itself (``"zeta"``
    for a bad ``zeta`` override of ``read_law``); None otherwise."""


class UnboundedSupportError(LawError):
    """A law with unbounded support where a theorem needs ``s`` bounded."""


def number_text(x: float) -> str:
    """The shortest text that reads back as the same float (``4`` for 4.0)."""
    t = repr(float(x))
    return t[:-2] if t.endswith(".0") else t


class _Missing:
    """A value, probability or component left out (``zip_longest``'s fill): written ``?``."""

    def __repr__(self) -> str:
        return "?"


_MISSING = _Missing()


def _arg(x) -> str:
    """A constructor argument as LAW text: a number as ``number_text`` writes it, anything else by repr."""
    try:
        return number_text(float(x))
    except (TypeError, ValueError, OverflowError):
        return repr(x)


def call_text(name: str, *args) -> str:
    """``name(a1, a2, …)``: a constructor call in LAW syntax, for error messages."""
    return f"{name}({', '.join(_arg(a) for a in args)})"


def finite_parameter(what: str, x) -> float:
    return check_finite(what, x, LawError)


def _nonneg(call: str, name: str, x) -> float:
    """``x`` as a finite float ≥ 0, or a ``LawError`` that starts with ``call``."""
    x = finite_parameter(f"{call}: {name}", x)
    if x < 0:
        raise LawError(
            f"{call}: {name} = {number_text(x)} is negative, but it is a squared norm: give a law on [0, ∞)"
        )
    return x


def _interval(call: str, a, b) -> tuple[float, float]:
    """``(a, b)`` with ``0 ≤ a < b``, or a ``LawError`` that starts with ``call``."""
    a, b = _nonneg(call, "a", a), _nonneg(call, "b", b)
    if not b > a:
        raise LawError(
            f"{call}: the support [a, b] = [{number_text(a)}, {number_text(b)}] is empty or a single point; "
            "use point(c) for a point mass"
        )
    return a, b


def _probability(call: str, p) -> float:
    p = finite_parameter(f"{call}: p", p)
    if not 0 <= p <= 1:
        raise LawError(f"{call} needs 0 ≤ p ≤ 1, got p={number_text(p)}")
    return p


# ---------------------------------------------------------------------------------------------
# The abstract law
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

    @property
    def is_atomic(self) -> bool:
        """The law has no continuous part: it is a finite set of atoms (its expectations are
        finite sums)."""
        return False

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


# ---------------------------------------------------------------------------------------------
# The laws
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point(ScalarLaw):
    """The point mass at ``c``."""

    c: float

    def __post_init__(self):
        object.__setattr__(self, "c", _nonneg(call_text("point", self.c), "c", self.c))

    @property
    def is_atomic(self) -> bool:
        return True

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
        return f"point({number_text(self.c)})"


@dataclass(frozen=True)
class Beta(ScalarLaw):
    """``S = a + (b − a)·B`` with ``B ~ Beta(p, q)``; ``uniform(a, b)`` is ``p = q = 1``."""

    p: float
    q: float
    a: float
    b: float

    NODES_PER_PIECE = 30

    def __post_init__(self):
        call = call_text("beta", self.p, self.q, self.a, self.b)
        p = finite_parameter(f"{call}: p", self.p)
        q = finite_parameter(f"{call}: q", self.q)
        if p <= 0 or q <= 0:
            raise LawError(f"{call} needs p > 0 and q > 0, got p={number_text(p)}, q={number_text(q)}")
        a, b = _interval(call, self.a, self.b)
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
        breaks = graded_breaks(depth)
        from scipy import special

        log_norm = -special.betaln(p, q)
        xs, ws = [], []
        last = len(breaks) - 2
        for k, (u0, u1) in enumerate(zip(breaks[:-1], breaks[1:])):
            h = u1 - u0
            if k == 0:  # x^(p−1) exact on [0, h]; the smooth (1−x)^(q−1) evaluated
                t, w = gauss_jacobi(n, 0.0, p - 1.0)
                x = u0 + h * t
                mass = h**p / p  # ∫_0^h x^(p−1) dx
                wx = w * mass * (1 - x) ** (q - 1)
            elif k == last:  # (1−x)^(q−1) exact on [1−h, 1]
                t, w = gauss_jacobi(n, q - 1.0, 0.0)
                x = u0 + h * t
                mass = h**q / q
                wx = w * mass * x ** (p - 1)
            else:
                t, w = gauss_legendre(n)
                x = u0 + h * t
                wx = w * h * x ** (p - 1) * (1 - x) ** (q - 1)
            xs.append(x)
            ws.append(wx * math.exp(log_norm))
        x = np.concatenate(xs)
        w = np.concatenate(ws)
        return Rule(self.a + (self.b - self.a) * x, w)

    def expect_mp(self, f, depth=1):
        """Tanh-sinh on the graded pieces, after the substitutions v = x^p on [0, 1/2] and
        u = (1 − x)^q on [1/2, 1], which absorb the density's end powers:
        x^{p−1} dx = dv/p and (1 − x)^{q−1} dx = −du/q.  The integrands are then bounded at both
        ends, so no node ever evaluates 0^{p−1} (tanh-sinh's nodes reach the ends within the
        working precision: with q < 1 an untransformed density divides by 0 there)."""
        p, q = mpmath.mpf(self.p), mpmath.mpf(self.q)
        a, w = mpmath.mpf(self.a), mpmath.mpf(self.b) - mpmath.mpf(self.a)
        beta = mpmath.beta(p, q)
        half = mpmath.mpf(1) / 2
        breaks = sorted({mpmath.mpf(float(x)) for x in graded_breaks(depth)} | {half})
        left = [x ** p for x in breaks if x <= half]  # v = x^p, increasing
        right = [(1 - x) ** q for x in reversed(breaks) if x >= half]  # u = (1 − x)^q, increasing

        def low(v):  # x = v^{1/p}: x^{p−1} dx = dv/p
            x = v ** (1 / p)
            return f(a + w * x) * (1 - x) ** (q - 1) / p

        def high(u):  # x = 1 − u^{1/q}: (1 − x)^{q−1} dx = −du/q
            x = 1 - u ** (1 / q)
            return f(a + w * x) * x ** (p - 1) / q

        return (mpmath.quad(low, left) + mpmath.quad(high, right)) / beta

    def mean(self):
        return self.a + (self.b - self.a) * self.p / (self.p + self.q)

    def spec(self):
        if self.p == 1 and self.q == 1:
            return f"uniform({number_text(self.a)},{number_text(self.b)})"
        return f"beta({number_text(self.p)},{number_text(self.q)},{number_text(self.a)},{number_text(self.b)})"


def Uniform(a: float, b: float) -> Beta:
    """The uniform law on [a, b] (a ``Beta(1, 1, a, b)``); errors name ``uniform(a, b)``."""
    a, b = _interval(call_text("uniform", a, b), a, b)
    return Beta(1.0, 1.0, a, b)


@dataclass(frozen=True)
class Discrete(ScalarLaw):
    """Finitely many atoms ``values[k]`` with probabilities ``probs[k]``."""

    values: tuple[float, ...]
    probs: tuple[float, ...]

    def __post_init__(self):
        call = _discrete_call(self.values, self.probs)
        if not len(self.values) or len(self.values) != len(self.probs):
            raise LawError(f"{call}: a discrete law needs as many probabilities as values, at least one")
        vals = tuple(_nonneg(call, "value", v) for v in self.values)
        probs = tuple(finite_parameter(f"{call}: probability", p) for p in self.probs)
        if any(p < 0 for p in probs):
            raise LawError(f"{call}: probabilities must be ≥ 0, got {', '.join(map(number_text, probs))}")
        total = sum(probs)
        if not abs(total - 1) < 1e-9:
            raise LawError(f"{call}: probabilities must sum to 1, they sum to {number_text(total)}")
        keep = [(v, p) for v, p in zip(vals, probs) if p > 0]
        object.__setattr__(self, "values", tuple(v for v, _ in keep))
        object.__setattr__(self, "probs", tuple(p / total for _, p in keep))

    @property
    def is_atomic(self) -> bool:
        return True

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
            return f"twopoint({number_text(self.values[0])},{number_text(self.values[1])},{number_text(self.probs[0])})"
        return "discrete(" + ",".join(f"{number_text(v)}:{number_text(p)}" for v, p in zip(self.values, self.probs)) + ")"


def _discrete_call(values, probs) -> str:
    """``discrete(v1:p1, v2:p2, …)`` as given (``?`` where a value or a probability is missing)."""
    try:
        pairs = list(zip_longest(values, probs, fillvalue=_MISSING))
    except TypeError:
        return f"discrete({values!r}, {probs!r})"
    return "discrete(" + ", ".join(f"{_arg(v)}:{_arg(p)}" for v, p in pairs) + ")"


def TwoPoint(a: float, b: float, p: float) -> ScalarLaw:
    """``a`` with probability ``p``, ``b`` with probability ``1 − p`` (a ``Discrete``, or a ``Point``
    when one value carries all the mass); errors name ``twopoint(a, b, p)``."""
    call = call_text("twopoint", a, b, p)
    a, b = _nonneg(call, "a", a), _nonneg(call, "b", b)
    p = _probability(call, p)
    if a == b or p in (0.0, 1.0):
        return Point(a if p > 0 else b)
    return Discrete((a, b), (p, 1 - p))


@dataclass(frozen=True)
class Mixture(ScalarLaw):
    """``components[k]`` with probability ``probs[k]``."""

    components: tuple[ScalarLaw, ...]
    probs: tuple[float, ...]

    def __post_init__(self):
        call = _mix_call(self.components, self.probs)
        if not len(self.components) or len(self.components) != len(self.probs):
            raise LawError(f"{call}: a mixture needs as many weights as components, at least one")
        probs = tuple(finite_parameter(f"{call}: weight", p) for p in self.probs)
        if any(p < 0 for p in probs) or not abs(sum(probs) - 1) < 1e-9:
            raise LawError(f"{call}: the weights must be ≥ 0 and sum to 1, got {', '.join(map(number_text, probs))}")
        object.__setattr__(self, "probs", probs)

    @property
    def is_atomic(self) -> bool:
        return all(c.is_atomic for c in self.components)

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
        return "mix(" + ",".join(f"{number_text(p)}*{c.spec()}" for c, p in zip(self.components, self.probs)) + ")"


def _mix_call(components, probs) -> str:
    """``mix(w1*DIST1, w2*DIST2, …)`` as given."""
    try:
        pairs = list(zip_longest(probs, components, fillvalue=_MISSING))
    except TypeError:
        return f"mix({components!r}, {probs!r})"
    spec = lambda c: c.spec() if isinstance(c, ScalarLaw) else repr(c)  # noqa: E731
    return "mix(" + ", ".join(f"{_arg(w)}*{spec(c)}" for w, c in pairs) + ")"


@dataclass(frozen=True)
class SumLaw(ScalarLaw):
    """The law of ``S1 + S2`` for independent ``S1, S2`` (``‖m‖² = ‖v‖² + ‖r‖²``)."""

    first: ScalarLaw
    second: ScalarLaw

    @property
    def is_atomic(self) -> bool:
        return self.first.is_atomic and self.second.is_atomic

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
        """The graded pieces of ``rule``: ``lo + (hi − lo)·graded_breaks(depth)`` on the support."""
        lo, hi = self.support()
        return lo + (hi - lo) * graded_breaks(depth)

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
        return sum_rule(self, max(int(depth), 1))

    def expect_mp(self, f, depth=1):
        return self.first.expect_mp(lambda x: self.second.expect_mp(lambda y: f(x + y), depth), depth)

    def spec(self):
        return f"sum({self.first.spec()},{self.second.spec()})"


@lru_cache(maxsize=64)
def sum_rule(law: "SumLaw", depth: int) -> Rule:
    r = compress_rule(law.product_rule(depth), law.piece_edges(depth), law.NODES_PER_PIECE)
    for a in (r.nodes, r.weights):
        a.flags.writeable = False
    return r


@dataclass(frozen=True)
class Exponential(ScalarLaw):
    """The exponential law with the given rate: unbounded support, for sampling only."""

    rate: float

    def __post_init__(self):
        call = call_text("exponential", self.rate)
        r = finite_parameter(f"{call}: rate", self.rate)
        if r <= 0:
            raise LawError(f"{call} needs rate > 0, got {number_text(r)}")
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
        return f"exponential({number_text(self.rate)})"
