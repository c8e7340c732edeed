"""``mmicl compare`` of runs that differ in their settings: what differs is said first; across two
seeds a sampled number with a stated se is judged as two independent estimates and one without is
left uncompared; across sizes, laws or variants only verdicts are compared; ``render`` keeps a long
comparison short, each tolerance's reason said once."""
from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from mmicl.cli import main
from mmicl.compare import MOVE_Z, SHOWN, compare, differences, render
from mmicl.proofs.claim import Check, ClaimResult, Summary

SE = 0.01
"""The se each sampled number states in these summaries."""


def _doc(seed=0, **over) -> dict:
    check = {"name": "trained", "method": "monte carlo", "passed": True, "role": "decisive", "tolerance": "",
             "detail": "", "atol": {"alpha": 1e-3, "alpha_se": 1e-3, "curve": 1e-3, "n": 0.0}, "rtol": 0.0,
             "numbers": {"alpha": 0.5, "alpha_se": SE, "curve": [0.1, 0.2], "curve_se": [SE, SE], "n": 1000,
                         "winner": 2},
             "sampled": ["alpha", "alpha_se", "curve", "curve_se", "winner"],
             "se": {"alpha": "alpha_se", "curve": "curve_se"}}
    doc = {"schema_version": 1, "seed": seed, "size": "smoke", "law": "s=uniform(0.5,4)",
           "provenance": {"mmicl": "0.2.0", "platform": "Linux x86_64", "numpy": "2.1.0"},
           "claims": [{"id": "thm6.2", "verdict": "holds", "verdict_reason": "",
                       "evidence": {"statement": "", "summary": {"alpha": 0.5, "exact_alpha": 0.4},
                                    "summary_atol": 1e-3, "summary_sampled": ["alpha"],
                                    "summary_se": {"alpha": SE}, "hypotheses": [], "checks": [check],
                                    "figures": [], "seconds": 1.0}}]}
    doc |= over
    return doc


def _numbers(doc):
    return doc["claims"][0]["evidence"]["checks"][0]["numbers"]


BOUND = MOVE_Z * math.hypot(SE, SE)
"""How far a sampled number with se ``SE`` on both sides may move across two seeds."""


def test_across_two_seeds_a_sampled_estimate_moves_by_its_se_not_by_its_rerun_tolerance():
    new = _doc(seed=1)
    _numbers(new)["alpha"] = 0.5 + 0.9 * BOUND  # far beyond atol 1e-3, within the seed rule
    _numbers(new)["curve"][1] = 0.2 - 0.9 * BOUND
    new["claims"][0]["evidence"]["summary"]["alpha"] = 0.5 + 0.9 * BOUND
    result = compare(_doc(), new)
    assert result.regressions == [] and ("seed", 0, 1) in result.differences
    assert result.independent_estimates == 4  # alpha, curve[0], curve[1] and the summary's alpha
    # the same move between two runs of the same seed is a regression: they are reruns
    same_seed = copy.deepcopy(new)
    same_seed["seed"] = 0
    assert {c.key for c in compare(_doc(), same_seed).regressions} == {
        "trained: alpha", "trained: curve[1]", "summary: alpha"}
    # and a move beyond the seed rule is one, named, with the rule as its tolerance
    _numbers(new)["alpha"] = 0.5 + 1.1 * BOUND
    moved = compare(_doc(), new).regressions
    assert [c.key for c in moved] == ["trained: alpha"] and "independent estimates" in moved[0].tolerance
    assert moved[0].allowed == pytest.approx(BOUND) and moved[0].excess == pytest.approx(1.1)


def test_the_new_runs_own_se_enters_the_bound():
    new = _doc(seed=1)
    _numbers(new)["alpha_se"] = 3 * SE  # a noisier new run: the bound widens to 4·√(se² + 9se²)
    _numbers(new)["alpha"] = 0.5 + 0.9 * MOVE_Z * math.hypot(SE, 3 * SE)
    assert compare(_doc(), new).regressions == []
    _numbers(new)["alpha"] = 0.5 + 1.1 * MOVE_Z * math.hypot(SE, 3 * SE)
    assert [c.key for c in compare(_doc(), new).regressions] == ["trained: alpha"]


