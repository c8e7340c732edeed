"""Every JSON document the command line prints or writes parses under a strict parser (no NaN,
no Infinity), carries ``schema_version``, and puts a reason next to every null that replaced a number;
on point laws, the large-context limit and one-seed runs too."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mmicl.numerics.strict_json import SCHEMA_VERSION, dumps, to_strict
from mmicl.cli import main
from mmicl.proofs.claim import Check, Claim, Hypothesis
from mmicl.proofs.registry import REGISTRY, register


def _refuse(constant):
    raise ValueError(f"non-strict JSON constant {constant}")


def strict_load(text: str):
    return json.loads(text, parse_constant=_refuse)


NOT_NUMBERS = {"passed"}  # a check's "passed": null means "could not decide", a documented value


def _nulls_without_reason(obj, path="$"):
    """Paths of nulls in dicts that have no ``<key>_null_reason`` beside them."""
    bad = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if v is None and f"{k}_null_reason" not in obj and k not in NOT_NUMBERS:
                bad.append(f"{path}.{k}")
            bad += _nulls_without_reason(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            bad += _nulls_without_reason(v, f"{path}[{i}]")
    return bad


def check_document(text: str) -> dict:
    doc = strict_load(text)
    assert doc["schema_version"] == SCHEMA_VERSION
    return doc


def run_json(*args) -> dict:
    r = CliRunner().invoke(main, [*args, "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return check_document(r.output)


# --- the encoder itself ---------------------------------------------------------------------

def test_non_finite_numbers_become_null_with_a_reason():
    doc = to_strict({"a": math.inf, "b": np.float64("nan"), "c": [1.0, -math.inf], "d": np.arange(2),
                     "e": 2.5, "f_null_reason": "given", "f": math.nan})
    assert doc["a"] is None and "inf" in doc["a_null_reason"]
    assert doc["b"] is None and "nan" in doc["b_null_reason"]
    assert doc["c"] == [1.0, None] and "some entries" in doc["c_null_reason"]
    assert doc["d"] == [0, 1] and doc["e"] == 2.5
    assert doc["f"] is None and doc["f_null_reason"] == "given"  # the caller's reason wins
    assert _nulls_without_reason(doc) == []


def test_dumps_is_strict_and_versioned():
    doc = check_document(dumps({"x": math.inf, "schema_version": 99}))
    assert doc["x"] is None and list(doc)[0] == "schema_version"


def test_unknown_objects_are_refused_not_stringified():
    with pytest.raises(TypeError, match="cannot write"):
        to_strict({"x": object()})


# --- every command --------------------------------------------------------------------------

@pytest.mark.parametrize("law", ["s=uniform(0.5,4)", "s=point(2)"])
def test_alpha(law):
    doc = run_json("alpha", "--law", law, "--T", "1", "3", "2000")
    assert _nulls_without_reason(doc) == []
    deep = doc["rows"][-1]
    assert deep["excess"] is None or deep["excess"] == 0.0


@pytest.mark.parametrize("T", ["1", "3"])
def test_flow2(T):
    doc = run_json("flow2", "--law", "s=uniform(0.5,4)", "--T", T)
    assert _nulls_without_reason(doc) == []


@pytest.mark.parametrize("extra", [(), ("--n", "40"), ("--profile", "3")])
def test_lsa(extra):
    doc = run_json("lsa", "--law", "s=uniform(0.5,4)", *extra)
    assert _nulls_without_reason(doc) == []
    if not extra:
        assert doc["n"] is None and "large-context" in doc["n_null_reason"]


def test_lsa_on_a_point_law():
    """A point law's gap is 0 in truth: what float64 computes is below its resolution, written as
    null with the reason beside it (numerics/resolution.py), never as the rounding's digits."""
    doc = run_json("lsa", "--law", "s=point(2)")
    assert doc["gap"] is None and doc["gap_null_reason"].startswith("below resolution")
    assert 0 < doc["gap_resolution"] < 1e-12


@pytest.mark.train
def test_train_prints_and_writes_strict_json(tmp_path):
    out = tmp_path / "train.json"
    doc = run_json("train", "--model", "lca1", "--law", "s=exponential(1)", "--T", "2", "--n", "0",
                   "--steps", "3", "--batch", "64", "--samples", "500", "--out", str(out))
    assert doc["n"] is None and doc["bayes_risk"] is None and "unavailable" in doc["bayes_risk_null_reason"]
    assert _nulls_without_reason(doc) == []
    check_document(out.read_text())


@pytest.mark.train
def test_train_figures_write_strict_json(tmp_path):
    doc = run_json("train-figures", "--tiny", "--out", str(tmp_path))
    files = sorted(tmp_path.glob("*.json"))
    assert files
    for f in files:
        check_document(f.read_text())
    assert doc


