"""The thm6.2 / thm6.3 claims on laws outside their hypotheses, and a finding about two atoms."""
from __future__ import annotations

import pytest

from mmicl.numerics import lca
from mmicl.numerics.law_language import parse_law
from mmicl.proofs.registry import RunConfig, select


@pytest.mark.parametrize("claim, law", [
    ("thm6.2", "s=exponential(1)"),
    ("thm6.3", "s=exponential(1)"),
    ("thm6.3", "s=twopoint(1,3,0.3)"),
    ("thm6.3", "s=mix(0.3*point(0),0.7*point(2))"),
])
def test_claims_report_unmet_hypotheses(claim, law, tmp_path):
    (c,) = select([claim])
    result = c.run(RunConfig(quick=True, out=tmp_path, law=law))
    assert result.verdict == "hypothesis-not-met"
    assert any(not h.met for h in result.hypotheses)


def test_two_parameters_interpolate_two_atoms():
    """With s on two values, (α, β) can solve λ_k P_T(λ_k) = 1 at both: the two-parameter excess
    is 0 up to rounding (< 1e-25 of the one-parameter optimum's) already at T = 2."""
    law = parse_law("s=twopoint(1,3,0.3)")
    g, b = lca.minimise_two_residual(law, 2)
    two = lca.TwoParameterLoss(law, 2, "gamma-beta").terms(g, b)[0]
    one = lca.excess_risk(law, 2, lca.alpha_T(law, 2))
    assert two < 1e-25 * one
