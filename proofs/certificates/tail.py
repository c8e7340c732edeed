"""The tail of an all-depth certificate: α* − α_T bounded for every depth T ≥ T₀ (standard library only).

The checker (``check.py``) imports this module for certificates of kind ``alpha_all_T``; like the
checker it imports nothing but ``fractions`` and ``math``, and it trusts no number it can recompute.
The certifier (``all_depths.py``) uses the same functions to find the certificate's constants: any
constants it finds are only as good as these checks say.  The proof is in docs/certificates.md;
in brief:

**Exact end form.**  n = 2T − 1 is odd, r = α(1+s) − 1, r_a = α(1+a) − 1 < 0 < r_b = α(1+b) − 1 at
the ends a < b of the support of s.  For a law whose every leaf is an atom at a or at b, or a Beta
piece on all of [a, b] with integer exponents p, q ≥ 1 (``ends``), substituting t = r_b − r near b and
u = r − r_a near a turns E[s r^n] into two finite sums, with no remainder:

    E[s r^n] = r_b^n n^(−ν_b) B_b(1/n, δ) − |r_a|^n n^(−ν_a) B_a(1/n, δ),     δ = α* − α,

with ``∫₀^ρ t^j (ρ − t)^n dt = ρ^(n+j+1) j! n!/(n+j+1)!``; ν_b is 0 with an atom at b and min q
otherwise, ν_a is 0 with an atom at a > 0 and min p (+1 when a = 0) otherwise; B_a, B_b are
polynomials and reciprocals of polynomials in (1/n, δ) and positive near 0.

**The function whose sign is E[s r^n]'s.**  With x = 1/n and u = log(n)/n,

    F(x, u) = log(r_b/|r_a|) + (ν_a − ν_b) u + x (log B_b − log B_a)

is x·(log of the first term − log of the second): F > 0 ⟺ E[s r^n] > 0, and F is analytic in
(x, u) once δ is a polynomial in them.  The certificate's δ is

    δ_c(x, u) ± K (x + u)³,     δ_c = A u + C x + E₂ u² + E₁ x u + E₀ x²,

with A rational and C, E₀, E₁, E₂ polynomials in λ = log(B_b(0,0)/B_a(0,0)) with rational
coefficients.  **Origin**: the Taylor coefficients of F of degree ≤ 2 at (0, 0) must vanish
*exactly*, as polynomials in λ (``origin_residue``).  **Box**: Taylor's theorem along the segment
from (0,0) to (x, u) leaves F = Σ_{i+j=3} c_ij(ξ) x^i u^j with ξ in the box [0, x₀] × [0, u₀]; the
coefficients are enclosed over the whole box in interval arithmetic (``box_cubic``): with +K all
must be ≤ 0 and c₃₀ < 0 (then F < 0, E[s r^n] < 0 and α_T > α* − δ), with −K all ≥ 0 and c₃₀ > 0.
Every (1/n, log n/n) with n ≥ n₀ = 2T₀ − 1 ≥ 3 lies in that box when x₀ = 1/n₀ and u₀ ≥ log(n₀)/n₀.
Since E[s r^n] increases strictly in α, α* − α_T lies strictly between the two δ's.
"""
from __future__ import annotations

import math
from fractions import Fraction

__all__ = ["TailError", "Interval", "LambdaPoly", "Ends", "ends", "log_bounds", "origin_residue",
           "box_cubic", "expansion", "delta_bounds", "tail_side", "PRECISION_BITS"]

PRECISION_BITS = 256
"""Interval end points are rounded outwards to multiples of 2^−PRECISION_BITS (keeps them short)."""


class TailError(Exception):
    """The tail proof cannot be made or checked: the message says which step and why."""


# ---------------------------------------------------------------------------------------------
# rings: exact polynomials in λ, and rational intervals
# ---------------------------------------------------------------------------------------------


