"""A certified enclosure of α_T, the minimiser of the one-parameter LCA loss at depth T.

**What is proved.**  For a law with exact rational parameters (``exact_law``) and a depth T, the
certificate states rational numbers ``lo < hi`` with ``hi − lo < width`` and proves that the
population loss ``L_T(α)`` of the one-parameter LCA (large-context limit) has exactly one minimiser
over the whole real line, and that it lies in ``(lo, hi)``.

**The argument.**  ``D = dL_T/dα = 2T E[ζ²] E[s r^{2T−1}]``, ``r = α(1+s) − 1`` (``derivative``), is a
polynomial in α, and

    D'(α) = 2T(2T−1) E[ζ²] E[s(1+s) r^{2T−2}] ≥ 0

because ``2T − 2`` is even and ``s(1+s) ≥ 0`` for ``s ≥ 0``.  ``D'`` is not the zero polynomial:
``D'(0) = 2T(2T−1) E[ζ²] E[s(1+s)] > 0`` when ``E[ζ²] > 0`` and ``P(s > 0) > 0`` (for T = 1, D' is that
constant).  A polynomial ≥ 0 that is not 0 has isolated zeros, so D is strictly increasing on ℝ.
Then exact signs ``D(lo) < 0 < D(hi)`` give exactly one zero of D in (lo, hi) and none outside, and
L_T is strictly decreasing before it and strictly increasing after it: it is the unique minimiser.
The certificate records the facts this uses (``s ≥ 0``, ``E[ζ²]``, ``E[s(1+s)]``) for the checker
to recompute.

**How the end points are found.**  From the float64 ``numerics.lca.alpha_T`` (or 1/2 when it has
none), Newton's method in arb ball arithmetic refines the root; lo and hi are then the nearest points
of a decimal grid of step ``h = 10^{−e} ≤ width/4`` on either side, whose signs arb decides (ball
excludes 0; the precision doubles until it does, with an exact fallback).  Where the start was off,
the grid bracket is widened by doubling and bisected back.  The bracket is then widened by a grid step
where that holds the float64 start strictly inside and keeps ``hi − lo < width`` (the root can lie
closer to a grid point than the float's few ulps).  Every sign that the certificate states is then
evaluated once more in exact rational arithmetic (flint ``fmpq``); only those are evidence.

**No end on the root.**  The statement is the open ``lo < α_T < hi``, so both signs must be strict (the
checker refuses a 0).  A root on a grid point (``s=point(c)`` has ``α_T = 1/(1 + c)``) has exact sign 0
there; ``_grid_bracket`` then takes its two neighbours, where D is strictly negative and positive (D has
one zero), and ``_cover`` only moves ends outwards, which keeps the signs strict (D increases).  The
exact check ``D(lo) < 0 < D(hi)`` before the certificate is written stops anything else.
"""
from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from mmicl.numerics.laws.scalar import LawError
from mmicl.numerics.validate import InputError, check_depth

from .derivative import DerivativePolynomial, derivative_form
from .document import FORMAT, Stopwatch, exact_decimal, provenance
from .exact_law import ExactTaskLaw, fraction_text, read_exact_law
from mmicl.numerics.laws.language import parse_law

__all__ = ["DEFAULT_WIDTH", "MAX_CERTIFY_DEPTH", "MIN_WIDTH", "certify_alpha_T", "check_width", "uniqueness_facts"]

MAX_CERTIFY_DEPTH = 1000
"""Largest depth certified: the polynomial has degree 2T − 1 and its exact coefficients ~T·log T digits.
Measured on 2 loaded CPU cores (``benchmarks/bench_certify.py``): s=uniform(0.5,4) takes about 0.02 s
of certifier work at T = 100 and 0.3 s at T = 1000 (plus ~1 s once for SymPy and the float64 start),
the checker 0.01 s and 0.25 s; the slowest family, two continuous modalities (``sv=beta…; sr=beta…``),
about 4 s and 5 s at T = 1000, and ~25 s to certify at T = 2000."""

