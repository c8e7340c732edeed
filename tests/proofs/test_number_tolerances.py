"""Every number a built-in claim reports carries a numeric tolerance (``Check.atol``/``rtol``,
``Summary.atol``/``rtol``), so that ``mmicl compare`` and ``mmicl_baseline`` judge a move by the
number's own accuracy, not by a blanket relative 1e-9 that flags rounding on another machine."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import mmicl
import mmicl.proofs.claims as builtin_claims
from mmicl.compare import compare, number_keys
from mmicl.proofs.claim import Check, ClaimResult, Summary, tolerance_of
from mmicl.proofs.verify import registered

CLAIMS = Path(builtin_claims.__file__).parent
RUNNABLE = ("thm6.2", "thm6.3", "thm4.1", "appF", "depth", "ext.untied", "variant.floor")
"""The built-in claims that run in seconds at the smoke size (the testbed's train transformers)."""


def uncovered(result: ClaimResult) -> list[str]:
    """The numbers of ``result`` (check name: key) that state no numeric tolerance."""
    out = [f"summary: {k}" for k in number_keys(result.summary)
           if tolerance_of(result.summary_atol, result.summary_rtol, k) is None]
    for c in result.checks:
        out += [f"{c.name}: {k}" for k in number_keys(c.numbers) if tolerance_of(c.atol, c.rtol, k) is None]
    return sorted(set(out))


def test_every_check_a_built_in_claim_builds_states_a_numeric_tolerance():
    """Read statically, so that the testbed's checks (hours of training) are covered too: every
    ``Check(...)`` in ``mmicl/proofs/claims`` passes ``atol`` or ``rtol``, and says where they come
    from (``numbers_tolerance``) unless it states only exact ones."""
    missing, seen = [], 0
    for path in sorted(CLAIMS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Check":
                seen += 1
                kw = {k.arg for k in node.keywords}
                if None in kw:  # Check(**fields): checked at run time
                    continue
                if not kw & {"atol", "rtol"}:
                    missing.append(f"{path.name}:{node.lineno}")
    assert seen > 40  # the claims' checks were found
    assert not missing, f"Check(...) without atol/rtol at {missing}"


@pytest.mark.train
@pytest.mark.parametrize("claim_id", RUNNABLE)
def test_every_number_of_a_smoke_run_has_a_tolerance(claim_id, tmp_path):
    result = registered()[claim_id].run(mmicl.RunConfig.sized("smoke", out=tmp_path))
    assert result.verdict != "error", result.error
    assert uncovered(result) == []


@pytest.mark.train
@pytest.mark.slow
@pytest.mark.parametrize("claim_id", RUNNABLE)
def test_every_number_of_a_quick_run_has_a_tolerance(claim_id, tmp_path):
    """The quick size adds the Monte Carlo checks that the smoke size leaves out."""
    result = registered()[claim_id].run(mmicl.RunConfig.sized("quick", out=tmp_path))
    assert result.verdict != "error", result.error
    assert uncovered(result) == []


def _doc(check: Check, summary: Summary | None = None) -> dict:
    r = ClaimResult("x.y", "holds", "s", [], [check], summary=dict(summary or {}),
                    summary_atol=getattr(summary, "atol", None), summary_rtol=getattr(summary, "rtol", None),
                    summary_tolerance=getattr(summary, "why", ""))
    return json.loads(json.dumps({"claims": [r.to_json()]}, allow_nan=False))


def test_a_per_key_tolerance_judges_each_number_by_its_own():
    """A move within a key's own tolerance is no change; beyond it, the change names the key and
    the tolerance; a key the dict leaves out falls back to the caller's rtol."""
    def check(err, Ts, other):
        return Check("c", "ode", True, {"err": err, "T": Ts, "other": other},
                     atol={"err": 1e-8, "T": 0.0}, numbers_tolerance="err: the flow's accuracy")

    old = _doc(check(1e-12, [1, 10], 1.0))
    assert compare(old, _doc(check(5e-9, [1, 10], 1.0))).changes == []
    moved = compare(old, _doc(check(2e-8, [1, 11], 1.0 + 1e-6))).changes
    assert {c.key for c in moved} == {"c: err", "c: T[1]", "c: other"}
    said = {c.key: c.tolerance for c in moved}
    assert "atol 1e-08" in said["c: err"] and "the flow's accuracy" in said["c: err"]
    assert "states no numeric tolerance for 'other'" in said["c: other"]


def test_a_summary_states_its_tolerance_through_summary():
    c = Check("c", "x", True, {}, atol=0.0)
    old = _doc(c, Summary({"a": 1.0, "n": 3}, rtol={"a": 1e-6}, atol={"n": 0.0}, why="a: quadrature"))
    assert old["claims"][0]["evidence"]["summary_rtol"] == {"a": 1e-6}
    assert compare(old, _doc(c, Summary({"a": 1.0 + 5e-7, "n": 3}))).changes == []
    (moved,) = compare(old, _doc(c, Summary({"a": 1.0 + 5e-6, "n": 3}))).changes
    assert moved.key == "summary: a" and "quadrature" in moved.tolerance


@pytest.mark.parametrize("bad", [{"k": -1.0}, {"k": float("nan")}, {1: 0.1}, [0.1], True, float("inf")])
def test_a_bad_numeric_tolerance_is_refused_where_it_is_given(bad):
    with pytest.raises(ValueError, match="atol"):
        Check("c", "x", True, atol=bad)
    with pytest.raises(ValueError, match="atol"):
        Summary({}, atol=bad)


def test_a_claims_summary_tolerance_reaches_its_result(tmp_path):
    """``evaluate`` returns a ``Summary``; ``Claim.run`` carries its tolerances into the result and
    its JSON, where ``mmicl compare`` reads them."""
    from mmicl.proofs.claim import Claim

    c = Claim("x.summary", "t", "s", lambda config: ([], [Check("c", "x", True, {}, atol=0.0)],
                                                     Summary({"a": 1.0, "n": 3}, rtol={"a": 1e-6}, atol={"n": 0.0},
                                                             why="a: quadrature")))
    r = c.run(mmicl.RunConfig.sized("smoke", out=tmp_path))
    assert (r.summary_atol, r.summary_rtol, r.summary_tolerance, type(r.summary)) == (
        {"n": 0.0}, {"a": 1e-6}, "a: quadrature", dict)
    assert r.to_json()["evidence"]["summary_rtol"] == {"a": 1e-6}


def test_a_sampled_number_false_alarms_as_often_as_stated():
    """Two independent estimates with standard error se differ by more than sampling_atol(se) with
    probability 2·Φ(−MOVE_Z) ≈ 6.3e-5 (the module's 'about 6 numbers in 100 000')."""
    from scipy.stats import norm

    from mmicl.proofs.claims.number_tolerances import MOVE_Z, sampling_atol

    se = 0.37
    p = 2 * norm.sf(sampling_atol(se) / (np.sqrt(2) * se))
    assert p == pytest.approx(2 * norm.sf(MOVE_Z)) and 5e-5 < p < 7e-5
    assert sampling_atol(float("nan")) == sampling_atol(-1.0) == 0.0


def test_a_checks_tolerances_are_plain_floats_even_from_numpy_scalars():
    import numpy as np

    from mmicl.proofs.claim import Check

    c = Check("x", "m", True, numbers={"a": 1, "b": 2}, atol={"a": np.float64(0.1), "b": 0}, rtol=np.float64(0.5))
    assert c.atol == {"a": 0.1, "b": 0.0} and c.rtol == 0.5
    assert all(type(v) is float for v in c.atol.values()) and type(c.rtol) is float
    assert "np.float64" not in repr(c)
