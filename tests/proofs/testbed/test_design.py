"""The testbed claims are pre-registered in code (``proofs/claims/testbed/design.py``) and in
docs/testbed.md: the two agree, the verdict seeds are fresh, the stated power is the sign test's, the
registry runs each design's claim, and the committed verdict runs are the docs' results table."""
from __future__ import annotations

from pathlib import Path

from mmicl.numerics.testbed.sign_tests import min_plus_to_decide
from mmicl.proofs.claims.testbed import design as designs

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "testbed.md"


def test_the_docs_carry_the_design_the_code_states():
    from mmicl.proofs.claims.testbed.results import block

    text = DOC.read_text(encoding="utf-8")
    assert block(text, "design") == designs.design_markdown(), \
        "regenerate it: python -m mmicl.proofs.claims.testbed docs --docs docs/testbed.md"


def test_verdict_seeds_are_fresh_and_apart_from_the_pilots():
    """The earlier interval designs used seeds 100·seed + s (s < 8) and pilots 200–203; the families
    and pilots share no seed with them or with each other."""
    a, b, pilots = set(designs.FAMILIES["A"]), set(designs.FAMILIES["B"]), set(designs.PILOT_SEEDS)
    earlier = {100 * k + s for k in range(10) for s in range(8)} | set(range(200, 204))
    assert len(a) == len(b) == 8 and not (a & b) and not ((a | b) & pilots) and not ((a | b | pilots) & earlier)


def test_every_check_has_a_positive_margin_a_reason_and_a_known_kind():
    for d in designs.DESIGNS.values():
        assert d.checks and any(c.role == "decisive" for c in d.checks), d.claim
        for c in d.checks:
            assert c.kind in ("superiority", "non-inferiority", "inferiority") and c.role in ("decisive", "corroborating")
            assert c.margin >= 0 and c.margin_why


def test_the_families_can_decide_and_the_stated_power_is_the_tests():
    assert min_plus_to_decide(8, designs.ALPHA) == 7 and min_plus_to_decide(16, designs.ALPHA) == 12
    pw = designs.power_table()
    assert 0.75 < pw[16][0.8] < pw[16][0.9] and pw[8][0.9] < pw[16][0.9]


RESULTS = ROOT / "studies" / "results" / "v3_quick"
ROOTS = [ROOT / r for r in ("studies/results/v3_quick", "studies/results/v4_quick")]


def test_the_docs_carry_the_results_table_of_the_committed_verdict_runs():
    import pytest

    from mmicl.proofs.claims.testbed.results import block, results_markdown

    if not RESULTS.is_dir():
        pytest.skip("the committed results are in the repository, not in an installed package")
    assert block(DOC.read_text(encoding="utf-8"), "results") == results_markdown(ROOTS), \
        "regenerate it: python -m mmicl.proofs.claims.testbed docs --docs docs/testbed.md"


def test_a_results_folder_becomes_one_row_per_check_and_blocks_are_replaced_in_place(tmp_path):
    import json

    import pytest

    from mmicl.proofs.claims.testbed.results import block, replace_block, result_folders, results_markdown

    assert results_markdown(tmp_path).startswith("No verdict run")
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


def test_the_reported_block_lists_each_latest_versions_summary_numbers_with_their_tolerance(tmp_path):
    import json

    from mmicl.proofs.claims.testbed.results import block, reported_markdown

    assert reported_markdown(tmp_path).startswith("No verdict run")
    for version, base in (("3", 0.5), ("4", 0.125)):
        run = tmp_path / f"claim4_v{version}"
        run.mkdir()
        summary = {"no_stage2_ICL": base, "premise_seeds_A": 8, "verdict: a check": "passes"}
        (run / "verdicts.json").write_text(json.dumps({"claims": [{"id": "testbed.claim4", "evidence": {
            "summary": summary, "summary_atol": {"no_stage2_ICL": 0.01, "premise_seeds_A": 8.0}}}]}))
    table = reported_markdown(tmp_path).splitlines()
    assert len(table) == 3 and table[2].startswith("| claim4 | 4 |")          # the latest version only
    assert "no_stage2_ICL = 0.125 ± 0.01" in table[2] and "premise_seeds_A = 8 ± 8" in table[2]
    assert "verdict:" not in table[2]
    if RESULTS.is_dir():
        assert block(DOC.read_text(encoding="utf-8"), "reported") == reported_markdown(ROOTS), \
            "regenerate it: python -m mmicl.proofs.claims.testbed docs --docs docs/testbed.md"


def test_the_registry_runs_each_designs_claim_and_its_result_file_records_the_design_version():
    from mmicl.proofs.claims import testbed
    from mmicl.proofs.registry import REGISTRY

    for claim in designs.DESIGNS:
        assert REGISTRY[f"testbed.{claim}"].evaluate.function().__wrapped__ is getattr(testbed, claim), claim
    assert {d.version for d in designs.DESIGNS.values()} <= {3, 3.1, 3.2, 4, 4.1}


