"""A task law with exact rational parameters: what the certificates are about.

LAW text is read here a second time, number by number, into ``fractions.Fraction``: ``0.5`` is the
exact decimal 1/2 and ``0.1`` is 1/10 (never the binary float nearest to it).  The numerics read the
same text into floats (``numerics.laws.language.parse_law``); ``read_exact_law`` parses it there too
(so a bad LAW gets the usual error, with the grammar) and checks that the two readings describe the
same law, parameter for parameter, up to float rounding.

The families that have exact rational moments are supported:

    point(c), uniform(a,b), beta(p,q,a,b), twopoint(a,b,p), discrete(v1:p1,...), mix(w1*DIST,...)

for ``s=``, or for ``sv=`` and ``sr=`` (then ``s = S_v + S_r`` with S_v, S_r independent), and
``zeta=normal | rademacher | const(c)``.  ``exponential`` (unbounded) is refused, and so is a
mixture whose weights do not sum to exactly 1 (the numerics would use a measure of another total
mass).  The probabilities of ``discrete`` are divided by their sum, exactly, as the numerics divide
them in floats.

Every law is a weighted sum of *leaves* (``leaves``): a finite set of atoms, or a Beta piece
``S = a + (b − a)X`` with ``X ~ Beta(p, q)`` (``uniform`` is ``p = q = 1``).  Their moments:

* atoms: ``E[S^j] = Σ_i p_i v_i^j``;
* Beta: ``E[X^j] = Π_{i<j} (p + i)/(p + q + i)`` (rational for rational p, q), and ``S`` is affine in X;
* ``Y = 1 − 2X`` on [−1, 1] has the three-term recurrence
  ``E[Y^{k+1}] = (k E[Y^{k−1}] + (q − p) E[Y^k]) / (p + q + k)``, ``E[Y⁰] = 1``: integrate
  ``d/dy [y^k (1 − y)^p (1 + y)^q] `` over [−1, 1] (the density of Y is ∝ ``(1 − y)^{p−1}(1 + y)^{q−1}``,
  and ``d/dy[(1 − y)^p (1 + y)^q] = ((q − p) − (p + q) y)(1 − y)^{p−1}(1 + y)^{q−1}``; the boundary
  terms vanish for p, q > 0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from mmicl.numerics.laws.scalar import LawError
from mmicl.numerics.laws.language import CALL, parse_law, split_items, split_pairs, split_top
from mmicl.numerics.laws.scalar import Beta, Discrete, Mixture, Point
from mmicl.numerics.laws.task import TaskLaw

__all__ = [
    "SUPPORTED",
    "Atoms",
    "BetaPiece",
    "ExactTaskLaw",
    "Mix",
    "UnsupportedLawError",
    "beta_moments",
    "centred_beta_moments",
    "fraction_text",
    "read_exact_law",
]

SUPPORTED = ("point(c), uniform(a,b), beta(p,q,a,b), twopoint(a,b,p), discrete(v1:p1,...) and mix(w1*DIST,...) "
             "of these, as s=DIST or as sv=DIST; sr=DIST, with zeta=normal, rademacher or const(c), every number "
             "an exact decimal such as 0.5 or 1e-3")


class UnsupportedLawError(LawError):
    """A law the certificates cannot take: the message says why and names the supported families."""

    def __init__(self, why: str):
        super().__init__(f"cannot certify this law: {why}. Certificates take laws with exact rational moments: "
                         f"{SUPPORTED}")


def fraction_text(x: Fraction) -> str:
    """``"p/q"`` (or ``"p"`` for an integer): the exact text of a rational in a certificate."""
    return str(Fraction(x))


# ---------------------------------------------------------------------------------------------
# scalar laws
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Atoms:
    """Finitely many atoms ``values[i]`` with probabilities ``probs[i]`` (positive, summing to 1);
    ``point``: written as ``point(c)`` (or a ``twopoint`` with all its mass on one value)."""

    values: tuple[Fraction, ...]
    probs: tuple[Fraction, ...]
    point: bool = False

    def to_json(self) -> dict:
        if self.point:
            return {"family": "point", "c": fraction_text(self.values[0])}
        return {"family": "discrete", "values": [fraction_text(v) for v in self.values],
                "probs": [fraction_text(p) for p in self.probs]}

    def leaves(self, weight: Fraction = Fraction(1)) -> list[tuple[Fraction, Leaf]]:
        return [(weight, self)]

    def positive(self) -> list[Fraction]:
        return [v for v in self.values if v > 0]

    def support(self) -> tuple[Fraction, Fraction]:
        return min(self.values), max(self.values)

    def moment(self, k: int) -> Fraction:
        return sum((p * v**k for v, p in zip(self.values, self.probs)), Fraction(0))


@dataclass(frozen=True)
class BetaPiece:
    """``S = a + (b − a) X`` with ``X ~ Beta(p, q)``; ``written`` is ``"uniform"`` or ``"beta"``."""

    p: Fraction
    q: Fraction
    a: Fraction
    b: Fraction
    written: str = "beta"

    def to_json(self) -> dict:
        if self.written == "uniform":
            return {"family": "uniform", "a": fraction_text(self.a), "b": fraction_text(self.b)}
        return {"family": "beta", "p": fraction_text(self.p), "q": fraction_text(self.q),
                "a": fraction_text(self.a), "b": fraction_text(self.b)}

    def leaves(self, weight: Fraction = Fraction(1)) -> list[tuple[Fraction, Leaf]]:
        return [(weight, self)]

    def support(self) -> tuple[Fraction, Fraction]:
        return self.a, self.b

    def moment(self, k: int) -> Fraction:
        """``E[S^k] = Σ_j C(k, j) a^{k−j} (b − a)^j E[X^j]``."""
        m = beta_moments(self.p, self.q, k)
        w = self.b - self.a
        return sum((math.comb(k, j) * self.a ** (k - j) * w**j * m[j] for j in range(k + 1)), Fraction(0))


Leaf = Atoms | BetaPiece


@dataclass(frozen=True)
class Mix:
    """``parts[i]`` with probability ``weights[i]`` (the weights sum to exactly 1)."""

    weights: tuple[Fraction, ...]
    parts: tuple[ExactScalar, ...]

    def to_json(self) -> dict:
        return {"family": "mix", "weights": [fraction_text(w) for w in self.weights],
                "parts": [p.to_json() for p in self.parts]}

    def leaves(self, weight: Fraction = Fraction(1)) -> list[tuple[Fraction, Leaf]]:
        return [leaf for w, part in zip(self.weights, self.parts) for leaf in part.leaves(weight * w)]

    def support(self) -> tuple[Fraction, Fraction]:
        sups = [p.support() for w, p in zip(self.weights, self.parts) if w > 0]
        return min(s[0] for s in sups), max(s[1] for s in sups)

    def moment(self, k: int) -> Fraction:
        return sum((w * p.moment(k) for w, p in zip(self.weights, self.parts)), Fraction(0))


ExactScalar = Atoms | BetaPiece | Mix


def beta_moments(p: Fraction, q: Fraction, n: int) -> list[Fraction]:
    """``E[X^j]`` for ``X ~ Beta(p, q)``, ``j = 0..n``: ``Π_{i<j} (p + i)/(p + q + i)``."""
    out = [Fraction(1)]
    for i in range(n):
        out.append(out[-1] * (p + i) / (p + q + i))
    return out


def centred_beta_moments(p: Fraction, q: Fraction, n: int) -> list[Fraction]:
    """``E[Y^k]`` for ``Y = 1 − 2X``, ``X ~ Beta(p, q)``, ``k = 0..n``, by the three-term recurrence
    of the module docstring."""
    out = [Fraction(1), (q - p) / (p + q)]
    for k in range(1, n):
        out.append((k * out[k - 1] + (q - p) * out[k]) / (p + q + k))
    return out[: n + 1]


def has_positive_mass(law: ExactScalar) -> bool:
    """``P(S > 0) > 0``: an atom > 0 with positive probability, or a Beta piece (``b > a ≥ 0``)."""
    for w, leaf in law.leaves():
        if w > 0 and (isinstance(leaf, BetaPiece) or any(v > 0 for v in leaf.positive())):
            return True
    return False


# ---------------------------------------------------------------------------------------------
# the task law
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactTaskLaw:
    """The law of (s, ζ) with exact parameters, and the LAW text it was read from."""

    text: str
    blocks: tuple[tuple[str, ExactScalar], ...]  # (("s", law),) or (("sv", law), ("sr", law))
    zeta: str  # "normal" | "rademacher" | "const"
    zeta_c: Fraction | None
    d1: int
    d2: int

    def to_json(self) -> dict:
        """The law as a certificate writes it: the LAW text and every parameter as ``"p/q"``."""
        out: dict = {"text": self.text}
        for name, law in self.blocks:
            out[name] = law.to_json()
        out["zeta"] = {"family": self.zeta, **({"c": fraction_text(self.zeta_c)} if self.zeta == "const" else {})}
        out["d1"], out["d2"] = self.d1, self.d2
        return out

    def zeta2(self) -> Fraction:
        """``E[ζ²]``: 1 for normal and Rademacher, c² for const(c)."""
        return self.zeta_c**2 if self.zeta == "const" else Fraction(1)

    @property
    def per_modality(self) -> bool:
        return len(self.blocks) == 2

    def s_nonnegative(self) -> bool:
        """Every value of s is ≥ 0 (atoms and Beta pieces: values and lower ends ≥ 0)."""
        for _, law in self.blocks:
            for _, leaf in law.leaves():
                if isinstance(leaf, Atoms) and any(v < 0 for v in leaf.values):
                    return False
                if isinstance(leaf, BetaPiece) and leaf.a < 0:
                    return False
        return True

    def s_positive_mass(self) -> bool:
        """``P(s > 0) > 0`` (for ``sv``, ``sr``: either modality has ``P(S > 0) > 0``)."""
        return any(has_positive_mass(law) for _, law in self.blocks)

    def s_moment(self, k: int) -> Fraction:
        """``E[s^k]``; for ``s = S_v + S_r`` (independent) by the binomial sum."""
        if not self.per_modality:
            return self.blocks[0][1].moment(k)
        v, r = (law for _, law in self.blocks)
        return sum((math.comb(k, j) * v.moment(j) * r.moment(k - j) for j in range(k + 1)), Fraction(0))


# ---------------------------------------------------------------------------------------------
# reading LAW text exactly
# ---------------------------------------------------------------------------------------------


def _number(text: str, where: str) -> Fraction:
    try:
        return Fraction(text.strip())
    except (ValueError, ZeroDivisionError):
        raise UnsupportedLawError(f"{where}: {text.strip()!r} is not an exact decimal number") from None


def _nonneg(x: Fraction, where: str) -> Fraction:
    if x < 0:
        raise UnsupportedLawError(f"{where} = {x} is negative, but it is a squared norm")
    return x


def _dist(text: str) -> ExactScalar:
    # the grammar's own splitting (numerics.laws.language), so both readings see the same pieces

    m = CALL.match(text)
    if not m:  # parse_law has refused it already; kept for direct calls
        raise UnsupportedLawError(f"expected NAME(ARGS), got {text!r}")
    name, inner = m.group(1), m.group(2)
    args = split_top(inner) if inner.strip() else []
    where = f"{name}({inner.strip()})"
    nums = lambda: [_number(a, where) for a in args]
    if name == "point":
        (c,) = nums()
        return Atoms((_nonneg(c, f"{where}: c"),), (Fraction(1),), point=True)
    if name in ("uniform", "beta"):
        vals = nums()
        p, q, a, b = ([Fraction(1), Fraction(1)] + vals) if name == "uniform" else vals
        a, b = _nonneg(a, f"{where}: a"), _nonneg(b, f"{where}: b")
        if not (b > a and p > 0 and q > 0):
            raise UnsupportedLawError(f"{where} needs b > a ≥ 0 and p, q > 0")
        return BetaPiece(p, q, a, b, name)
    if name == "twopoint":
        a, b, p = nums()
        a, b = _nonneg(a, f"{where}: a"), _nonneg(b, f"{where}: b")
        if not 0 <= p <= 1:
            raise UnsupportedLawError(f"{where} needs 0 ≤ p ≤ 1")
        if a == b or p in (0, 1):  # all the mass on one value: a point, as the numerics make it
            return Atoms((a if p > 0 else b,), (Fraction(1),), point=True)
        return Atoms((a, b), (p, 1 - p))
    if name == "discrete":
        pairs = [(_nonneg(_number(v, where), f"{where}: value"), _number(p, where)) for v, p in split_pairs(args, ":", "")]
        total = sum(p for _, p in pairs)
        if any(p < 0 for _, p in pairs) or total <= 0:
            raise UnsupportedLawError(f"{where} needs probabilities ≥ 0 with a positive sum")
        kept = [(v, p / total) for v, p in pairs if p > 0]  # zero-probability atoms dropped, as the numerics do
        return Atoms(tuple(v for v, _ in kept), tuple(p for _, p in kept))
    if name == "mix":
        pairs = [(_number(w, where), _dist(d.strip())) for w, d in split_pairs(args, "*", "")]
        weights = tuple(w for w, _ in pairs)
        if any(w < 0 for w in weights) or sum(weights) != 1:
            raise UnsupportedLawError(
                f"{where}: the mixture weights sum to {sum(weights)}, not exactly 1 (the numerics would use a measure "
                "of that total mass); write weights that sum to 1")
        return Mix(weights, tuple(d for _, d in pairs))
    if name == "exponential":
        raise UnsupportedLawError(f"{where} has unbounded support: its moments grow without bound and the theorems "
                                  "need s bounded")
    raise UnsupportedLawError(f"unknown family {name!r}")


def _float_params(law) -> list[tuple[str, float]]:
    """Every float parameter of a numerics law (``TaskLaw`` or scalar law), with where it sits."""

    if isinstance(law, TaskLaw):
        if law.zeta.kind == "samples":
            raise UnsupportedLawError("ζ given by samples has no LAW text")
        if law.anisotropy_v or law.anisotropy_r:
            raise UnsupportedLawError("anisotropic directions have no LAW text")
        out = [(f"{key}={part.spec()}: {where}", x) for key in ("s", "sv", "sr")
               if (part := getattr(law, key)) is not None for where, x in _float_params(part)]
        if law.zeta.kind == "const":
            out.append((f"zeta={law.zeta.spec()}: c", law.zeta.value))
        return out
    if isinstance(law, Point):
        return [("c", law.c)]
    if isinstance(law, Beta):
        return [("p", law.p), ("q", law.q), ("a", law.a), ("b", law.b)]
    if isinstance(law, Discrete):
        return [("value", v) for v in law.values] + [("probability", p) for p in law.probs]
    if isinstance(law, Mixture):
        return [("weight", w) for w in law.probs] + [x for c in law.components for x in _float_params(c)]
    raise UnsupportedLawError(f"{law.spec()} is not one of the supported families")


def _same_as_numerics(exact: ExactTaskLaw, parsed) -> None:
    """The exact reading and the numerics' float reading describe the same law: the same families,
    and every parameter equal to relative 1e-12.  The two read the same decimals, one exactly and one
    rounded to float64 (relative error 2^-53, a few ulps more where the numerics normalise
    probabilities), so 1e-12 only fails on a structural difference: a bug here, never the user's."""

    def close(x: Fraction, y: float) -> bool:
        return abs(float(x) - y) <= 1e-12 * max(abs(y), 1e-300) or x == y

    def same(law: ExactScalar, num) -> bool:
        if isinstance(law, Atoms):
            if law.point:
                return isinstance(num, Point) and close(law.values[0], num.c)
            return (isinstance(num, Discrete) and len(num.values) == len(law.values)
                    and all(map(close, law.values, num.values)) and all(map(close, law.probs, num.probs)))
        if isinstance(law, BetaPiece):
            return isinstance(num, Beta) and all(map(close, (law.p, law.q, law.a, law.b), (num.p, num.q, num.a, num.b)))
        return (isinstance(num, Mixture) and len(num.components) == len(law.parts)
                and all(map(close, law.weights, num.probs)) and all(map(same, law.parts, num.components)))

    ok = all(same(law, getattr(parsed, name)) for name, law in exact.blocks)
    ok = ok and parsed.zeta.kind == exact.zeta and (exact.zeta != "const" or close(exact.zeta_c, parsed.zeta.value))
    if not ok:
        raise RuntimeError(f"the exact reading of {exact.text!r} differs from the numerics' reading "
                           f"({parsed.spec()}): a bug in proofs/certificates/exact_law.py")


