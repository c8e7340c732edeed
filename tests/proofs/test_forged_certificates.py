"""The certificate checker accepts only proofs: forged certificates at every boundary of the argument
are rejected, each for its own reason, and every bound the checker relies on is a bound.

* **Bounds against closed forms.**  The K-term series for ``E[1/(1+s)]`` (``check.reciprocal_bounds``) is
  compared with ``E[1/t]`` evaluated at 50 digits by mpmath (``₂F₁`` for a Beta piece, ``x ln x − x`` for a
  pair of uniforms, a quadrature for a pair of Betas): the true remainder lies in ``[0, ρ^K/t₀]``, and
  each bound that is one step too small (``ρ^{K+1}/t₀``, ``ρ^K/c``, ``ρ^K/t₁``, one series term fewer,
  one more, an odd K) fails on a law with its mass at an end of its support.  The Beta-moment recurrence
  and the checker's derivative route are compared with exact closed forms.
* **Forged certificates** (``FORGED``): an end exactly on the root (with the needed sign recorded and with
  the true 0 recorded), both ends on it, the interval past it, ``hi − lo`` equal to the width, ``E[ζ²] = 0``,
  ``s ≡ 0``, a gap claimed > 0 with a lower bound of exactly 0, a lower bound above the true gap (mpmath)
  on ``s=beta(0.05,1,0,1)`` with a short series, an upper bound below it, an odd series, an exact gap with
  its denominator lowered.  Each must be rejected with exactly its expected reasons, so that a checker in
  which a strict inequality was relaxed (or a reason merged into another) fails here; claims that are
  exactly the recomputed bounds (the closed boundary of ``lo ≤ G ≤ hi``) are accepted.
* **Mutants** (``MUTANTS``): each relaxation of the checker listed there is applied to its source, and
  the relaxed checker must accept a forged certificate or reject an honest one.
* **Hypothesis** over random rational atomic laws: honest certificates are accepted, and changed ones
  (an end moved onto or past the root, a denominator lowered, a term dropped, a bound set to 0) are
  accepted exactly when their statement is true, as decided by the certifier's own polynomial (a
  different route from the checker's).
"""
from __future__ import annotations

import copy
import json
import types
from fractions import Fraction
from functools import cache
from pathlib import Path

import mpmath as mp
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from mmicl.proofs.certificates import check as checker
from mmicl.proofs.certificates.alpha import certify_alpha_T
from mmicl.proofs.certificates.check import _centred_moments, _Law, check, derivative_value, law_from_text
from mmicl.proofs.certificates.check import reciprocal_bounds as bounds
from mmicl.proofs.certificates.derivative import DerivativePolynomial
from mmicl.proofs.certificates.document import exact_decimal
from mmicl.proofs.certificates.exact_law import read_exact_law
from mmicl.proofs.certificates.gap import certify_gap

CHECK_PY = Path(checker.__file__)
DPS = 50
TINY = Fraction(1, 10**40)
"""Far above mpmath's error at 50 digits (~1e-48 here), far below every effect tested (≥ 1e-12)."""


def _law(text: str) -> _Law:
    nf = law_from_text(text)
    nf["text"] = text
    return _Law(nf)


def _mpf(x: Fraction):
    """x as an mpf of DPS digits (mpmath's precision is global: every step here is in ``workdps``)."""
    with mp.workdps(DPS):
        return mp.mpf(x.numerator) / x.denominator


def _text(x: Fraction) -> str:
    try:
        return exact_decimal(x)
    except ValueError:
        return f"{x.numerator}/{x.denominator}"


# ---------------------------------------------------------------------------------------------
# closed forms of E[1/t], t = 1 + s
# ---------------------------------------------------------------------------------------------


def _e_beta(p, q, t0, w):
    """``E[1/(t₀ + wX)]``, ``X ~ Beta(p, q)``: ``₂F₁(1, p; p + q; −w/t₀)/t₀`` (Euler's integral)."""
    return mp.hyp2f1(1, p, p + q, -w / t0) / t0


def _e_uniform_pair(t0, w1, w2):
    """``E[1/(t₀ + w₁U₁ + w₂U₂)]`` for independent uniforms: with ``F(x) = x ln x − x`` (``F'' = 1/x``),
    ``(F(t₀+w₁+w₂) − F(t₀+w₁) − F(t₀+w₂) + F(t₀))/(w₁w₂)``."""
    F = lambda x: x * mp.log(x) - x  # noqa: E731
    return (F(t0 + w1 + w2) - F(t0 + w1) - F(t0 + w2) + F(t0)) / (w1 * w2)