def test_a_design_reads_the_latest_family_set_at_or_below_its_version_and_every_set_is_fresh():
    assert designs.family_set("claim8") is designs.FAMILY_SETS[4.1]      # claim 8 is on version 4.1
    assert designs.family_set("claim4") is designs.FAMILY_SETS[4]
    seeds = [s for fams in designs.FAMILY_SETS.values() for fam in fams.values() for s in fam.seeds]
    assert len(seeds) == len(set(seeds))                                 # no seed in two families
    assert not set(seeds) & set(designs.V4_PILOT_SEEDS + designs.STAGE1_PILOT_SEEDS + designs.PILOT_SEEDS)
    offsets = [fam.data_offset for v, fams in designs.FAMILY_SETS.items() if v >= 4 for fam in fams.values()]
    assert len(offsets) == len(set(offsets))                             # each family its own data stream


def test_each_family_alone_is_decided_by_the_registrys_rule_on_its_own_outcomes_and_premise_counts():
    """A family's verdict reads only that family: its sign test on its per-seed outcomes, and a
    per-seed premise met when at most PREMISE_FAILURES of its seeds fail it."""
    from mmicl.proofs.claims.testbed.results import family_verdicts

    def claim(outcomes_a, outcomes_b, failing_a=0, failing_b=0):
        k = designs.PREMISE_FAILURES
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
    k = designs.PREMISE_FAILURES
    assert family_verdicts(claim(up, up, failing_a=k + 1, failing_b=k)) == {"A": "hypothesis-not-met", "B": "holds"}
    # a family whose seeds a premise all left out says nothing (the other family then decides alone)
    assert family_verdicts(claim([], up)) == {"A": "inconclusive", "B": "holds"}


def test_the_docs_carry_holms_table_of_the_latest_versions():
    import pytest

    from mmicl.proofs.claims.testbed.results import block, holm_markdown

    if not RESULTS.is_dir():
        pytest.skip("the committed results are in the repository, not in an installed package")
    assert block(DOC.read_text(encoding="utf-8"), "holm") == holm_markdown(ROOTS), \
        "regenerate it: python -m mmicl.proofs.claims.testbed docs --docs docs/testbed.md"


def test_holm_reads_each_claims_latest_version_and_keeps_a_decision_only_where_its_direction_survives(tmp_path):
    import json

    from mmicl.numerics.testbed.multiplicity import holm
    from mmicl.proofs.claims.testbed.results import holm_markdown, holm_rows

    assert holm_rows(tmp_path) == [] and holm_markdown(tmp_path).startswith("No verdict run")

    def run(folder, claim, checks):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "verdicts.json").write_text(json.dumps({"claims": [{"id": f"testbed.{claim}",
            "verdict": "holds", "evidence": {"hypotheses": [], "checks": checks}}]}))

    def check(name, passed, p_above, p_below, role="decisive"):
        return {"name": name, "role": role, "passed": passed, "numbers": {"p_above": p_above, "p_below": p_below}}

    run("claim1_v3", "claim1", [check("old", True, 1e-5, 1.0)])              # superseded by v3.1: not read
    run("claim1_v3.1", "claim1", [check("a", True, 1e-5, 1.0), check("b", True, 0.01, 1.0),
                                  check("side", True, 1e-5, 1.0, role="corroborating")])
    run("claim2_v3", "claim2", [check("c", False, 1.0, 0.004), check("d", None, 0.5, 0.6),
                                {"name": "e", "role": "decisive", "passed": None, "numbers": {}}])
    rows = holm_rows(tmp_path)
    assert [(r["claim"], r["version"], r["check"]) for r in rows] == [("claim1", "3.1", "a"), ("claim1", "3.1", "b"),
                                                                      ("claim2", "3", "c"), ("claim2", "3", "d")]
    # 8 one-sided tests: 1e-5·8 and 0.004·7 survive at 0.05; 0.01·6 = 0.06 does not
    assert [r["holm_decision"] for r in rows] == [True, None, False, None]
    direct = holm({"a+": 1e-5, "b+": 0.01, "c+": 1.0, "d+": 0.5, "a-": 1.0, "b-": 1.0, "c-": 0.004, "d-": 0.6})
    assert rows[1]["holm_above"] == direct.adjusted["b+"] and rows[2]["holm_below"] == direct.adjusted["c-"]
    assert "8 in all" in holm_markdown(tmp_path)


def test_the_magnitude_is_the_mean_pooled_difference_with_its_se_over_seeds_beside_the_margin():
    import math

    from mmicl.proofs.claims.testbed.results import magnitude

    got = magnitude({"diff_A": [0.1, 0.3], "diff_B": [0.2], "margin": 0.05})
    se = math.sqrt(((0.1 - 0.2) ** 2 + 0 + (0.3 - 0.2) ** 2) / 2) / math.sqrt(3)
    assert got == f"+0.2 ± {se:.2g} (n = 3, margin 0.05)"
    assert magnitude({"plus": 3}) == "–" and magnitude({"diff_A": [], "diff_B": []}) == "–"
    assert magnitude({"diff_A": [-0.5]}).startswith("-0.5 ± nan (n = 1")


