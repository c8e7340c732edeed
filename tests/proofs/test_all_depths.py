"""α_T at every depth (proofs/certificates/all_depths.py, tail.py): the exact end form, the certificates of
one law per end class, their bounds against α_T from exact 50-digit sums, forged certificates, and the laws
the proof does not cover."""
from __future__ import annotations

import copy
import json
import math
import shutil
import subprocess
import sys
from fractions import Fraction

import mpmath as mp
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from exact_sums import beta_piece, exact_alpha_T, uniform_piece
from mmicl.cli import main
from mmicl.numerics.asymptotics import alpha_expansion
from mmicl.numerics.strict_json import dumps
from mmicl.proofs.certificates import tail
from mmicl.proofs.certificates.all_depths import NotCertifiable, certify_all_depths, tail_bounds
from mmicl.proofs.certificates.check import _Law, check, derivative_value, law_from_text
from mmicl.proofs.certificates.document import exact_decimal

pytestmark = pytest.mark.xdist_group("all_depths")

F = Fraction
ONE_PER_CLASS = {  # LAW: the exact pieces (tests/support/exact_sums.py)
    "s=uniform(0.5,4)": [uniform_piece(F(1, 2), F(4))],                                   # finite densities
    "s=twopoint(1,3,0.3)": [("atom", F(3, 10), F(1)), ("atom", F(7, 10), F(3))],        # two atoms
    "s=beta(2,2,0.5,1)": [beta_piece(2, 2, F(1, 2), F(1))],                              # Beta ends, equal
    "s=beta(2,3,2.25,5.12)": [beta_piece(2, 3, F(9, 4), F(128, 25))],                    # the log form
    "s=mix(0.3*point(4),0.7*uniform(0.5,4))": [("atom", F(3, 10), F(4)),                 # atom + density
                                               uniform_piece(F(1, 2), F(4), F(7, 10))],
}


def _law(text: str) -> _Law:
    return _Law({"text": text, **law_from_text(text)})


@pytest.fixture(scope="module")
def certs() -> dict:
    return {text: json.loads(dumps(certify_all_depths(text))) for text in ONE_PER_CLASS}


# ---------------------------------------------------------------------------------------------
# the exact end form and the expansion
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [*ONE_PER_CLASS, "s=uniform(0,2)", "s=beta(3,1,0,2)",
                                  "s=mix(0.3*point(0.5),0.7*beta(2,2,0.5,4))"])
def test_the_end_form_is_e_s_r_n_exactly(text):
    """r_b^n n^−ν_b B_b − |r_a|^n n^−ν_a B_a equals E[s r^n] (the checker's Beta-moment recurrence), exactly."""
    law = _law(text)
    e = tail.ends(law.pieces())
    for T in (1, 2, 5, 12):
        n = 2 * T - 1
        for alpha in (e.alpha_star * F(97, 100), e.alpha_star, e.alpha_star * F(103, 100)):
            Bb, Ba, rb, ra = tail._ends_B(e, tail.LambdaPoly.lift(e.alpha_star - alpha), F(1, n), 0)
            value = (rb.coef(0, 0).constant() ** n * F(n) ** -e.nu_b * Bb.coef(0, 0).constant()
                     - ra.coef(0, 0).constant() ** n * F(n) ** -e.nu_a * Ba.coef(0, 0).constant())
            assert value == derivative_value(law, T, alpha) / (2 * T * law.zeta2), (text, T, alpha)


@pytest.mark.parametrize("text", ONE_PER_CLASS)
def test_the_certificates_expansion_is_the_derived_one(text):
    """Two derivations of the first two orders: theory/asymptotics.py's end balance (SymPy, in n = 2T − 1)
    and the certificate's, which solves F = O(3) on the exact end form.  They agree to the rounding of
    the float64 evaluation (a few ulps of the first order)."""
    e = tail.ends(_law(text).pieces())
    C, E2, E1, E0 = tail.expansion(e)
    lam = math.log(e.lambda_ratio())
    ex = alpha_expansion(text)
    for T in (10**3, 10**5, 10**7):
        n, L = 2 * T - 1, math.log(2 * T - 1)
        ev = [sum(float(c) * lam**k for k, c in p.c.items()) for p in (C, E2, E1, E0)]
        ours = (float(e.A) * L + ev[0]) / n + (ev[1] * L * L + ev[2] * L + ev[3]) / n**2
        assert abs(ours - ex.gap(T, 2)) <= 64 * 2.0**-52 * abs(ex.term(T, 1)), (T, ours, ex.gap(T, 2))