def _e_beta_pair(p1, q1, w1, p2, w2, low: bool):
    """``E[1/(1 + w₁X₁ + w₂X₂)]``, ``X₁ ~ Beta(p₁, q₁)``, and ``X₂ ~ Beta(p₂, 1)`` (``low``: ``X₂ = V^{1/p₂}``) or
    ``X₂ ~ Beta(1, p₂)`` (``X₂ = 1 − V^{1/p₂}``), V uniform: one quadrature over V of the ₂F₁ above."""
    x2 = (lambda v: v ** (1 / p2)) if low else (lambda v: 1 - v ** (1 / p2))
    return mp.quad(lambda v: _e_beta(p1, q1, 1 + w2 * x2(v), w1), [0, 0.5, 0.9, 0.99, 1])


F_ = Fraction
CLOSED_FORMS = {  # LAW text: E[1/(1+s)] as a function of nothing (evaluated at DPS digits)
    "s=beta(0.05,1,0,1)": lambda: _e_beta(mp.mpf(1) / 20, 1, 1, 1),
    "s=beta(1,0.05,0,1)": lambda: _e_beta(1, mp.mpf(1) / 20, 1, 1),
    "s=uniform(0.5,4)": lambda: _e_beta(1, 1, mp.mpf(3) / 2, mp.mpf(7) / 2),
    "s=beta(2,3,0.5,4)": lambda: _e_beta(2, 3, mp.mpf(3) / 2, mp.mpf(7) / 2),
    "s=beta(0.5,0.5,0,2)": lambda: _e_beta(mp.mpf(1) / 2, mp.mpf(1) / 2, 1, 2),
    "s=mix(0.25*point(3),0.75*beta(0.05,1,1,3))": lambda: mp.mpf(1) / 4 / 4 + mp.mpf(3) / 4 * _e_beta(mp.mpf(1) / 20, 1, 2, 2),
    "sv=point(0.5); sr=beta(3,0.5,0,1)": lambda: _e_beta(3, mp.mpf(1) / 2, mp.mpf(3) / 2, 1),
    "sv=uniform(0,1); sr=uniform(0,2)": lambda: _e_uniform_pair(1, 1, 2),
    "sv=beta(0.05,1,0,1); sr=beta(0.05,1,0,1)": lambda: _e_beta_pair(mp.mpf(1) / 20, 1, 1, mp.mpf(1) / 20, 1, True),
    "sv=beta(1,0.05,0,1); sr=beta(1,0.05,0,1)": lambda: _e_beta_pair(1, mp.mpf(1) / 20, 1, mp.mpf(1) / 20, 1, False),
}


@cache
def _exact_reciprocal(text: str):
    with mp.workdps(DPS):
        return +CLOSED_FORMS[text]()


def _support(text: str) -> tuple[Fraction, Fraction]:
    """``(t₀, t₁)`` of the one continuous piece of a law in ``CLOSED_FORMS`` (mixtures: of its Beta part)."""
    pieces = [piece for _, piece in _law(text).pieces() if piece[0] != "atoms"]
    (piece,) = pieces
    betas = [piece] if piece[0] == "beta" else list(piece[1:])
    t0 = 1 + sum(b[3] for b in betas)
    return t0, t0 + sum(b[4] - b[3] for b in betas)


@pytest.mark.parametrize("text", list(CLOSED_FORMS))
@pytest.mark.parametrize("K", [2, 8, 16, 32])
def test_the_series_bounds_hold_the_closed_form_and_the_remainder_is_within_its_bound(text, K):
    """``lo ≤ E[1/t] ≤ hi``: the true remainder ``E − lo`` lies in ``[0, hi − lo]``, ``hi − lo`` being the
    weighted ``ρ^K/t₀`` (docs/certificates.md, "Bounds on κ")."""
    lo, hi = bounds(_law(text), K)
    with mp.workdps(DPS):
        exact = _exact_reciprocal(text)
        remainder, bound = exact - _mpf(lo), _mpf(hi - lo)
        assert remainder >= 0, f"{text}, K={K}: the series is above E[1/t] by {mp.nstr(-remainder, 5)}"
        assert remainder <= bound, f"{text}, K={K}: the remainder {mp.nstr(remainder, 5)} exceeds {mp.nstr(bound, 5)}"


@pytest.mark.parametrize("text", ["s=beta(0.05,1,0,1)", "sv=beta(0.05,1,0,1); sr=beta(0.05,1,0,1)",
                                  "s=mix(0.25*point(3),0.75*beta(0.05,1,1,3))"])
