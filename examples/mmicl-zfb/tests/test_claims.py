"""The claims through mmicl's public API."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import mmicl

CLAIMS_FILE = Path(__file__).resolve().parents[1] / "src" / "mmicl_zfb" / "claims.py"


@pytest.mark.slow
def test_verify_quick_all_hold(tmp_path):
    """The quick size, as ``results/quick/verdicts.json`` records it (11 s on 2 cores: slow; the main
    suite's tests/docs/test_papers_page.py checks that the record holds)."""
    results = mmicl.verify(["zfb.*"], quick=True, plugins=["mmicl_zfb.claims"], out=tmp_path)
    assert {r.id for r in results} == {"zfb.minimiser", "zfb.flow", "zfb.montecarlo"}
    for r in results:
        assert r.verdict == "holds", (r.id, r.verdict_reason, r.error)
        assert r.origin == "plugin module mmicl_zfb.claims"
        assert all(h.met for h in r.hypotheses)
        json.dumps(r.to_json(), allow_nan=False)
    flow = next(r for r in results if r.id == "zfb.flow")
    ends = [c.numbers for c in flow.checks if "flow_end_gamma" in c.numbers]
    assert len(ends) == 2 and all("gamma_star" in n for n in ends)


def test_smoke_size_holds(tmp_path):
    import mmicl_zfb.claims as claims

    config = mmicl.RunConfig(quick=True, smoke=True, out=tmp_path)
    for c in (claims.evaluate_minimiser, claims.evaluate_flow, claims.evaluate_montecarlo):
        r = c.run(config)
        assert r.verdict == "holds", (r.id, r.verdict_reason)


def test_loads_as_a_file(tmp_path):
    """``--plugin path/to/claims.py`` works too (in its own process: the ids would clash here)."""
    out = subprocess.run([sys.executable, "-c", "from mmicl.cli import main; main()", "claims",
                          "--plugin", str(CLAIMS_FILE), "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    rows = {r["id"]: r for r in json.loads(out.stdout)["claims"]}
    assert rows["zfb.flow"]["origin"] == "plugin file claims.py"