@pytest.mark.train
def test_testbed_one_seed_run_has_null_intervals_with_reasons(tmp_path):
    doc = run_json("testbed", "train", "--quick", "--seeds", "1", "--steps", "2", "--eval-every", "1",
                   "--batch", "8", "--K", "64", "--out", str(tmp_path))
    final = doc["final"]
    some = next(iter(final.values()))
    assert some["interval95"] is None and "seed" in some["interval95_null_reason"]
    assert _nulls_without_reason(doc) == []
    for f in Path(tmp_path).glob("*.json"):
        check_document(f.read_text())


@pytest.fixture
def awkward_claim():
    numbers = {"inf": math.inf, "nan": math.nan, "arr": np.array([1.0, np.inf]), "n": None, "n_null_reason": "∞"}
    claim = register(Claim("test.awkward", "non-finite evidence", "x",
                           lambda cfg: ([Hypothesis("none", True)], [Check("x", "arithmetic", None, numbers)],
                                        {"z": math.inf}, []), default=False))
    yield claim
    del REGISTRY[claim.id]


def test_verdicts_json_is_strict(awkward_claim, tmp_path):
    r = CliRunner().invoke(main, ["verify", "--claim", "test.awkward", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    doc = check_document((tmp_path / "verdicts.json").read_text())
    nums = doc["claims"][0]["evidence"]["checks"][0]["numbers"]
    assert nums["inf"] is None and nums["arr"] == [1.0, None]
    assert _nulls_without_reason(doc) == []


# --- the API's ClaimResult.to_json(): plain Python types only -------------------------------

PLAIN = (str, int, float, bool, type(None))


def _leaves(obj, path="$"):
    if isinstance(obj, dict):
        for k, v in obj.items():
            assert type(k) is str, f"{path}: key {k!r}"
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, obj


def assert_plain_json(doc) -> None:
    """Every container a dict or list, every leaf exactly a plain type (not a numpy subclass), no
    NaN or infinity; and the strict text round-trips to the same document."""
    bad = [(p, type(v).__name__) for p, v in _leaves(doc) if type(v) not in PLAIN]
    assert bad == []
    assert not [p for p, v in _leaves(doc) if isinstance(v, float) and not math.isfinite(v)]
    assert json.loads(json.dumps(doc, allow_nan=False)) == doc


@pytest.fixture
def numpy_claim():
    """Evidence as the claims produce it: numpy booleans, floats, ints and arrays, NaN and inf."""
    numbers = {"decidable": np.bool_(False), "z": np.float64(1.5), "k": np.int64(3), "g": np.arange(3.0),
               "flags": [np.bool_(True), True], "nan": np.float64("nan"), "nested": {"inf": -math.inf}}
    claim = register(Claim("test.numpy", "numpy evidence", "x", lambda cfg: (
        [Hypothesis("h", np.bool_(True))],
        [Check("a", "arithmetic", np.bool_(True), numbers), Check("b", "arithmetic", None, {}, role="corroborating")],
        {"ok": np.bool_(True), "mean": np.float32(0.25), "n": np.int32(4), "v": np.array([1, 2])}, []),
        default=False))
    yield claim
    del REGISTRY[claim.id]


def test_to_json_of_numpy_evidence_is_plain(numpy_claim, awkward_claim, tmp_path):
    from mmicl.proofs.claim import RunConfig

    for claim in (numpy_claim, awkward_claim):
        doc = claim.run(RunConfig(out=tmp_path)).to_json()
        assert_plain_json(doc)
        assert _nulls_without_reason(doc) == []  # each NaN/inf replaced by null has its reason
    doc = numpy_claim.run(RunConfig(out=tmp_path)).to_json()
    ev = doc["evidence"]
    assert ev["checks"][0]["numbers"]["decidable"] is False and ev["summary"]["ok"] is True
    assert ev["checks"][0]["numbers"]["flags"] == [True, True] and ev["summary"]["v"] == [1, 2]
    assert ev["checks"][0]["numbers"]["nan"] is None and "nan" in ev["checks"][0]["numbers"]["nan_null_reason"]
    assert ev["hypotheses"][0]["met"] is True and doc["verdict"] == "holds"
    assert [c["role"] for c in ev["checks"]] == ["decisive", "corroborating"]


@pytest.mark.parametrize("claim, config", [
    ("thm4.1", {"law": "s=point(2)"}),  # hypothesis-not-met, with its exact closed-form check
    ("ext.untied", {"smoke": True, "law": "s=twopoint(1,3,0.3)"}),  # numpy floats in its numbers
    ("thm6.2", {"smoke": True, "law": "s=uniform(0.5,4)"}),
])
def test_to_json_of_real_claims_is_plain(claim, config, tmp_path):
    import mmicl.proofs.claims  # noqa: F401  (registers the claims)
    from mmicl.proofs.claim import RunConfig

    res = REGISTRY[claim].run(RunConfig(quick=True, out=tmp_path, **config))
    assert_plain_json(res.to_json())
    assert_plain_json(res.to_json(relative_to=tmp_path))