@pytest.mark.parametrize("K", [2, 16, 64])
def test_a_remainder_bound_one_step_smaller_is_not_a_bound_where_the_mass_is_near_t0(text, K):
    """``ρ^K/t₀`` is the supremum of ``u^K/t`` (at t = t₀), and a law with its mass near t₀ comes within a
    factor 0.6 of it: ``ρ^{K+1}/t₀``, ``ρ^K/c`` and ``ρ^K/t₁`` are all below the true remainder, and so is
    the bound with one series term fewer (``Σ_{k<K−1}`` with the same ``ρ^K/t₀``)."""
    law = _law(text)
    lo, hi = bounds(law, K)
    t0, t1 = _support(text)
    c, rho = (t0 + t1) / 2, (t1 - t0) / (t1 + t0)
    weight = (hi - lo) / (rho**K / t0)  # the weight of the continuous piece
    fewer_lo, _ = bounds(law, K - 1)
    with mp.workdps(DPS):
        exact = _exact_reciprocal(text)
        remainder = exact - _mpf(lo)
        assert remainder >= mp.mpf(6) / 10 * _mpf(hi - lo)  # the bound is nearly attained
        for name, smaller in (("ρ^(K+1)/t₀", rho ** (K + 1) / t0), ("ρ^K/c", rho**K / c), ("ρ^K/t₁", rho**K / t1)):
            assert remainder > _mpf(weight * smaller) + _mpf(TINY), name
        assert _mpf(fewer_lo + (hi - lo)) < exact - _mpf(TINY), "K − 1 terms with the remainder of K"


@pytest.mark.parametrize("text", ["s=beta(1,0.05,0,1)", "sv=beta(1,0.05,0,1); sr=beta(1,0.05,0,1)"])
@pytest.mark.parametrize("K", [2, 16, 64])
def test_an_odd_series_is_not_a_lower_bound_where_the_mass_is_near_t1(text, K):
    """Where ``t > c``, ``u < 0`` and ``u^{K+1}/t < 0``: with ``K + 1`` terms, or with ``K − 1`` terms
    (both odd remainders), the series is above ``E[1/t]`` for a law with its mass near t₁ — so K must
    be even for the lower bound ``(1/c)Σ_{k<K}E[u^k]``."""
    law = _law(text)
    with mp.workdps(DPS):
        exact = _exact_reciprocal(text)
        for odd in (K + 1, K - 1):
            assert _mpf(bounds(law, odd)[0]) > exact + _mpf(TINY), odd


def test_the_centred_beta_moments_are_the_binomial_closed_form():
    """``E[(1 − 2X)^k] = Σ_j C(k, j)(−2)^j E[X^j]``, ``E[X^j] = Π_{i<j}(p + i)/(p + q + i)``, exactly."""
    from math import comb

    for p, q in ((F_(1, 20), F_(1)), (F_(1), F_(1, 20)), (F_(2), F_(3)), (F_(1, 2), F_(1, 2)), (F_(7, 3), F_(5, 4))):
        raw = [F_(1)]
        for i in range(24):
            raw.append(raw[-1] * (p + i) / (p + q + i))
        want = [sum(comb(k, j) * (-2) ** j * raw[j] for j in range(k + 1)) for k in range(25)]
        assert _centred_moments(p, q, 24) == want


@pytest.mark.parametrize("text", ["s=beta(0.05,1,0,1)", "s=uniform(0.5,4)", "s=beta(2,3,0.5,4); zeta=const(1.5)",
                                  "s=mix(0.3*point(1),0.7*beta(0.5,2,0,3))", "sv=beta(2,0.5,0.1,1); sr=uniform(0.5,2)",
                                  "sv=point(0.25); sr=beta(3,1,0,2)"])
@pytest.mark.parametrize("T", [1, 2, 5])
def test_the_checkers_derivative_over_beta_pieces_is_the_certifiers_polynomial(text, T):
    """The checker's route (moment recurrence of r, Clenshaw for two parts) and the certifier's (a
    polynomial in α from generating functions) share no code: they must agree exactly."""
    poly, law = DerivativePolynomial(read_exact_law(text), T), _law(text)
    for a in (F_(0), F_(3, 10), F_(-1, 7), F_(1), F_(5, 4)):
        assert derivative_value(law, T, a) == poly.exact(a), a


# ---------------------------------------------------------------------------------------------
# forged certificates
# ---------------------------------------------------------------------------------------------


