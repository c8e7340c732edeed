"""mmicl's public testing API (``mmicl.testing``): the facts that drawn laws carry are right (checked
against the law itself: ``TaskLaw.s_bounds``, ``signal_bounds``, the quadrature nodes), the
strategies shrink to simple laws, ``check_claim``/``assert_verdict`` behave and say why, every
``to_json()`` of a claim run on a drawn law is strict JSON, and ``import mmicl`` does not import
Hypothesis (only ``mmicl.testing`` does)."""
from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

import mmicl
import mmicl.testing as mt
from mmicl.numerics.laws.language import parse_law, parse_scalar_law
from mmicl.numerics.validate import InputError
from mmicl.proofs.hypotheses import signal_values
from mmicl.proofs.registry import REGISTRY
from mmicl.proofs.verify import registered

ROOT = Path(__file__).resolve().parents[2]

# --------------------------------------------------------------------------- imports


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    return set(out.split())


@pytest.mark.subprocess
def test_importing_mmicl_does_not_import_hypothesis():
    mods = _modules_after("import mmicl; mmicl.TaskLaw; mmicl.verify; mmicl.hypotheses; mmicl.Check")
    assert "hypothesis" not in mods and "mmicl.testing" not in mods
    mods = _modules_after("import mmicl.pytest_plugin")
    assert not {"hypothesis", "numpy", "torch", "scipy"} & mods
    assert "hypothesis" in _modules_after("import mmicl.testing")


def test_only_mmicl_testing_imports_hypothesis_at_import_time():
    """No other module of the package imports Hypothesis at its top level."""
    found = []
    for folder in ("mmicl", "theory", "numerics", "proofs"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                if any(n.split(".")[0] == "hypothesis" for n in names):
                    found.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(found)) == ["mmicl/testing.py"]


# --------------------------------------------------------------------------- facts


def _nodes_count(law, cap=mt.MANY) -> int:
    nodes = law.rule(1).nodes
    return min(len(np.unique(nodes[nodes > 0])), cap)


@settings(max_examples=150, deadline=None)
@given(mt.task_laws(bounded=False))
def test_the_facts_of_a_drawn_task_law_are_the_laws_own(drawn):
    law, facts = drawn.law, drawn.facts
    assert parse_law(drawn.text) == law, drawn
    assert facts.bounded == law.s_law().is_bounded
    assert facts.support == law.s_bounds()
    sig = law.signal_bounds()
    assert (facts.s_lo, facts.s_hi) == ((None, None) if sig is None else tuple(sig))
    assert facts.has_signal == (sig is not None)
    assert facts.signal_values == signal_values(law)  # the hypothesis builder: quadrature nodes
    # s takes exactly one value over m ≠ 0 iff its signal support is a single point
    assert facts.single_value == (sig is not None and sig[0] == sig[1])
    if facts.bounded:
        assert facts.signal_values == _nodes_count(law.s_law())
        assert facts.atomic == law.s_law().is_atomic
    if facts.atomic:
        assert facts.atoms == frozenset(law.s_law().rule(1).nodes.tolist())
        assert facts.mass_at_zero == (0.0 in facts.atoms)


@settings(max_examples=100, deadline=None)
@given(mt.scalar_laws(bounded=False))
def test_the_facts_of_a_drawn_scalar_law_are_the_laws_own(drawn):
    law, facts = drawn.law, drawn.facts
    assert parse_scalar_law(drawn.text) == law
    assert facts.support == law.support() and facts.bounded == law.is_bounded
    sig = law.signal_support()
    assert (facts.s_lo, facts.s_hi) == ((None, None) if sig is None else tuple(sig))
    if facts.bounded:
        assert facts.signal_values == _nodes_count(law)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.sampled_from([("s",), ("sv+sr",)]), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from([("normal",), ("rademacher",), ("const",)]), st.integers(1, 3))
def test_the_options_restrict_what_is_drawn(data, modalities, bounded, atoms, atom_at_zero, zeta, max_dim):
    drawn = data.draw(mt.task_laws(bounded=bounded, modalities=modalities, atoms=atoms, atom_at_zero=atom_at_zero,
                                   zeta=zeta, max_dim=max_dim))
    law, facts = drawn.law, drawn.facts
    assert (law.s is not None) == (modalities == ("s",))
    assert law.zeta.kind == zeta[0] and law.d1 <= max_dim and law.d2 <= max_dim
    if bounded:
        assert facts.bounded and math.isfinite(law.s_bounds()[1])
    if not atoms:
        assert not facts.atomic and facts.signal_values == mt.MANY and not facts.mass_at_zero
    if not atom_at_zero:
        assert not facts.mass_at_zero and facts.has_signal