def test_version_4_families_are_fresh_and_each_has_a_data_stream_of_its_own():
    from mmicl.proofs.claims.testbed.pilots import STAGE1_PILOT_SEEDS, V4_PILOT_SEEDS

    v3 = {s for fam in designs.FAMILY_SETS[3].values() for s in fam.seeds}
    v4 = [set(fam.seeds) for fam in designs.FAMILY_SETS[4].values()]
    pilots = set(designs.PILOT_SEEDS) | set(STAGE1_PILOT_SEEDS) | set(V4_PILOT_SEEDS) | set(range(9004, 9012))
    assert not (v4[0] & v4[1]) and not ((v4[0] | v4[1]) & (v3 | pilots))
    assert all(len(s) == 8 for s in v4)
    for run_seed in (0, 1, 7):
        seeds = [designs.data_seed(run_seed, fam) for fam in designs.FAMILY_SETS[4].values()]
        assert len(set(seeds)) == 2 and run_seed not in seeds       # distinct, and not version 3's stream
        assert all(designs.data_seed(run_seed, fam) == run_seed for fam in designs.FAMILY_SETS[3].values())
    assert {designs.data_seed(s, designs.FAMILY_SETS[4]["A"]) for s in range(50)}.isdisjoint(
        {designs.data_seed(s, designs.FAMILY_SETS[4]["B"]) for s in range(50)})
    # a claim on a version-3 design reads version 3's families
    assert all(designs.family_set(c) is designs.FAMILY_SETS[3] for c, d in designs.DESIGNS.items() if d.version < 4)
    assert designs.FAMILIES == {f: fam.seeds for f, fam in designs.FAMILY_SETS[3].items()}


def test_a_retired_versions_design_is_read_from_its_run_folder_and_names_that_runs_checks(tmp_path):
    import json

    import pytest

    if not RESULTS.is_dir():
        pytest.skip("the committed results are in the repository, not in an installed package")
    assert designs.design_of_run("claim2", designs.DESIGNS["claim2"].version) is designs.DESIGNS["claim2"]
    for claim, version in (("claim8", "3"), ("claim1", "3"), ("claim2", "3"), ("claim3", "3.1")):
        old = designs.design_of_run(claim, version, RESULTS / f"{claim}_v{version}")
        assert old.version == float(version) and old is not designs.DESIGNS[claim]
        run = json.loads((RESULTS / f"{claim}_v{version}" / "verdicts.json").read_text(encoding="utf-8"))
        assert [c["name"] for c in run["claims"][0]["evidence"]["checks"]] == [c.name for c in old.checks]
    with pytest.raises(ValueError, match="design.json"):
        designs.design_of_run("claim8", "3", tmp_path)


def test_verdict_runs_are_kept_by_version_and_read_from_every_root(tmp_path):
    import json

    from mmicl.proofs.claims.testbed.results import RESULT_ROOTS, result_folders, results_root

    assert results_root(3) == results_root("3.2") == RESULT_ROOTS[0] and results_root(4) == RESULT_ROOTS[1]
    for root, name in (("old", "claim8_v3"), ("new", "claim8_v4"), ("new", "claim2_v4")):
        (tmp_path / root / name).mkdir(parents=True)
        (tmp_path / root / name / "verdicts.json").write_text(json.dumps({"claims": []}))
    got = [(c, v) for c, v, _ in result_folders([tmp_path / "old", tmp_path / "new", tmp_path / "missing"])]
    assert got == [("claim2", "4"), ("claim8", "3"), ("claim8", "4")]


def test_the_v4_stage2_margins_follow_their_stated_rule_on_the_size_pilot():
    """Claim 5's margin is a tenth of the size pilot's median area rise (rounded to 0.01), computed
    from the committed pilot record; claim 4's margins are at most a quarter of the pilot's median
    rise of final ICL (the rule's 'four times over')."""
    import json

    from mmicl.proofs.claims.testbed.pilots import v4_stage2_reading

    pilot = json.loads((ROOT / "studies" / "results" / "pilot_v4_size.json").read_text(encoding="utf-8"))
    reading = v4_stage2_reading(pilot)
    assert reading["sigma"] == pilot["distractors"]["sigma"]
    assert all(c.margin == reading["claim5_margin"] for c in designs.DESIGNS["claim5"].checks)
    assert all(4 * c.margin <= reading["rise_median"] for c in designs.DESIGNS["claim4"].checks)
    broken = {**pilot, "stage2_curves": {k: {**v, "steps": v["steps"][1:]} for k, v in pilot["stage2_curves"].items()}}
    import pytest

    with pytest.raises(ValueError, match="steps 0"):
        v4_stage2_reading(broken)
