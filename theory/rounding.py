"""Running rounding-error bounds of compiled expressions, derived symbolically.

For an expression evaluated in floating point with unit roundoff ``u`` (``2⁻⁵³`` for float64),
every operation returns its exact result times ``(1 + δ)``, ``|δ| ≤ u`` (the standard model).
Given bounds ``e_x`` on the errors of the inputs, a bound on the error of the result follows node by
node down the expression tree (a running error analysis in the manner of Wilkinson), written with
the computed magnitudes ``|â|`` of the sub-expressions:

- ``a₁ + … + a_n`` (n − 1 additions, any order): ``Σ e_{a_i} + u·|Σ a_i| + (n − 2)·u·Σ |a_i|``
  (the last addition rounds the result; each earlier partial sum is at most ``Σ |a_i|``);
- ``a₁ · … · a_n``: ``Π(|â_i| + e_i) − Π|â_i|`` (expanded into its non-negative terms, one per
  non-empty set of factors taken at their error) ``+ γ_{n−1}·Π|â_i|``, ``γ_k = ku/(1 − ku)``;
- ``a^k``, k a positive integer: ``(|â| + e)^k − |â|^k`` (binomially expanded) ``+ 2u·|â^k|``
  (``pow`` is within one ulp);
- ``a^{−k}``: ``k·e/(|â| − e)^{k+1} + 2u·|â^{−k}|`` (the mean value theorem on ``[|â| − e, |â|]``;
  only for denominators bounded away from 0, such as ``1 + s``);
- an integer or a symbol with no error given: exact.

Each rounding also adds ``UNDERFLOW`` (a result in the subnormal range is rounded by an absolute
amount, not a relative one).  No term is dropped: the product of two errors is kept, so a computed value of 0 (``λP − 1`` when
λP rounds to 1) still carries the error of its inputs.  Every term is ``≥ 0``, so the bound
itself evaluates in floating point to a relative accuracy of a few ``u``.  It does not depend on the
order in which additions and multiplications are carried out, so it holds for the source that
``theory.compile`` prints after eliminating common subexpressions.
"""
from __future__ import annotations

import itertools
from typing import Mapping

import sympy as sp

__all__ = ["UNDERFLOW", "UNIT_ROUNDOFF", "affine_error_step", "running_error"]

UNIT_ROUNDOFF = sp.Rational(1, 2**53)
"""``u`` of IEEE float64 with rounding to nearest."""

UNDERFLOW = sp.Rational(1, 2**1074)
"""float64's smallest subnormal: a result in the subnormal range is rounded by up to half of it,
whatever its size (there the standard model's relative ``u`` does not hold)."""


def running_error(expr: sp.Expr, errors: Mapping[sp.Symbol, sp.Expr], u: sp.Expr = UNIT_ROUNDOFF) -> sp.Expr:
    """A first-order bound on ``|fl(expr) − expr|`` when each symbol ``x`` of ``errors`` carries an
    input error at most ``errors[x]`` and every operation rounds (see the module docstring).

    The result is an expression in the symbols of ``expr`` (through ``Abs``) and of ``errors``."""
    return _error(sp.sympify(expr), errors, u)[1]


def _gamma(k: int, u: sp.Expr) -> sp.Expr:
    return k * u / (1 - k * u)


def _error(e: sp.Expr, errors, u) -> tuple[sp.Expr, sp.Expr]:
    """``(|ê|, bound)``."""
    if e.is_Integer:
        return sp.Abs(e), sp.Integer(0)
    if e.is_Number:  # a rational or float constant: rounded once when the source is read
        return sp.Abs(e), u * sp.Abs(e) + UNDERFLOW
    if e.is_Symbol:
        return sp.Abs(e), sp.sympify(errors.get(e, 0))
    if e.is_Add:
        parts = [_error(a, errors, u) for a in e.args]
        total = sum((b for _, b in parts), sp.Integer(0)) + u * sp.Abs(e) + (len(parts) - 1) * UNDERFLOW
        if len(parts) > 2:
            total += (len(parts) - 2) * u * sum((m for m, _ in parts), sp.Integer(0))
        return sp.Abs(e), total
    if e.is_Mul:
        parts = [_error(a, errors, u) for a in e.args]
        total = sp.Integer(0)
        for chosen in itertools.product((False, True), repeat=len(parts)):
            if not any(chosen) or any(c and b == 0 for c, (_, b) in zip(chosen, parts)):
                continue
            total += sp.Mul(*[b if c else m for c, (m, b) in zip(chosen, parts)])
        magnitude = sp.Mul(*[m for m, _ in parts])
        return magnitude, total + _gamma(len(parts) - 1, u) * magnitude + (len(parts) - 1) * UNDERFLOW
    if e.is_Pow and e.exp.is_Integer:
        k = int(e.exp)
        mag, b = _error(e.base, errors, u)
        if b == 0:
            spread = sp.Integer(0)
        elif k > 0:
            spread = sum((sp.binomial(k, j) * mag ** (k - j) * b**j for j in range(1, k + 1)), sp.Integer(0))
        else:
            spread = -k * b / (mag - b) ** (1 - k)
        return mag**k, spread + 2 * u * mag**k + UNDERFLOW
    raise ValueError(f"running_error: no rounding model for {e} (in + − × / and integer powers only)")


def affine_error_step(bound: sp.Expr, error: sp.Symbol, value: sp.Symbol, new_value: sp.Expr):
    """``(A, B, C, D)`` with ``bound = A·error + B·|value| + C + D·|new_value|``, each free of
    ``error``, ``value`` and ``new_value``, for the running bound of a step ``value ↦ new_value``
    that is affine in ``value`` (the scalar recurrence of a quadrature node, whose coefficients do
    not change from layer to layer: computed once, the bound then costs a few operations a layer).
    Raises if ``bound`` is not of that form."""
    m, n = sp.Dummy("m", nonnegative=True), sp.Dummy("n", nonnegative=True)
    e = sp.expand(bound.subs(sp.Abs(new_value), n).subs(sp.Abs(value), m))
    A, B, D = (e.coeff(x) for x in (error, m, n))
    C = sp.expand(e - A * error - B * m - D * n)
    for c in (A, B, C, D):
        if c.has(error, m, n, value):
            raise ValueError(f"the bound {bound} is not affine in ({error}, |{value}|, |{new_value}|)")
    return A, B, C, D