def test_bad_options_are_refused_when_the_strategy_is_made():
    for call in (lambda: mt.task_laws(modalities=("s", "x")), lambda: mt.task_laws(modalities=()),
                 lambda: mt.task_laws(max_dim=0), lambda: mt.task_laws(max_dim=True), lambda: mt.task_laws(atoms=1),
                 lambda: mt.zeta_laws(("normal", "cauchy")), lambda: mt.depths(5, 2), lambda: mt.depths(0)):
        with pytest.raises(InvalidArgument):
            call()


@settings(max_examples=50, deadline=None)
@given(mt.depths(3, 500))
def test_depths_lie_in_range(T):
    assert isinstance(T, int) and 3 <= T <= 500


# --------------------------------------------------------------------------- shrinking


def test_a_false_property_fails_on_a_shrunk_simple_law():
    """'s takes a single value where m ≠ 0' is false for most laws: Hypothesis reports it on the
    simplest, a point mass at 0 (no value at all), with ζ normal and d1 = d2 = 1."""
    seen = []

    @settings(max_examples=100, database=None, deadline=None, derandomize=True)
    @given(mt.task_laws())
    def s_takes_a_single_value(drawn):
        seen.append(drawn)
        assert drawn.facts.single_value

    with pytest.raises(AssertionError) as info:
        s_takes_a_single_value()
    assert seen[-1].text == "s=point(0.0); zeta=normal; d1=1; d2=1"
    assert any("s=point(0.0)" in note for note in getattr(info.value, "__notes__", [])), info.value


def test_without_atoms_at_zero_the_counterexample_is_a_uniform_law():
    drawn = find(mt.task_laws(atom_at_zero=False), lambda d: not d.facts.single_value,
                 settings=settings(database=None, derandomize=True))
    assert drawn.text.startswith("s=uniform(") and drawn.text.endswith("; zeta=normal; d1=1; d2=1"), drawn
    # which two-valued law the search lands on (discrete(...), a mix of two points, or per modality)
    # is the search's business and changes between Hypothesis releases; that one is reached, that its
    # facts say two distinct values, and that its text is a law, are ours
    two = find(mt.task_laws(), lambda d: d.facts.signal_values == 2,
               settings=settings(database=None, derandomize=True, max_examples=1000))
    assert two.facts.s_lo < two.facts.s_hi and two.facts.support == (two.facts.s_lo, two.facts.s_hi), two
    mmicl.parse_law(two.text)
    quiet = settings(database=None, derandomize=True)
    assert find(mt.depths(), lambda T: True, settings=quiet) == 1
    assert find(mt.depths(3, 500), lambda T: True, settings=quiet) == 3
    assert find(mt.depths(), lambda T: T >= 50, settings=quiet) in (50, 64, 100)  # a mark, or the least


# --------------------------------------------------------------------------- claims as assertions


@pytest.fixture
def clean_registry():
    registered()
    before = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(before)


def test_assert_verdict_passes_on_a_point_law_and_returns_the_result():
    result = mt.assert_verdict("thm6.2", law="s=point(2)")
    assert result.verdict == "holds" and result.id == "thm6.2"


def test_assert_verdict_on_an_unbounded_law_says_hypothesis_not_met_and_why():
    with pytest.raises(AssertionError) as info:
        mt.assert_verdict("thm6.2", law="s=exponential(1)")
    message = str(info.value)
    assert message.startswith("thm6.2 on s=exponential(1) (size smoke, seed 0): verdict hypothesis-not-met, "
                              "expected holds"), message
    assert "hypotheses not met:\n    - s = ‖m‖² is bounded (s_hi < ∞): s ∈ [0, inf]" in message
    # a set of verdicts
    result = mt.assert_verdict("thm6.2", "s=exponential(1)", expected={"hypothesis-not-met", "inconclusive"})
    assert result.verdict == "hypothesis-not-met"
    with pytest.raises(AssertionError, match="expected one of holds, inconclusive"):
        mt.assert_verdict("thm6.2", "s=exponential(1)", expected=["holds", "inconclusive"])