def test_across_two_seeds_a_sampled_number_without_an_se_is_uncompared_but_the_outcome_still_is():
    new = _doc(seed=1)
    _numbers(new)["winner"] = 0  # which restart won: sampled, no se
    _numbers(new)["alpha_se"] = 0.5 * SE  # an se is itself sampled, with no se of its own
    result = compare(_doc(), new)
    assert result.regressions == [] and result.seed_dependent == 4  # winner, alpha_se, curve_se[0..1]
    # a number that does not depend on the seed keeps its tolerance
    _numbers(new)["n"] = 999
    assert [c.key for c in compare(_doc(), new).regressions] == ["trained: n"]
    _numbers(new)["n"] = 1000
    new["claims"][0]["evidence"]["checks"][0]["passed"] = False
    assert [c.kind for c in compare(_doc(), new).regressions] == ["check outcome"]
    # the summary's unsampled number keeps its tolerance too
    new = _doc(seed=1)
    new["claims"][0]["evidence"]["summary"]["exact_alpha"] = 0.41
    assert [c.key for c in compare(_doc(), new).regressions] == ["summary: exact_alpha"]


def test_an_se_that_is_missing_or_not_a_number_leaves_the_estimate_uncompared():
    new = _doc(seed=1)
    _numbers(new)["alpha"] = 0.9
    _numbers(new)["alpha_se"] = None
    result = compare(_doc(), new)
    assert result.regressions == [] and result.seed_dependent >= 1


@pytest.mark.parametrize("setting, value", [("size", "quick"), ("law", "s=uniform(1,2)"),
                                            ("variant", "untied")])
def test_across_sizes_laws_or_variants_only_verdicts_are_compared(setting, value):
    old = _doc(variant="lca") if setting == "variant" else _doc()
    new = _doc(**{setting: value})
    _numbers(new)["n"] = 5000  # another size computes other numbers: not a regression
    result = compare(old, new)
    assert result.regressions == [] and not result.numbers_compared
    assert (setting, old[setting], value) in result.differences
    new["claims"][0]["verdict"] = "inconclusive"
    assert [c.kind for c in compare(old, new).regressions] == ["verdict"]
    assert [c.kind for c in compare(old, _doc(**{setting: value}, claims=[])).regressions] == ["missing claim"]


def test_differences_name_the_platform_mmicl_and_the_software():
    new = _doc()
    new["provenance"] = {"mmicl": "0.3.0", "platform": "Darwin arm64", "numpy": "2.2.0"}
    got = {k: (o, n) for k, o, n in differences(_doc(), new)}
    assert got["platform"] == ("Linux x86_64", "Darwin arm64") and got["mmicl version"] == ("0.2.0", "0.3.0")
    assert "numpy 2.1.0 → 2.2.0" in got["software"][1]
    # those are what the tolerances are for: numbers are compared as usual
    assert compare(_doc(), new).numbers_compared
    assert differences(_doc(), _doc()) == []
    # a summary that does not record a setting says nothing about it
    older = _doc()
    del older["law"]
    assert differences(older, _doc(law="s=point(1)")) == []


def _many_moves(n: int) -> tuple[dict, dict]:
    old, new = _doc(), _doc()
    for doc, shift in ((old, 0.0), (new, 1.0)):
        _numbers(doc)["curve"] = [0.1 * i + shift * (i + 1) * 1e-2 for i in range(n)]
        _numbers(doc)["curve_se"] = [SE] * n
    return old, new


