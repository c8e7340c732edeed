"""The claims through mmicl's public API, and a planted wrong formula that must make them fail."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

import mmicl
import mmicl.testing as mt

CLAIMS_FILE = Path(__file__).resolve().parents[1] / "src" / "mmicl_mhm" / "claims.py"


@pytest.fixture(scope="module", autouse=True)
def claims_loaded():
    mmicl.claims(plugins=["mmicl_mhm.claims"])


def test_verify_smoke_runs_both_claims(tmp_path):
    """The smoke size (one case, d = 1): the derivation holds, training is not refuted (400 Adam steps
    may stop short of the resolution: inconclusive is an honest answer there)."""
    results = mmicl.verify(["mhm.*"], size="smoke", plugins=["mmicl_mhm.claims"], out=tmp_path)
    verdicts = {r.id: r.verdict for r in results}
    assert verdicts["mhm.onestep"] == "holds" and verdicts["mhm.trained"] in ("holds", "inconclusive"), verdicts


@pytest.mark.slow
def test_verify_quick_all_hold(tmp_path):
    """The quick size, as ``results/quick/verdicts.json`` records it (about 25 s on 2 cores: slow)."""
    results = mmicl.verify(["mhm.*"], quick=True, plugins=["mmicl_mhm.claims"], out=tmp_path)
    assert {r.id for r in results} == {"mhm.onestep", "mhm.trained"}
    for r in results:
        assert r.verdict == "holds", (r.id, r.verdict_reason, r.error)
        assert r.origin == "plugin module mmicl_mhm.claims"
        json.dumps(r.to_json(), allow_nan=False)
    trained = next(r for r in results if r.id == "mhm.trained")
    assert all(abs(c.numbers["paired_excess"]) <= 4 * c.numbers["se"] + c.numbers["slack"]
               for c in trained.checks if c.role == "decisive")


PLANT_CASE = "d=2; n=6; target=sign(z)"
"""One case at the quick size (200 000 prompts): where the planted formulas must be refuted."""


def test_a_planted_wrong_step_fails(monkeypatch):
    """The step one writes by analogy with linear regression, n/(n + d + 1), for every target: the
    Monte Carlo stationarity checks on sign(z) must say ``fails``."""
    from mmicl_mhm import theory

    real = theory.gamma_star
    monkeypatch.setattr(theory, "gamma_star", lambda g, sigma, n, noise=0.0: real(theory.z, sigma, n, noise))
    r = mt.check_claim("mhm.onestep", case=PLANT_CASE, size="quick")
    assert r.verdict == "fails", r.verdict_reason
    assert any(c.passed is False and "stationary" in c.name for c in r.checks)


def test_a_planted_wrong_second_moment_fails(monkeypatch):
    """M without its (1 − 1/n) share of B: the loss, its minimiser and BFGS all agree with each other,
    and only the Monte Carlo of the model itself can say that the formula is wrong."""
    from mmicl_mhm import theory

    real = theory.isotropic_moments

    def wrong(g):
        mo = dict(real(g))
        mo["m"] = sp.factor(mo["m"] - (1 - 1 / theory.n_sym) * mo["b"] + mo["b"] / 2)
        return mo

    monkeypatch.setattr(theory, "isotropic_moments", wrong)
    theory.compiled_isotropic.cache_clear()
    try:
        r = mt.check_claim("mhm.onestep", case=PLANT_CASE, size="quick")
    finally:
        theory.compiled_isotropic.cache_clear()
    assert r.verdict == "fails", r.verdict_reason
    assert all(c.passed for c in r.checks if c.method == "scipy.optimize")  # self-consistent: only the model refutes it


def test_loads_as_a_file():
    out = subprocess.run([sys.executable, "-c", "from mmicl.cli import main; main()", "claims",
                          "--plugin", str(CLAIMS_FILE), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in json.loads(out.stdout)["claims"]}
    assert rows["mhm.trained"]["origin"] == "plugin file claims.py"