def _set_alpha(cert: dict, lo: Fraction, hi: Fraction, signs=(-1, 1), width: Fraction | None = None) -> dict:
    """``cert`` with the enclosure ``[lo, hi]`` and everything else consistent with it, as a forger would
    write it: the decimals, hi − lo, the recorded signs given (by default the ones the proof needs), and
    log10|D| recomputed (null where D = 0)."""
    cert = copy.deepcopy(cert)
    law = _Law(cert["law"])
    c = cert["claim"]
    c.update(lo=_text(lo), hi=_text(hi), lo_rational=str(lo), hi_rational=str(hi), hi_minus_lo=str(hi - lo))
    if width is not None:
        c["width"] = str(width)
    for key, x, sign in (("at_lo", lo, signs[0]), ("at_hi", hi, signs[1])):
        d = derivative_value(law, cert["T"], x)
        cert["derivative"][key] = {"sign": sign, "log10_abs": checker._log10_abs(d) if d else None}
    return cert


def _set_gap(cert: dict, lo: Fraction, hi: Fraction, K="keep", positive=None) -> dict:
    cert = copy.deepcopy(cert)
    c = cert["claim"]
    c.update(lo=_text(lo), hi=_text(hi), lo_rational=str(lo), hi_rational=str(hi))
    if K != "keep":
        cert["kappa"]["terms"] = K
    if positive is not None:
        c["positive"] = positive
    return cert


def _true_gap(text: str) -> mp.mpf:
    """G = E[ζ²](κ − bᵀA⁻¹b) with κ = 1 − E[1/(1+s)] from the closed form, and the block moments of
    Beta(p, q) on [0, 1] (``E X = p/(p+q)``, ``E X² = p(p+1)/((p+q)(p+q+1))``), for the laws used below."""
    def moments(p, q):
        return p / (p + q), p * (p + 1) / ((p + q) * (p + q + 1))

    shapes = {"s=beta(0.05,1,0,1)": [(F_(1, 20), F_(1))], "s=beta(1,0.05,0,1)": [(F_(1), F_(1, 20))],
              "sv=beta(0.05,1,0,1); sr=beta(0.05,1,0,1)": [(F_(1, 20), F_(1))] * 2,
              "sv=beta(1,0.05,0,1); sr=beta(1,0.05,0,1)": [(F_(1), F_(1, 20))] * 2}[text]
    blocks = [moments(p, q) for p, q in shapes]
    if len(blocks) == 1:
        (e1, e2), = blocks
        quad = e1 * e1 / (e1 + e2)
    else:
        (e1, e2), (f1, f2) = blocks
        a00, a01, a11 = e1 + e2, e1 * f1, f1 + f2
        quad = (a11 * e1 * e1 - 2 * a01 * e1 * f1 + a00 * f1 * f1) / (a00 * a11 - a01 * a01)
    with mp.workdps(DPS):
        return 1 - _exact_reciprocal(text) - _mpf(quad)


def _above(x) -> Fraction:
    """A terminating decimal above the mpf x by at least TINY."""
    with mp.workdps(DPS):
        return Fraction(int(mp.ceil(x * 10**45)), 10**45) + TINY


def _below(x) -> Fraction:
    """A terminating decimal below the mpf x by at least TINY."""
    with mp.workdps(DPS):
        return Fraction(int(mp.floor(x * 10**45)), 10**45) - TINY


@cache
def _honest(kind: str, text: str, T: int = 3) -> dict:
    cert = certify_alpha_T(text, T) if kind == "alpha" else certify_gap(text)
    return json.loads(json.dumps(cert))


H = Fraction(1, 10**13)
ROOT = Fraction(1, 2)  # of s=point(1): D ∝ (2α − 1)^(2T−1)

R_LO0 = "D(lo) = 0 at lo"
R_HI0 = "D(hi) = 0 at hi"
R_REC_LO, R_REC_HI = "recorded sign of D at_lo", "recorded sign of D at_hi"
R_NOT_INSIDE = "are not inside the claimed"


