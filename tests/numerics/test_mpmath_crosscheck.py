"""α_T in float64 (``alpha_T``: log-scaled graded Gauss rules, Brent) against two references, on
asymmetric and atomic laws and at depths up to 10⁴ (mmicl.testing: ``asymmetric_scalar_laws``).

1. **The exact derivative.**  dL/dα = 2T·E[ζ²]·D(α) with D(α) = E[s r^{2T−1}], r = α(1+s) − 1.
   For a law made of Beta pieces and atoms D needs no quadrature: atoms are sums, and for a Beta
   piece s = a + (b − a)X, X ~ Beta(p, q), the moments I_k = E[r^k] follow from the Stein identity
   of the Beta law, E[(p − (p+q)X) g(X)] + E[X(1 − X) g′(X)] = 0, with g = r^k:

       (p + q + k) I_{k+1} = (p R1 + q R0 + k(R0 + R1)) I_k − k R0 R1 I_{k−1},
       I_0 = 1,  I_1 = (q R0 + p R1)/(p + q),   R0 = α(1+a) − 1,  R1 = α(1+b) − 1,

   and E[s r^n] = (I_{n+1} + I_n)/α − I_n (since s = (r + 1)/α − 1).  It is run in Python's
   ``decimal`` at 50 digits (exponents unbounded: I_k ~ 10^{−5000} at T = 10⁴).  Its two
   solutions behave like R0^k and R1^k, the moments are a mix of both, so the forward recurrence
   loses no more than ~k·10⁻⁵⁰ relative to the larger end (checked below against 80 digits and
   closed forms).  D is increasing (the loss is convex), so the true α_T lies within ``tol`` of
   float64's iff D(α − tol) < 0 < D(α + tol).

2. **``alpha_T_mp``**: 30-digit mpmath (tanh-sinh on the graded pieces, secant root finder).

``float64_tolerance`` is where the float64 path's accuracy comes from.
"""
from __future__ import annotations

import decimal
from decimal import Decimal

import mpmath as mp
import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from mmicl.numerics import lca
from mmicl.numerics.laws.scalar import Beta, Discrete, Mixture, Point, Uniform
from mmicl.numerics.laws.task import TaskLaw
from mmicl.testing import (asymmetric_scalar_laws, atoms_at_zero, beta_laws, discrete_laws, has_signal, intervals,
                          mixtures, positive_atoms, positive_norms, zero_atom_mixtures)

EPS = np.finfo(float).eps
U = EPS / 2
BRENT_XTOL, BRENT_RTOL = 1e-16, 4 * EPS  # the arguments alpha_T passes to scipy's brentq


JACOBI_WEIGHT_RTOL = 5e-12
"""How far a weight of the Gauss–Jacobi end pieces of the Beta rules may be from the true Gauss
weight, relative to it.  The rule takes them from ``scipy.special.roots_jacobi(30, ·, ·)``, whose
weight at the node nearest the weighted end is off by up to 2.6e-12 (exponent −0.52, measured
against mpmath's 40-digit Gauss–Jacobi over the exponents p − 1, q − 1 in [−0.7, 3] that the
strategies draw; checked below); the other weights are good to ~1e-15.  A rule made of atoms has
exact weights."""


def _has_beta_piece(law) -> bool:
    return any(kind == "beta" for kind, _, _ in _pieces(law, Decimal(1)))


def float64_tolerance(s, T: int, alpha: float) -> float:
    """How far float64's α_T may be from the true minimiser, for the law ``s`` of ‖m‖² at depth T.

    Let n = 2T − 1, [s_lo, s_hi] the support over m ≠ 0 and r_max = max |α(1+s) − 1| on it.  The
    derivative D′(α) = n·E[s(1+s)r^{n−1}] ≥ n(1+s_lo)/r_max · E[s|r|^n], so an error δD in D that is
    ρ·E[s|r|^n] moves the root by at most ρ·r_max/(n(1+s_lo)).

    * Brent: scipy's brentq returns x0 with |x0 − x| ≤ xtol + rtol·|x0| for the root x of the
      function it is given: 1e-16 + 4·eps·α.
    * Rounding of that function (the log-scaled sum of ``lca._one_parameter_sums``): r = α(1+s) − 1
      is computed to ~4u absolutely, so each term A·e^{n(log|r| − ℓ_max)} is off by a relative
      ε_k ≈ 4nu/|r_k| (+ u·|exponent|, which matters only for negligible terms), and the nodes s are
      rounded to u relative (an α-shift of ≤ u·α).  By the bound above the root moves by
      ≲ 4u·|r_k|/|r_k| + uα ≈ 5u.  8u is allowed.
    * Quadrature weights: a relative error ρ of each weight gives |δD| ≤ ρ·E[s|r|^n]: a shift of
      at most JACOBI_WEIGHT_RTOL·r_max/(n(1+s_lo)) where the law has a Beta piece, 0 for atoms.
      The nodes and the rest of the rule are exact for these integrands to rounding.
    About 1.3e-15 at α ≈ 0.4 for atoms; up to ~2e-12 at T = 1 and ~1e-15 at T = 1000 for Beta
    pieces."""
    lo, hi = s.signal_support()
    r_max = max(abs(1 - alpha * (1 + lo)), abs(alpha * (1 + hi) - 1))
    quadrature = JACOBI_WEIGHT_RTOL * r_max / ((2 * T - 1) * (1 + lo)) if _has_beta_piece(s) else 0.0
    return BRENT_XTOL + BRENT_RTOL * abs(alpha) + 8 * U + quadrature


