"""The claims through mmicl's public API, and planted wrong formulas that must make them fail."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mmicl
import mmicl.testing as mt

CLAIMS_FILE = Path(__file__).resolve().parents[1] / "src" / "mmicl_llzmp" / "claims.py"


@pytest.fixture(scope="module", autouse=True)
def claims_loaded():
    mmicl.claims(plugins=["mmicl_llzmp.claims"])


def test_verify_smoke_holds(tmp_path):
    results = mmicl.verify(["llzmp.*"], size="smoke", plugins=["mmicl_llzmp.claims"], out=tmp_path)
    assert {r.id: r.verdict for r in results} == {"llzmp.asymptotics": "holds", "llzmp.simulation": "holds"}, \
        {r.id: r.verdict_reason for r in results}


@pytest.mark.slow
def test_verify_quick_all_hold(tmp_path):
    """The quick size, as ``results/quick/verdicts.json`` records it (half a minute on 2 cores: slow)."""
    results = mmicl.verify(["llzmp.*"], quick=True, plugins=["mmicl_llzmp.claims"], out=tmp_path)
    for r in results:
        assert r.verdict == "holds", (r.id, r.verdict_reason, r.error)
        json.dumps(r.to_json(), allow_nan=False)


def test_a_planted_wrong_marchenko_pastur_function_fails(monkeypatch):
    """M_κ with the aspect ratio inverted (κ read as 1/κ): the spectrum of sampled matrices refutes it."""
    from mmicl_llzmp import theory

    real = theory.M
    monkeypatch.setattr(theory, "M", lambda x, kappa: real(x, 1 / kappa))
    r = mt.check_claim("llzmp.asymptotics", size="smoke")
    assert r.verdict == "fails", r.verdict_reason
    assert any(c.passed is False and "tr(BᵀB/k + xI)" in c.name for c in r.checks)


def test_a_planted_wrong_error_formula_fails(monkeypatch):
    """e^ICL without its noise term ρ at the end: the ridge formula no longer meets the ridgeless closed forms."""
    from mmicl_llzmp import theory

    real = theory.e_icl
    monkeypatch.setattr(theory, "e_icl", lambda a, k, t, rho, lam: real(a, k, t, rho, lam) - rho)
    r = mt.check_claim("llzmp.asymptotics", size="smoke")
    assert r.verdict == "fails", r.verdict_reason


def test_loads_as_a_file():
    out = subprocess.run([sys.executable, "-c", "from mmicl.cli import main; main()", "claims",
                          "--plugin", str(CLAIMS_FILE), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in json.loads(out.stdout)["claims"]}
    assert rows["llzmp.simulation"]["origin"] == "plugin file claims.py"
