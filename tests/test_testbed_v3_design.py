"""Version 3 of the testbed claims is pre-registered in code and in docs/testbed.md: the two agree,
the verdict seeds are fresh, and the stated power is the sign test's."""
from __future__ import annotations

from pathlib import Path

from mmicl.numerics.testbed.decide_v3 import min_plus_to_decide
from mmicl.proofs.claims import testbed_v3 as v3

DOC = Path(__file__).resolve().parents[1] / "docs" / "testbed.md"


def test_the_docs_carry_the_design_the_code_states():
    from mmicl.proofs.claims.testbed_v3_report import block

    text = DOC.read_text(encoding="utf-8")
    assert block(text, "v3-design") == v3.design_markdown(), \
        "regenerate it: python -m mmicl.proofs.claims.testbed_v3_report --docs docs/testbed.md"


def test_verdict_seeds_are_fresh_and_apart_from_the_pilots():
    """Versions 1–2 used seeds 100·seed + s (s < 8) and pilots 200–203; version 3's families and
    pilots share no seed with them or with each other."""
    a, b, pilots = set(v3.FAMILIES["A"]), set(v3.FAMILIES["B"]), set(v3.PILOT_SEEDS)
    earlier = {100 * k + s for k in range(10) for s in range(8)} | set(range(200, 204))
    assert len(a) == len(b) == 8 and not (a & b) and not ((a | b) & pilots) and not ((a | b | pilots) & earlier)


def test_every_check_has_a_positive_margin_a_reason_and_a_known_kind():
    for d in v3.DESIGNS.values():
        assert d.checks and any(c.role == "decisive" for c in d.checks), d.claim
        for c in d.checks:
            assert c.kind in ("superiority", "non-inferiority", "inferiority") and c.role in ("decisive", "corroborating")
            assert c.margin >= 0 and c.margin_why


def test_the_families_can_decide_and_the_stated_power_is_the_tests():
    assert min_plus_to_decide(8, v3.ALPHA) == 7 and min_plus_to_decide(16, v3.ALPHA) == 12
    pw = v3.power_table()
    assert 0.75 < pw[16][0.8] < pw[16][0.9] and pw[8][0.9] < pw[16][0.9]


def test_claim3s_pilot_rule_chooses_what_it_states():
    ok, low = [0.95, 0.97, 0.92, 0.99], [0.95, 0.5, 0.96, 0.97]
    finals = {("ape", 64): [0.2] * 4, ("ape", 128): [0.91, 0.95, 0.2, 0.93], ("rope", 128): [0.3] * 4,
              ("ape", 512): ok, ("rope", 512): low, ("ape", 1024): ok, ("rope", 1024): ok}
    c = v3.choose_claim3(finals)
    assert c["K_thr"] == 128          # APE's median at 128 is 0.92 ≥ 0.9; at 64 it is 0.2
    assert c["K_both"] == 1024        # at 512 one RoPE seed is at 0.5
    assert v3.choose_claim3({})["K_both"] is None


RESULTS = Path(__file__).resolve().parents[1] / "studies" / "results" / "v3_quick"


def test_the_docs_carry_the_results_table_of_the_committed_verdict_runs():
    import pytest

    from mmicl.proofs.claims.testbed_v3_report import block, results_markdown

    if not RESULTS.is_dir():
        pytest.skip("the committed results are in the repository, not in an installed package")
    assert block(DOC.read_text(encoding="utf-8"), "v3-results") == results_markdown(RESULTS), \
        "regenerate it: python -m mmicl.proofs.claims.testbed_v3_report --docs docs/testbed.md"