MP_TOLERANCE = 1e-25
"""``alpha_T_mp``'s own accuracy as documented: 30-digit arithmetic, mpmath's secant method to
~2^10·10⁻³⁰ in α, and the derivative scaled to O(1/T) before the root finder sees it."""

DEPTHS = [1, 2, 10, 100, 1000, 10_000]

# --------------------------------------------------------------------------- the exact reference

CONTEXT = decimal.Context(prec=50, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)


def _pieces(law, weight: Decimal):
    """``(kind, law, weight)`` for the atoms and Beta pieces of a law, weights multiplied exactly."""
    if isinstance(law, Mixture):
        for comp, p in zip(law.components, law.probs):
            yield from _pieces(comp, weight * Decimal(p))
    elif isinstance(law, Discrete):
        for v, p in zip(law.values, law.probs):
            yield "atom", Point(v), weight * Decimal(p)
    elif isinstance(law, Point):
        yield "atom", law, weight
    elif isinstance(law, Beta):
        yield "beta", law, weight
    else:
        raise TypeError(f"no exact reference for {law!r}")


def beta_power_moments(p, q, R0, R1, n: int) -> tuple[Decimal, Decimal]:
    """``(I_n, I_{n+1})`` with I_k = E[r^k], r = R0 + (R1 − R0)X, X ~ Beta(p, q) (Decimal
    arguments, in the current decimal context)."""
    c, S, P = p * R1 + q * R0, R0 + R1, R0 * R1
    prev, cur = Decimal(1), c / (p + q)
    for k in range(1, n + 1):
        prev, cur = cur, ((c + k * S) * cur - k * P * prev) / (p + q + k)
    return prev, cur


def exact_derivative(law, T: int, alpha, context=CONTEXT) -> Decimal:
    """D(α) = E[s r^{2T−1}] (a positive multiple of dL/dα) for a law of atoms and Beta pieces;
    ``alpha`` is a float or a Decimal."""
    n = 2 * T - 1
    with decimal.localcontext(context):
        a = Decimal(alpha)
        total = Decimal(0)
        for kind, piece, w in _pieces(law, Decimal(1)):
            if kind == "atom":
                s = Decimal(piece.c)
                total += w * s * (a * (1 + s) - 1) ** n
            else:
                p, q = Decimal(piece.p), Decimal(piece.q)
                i_n, i_next = beta_power_moments(p, q, a * (1 + Decimal(piece.a)) - 1, a * (1 + Decimal(piece.b)) - 1, n)
                total += w * ((i_next + i_n) / a - i_n)
        return +total


def derivative_scale(law, T: int, alpha) -> Decimal:
    """The largest |s r^{2T−1}| on the support: the size of the two ends' contributions that
    cancel in D near the minimiser, and the scale of the recurrence's rounding."""
    n = 2 * T - 1
    with decimal.localcontext(CONTEXT):
        a = Decimal(alpha)
        sizes = []
        for kind, piece, _ in _pieces(law, Decimal(1)):
            lo, hi = (Decimal(x) for x in piece.support())
            sizes.append(hi * max(abs(a * (1 + lo) - 1), abs(a * (1 + hi) - 1)) ** n)
        return max(sizes)


REFERENCE_RTOL = Decimal("1e-40")
"""The recurrence's error relative to ``derivative_scale`` (measured ~1e-47 at T = 10⁴ against 80
digits, below): a sign of D is trusted only where |D| is above it."""


def exact_root_is_within(law, T: int, alpha: float, tol: float) -> tuple[bool, Decimal, Decimal]:
    """Whether D changes sign on [α − tol, α + tol] (D is increasing), with D at both ends
    relative to ``derivative_scale``.  Fails loudly if a sign is below the reference's rounding."""
    with decimal.localcontext(CONTEXT):
        a, t = Decimal(alpha), Decimal(tol)
        lo, hi = (exact_derivative(law, T, x) / derivative_scale(law, T, x) for x in (a - t, a + t))
    assert min(abs(lo), abs(hi)) > REFERENCE_RTOL, f"the exact reference cannot decide: {lo:.3e}, {hi:.3e}"
    return lo < 0 < hi, lo, hi


