"""A claim cannot end the run or lie about its checks: a check's ``passed`` and a hypothesis' ``met``
are True, False or None (undecided) and nothing else; a claim that exits, raises
``KeyboardInterrupt`` itself, returns what JSON cannot hold, or changes the run's seed gets its own
``error`` (or changes nothing), and the claims after it run; the folder ends ``complete``."""
from __future__ import annotations

import json
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

import mmicl
from mmicl.cli import main
from mmicl.proofs.claim import ClaimError, decide


@pytest.fixture(autouse=True)
def _clean(clean_registry):  # tests/conftest.py
    yield


NOT_JUDGEABLE = [float("nan"), "False", "True", 0, 1, 0.0, "no", [False], np.float64("nan")]


@pytest.mark.parametrize("value", NOT_JUDGEABLE, ids=repr)
def test_the_verdict_rule_refuses_a_passed_that_is_not_a_truth_value(value):
    with pytest.raises(ClaimError, match=r"check 'c': passed must be True, False or None"):
        decide([], [mmicl.Check("c", "x", value)])


@pytest.mark.parametrize("value", ["no", "", float("nan"), None, 1], ids=repr)
def test_the_verdict_rule_refuses_a_met_that_is_not_a_truth_value(value):
    with pytest.raises(ClaimError, match=r"hypothesis 'h': met must be True or False"):
        decide([mmicl.Hypothesis("h", value)], [mmicl.Check("c", "x", True)])


@pytest.mark.parametrize("passed, verdict", [(True, "holds"), (np.bool_(True), "holds"), (False, "fails"),
                                             (np.bool_(False), "fails"), (None, "inconclusive")])
def test_true_false_none_and_numpy_booleans_are_judged(passed, verdict):
    assert decide([], [mmicl.Check("c", "x", passed)])[0] == verdict


@pytest.mark.parametrize("value", [float("nan"), "False"], ids=repr)
def test_a_claim_whose_check_is_not_a_truth_value_is_an_error_and_the_others_run(value):
    @mmicl.claim("mine.bad", title="t", statement="s")
    def bad(config):
        return [], [mmicl.Check("c", "x", value)]

    @mmicl.claim("mine.after", title="t", statement="s")
    def after(config):
        return [], [mmicl.Check("c", "x", False)]

    r_bad, r_after = mmicl.verify(["mine.bad", "mine.after"])
    assert r_bad.verdict == "error" and "check 'c': passed must be True, False or None" in r_bad.verdict_reason
    assert r_after.verdict == "fails"


def test_a_hypothesis_met_no_is_an_error_not_holds():
    @mmicl.claim("mine.met", title="t", statement="s")
    def met(config):
        return [mmicl.Hypothesis("h", "no")], [mmicl.Check("c", "x", True)]

    (r,) = mmicl.verify("mine.met")
    assert r.verdict == "error" and "hypothesis 'h': met must be True or False" in r.verdict_reason


def _two_claims(tmp_path, first: str, second: str) -> tuple[int, dict, dict]:
    """A plugin file of two claims, ``mine.first`` (its body ``first``) and ``mine.second``, run by
    ``mmicl verify``: the exit status, the run block and the claims by id, from verdicts.json."""
    (tmp_path / "mine.py").write_text(textwrap.dedent(f"""
        import mmicl

        @mmicl.claim("mine.first", title="t", statement="s")
        def first(config):
            {first}

        @mmicl.claim("mine.second", title="t", statement="s")
        def second(config):
            {second}
        """))
    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["verify", "--plugin", str(tmp_path / "mine.py"), "--claim", "mine.*",
                                  "--out", str(out)])
    doc = json.loads((out / "verdicts.json").read_text())
    return r.exit_code, doc["run"], {c["id"]: c for c in doc["claims"]}


@pytest.mark.parametrize("raise_it, says", [
    ("raise SystemExit(0)", "SystemExit (code 0): a claim cannot end the run"),
    ("import sys; sys.exit(3)", "SystemExit (code 3)"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt raised by the claim itself"),
])
def test_a_plugin_claim_that_exits_is_its_own_error_and_the_run_goes_on(tmp_path, raise_it, says):
    status, run, got = _two_claims(tmp_path, raise_it, 'return [], [mmicl.Check("c", "x", False)]')
    assert status == 1 and run["state"] == "complete"  # the failing claim after it ran and fails the run
    assert got["mine.first"]["verdict"] == "error" and says in got["mine.first"]["verdict_reason"]
    assert got["mine.second"]["verdict"] == "fails"


@pytest.mark.parametrize("body", ["import sys; sys.exit(3)", "raise SystemExit(0)"])
def test_a_plugin_that_exits_while_imported_is_one_line_exit_2(tmp_path, body):
    (tmp_path / "mine.py").write_text(body + "\n")
    r = CliRunner().invoke(main, ["verify", "--plugin", str(tmp_path / "mine.py"), "--claim", "x.*",
                                  "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and "plugin file mine.py: importing" in r.output and "sys.exit(" in r.output
    assert not (tmp_path / "out").exists()  # refused before any work


def test_a_folder_named_as_a_plugin_file_says_it_is_a_folder(tmp_path):
    r = CliRunner().invoke(main, ["claims", "--plugin", str(tmp_path)])
    assert r.exit_code == 2 and "is a folder" in r.output


@pytest.mark.parametrize("summary", ["{'x': {1, 2}}", "{'x': object()}", "{'x': 1.0, 'y': [{2}]}"])
def test_a_claim_that_returns_what_json_cannot_hold_is_its_own_error(tmp_path, summary):
    status, run, got = _two_claims(tmp_path, f'return [], [mmicl.Check("c", "x", True)], {summary}',
                                   'return [], [mmicl.Check("c", "x", True)]')
    assert status == 1 and run["state"] == "complete" and got["mine.second"]["verdict"] == "holds"
    assert got["mine.first"]["verdict"] == "error" and "cannot be written as JSON" in got["mine.first"]["verdict_reason"]


def test_a_claim_cannot_change_the_runs_seed(tmp_path):
    @mmicl.claim("mine.reseeds", title="t", statement="s")
    def reseeds(config):
        config.seed = 123
        return [], [mmicl.Check("c", "x", True)]

    seen = []

    @mmicl.claim("mine.sees", title="t", statement="s")
    def sees(config):
        seen.append(config.seed)
        return [], [mmicl.Check("c", "x", True)]

    out = tmp_path / "out"
    r = CliRunner().invoke(main, ["verify", "--claim", "mine.*", "--seed", "7", "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert seen == [7] and json.loads((out / "verdicts.json").read_text())["seed"] == 7
