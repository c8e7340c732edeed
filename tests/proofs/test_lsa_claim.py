"""Claim thm4.1: every check can fail, says inconclusive when its Monte Carlo cannot decide, and the
claim reports hypothesis-not-met where the covariance does not vary.  Tiny sizes; the end-to-end
quick claim is marked slow."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from mmicl.numerics import lsa
from mmicl.numerics.estimate import Estimate
from mmicl.numerics.laws.language import parse_law
from mmicl.proofs.claims import lsa as C

torch.set_num_threads(1)

UNIFORM = "s=uniform(0.5,4)"
DISCRETE = "s=discrete(0.5:0.3,1:0.3,4:0.4); d1=2; d2=1"  # exact sums: the closed form is instant


# ------------------------------------------------------------------ closed form


def test_closed_form_check_passes_on_the_exact_values_and_fails_on_wrong_ones():
    law = parse_law(DISCRETE)
    for n in (None, 5):
        best = lsa.best_lsa(law, n)
        ok, tol = C._closed_form_check(law, n)
        assert ok.passed is True and 0 < tol < 1e-12
        assert C._closed_form_check(law, n, gap=best.gap * (1 + 1e-9), gamma=best.gamma)[0].passed is False
        bad = best.gamma.copy()
        bad[0] += 1e-9
        assert C._closed_form_check(law, n, gap=best.gap, gamma=bad)[0].passed is False


def test_closed_form_on_a_per_modality_law_and_where_it_does_not_apply():
    law = parse_law("sv=uniform(0,2); sr=point(1); zeta=rademacher; d1=2; d2=3")
    check, _ = C._closed_form_check(law, 20)
    assert check.passed is True and len(check.numbers["closed_form_gamma_blocks"]) == 2
    assert lsa.block_closed_form_applicable(parse_law("sv=uniform(0,2); sr=uniform(1,2)"), None) is not None


# ------------------------------------------------------------------ Monte Carlo of the real layer


@pytest.mark.parametrize("n", [None, 10])
def test_mc_risk_check_can_pass_fail_and_be_inconclusive(n):
    law = parse_law(UNIFORM)
    best = lsa.best_lsa(law, n)
    args = (law, n, best.gamma)
    good, est = C._mc_risk_check(*args, best.lsa_risk, best.gap, 20_000, seed=1)
    assert good.passed is True and est.se > 0 and est.samples == 20_000
    assert C._mc_risk_check(*args, best.lsa_risk, 1.3 * best.gap, 20_000, seed=1)[0].passed is False
    assert C._mc_risk_check(*args, best.lsa_risk + 0.1, best.gap, 20_000, seed=1)[0].passed is False
    assert C._mc_risk_check(*args, best.lsa_risk, best.gap, 60, seed=1)[0].passed is None


@pytest.mark.parametrize("n", [None, 10])
def test_stationarity_check_can_pass_fail_and_be_inconclusive(n):
    law = parse_law(UNIFORM)
    best = lsa.best_lsa(law, n)
    assert C._stationarity_check(law, n, best.gamma, 20_000, seed=2).passed is True
    off = best.gamma + np.array([0.05, 0.0])  # costs ≈ 0.05²·E[s(1+s)]/2 ≈ 0.01 in risk
    assert C._stationarity_check(law, n, off, 20_000, seed=2).passed is False
    off_diag = np.diag(best.gamma) + np.array([[0.0, 0.05], [0.0, 0.0]])  # not diagonal
    assert C._stationarity_check(law, n, off_diag, 20_000, seed=2).passed is False
    assert C._stationarity_check(law, n, best.gamma, 300, seed=2).passed is None


def test_conclusion_check():
    law = parse_law(UNIFORM)
    mc = lambda mean: Estimate(mean, 0.001, 1000)  # noqa: E731
    assert C._conclusion_check(law, 0.05, 1e-13, mc(0.05)).passed is True
    # a gap within its own rounding bound cannot be told from 0 by float64 on a law whose hypotheses
    # hold: undecided, not a refutation (a gap of exactly 0 is refuted only by an exact certificate,
    # `mmicl certify --gap`)
    assert C._conclusion_check(law, 1e-15, 1e-13, mc(0.05)).passed is None
    assert "float64 cannot resolve the gap" in C._conclusion_check(law, 1e-15, 1e-13, mc(0.05)).detail
    assert C._conclusion_check(law, 0.05, 1e-13, mc(0.002)).passed is None


# ------------------------------------------------------------------ training (verdict on given runs)


def _run(seed, mean, se, screen=0.47):
    return {"seed": seed, "screen_loss": screen, "diverged": False, "message": "", "continued": True,
            "difference": {"mean": mean, "se": se, "samples": 1000},
            "trained_test_risk": {"mean": 0.46 + mean, "se": 0.01, "samples": 1000}}


def _screened_out(seed, screen=0.7):
    return {"seed": seed, "screen_loss": screen, "diverged": False, "message": "", "continued": False}


def test_training_verdict_is_two_sided_reports_stalls_and_can_be_inconclusive():
    risk, gap = 0.46, 0.116
    verdict = lambda runs: C._training_verdict(runs, risk, gap, {})  # noqa: E731
    ok = verdict([_run(0, 1e-4, 2e-4), _run(1, 0.2, 0.01), _screened_out(2), _screened_out(3, 0.47)])
    assert ok.passed is True and ok.numbers["stalled_restarts"] == 1  # of the tested ones
    assert ok.numbers["far_above_at_screening"] == 1  # the screened-out one at 0.7
    assert verdict([_run(0, -1e-3, 2e-4)]).passed is False  # beats the exact optimum
    assert verdict([_run(0, 0.21, 0.01), _run(1, 0.2, 0.01), _screened_out(2)]).passed is False  # all stalled
    assert verdict([_run(0, 2e-3, 2e-4)]).passed is False  # training stalled short of the optimum
    assert verdict([_run(0, 1e-3, 0.05)]).passed is None  # 3 se > gap/2: cannot decide
    assert verdict([_screened_out(0), {**_screened_out(1), "diverged": True}]).passed is None  # nothing tested
    # the smoke size's short training: a best restart above the optimum is undecided, not a failure
    smoke = lambda runs: C._training_verdict(runs, risk, gap, {}, smoke=True)  # noqa: E731
    assert smoke([_run(0, 2e-3, 2e-4)]).passed is None
    assert smoke([_run(0, 0.21, 0.01), _run(1, 0.2, 0.01)]).passed is None
    assert smoke([_run(0, -1e-3, 2e-4)]).passed is False  # beating the exact optimum still fails
    assert smoke([_run(0, 1e-4, 2e-4)]).passed is True
    assert smoke([_run(0, 1e-3, 0.05)]).passed is None


def test_the_smoke_size_trains_so_thm41_decides_there(tmp_path):
    """At the smoke size (the default of property tests) the claim trains briefly and can hold:
    on its own law s ~ U(0.5, 4) every decisive check decides.  (On pilot seeds the smoke training
    reached the optimum on 48 of 48 runs over four laws; a best restart that does not is undecided,
    so this test fails only where the exact optimum is missed by more than k se of a test that
    resolves a tenth of the gap.)"""
    import mmicl.testing as mt

    r = mt.check_claim("thm4.1", law="s=uniform(0.5,4)", size="smoke", out=tmp_path)
    train = [c for c in r.checks if c.name.startswith("the trained full LSA")]
    assert r.verdict == "holds", (r.verdict_reason, [c.detail for c in train])
    n = train[0].numbers
    assert n["tested_restarts"] == 1 and n["screen_restarts"] == 4
    assert 3 * n["trained_minus_best_se"] < n["gap_at_n"] / 2  # the paired test resolves the gap


# ------------------------------------------------------------------ hypotheses and the claim


def test_zeta_fourth_moment():
    from mmicl.numerics.laws.task import ZetaLaw

    assert ZetaLaw("normal").fourth_moment() == 3.0
    assert ZetaLaw("rademacher").fourth_moment() == 1.0
    assert ZetaLaw("const", -2.0).fourth_moment() == 16.0
    assert ZetaLaw("samples", samples=(1.0, -2.0)).fourth_moment() == pytest.approx(8.5, rel=1e-15)


def test_hypotheses_are_computed_from_the_law():
    h = C.hypotheses(parse_law("s=uniform(0.5,4); zeta=const(2)"))
    assert all(x.met for x in h) and "E[ζ⁴] = 16" in h[1].detail
    h = C.hypotheses(parse_law("s=point(2)"))
    assert [x.met for x in h] == [True, True, False, False]
    h = C.hypotheses(parse_law("s=twopoint(0,2,0.5)"))  # Λ varies, but only through prompts without signal
    assert [x.met for x in h] == [True, True, True, False]
    h = C.hypotheses(parse_law("s=exponential(1)"))
    assert h[0].met is False


@pytest.mark.parametrize("law", ["s=point(2)", "s=twopoint(0,2,0.5)", "sv=point(1); sr=point(0.5)",
                                 "s=exponential(1)"])
def test_claim_says_hypothesis_not_met_where_the_spectrum_of_lambda_does_not_vary(law, tmp_path):
    from mmicl.proofs.verify import verify

    (res,) = verify("thm4.1", law=law, out=tmp_path)
    assert res.verdict == "hypothesis-not-met"
    if "exponential" not in law:  # the evidence: the best LSA is Bayes (gap 0 = the closed form)
        (check,) = res.checks
        assert check.passed is True and check.numbers["gap"] <= check.numbers["gap_tolerance"]


def test_k_family_is_three_for_one_comparison_and_grows_with_more():
    assert C.k_family(1) == pytest.approx(3.0, abs=1e-12)
    assert 3.5 < C.k_family(15) < 4.0


@pytest.mark.slow
def test_quick_claim_holds_end_to_end(tmp_path):
    from mmicl.proofs.verify import verify

    (res,) = verify("thm4.1", quick=True, out=tmp_path)
    assert res.verdict == "holds", [(c.name, c.passed) for c in res.checks if c.passed is not True]


def test_thm41_on_a_law_without_signal_is_hypothesis_not_met_not_an_error(tmp_path):
    """s ≡ 0: the normal equations of the m-block are singular; the claim's hypotheses already decide
    it (found by the public law strategies: it was an 'error' verdict, a traceback before that)."""
    import mmicl.testing as mt

    r = mt.check_claim("thm4.1", law="s=point(0)", size="smoke", out=tmp_path)
    assert r.verdict == "hypothesis-not-met" and not r.error