def exact_alpha_T(law, T: int, start: float, halvings: int = 80) -> Decimal:
    """α_T by bisection on the exact D, from a bracket of ±1e-9 around ``start`` (for reports)."""
    with decimal.localcontext(CONTEXT):
        lo, hi = Decimal(start) - Decimal("1e-9"), Decimal(start) + Decimal("1e-9")
        assert exact_derivative(law, T, lo) < 0 < exact_derivative(law, T, hi)
        for _ in range(halvings):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if exact_derivative(law, T, mid) < 0 else (lo, mid)
        return (lo + hi) / 2


# --------------------------------------------------------------------------- the reference is right


def test_the_beta_recurrence_gives_the_closed_form_low_moments():
    """I_1 = R0 + (R1 − R0)·p/(p+q) and I_2 from E X² = p(p+1)/((p+q)(p+q+1)), to 45 digits."""
    p, q, R0, R1 = (Decimal(x) for x in ("0.5", "3.25", "-0.6", "0.9"))
    with decimal.localcontext(CONTEXT):
        i1, i2 = beta_power_moments(p, q, R0, R1, 1)
        B = R1 - R0
        m1, m2 = p / (p + q), p * (p + 1) / ((p + q) * (p + q + 1))
        assert abs(i1 - (R0 + B * m1)) < Decimal("1e-45")
        assert abs(i2 - (R0 * R0 + 2 * R0 * B * m1 + B * B * m2)) < Decimal("1e-45")


def test_the_exact_derivative_on_a_uniform_law_is_the_antiderivative():
    """On U(a, b), E[s r^n] = ∫ s r^n ds/(b − a) has the closed antiderivative
    (r^{n+2}/(n+2) + r^{n+1}/(n+1))/α² − r^{n+1}/((n+1)α) in r; at T = 1000, 45 digits."""
    a, b, T, alpha = 0.5, 4.0, 1000, 0.3076
    n = 2 * T - 1
    with decimal.localcontext(CONTEXT):
        al = Decimal(alpha)

        def F(r):
            return (r ** (n + 2) / (n + 2) + r ** (n + 1) / (n + 1)) / al**2 - r ** (n + 1) / (n + 1) / al

        want = (F(al * (1 + Decimal(b)) - 1) - F(al * (1 + Decimal(a)) - 1)) / (Decimal(b) - Decimal(a))
        got = exact_derivative(Uniform(a, b), T, alpha)
        assert abs(got / want - 1) < Decimal("1e-45")


def test_the_exact_derivative_is_stable_at_depth_ten_thousand():
    """The recurrence at 50 and at 80 digits agrees to REFERENCE_RTOL of ``derivative_scale`` on a
    Beta law with a singular end (p = 0.5) at T = 10⁴, at the minimiser, where D is a cancellation
    of the two ends (D itself keeps ~37 of the 50 digits there)."""
    law, T = Beta(0.5, 2.0, 0.2, 3.0), 10_000
    wide = decimal.Context(prec=80, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN)
    a = 0.3846866369720187
    d50, d80 = exact_derivative(law, T, a), exact_derivative(law, T, a, wide)
    with decimal.localcontext(wide):
        assert abs(d50 - d80) / derivative_scale(law, T, a) < REFERENCE_RTOL / 1000


@pytest.mark.parametrize("a, b", [(0.0, -0.7), (0.0, -0.515625), (0.0, 0.5), (0.0, 3.0), (-0.6, 0.0), (1.5, 0.0)])
def test_scipy_gauss_jacobi_weights_are_within_the_allowed_error(a, b):
    """The source of JACOBI_WEIGHT_RTOL: the 30-point Gauss–Jacobi rule for (1 − x)^a (1 + x)^b from
    ``scipy.special.roots_jacobi`` (what the Beta rules use), normalised to mass 1, against
    mpmath's at 40 digits: nodes to 4 ulps, weights to JACOBI_WEIGHT_RTOL relative."""
    from scipy import special

    x, w = special.roots_jacobi(30, a, b)
    with mp.workdps(40):
        X, W = mp.gauss_quadrature(30, "jacobi", mp.mpf(a), mp.mpf(b))
        pairs = sorted((X[k], W[k]) for k in range(30))
        total = mp.fsum(v for _, v in pairs)
        want_x = np.array([float(v) for v, _ in pairs])
        want_w = np.array([float(v / total) for _, v in pairs])
    order = np.argsort(x)
    np.testing.assert_allclose(x[order], want_x, rtol=0, atol=4 * U)
    np.testing.assert_allclose(w[order] / w.sum(), want_w, rtol=JACOBI_WEIGHT_RTOL, atol=0)