def _forged() -> dict[str, tuple[dict, list[str]]]:
    """``{name: (certificate, [a fragment of each reason expected, in order])}``: every one is false
    (or, for the last few, not a proof of what it says) and must be rejected with exactly these reasons."""
    point = _honest("alpha", "s=point(1)")
    honest_alpha = _honest("alpha", "s=uniform(0.5,4)")
    a_lo, a_hi = Fraction(honest_alpha["claim"]["lo_rational"]), Fraction(honest_alpha["claim"]["hi_rational"])
    zero_zeta = _set_alpha(_honest("alpha", "s=point(1)"), ROOT - H, ROOT + H)
    zero_zeta["law"] = law = {**zero_zeta["law"], "text": "s=point(1); zeta=const(0)"}
    law["zeta"] = {"family": "const", "c": "0"}
    zero_zeta["uniqueness"]["E[zeta^2]"] = "0"
    zero_zeta = _set_alpha(zero_zeta, ROOT - H, ROOT + H)
    zero_s = _set_alpha(_honest("alpha", "s=point(1)"), ROOT - H, ROOT + H)
    zero_s["law"] = {**zero_s["law"], "text": "s=point(0)", "s": {"family": "point", "c": "0"}}
    zero_s["uniqueness"]["E[s(1+s)]"] = "0"
    zero_s = _set_alpha(zero_s, ROOT - H, ROOT + H)

    gap_point = _honest("gap", "s=point(1)")
    low, high = "s=beta(0.05,1,0,1)", "s=beta(1,0.05,0,1)"
    pair_low, pair_high = "sv=beta(0.05,1,0,1); sr=beta(0.05,1,0,1)", "sv=beta(1,0.05,0,1); sr=beta(1,0.05,0,1)"
    exact = _honest("gap", "s=discrete(1:0.25,2:0.75)")
    g = Fraction(exact["claim"]["lo_rational"])
    uni = _honest("gap", "s=uniform(0.5,4)")
    return {
        # alpha_T: the open interval (lo, hi) and its strict signs
        "lo exactly on the root, the needed sign recorded": (_set_alpha(point, ROOT, ROOT + H), [R_LO0, R_REC_LO]),
        "hi exactly on the root, the needed sign recorded": (_set_alpha(point, ROOT - H, ROOT), [R_HI0, R_REC_HI]),
        "lo exactly on the root, its sign 0 recorded": (_set_alpha(point, ROOT, ROOT + H, (0, 1)), [R_LO0]),
        "hi exactly on the root, its sign 0 recorded": (_set_alpha(point, ROOT - H, ROOT, (-1, 0)), [R_HI0]),
        "both ends on the root": (_set_alpha(point, ROOT, ROOT, (0, 0)), ["is not below hi", R_LO0, R_HI0]),
        "the interval just past the root": (_set_alpha(point, ROOT + H, ROOT + 2 * H),
                                            ["D(lo) has sign +1", R_REC_LO]),
        "the interval just before the root": (_set_alpha(point, ROOT - 2 * H, ROOT - H),
                                              ["D(hi) has sign -1", R_REC_HI]),
        "hi − lo equal to the width": (_set_alpha(honest_alpha, a_lo, a_hi, width=a_hi - a_lo),
                                       ["is not below the width"]),
        "E[ζ²] = 0": (zero_zeta, ["E[ζ²] = 0 is not > 0", R_LO0, R_REC_LO, R_HI0, R_REC_HI]),
        "s ≡ 0": (zero_s, ["P(s > 0) > 0 fails", "E[s(1+s)] = 0 is not > 0", R_LO0, R_REC_LO, R_HI0, R_REC_HI]),
        # lsa_gap: the strict G > 0, and the series bounds
        "s=point(1): G > 0 claimed with lo = 0": (_set_gap(gap_point, F_(0), F_(0), positive=True), ["lo = 0 is not > 0"]),
        "uniform: G > 0 claimed with lo = 0": (_set_gap(uni, F_(0), Fraction(uni["claim"]["hi_rational"])),
                                               ["lo = 0 is not > 0"]),
        "beta(0.05,1): lo above the true gap, 16 terms": (
            _set_gap(_honest("gap", low), _above(_true_gap(low)), _above(_true_gap(low)) + F_(1, 1000), K=16),
            [R_NOT_INSIDE]),
        "beta(1,0.05): hi below the true gap, 16 terms": (
            _set_gap(_honest("gap", high), _below(_true_gap(high) / 2), _below(_true_gap(high)), K=16), [R_NOT_INSIDE]),
        "beta(1,0.05): hi below the true gap, 15 terms (odd)": (
            _set_gap(_honest("gap", high), _below(_true_gap(high) / 2), _below(_true_gap(high)), K=15),
            ["even integer"]),
        "a pair near t₀: lo above the true gap, 16 terms": (
            _set_gap(_honest("gap", pair_low), _above(_true_gap(pair_low)), _above(_true_gap(pair_low)) + F_(1, 1000),
                     K=16), [R_NOT_INSIDE]),
        "a pair near t₁: hi below the true gap, 16 terms": (
            _set_gap(_honest("gap", pair_high), _below(_true_gap(pair_high) / 2), _below(_true_gap(pair_high)), K=16),
            [R_NOT_INSIDE]),
        "an exact gap with its denominator lowered": (
            _set_gap(exact, Fraction(g.numerator, g.denominator - 1), Fraction(g.numerator, g.denominator - 1)),
            ["the exact gap is", "do not contain the exact gap"]),
        "an exact gap set to 0, G = 0 claimed": (_set_gap(exact, F_(0), F_(0), positive=False),
                                                ["the exact gap is", "do not contain the exact gap",
                                                 "G = 0 is claimed but the gap is not exactly 0"]),
    }