def test_log_bounds_hold_the_logarithm():
    for q in (F(1), F(2), F(8), F(512, 225), F(1, 3), F(10**30 + 7, 3), F(127)):
        b = tail.log_bounds(q)
        with mp.workdps(120):
            x = mp.log(mp.mpf(q.numerator) / q.denominator)
            assert mp.mpf(b.lo.numerator) / b.lo.denominator <= x <= mp.mpf(b.hi.numerator) / b.hi.denominator
        assert b.hi - b.lo < F(1, 2**240)


@given(st.lists(st.fractions(-5, 5, max_denominator=10**6), min_size=4, max_size=4), st.floats(0, 1), st.floats(0, 1))
def test_interval_arithmetic_encloses_every_point_result(ends, s, t):
    a, b = tail.Interval(min(ends[:2]), max(ends[:2])), tail.Interval(min(ends[2:]), max(ends[2:]))
    x, y = a.lo + (a.hi - a.lo) * F(s), b.lo + (b.hi - b.lo) * F(t)
    for box, point in ((a + b, x + y), (a - b, x - y), (a * b, x * y), (a * a * b, x * x * y)):
        assert box.contains(point)
    if not b.lo <= 0 <= b.hi:
        assert b.recip().contains(1 / y)


# ---------------------------------------------------------------------------------------------
# the certificates and their bounds
# ---------------------------------------------------------------------------------------------


def test_every_certificate_checks_and_says_which_side(certs):
    for text, cert in certs.items():
        ok, reasons = check(cert)
        assert ok, (text, reasons)
    assert certs["s=uniform(0.5,4)"]["claim"]["statement"] == "α_T < α* for every T ≥ 1"
    # the log form: the bottom end's density vanishes more slowly (exponent 1 against 2), so α_T > α*
    assert certs["s=beta(2,3,2.25,5.12)"]["claim"]["tail_side"] == "above"
    assert F(certs["s=beta(2,3,2.25,5.12)"]["claim"]["ends"]["A"]) < 0


@pytest.mark.parametrize("text", ONE_PER_CLASS)
def test_the_bounds_hold_alpha_T_from_exact_sums(certs, text):
    """lo(T) < α* − α_T < hi(T) at the first tail depth and far beyond it, α_T from exact 50-digit sums;
    and far out the bound is much narrower than the gap itself (it decides the side)."""
    cert = certs[text]
    T0 = cert["claim"]["T0"]
    ex = alpha_expansion(text)
    star = F(cert["claim"]["alpha_star"])
    with mp.workdps(50):
        for T in (T0, 4 * T0, 10**4, 10**6):
            gap = mp.mpf(star.numerator) / star.denominator - exact_alpha_T(ONE_PER_CLASS[text], T, ex.alpha_T(T))
            lo, hi = tail_bounds(cert, T)
            assert lo < gap < hi, (T, lo, float(gap), hi)
        assert hi - lo < 1e-4 * abs(float(gap))


def test_below_the_tail_the_finite_enclosures_are_the_bounds(certs):
    cert = certs["s=twopoint(1,3,0.3)"]
    law = _law("s=twopoint(1,3,0.3)")
    star = F(cert["claim"]["alpha_star"])
    for T in (1, cert["claim"]["T0"] - 1):
        lo, hi = tail_bounds(cert, T)
        assert derivative_value(law, T, star - F(hi) * (1 + F(1, 10**9))) < 0 < derivative_value(law, T, star - F(lo) * (1 - F(1, 10**9)))


# ---------------------------------------------------------------------------------------------
# forged certificates: each is rejected, for its own reason
# ---------------------------------------------------------------------------------------------


def _forge(cert: dict, edit) -> dict:
    out = copy.deepcopy(cert)
    edit(out["claim"], out)
    return out


def _shorter_T0(claim, cert, T0=5):
    claim["T0"] = T0
    claim["x0"] = str(F(1, 2 * T0 - 1))
    claim["u0"] = str(tail.log_bounds(F(2 * T0 - 1)).hi / (2 * T0 - 1))
    claim["sides"] = claim["sides"][: T0 - 1]
    cert["finite"] = cert["finite"][: T0 - 1]
    claim["statement"] = tail.statement(claim["sides"], claim["tail_side"], T0)