# --------------------------------------------------------------------------- float64 against the exact root

exact_laws = asymmetric_scalar_laws.filter(has_signal)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(exact_laws, st.sampled_from(DEPTHS))
def test_float64_alpha_T_is_the_exact_minimiser_to_its_rounding(s, T):
    """On asymmetric laws (Beta pieces with p ≠ q, atoms with unequal weights, mixtures with atoms,
    an atom at 0 next to a continuous part) and depths 1 to 10⁴, the true α_T lies within
    ``float64_tolerance`` of float64's α_T."""
    alpha = lca.alpha_T(TaskLaw(s=s), T)
    ok, lo, hi = exact_root_is_within(s, T, alpha, float64_tolerance(s, T, alpha))
    assert ok, f"D(α ∓ tol) = {lo:.3e}, {hi:.3e}"


EXACT_CASES = [
    ("s=beta(0.5,2,0.2,3)", 1000),
    ("s=beta(3,0.7,0.5,2)", 1000),
    ("s=mix(0.5*point(0),0.5*beta(0.6,2.5,0,2))", 1000),
    ("s=beta(2,5,0,1.5)", 100),
    ("s=mix(0.3*point(0),0.7*uniform(1,3))", 10_000),
]


@pytest.mark.parametrize("text, T", EXACT_CASES)
def test_float64_alpha_T_on_named_laws_is_the_exact_minimiser(text, T):
    """Named laws where the exact minimiser is known in closed form or to many digits."""
    from mmicl.numerics.laws.language import parse_law

    law = parse_law(text)
    alpha = lca.alpha_T(law, T)
    assert exact_root_is_within(law.s, T, alpha, float64_tolerance(law.s, T, alpha))[0]


# --------------------------------------------------------------------------- mpmath against float64

atomic_laws = st.one_of(
    discrete_laws(unequal=True),
    mixtures(st.one_of(positive_atoms, atoms_at_zero, discrete_laws(unequal=True)), unequal=True),
).filter(has_signal)
"""Laws of atoms only (some at 0, unequal weights): mpmath's expectation is an exact sum."""


@given(atomic_laws, st.sampled_from(DEPTHS))
def test_mpmath_and_float64_agree_on_atomic_laws(s, T):
    """On atoms with unequal weights (some at 0), ``alpha_T_mp`` (30 digits, exact sums) and
    ``alpha_T`` agree to float64's tolerance plus mpmath's, at depths 1 to 10⁴."""
    law = TaskLaw(s=s)
    a64 = lca.alpha_T(law, T)
    amp = lca.alpha_T_mp(law, T, dps=30)
    assert abs(float(amp) - a64) <= float64_tolerance(law.s, T, a64) + MP_TOLERANCE


def test_mpmath_and_float64_agree_on_a_smooth_asymmetric_beta_at_depth_100():
    """s ~ 1.5·Beta(2, 5), T = 100: float64 is within 4e-17 of the exact minimiser (test above).
    ``alpha_T_mp`` was 2.65e-12 away from it while its integrand was left unscaled (mpmath.quad's
    stopping test is absolute, 10^-30, and the integrand was ~10^-97, so every piece stopped at
    degree 2); with the scale divided out inside the integrand it agrees."""
    law, T = TaskLaw(s=Beta(2.0, 5.0, 0.0, 1.5)), 100
    a64 = lca.alpha_T(law, T)
    assert abs(float(lca.alpha_T_mp(law, T)) - a64) <= float64_tolerance(law.s, T, a64) + MP_TOLERANCE


continuous_asymmetric_laws = st.one_of(
    beta_laws(asymmetric=True),
    mixtures(st.one_of(beta_laws(asymmetric=True), positive_atoms), unequal=True),
    zero_atom_mixtures(beta_laws(intervals(positive_norms), asymmetric=True)),
).filter(lambda law: any(isinstance(c, Beta) for c in getattr(law, "components", (law,))))


@pytest.mark.slow
@settings(max_examples=10, phases=[Phase.explicit, Phase.generate], suppress_health_check=[HealthCheck.too_slow])
@given(continuous_asymmetric_laws, st.sampled_from([1, 3, 1000, 10_000]))
def test_mpmath_and_float64_agree_on_asymmetric_laws_with_a_continuous_part(s, T):
    """Beta pieces with p ≠ q (alone, mixed with atoms, beside an atom at 0): ``alpha_T_mp`` and
    ``alpha_T`` agree to float64's tolerance plus mpmath's.  Each mpmath call takes seconds, so
    this is slow, and it does not shrink."""
    law = TaskLaw(s=s)
    a64 = lca.alpha_T(law, T)
    assert abs(float(lca.alpha_T_mp(law, T, dps=30)) - a64) <= float64_tolerance(law.s, T, a64) + MP_TOLERANCE