def test_the_message_lists_failing_and_undecided_checks_with_numbers_and_tolerances(clean_registry):
    @mmicl.claim("testapi.mixed", title="t", statement="s", replace=True)
    def evaluate(config):
        return [mmicl.Hypothesis("h", True)], [
            mmicl.Check("the gap closes", "quadrature", False, {"gap": 0.25}, tolerance="1e-12: quadrature rounding",
                        atol=0.0, rtol=1e-10),
            mmicl.Check("the flow settles", "ode", None, {"t_end": 10.0}, detail="the flow stopped early",
                        role="corroborating"),
            mmicl.Check("fine", "closed form", True, {"x": 1.0})]

    with pytest.raises(AssertionError) as info:
        mt.assert_verdict("testapi.mixed", "s=uniform(1,2)")
    message = str(info.value)
    assert "verdict fails, expected holds" in message and "decisive check failed: the gap closes" in message
    assert ("    - [decisive] the gap closes: FAILED (quadrature)\n        numbers: {'gap': 0.25}\n"
            "        tolerance: 1e-12: quadrature rounding; numbers may move by atol 0, rtol 1e-10") in message, message
    assert ("    - [corroborating] the flow settles: undecided (ode)\n        numbers: {'t_end': 10.0}\n"
            "        tolerance: the check states none\n        detail: the flow stopped early") in message, message
    assert "fine" not in message.split("checks failing or undecided:")[1]


def test_check_claim_takes_text_a_task_law_or_a_drawn_law_and_refuses_what_it_cannot_run(clean_registry):
    seen = []

    @mmicl.claim("testapi.law", title="t", statement="s", replace=True)
    def evaluate(config):
        seen.append((config.law, config.size, config.seed))
        return [], [mmicl.Check("c", "closed form", True)]

    drawn = find(mt.task_laws(), lambda d: d.law.d1 == 2, settings=settings(database=None, derandomize=True))
    for law in ("s=uniform(1,2); d1=2", mmicl.TaskLaw(s=mmicl.Uniform(1, 2), d1=2), drawn):
        assert mt.check_claim("testapi.law", law, size="quick", seed=7).verdict == "holds"
    assert seen[0] == seen[1] == ("s=uniform(1,2); zeta=normal; d1=2; d2=1", "quick", 7)
    assert parse_law(seen[2][0]) == drawn.law
    with pytest.raises(KeyError, match="no claim 'testapi.nothing'"):
        mt.check_claim("testapi.nothing")
    with pytest.raises(InputError, match="model variants are reserved"):
        mt.check_claim("testapi.law", model="untied")
    with pytest.raises(TypeError, match="task_laws"):
        mt.check_claim("testapi.law", find(mt.scalar_laws(), lambda d: True))
    with pytest.raises(ValueError, match="expected must be a verdict"):
        mt.assert_verdict("testapi.law", expected="passes")
    with pytest.raises(InputError, match="size must be one of"):
        mt.check_claim("testapi.law", size="huge")


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mt.task_laws(bounded=False, max_dim=2))
def test_every_to_json_of_a_claim_on_a_drawn_law_is_strict_json(drawn):
    result = mt.check_claim("thm6.2", drawn)
    for doc in (result.to_json(), result.to_json(relative_to=".")):
        json.loads(json.dumps(doc, allow_nan=False))
    assert (result.verdict == "hypothesis-not-met") == (not (drawn.facts.bounded and drawn.facts.has_signal))


@settings(max_examples=25, deadline=None)
@given(mt.task_laws(atom_at_zero=False))
def test_a_drawn_task_law_is_a_law_wherever_a_law_goes(law):
    """Written the natural way, with no unwrapping: the drawn object is a TaskLaw carrying its facts."""
    assert isinstance(law, mmicl.TaskLaw) and isinstance(law, mt.DrawnLaw) and law.law is law
    assert law.facts.has_signal and tuple(law.signal_bounds()) == (law.facts.s_lo, law.facts.s_hi)
    assert 0 < mmicl.alpha_T(law, 7) <= 1 / (1 + law.facts.s_lo) * (1 + 1e-12)
    assert law == parse_law(law.text) and hash(law) == hash(parse_law(law.text)) and str(law) == law.text


@settings(max_examples=25, deadline=None)
@given(mt.scalar_laws())
def test_a_drawn_scalar_law_is_a_scalar_law(s):
    assert isinstance(s, mt.DrawnLaw) and s.support() == s.facts.support
    assert mmicl.TaskLaw(s=s).s_bounds() == s.facts.support