def _boundary_accepted() -> dict[str, dict]:
    """True statements at the closed boundaries: claims equal to the checker's own bounds."""
    out = {}
    for text in ("s=beta(0.05,1,0,1)", "sv=beta(1,0.05,0,1); sr=beta(1,0.05,0,1)"):
        cert = _honest("gap", text)
        g_lo, g_hi = _recomputed_gap(cert, 16)
        out[f"{text}: the claim is the recomputed bounds at 16 terms"] = _set_gap(cert, g_lo, g_hi, K=16)
    exact = _honest("gap", "s=discrete(1:0.25,2:0.75)")
    out["an exact gap that is not a terminating decimal"] = exact
    return out


def _recomputed_gap(cert: dict, K: int) -> tuple[Fraction, Fraction]:
    """The checker's bounds on G at K terms (through its public pieces; the closed forms above test them)."""
    law = _Law(cert["law"])
    inv_lo, inv_hi = bounds(law, K)
    (e1, e2), *rest = [(_Law.block_moment(leaves, 1), _Law.block_moment(leaves, 2)) for _, leaves in law.blocks]
    if not rest:
        quad = e1 * e1 / (e1 + e2)
    else:
        ((f1, f2),) = rest
        a00, a01, a11 = e1 + e2, e1 * f1, f1 + f2
        quad = (a11 * e1 * e1 - 2 * a01 * e1 * f1 + a00 * f1 * f1) / (a00 * a11 - a01 * a01)
    return law.zeta2 * (1 - inv_hi - quad), law.zeta2 * (1 - inv_lo - quad)


@cache
def _corpus():
    honest = {f"honest {kind} {text}": _honest(kind, text)
              for kind, text in (("alpha", "s=point(1)"), ("alpha", "s=uniform(0.5,4)"), ("alpha", "s=point(0.25)"),
                                 ("gap", "s=point(1)"), ("gap", "s=discrete(1:0.25,2:0.75)"),
                                 ("gap", "s=beta(0.05,1,0,1)"), ("gap", "s=beta(1,0.05,0,1)"),
                                 ("gap", "sv=beta(0.05,1,0,0.5); sr=beta(0.05,1,0,0.5)"))}
    return {**honest, **_boundary_accepted()}, _forged()


def _failures(check_fn) -> list[str]:
    """What ``check_fn`` gets wrong on the corpus: an honest or boundary certificate rejected, or a
    forged one accepted or rejected with other reasons than expected."""
    accepted, forged = _corpus()
    wrong = [f"rejected {name}: {check_fn(cert)[1]}" for name, cert in accepted.items() if not check_fn(cert)[0]]
    for name, (cert, fragments) in forged.items():
        ok, reasons = check_fn(copy.deepcopy(cert))
        if ok or len(reasons) != len(fragments) or not all(f in r for f, r in zip(fragments, reasons)):
            wrong.append(f"{name}: ok={ok}, reasons={reasons}")
    return wrong


def test_the_forged_certificates_are_false_by_an_independent_evaluation():
    """The forgeries are false statements, not just other ones: the root of s=point(1) is 1/2 (D ∝
    (2α − 1)^(2T−1)), and the gap bounds cross the 50-digit closed-form gap (which the honest
    certificates hold)."""
    for text in ("s=beta(0.05,1,0,1)", "s=beta(1,0.05,0,1)", "sv=beta(0.05,1,0,1); sr=beta(0.05,1,0,1)",
                 "sv=beta(1,0.05,0,1); sr=beta(1,0.05,0,1)"):
        claim = _honest("gap", text)["claim"]
        G = _true_gap(text)
        assert _mpf(Fraction(claim["lo_rational"])) <= G <= _mpf(Fraction(claim["hi_rational"])), text
    assert DerivativePolynomial(read_exact_law("s=point(1)"), 3).exact(ROOT) == 0
    _, forged = _corpus()
    for name in ("beta(0.05,1): lo above the true gap, 16 terms", "a pair near t₀: lo above the true gap, 16 terms"):
        text = "s=beta(0.05,1,0,1)" if "beta" in name else "sv=beta(0.05,1,0,1); sr=beta(0.05,1,0,1)"
        assert _mpf(Fraction(forged[name][0]["claim"]["lo_rational"])) > _true_gap(text)
    for name in ("beta(1,0.05): hi below the true gap, 16 terms", "a pair near t₁: hi below the true gap, 16 terms"):
        text = "s=beta(1,0.05,0,1)" if "beta" in name else "sv=beta(1,0.05,0,1); sr=beta(1,0.05,0,1)"
        assert _mpf(Fraction(forged[name][0]["claim"]["hi_rational"])) < _true_gap(text)


