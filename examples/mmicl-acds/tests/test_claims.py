"""The claims through mmicl's public API, and planted wrong formulas that must make them fail."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp

import mmicl
import mmicl.testing as mt

CLAIMS_FILE = Path(__file__).resolve().parents[1] / "src" / "mmicl_acds" / "claims.py"


@pytest.fixture(scope="module", autouse=True)
def claims_loaded():
    mmicl.claims(plugins=["mmicl_acds.claims"])


def test_verify_smoke_runs_every_claim(tmp_path):
    """The smoke size (Σ = diag(1, 1/4), n = 8, L ≤ 2): the derivations and the fits hold."""
    results = mmicl.verify(["acds.*"], size="smoke", plugins=["mmicl_acds.claims"], out=tmp_path)
    verdicts = {r.id: r.verdict for r in results}
    assert verdicts == {"acds.onelayer": "holds", "acds.critical": "holds", "acds.layers": "holds"}, \
        {r.id: r.verdict_reason for r in results}


@pytest.mark.slow
def test_verify_quick_all_hold(tmp_path):
    """The quick size, the paper's d = 5, n = 20, L = 1 … 4, as ``results/quick/verdicts.json`` records it
    (a few minutes on 2 cores: slow)."""
    results = mmicl.verify(["acds.*"], quick=True, plugins=["mmicl_acds.claims"], out=tmp_path)
    assert {r.id for r in results} == {"acds.onelayer", "acds.critical", "acds.layers"}
    for r in results:
        assert r.verdict == "holds", (r.id, r.verdict_reason, r.error)
        assert r.origin == "plugin module mmicl_acds.claims"
        json.dumps(r.to_json(), allow_nan=False)


def test_a_planted_wrong_trace_moment_fails(monkeypatch):
    """E tr W² written nd(n + d), without its + 1: every step and loss computed from it is wrong, and the
    simulation of the contexts refutes it."""
    from mmicl_acds import theory

    real = theory.trace_moment.__wrapped__

    def wrong(k):
        m = real(k)
        return sp.expand(m - theory.n_sym * theory.d_sym) if k == 2 else m

    monkeypatch.setattr(theory, "trace_moment", wrong)
    theory._moments_at.cache_clear()
    try:
        r = mt.check_claim("acds.layers", size="smoke")
    finally:
        theory._moments_at.cache_clear()
    assert r.verdict == "fails", r.verdict_reason
    assert any(c.passed is False and "tr p(S)²" in c.name for c in r.checks)


def test_a_planted_wrong_step_is_not_a_critical_point(monkeypatch):
    """The steps of L-step GD taken all equal to the one-step optimum n/(n + d + 1): not a critical
    point of two layers, and the stationarity check must say so."""
    from mmicl_acds import theory

    real = theory.best_steps

    def wrong(L, n, d):
        out = dict(real(L, n, d))
        out["steps"] = [n / (n + d + 1)] * L
        return out

    monkeypatch.setattr(theory, "best_steps", wrong)
    r = mt.check_claim("acds.critical", size="smoke")
    assert r.verdict == "fails", r.verdict_reason


def test_loads_as_a_file():
    out = subprocess.run([sys.executable, "-c", "from mmicl.cli import main; main()", "claims",
                          "--plugin", str(CLAIMS_FILE), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in json.loads(out.stdout)["claims"]}
    assert rows["acds.layers"]["origin"] == "plugin file claims.py"
