"""The command-line contract: JSON keys, exit statuses, files written."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mmicl.proofs.cli import main
from mmicl.proofs.registry import REGISTRY, VERDICTS, Check, Claim, Hypothesis, register


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_alpha_json_contract():
    r = run("alpha", "--law", "s=uniform(0.5,4)", "--T", "1", "10", "--json")
    assert r.exit_code == 0
    out = json.loads(r.output)
    assert set(out) >= {"alpha_star", "rows"}
    assert [row["T"] for row in out["rows"]] == [1, 10]
    assert set(out["rows"][0]) >= {"T", "alpha", "excess", "flow_alpha"}


def test_flow2_json_contract():
    r = run("flow2", "--law", "s=uniform(0.5,4)", "--T", "3", "--json")
    assert r.exit_code == 0
    assert set(json.loads(r.output)) >= {"alpha", "beta", "converged", "t_end"}


@pytest.mark.parametrize("args", [
    ("alpha", "--law", "s=uniform(0.5,"),
    ("alpha", "--law", "s=exponential(1)"),
    ("alpha", "--law", "s=uniform(1,2)", "--T", "0"),
    ("flow2", "--law", "s=uniform(1,2)", "--T", "3", "--alpha0", "nan"),
])
def test_bad_input_is_a_usage_error(args):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 2 and "Error" in r.output


@pytest.fixture
def failing_claim():
    claim = register(Claim("test.fails", "a claim that fails", "1 = 2",
                           lambda cfg: ([Hypothesis("none", True)], [Check("1 = 2", "arithmetic", False)], {}, []),
                           default=False))
    yield claim
    del REGISTRY[claim.id]


def test_verify_exits_1_when_a_claim_fails_and_writes_its_files(failing_claim, tmp_path):
    r = CliRunner().invoke(main, ["verify", "--quick", "--claim", "test.fails", "--out", str(tmp_path)])
    assert r.exit_code == 1
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    (entry,) = verdicts["claims"]
    assert entry["id"] == "test.fails" and entry["verdict"] == "fails" and entry["verdict"] in VERDICTS
    assert "checks" in entry["evidence"]
    assert "test.fails" in (tmp_path / "report.md").read_text()


def test_unknown_claim_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(main, ["verify", "--claim", "nope", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "no claim matches" in r.output