def test_every_forged_certificate_is_rejected_with_exactly_its_reasons_and_the_boundaries_are_accepted():
    assert _failures(check) == []


# ---------------------------------------------------------------------------------------------
# mutants: each relaxation of the checker must be caught by the corpus above
# ---------------------------------------------------------------------------------------------

MUTANTS = {
    "a zero sign counted as +": ("sign = (d > 0) - (d < 0)", "sign = (d >= 0) - (d < 0)"),
    "a zero sign counted as −": ("sign = (d > 0) - (d < 0)", "sign = (d > 0) - (d <= 0)"),
    "the zero test dropped": ("if d == 0:", "if False:"),
    "hi − lo ≤ width": ("if not hi - lo < width:", "if not hi - lo <= width:"),
    "lo ≤ hi": ("if not lo < hi:", "if not lo <= hi:"),
    "E[ζ²] ≥ 0": ("if not law.zeta2 > 0:", "if not law.zeta2 >= 0:"),
    "E[s(1+s)] ≥ 0": ("if not m > 0:", "if not m >= 0:"),
    "G > 0 with lo ≥ 0": ("if positive is True and not lo > 0:", "if positive is True and not lo >= 0:"),
    "the remainder ρ^(K+1)/t₀": ("rho**K / t0)", "rho**(K + 1) / t0)"),
    "the remainder ρ^K/t₁": ("rho**K / t0)", "rho**K / t1)"),
    "the remainder ρ^K/c": ("rho**K / t0)", "rho**K / c)"),
    "no remainder": ("(series / c + rho**K / t0)", "(series / c)"),
    "one term fewer": ("for k in range(K))", "for k in range(K - 1))"),
    "one term more": ("for k in range(K))", "for k in range(K + 1))"),
    "one term fewer, two modalities": ("for k in range(K) for j", "for k in range(K - 1) for j"),
    "one term more, two modalities": ("for k in range(K) for j", "for k in range(K + 1) for j"),
    "odd K allowed": ("K < 2 or K % 2 or", "K < 2 or"),
    "the lower bound not compared": ("not lo <= g_lo <= g_hi <= hi", "not g_lo <= g_hi <= hi"),
    "the upper bound not compared": ("not lo <= g_lo <= g_hi <= hi", "not lo <= g_lo <= g_hi"),
    "a claim on the bound refused": ("not lo <= g_lo <= g_hi <= hi", "not lo < g_lo <= g_hi <= hi"),
    "the Beta recurrence's q − p flipped": ("(k * out[k - 1] + (q - p) * out[k])", "(k * out[k - 1] + (p - q) * out[k])"),
}


def _mutant(old: str, new: str):
    source = CHECK_PY.read_text(encoding="utf-8")
    assert source.count(old) == 1, f"the mutant's pattern {old!r} is not once in check.py: update MUTANTS"
    module = types.ModuleType("check_mutant")
    exec(compile(source.replace(old, new), str(CHECK_PY), "exec"), module.__dict__)  # noqa: S102
    return module.check


@pytest.mark.parametrize("name", list(MUTANTS))
def test_a_relaxed_checker_fails_on_the_corpus(name):
    assert _failures(_mutant(*MUTANTS[name])), f"the mutant '{name}' passes every forged and honest certificate"


# ---------------------------------------------------------------------------------------------
# Hypothesis: random rational atomic laws
# ---------------------------------------------------------------------------------------------

quarters = st.integers(0, 12).map(lambda k: Fraction(k, 4))


