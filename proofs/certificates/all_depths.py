"""A certificate about α_T at every depth T ≥ 1: which side of α* it lies on, and how far.

**What is proved** (docs/certificates.md, "Every depth"), for a law whose every leaf is an atom at an
end a or b of the support of s, or a Beta piece on all of [a, b] with integer exponents:

* for every T ≥ T₀, with n = 2T − 1,
  ``|α* − α_T − δ_c(n)| < K (1 + log n)³ / n³``, where
  ``δ_c(n) = (A log n + C)/n + (E₂ log² n + E₁ log n + E₀)/n²`` is the expansion to second order
  (A rational; C, E₀, E₁, E₂ exact polynomials in λ = log of a rational the certificate names);
* for every T < T₀, an exact enclosure lo_T < α_T < hi_T (an ``alpha_T`` certificate each);
* hence the side of α* that α_T lies on at every depth, where the bounds decide it (``statement``).

**How it is found.**  The end form and the function F whose sign is that of E[s r^n] are in
``tail``; ``tail.expansion`` solves for C, E₂, E₁, E₀ in exact arithmetic over ℚ[λ]; K is the
smallest power of 2 (from an estimate off the K = 0 enclosures) for which the box of T₀ gives both
signs; T₀ is the first of ``T0_CHOICES`` where that succeeds and the tail's side is decided (else
the first where the bound holds).  The checker (``check.py`` with ``tail.py``) re-derives all of it.
"""
from __future__ import annotations

import math
from fractions import Fraction

from mmicl.numerics.laws.scalar import LawError
from mmicl.numerics.validate import InputError

from . import tail
from .alpha import DEFAULT_WIDTH, certify_alpha_T, check_width
from .check import law_pieces
from .document import FORMAT, Stopwatch, provenance
from .exact_law import fraction_text, read_exact_law

__all__ = ["T0_CHOICES", "NotCertifiable", "certify_all_depths", "tail_bounds"]

T0_CHOICES = (16, 32, 64, 128, 256)
"""The depths from which the tail proof is tried, smallest first (each larger one costs more finite
certificates and gives a tighter box)."""

MAX_K_DOUBLINGS = 40


class NotCertifiable(LawError):
    """A law or a step the all-depth certificate cannot prove: the message says which and why (one line)."""

    def __init__(self, why: str):
        super().__init__(f"the all-depth proof does not cover this: {why}")


def _find_K(e: tail.Ends, coeffs: dict, x0: Fraction, u0: Fraction) -> Fraction | None:
    """The smallest power of 2 at or above the K = 0 estimate for which both sides hold, or None."""
    need = Fraction(0)
    for sign in (-1, 1):
        cubic = tail.box_cubic(e, coeffs, Fraction(0), sign, x0, u0)
        for (i, _), c in cubic.items():
            bad = -c.lo if sign < 0 else c.hi
            need = max(need, bad / (e.kappa0 * math.comb(3, i)))
    K = Fraction(2) ** max(-60, math.ceil(math.log2(need)) + 1 if need > 0 else -60)
    for _ in range(MAX_K_DOUBLINGS):
        try:
            if all(tail.cubic_sign_ok(tail.box_cubic(e, coeffs, K, s, x0, u0), s) for s in (-1, 1)):
                return K
        except tail.TailError:
            return None
        K *= 2
    return None