def test_a_results_folder_becomes_one_row_per_check_and_blocks_are_replaced_in_place(tmp_path):
    import json

    import pytest

    from mmicl.proofs.claims.testbed_v3_report import block, replace_block, result_folders, results_markdown

    assert results_markdown(tmp_path).startswith("No version-3 verdict run")
    run = tmp_path / "claim2_v3"
    run.mkdir()
    checks = [{"name": f"check {i}", "role": "decisive", "passed": p,
               "numbers": {"plus": 12, "minus": 1, "unresolved": 3, "p_above": 0.0017, "p_below": 0.99}}
              for i, p in enumerate((True, None))]
    (run / "verdicts.json").write_text(json.dumps({"claims": [{"id": "testbed.claim2", "verdict": "inconclusive",
        "verdict_reason": "r", "evidence": {"hypotheses": [{"text": "settled", "met": True, "detail": "8 of 8"}],
                                            "checks": checks}}]}))
    (run / "claim2.json").write_text(json.dumps({"seconds": {"stage1": {"a": 60.0}, "b": 120.0}}))  # nested: per stage
    (tmp_path / "claim2_v2.5").mkdir()  # a folder without verdicts.json is not a run
    assert [(c, v) for c, v, _ in result_folders(tmp_path)] == [("claim2", "3")]
    table = results_markdown(tmp_path).splitlines()
    assert len(table) == 2 + 2 and "**inconclusive**" in table[2] and "3 min" in table[2]
    assert "12 / 1 / 3" in table[2] and "(decisive, passes)" in table[2] and "(decisive, undecided)" in table[3]
    text = "a\n<!-- x:start -->\nold\n<!-- x:end -->\nb\n"
    assert replace_block(text, "x", "new\nlines") == "a\n<!-- x:start -->\nnew\nlines\n<!-- x:end -->\nb\n"
    assert block(replace_block(text, "x", "n"), "x") == "n"
    with pytest.raises(ValueError, match="no block"):
        replace_block("a", "x", "n")


def test_the_registry_runs_version_3_of_every_converted_claim():
    from mmicl.proofs.claims import testbed_v3_claims as uni
    from mmicl.proofs.claims import testbed_v3_modalities as modalities
    from mmicl.proofs.claims import testbed_v3_transfer as transfer
    from mmicl.proofs.registry import REGISTRY

    v3_functions = {"claim1": uni.claim1_v3, "claim2": uni.claim2_v3, "claim3": uni.claim3_v3, "claim8": uni.claim8_v3,
                    "claim4": transfer.claim4_v3, "claim5": transfer.claim5_v3,
                    "claim9": transfer.claim9_v3, "claim6": modalities.claim6_v3, "claim7": modalities.claim7_v3}
    for claim, fn in v3_functions.items():
        assert REGISTRY[f"testbed.{claim}"].evaluate.__wrapped__ is fn, claim


def test_each_family_alone_is_decided_by_the_registrys_rule_on_its_own_outcomes_and_premise_counts():
    """A family's verdict reads only that family: its sign test on its per-seed outcomes, and a
    per-seed premise met when at most PREMISE_FAILURES of its seeds fail it."""
    from mmicl.proofs.claims.testbed_v3_report import family_verdicts

    def claim(outcomes_a, outcomes_b, failing_a=0, failing_b=0):
        k = v3.PREMISE_FAILURES
        detail = f"family A: {8 - failing_a} of 8 seeds; family B: {8 - failing_b} of 8 seeds"
        return {"evidence": {
            "hypotheses": [{"text": "premise", "met": max(failing_a, failing_b) <= k, "detail": detail},
                           {"text": "sizes", "met": True, "detail": ""}],
            "checks": [{"name": "c", "method": "empirical", "passed": None, "role": "decisive",
                        "numbers": {"outcomes_A": outcomes_a, "outcomes_B": outcomes_b}}]}}

    up, none, down = [1] * 8, [0] * 8, [-1] * 8
    assert family_verdicts(claim(up, none)) == {"A": "holds", "B": "inconclusive"}
    assert family_verdicts(claim(up, down)) == {"A": "holds", "B": "fails"}
    assert family_verdicts(claim([1] * 6 + [0, 0], up)) == {"A": "holds", "B": "holds"}      # 6 of 6 resolved
    assert family_verdicts(claim([1] * 4 + [0] * 4, up)) == {"A": "inconclusive", "B": "holds"}  # p = 1/16
    k = v3.PREMISE_FAILURES
    assert family_verdicts(claim(up, up, failing_a=k + 1, failing_b=k)) == {"A": "hypothesis-not-met", "B": "holds"}
    # a family whose seeds a premise all left out says nothing (the other family then decides alone)
    assert family_verdicts(claim([], up)) == {"A": "inconclusive", "B": "holds"}


