"""Certificates (``mmicl certify``, ``mmicl.proofs.certificates``): the enclosures are right, the
independent checker accepts them, and rejects every kind of tampering.

The checker is the half that must be able to fail: each tampering test changes one field and asserts
that the checker says why it refuses.  The exact polynomial is tied to theory/lca.py's derived excess,
and the exact gap to theory/lsa.py's derived closed form.  Timings are in benchmarks/bench_certify.py,
not here.
"""
from __future__ import annotations

import ast
import copy
import json
import shutil
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import assume, given
from hypothesis import strategies as st
from mmicl.numerics import lca
from mmicl.numerics.laws.language import parse_law
from mmicl.proofs.certificates.alpha import certify_alpha_T
from mmicl.proofs.certificates.check import _Law, check, derivative_value
from mmicl.proofs.certificates.derivative import DerivativePolynomial
from mmicl.proofs.certificates.exact_law import UnsupportedLawError, read_exact_law
from mmicl.proofs.certificates.gap import certify_gap
from mmicl.cli import main

pytestmark = pytest.mark.xdist_group("certificates")
"""One worker runs every test of this group (``--dist loadgroup``): they share what a fixture built once."""

CHECK_PY = Path(__file__).resolve().parents[2] / "proofs" / "certificates" / "check.py"
LAW = "s=uniform(0.5,4)"


def _cli(*args):
    return CliRunner().invoke(main, ["certify", *args])


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """``mmicl certify --law s=uniform(0.5,4) --T 100 --gap --json --out FILE``: (its JSON, the file)."""
    out = tmp_path_factory.mktemp("cert") / "c.json"
    r = _cli("--law", LAW, "--T", "100", "--gap", "--json", "--out", str(out))
    assert r.exit_code == 0, r.output
    return json.loads(r.output), out


@pytest.fixture(scope="module")
def alpha_cert(written):
    return json.loads(written[1].read_text())["certificates"][0]


@pytest.fixture(scope="module")
def gap_cert(written):
    return json.loads(written[1].read_text())["certificates"][1]


def _mp_fraction(x) -> Fraction:
    man, exp = x.man_exp
    return Fraction(int(man)) * Fraction(2) ** int(exp)


# ---------------------------------------------------------------------------------------------
# the command and what it writes
# ---------------------------------------------------------------------------------------------


def test_uniform_T100_is_certified_narrower_than_1e12_and_checked(written):
    out, path = written
    a = out["alpha_T"]
    lo, hi = Fraction(a["lo_rational"]), Fraction(a["hi_rational"])
    assert Fraction(a["lo"]) == lo and Fraction(a["hi"]) == hi  # the decimals are the rationals
    assert 0 < hi - lo < Fraction(1, 10**12)
    assert out["unique"] is True and out["checked"] is True and out["check_reasons"] == []
    assert out["certificate"] == str(path)
    ok, reasons = check(json.loads(path.read_text()))
    assert ok, reasons


def test_the_enclosure_contains_the_float64_and_the_mpmath_alpha_T(written):
    a = written[0]["alpha_T"]
    lo, hi = Fraction(a["lo_rational"]), Fraction(a["hi_rational"])
    assert lo < Fraction(lca.alpha_T(LAW, 100)) < hi
    assert lo < _mp_fraction(lca.alpha_T_mp(LAW, 100)) < hi


def test_the_gap_certificate_is_positive_and_holds_the_numerics_gap(written):
    from mmicl.numerics.lsa import best_lsa

    g = written[0]["gap"]
    lo, hi = Fraction(g["lo_rational"]), Fraction(g["hi_rational"])
    assert g["positive"] is True and g["exact"] is False and 0 < lo < hi
    tol = _numerics_gap_tolerance(parse_law(LAW))
    assert float(lo) - tol <= best_lsa(LAW).gap <= float(hi) + tol


