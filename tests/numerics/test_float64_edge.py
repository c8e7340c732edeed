"""Laws at the edge of float64 (issue 18): a law whose spread of 1 + s float64 cannot resolve gets a
one-line ``LawError`` from the numeric functions and ``inconclusive`` (with the reason) from the
claims: never ``fails``, a traceback, a hang or a silent 0.  The one test is
``TaskLaw.float64_unresolved``."""
from __future__ import annotations

import math

import mpmath as mp
import pytest

import mmicl
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.scalar import LawError
from mmicl.numerics.laws.task import FLOAT64_EPS, RESOLUTION_TOLERANCE

UNRESOLVED = ["s=uniform(0,1e-30)", "s=uniform(0,1e-300)"]
NARROW = ["s=uniform(1e-9,2e-9)", "s=uniform(0,1e-8)"]


# ---- the resolvability test itself --------------------------------------------------------------
def _law_with_spread(rho: float) -> str:
    """uniform(1, b) with (b − 1)/(3 + b) = ρ."""
    return f"s=uniform(1,{(1 + 3 * rho) / (1 - rho)!r})"


@pytest.mark.parametrize("T", [1, 10, 10_000])
def test_the_threshold_is_rho_1024_T_eps(T):
    need = T * FLOAT64_EPS / RESOLUTION_TOLERANCE
    assert parse_law(_law_with_spread(need * 1.01)).float64_unresolved(T) is None
    why = parse_law(_law_with_spread(need * 0.99)).float64_unresolved(T)
    assert why is not None and why.startswith("float64 cannot resolve") and "\n" not in why


def test_the_sampled_threshold_is_rho_to_the_T():
    T = 5
    need = (T * FLOAT64_EPS / RESOLUTION_TOLERANCE) ** (1 / T)  # ≈ 0.004
    assert 0.003 < need < 0.005
    assert parse_law(_law_with_spread(need * 1.01)).float64_unresolved(T, sampled=True) is None
    assert parse_law(_law_with_spread(need * 0.99)).float64_unresolved(T, sampled=True) is not None
    assert parse_law(_law_with_spread(need * 0.99)).float64_unresolved(T) is None  # the quadrature is fine


@pytest.mark.parametrize("text", ["s=uniform(0.5,4)", "s=twopoint(1,3,0.3)", "s=beta(0.5,2,0.2,3)",
                                  "sv=uniform(0,2); sr=point(1); d1=3; d2=2",
                                  "s=mix(0.3*point(0),0.7*uniform(1,3))"])
def test_the_default_laws_are_resolved_at_every_depth_the_claims_use(text):
    law = parse_law(text)
    assert law.float64_unresolved(100_000) is None
    assert law.float64_unresolved(10, sampled=True) is None


@pytest.mark.parametrize("text", ["s=point(1)", "s=point(1e-300)", "s=mix(0.5*point(0),0.5*point(2))"])
def test_one_value_of_s_is_its_own_case_not_unresolved(text):
    assert parse_law(text).float64_unresolved(10**6) is None


def test_the_spread_is_computed_from_s_not_from_rounded_1_plus_s():
    assert parse_law("s=uniform(0,1e-300)").spread() == pytest.approx(5e-301, rel=1e-12)
    assert parse_law("s=uniform(1e-9,2e-9)").float64_unresolved(1000) is None
    assert parse_law("s=uniform(1e-9,2e-9)").float64_unresolved(10_000) is not None
    assert parse_law("s=uniform(0,1e-8)").float64_unresolved(10_000) is None


# ---- the numeric functions: a one-line refusal -------------------------------------------------
CALLS = {
    "alpha_T": lambda law: mmicl.alpha_T(law, 10),
    "alpha_star": lambda law: mmicl.alpha_star(law),
    "excess_risk": lambda law: mmicl.excess_risk(law, 10),
    "excess_risk at a given alpha": lambda law: mmicl.excess_risk(law, 10, 1.0),
    "optimal_schedule": lambda law: mmicl.optimal_schedule(law, 10),
    "minimise_two": lambda law: mmicl.minimise_two(law, 10),
    "alpha_expansion": lambda law: mmicl.alpha_expansion(law),
    "best_lsa": lambda law: mmicl.best_lsa(law),
    "flow_one": lambda law: mmicl.flow_one(law, 10, 0.0),
}


@pytest.mark.parametrize("text", UNRESOLVED)
@pytest.mark.parametrize("name", sorted(CALLS))
def test_an_unresolved_law_is_refused_in_one_line(text, name):
    with pytest.raises(LawError) as err:
        CALLS[name](text)
    assert "float64 cannot resolve" in str(err.value) and "\n" not in str(err.value)


def test_at_finite_context_the_lsa_gap_needs_no_resolution():
    gap = mmicl.best_lsa("s=uniform(0,1e-300)", 100).gap
    assert gap == pytest.approx(5e-301, rel=1e-3)  # γ ≈ 0: the gap is E[s/(1+s)], no cancellation


@pytest.mark.parametrize("text", NARROW)
def test_a_narrow_resolved_law_gives_the_excess_in_log10(text):
    law = parse_law(text)
    T = 10
    a = mmicl.alpha_T(law, T)
    ex = mmicl.excess_risk(law, T)
    assert math.isfinite(ex.log10) and ex.log10 < -150  # far below 1: the log10 holds it, never a 0
    with mp.workdps(60):  # the same excess at the same α, in 60 digits
        am = mp.mpf(a)
        exact = law.s_law().expect_mp(lambda s: s / (1 + s) * (1 - am * (1 + s)) ** (2 * T), depth=T)
        assert ex.log10 == pytest.approx(float(mp.log10(exact)), abs=1e-5)
    lo, hi = law.signal_bounds()
    assert 1 / (1 + hi) <= a <= 1 / (1 + lo)


def test_alpha_T_mp_agrees_on_a_narrow_law():
    """It failed to converge there (its bracket was much wider than the ρ/T where D turns)."""
    law = "s=uniform(0,1e-8)"
    assert float(mmicl.alpha_T_mp(law, 1000)) == pytest.approx(mmicl.alpha_T(law, 1000), abs=4e-16)


def test_the_expansions_gap_does_not_cancel():
    ex = mmicl.alpha_expansion("s=uniform(1e-9,2e-9)")
    assert ex.rho == pytest.approx(5e-10, rel=1e-8)
    g = ex.gap(1000)
    assert 0 < g < ex.rho and g == pytest.approx(ex.alpha_star - ex.alpha_T(1000), abs=4 * FLOAT64_EPS)


# ---- the command line and a claim ---------------------------------------------------------------
def test_the_alpha_command_refuses_in_one_line_and_says_why_an_excess_is_0():
    import json

    from click.testing import CliRunner

    from mmicl.cli import main

    r = CliRunner().invoke(main, ["alpha", "--law", "s=uniform(0,1e-300)", "--T", "10", "--json"])
    assert r.exit_code == 2 and "float64 cannot resolve" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["alpha", "--law", "s=point(1)", "--T", "3", "--json"])
    row = json.loads(r.output)["rows"][0]
    assert row["excess"] == 0.0 and "α_T = 1/(1+s)" in row["log10_excess_null_reason"]


def test_a_claim_on_an_unresolved_law_is_inconclusive_with_the_reason(tmp_path):
    (res,) = mmicl.verify("thm6.2", law="s=uniform(0,1e-300)", out=tmp_path)
    assert all(h.met for h in res.hypotheses)
    assert res.verdict == "inconclusive"
    (c,) = [c for c in res.checks if c.method == "float64 resolution"]
    assert c.passed is None and "float64 cannot resolve" in c.detail