def test_the_stage1_pilot_rules_take_the_fewest_steps_and_the_decoder_with_the_most_seeds_meeting_the_premise():
    """Claim 4's premise per seed (ICL ≥ 0.95 and some head's induction > 0.3) at each step count of
    the grid, read off one run's evaluations.  Rule one: the smallest count at which ≥ 7 of 8 seeds of
    the quick decoder meet it.  Rule two: the (decoder, steps) with the most seeds meeting it, ties to
    the quick decoder and then to fewer steps; version 3.1 only if that is not (1 head, 5000)."""
    steps = list(range(0, 10001, 250))

    def curves(induction_from, acc=0.97):   # seed e grows its induction head at step induction_from[e]
        ind = [[[[0.05], [0.9 if s >= start else 0.0]] for start in induction_from] for s in steps]
        return {"steps": steps, "acc_icl": [[acc] * 8 for _ in steps], "induction": ind}

    seven, eight, late = [0] * 7 + [10 ** 6], [0] * 8, [0] * 6 + [6000, 9000]
    r = v3.choose_stage1_v31({1: curves(late), 4: curves(late)})
    assert r["stage1_steps"] == 7500 and r["decoder"] == {"heads": 1, "steps": 10000} and r["version_31"]
    r = v3.choose_stage1_v31({1: curves(seven), 4: curves(eight)})
    assert r["stage1_steps"] == 5000 and r["decoder"] == {"heads": 4, "steps": 5000} and r["version_31"]
    r = v3.choose_stage1_v31({1: curves(seven), 4: curves(seven)})         # a tie keeps the version-3 recipe
    assert r["decoder"] == {"heads": 1, "steps": 5000} and not r["version_31"]
    never = v3.choose_stage1_v31({1: curves([0] * 6 + [10 ** 6] * 2), 4: curves(eight, acc=0.94)})
    assert never["stage1_steps"] is None and never["premise_counts"]["1 heads, 10000 steps"] == 6
    assert never["premise_counts"]["4 heads, 5000 steps"] == 0                 # an induction head alone is not enough
    assert v3.choose_stage1_v31({1: curves(eight)})["decoder"] is None          # the 4-head run is missing
    stopped = v3.choose_stage1_v31({1: {**curves(late), "steps": steps[:30]}, 4: curves(eight)})
    assert stopped["stage1_steps"] is None and stopped["decoder"] is None      # a run that stopped early


STUDIES = Path(__file__).resolve().parents[1] / "studies" / "results"


def test_the_committed_stage1_pilot_gives_claim_4s_version_31_decoder_by_its_rule():
    import json

    import pytest

    from mmicl.proofs.claims import testbed_v3_transfer as tr

    path = STUDIES / "pilot_stage1_v31.json"
    if not path.is_file():
        pytest.skip("the pilot file is in the repository, not in an installed package")
    doc = json.loads(path.read_text(encoding="utf-8"))
    met: dict = {}
    for key, flags in doc["premise_met"].items():   # "4 heads, 5000 steps"
        heads, steps = (int(part.split()[0]) for part in key.split(", "))
        met.setdefault(heads, {})[steps] = flags
    choice = v3.stage1_choice(met)
    assert choice["decoder"] == doc["decoder"] and choice["stage1_steps"] == doc["stage1_steps"]
    assert choice["decoder"] == {"heads": tr.STAGE1_HEADS_V31, "steps": 5000} and choice["version_31"]
    assert tr.VERSIONS["claim4"] == 3.1 and doc["pilot_seeds"] == list(v3.STAGE1_V31_SEEDS)
    assert all(len(flags) == 8 for flags in doc["premise_met"].values())