def test_the_file_is_strict_json_with_every_exact_number_as_text(written):
    def refuse(token):
        raise AssertionError(f"{token} in a certificate")

    doc = json.loads(written[1].read_text(), parse_constant=refuse)
    for cert in doc["certificates"]:
        assert {"law", "proved", "claim", "arithmetic", "provenance"} <= set(cert)
        assert cert["law"]["text"] == LAW
        for key, value in cert["claim"].items():
            if key.endswith("rational") or key in ("lo", "hi"):
                assert isinstance(value, str) and Fraction(value) is not None
        assert cert["provenance"]["seconds"]["total"] > 0


@pytest.mark.subprocess
def test_the_checker_runs_as_a_module_and_standalone(written, tmp_path):
    path = str(written[1])
    r = subprocess.run([sys.executable, "-m", "mmicl.proofs.certificates.check", path], capture_output=True,
                       text=True, cwd="/", check=False)
    assert r.returncode == 0 and r.stdout.count("verified:") == 2, r.stdout + r.stderr
    alone = tmp_path / "check.py"
    shutil.copy(CHECK_PY, alone)  # outside the package: it must need nothing but the standard library
    r = subprocess.run([sys.executable, "-I", str(alone), path], capture_output=True, text=True, cwd=str(tmp_path),
                       check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    bad = tmp_path / "bad.json"
    doc = json.loads(written[1].read_text())
    doc["certificates"][0]["T"] = 99
    bad.write_text(json.dumps(doc))
    r = subprocess.run([sys.executable, "-I", str(alone), str(bad)], capture_output=True, text=True, check=False)
    assert r.returncode == 1 and "REJECTED" in r.stdout


@pytest.mark.parametrize("name, allowed", [
    ("check.py", {"__future__", "fractions", "json", "math", "sys", "importlib", "os"}),  # os, importlib: tail.py
    ("tail.py", {"__future__", "fractions", "math"}),
])
def test_the_checker_imports_only_the_standard_library(name, allowed):
    tree = ast.parse((CHECK_PY.parent / name).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "no relative imports"
            imported.add(node.module.split(".")[0])
    assert imported <= allowed


def test_a_narrow_width_and_the_text_output(tmp_path):
    r = _cli("--law", "s=beta(2,3,0.5,4); zeta=const(1.5)", "--T", "7", "--width", "1e-40", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    lo, hi = Fraction(out["alpha_T"]["lo_rational"]), Fraction(out["alpha_T"]["hi_rational"])
    assert 0 < hi - lo < Fraction(1, 10**40) and out["checked"] and out["certificate"] is None
    r = _cli("--law", LAW, "--T", "3")
    assert r.exit_code == 0 and "unique, in [" in r.output and "yes, by the independent checker" in r.output


@pytest.mark.parametrize("args, fragment", [
    (["--law", "s=exponential(1)", "--T", "3"], "unbounded support"),
    (["--law", "sv=uniform(0,1); sr=mix(0.5*point(1),0.5*exponential(2))", "--T", "3"], "unbounded support"),
    (["--law", "s=mix(0.3*point(1),0.6999999999*uniform(0,1))", "--T", "3"], "not exactly 1"),
    (["--law", "s=uniform(0,200)", "--gap"], "series terms"),
    (["--law", "s=point(0)", "--T", "3"], "not unique"),
    (["--law", LAW], "give --T"),
    (["--law", LAW, "--T", "1001"], "from 1 to 1000"),
    (["--law", LAW, "--T", "5", "--width", "0"], "[1e-100, 1]"),
    (["--law", "s=uniform(4,0.5)", "--T", "5"], "uniform"),
])
def test_unsupported_inputs_are_refused_with_the_reason(args, fragment):
    r = _cli(*args)
    assert r.exit_code == 2, r.output
    assert fragment in r.output
    if "unbounded" in fragment or "exactly 1" in fragment:
        assert "Certificates take laws with exact rational moments: point(c), uniform(a,b)" in r.output


def test_a_float_that_is_not_an_exact_decimal_is_refused_but_its_text_is_not():
    import mmicl

    with pytest.raises(UnsupportedLawError, match="not an exact decimal"):
        certify_alpha_T(mmicl.TaskLaw(s=mmicl.Uniform(0.1, 4)), 2)
    ok, reasons = check(certify_alpha_T(mmicl.TaskLaw(s=mmicl.Uniform(0.5, 4)), 2))
    assert ok, reasons
    assert read_exact_law("s=uniform(0.1,4)").blocks[0][1].a == Fraction(1, 10)


# ---------------------------------------------------------------------------------------------
# ties to the theory
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("T", [1, 2, 3, 5])
def test_the_exact_polynomial_and_the_checker_agree_with_theorys_derived_excess(T):
    """dL/dα from theory/lca.py (SymPy, differentiated here), averaged exactly over a law with atoms,
    against the certifier's polynomial and the checker's own evaluation."""
    import sympy as sp
    from mmicl.theory import lca as th
    from mmicl.theory.model import s

    text = "s=discrete(0:0.2,0.5:0.3,3:0.5); zeta=const(1.5)"
    law = read_exact_law(text)
    dL = sp.diff(th.one_parameter().excess_per_zeta2, th.alpha).subs(th.T, T)
    for a in (Fraction(3, 10), Fraction(-1, 7), Fraction(1)):
        want = sp.Rational(9, 4) * sum(sp.Rational(p) * dL.subs({s: sp.Rational(v), th.alpha: sp.Rational(a)})
                                       for v, p in (("0", "1/5"), ("1/2", "3/10"), ("3", "1/2")))
        want = Fraction(int(sp.numer(want)), int(sp.denom(want)))
        assert DerivativePolynomial(law, T).exact(a) == want
        assert derivative_value(_Law(law.to_json()), T, a) == want


def test_an_exact_gap_is_theorys_closed_form():
    """An atomic law: the certified gap equals theory/lsa.py's derived ``E[ζ²](κ − μ₁²/(μ₁ + μ₂))`` with
    the moments summed here over the atoms."""
    import sympy as sp
    from mmicl.theory.lsa import isotropic_best_gamma

    atoms, c = [(Fraction(1), Fraction(1, 4)), (Fraction(2), Fraction(3, 4))], Fraction(2)
    text = "s=discrete(" + ",".join(f"{_txt(v)}:{_txt(p)}" for v, p in atoms) + f"); zeta=const({_txt(c)})"
    moment = lambda f: sp.Rational(str(sum(p * f(v) for v, p in atoms)))
    closed = isotropic_best_gamma()
    mu1, mu2, kappa, z2 = closed["symbols"]
    want = closed["gap"].subs({mu1: moment(lambda v: v), mu2: moment(lambda v: v * v),
                               kappa: moment(lambda v: v / (1 + v)), z2: sp.Rational(str(c * c))})
    cert = certify_gap(text)
    assert cert["claim"]["exact"] is True and Fraction(cert["claim"]["lo_rational"]) == Fraction(str(want)) > 0
    assert check(cert)[0]


@pytest.mark.parametrize("law", ["s=point(2)", "s=twopoint(0,2,0.5)", "sv=point(1); sr=point(0.5)"])
def test_laws_without_a_gap_get_an_exact_zero(law):
    cert = certify_gap(law)
    assert cert["claim"]["lo_rational"] == cert["claim"]["hi_rational"] == "0"
    assert cert["claim"]["positive"] is False and check(cert)[0]


# ---------------------------------------------------------------------------------------------
# tampering: every claim the checker re-derives
# ---------------------------------------------------------------------------------------------


def _set(doc: dict, path: str, value):
    *head, last = path.split(".")
    for key in head:
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    doc[int(last) if isinstance(doc, list) else last] = value


def _shift(cert, by: Fraction):
    c = cert["claim"]
    for key in ("lo", "hi"):
        x = Fraction(c[f"{key}_rational"]) + by
        c[f"{key}_rational"], c[key] = str(x), _decimal(x)


def _decimal(x: Fraction) -> str:
    from mmicl.proofs.certificates.document import exact_decimal

    return exact_decimal(x)


ALPHA_TAMPERING = {
    "interval moved off the root": (lambda c: _shift(c, Fraction(1, 10**11)), "D(lo) has sign +1"),
    "lo and hi swapped": (lambda c: c["claim"].update(lo=c["claim"]["hi"], hi=c["claim"]["lo"],
                                                      lo_rational=c["claim"]["hi_rational"],
                                                      hi_rational=c["claim"]["lo_rational"]), "is not below hi"),
    "width claimed below hi − lo": (lambda c: _set(c, "claim.width", "1/100000000000000"), "is not below the width"),
    "decimal lo not the rational lo": (lambda c: _set(c, "claim.lo", "0.3068414522404"), "is not the rational"),
    "hi_minus_lo": (lambda c: _set(c, "claim.hi_minus_lo", "1/3"), "hi_minus_lo"),
    "law text": (lambda c: _set(c, "law.text", "s=uniform(0.5,5)"), "not the law of its text"),
    "law parameters": (lambda c: _set(c, "law.s.b", "5"), "not the law of its text"),
    "law text and parameters together": (lambda c: (_set(c, "law.text", "s=uniform(0.5,5)"),
                                                    _set(c, "law.s.b", "5")), "the enclosure needs"),
    "zeta": (lambda c: (_set(c, "law.text", "s=uniform(0.5,4); zeta=const(2)"),
                        _set(c, "law.zeta", {"family": "const", "c": "2"})), "E[ζ²] is 4"),
    "T": (lambda c: _set(c, "T", 99), "the enclosure needs"),
    "T as text": (lambda c: _set(c, "T", "100"), "T must be an integer"),
    "sign claim": (lambda c: _set(c, "derivative.at_lo.sign", 1), "recorded sign"),
    "value claim": (lambda c: _set(c, "derivative.at_hi.log10_abs", -500.0), "recorded log10"),
    "E[s(1+s)]": (lambda c: _set(c, "uniqueness.E[s(1+s)]", "1"), "E[s(1+s)] is"),
    "uniqueness fact": (lambda c: _set(c, "uniqueness.s_nonnegative", False), "s ≥ 0"),
    "format": (lambda c: _set(c, "format", "mmicl-certificate/0"), "format"),
    "kind": (lambda c: _set(c, "certificate", "alpha_star"), "unknown certificate kind"),
    "missing field": (lambda c: c.pop("uniqueness"), "malformed"),
}

GAP_TAMPERING = {
    "lower bound raised": (lambda c: (_set(c, "claim.lo_rational", c["claim"]["hi_rational"]),
                                      _set(c, "claim.lo", c["claim"]["hi"])), "not inside the claimed"),
    "fewer series terms": (lambda c: _set(c, "kappa.terms", 16), "not inside the claimed"),
    "odd series terms": (lambda c: _set(c, "kappa.terms", 15), "even integer"),
    "exact claimed": (lambda c: _set(c, "kappa.terms", None), "kappa.terms"),
    "moments": (lambda c: _set(c, "moments.blocks.0.E[S]", "2"), "block moments"),
    "gamma": (lambda c: _set(c, "moments.gamma.0", "1/3"), "γ"),
    "positivity": (lambda c: _set(c, "claim.positive", False), "not exactly 0"),
    "law": (lambda c: (_set(c, "law.text", "s=uniform(0.5,3)"), _set(c, "law.s.b", "3")), "block moments"),
}


def test_the_untampered_certificates_pass(alpha_cert, gap_cert):
    assert check(alpha_cert) == (True, [])
    assert check(gap_cert) == (True, [])


@pytest.mark.parametrize("kind, name", [("alpha_cert", n) for n in ALPHA_TAMPERING]
                         + [("gap_cert", n) for n in GAP_TAMPERING])
def test_a_tampered_certificate_is_rejected(request, kind, name):
    edit, fragment = (ALPHA_TAMPERING if kind == "alpha_cert" else GAP_TAMPERING)[name]
    cert = copy.deepcopy(request.getfixturevalue(kind))
    edit(cert)
    ok, reasons = check(cert)
    assert not ok and any(fragment in r for r in reasons), reasons


def test_an_exact_gap_that_is_tampered_is_rejected():
    cert = certify_gap("s=discrete(1:0.25,2:0.75)")
    assert check(cert)[0]
    off = str(Fraction(cert["claim"]["lo_rational"]) + Fraction(1, 10**6))
    cert["claim"]["lo_rational"] = cert["claim"]["hi_rational"] = off
    ok, reasons = check(cert)
    assert not ok and any("the exact gap is" in r for r in reasons)


def test_a_bundle_is_rejected_when_one_certificate_is(alpha_cert, gap_cert):
    assert check({"certificates": [alpha_cert, gap_cert]}) == (True, [])
    bad = copy.deepcopy(gap_cert)
    bad["claim"]["positive"] = False
    ok, reasons = check({"certificates": [alpha_cert, bad]})
    assert not ok and reasons[0].startswith("certificate 1 (lsa_gap)")
    for junk in ([], {}, {"certificates": []}, "x"):
        assert check(junk)[0] is False


# ---------------------------------------------------------------------------------------------
# random laws
# ---------------------------------------------------------------------------------------------

quarters = st.integers(0, 16).map(lambda k: Fraction(k, 4))
widths = st.integers(1, 12).map(lambda k: Fraction(k, 4))
shapes = st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(3, 2), Fraction(2), Fraction(3)])


def _txt(x: Fraction) -> str:
    return _decimal(x)


@st.composite
def dists(draw, mixtures: bool = True):
    kind = draw(st.sampled_from(["point", "discrete", "uniform", "beta"] + (["mix"] if mixtures else [])))
    if kind == "point":
        return f"point({_txt(draw(quarters))})"
    if kind == "uniform":
        a = draw(quarters)
        return f"uniform({_txt(a)},{_txt(a + draw(widths))})"
    if kind == "beta":
        a = draw(quarters)
        return f"beta({_txt(draw(shapes))},{_txt(draw(shapes))},{_txt(a)},{_txt(a + draw(widths))})"
    if kind == "discrete":  # probabilities in twentieths: exact decimals that sum to 1
        values = draw(st.lists(quarters, min_size=2, max_size=3))
        counts = draw(st.lists(st.integers(1, 8), min_size=len(values) - 1, max_size=len(values) - 1))
        probs = [Fraction(k, 20) for k in counts] + [Fraction(20 - sum(counts), 20)]
        return "discrete(" + ",".join(f"{_txt(v)}:{_txt(p)}" for v, p in zip(values, probs)) + ")"
    w = draw(st.integers(1, 9).map(lambda k: Fraction(k, 10)))
    return f"mix({_txt(w)}*{draw(dists(False))},{_txt(1 - w)}*{draw(dists(False))})"


@st.composite
def laws(draw):
    zeta = draw(st.sampled_from(["normal", "rademacher", "const(0.5)", "const(-1.5)"]))
    if draw(st.booleans()):
        return f"s={draw(dists())}; zeta={zeta}"
    return f"sv={draw(dists(False))}; sr={draw(dists(False))}; zeta={zeta}; d1=2; d2=3"


@given(laws(), st.integers(1, 6))
def test_every_certificate_of_a_random_law_rechecks_and_holds_the_float64_alpha_T(text, T):
    law = parse_law(text)
    assume(law.signal_bounds() is not None)  # s ≡ 0: no unique α_T (refused, tested above)
    cert = certify_alpha_T(text, T)
    ok, reasons = check(json.loads(json.dumps(cert)))
    assert ok, reasons
    lo, hi = Fraction(cert["claim"]["lo_rational"]), Fraction(cert["claim"]["hi_rational"])
    assert lo < Fraction(lca.alpha_T(law, T)) < hi and hi - lo < Fraction(1, 10**12)


@given(laws())
def test_every_gap_certificate_of_a_random_law_rechecks_and_holds_the_numerics_gap(text):
    from mmicl.numerics.lsa import best_lsa
    from mmicl.proofs.claims.lsa import zero_gap_expected

    law = parse_law(text)
    cert = certify_gap(text)
    ok, reasons = check(json.loads(json.dumps(cert)))
    assert ok, reasons
    lo, hi = Fraction(cert["claim"]["lo_rational"]), Fraction(cert["claim"]["hi_rational"])
    tol = _numerics_gap_tolerance(law)
    assert float(lo) - tol <= best_lsa(law).gap <= float(hi) + tol
    assert cert["claim"]["positive"] is (not zero_gap_expected(law))


def _numerics_gap_tolerance(law) -> float:
    """How far ``best_lsa``'s float64 gap may be from the exact one.  Its A and b are polynomial
    moments, which its Gauss rules integrate exactly; κ = E[s/(1+s)] is not, and the truncation of its
    rule is estimated by the same integral on the depth-2 rules (as ``thm4.1``'s closed-form check
    does).  Rounding of its K-node sums: ``(K + d²)·ε·E[ζ²]·(κ + bᵀA⁻¹b) ≤ (K + d²)·ε·E[ζ²]·2κ``
    (``bᵀA⁻¹b ≤ κ`` since the gap is ≥ 0)."""
    from mmicl.numerics.lsa import norm_blocks

    def kappa(depth: int) -> float:
        if law.s is not None:
            r = law.s.rule(depth)
            s, w = r.nodes, r.weights
        else:
            rv, rr = law.sv.rule(depth), law.sr.rule(depth)
            s = (rv.nodes[:, None] + rr.nodes[None, :]).ravel()
            w = (rv.weights[:, None] * rr.weights[None, :]).ravel()
        return float(w @ (s / (1 + s)))

    z2 = law.zeta.second_moment()
    K = norm_blocks(law).weights.size
    k1 = kappa(1)
    return z2 * abs(k1 - kappa(2)) + (K + law.d**2) * np.finfo(float).eps * z2 * 2 * k1


# ---------------------------------------------------------------------------------------------
# the width as the API takes it
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("width", [1e-12, "1e-12", np.float64(1e-12), np.float32(1e-12), np.array(1e-12),
                                   np.array(np.float32(1e-12)), Fraction(1, 10**12)])
def test_the_width_is_read_exactly_from_python_and_numpy_scalars(width):
    """A float or numpy floating scalar (or a 0-d array of one) is the decimal it prints as: 1e-12 is
    exactly 10^−12 in every precision."""
    from mmicl.proofs.certificates.alpha import check_width

    assert check_width(width) == Fraction(1, 10**12)
    cert = certify_alpha_T("s=point(1)", 2, width=width)
    assert cert["claim"]["width"] == "1/1000000000000" and check(cert)[0]


@pytest.mark.parametrize("width, fragment", [
    (True, "not the bool True"), (np.bool_(True), "not the bool"), (np.array(True), "not the bool"),
    (np.array([1e-12, 1e-12]), "an array of shape (2,)"), (np.float64("nan"), "got np.float64(nan)"),
    (np.float64(2.0), "[1e-100, 1]"), (np.float32(0), "[1e-100, 1]"), (None, "got None"), ("x" * 500, "..."),
])
def test_a_width_that_is_not_one_positive_number_is_refused_in_one_line(width, fragment):
    from mmicl.numerics.validate import InputError
    from mmicl.proofs.certificates.alpha import check_width

    with pytest.raises(InputError) as e:
        check_width(width)
    assert fragment in str(e.value) and "\n" not in str(e.value) and len(str(e.value)) < 200
