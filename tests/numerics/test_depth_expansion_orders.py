"""The second and third orders of α* − α_T (theory/asymptotics.py ``end_expansion``, ``local_rules``;
numerics/asymptotics.py), against α_T found from *exact* sums at 50 digits.

For a law made of atoms and polynomial densities the stationarity condition is an exact finite sum:
with r = α(1 + s) − 1 linear in s, a polynomial density P(s) on [a, b] gives ∫ s·P(s)·r^n ds = Σ_k q_k
[r^{n+k+1}/(n+k+1)]/α between the ends, q_k the coefficients of s·P(s) in powers of r; an atom of mass
p at s gives p·s·r^n.  No quadrature, no float64: the root is found in mpmath at 50 digits.  What is
asserted is what the derivation says of every such law: after the first two orders the remainder is
the derived third order, to within the next order's share (log T/T of it), so it falls like log³T/T³.
"""
from __future__ import annotations

from fractions import Fraction

import mpmath as mp
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exact_sums import beta_piece, exact_alpha_T, uniform_piece
from mmicl.numerics import asymptotics as asy
from mmicl.theory import asymptotics as th

def _text(x: Fraction) -> str:
    return format(float(x), ".17g")


@st.composite
def exact_laws(draw):
    """(LAW text, pieces) of every end class: densities finite at both ends, Beta ends of integer
    exponents (equal or not: the log form), two atoms, an atom with a density at the same end (a
    gap of 1: C₁ takes the density), an atom at one end and a density at the other (the log form),
    and a density reaching s = 0 (the weight vanishes there)."""
    grid = st.integers(1, 12).map(lambda k: Fraction(k, 4))
    a = draw(st.integers(0, 8).map(lambda k: Fraction(k, 4)))
    b = a + draw(grid)
    w = draw(st.integers(1, 9).map(lambda k: Fraction(k, 10)))
    kind = draw(st.sampled_from(["uniform", "beta", "twopoint", "atom_and_density", "atom_then_density"]))
    if kind in ("twopoint", "atom_and_density", "atom_then_density") and a == 0:
        a, b = Fraction(1, 4), b + Fraction(1, 4)       # an atom at s = 0 carries no weight
    if kind == "uniform":
        return f"s=uniform({_text(a)},{_text(b)})", [uniform_piece(a, b)]
    if kind == "beta":
        p, q = draw(st.integers(1, 3)), draw(st.integers(1, 3))
        return f"s=beta({p},{q},{_text(a)},{_text(b)})", [beta_piece(p, q, a, b)]
    if kind == "twopoint":
        return f"s=twopoint({_text(a)},{_text(b)},{_text(w)})", [("atom", w, a), ("atom", 1 - w, b)]
    if kind == "atom_and_density":
        return (f"s=mix({_text(w)}*point({_text(a)}),{_text(1 - w)}*uniform({_text(a)},{_text(b)}))",
                [("atom", w, a), uniform_piece(a, b, 1 - w)])
    c = a + (b - a) / 2
    return (f"s=mix({_text(w)}*point({_text(a)}),{_text(1 - w)}*uniform({_text(c)},{_text(b)}))",
            [("atom", w, a), uniform_piece(c, b, 1 - w)])


def _remainders(law: str, pieces, Ts) -> list[tuple[int, float, float, float]]:
    """Per T: the exact remainder after two orders, the derived third order, and the third order's
    size (its monomials in absolute value)."""
    ex = asy.alpha_expansion(law)
    out = []
    with mp.workdps(50):
        a_star = 2 / (2 + mp.mpf(ex.lo.value) + mp.mpf(ex.hi.value))
        for T in Ts:
            exact = a_star - exact_alpha_T(pieces, T, ex.alpha_T(T))
            rem = exact - mp.mpf(ex.term(T, 1)) - mp.mpf(ex.term(T, 2))
            out.append((T, float(rem), ex.term(T, 3), asy._term_size(ex, T, 3)))
    return out