class LambdaPoly:
    """A polynomial in the symbol λ with rational coefficients (exact)."""

    __slots__ = ("c",)

    def __init__(self, c=None):
        self.c = {k: Fraction(v) for k, v in (c or {}).items() if v != 0}

    @staticmethod
    def lift(x) -> LambdaPoly:
        return LambdaPoly({0: x})

    def __add__(self, o):
        o = o if isinstance(o, LambdaPoly) else LambdaPoly.lift(o)
        out = dict(self.c)
        for k, v in o.c.items():
            out[k] = out.get(k, 0) + v
        return LambdaPoly(out)

    __radd__ = __add__

    def __neg__(self):
        return LambdaPoly({k: -v for k, v in self.c.items()})

    def __sub__(self, o):
        return self + (-(o if isinstance(o, LambdaPoly) else LambdaPoly.lift(o)))

    def __mul__(self, o):
        if not isinstance(o, LambdaPoly):
            return LambdaPoly({k: v * o for k, v in self.c.items()})
        out: dict = {}
        for i, a in self.c.items():
            for j, b in o.c.items():
                out[i + j] = out.get(i + j, 0) + a * b
        return LambdaPoly(out)

    __rmul__ = __mul__

    def recip(self) -> LambdaPoly:
        if set(self.c) - {0} or not self.c:
            raise TailError("a reciprocal of a non-constant (or zero) polynomial in λ at the origin")
        return LambdaPoly({0: 1 / self.c[0]})

    def is_zero(self) -> bool:
        return not self.c

    def constant(self) -> Fraction:
        if set(self.c) - {0}:
            raise TailError("expected a rational, got a polynomial in λ")
        return self.c.get(0, Fraction(0))

    def at(self, lam: Interval) -> Interval:
        out = Interval.lift(0)
        for k, v in self.c.items():
            out = out + Interval.lift(v) * lam ** k
        return out

    def to_json(self) -> list[str]:
        top = max(self.c, default=0)
        return [str(self.c.get(k, Fraction(0))) for k in range(top + 1)]

    @staticmethod
    def from_json(items) -> LambdaPoly:
        if not isinstance(items, list) or not items or not all(isinstance(s, str) for s in items):
            raise TailError(f"a polynomial in λ is a non-empty list of rationals as strings, got {items!r}")
        try:
            return LambdaPoly({k: Fraction(s) for k, s in enumerate(items)})
        except (ValueError, ZeroDivisionError):
            raise TailError(f"{items!r} is not a list of rationals") from None

    def __repr__(self):
        return " + ".join(f"{v}·λ^{k}" for k, v in sorted(self.c.items())) or "0"


def _down(x: Fraction) -> Fraction:
    return Fraction(math.floor(x * 2**PRECISION_BITS), 2**PRECISION_BITS)


def _up(x: Fraction) -> Fraction:
    return Fraction(math.ceil(x * 2**PRECISION_BITS), 2**PRECISION_BITS)


