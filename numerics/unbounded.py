"""α_T at a finite depth for a law of s with unbounded support (the exponential law).

The T → ∞ theorems need a bounded support (α* = 2/(2 + s_lo + s_hi) is 0 when s_hi = ∞, and the
limit statements answer ``hypothesis-not-met``), but at every finite T the one-parameter loss
``E[ζ² A(s) r^{2T}]`` (r = α(1+s) − 1, A = s/(1+s)) is finite when E[s^{2T}] < ∞, and it has a
unique minimiser: its derivative in α is ``2T·E[ζ²]·G(α)`` with ``G(α) = E[s·r^{2T−1}]``
(``theory.asymptotics.stationarity_weight``), strictly increasing (G' = (2T−1)E[s(1+s)r^{2T−2}] > 0),
negative at α = 0 (G = −E[s]) and positive at α = 1/(1 + s_lo) (r ≥ 0 there).

For ``s ~ exponential(k)`` every moment is exact, E[s^m] = m!/k^m, so with r = αs − (1 − α)

    G(α) = Σ_{j=0}^{n} C(n, j) α^j (α − 1)^{n−j} (j + 1)!/k^{j+1},     n = 2T − 1,

a polynomial in α whose terms cancel heavily; it is summed in mpmath with enough digits for its
largest term (``_digits``) and the root is found by bisection on (0, 1) (geometric while the
bracket spans more than a factor 2), to a relative width of 10⁻¹⁷.  ``stationarity_quadrature`` computes the same G by mpmath
quadrature of the two one-signed integrals (r < 0, r > 0): an independent route, slower.
"""
from __future__ import annotations

import math

import mpmath as mp

from mmicl.numerics.laws.language import takes_law
from mmicl.numerics.laws.scalar import Exponential, LawError
from mmicl.numerics.laws.task import TaskLaw
from .validate import MAX_DEPTH_UNBOUNDED, check_depth

__all__ = ["stationarity_unbounded", "stationarity_quadrature", "alpha_T_unbounded", "MAX_DEPTH_UNBOUNDED"]

MAX_DEPTH_UNBOUNDED = MAX_DEPTH_UNBOUNDED  # numerics.validate: how it was sized
"""Deepest T served: each evaluation sums 2T terms at up to ~T·log10(T) digits (T = 1000: 7 s)."""


def _rate(law: TaskLaw) -> float:
    sl = law.s_law()
    if not isinstance(sl, Exponential):
        raise LawError(f"finite-depth α_T for an unbounded law is implemented for s = exponential(rate); got "
                       f"{sl.spec()} (a bounded law uses numerics.lca.alpha_T)")
    return sl.rate


def _digits(T: int, alpha, k: float) -> int:
    """Decimal digits to sum G exactly enough: log10 of its largest term, plus 40 of margin."""
    n = 2 * T - 1
    a = float(alpha)
    logs = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * math.log(a)
            + (n - j) * math.log(abs(a - 1)) + math.lgamma(j + 2) - (j + 1) * math.log(k) for j in range(n + 1)]
    return 40 + int(max(logs) / math.log(10)) if a > 0 else 40


@takes_law
def stationarity_unbounded(law: TaskLaw, T: int, alpha) -> mp.mpf:
    """``G(α) = E[s (α(1+s) − 1)^{2T−1}]`` for s ~ exponential(k), from the exact moments, summed
    with the digits its largest term needs (``_digits``; more if the caller works at more)."""
    n = 2 * T - 1
    with mp.workdps(max(mp.mp.dps, _digits(T, alpha, _rate(law)))):
        k = mp.mpf(_rate(law))
        a = mp.mpf(alpha)
        term = (a - 1) ** n / k                       # j = 0: C(n,0)·(α−1)^n·1!/k
        step = a / (a - 1) / k
        terms = [term]
        for j in range(n):                            # term_{j+1}/term_j = (n−j)/(j+1)·(j+2)·α/((α−1)k)
            term = term * (n - j) * (j + 2) / (j + 1) * step
            terms.append(term)
        total = mp.fsum(terms)
    return +total


@takes_law
def stationarity_quadrature(law: TaskLaw, T: int, alpha) -> mp.mpf:
    """The same ``G(α)`` by mpmath quadrature of its negative and positive parts (independent of
    the moment formula; slow at large T)."""
    k = mp.mpf(_rate(law))
    a = mp.mpf(alpha)
    n = 2 * T - 1
    s0 = (1 - a) / a                          # r = 0 here: r < 0 below, r > 0 above

    def f(s):
        return s * (a * (1 + s) - 1) ** n * k * mp.exp(-k * s)

    peak = max(s0, (n + 1) / k)               # where s^{n+1} e^{−ks} peaks, beyond s0
    return mp.quad(f, [0, s0]) + mp.quad(f, [s0, peak, peak + 10 * mp.sqrt(n + 1) / k, mp.inf])


@takes_law
def alpha_T_unbounded(law: TaskLaw, T: int) -> float:
    """The minimiser of the depth-T one-parameter loss for s ~ exponential(rate)."""
    T = check_depth(T, MAX_DEPTH_UNBOUNDED, "alpha_T_unbounded")
    _rate(law)  # refuses a law that is not exponential
    # G(0+) = −E[s] < 0 and G(1) = E[s^{n+1}] > 0, and G increases: one root in (0, 1)
    lo, hi = 1e-3 / T, 1.0
    with mp.workdps(30):
        lo, hi = mp.mpf(lo), mp.mpf(hi)
        while stationarity_unbounded(law, T, lo) > 0:       # never seen; keeps the bracket honest
            lo /= 10
        while hi - lo > mp.mpf(10) ** -17 * hi:               # bisection on the geometric mean
            mid = mp.sqrt(lo * hi) if hi / lo > 2 else (lo + hi) / 2
            if stationarity_unbounded(law, T, mid) < 0:
                lo = mid
            else:
                hi = mid
        return float((lo + hi) / 2)
