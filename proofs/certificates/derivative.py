"""The derivative of the one-parameter LCA loss as an exact polynomial in α, for one law and depth.

``theory.lca`` derives the excess risk per ζ² of the one-parameter model at depth T,
``A(s) r^{2T}`` with ``A(s) = s/(1+s)`` and ``r = α(1+s) − 1``, and ``numerics.lca`` factors its
α-derivative as ``A₁(s) r^{2T−1}``.  ``derivative_form`` takes both from the SymPy derivation and
checks that they have the shape evaluated here, ``A₁(s) = κ(T)·s`` and ``r = ε(α(1+s) − 1)``
(``κ(T) = 2T``, ``ε = 1``); so, with ζ ⊥ s and ``N = 2T − 1``,

    D(α) = dL/dα = κ(T) ε^N E[ζ²] · P(α),      P(α) = E[s (α t − 1)^N],   t = 1 + s.

``P`` is a polynomial of degree N in α whose coefficients are finitely many moments of t:

    P(α) = Σ_k C(N, k) (−1)^{N−k} α^k E[s t^k],     E[s t^k] = M_{k+1} − M_k,   M_j = E[t^j].

The moments come from the exponential generating function ``E[e^{zt}] = Σ_j M_j z^j/j!``,
truncated at degree N + 1 and built from the law's leaves with flint's exact rational polynomials
(``fmpq_poly``): ``e^{cz}`` for an atom c, ``e^{az} E[e^{(b−a)zX}]`` for a Beta piece
(``E[X^j] = Π_{i<j}(p+i)/(p+q+i)``), weighted sums for mixtures and products for ``S_v + S_r``
(independent), and a factor ``e^z`` for the shift t = 1 + s.  Writing the truncated series with its
common denominator, ``Σ_j G_j z^j / Den`` (integers G_j), gives integer coefficients

    P(α) = (1/Den) Σ_k C_k α^k,     C_k = (−1)^{N−k} (N!/(N−k)!) ((k+1) G_{k+1} − G_k),

so a sign of D is the sign of an integer polynomial at a rational point: exact in ``fmpq``, and fast
to bound in arb ball arithmetic (``arb_poly``: every operation returns a ball that contains the exact
result, so a ball that excludes 0 proves the sign).  The cancellation in ``Σ C_k α^k`` is large
(terms of size ``E[s (αt + 1)^N]`` against a value of size ``E[s |αt − 1|^N]``, about 10^{−160} of them
at T = 100 on U(0.5, 4)), which exact arithmetic does not mind and arb handles by working at a
precision that grows until its balls decide.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from .exact_law import Atoms, BetaPiece, ExactScalar, ExactTaskLaw, Mix

__all__ = ["DerivativeForm", "DerivativePolynomial", "derivative_form"]


@dataclass(frozen=True)
class DerivativeForm:
    """``dL/dα = kappa(T) · ε^{2T−1} · E[ζ² s (α(1+s) − 1)^{2T−1}]``, from ``theory.lca``."""

    kappa: object  # a SymPy expression in T (2T)
    epsilon: int  # ±1: the derived base r is ε(α(1+s) − 1)
    derived: str  # the derived derivative per ζ², as SymPy prints it

    def factor(self, T: int) -> int:
        """``κ(T) ε^{2T−1}``: an integer (checked)."""
        from mmicl.theory import lca as th

        k = self.kappa.subs(th.T, T)
        if not k.is_Integer:
            raise RuntimeError(f"κ(T) = {self.kappa} is not an integer at T = {T}")
        return int(k) * self.epsilon ** (2 * T - 1)

    def text(self) -> str:
        return f"dL/dα = {str(self.kappa).replace('*', '·')}·{'' if self.epsilon == 1 else '(−1)^(2T−1)·'}E[ζ²]·E[s·(α(1+s) − 1)^(2T−1)]"


@lru_cache(maxsize=1)
def derivative_form() -> DerivativeForm:
    """The α-derivative of ``theory.lca.one_parameter().excess_per_zeta2``, factored as numerics
    factors it (``depth_factorisation``), and checked to be ``κ(T)·s·(ε(α(1+s) − 1))^{2T−1}``."""
    import sympy as sp
    from mmicl.theory import lca as th
    from mmicl.theory.model import s

    excess = th.one_parameter().excess_per_zeta2
    (base,) = {p.base for p in excess.atoms(sp.Pow) if p.exp == 2 * th.T}
    amp = th.depth_factorisation(sp.diff(excess, th.alpha), base, 2 * th.T - 1)
    kappa = sp.simplify(amp / s)
    linear = th.alpha * (1 + s) - 1
    eps = next((e for e in (1, -1) if sp.expand(base - e * linear) == 0), None)
    if eps is None or kappa.free_symbols - {th.T}:
        raise RuntimeError(f"theory.lca's derivative {amp}·({base})^(2T−1) is not κ(T)·s·(±(α(1+s) − 1))^(2T−1): "
                           "the certificates evaluate that form only")
    return DerivativeForm(kappa, eps, str(amp * base ** (2 * th.T - 1)))


# ---------------------------------------------------------------------------------------------
# exponential generating functions of the moments
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Series:
    """A truncated power series with rational coefficients, kept as ``numer / den`` (an integer
    polynomial over one integer, never reduced: flint's ``fmpq_poly`` would reduce after every
    operation, which costs more than everything else here)."""

    numer: object  # fmpz_poly
    den: object  # fmpz > 0

    def __add__(self, other: _Series) -> _Series:
        return _Series(self.numer * other.den + other.numer * self.den, self.den * other.den)

    def scaled(self, c: Fraction) -> _Series:
        return _Series(self.numer * c.numerator, self.den * c.denominator)

    def times(self, other: _Series, n: int) -> _Series:
        """The product, to degree n."""
        return _Series(self.numer.mul_low(other.numer, n + 1), self.den * other.den)


def _exp_series(c: Fraction, n: int) -> _Series:
    """``e^{cz}`` to degree n: coefficients ``c^j / j!``, over the common denominator ``v^n n!``
    (``c = u/v``): the numerator of coefficient j is ``u^j v^{n−j} n!/j!``."""
    from flint import fmpz, fmpz_poly

    u, v = c.numerator, c.denominator
    x = fmpz(v) ** n * math.factorial(n)
    den, coeffs = x, []
    for j in range(n + 1):
        coeffs.append(x)
        if j < n:
            x = x * u // (v * (j + 1))  # exact: x holds the factors v and j + 1
    return _Series(fmpz_poly(coeffs), den)


def _beta_series(law: BetaPiece, n: int) -> _Series:
    """``E[e^{z(b−a)X}]`` to degree n: coefficients ``E[X^j] w^j / j!``, ``w = b − a``.  With
    ``p = pn/pd``, ``p + q = sn/sd``, ``w = wn/wd``, coefficient j + 1 is coefficient j times
    ``sd(pn + j pd) wn / (pd(sn + j sd) wd (j + 1))``; over the common denominator
    ``Π_{j<n} pd(sn + j sd) wd (j + 1)`` every step is an exact division."""
    from flint import fmpz, fmpz_poly

    p, s, w = law.p, law.p + law.q, law.b - law.a
    up = [s.denominator * (p.numerator + j * p.denominator) * w.numerator for j in range(n)]
    down = [p.denominator * (s.numerator + j * s.denominator) * w.denominator * (j + 1) for j in range(n)]
    x = fmpz(1)
    for d in down:
        x *= d
    den, coeffs = x, []
    for j in range(n + 1):
        coeffs.append(x)
        if j < n:
            x = x * up[j] // down[j]  # exact: x holds the factors down[j..n−1]
    return _Series(fmpz_poly(coeffs), den)


def _uniform_series(t0: Fraction, t1: Fraction, n: int) -> _Series:
    """``E[e^{zt}]`` for t uniform on ``[t0, t1]`` to degree n, from ``(e^{t1 z} − e^{t0 z})/((t1 − t0) z)``:
    coefficient j is ``(t1^{j+1} − t0^{j+1}) / ((t1 − t0)(j + 1)!)``.  With ``t0 = u0/v``, ``t1 = u1/v``
    over the common denominator ``v^n (u1 − u0)(n + 1)!`` its numerator is
    ``(u1^{j+1} − u0^{j+1}) v^{n−j} (n + 1)!/(j + 1)!`` (no series product: the uniform law is the
    common case)."""
    from flint import fmpz, fmpz_poly

    v = math.lcm(t0.denominator, t1.denominator)
    u0, u1 = int(t0 * v), int(t1 * v)
    rest = [fmpz(1)] * (n + 1)  # (n + 1)!/(j + 1)! · v^{n−j}
    for j in range(n - 1, -1, -1):
        rest[j] = rest[j + 1] * (j + 2) * v
    coeffs, p0, p1 = [], fmpz(u0), fmpz(u1)
    for j in range(n + 1):
        coeffs.append((p1 - p0) * rest[j])
        p0, p1 = p0 * u0, p1 * u1
    return _Series(fmpz_poly(coeffs), fmpz(v) ** n * (u1 - u0) * math.factorial(n + 1))


def _egf(law: ExactScalar, n: int, shift: Fraction = Fraction(0)) -> _Series:
    """``E[e^{z(shift + S)}]`` to degree n: ``Σ p_i e^{(shift + v_i) z}`` for atoms, the uniform
    closed form, ``e^{(shift + a) z} E[e^{(b−a)zX}]`` for a Beta piece, the weighted sum for a
    mixture."""
    if isinstance(law, Atoms):
        terms = [_exp_series(shift + v, n).scaled(p) for v, p in zip(law.values, law.probs)]
    elif isinstance(law, BetaPiece):
        if law.p == law.q == 1:
            return _uniform_series(shift + law.a, shift + law.b, n)
        return _exp_series(shift + law.a, n).times(_beta_series(law, n), n)
    else:
        assert isinstance(law, Mix)
        terms = [_egf(part, n, shift).scaled(w) for w, part in zip(law.weights, law.parts) if w]
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def t_moment_series(law: ExactTaskLaw, n: int) -> _Series:
    """``E[e^{zt}]``, ``t = 1 + s``, to degree n: ``Σ_j M_j z^j / j!`` (the shift by 1 goes into the
    first block; ``S_v``, ``S_r`` independent: the product of their series)."""
    (_, first), *rest = law.blocks
    series = _egf(first, n, Fraction(1))
    for _, block in rest:
        series = series.times(_egf(block, n), n)
    return series


# ---------------------------------------------------------------------------------------------
# the polynomial
# ---------------------------------------------------------------------------------------------


class DerivativePolynomial:
    """``D(α) = dL/dα`` of one law at depth T as ``scale · Σ_k C_k α^k`` (integers ``C_k``, rational
    ``scale ≠ 0``); ``exact(x)`` is D at a rational point, ``sign(x)`` its sign, ``ball(x, prec)`` an
    arb ball that contains it."""

    def __init__(self, law: ExactTaskLaw, T: int):
        from flint import fmpq, fmpz, fmpz_poly

        self.T, self.N = T, 2 * T - 1
        N = self.N
        series = t_moment_series(law, N + 1)
        numer, den = series.numer, series.den
        G = [numer[j] for j in range(N + 2)]
        coeffs, falling = [], fmpz(1)  # falling = N!/(N−k)!
        for k in range(N + 1):
            h = (k + 1) * G[k + 1] - G[k]
            coeffs.append(falling * h if (N - k) % 2 == 0 else -falling * h)
            falling *= N - k
        self.coefficients = fmpz_poly(coeffs)
        z2 = law.zeta2()
        self.scale = fmpq(derivative_form().factor(T)) * fmpq(z2.numerator, z2.denominator) / den
        self._arb: dict[int, object] = {}

    def exact(self, x: Fraction) -> Fraction:
        from flint import fmpq, fmpq_poly

        v = fmpq_poly(self.coefficients)(fmpq(x.numerator, x.denominator)) * self.scale
        return Fraction(int(v.p), int(v.q))

    def sign(self, x: Fraction) -> int:
        v = self.exact(x)
        return (v > 0) - (v < 0)

    def log10_abs(self, x: Fraction) -> float | None:
        """``log10 |D(x)|`` (None where D(x) = 0), from the exact value: no float overflow."""
        v = self.exact(x)
        if v == 0:
            return None
        return math.log10(abs(v.numerator)) - math.log10(v.denominator)

    def ball(self, x: Fraction, prec: int):
        """An arb ball containing ``D(x)``, evaluated at ``prec`` bits."""
        from flint import arb, arb_poly, ctx, fmpq

        old = ctx.prec
        ctx.prec = prec
        try:
            if prec not in self._arb:
                self._arb = {prec: (arb_poly(list(self.coefficients.coeffs())),
                                    arb_poly(list(self.coefficients.derivative().coeffs())))}
            poly, _ = self._arb[prec]
            return poly(arb(fmpq(x.numerator, x.denominator))) * arb(self.scale)
        finally:
            ctx.prec = old

    def newton_step(self, x: Fraction, prec: int) -> Fraction | None:
        """The Newton step ``D(x)/D'(x)`` (midpoints at ``prec`` bits, as an exact dyadic rational),
        or None where the balls cannot give one."""
        from flint import arb, ctx, fmpq

        old = ctx.prec
        ctx.prec = prec
        try:
            self.ball(x, prec)  # builds the arb polynomials at this precision
            poly, deriv = self._arb[prec]
            xa = arb(fmpq(x.numerator, x.denominator))
            d, dd = poly(xa), deriv(xa)
            if dd.contains(0) or not d.is_finite() or not dd.is_finite():
                return None
            man, exp = (d / dd).mid().man_exp()
            man, exp = int(man), int(exp)
            return Fraction(man * 2**exp) if exp >= 0 else Fraction(man, 2**-exp)
        finally:
            ctx.prec = old

    def magnitude_bits(self, x: Fraction) -> int:
        """``log2 Σ_k |C_k| |x|^k`` rounded up: the size of the terms that cancel in ``Σ C_k x^k``."""
        lx = math.log2(abs(x)) if x else -math.inf
        top = max(int(c).bit_length() + (k * lx if k else 0) for k, c in enumerate(self.coefficients.coeffs()) if c)
        return math.ceil(top + math.log2(self.N + 1))
