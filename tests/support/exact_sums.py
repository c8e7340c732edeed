"""Exact sums for α_T on laws of atoms and polynomial densities (50-digit mpmath, no quadrature).

With r = α(1 + s) − 1 linear in s, a polynomial density P(s) on [a, b] gives ∫ s·P(s)·r^n ds = Σ_k q_k
[r^{n+k+1}/(n+k+1)]/α between the ends, q_k the coefficients of s·P(s) in powers of r; an atom of mass
p at s gives p·s·r^n.  A *piece* is ``("atom", mass, value)`` or the ``("poly", …)`` of ``poly_piece``.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import sympy as sp

__all__ = ["poly_piece", "uniform_piece", "beta_piece", "stationarity_sum", "exact_alpha_T"]

s = sp.Symbol("s")


def poly_piece(weight: Fraction, density: sp.Expr, a: Fraction, b: Fraction):
    return ("poly", weight, sp.Poly(sp.expand(s * density), s), a, b)


def uniform_piece(a, b, weight=Fraction(1)):
    return poly_piece(weight, sp.Integer(1) / sp.Rational(b - a), a, b)


def beta_piece(p, q, a, b, weight=Fraction(1)):
    A, B = sp.Rational(a), sp.Rational(b)
    beta = sp.gamma(p) * sp.gamma(q) / sp.gamma(p + q)
    return poly_piece(weight, (s - A) ** (p - 1) * (B - s) ** (q - 1) / (beta * (B - A) ** (p + q - 1)), a, b)


def stationarity_sum(pieces, alpha, n):
    """E[s·r^n], r = α(1 + s) − 1, exactly (mpmath at the working precision)."""
    total = mp.mpf(0)
    for piece in pieces:
        if piece[0] == "atom":
            _, p, x = piece
            x = mp.mpf(x.numerator) / x.denominator
            total += mp.mpf(p.numerator) / p.denominator * x * (alpha * (1 + x) - 1) ** n
            continue
        _, weight, poly, a, b = piece
        c = [mp.mpf(sp.Rational(v).p) / sp.Rational(v).q for v in poly.all_coeffs()[::-1]]   # of s^j
        q = [mp.mpf(0)] * len(c)
        for j, cj in enumerate(c):            # s = (r + 1 − α)/α
            for k in range(j + 1):
                q[k] += cj * mp.binomial(j, k) * (1 - alpha) ** (j - k) / alpha**j
        lo = alpha * (1 + mp.mpf(a.numerator) / a.denominator) - 1
        hi = alpha * (1 + mp.mpf(b.numerator) / b.denominator) - 1
        part = sum(qk * (hi ** (n + k + 1) - lo ** (n + k + 1)) / (n + k + 1) for k, qk in enumerate(q)) / alpha
        total += mp.mpf(weight.numerator) / weight.denominator * part
    return total


def exact_alpha_T(pieces, T: int, guess: float) -> mp.mpf:
    n = 2 * T - 1
    g = mp.mpf(guess)
    scale = abs(stationarity_sum(pieces, g * (1 + mp.mpf(10) ** -3 / T), n))
    return mp.findroot(lambda x: stationarity_sum(pieces, x, n) / scale, (g * (1 - mp.mpf(10) ** -9), g * (1 + mp.mpf(10) ** -9)),
                       solver="anderson", tol=mp.mpf(10) ** -45)
