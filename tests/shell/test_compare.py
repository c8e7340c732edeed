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
    assert r.exit_code == 0, r.output
    assert "numbers: 4 compared, 0 beyond tolerance" in r.output
    assert "0 regression(s): nothing moved beyond its tolerance" in r.output


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
    assert moved.regressions == [] and {c.kind for c in moved.changes} == {"new claim", "new check", "new number"}


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


# ------------------------------------------------------------------------------------------------
# what cannot be compared is one line, exit 2; no input is a traceback
# ------------------------------------------------------------------------------------------------


def _deep(n: int):
    v = 1.0
    for _ in range(n):
        v = {"x": v}
    return v


def _bad_docs():
    def with_check(**kw):
        d = _doc()
        _check(d).update(kw)
        return d

    def with_evidence(value):
        d = _doc()
        d["claims"][0]["evidence"] = value
        return d

    dup_claims = _doc()
    dup_claims["claims"].append(copy.deepcopy(dup_claims["claims"][0]))
    dup_checks = _doc()
    dup_checks["claims"][0]["evidence"]["checks"].append(copy.deepcopy(_check(dup_checks)))
    summary_list = _doc()
    summary_list["claims"][0]["evidence"]["summary"] = [1.0]
    deep = _doc()
    deep["claims"][0]["evidence"]["summary"] = {"d": _deep(200)}
    return {
        "evidence a string": (with_evidence("oops"), "evidence is a str, not a dict"),
        "checks a dict": (with_evidence({"checks": {"a": 1}}), "checks is a dict, not a list"),
        "check without a name": (with_evidence({"checks": [{"passed": True}]}), "check 0 is not a dict with a text name"),
        "summary a list": (summary_list, "its summary is a list, not a dict"),
        "numbers a list": (with_check(numbers=[1.0]), "numbers is a list, not a dict"),
        "passed a string": (with_check(passed="False"), "passed is 'False'"),
        "unknown verdict": (_doc(claims=[{"id": "a", "verdict": "great"}]), "verdict 'great' is none of"),
        "schema 999": (_doc(schema_version=999), "schema_version 999 is newer than this mmicl reads"),
        "schema a string": (_doc(schema_version="4"), "schema_version '4' is not a version number"),
        "duplicate claims": (dup_claims, "two claims have the id 'thm4.1'"),
        "duplicate checks": (dup_checks, "two checks are named 'gap > 0'"),
        "too deep": (deep, "nested more than 64 deep"),
        "no claims list": ({"claims": "thm4.1"}, "no list of claims"),
    }


@pytest.mark.parametrize("case", list(_bad_docs()))
def test_a_summary_mmicl_cannot_compare_is_one_line_exit_2_either_side(tmp_path, case):
    doc, says = _bad_docs()[case]
    bad, good = _write(tmp_path, "bad", doc), _write(tmp_path, "good", _doc())
    for args in ([str(bad), str(good)], [str(good), str(bad)]):
        r = CliRunner().invoke(main, ["compare", *args])
        assert r.exit_code == 2 and says in r.output and "Traceback" not in r.output, (case, r.output)


def test_an_old_run_with_no_claims_would_pass_anything_and_is_refused(tmp_path):
    r = CliRunner().invoke(main, ["compare", str(_write(tmp_path, "a", _doc(claims=[]))),
                                  str(_write(tmp_path, "b", _doc()))])
    assert r.exit_code == 2 and "lists no claims" in r.output
    from mmicl.compare import CompareError

    with pytest.raises(CompareError, match="lists no claims"):  # the library refuses it too
        compare(_doc(claims=[]), _doc())
    assert compare(_doc(), _doc(claims=[])).regressions  # a new run with none: every claim is missing


def test_json_recursion_and_a_huge_integer_are_one_line_or_compared_exactly(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "deep.json"), str(_write(tmp_path, "g", _doc()))])
    assert r.exit_code == 2 and "not readable as JSON" in r.output and "Traceback" not in r.output
    a, b = _doc(), _doc()
    _check(a)["numbers"]["gap"] = 10**400
    _check(b)["numbers"]["gap"] = 10**400
    assert not compare(a, b).regressions
    _check(b)["numbers"]["gap"] = 10**400 + 10**300
    assert [c.key for c in compare(a, b, rtol=0).regressions] == ["gap > 0: gap"]
    assert not compare(a, b, rtol=1e-99).regressions  # within 10⁻⁹⁹ relative, exactly


def test_a_fifo_is_refused_not_read_forever(tmp_path):
    import os

    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    os.mkfifo(tmp_path / "pipe.json")
    r = CliRunner().invoke(main, ["compare", str(tmp_path / "pipe.json"), str(_write(tmp_path, "g", _doc()))])
    assert r.exit_code == 2 and "not a regular file" in r.output


def test_nan_on_both_sides_agrees_and_an_infinity_matches_only_itself():
    nan, inf = float("nan"), float("inf")
    a, b = _doc(), _doc()
    _check(a)["numbers"]["gap"] = _check(b)["numbers"]["gap"] = nan
    assert not compare(a, b).regressions
    _check(b)["numbers"]["gap"] = 1.0
    assert compare(a, b).regressions
    _check(a)["numbers"]["gap"] = inf
    for new, moved in ((inf, False), (-inf, True), (1e308, True), (nan, True)):
        _check(b)["numbers"]["gap"] = new
        assert bool(compare(a, b, rtol=1e300).regressions) == moved, new
        assert bool(compare(b, a, rtol=1e300).regressions) == moved, new


def test_verify_baseline_refuses_a_bad_baseline_before_the_run(tmp_path, monkeypatch):
    import mmicl.results_folder as rf

    monkeypatch.setattr(rf.ResultsFolder, "run_claim", lambda *a: pytest.fail("the run started"))
    bad = _write(tmp_path, "bad", _doc(claims=[{"id": "a", "verdict": "holds", "evidence": "x"}]))
    r = CliRunner().invoke(main, ["verify", "--quick", "--claim", "thm4.1", "--baseline", str(bad),
                                  "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and "evidence is a str" in r.output and "Traceback" not in r.output
    empty = _write(tmp_path, "empty", _doc(claims=[]))
    r = CliRunner().invoke(main, ["verify", "--quick", "--claim", "thm4.1", "--baseline", str(empty),
                                  "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and "lists no claims" in r.output
