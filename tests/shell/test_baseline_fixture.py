"""The ``mmicl_baseline`` fixture refuses what it cannot compare, and never passes a test by saying
nothing: an empty or emptied baseline, one of another claim, a folder in a baseline's place and a
folder it cannot write each fail the test in one line; two test ids never share a baseline file.

One pytest run, in a subprocess, of a small user test file whose baselines the test prepares.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mmicl.pytest_plugin import _safe

USER_TESTS = '''
import pytest

@pytest.mark.parametrize("law", ["s=point(2)", "s_point_2"])
def test_ids(mmicl_baseline, law):
    mmicl_baseline.check({"x": 1.0 if law == "s=point(2)" else 2.0})

def test_empty(mmicl_baseline):
    mmicl_baseline.check({"x": 99.0})

def test_emptied(mmicl_baseline):
    mmicl_baseline.check({"x": 99.0})

def test_other_claim(mmicl_baseline):
    mmicl_baseline.check({"x": 1.0})

def test_folder(mmicl_baseline):
    mmicl_baseline.check({"x": 1.0})
'''

UNWRITABLE = '''
def test_new(mmicl_baseline):
    mmicl_baseline.check({"x": 1.0})
'''


def _mapping(cid: str, summary: dict) -> dict:
    return {"schema_version": 4, "claims": [{"id": cid, "kind": "mapping", "evidence": {"summary": summary}}]}


def _pytest(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict[str, str | None]]:
    """The run, and per test (``file::name``) its failure message, or None where it passed."""
    import xml.etree.ElementTree as ET

    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    report = cwd / "report.xml"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                        f"--junitxml={report}", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        failed = case.find("failure")
        outcomes[f"{case.get('classname').split('.')[-1]}::{case.get('name')}"] = (
            None if failed is None else (failed.get("message") or "") + (failed.text or ""))
    return p, outcomes


def test_file_names_are_one_per_test_id_and_plain_names_stay_as_they_are():
    assert _safe("test_key_numbers") == "test_key_numbers"
    a, b = _safe("test_ids[s=point(2)]"), _safe("test_ids[s_point_2]")
    assert a != b and a.startswith("test_ids_s_point_2~") and b.startswith("test_ids_s_point_2~")
    assert _safe("test_a_") != _safe("test_a") and re.fullmatch(r"[\w.~-]+", a)


@pytest.mark.subprocess
def test_a_baseline_that_cannot_fail_fails_the_test_in_one_line(tmp_path):
    tests = tmp_path / "tests"
    (tests / "baselines" / "test_user").mkdir(parents=True)
    (tests / "test_user.py").write_text(textwrap.dedent(USER_TESTS))
    (tests / "test_unwritable.py").write_text(textwrap.dedent(UNWRITABLE))
    base = tests / "baselines" / "test_user"
    (base / "test_empty.json").write_text(json.dumps({"schema_version": 4, "claims": []}))
    (base / "test_emptied.json").write_text(json.dumps(_mapping("test_emptied", {})))
    (base / "test_other_claim.json").write_text(json.dumps(_mapping("another", {"x": 1.0})))
    (base / "test_folder.json").mkdir()
    (tests / "baselines" / "test_unwritable").write_text("a file where the folder goes\n")
    for _ in range(2):  # the first run writes the two ids' baselines, the second reads each back
        p, got = _pytest(tmp_path, "tests")
        assert p.returncode == 1 and "INTERNALERROR" not in p.stdout, p.stdout[-3000:]
        assert got["test_user::test_ids[s=point(2)]"] is None and got["test_user::test_ids[s_point_2]"] is None, got
        for test, says in [("test_user::test_empty", "lists no claims, so any run would match it"),
                           ("test_user::test_emptied", "it does not cover 1 thing(s) this test checks"),
                           ("test_user::test_other_claim", "missing claim another"),
                           ("test_user::test_folder", "it is a folder, not a baseline file"),
                           ("test_unwritable::test_new", "cannot write it")]:
            assert got[test] is not None and says in got[test] and "Traceback" not in got[test], (test, got[test])
    ids = sorted(p.name for p in base.iterdir() if p.name.startswith("test_ids"))
    assert len(ids) == 2 and {json.loads((base / n).read_text())["claims"][0]["evidence"]["summary"]["x"]
                              for n in ids} == {1.0, 2.0}
