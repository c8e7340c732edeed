"""A claim's own kind of case (``mmicl.CaseType``): read before any claim runs, refused in one line,
recorded and compared; the z-check with its power; the hypothesis builders and strategies for
matrices, spectra and whole numbers."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings, strategies as st

import mmicl
import mmicl.testing as mt
from mmicl import hypotheses as hyp
from mmicl.cli import main
from mmicl.compare import compare


def _parse(text: str) -> float:
    if not text.startswith("sigma="):
        raise ValueError("the case is sigma=NUMBER")
    v = float(text[len("sigma="):])
    if not v > 0:
        raise ValueError(f"sigma is > 0, got {v}")
    return v


NOISE = mmicl.CaseType("a noise level σ", parse=_parse, text=lambda v: f"sigma={v!r}",
                       strategy=lambda: st.floats(0.1, 2.0), example="sigma=0.5")


@pytest.fixture
def noise_claim(clean_registry):
    @mmicl.claim("mine.noise", title="σ² ≥ 0", statement="the variance of a noise level is ≥ 0", case=NOISE)
    def evaluate(config):
        sigma = 1.0 if config.case_value is None else config.case_value
        return [], [mmicl.Check("σ² ≥ 0", "exact", sigma ** 2 >= 0, {"sigma": sigma})]
    return evaluate


def test_a_case_reaches_the_claim_parsed_and_is_recorded(noise_claim, tmp_path):
    r = mt.check_claim("mine.noise", case="sigma=0.25")
    assert r.verdict == "holds" and r.checks[0].numbers["sigma"] == 0.25
    r = mt.check_claim("mine.noise", case=0.75)  # an object: written as text by the case type
    assert r.checks[0].numbers["sigma"] == 0.75
    assert mt.check_claim("mine.noise").checks[0].numbers["sigma"] == 1.0  # no case: its own
    out = CliRunner().invoke(main, ["verify", "--claim", "mine.noise", "--case", "sigma=2", "--device", "cpu",
                                    "--out", str(tmp_path / "a")])
    assert out.exit_code == 0, out.output
    doc = json.loads((tmp_path / "a" / "verdicts.json").read_text())
    assert doc["case"] == "sigma=2" and "case sigma=2" in out.output


def test_a_case_the_claim_cannot_read_or_a_claim_without_a_case_type_is_refused_before_any_run(noise_claim,
                                                                                               tmp_path):
    r = CliRunner().invoke(main, ["verify", "--claim", "mine.noise", "--case", "sigma=-1", "--out", str(tmp_path / "b")])
    assert r.exit_code == 2 and "sigma is > 0, got -1.0" in r.output and "e.g. 'sigma=0.5'" in r.output
    assert not (tmp_path / "b").exists()
    r = CliRunner().invoke(main, ["verify", "--claim", "mine.noise", "--claim", "thm6.2", "--case", "sigma=1",
                                  "--out", str(tmp_path / "c")])
    assert r.exit_code == 2 and "claim 'thm6.2' takes no case" in r.output and not (tmp_path / "c").exists()
    with pytest.raises(mmicl.CaseError, match="not a noise level"):
        mt.check_claim("mine.noise", case="tau=1")
    with pytest.raises(mmicl.CaseError, match="takes no case"):
        mt.check_claim("thm6.2", case="sigma=1")
    with pytest.raises(mmicl.CaseError, match="takes no case"):
        mt.cases("thm6.2")


def test_a_case_type_is_checked_when_it_is_made_and_when_it_writes_a_case():
    with pytest.raises(TypeError, match="name"):
        mmicl.CaseType("", parse=_parse)
    with pytest.raises(TypeError, match="parse is a function"):
        mmicl.CaseType("x", parse="sigma")
    with pytest.raises(mmicl.ClaimError, match="case is an mmicl.CaseType"):
        mmicl.Claim("mine.x", "t", "s", lambda c: ([], []), case="sigma")
    bad = mmicl.CaseType("a noise level", parse=_parse, text=lambda v: f"s={v}")
    with pytest.raises(mmicl.CaseError, match="not a noise level"):  # its text does not read back
        bad.as_text(0.5)
    assert NOISE.as_text(0.5) == "sigma=0.5" and NOISE.read("sigma=0.5") == 0.5


def test_two_runs_on_different_cases_compare_only_their_verdicts():
    doc = {"schema_version": 1, "seed": 0, "size": "smoke", "case": "sigma=1",
           "claims": [{"id": "mine.noise", "verdict": "holds", "evidence": {
               "checks": [{"name": "σ² ≥ 0", "passed": True, "numbers": {"sigma": 1.0}}]}}]}
    other = json.loads(json.dumps(doc))
    other["case"] = "sigma=2"
    other["claims"][0]["evidence"]["checks"][0]["numbers"]["sigma"] = 2.0
    result = compare(doc, other)
    assert ("case", "sigma=1", "sigma=2") in result.differences and not result.numbers_compared
    assert result.regressions == []


@settings(max_examples=5, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.deferred(lambda: mt.cases("mine.noise")))  # drawn once the fixture has registered the claim
def test_cases_draws_from_the_case_type_and_check_claim_takes_what_it_draws(noise_claim, case):
    assert 0.1 <= case <= 2.0
    assert mt.check_claim("mine.noise", case=case).checks[0].numbers["sigma"] == case


# ------------------------------------------------------------------------------------------------
# the z-check with its power
# ------------------------------------------------------------------------------------------------


def test_rejection_power_is_the_false_alarm_rate_at_no_difference_and_matches_a_simulation():
    from scipy.stats import norm

    assert mmicl.rejection_power(0.0, 1.0, 3.0) == pytest.approx(2 * norm.sf(3.0), rel=1e-12)
    rng = np.random.default_rng(0)
    n = 200_000
    for delta, se, k in ((0.5, 0.1, 3.0), (0.2, 0.1, 2.0), (-0.35, 0.1, 3.0)):
        z = rng.normal(delta / se, 1.0, n)
        rate = float(np.mean(np.abs(z) > k))
        p = mmicl.rejection_power(delta, se, k)
        assert abs(rate - p) <= 5 * math.sqrt(p * (1 - p) / n) + 1e-12, (delta, rate, p)  # 5 binomial se
    assert mmicl.rejection_power(0.1, 0.0, 3.0) == 1.0 and mmicl.rejection_power(0.0, 0.0, 3.0) == 0.0


def test_a_z_check_passes_only_with_power_and_fails_whatever_the_power():
    ok = mmicl.z_check("mean = 1", (1.001, 0.01), 1.0, detect=0.1)  # power at 0.1: ≈ 1
    assert ok.passed is True and ok.numbers["power_at_detect"] > 0.99
    weak = mmicl.z_check("mean = 1", (1.001, 0.1), 1.0, detect=0.1)  # power at 0.1 below 0.8
    assert weak.passed is None and "undecided: power" in weak.detail
    far = mmicl.z_check("mean = 1", (2.0, 0.1), 1.0, detect=0.1)  # |z| = 10 > 3, low power or not
    assert far.passed is False
    est = mmicl.Estimate.of(np.random.default_rng(1).normal(0.0, 1.0, 10_000))
    from_estimate = mmicl.z_check("mean = 0", est, 0.0, detect=0.2)
    assert from_estimate.numbers["se"] == pytest.approx(est.se) and from_estimate.passed in (True, False)
    assert from_estimate.sampled and from_estimate.se == {"mean": "se"}
    for bad in ({"detect": 0.0}, {"detect": 0.1, "power": 1.0}, {"detect": math.nan}):
        with pytest.raises(ValueError):
            mmicl.z_check("x", (0.0, 1.0), 0.0, **bad)
    with pytest.raises(TypeError, match="Estimate or"):
        mmicl.z_check("x", "mean", 0.0, detect=0.1)


# ------------------------------------------------------------------------------------------------
# hypothesis builders and strategies for matrices, spectra, whole numbers
# ------------------------------------------------------------------------------------------------


def test_the_case_hypothesis_builders_decide_from_the_numbers():
    assert hyp.positive_definite(np.diag([1.0, 2.0])).met
    assert not hyp.positive_definite(np.array([[1.0, 2.0], [2.0, 1.0]])).met  # eigenvalues −1, 3
    assert not hyp.positive_definite(np.array([[1.0, 1e-17], [0.0, 1.0]])).met  # not exactly symmetric
    assert "eigenvalues" in hyp.positive_definite(np.eye(2)).detail
    assert hyp.spectrum_within(np.diag([1.0, 10.0]), 1.0, 10.0).met
    assert not hyp.spectrum_within(np.diag([1.0, 10.5]), 1.0, 10.0).met
    assert hyp.integer_in(5, 1).met and hyp.integer_in(np.int64(5), 1, 5).met
    assert not hyp.integer_in(5.0, 1).met and not hyp.integer_in(True, 0).met and not hyp.integer_in(0, 1).met
    with pytest.raises(ValueError, match="square"):
        hyp.positive_definite(np.ones((2, 3)))


@given(lam=mt.spectra(st.integers(1, 5), 0.5, 50.0))
def test_spectra_are_sorted_and_in_range(lam):
    assert list(lam) == sorted(lam) and all(0.5 <= v <= 50.0 for v in lam)


@given(m=mt.positive_definite_matrices(st.integers(1, 5), 0.5, 50.0))
def test_positive_definite_matrices_are_symmetric_with_their_spectrum_in_range(m):
    d = m.shape[0]
    ev = np.linalg.eigvalsh(m)
    slack = 10 * d * np.finfo(float).eps * 50.0  # the rounding of Q·diag(λ)·Qᵀ, as the docstring states
    assert np.array_equal(m, m.T) and ev[0] >= 0.5 - slack and ev[-1] <= 50.0 + slack
    assert hyp.positive_definite(m).met


def test_the_strategies_refuse_ranges_float64_cannot_keep():
    from hypothesis.errors import InvalidArgument

    for lo, hi in ((0.0, 1.0), (2.0, 1.0), (1e-9, 1.0)):
        with pytest.raises(InvalidArgument):
            mt.positive_definite_matrices(2, lo, hi)