def _allowance(law: str, T: int, size: float) -> float:
    """What may separate the exact remainder from the derived third order at T: the fourth order, log T/T
    of the third's size (20 × that, for its own constant); the float64 evaluation of the first two
    terms, 1e-15 of the first; and the coefficients' own rounding (30 digits, with cancellation: 1e-25
    per unit of 1/T), which alone remains where the law makes every order vanish."""
    first = abs(asy.alpha_expansion(law).term(T, 1))
    return 20 * size * float(mp.log(T)) / T + 1e-15 * first + 1e-25 / T


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(exact_laws())
def test_after_two_orders_the_remainder_is_the_derived_third_order(case):
    law, pieces = case
    for T, rem, third, size in _remainders(law, pieces, (10**3, 10**4)):
        assert abs(rem - third) <= _allowance(law, T, size), (law, T, rem, third, size)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(exact_laws())
def test_after_two_orders_the_remainder_is_the_derived_third_order_at_more_laws_and_depths(case):
    law, pieces = case
    for T, rem, third, size in _remainders(law, pieces, (10**3, 10**4, 10**5)):
        assert abs(rem - third) <= _allowance(law, T, size), (law, T, rem, third, size)


ONE_OF_EACH = [
    ("s=uniform(0.5,4)", [uniform_piece(Fraction(1, 2), Fraction(4))]),
    ("s=beta(2,3,0,1)", [beta_piece(2, 3, Fraction(0), Fraction(1))]),                      # s = 0 at the bottom
    ("s=beta(3,1,0.5,2)", [beta_piece(3, 1, Fraction(1, 2), Fraction(2))]),                 # the log form
    ("s=twopoint(1,3,0.3)", [("atom", Fraction(3, 10), Fraction(1)), ("atom", Fraction(7, 10), Fraction(3))]),
    ("s=mix(0.25*point(0.5),0.75*uniform(0.5,2))",                                      # an atom on a density
     [("atom", Fraction(1, 4), Fraction(1, 2)), uniform_piece(Fraction(1, 2), Fraction(2), Fraction(3, 4))]),
    ("s=mix(0.4*point(0.5),0.6*uniform(1,2))",                                          # atom, then density
     [("atom", Fraction(2, 5), Fraction(1, 2)), uniform_piece(Fraction(1), Fraction(2), Fraction(3, 5))]),
]


@pytest.mark.parametrize("law, pieces", ONE_OF_EACH, ids=[law for law, _ in ONE_OF_EACH])
def test_one_law_of_each_end_class_leaves_the_derived_third_order_after_two(law, pieces):
    ex = asy.alpha_expansion(law)
    assert ex.second is not None and ex.third is not None
    for T, rem, third, size in _remainders(law, pieces, (10**3, 10**4)):
        assert abs(rem - third) <= _allowance(law, T, size), (law, T, rem, third, size)


def test_with_equal_exponents_no_order_has_a_logarithm():
    """Every log n (and log T) coefficient of ν₀, ν₁, ν₂ and of P₁, P₂, P₃ carries the factor b_hi − b_lo:
    it vanishes on b_hi = b_lo, which numerics.asymptotics relies on to write them as exact zeros."""
    E = th.end_expansion(3)
    same = {th.b_hi: th.b_lo}
    for k, v in enumerate(E.nu):
        for j in range(1, k + 2):
            assert sp.simplify(v.coeff(th.log_n, j).subs(same)) == 0, (k, j)
    for row in E.by_T:
        for c in row[1:]:
            assert sp.simplify(c.subs(same)) == 0


def test_the_beta_2_3_coefficients_agree_with_a_direct_evaluation_of_the_balance():
    """s=beta(2,3,2.25,5.12) (the law of the CEO's independent audit): the first-order coefficients a
    and c, and the second-order P₂, reproduce T·(α* − α_T) from the exact sum at T = 10⁶ to 10⁻¹¹
    (the third order's size there), and a agrees with −α*ρ(b_hi − b_lo)/4."""
    law = "s=beta(2,3,2.25,5.12)"
    ex = asy.alpha_expansion(law)
    assert ex.log_coefficient == pytest.approx(-ex.alpha_star * ex.rho * (3 - 2) / 4, rel=1e-15)
    pieces = [beta_piece(2, 3, Fraction(9, 4), Fraction(128, 25))]
    (T, rem, third, size), = _remainders(law, pieces, (10**6,))
    assert abs(T * rem) <= 2 * T * size < 1e-11