def _moved_finite(claim, cert, T=3, by=F(1, 1000)):
    """The enclosure of depth T moved up by 1/1000 (decimals kept exact): off α_T, so D(lo) > 0."""
    c = cert["finite"][T - 1]["claim"]
    for key in ("lo", "hi"):
        value = F(c[key + "_rational"]) + by
        c[key + "_rational"], c[key] = str(value), exact_decimal(value)


FORGERIES = {
    "a remainder one term short (no second order)": (
        lambda c, _: c.update(E2=["0"], E1=["0"], E0=["0"]), "not 0: δ_c is not the expansion to second order"),
    "a first-order constant off in its last digit": (
        lambda c, _: c.update(C=[str(F(c["C"][0]) + F(1, 10**30)), *c["C"][1:]]), "not 0"),
    "K an eighth of what was proved": (lambda c, _: c.update(K=str(F(c["K"]) / 8)), "do not all have the sign"),
    "a negative K (the bounds swapped)": (lambda c, _: c.update(K=str(-F(c["K"]))), "is not > 0"),
    "T0 too small for its K": (_shorter_T0, "take a larger"),
    "the tail's side flipped": (
        lambda c, _: c.update(tail_side={"below": "above", "above": "below"}[c["tail_side"]],
                              statement=tail.statement(c["sides"], {"below": "above", "above": "below"}[c["tail_side"]],
                                                       c["T0"])), "is not proved"),
    "a finite depth's side flipped": (
        lambda c, _: c.update(sides=[{"below": "above", "above": "below"}[c["sides"][0]], *c["sides"][1:]]),
        "is not above"),
    "the statement overstated": (lambda c, _: c.update(statement="α_T > α* for every T ≥ 1"), "is not what the sides prove"),
    "a finite enclosure moved off α_T": (_moved_finite, "T = 3: D(lo) has sign +1"),
    "a finite depth missing": (lambda c, cert: cert.update(finite=cert["finite"][1:]), "T = 1, 2, …, T0 − 1"),
    "another λ": (lambda c, _: c.update(lambda_ratio=str(F(c["lambda_ratio"]) + 1)), "λ = log"),
    "u0 below log(n0)/n0 (the box misses depths)": (lambda c, _: c.update(u0=str(F(c["u0"]) / 2)), "is not proved ≥"),
}


@pytest.mark.parametrize("name", FORGERIES)
def test_a_forged_all_depth_certificate_is_rejected(certs, name):
    edit, reason = FORGERIES[name]
    honest = certs["s=uniform(0.5,4)"]
    forged = _forge(honest, edit)
    ok, reasons = check(forged)
    assert not ok and any(reason in r for r in reasons), reasons


def test_the_forgeries_are_false_or_unproved_and_not_merely_different():
    """The T0 forgery is rejected because its box is too wide, not by bookkeeping: at T0 = 5 the best K
    the certifier can find fails, while the honest T0 passes."""
    e = tail.ends(_law("s=uniform(0.5,4)").pieces())
    C, E2, E1, E0 = tail.expansion(e)
    coeffs = tail.coefficient_intervals({"C": C, "E2": E2, "E1": E1, "E0": E0}, tail.log_bounds(e.lambda_ratio()))
    from mmicl.proofs.certificates.all_depths import _find_K

    assert _find_K(e, coeffs, F(1, 9), tail.log_bounds(F(9)).hi / 9) is None


def _coeffs(e):
    C, E2, E1, E0 = tail.expansion(e)
    return tail.coefficient_intervals({"C": C, "E2": E2, "E1": E1, "E0": E0}, tail.log_bounds(e.lambda_ratio()))