def read_exact_law(law) -> ExactTaskLaw:
    """The ``ExactTaskLaw`` of LAW text, or of a ``TaskLaw`` whose every parameter is an exact decimal.

    A ``TaskLaw`` is read through its LAW text (``spec()``); a float parameter that is not the
    decimal it prints as (``0.1`` is stored as 0.1000000000000000055511…) is refused, since the
    certificate would be about another law: pass the LAW text instead."""

    if isinstance(law, TaskLaw):
        for where, x in _float_params(law):
            if Fraction(x) != Fraction(repr(float(x))):
                raise UnsupportedLawError(
                    f"{where} is the binary float {Fraction(x)} = {x!r}…, not an exact decimal; pass the law as LAW "
                    f"text such as {law.spec()!r} to certify the decimal law")
        text = law.spec()
    elif isinstance(law, str):
        text = law.strip()
    else:
        raise LawError(f"a task law must be LAW text such as 's=uniform(0.5,4)' or a TaskLaw, got {law!r}")
    parsed = parse_law(text)  # a bad LAW gets the numerics' error, with the grammar
    items = {k.strip(): v.strip() for k, v in (p.split("=", 1) for p in split_items(text))}
    blocks = tuple((key, _dist(items[key])) for key in ("s", "sv", "sr") if key in items)
    zeta_text = items.get("zeta", "normal")
    zeta, zeta_c = parsed.zeta.kind, None
    if zeta == "const":
        zeta_c = _number(zeta_text.strip()[len("const("):-1], f"zeta={zeta_text}")
    exact = ExactTaskLaw(text, blocks, zeta, zeta_c, parsed.d1, parsed.d2)
    _same_as_numerics(exact, parsed)
    return exact