@st.composite
def atomic_laws(draw):
    """``(LAW text, the root if it is rational)``: discrete laws on quarters with probabilities in
    twentieths; a third of them have one positive atom c (and maybe 0), whose root is 1/(1 + c)."""
    zeta = draw(st.sampled_from(["normal", "const(0.5)", "const(-1.5)"]))
    if draw(st.integers(0, 2)) == 0:
        c = draw(st.integers(1, 12).map(lambda k: Fraction(k, 4)))
        k = draw(st.integers(0, 15))
        dist = f"point({exact_decimal(c)})" if k == 0 else f"discrete(0:{exact_decimal(F_(k, 20))},{exact_decimal(c)}:{exact_decimal(1 - F_(k, 20))})"
        return f"s={dist}; zeta={zeta}", 1 / (1 + c)
    values = draw(st.lists(quarters, min_size=2, max_size=4, unique=True))
    assume(max(values) > 0)
    counts = draw(st.lists(st.integers(1, 6), min_size=len(values) - 1, max_size=len(values) - 1))
    probs = [F_(k, 20) for k in counts] + [F_(20 - sum(counts), 20)]
    assume(probs[-1] > 0)
    text = "s=discrete(" + ",".join(f"{exact_decimal(v)}:{exact_decimal(p)}" for v, p in zip(values, probs)) + ")"
    return f"{text}; zeta={zeta}", None


def _alpha_true(poly: DerivativePolynomial, lo: Fraction, hi: Fraction, width: Fraction) -> bool:
    """The statement 'α_T is unique and lo < α_T < hi, hi − lo < width', decided by the certifier's own
    polynomial (D strictly increasing, so: D(lo) < 0 < D(hi))."""
    return lo < hi and hi - lo < width and poly.sign(lo) < 0 < poly.sign(hi)


@settings(deadline=None)  # examples: the profile (25 by default, HYPOTHESIS_PROFILE=thorough for 300)
@given(atomic_laws(), st.integers(1, 4), st.data())
def test_honest_alpha_certificates_are_accepted_and_changed_ones_exactly_when_true(law_root, T, data):
    text, root = law_root
    cert = json.loads(json.dumps(certify_alpha_T(text, T)))
    assert check(cert) == (True, [])
    c = cert["claim"]
    lo, hi, width = Fraction(c["lo_rational"]), Fraction(c["hi_rational"]), Fraction(c["width"])
    step = hi - lo
    changes = {"past the root": (hi, hi + step), "before the root": (lo - step, lo),
               "lo's denominator lowered": (Fraction(lo.numerator, lo.denominator - 1), hi),
               "hi's denominator lowered": (lo, Fraction(hi.numerator, hi.denominator - 1)),
               "lo set to 0": (F_(0), hi), "hi set to 0": (lo, F_(0))}
    if root is not None:
        assert lo < root < hi  # the producer never puts an end on the root
        changes |= {"lo onto the root": (root, hi), "hi onto the root": (lo, root)}
    name = data.draw(st.sampled_from(sorted(changes)), label="change")
    new_lo, new_hi = changes[name]
    forged = _set_alpha(cert, new_lo, new_hi)
    poly = DerivativePolynomial(read_exact_law(text), T)
    ok, reasons = check(forged)
    assert ok is _alpha_true(poly, new_lo, new_hi, width), (name, reasons)
    if root is not None and root in (new_lo, new_hi):
        assert not ok and any("= 0 at" in r for r in reasons)


@settings(deadline=None)  # examples: the profile (25 by default, HYPOTHESIS_PROFILE=thorough for 300)
@given(atomic_laws(), st.data())
def test_honest_exact_gaps_are_accepted_and_changed_ones_rejected(law_root, data):
    """The gap of an atomic law is one rational G, certified exactly; any other value is false: G's
    denominator lowered, G with one atom's term of E[1/(1+s)] dropped, G set to 0 (when it is not 0),
    a claim G > 0 (when G = 0)."""
    text, _ = law_root
    cert = json.loads(json.dumps(certify_gap(text)))
    assert check(cert) == (True, [])
    G = Fraction(cert["claim"]["lo_rational"])
    law = _law(text)
    ((_, (_, values, probs)),) = law.pieces()
    kappa_term = probs[0] / (1 + values[0])  # E[1/(1+s)] loses this term: κ and G grow by E[ζ²]·it
    changes = {"a term dropped": (G + law.zeta2 * kappa_term, cert["claim"]["positive"])}
    if G.denominator > 1:
        changes["the denominator lowered"] = (Fraction(G.numerator, G.denominator - 1), G.numerator > 0)
    if G > 0:
        changes["set to 0"] = (F_(0), False)
    else:
        changes["G > 0 claimed at G = 0"] = (F_(0), True)
    name = data.draw(st.sampled_from(sorted(changes)), label="change")
    value, positive = changes[name]
    forged = _set_gap(cert, value, value, positive=positive)
    ok, reasons = check(forged)
    assert not ok, (name, value, G)