def test_the_box_enclosure_holds_the_coefficients_at_every_point_of_the_box():
    """Taylor's theorem puts ξ anywhere on the segment: the enclosure must hold c_ij(ξ) at interior points."""
    e = tail.ends(_law("s=mix(0.3*point(4),0.7*uniform(0.5,4))").pieces())
    coeffs = _coeffs(e)
    x0, u0 = F(1, 31), tail.log_bounds(F(31)).hi / 31
    box = tail.box_cubic(e, coeffs, F(4), -1, x0, u0)
    for fx, fu in ((F(0), F(0)), (F(1, 3), F(1, 2)), (F(1), F(0)), (F(1, 2), F(1))):
        here = tail.box_cubic(e, coeffs, F(4), -1, x0 * fx, u0 * fu)  # point boxes [0, x] × [0, u] hold (x, u)
        point = tail._F(e, coeffs["C"], coeffs["E2"], coeffs["E1"], coeffs["E0"], F(4), -1, tail.Interval(x0 * fx),
                        tail.Interval(u0 * fu), 3, tail.Interval(0), tail.Interval(0))
        for k, c in box.items():
            mid = point.coef(*k)
            assert c.lo <= mid.lo and mid.hi <= c.hi, (k, fx, fu, c, mid)
            assert c.lo <= here[k].lo and here[k].hi <= c.hi


def test_every_third_order_coefficient_must_have_the_sign_not_only_c30():
    """On the log form with a tiny K, c₃₀ > 0 over the box but c₂₁ < 0: F's lower bound is not positive."""
    e = tail.ends(_law("s=beta(2,3,2.25,5.12)").pieces())
    cubic = tail.box_cubic(e, _coeffs(e), F(1, 2**30), -1, F(1, 511), tail.log_bounds(F(511)).hi / 511)
    assert cubic[(3, 0)].lo > 0 and cubic[(2, 1)].hi < 0
    assert not tail.cubic_sign_ok(cubic, -1)


def test_the_tail_side_counts_the_terms_after_the_first_order():
    """With a remainder constant too large for the box of T0 the side is not decided, though δ_c > 0."""
    e = tail.ends(_law("s=uniform(0.5,4)").pieces())
    C, E2, E1, E0 = tail.expansion(e)
    coeffs = tail.coefficient_intervals({"C": C, "E2": E2, "E1": E1, "E0": E0}, tail.log_bounds(e.lambda_ratio()))
    n0 = 127
    assert tail.tail_side(e, coeffs, F(8), n0, tail.log_bounds(F(n0))) == "below"
    assert tail.tail_side(e, coeffs, F(10**6), n0, tail.log_bounds(F(n0))) is None


# ---------------------------------------------------------------------------------------------
# laws outside the proof, the command, the standalone checker
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, why", [
    ("s=beta(2.5,3,1,2)", "non-integer exponent"),
    ("s=discrete(1:0.2,2:0.3,3:0.5)", "inside the support"),
    ("s=mix(0.5*uniform(1,2),0.5*uniform(1,3))", "not the whole support"),
    ("sv=uniform(0,1);sr=uniform(0,1)", "two continuous modalities"),
    ("s=point(2)", "constant"),
])
def test_a_law_outside_the_proof_gets_a_one_line_reason(text, why):
    with pytest.raises(NotCertifiable, match=why) as err:
        certify_all_depths(text)
    assert "\n" not in str(err.value)


def test_the_command_certifies_every_depth_and_says_why_not(tmp_path):
    out = tmp_path / "all.json"
    r = CliRunner().invoke(main, ["certify", "--law", "s=twopoint(1,3,0.3)", "--all-T", "--json", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["checked"] and doc["all_T"]["statement"] == "α_T < α* for every T ≥ 1"
    assert all(b["lo"] < b["hi"] for b in doc["all_T"]["bounds"])
    r = CliRunner().invoke(main, ["certify", "--law", "s=beta(2.5,3,1,2)", "--all-T"])
    assert r.exit_code == 1 and "not certified: the all-depth proof does not cover this" in r.output, r.output
    r = CliRunner().invoke(main, ["certify", "--law", "s=beta(2.5,3,1,2)", "--T", "3", "--all-T", "--json"])
    assert r.exit_code == 1, r.output  # α_T at T = 3 certified, every depth not: still a failure, as documented
    doc = json.loads(r.output)
    assert doc["checked"] and doc["all_T"]["certified"] is False

    alone = tmp_path / "alone"
    alone.mkdir()
    from mmicl.proofs.certificates import check as checker

    for module in (checker, tail):
        shutil.copy(module.__file__, alone)
    r = subprocess.run([sys.executable, "-I", str(alone / "check.py"), str(out)], capture_output=True, text=True,
                       cwd=str(alone), check=False)
    assert r.returncode == 0 and "at every depth" in r.stdout, r.stdout + r.stderr
