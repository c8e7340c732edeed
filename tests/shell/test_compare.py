"""``mmicl compare`` and ``verify --baseline``: a run compared with itself moves nothing; a verdict,
a check's outcome or a number moved beyond its tolerance is a regression, named, with exit 1."""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from mmicl.cli import main
from mmicl.compare import DEFAULT_RTOL, compare


def _doc(**over) -> dict:
    check = {"name": "gap > 0", "method": "quadrature", "passed": True, "role": "decisive", "tolerance": "",
             "detail": "", "numbers": {"gap": 0.0485, "nested": {"xs": [1.0, 2.0]}, "law": "s=uniform(0.5,4)",
                                       "decidable": True}}
    doc = {"schema_version": 1, "seed": 0, "quick": True,
           "claims": [{"id": "thm4.1", "verdict": "holds", "verdict_reason": "",
                       "evidence": {"statement": "", "summary": {"gap": 0.0485}, "hypotheses": [], "checks": [check],
                                    "figures": [], "seconds": 1.0}}]}
    doc |= over
    return doc


def _write(tmp_path: Path, name: str, doc: dict) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "verdicts.json").write_text(json.dumps(doc))
    return folder


def _check(doc):
    return doc["claims"][0]["evidence"]["checks"][0]


def test_a_run_compared_with_itself_moves_nothing(tmp_path):
    a = _write(tmp_path, "a", _doc())
    r = CliRunner().invoke(main, ["compare", str(a), str(a / "verdicts.json")])
    assert r.exit_code == 0 and "0 regression(s) among 4 numbers compared: nothing moved" in r.output


def test_a_number_moved_beyond_the_tolerance_is_named(tmp_path):
    b = _doc()
    _check(b)["numbers"]["nested"]["xs"][1] = 2.0 * (1 + 10 * DEFAULT_RTOL)
    r = CliRunner().invoke(main, ["compare", str(_write(tmp_path, "a", _doc())), str(_write(tmp_path, "b", b)),
                                  "--json"])
    assert r.exit_code == 1, r.output
    out = json.loads(r.output)
    assert [(c["kind"], c["key"]) for c in out["changes"]] == [("number", "gap > 0: nested.xs[1]")]
    # the same move, within --rtol, or within the check's own numeric tolerance, is no regression
    assert not compare(_doc(), b, rtol=1e-6).regressions
    _check(b)["atol"] = 1e-6
    own = _doc()
    _check(own)["atol"] = 1e-6
    assert not compare(own, b).regressions


@pytest.mark.parametrize("change, kind", [
    (lambda d: d["claims"][0].update(verdict="inconclusive"), "verdict"),
    (lambda d: _check(d).update(passed=None), "check outcome"),
    (lambda d: _check(d)["numbers"].update(gap=None), "number"),
    (lambda d: _check(d)["numbers"].update(decidable=False), "number"),
    (lambda d: d["claims"][0]["evidence"]["summary"].update(gap=0.05), "number"),
    (lambda d: d["claims"][0]["evidence"].update(checks=[]), "missing check"),
    (lambda d: d.update(claims=[]), "missing claim"),
])
def test_every_kind_of_move_is_a_regression(change, kind):
    b = copy.deepcopy(_doc())
    change(b)
    moved = compare(_doc(), b)
    assert [c.kind for c in moved.regressions] == [kind]


def test_timings_are_not_results():
    """How long a run took differs between any two runs: ``seconds`` and ``*_seconds`` are not compared."""
    a, b = _doc(), _doc()
    _check(a)["numbers"]["runs"] = [{"seconds": 1.5, "loss": 0.1}]
    _check(b)["numbers"]["runs"] = [{"seconds": 2.7, "loss": 0.1}]
    _check(a)["numbers"]["train_seconds"], _check(b)["numbers"]["train_seconds"] = 3.0, 4.0
    assert compare(a, b).regressions == []
    _check(b)["numbers"]["runs"][0]["loss"] = 0.2
    assert [c.key for c in compare(a, b).regressions] == ["gap > 0: runs[0].loss"]


def test_a_new_claim_or_check_is_listed_but_is_no_regression():
    b = _doc()
    b["claims"].append({"id": "mine.x", "verdict": "holds", "evidence": {"checks": []}})
    _check(b)["numbers"]["extra"] = 1.0
    b["claims"][0]["evidence"]["checks"].append({"name": "another", "passed": True, "numbers": {}})
    moved = compare(_doc(), b)
    assert moved.regressions == [] and {c.kind for c in moved.changes} == {"new claim", "new check"}


@pytest.mark.parametrize("content, says", [
    (None, "no verdicts.json there"),
    ("{not json", "not readable as JSON"),
    ('{"claims": "none"}', "not a verify summary"),
])
def test_what_is_not_a_summary_is_one_line(tmp_path, content, says):
    bad = tmp_path / "bad"
    bad.mkdir()
    if content is not None:
        (bad / "verdicts.json").write_text(content)
    r = CliRunner().invoke(main, ["compare", str(_write(tmp_path, "a", _doc())), str(bad)])
    assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output


def _fake_cli(args, env):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
    try:
        import folder_run  # noqa: F401  (the stand-in claims)
    finally:
        sys.path.pop(0)
    return CliRunner().invoke(main, args, env=env)


def test_verify_with_a_baseline_compares_after_the_run(tmp_path):
    env = {"FAKE_SLEEP": "0"}
    first = _fake_cli(["verify", "--claim", "fake.*", "--out", str(tmp_path / "a"), "--seed", "1"], env)
    assert first.exit_code == 0, first.output
    same = _fake_cli(["verify", "--claim", "fake.*", "--out", str(tmp_path / "b"), "--seed", "1",
                      "--baseline", str(tmp_path / "a")], env)
    assert same.exit_code == 0 and "nothing moved" in same.output, same.output
    other = _fake_cli(["verify", "--claim", "fake.*", "--out", str(tmp_path / "c"), "--seed", "2",
                       "--baseline", str(tmp_path / "a")], env)
    assert other.exit_code == 1 and "fake.a" in other.output and "regression(s)" in other.output
    doc = json.loads((tmp_path / "a" / "verdicts.json").read_text())
    assert doc["size"] == "full" and doc["provenance"]["mmicl"] and doc["provenance"]["numpy"]
    missing = _fake_cli(["verify", "--claim", "fake.*", "--out", str(tmp_path / "d"),
                         "--baseline", str(tmp_path / "nowhere")], env)
    assert missing.exit_code == 2 and not (tmp_path / "d").exists()