def certify_all_depths(law, width=DEFAULT_WIDTH, T0_choices=T0_CHOICES) -> dict:
    """An ``alpha_all_T`` certificate (a JSON-ready dict) for ``law`` (LAW text or ``TaskLaw``): the
    tail bound for T ≥ T₀ and ``alpha_T`` enclosures narrower than ``width`` for T < T₀.  Raises
    ``NotCertifiable`` (one line: the step and why) where the proof does not go through."""
    width = check_width(width)
    watch = Stopwatch()
    with watch("read_law"):
        exact = read_exact_law(law)
        block = exact.to_json()
        try:
            e = tail.ends(law_pieces(block))
        except tail.TailError as err:
            raise NotCertifiable(str(err)) from None
    with watch("expansion"):
        C, E2, E1, E0 = tail.expansion(e)
        polys = {"C": C, "E2": E2, "E1": E1, "E0": E0}
        if not all(v.is_zero() for v in tail.origin_residue(e, C, E2, E1, E0).values()):
            raise RuntimeError("the solved expansion does not cancel F to second order: a bug in proofs/certificates")
        ratio = e.lambda_ratio()
        coeffs = tail.coefficient_intervals(polys, tail.log_bounds(ratio))
    chosen = None
    with watch("tail"):
        for T0 in T0_choices:
            n0 = 2 * T0 - 1
            log_n0 = tail.log_bounds(Fraction(n0))
            x0, u0 = Fraction(1, n0), log_n0.hi / n0
            K = _find_K(e, coeffs, x0, u0)
            if K is None:
                continue
            side = tail.tail_side(e, coeffs, K, n0, log_n0)
            if chosen is None or (chosen[4] is None and side is not None):
                chosen = (T0, K, x0, u0, side)
            if side is not None:
                break
    if chosen is None:
        raise NotCertifiable(f"no K makes the third-order bound hold on the box of any T0 in {tuple(T0_choices)}")
    T0, K, x0, u0, side = chosen
    finite, sides = [], []
    with watch("finite_depths"):
        for T in range(1, T0):
            cert = certify_alpha_T(law, T, width)
            lo, hi = (Fraction(cert["claim"][k]) for k in ("lo_rational", "hi_rational"))
            s = tail.side_of(lo, hi, e.alpha_star)
            if s is None and width > Fraction(1, 10**40):
                cert = certify_alpha_T(law, T, Fraction(1, 10**40))  # closer to α* than the width: narrow it
                lo, hi = (Fraction(cert["claim"][k]) for k in ("lo_rational", "hi_rational"))
                s = tail.side_of(lo, hi, e.alpha_star)
            finite.append(cert)
            sides.append(s)
    claim = {
        "alpha_star": fraction_text(e.alpha_star), "T0": T0, "n": "2T - 1",
        "ends": {"a": fraction_text(e.a), "b": fraction_text(e.b), "nu_a": e.nu_a, "nu_b": e.nu_b,
                 "kappa0": fraction_text(e.kappa0), "A": fraction_text(e.A)},
        "lambda_ratio": fraction_text(ratio),
        **{k: p.to_json() for k, p in polys.items()},
        "K": fraction_text(K), "x0": fraction_text(x0), "u0": fraction_text(u0),
        "remainder": "K*(1 + log n)^3/n^3",
        "tail_side": side, "sides": sides,
        "statement": tail.statement(sides, side, T0),
    }
    reasons = tail.check_tail(claim, e)
    if reasons:
        raise RuntimeError(f"the tail proof found does not check: {reasons}: a bug in proofs/certificates")
    return {
        "format": FORMAT,
        "certificate": "alpha_all_T",
        "law": block,
        "proved": (f"{claim['statement']}.  For every T ≥ {T0}, with n = 2T − 1, |α* − α_T − δ_c(n)| < "
                   f"K(1 + log n)³/n³, δ_c(n) = (A log n + C)/n + (E2 log² n + E1 log n + E0)/n², λ = "
                   f"log({claim['lambda_ratio']}); for T < {T0}, lo_T < α_T < hi_T (the finite certificates)."),
        "claim": claim,
        "finite": finite,
        "provenance": provenance(watch.total()),
    }


def tail_bounds(cert: dict, T: int) -> tuple[float, float]:
    """``(lo, hi)`` with ``lo < α* − α_T < hi`` as the certificate states them at depth T (floats, for
    display: the statement is the certificate's).  T < T₀ reads the finite enclosure; T ≥ T₀ evaluates
    the tail bound in the tail proof's interval arithmetic (``tail.delta_bounds``), outer ends."""
    claim = cert["claim"]
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise InputError(f"T must be an integer ≥ 1, got {T!r}")
    star = Fraction(claim["alpha_star"])
    if T < claim["T0"]:
        c = cert["finite"][T - 1]["claim"]
        return float(star - Fraction(c["hi_rational"])), float(star - Fraction(c["lo_rational"]))
    lam = tail.log_bounds(Fraction(claim["lambda_ratio"]))
    coeffs = tail.coefficient_intervals({k: tail.LambdaPoly.from_json(claim[k]) for k in ("C", "E2", "E1", "E0")}, lam)
    lower, upper = tail.delta_bounds(Fraction(claim["ends"]["A"]), coeffs, Fraction(claim["K"]), 2 * T - 1)
    return float(lower.lo), float(upper.hi)