DEFAULT_WIDTH = Fraction(1, 10**12)
MIN_WIDTH = Fraction(1, 10**100)
"""Narrowest enclosure asked for: its end points have ``−log10(width) + 1`` decimals and arb works at
about that many more bits; nothing needs more."""


def _short(value) -> str:
    """``repr(value)``, cut to one short line for an error message."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def check_width(width) -> Fraction:
    """``width`` as an exact rational in ``[MIN_WIDTH, 1]``.

    Accepted: a decimal string (``"1e-12"``, ``"1/1000"``); an ``int``, ``numpy.integer`` or ``Fraction``;
    a ``float`` or ``numpy.floating`` (``np.float64``, ``np.float32``), read as the shortest decimal that
    prints it in its own precision (``1e-12`` → 10^−12 exactly, not the binary float next to it); a
    ``decimal.Decimal``; and a 0-d numpy array of any of these.  Refused with a one-line ``InputError``:
    ``bool`` and ``numpy.bool_`` (not a number one means), NaN, ±∞, other types and arrays with elements."""
    import numpy as np  # the producer's side: the checker never calls this

    value = width
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise InputError(f"the width must be one number such as 1e-12, got an array of shape {value.shape}")
        value = value[()]
    if isinstance(value, (bool, np.bool_)):
        raise InputError(f"the width must be a positive decimal number such as 1e-12, not the bool {_short(width)}")
    try:
        if isinstance(value, np.floating):  # before float: np.float64 is a float whose repr is 'np.float64(…)'
            w = Fraction(np.format_float_scientific(value, unique=True, trim="-"))
        elif isinstance(value, float):
            w = Fraction(repr(value))
        elif isinstance(value, (int, np.integer)):
            w = Fraction(int(value))
        elif isinstance(value, (Fraction, Decimal)):
            w = Fraction(value)
        elif isinstance(value, str):
            w = Fraction(value.strip())
        else:
            raise ValueError  # noqa: TRY004 - a wrong type is the caller's input error too (a ValueError subclass)
    except (ValueError, ZeroDivisionError, OverflowError):
        raise InputError(f"the width must be a positive decimal number such as 1e-12, got {_short(width)}") from None
    if not MIN_WIDTH <= w <= 1:
        raise InputError(f"the width must lie in [1e-100, 1] (α_T lies in (0, 1]; below 1e-100 nothing needs the "
                         f"digits), got {_short(width)}")
    return w


def uniqueness_facts(law: ExactTaskLaw) -> dict:
    """The facts the uniqueness argument needs, with their values (rationals as text)."""
    z2 = law.zeta2()
    m = law.s_moment(1) + law.s_moment(2)
    return {
        "s_nonnegative": law.s_nonnegative(),
        "P(s>0)>0": law.s_positive_mass(),
        "E[zeta^2]": fraction_text(z2),
        "E[s(1+s)]": fraction_text(m),
        "argument": ("D'(α) = 2T(2T−1)E[ζ²]E[s(1+s)(α(1+s) − 1)^(2T−2)] ≥ 0 (even power, s ≥ 0), and "
                     "D'(0) = 2T(2T−1)E[ζ²]E[s(1+s)] > 0, so D' is a non-zero polynomial ≥ 0, D is strictly "
                     "increasing on the real line and has at most one zero; D(lo) < 0 < D(hi) puts it in (lo, hi), "
                     "and L_T decreases before it and increases after it: the unique global minimiser α_T"),
    }


def _require_unique(law: ExactTaskLaw) -> None:
    if not law.s_positive_mass():
        raise LawError("s = 0 on every prompt (m = 0): the loss does not depend on α, so α_T is not unique; give s a "
                       "law with P(s > 0) > 0")
    if law.zeta2() <= 0:  # ζ ≡ 0 is refused by the numerics already
        raise LawError("E[ζ²] = 0: the loss does not depend on α; give ζ a non-zero law")


def _start(law: ExactTaskLaw, T: int) -> tuple[Fraction, float | None]:
    """The float64 α_T of the numerics (exactly, as a dyadic rational), or 1/2 without one."""
    from mmicl.numerics import lca

    try:
        a = float(lca.alpha_T(parse_law(law.text), T))
    except (ValueError, ArithmeticError, RuntimeError):  # the search below does not need it
        return Fraction(1, 2), None
    if not (math.isfinite(a) and 0 < a <= 1):
        return Fraction(1, 2), None
    return Fraction(a), a


class _Signs:
    """Signs of D at rational points: arb balls at a precision that doubles until the ball
    excludes 0 (a ball that excludes 0 proves the sign), exact arithmetic past ``cap`` bits."""

    def __init__(self, poly: DerivativePolynomial, h: Fraction):
        self.poly = poly
        self.prec = poly.magnitude_bits(Fraction(1)) + 2 * max(-math.floor(math.log2(h)), 0) + 64
        self.cap = 16 * self.prec
        self.arb_evaluations = self.exact_fallbacks = 0
        self._seen: dict[Fraction, int] = {}

    def __call__(self, x: Fraction) -> int:
        if x not in self._seen:
            self._seen[x] = self._sign(x)
        return self._seen[x]

    def _sign(self, x: Fraction) -> int:
        prec = self.prec
        while prec <= self.cap:
            self.arb_evaluations += 1
            ball = self.poly.ball(x, prec)
            if ball > 0:
                return 1
            if ball < 0:
                return -1
            prec *= 2
        self.exact_fallbacks += 1
        return self.poly.sign(x)


def _newton(poly: DerivativePolynomial, x: Fraction, h: Fraction, prec: int) -> tuple[Fraction, int]:
    """Newton's method from x until a step is below h/16 (at most 60 steps; kept in [0, 1], where
    α_T lies: D(0) < 0 < D(1))."""
    steps = 0
    for steps in range(1, 61):
        step = poly.newton_step(x, prec)
        if step is None:
            break
        x = min(max(x - step, Fraction(0)), Fraction(1))
        if abs(step) < h / 16:
            break
    return x, steps


def _grid_bracket(sign: _Signs, x: Fraction, h: Fraction) -> tuple[Fraction, Fraction]:
    """Grid points ``L < R`` (multiples of h) with ``sign(L) < 0 < sign(R)`` and ``R − L ≤ 2h``."""
    L = (x / h).__floor__() * h
    R = L + h
    step = h
    while (sl := sign(L)) >= 0:
        if sl == 0:
            return L - h, L + h
        R, L, step = L, L - step, 2 * step
    step = h
    while (sr := sign(R)) <= 0:
        if sr == 0:
            return R - h, R + h
        L, R, step = R, R + step, 2 * step
    while R - L > 2 * h:
        M = L + ((R - L) / h // 2) * h
        sm = sign(M)
        if sm == 0:
            return M - h, M + h
        L, R = (M, R) if sm < 0 else (L, M)
    return L, R


def _cover(lo: Fraction, hi: Fraction, a: Fraction, h: Fraction, width: Fraction) -> tuple[Fraction, Fraction]:
    """``[lo, hi]`` widened on the grid to hold the float64 α_T strictly inside, where that keeps
    ``hi − lo < width``: the float is within a few ulps of the root, which can lie closer than that to a
    grid point.  Widening keeps the signs (D increases), and a certificate that holds the float64 value
    also says that the numerics were right to the width."""
    below = (a / h).__floor__() * h
    above = (a / h).__ceil__() * h
    new_lo = min(lo, below - h if below == a else below)
    new_hi = max(hi, above + h if above == a else above)
    return (new_lo, new_hi) if new_hi - new_lo < width else (lo, hi)


def certify_alpha_T(law, T: int, width=DEFAULT_WIDTH) -> dict:
    """A certificate (a JSON-ready dict) that α_T of ``law`` at depth ``T`` is unique and lies in
    ``[lo, hi]``, ``hi − lo < width`` (see the module docstring; the format is in
    docs/certificates.md).  ``law``: LAW text or a ``TaskLaw`` with exact-decimal parameters."""
    T = check_depth(T)
    if T > MAX_CERTIFY_DEPTH:
        raise InputError(f"the depth T must be ≤ {MAX_CERTIFY_DEPTH} for a certificate (the exact polynomial has "
                         f"degree 2T − 1 and moments with ~T·log T digits), got {T}")
    width = check_width(width)
    watch = Stopwatch()
    with watch("read_law"):
        exact = read_exact_law(law)
        _require_unique(exact)
    with watch("derive"):
        form = derivative_form()
    with watch("moments"):
        poly = DerivativePolynomial(exact, T)
    with watch("float64_start"):
        start, alpha_float = _start(exact, T)
    places = 0
    while Fraction(1, 10**places) > width / 4:
        places += 1
    h = Fraction(1, 10**places)
    with watch("locate"):
        signs = _Signs(poly, h)
        x, newton_steps = _newton(poly, start, h, signs.prec)
        lo, hi = _grid_bracket(signs, x, h)
        if alpha_float is not None:
            lo, hi = _cover(lo, hi, start, h, width)
    with watch("exact_signs"):
        d_lo, d_hi = poly.exact(lo), poly.exact(hi)
    if not (d_lo < 0 < d_hi and hi - lo < width):
        raise RuntimeError(f"the located enclosure [{lo}, {hi}] failed its exact check: a bug in proofs/certificates")
    facts = uniqueness_facts(exact)

    def value(d: Fraction) -> dict:
        return {"sign": (d > 0) - (d < 0), "log10_abs": round(math.log10(abs(d.numerator)) - math.log10(d.denominator), 9)}

    return {
        "format": FORMAT,
        "certificate": "alpha_T",
        "law": exact.to_json(),
        "T": T,
        "proved": (f"The population loss L_T(α) of the one-parameter LCA (W^S = −W^V = αI) at depth T = {T}, in the "
                   "large-context limit, has exactly one minimiser α_T over the real line, and lo < α_T < hi."),
        "claim": {"lo": exact_decimal(lo), "hi": exact_decimal(hi), "lo_rational": fraction_text(lo),
                  "hi_rational": fraction_text(hi), "width": fraction_text(width),
                  "hi_minus_lo": fraction_text(hi - lo)},
        "derivative": {"formula": form.text(), "derived_per_zeta2": form.derived,
                       "source": "theory/lca.py: one_parameter().excess_per_zeta2, differentiated in α (SymPy)",
                       "at_lo": value(d_lo), "at_hi": value(d_hi)},
        "uniqueness": facts,
        "arithmetic": {
            "moments": "exact: exponential generating functions of the moments of 1 + s (flint fmpq_poly)",
            "polynomial_degree": 2 * T - 1,
            "locate": {"method": "Newton's method, then grid bisection, signs from arb balls that exclude 0",
                       "library": "python-flint arb", "start": "numerics.lca.alpha_T (float64)",
                       "newton_steps": newton_steps, "precision_bits": signs.prec,
                       "arb_evaluations": signs.arb_evaluations, "exact_fallbacks": signs.exact_fallbacks,
                       "grid_step": fraction_text(h)},
            "signs": "exact rational arithmetic (flint fmpq); the checker recomputes them with fractions.Fraction",
        },
        "provenance": provenance(watch.total(), alpha_T_float64=alpha_float,
                                 alpha_T_float64_inside=None if alpha_float is None
                                 else bool(lo < Fraction(alpha_float) < hi)),
    }