def test_render_of_many_moves_is_short_lists_the_largest_and_says_each_tolerance_once():
    old, new = _many_moves(120)
    result = compare(old, new)
    assert len(result.regressions) == 120
    lines = render(result)
    assert len(lines) < 40, "\n".join(lines)
    listed = [line for line in lines if "trained: curve[" in line or " · trained: curve[" in line]
    assert len(listed) == SHOWN
    assert "curve[119]" in listed[0]  # the largest move first
    notes = [line for line in lines if line.startswith("  [")]
    assert len(notes) == 1 and "atol" not in lines[-1]
    assert lines[-1] == "120 regression(s)"
    every = render(result, every=True)
    assert sum("curve[" in line for line in every) == 120 and len(every) > 120


def test_the_command_line_says_the_seed_differs_and_exits_0_when_nothing_moved_beyond_the_rule(tmp_path):
    paths = []
    for name, seed in (("a", 0), ("b", 1)):
        doc = _doc(seed=seed)
        _numbers(doc)["alpha"] = 0.5 + seed * 0.5 * BOUND
        (tmp_path / name).mkdir()
        (tmp_path / name / "verdicts.json").write_text(json.dumps(doc))
        paths.append(str(tmp_path / name))
    r = CliRunner().invoke(main, ["compare", *paths])
    assert r.exit_code == 0, r.output
    assert "seed: 0 → 1" in r.output and "independent estimates" in r.output
    assert "0 regression(s)" in r.output
    doc = _doc(seed=1)
    _numbers(doc)["alpha"] = 0.9
    (tmp_path / "b" / "verdicts.json").write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["compare", *paths])
    assert r.exit_code == 1 and "trained: alpha 0.5 → 0.9" in r.output and "1 regression(s)" in r.output
    r = CliRunner().invoke(main, ["compare", *paths, "--json"])
    out = json.loads(r.output)
    assert out["differences"] == [{"setting": "seed", "old": 0, "new": 1}] and out["regressions"] == 1


def test_a_check_states_sampled_and_se_or_is_refused():
    c = Check("c", "monte carlo", True, {"m": 1.0, "m_se": 0.1, "k": 3}, sampled=("m", "m_se"), se={"m": "m_se"})
    assert c.sampled == ("m", "m_se") and c.se == {"m": "m_se"}
    with pytest.raises(ValueError, match="se names keys that sampled does not list"):
        Check("c", "mc", True, {"m": 1.0}, sampled=(), se={"m": 0.1})
    with pytest.raises(ValueError, match="finite number ≥ 0"):
        Check("c", "mc", True, {"m": 1.0}, sampled=True, se={"m": -1.0})
    with pytest.raises(ValueError, match="sampled is True, False or a tuple"):
        Check("c", "mc", True, {"m": 1.0}, sampled="m")
    with pytest.raises(ValueError, match="sampled"):
        Summary({"m": 1.0}, se={"m": 0.1})
    # written to the summary only where stated
    plain = ClaimResult("x", "holds", "", [], [Check("p", "exact", True, {"k": 1})]).to_json()
    assert "sampled" not in plain["evidence"]["checks"][0] and "summary_sampled" not in plain["evidence"]
    stated = ClaimResult("x", "holds", "", [], [c], summary={"m": 1.0}, summary_sampled=True,
                         summary_se={"m": 0.1}).to_json()
    assert stated["evidence"]["checks"][0]["se"] == {"m": "m_se"}
    assert stated["evidence"]["summary_sampled"] is True and stated["evidence"]["summary_se"] == {"m": 0.1}


def test_the_built_in_trained_checks_state_their_se_for_every_estimate():
    """Every key a built-in Monte Carlo check declares an se for is one it declares sampled, and
    the key it names as holding the se's is a sampled key too (an se is itself an estimate)."""
    from mmicl.proofs.claims import mc_evidence

    for key, where in mc_evidence.TRAINED_SE.items():
        assert key in mc_evidence.TRAINED_SAMPLED
        assert not isinstance(where, str) or where in mc_evidence.TRAINED_SAMPLED
