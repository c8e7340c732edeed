"""The plugin's own case type: Σ (or d), n and L, as text, from the command line and drawn."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import mmicl
import mmicl.testing as mt
from mmicl_acds.case import CASE, case_text, parse_case


@pytest.fixture(scope="module", autouse=True)
def claims_loaded():
    mmicl.claims(plugins=["mmicl_acds.claims"])


@given(st.tuples(mt.positive_definite_matrices(st.integers(1, 5), 0.01, 100.0), st.integers(1, 10**5), st.integers(1, 4)))
def test_a_case_written_as_text_reads_back_exactly(case):
    sigma, n, L = parse_case(case_text(case))
    assert np.array_equal(sigma, case[0]) and n == case[1] and L == case[2]


@pytest.mark.parametrize("text, says", [
    ("d=2", "n missing"), ("n=3", "Sigma=… or d=…"), ("d=2; Sigma=diag(1,2); n=3", "one of them"),
    ("d=2; n=0", "whole number"), ("d=11; n=3", "whole number from 1 to 10"), ("d=2; n=3; L=5", "from 1 to 4"),
    ("Sigma=[[1,2]]; n=3", "square"), ("d=2; n=3; n=4", "given twice"), ("Lambda=diag(1); n=2", "unknown key"),
])
def test_a_text_that_is_not_a_case_is_one_line_with_the_reason(text, says):
    with pytest.raises(mmicl.CaseError, match=says):
        CASE.read(text)


def test_a_covariance_that_is_not_positive_definite_is_a_hypothesis_not_met():
    r = mt.check_claim("acds.critical", case="Sigma=[[1,2],[2,1]]; n=5; L=2", size="smoke")
    assert r.verdict == "hypothesis-not-met" and any("Σ" in h.text and not h.met for h in r.hypotheses)


@settings(max_examples=2, derandomize=True)
@given(case=st.deferred(lambda: mt.cases("acds.critical")))
def test_critical_is_not_refuted_on_drawn_cases(case):
    """The examples are fixed: a Monte Carlo check has a false-alarm rate, which a search over seeds
    would find."""
    mt.assert_verdict("acds.critical", case=case, expected={"holds", "inconclusive"}, size="smoke")


def test_the_command_line_takes_the_case(tmp_path):
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))}
    p = subprocess.run([sys.executable, "-m", "mmicl", "verify", "--plugin", "mmicl_acds.claims", "--claim",
                        "acds.critical", "--size", "smoke", "--device", "cpu", "--case", "d=3; n=12; L=3",
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    (c,) = json.loads((tmp_path / "verdicts.json").read_text())["claims"]
    assert c["verdict"] == "holds", c["verdict_reason"]
