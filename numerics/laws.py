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
from scipy import special

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
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise LawError(f"{name} must be a real number, got {x!r}") from None
    if not math.isfinite(x):
        raise LawError(f"{name} must be finite, got {x!r}")
    return x


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

    def rule(self, depth=1):
        r1, r2 = self.first.rule(depth), self.second.rule(depth)
        nodes = (r1.nodes[:, None] + r2.nodes[None, :]).ravel()
        weights = (r1.weights[:, None] * r2.weights[None, :]).ravel()
        return Rule(nodes, weights)

    def expect_mp(self, f, depth=1):
        return self.first.expect_mp(lambda x: self.second.expect_mp(lambda y: f(x + y), depth), depth)

    def spec(self):
        return f"sum({self.first.spec()},{self.second.spec()})"


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