class Interval:
    """A closed interval [lo, hi] of rationals; every operation encloses the exact result."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo, hi=None):
        self.lo, self.hi = Fraction(lo), Fraction(lo if hi is None else hi)
        if self.lo > self.hi:
            raise TailError(f"an interval [{self.lo}, {self.hi}] with lo > hi")

    @staticmethod
    def lift(x) -> Interval:
        return x if isinstance(x, Interval) else Interval(x)

    def _round(self) -> Interval:
        return Interval(_down(self.lo), _up(self.hi))

    def __add__(self, o):
        o = Interval.lift(o)
        return Interval(self.lo + o.lo, self.hi + o.hi)._round()

    __radd__ = __add__

    def __neg__(self):
        return Interval(-self.hi, -self.lo)

    def __sub__(self, o):
        return self + (-Interval.lift(o))

    def __rsub__(self, o):
        return Interval.lift(o) - self

    def __mul__(self, o):
        o = Interval.lift(o)
        p = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Interval(min(p), max(p))._round()

    __rmul__ = __mul__

    def __pow__(self, k: int):
        out = Interval(1)
        for _ in range(k):
            out = out * self
        return out

    def recip(self) -> Interval:
        if self.lo <= 0 <= self.hi:
            raise TailError(f"a reciprocal of an interval that holds 0, [{float(self.lo):.3g}, {float(self.hi):.3g}]")
        return Interval(_down(1 / self.hi), _up(1 / self.lo))

    def contains(self, x) -> bool:
        return self.lo <= x <= self.hi

    def __repr__(self):
        return f"[{float(self.lo):.6g}, {float(self.hi):.6g}]"


def _atanh_bounds(z: Fraction) -> tuple[Fraction, Fraction]:
    """Rational bounds on atanh(z) for 0 ≤ z ≤ 1/2: the series Σ z^(2i+1)/(2i+1) cut after N terms,
    its tail between 0 and z^(2N+1)/((2N+1)(1 − z²))."""
    s, term, k = Fraction(0), z, 1
    while True:
        s += term / k
        term *= z * z
        k += 2
        tail = term / (k * (1 - z * z))
        if tail < Fraction(1, 2 ** (PRECISION_BITS - 8)):  # the tail is kept: 2⁸ grid steps at most
            return _down(s), _up(s + tail)


def log_bounds(q: Fraction) -> Interval:
    """An interval holding log q for a rational q > 0: q = 2^e·m with m ∈ [2/3, 4/3],
    log m = 2 atanh((m − 1)/(m + 1)), log 2 = 2 atanh(1/3)."""
    q = Fraction(q)
    if q <= 0:
        raise TailError(f"log of {q} ≤ 0")
    e = q.numerator.bit_length() - q.denominator.bit_length()
    m = q / Fraction(2) ** e
    while m > Fraction(4, 3):
        m, e = m / 2, e + 1
    while m < Fraction(2, 3):
        m, e = m * 2, e - 1
    z = (m - 1) / (m + 1)
    lo2, hi2 = _atanh_bounds(Fraction(1, 3))
    lom, him = _atanh_bounds(abs(z))
    if z < 0:
        lom, him = -him, -lom
    l2 = Interval(2 * lo2, 2 * hi2)
    return Interval(2 * lom, 2 * him) + l2 * e


# ---------------------------------------------------------------------------------------------
# bivariate jets: truncated Taylor series in (dx, du) over either ring
# ---------------------------------------------------------------------------------------------


class Jet:
    """Σ_{i+j≤D} c_ij dx^i du^j with coefficients in a ring (``LambdaPoly`` or ``Interval``)."""

    __slots__ = ("c", "D", "zero")

    def __init__(self, c: dict, D: int, zero):
        self.c, self.D, self.zero = c, D, zero

    def coef(self, i, j):
        return self.c.get((i, j), self.zero)

    @classmethod
    def const(cls, v, D, zero) -> Jet:
        return cls({(0, 0): zero + v}, D, zero)

    def _lift(self, o) -> Jet:
        return o if isinstance(o, Jet) else Jet.const(o, self.D, self.zero)

    def __add__(self, o):
        o = self._lift(o)
        keys = set(self.c) | set(o.c)
        return Jet({k: self.coef(*k) + o.coef(*k) for k in keys}, self.D, self.zero)

    __radd__ = __add__

    def __neg__(self):
        return Jet({k: -v for k, v in self.c.items()}, self.D, self.zero)

    def __sub__(self, o):
        return self + (-self._lift(o))

    def __rsub__(self, o):
        return self._lift(o) - self

    def __mul__(self, o):
        if not isinstance(o, Jet):
            return Jet({k: v * o for k, v in self.c.items()}, self.D, self.zero)
        out: dict = {}
        for (i, j), a in self.c.items():
            for (k, l), b in o.c.items():
                if i + j + k + l <= self.D:
                    key = (i + k, j + l)
                    out[key] = out[key] + a * b if key in out else a * b
        return Jet(out, self.D, self.zero)

    __rmul__ = __mul__

    def __pow__(self, k: int):
        out = Jet.const(1, self.D, self.zero)
        for _ in range(k):
            out = out * self
        return out

    def _nilpotent(self):
        """``(c0, z)``: the constant term and z = self/c0 − 1 (no constant term, so z^(D+1) = 0)."""
        c0 = self.coef(0, 0)
        inv = c0.recip()
        z = Jet({k: v * inv for k, v in self.c.items() if k != (0, 0)}, self.D, self.zero)
        return inv, z

    def recip(self) -> Jet:
        inv, z = self._nilpotent()
        out, power = Jet.const(1, self.D, self.zero), Jet.const(1, self.D, self.zero)
        for _ in range(self.D):
            power = power * (-z)
            out = out + power
        return out * inv

    def log_ratio(self) -> Jet:
        """log(self/c0) with c0 the constant term: Σ_{k≤D} (−1)^(k+1) z^k / k."""
        _, z = self._nilpotent()
        out, power = Jet.const(0, self.D, self.zero), Jet.const(1, self.D, self.zero)
        for k in range(1, self.D + 1):
            power = power * z
            out = out + power * Fraction((-1) ** (k + 1), k)
        return out


def _var(centre, which: int, D: int, zero) -> Jet:
    c = {(0, 0): zero + centre}
    if D >= 1:
        c[(1, 0) if which == 0 else (0, 1)] = zero + 1
    return Jet(c, D, zero)


# ---------------------------------------------------------------------------------------------
# the law's ends
# ---------------------------------------------------------------------------------------------


class Ends:
    """The data of the exact end form: support [a, b], atoms at the ends, Beta pieces on [a, b]."""

    def __init__(self, a, b, atom_a, atom_b, pieces):
        self.a, self.b = Fraction(a), Fraction(b)
        self.atom_a, self.atom_b = Fraction(atom_a), Fraction(atom_b)  # probabilities
        self.pieces = [(Fraction(w), int(p), int(q)) for w, p, q in pieces]
        self.alpha_star = Fraction(2) / (2 + self.a + self.b)
        self.nu_b = 0 if self.atom_b else min(q for _, _, q in self.pieces)
        self.nu_a = 0 if (self.atom_a and self.a > 0) else min(p + (self.a == 0) for _, p, _ in self.pieces)
        self.kappa0 = (2 + self.a + self.b) ** 2 / (self.b - self.a)
        self.A = Fraction(self.nu_a - self.nu_b) / self.kappa0

    def lambda_ratio(self) -> Fraction:
        """B_b(0, 0)/B_a(0, 0), exactly: λ is its log."""
        bb = _ends_B(self, LambdaPoly.lift(0), 0, D=0)
        return bb[0].coef(0, 0).constant() / bb[1].coef(0, 0).constant()


def ends(pieces) -> Ends:
    """The end data of a law given as ``[(weight, leaf)]`` (the checker's ``_Law.pieces()``); raises
    ``TailError`` with a one-line reason when the law is outside the class the tail proof covers."""
    leaves = [(Fraction(w), leaf) for w, leaf in pieces if w]
    if not leaves:
        raise TailError("the law has no mass")
    lows, highs = [], []
    for w, leaf in leaves:
        if leaf[0] == "atoms":
            kept = [v for v, p in zip(leaf[1], leaf[2]) if p]
            lows.append(min(kept)), highs.append(max(kept))
        elif leaf[0] == "beta":
            lows.append(leaf[3]), highs.append(leaf[4])
        else:
            raise TailError("two continuous modalities (sv=…; sr=…): the sum's density is not one polynomial "
                            "piece on the support, which the proof needs")
    a, b = min(lows), max(highs)
    if not a < b:
        raise TailError(f"s is the constant {a}: α_T = α* = {Fraction(1) / (1 + a)} at every depth, nothing to bound")
    atom_a = atom_b = Fraction(0)
    pieces_out = []
    for w, leaf in leaves:
        if leaf[0] == "atoms":
            for v, p in zip(leaf[1], leaf[2]):
                if not p:
                    continue
                if v == a:
                    atom_a += w * p
                elif v == b:
                    atom_b += w * p
                else:
                    raise TailError(f"an atom at {v}, inside the support ({a}, {b}): the proof covers "
                                    "mass at the ends and Beta pieces on the whole support")
        else:
            _, p, q, lo, hi = leaf
            if (lo, hi) != (a, b):
                raise TailError(f"a Beta piece on [{lo}, {hi}], not the whole support [{a}, {b}]: the all-depth "
                                "proof covers Beta pieces on the whole support and atoms at its ends")
            if p.denominator != 1 or q.denominator != 1:
                raise TailError(f"beta({p},{q},…) has a non-integer exponent: the proof needs integer "
                                "p, q (a polynomial density)")
            pieces_out.append((w, p, q))
    if not pieces_out and a == 0:
        raise TailError("all the mass at the low end sits at s = 0, where s·r^n vanishes: E[s r^n] > 0 for every "
                        "α above 1/(1+b)'s neighbourhood and α_T has no two-sided balance to expand")
    return Ends(a, b, atom_a, atom_b, pieces_out)


def _poly_mul(p1: list, p2: list) -> list:
    out = [None] * (len(p1) + len(p2) - 1)
    for i, x in enumerate(p1):
        for j, y in enumerate(p2):
            out[i + j] = x * y if out[i + j] is None else out[i + j] + x * y
    return out


def _beta_norm(p: int, q: int, a: Fraction, b: Fraction) -> Fraction:
    """1/(B(p, q)(b − a)^(p+q−1)) for integers p, q ≥ 1."""
    return Fraction(math.factorial(p + q - 1), math.factorial(p - 1) * math.factorial(q - 1)) / (b - a) ** (p + q - 1)


def _ends_B(e: Ends, delta, xc, D: int):
    """``(B_b, B_a, r_b, |r_a|)`` as jets at δ (a jet, or a ring constant) and x = xc + dx."""
    zero = delta.coef(0, 0) * 0 if isinstance(delta, Jet) else delta * 0
    X = _var(xc, 0, D, zero)
    d = delta if isinstance(delta, Jet) else Jet.const(delta, D, zero)
    alpha = Jet.const(e.alpha_star, D, zero) - d
    inv = alpha.recip()
    r_b = alpha * (1 + e.b) - 1
    r_a = 1 - alpha * (1 + e.a)
    Bb = Jet.const(e.atom_b * e.b, D, zero)
    Ba = Jet.const(e.atom_a * e.a, D, zero)
    one = Jet.const(1, D, zero)
    for w, p, q in e.pieces:
        cw = inv * (w * _beta_norm(p, q, e.a, e.b))
        width = e.b - e.a
        # near b: (b − t/α)((b−a) − t/α)^(p−1) (t/α)^(q−1), as a polynomial in t
        top = [cw]
        for factor in ([one * e.b, -inv],) + ([one * width, -inv],) * (p - 1) + ([0 * one, inv],) * (q - 1):
            top = _poly_mul(top, factor)
        bot = [cw]
        for factor in ([one * e.a, inv],) + ([0 * one, inv],) * (p - 1) + ([one * width, -inv],) * (q - 1):
            bot = _poly_mul(bot, factor)
        for coeffs, rho, nu, which in ((top, r_b, e.nu_b, "b"), (bot, r_a, e.nu_a, "a")):
            lowest = (q - 1) if which == "b" else (p - 1 + (e.a == 0))
            for j, cj in enumerate(coeffs):
                if j < lowest:
                    continue  # structurally zero: the factor t^(q−1), or u^(p−1)·(a + u/α) with a = 0
                term = cj * rho ** (j + 1) * math.factorial(j) * X ** (j + 1 - nu)
                for i in range(1, j + 2):
                    term = term * (one + X * i).recip()
                if which == "b":
                    Bb = Bb + term
                else:
                    Ba = Ba + term
    return Bb, Ba, r_b, r_a


def _delta(e: Ends, X: Jet, U: Jet, C, E2, E1, E0, K: Fraction, sign: int) -> Jet:
    S = X + U
    return U * e.A + X * C + U * U * E2 + X * U * E1 + X * X * E0 + S * S * S * (sign * K)


def _F(e: Ends, C, E2, E1, E0, K, sign, xc, uc, D, zero, lam_const) -> Jet:
    """F(x, u) as a jet at (xc, uc); its constant term is exact only at the origin (``lam_const``)."""
    X, U = _var(xc, 0, D, zero), _var(uc, 1, D, zero)
    d = _delta(e, X, U, C, E2, E1, E0, K, sign)
    Bb, Ba, r_b, r_a = _ends_B(e, d, xc, D)
    Lg = r_b.log_ratio() - r_a.log_ratio()
    Psi = Bb.log_ratio() - Ba.log_ratio() + lam_const
    return Lg + U * (e.nu_a - e.nu_b) + X * Psi


def origin_residue(e: Ends, C: LambdaPoly, E2: LambdaPoly, E1: LambdaPoly, E0: LambdaPoly) -> dict:
    """The Taylor coefficients of F of degree ≤ 2 at the origin, as exact polynomials in λ (all must be 0).
    At the origin r_b = |r_a| = α*(b − a)/2, so log(r_b/|r_a|) has constant 0, and log(B_b/B_a) has λ."""
    zero = LambdaPoly()
    lam = LambdaPoly({1: 1})
    F = _F(e, C, E2, E1, E0, Fraction(0), 1, 0, 0, 2, zero, lam)
    return {k: F.coef(*k) for k in ((0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2))}


def expansion(e: Ends) -> tuple[LambdaPoly, LambdaPoly, LambdaPoly, LambdaPoly]:
    """``(C, E₂, E₁, E₀)`` that make F vanish to second order: −κ₀C + λ = 0 at first order, and each
    second-order coefficient is affine in its E with slope −κ₀ (δ enters F through log(r_b/|r_a|),
    whose derivative at 0 is −κ₀)."""
    zero = LambdaPoly()
    C = LambdaPoly({1: 1 / e.kappa0})
    res = origin_residue(e, C, zero, zero, zero)
    E2, E1, E0 = (res[k] * (1 / e.kappa0) for k in ((0, 2), (1, 1), (2, 0)))
    return C, E2, E1, E0


def box_cubic(e: Ends, coeffs: dict, K: Fraction, sign: int, x0: Fraction, u0: Fraction) -> dict:
    """Enclosures of the third-order Taylor coefficients c_ij (i + j = 3) of F over the box
    [0, x0] × [0, u0], for δ = δ_c + sign·K(x + u)³; ``coeffs`` holds C, E2, E1, E0 as intervals."""
    zero = Interval(0)
    F = _F(e, coeffs["C"], coeffs["E2"], coeffs["E1"], coeffs["E0"], K, sign, Interval(0, x0), Interval(0, u0), 3,
           zero, zero)
    return {k: F.coef(*k) for k in ((3, 0), (2, 1), (1, 2), (0, 3))}


def cubic_sign_ok(cubic: dict, sign: int) -> bool:
    """With −K (sign −1) F must be > 0: every c_ij ≥ 0 and c₃₀ > 0; with +K, the mirror image."""
    if sign < 0:
        return cubic[(3, 0)].lo > 0 and all(c.lo >= 0 for c in cubic.values())
    return cubic[(3, 0)].hi < 0 and all(c.hi <= 0 for c in cubic.values())


def delta_bounds(A: Fraction, coeffs: dict, K: Fraction, n: int) -> tuple[Interval, Interval]:
    """Intervals holding δ_c(n) − K(1 + ℓ)³/n³ and δ_c(n) + K(1 + ℓ)³/n³ at one n (ℓ = log n), with
    ``coeffs`` C, E2, E1, E0 as intervals: the bounds the tail proof states at that depth."""
    x, ell = Fraction(1, n), log_bounds(Fraction(n))
    dc = (ell * A + coeffs["C"]) * x + (coeffs["E2"] * ell * ell + coeffs["E1"] * ell + coeffs["E0"]) * (x * x)
    R = (ell + 1) ** 3 * (K * x**3)
    return dc - R, dc + R


def tail_side(e: Ends, coeffs: dict, K: Fraction, n0: int, log_n0: Interval):
    """``"below"`` when α_T < α* for every n ≥ n0 is proved, ``"above"`` when α_T > α* is, else None.

    n·δ = A ℓ + C + x(E₂ℓ² + E₁ℓ + E₀) ± K x²(1 + ℓ)³ (ℓ = log n, x = 1/n); for n ≥ n0 ≥ 9 the
    terms x ℓ^j (j ≤ 2) and x²(1 + ℓ)³ decrease in n (log n > 2), so they are at most their value
    at n0, while A ℓ moves with the sign of A."""
    if n0 < 9:
        return None
    x0, l0 = Fraction(1, n0), log_n0
    rest = Interval(0)
    for E, j in ((coeffs["E2"], 2), (coeffs["E1"], 1), (coeffs["E0"], 0)):
        m = max(abs(E.lo), abs(E.hi))
        rest = rest + Interval(0, m * x0) * Interval(0, l0.hi ** j)
    rest = rest + Interval(0, K * x0 * x0 * (1 + l0.hi) ** 3)
    C = coeffs["C"]
    low = C.lo + e.A * l0.lo - rest.hi
    high = C.hi + e.A * l0.lo + rest.hi
    if e.A >= 0 and low > 0:
        return "below"
    if e.A <= 0 and high < 0:
        return "above"
    return None


# ---------------------------------------------------------------------------------------------
# the statement, and the check of an all-depth certificate
# ---------------------------------------------------------------------------------------------

MIN_T0 = 5
"""Smallest T₀: n₀ = 2T₀ − 1 ≥ 9, where the terms of ``tail_side`` decrease in n."""
MAX_T0 = 1000
"""Largest T₀ checked (the finite part is T₀ − 1 certificates of degree up to 2T₀ − 3)."""

SIDES = ("below", "above")


def side_of(lo: Fraction, hi: Fraction, alpha_star: Fraction):
    """``"below"`` when the enclosure (lo, hi) of α_T is below α*, ``"above"`` when above, else None."""
    return "below" if hi <= alpha_star else "above" if lo >= alpha_star else None


def statement(sides: list, tail: str | None, T0: int) -> str:
    """What an all-depth certificate proves about the side of α* that α_T is on: ``sides[T − 1]`` for
    T < T₀ (from the finite enclosures), ``tail`` for every T ≥ T₀."""
    words = {"below": "α_T < α*", "above": "α_T > α*", None: "the side is not decided"}
    runs: list[list] = []
    for T, side in enumerate(list(sides) + [tail], start=1):
        if runs and runs[-1][2] == side:
            runs[-1][1] = T
        else:
            runs.append([T, T, side])
    if len(runs) == 1 and tail is not None:
        return f"{words[tail]} for every T ≥ 1"
    parts = []
    for first, last, side in runs:
        if last == T0 and side == tail:
            parts.append(f"{words[side]} for every T ≥ {first}")
        elif first == last:
            parts.append(f"{words[side]} at T = {first}")
        else:
            parts.append(f"{words[side]} for {first} ≤ T ≤ {last}")
    return "; ".join(parts)


def _rat(text, what: str) -> Fraction:
    if not isinstance(text, str):
        raise TailError(f"{what} must be a rational written as a string, got {text!r}")
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise TailError(f"{what} = {text!r} is not a rational") from None


def coefficient_intervals(polys: dict, lam: Interval) -> dict:
    return {k: p.at(lam) for k, p in polys.items()}


def check_tail(claim: dict, e: Ends) -> list[str]:
    """Every failed step of the tail proof of ``claim`` for the law with end data ``e`` (empty: proved)."""
    reasons: list[str] = []
    T0 = claim["T0"]
    if isinstance(T0, bool) or not isinstance(T0, int) or not MIN_T0 <= T0 <= MAX_T0:
        return [f"T0 must be an integer from {MIN_T0} to {MAX_T0}, got {T0!r}"]
    n0 = 2 * T0 - 1
    if _rat(claim["alpha_star"], "alpha_star") != e.alpha_star:
        reasons.append(f"α* is 2/(2 + a + b) = {e.alpha_star}, not the recorded {claim['alpha_star']}")
    ends_rec = claim["ends"]
    for key, value in (("a", e.a), ("b", e.b), ("A", e.A), ("kappa0", e.kappa0)):
        if _rat(ends_rec[key], key) != value:
            reasons.append(f"the end datum {key} is {value}, not the recorded {ends_rec[key]}")
    for key, value in (("nu_a", e.nu_a), ("nu_b", e.nu_b)):
        if ends_rec[key] != value:
            reasons.append(f"the end exponent {key} is {value}, not the recorded {ends_rec[key]!r}")
    ratio = e.lambda_ratio()
    if _rat(claim["lambda_ratio"], "lambda_ratio") != ratio:
        reasons.append(f"λ = log(B_b(0,0)/B_a(0,0)) is log({ratio}), not log({claim['lambda_ratio']})")
    polys = {k: LambdaPoly.from_json(claim[k]) for k in ("C", "E2", "E1", "E0")}
    residue = origin_residue(e, polys["C"], polys["E2"], polys["E1"], polys["E0"])
    for (i, j), value in residue.items():
        if not value.is_zero():
            reasons.append(f"F's Taylor coefficient of x^{i}·u^{j} at the origin is {value}, not 0: δ_c is not the "
                           "expansion to second order (a term missing or wrong), so no (x + u)³ remainder can hold")
    K = _rat(claim["K"], "K")
    if not K > 0:
        reasons.append(f"K = {K} is not > 0")
    x0, u0 = _rat(claim["x0"], "x0"), _rat(claim["u0"], "u0")
    log_n0 = log_bounds(Fraction(n0))
    if x0 != Fraction(1, n0):
        reasons.append(f"x0 must be 1/n0 = 1/{n0}, got {x0}")
    if not u0 * n0 >= log_n0.hi:
        reasons.append(f"u0 = {u0} is not proved ≥ log(n0)/n0 (log {n0} ≤ {float(log_n0.hi):.17g})")
    if reasons or not K > 0:
        return reasons
    lam = log_bounds(ratio)
    coeffs = coefficient_intervals(polys, lam)
    for sign, what in ((-1, "δ_c − K(x+u)³: F > 0"), (1, "δ_c + K(x+u)³: F < 0")):
        try:
            cubic = box_cubic(e, coeffs, K, sign, x0, u0)
        except TailError as err:
            reasons.append(f"the box [0, x0] × [0, u0] of T0 = {T0} leaves the region where the end form holds ({err}): "
                           "take a larger T0")
            return reasons
        if not cubic_sign_ok(cubic, sign):
            shown = ", ".join(f"c{i}{j} ∈ {c}" for (i, j), c in cubic.items())
            reasons.append(f"at {what} the third-order coefficients over the box of T0 = {T0} do not all have the sign "
                           f"the proof needs ({shown}): take a larger K or T0")
    side = claim["tail_side"]
    if side is not None:
        proved = tail_side(e, coeffs, K, n0, log_n0)
        if side not in SIDES or proved != side:
            reasons.append(f"the tail side {side!r} is not proved (the bounds give {proved!r}) for T ≥ {T0}")
    return reasons
