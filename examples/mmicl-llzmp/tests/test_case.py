"""The plugin's own case type: α, κ, τ, ρ, λ as text."""
import math

import pytest
from hypothesis import given, settings, strategies as st

import mmicl
import mmicl.testing as mt
from mmicl_llzmp.case import CASE, case_text, parse_case


@pytest.fixture(scope="module", autouse=True)
def claims_loaded():
    mmicl.claims(plugins=["mmicl_llzmp.claims"])


@given(st.tuples(st.floats(1e-3, 1e4), st.one_of(st.just(math.inf), st.floats(1e-3, 1e6)), st.floats(1e-3, 1e4),
                 st.floats(0, 100), st.floats(0, 1e3)))
def test_a_case_written_as_text_reads_back_exactly(case):
    assert parse_case(case_text(case)) == case


@pytest.mark.parametrize("text, says", [
    ("alpha=10; kappa=0.5; tau=2; rho=0.01", "lambda missing"), ("alpha=x; kappa=1; tau=2; rho=0; lambda=0", "a number"),
    ("alpha=10; kappa=0.5; tau=-2; rho=0.01; lambda=0", "tau is a number from"),
    ("alpha=inf; kappa=0.5; tau=2; rho=0.01; lambda=0", "alpha is a number from"),
    ("alpha=10; kappa=0.5; tau=2; rho=0.01; lambda=0; beta=1", "unknown key"),
])
def test_a_text_that_is_not_a_case_is_one_line_with_the_reason(text, says):
    with pytest.raises(mmicl.CaseError, match=says):
        CASE.read(text)


def test_the_interpolation_threshold_without_ridge_is_a_hypothesis_not_met():
    r = mt.check_claim("llzmp.simulation", case="alpha=10; kappa=0.5; tau=1; rho=0.01; lambda=0", size="smoke")
    assert r.verdict == "hypothesis-not-met"


def test_the_asymptotics_hold_on_another_case():
    r = mt.check_claim("llzmp.asymptotics", case="alpha=2.35; kappa=1.5; tau=0.5; rho=0.1; lambda=0.1", size="smoke")
    assert r.verdict == "holds", r.verdict_reason


@settings(max_examples=3, derandomize=True)
@given(case=st.deferred(lambda: mt.cases("llzmp.asymptotics")))
def test_the_asymptotics_hold_on_drawn_cases(case):
    """Drawn from the case type's strategy (α, κ, τ, ρ, λ on small grids); the examples are fixed."""
    mt.assert_verdict("llzmp.asymptotics", case=case, expected={"holds"}, size="smoke")
