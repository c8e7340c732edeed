"""The pilot rules of the testbed claims (``proofs/claims/testbed/pilots.py``) choose what they state
on hand-made pilot results, and applied to the committed pilot files they give the settings the
claims run on (``PILOTED``)."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

import pytest

from mmicl.proofs.claims.testbed import pilots
from mmicl.proofs.claims.testbed.design import FAMILIES, PILOT_SEEDS
from mmicl.proofs.claims.testbed.pilots import PILOTED

STUDIES = Path(__file__).resolve().parents[3] / "studies" / "results"
committed = pytest.mark.skipif(not STUDIES.is_dir(), reason="the pilot files are in the repository, not in a package")


def _read(name: str) -> dict:
    return json.loads((STUDIES / f"pilot_{name}.json").read_text(encoding="utf-8"))


# ---- claim 1 and claim 3 ---------------------------------------------------------------------------
def test_claim1s_version4_rule_takes_the_largest_K_where_icl_is_not_saturated():
    finals = {256: [0.1, 0.2, 0.15], 1024: [0.2, 0.95, 0.5], 4096: [0.95, 0.99, 0.3]}
    assert pilots.choose_v4_claim1(finals)["K_edge"] == 1024          # medians 0.15, 0.5, 0.95
    finals[4096] = [0.95, 0.2, 0.3]
    assert pilots.choose_v4_claim1(finals)["K_edge"] == 4096
    saturated = {k: [0.95, 0.99, 0.97] for k in finals}
    assert pilots.choose_v4_claim1(saturated)["K_edge"] == 256        # none below 0.9: the smallest
    missing = pilots.choose_v4_claim1({256: [0.2]})
    assert missing["K_edge"] is None and missing["missing"] == [1024, 4096]
    assert "(256, 1024, 4096)" in pilots.V4_CLAIM1_RULE and "below 0.9" in pilots.V4_CLAIM1_RULE


# ---- the stage-1 decoder -------------------------------------------------------------------------
def test_the_stage1_rule_takes_the_decoder_and_steps_with_the_most_seeds_meeting_the_premise():
    """Claim 4's premise per seed (ICL ≥ 0.95 and some head's induction > 0.3) at each step count of
    the grid, read off one run's evaluations; the (decoder, steps) with the most seeds meeting it,
    ties to the quick decoder and then to fewer steps."""
    steps = list(range(0, 10001, 250))

    def curves(induction_from, acc=0.97):   # seed e grows its induction head at step induction_from[e]
        ind = [[[[0.05], [0.9 if s >= start else 0.0]] for start in induction_from] for s in steps]
        return {"steps": steps, "acc_icl": [[acc] * 8 for _ in steps], "induction": ind}

    seven, eight, late = [0] * 7 + [10 ** 6], [0] * 8, [0] * 6 + [6000, 9000]
    assert pilots.choose_stage1({1: curves(late), 4: curves(late)})["decoder"] == {"heads": 1, "steps": 10000}
    assert pilots.choose_stage1({1: curves(seven), 4: curves(eight)})["decoder"] == {"heads": 4, "steps": 5000}
    assert pilots.choose_stage1({1: curves(seven), 4: curves(seven)})["decoder"] == {"heads": 1, "steps": 5000}
    never = pilots.choose_stage1({1: curves([0] * 6 + [10 ** 6] * 2), 4: curves(eight, acc=0.94)})
    assert never["premise_counts"]["1 heads, 10000 steps"] == 6
    assert never["premise_counts"]["4 heads, 5000 steps"] == 0                 # an induction head alone is not enough
    assert pilots.choose_stage1({1: curves(eight)})["decoder"] is None          # the 4-head run is missing
    stopped = pilots.choose_stage1({1: {**curves(late), "steps": steps[:30]}, 4: curves(eight)})
    assert stopped["decoder"] is None                                           # a run that stopped early


@committed
def test_the_committed_stage1_pilot_gives_the_claims_stage1_decoder_by_its_rule():
    doc = _read("stage1_v31")
    met: dict = {}
    for key, flags in doc["premise_met"].items():   # "4 heads, 5000 steps"
        heads, steps = (int(part.split()[0]) for part in key.split(", "))
        met.setdefault(heads, {})[steps] = flags
    choice = pilots.stage1_choice(met)
    assert choice["decoder"] == doc["decoder"] == PILOTED["stage1"]
    assert doc["pilot_seeds"] == list(pilots.STAGE1_PILOT_SEEDS) and pilots.STAGE1_RULE in doc["rule"]
    assert all(len(flags) == 8 for flags in doc["premise_met"].values())


# ---- claim 6 ---------------------------------------------------------------------------------------
def _fusion_curves(k2_counts: dict[int, dict[int, int]], n=8, copy=0.5, grid=pilots.FUSION_STEP_GRID):
    """Fusion pilot curves whose first ``count`` seeds at each grid step are far above the premise
    level and the rest on the copy plateau."""
    steps = list(range(0, max(grid) + 1, 250))
    out = {}
    for k2, counts in k2_counts.items():
        acc = [[copy] * n for _ in steps]
        for s, c in counts.items():
            acc[steps.index(s)] = [0.99] * c + [copy] * (n - c)
        out[k2] = {"steps": steps, "acc_icl": acc, "copy": copy}
    return out


def test_claim6s_rule_takes_the_smallest_K2_with_seven_of_eight_then_the_longest_steps_where_all_eight_are():
    a, b, c = pilots.FUSION_STEP_GRID
    picked = pilots.choose_claim6(_fusion_curves({1024: {a: 7, b: 8, c: 8}}))
    assert (picked["K2"], picked["fusion_steps"]) == (1024, c)
    assert picked["premise_counts"] == {f"K2=1024 steps={s}": n for s, n in ((a, 7), (b, 8), (c, 8))}
    assert pilots.choose_claim6(_fusion_curves({1024: {a: 7, b: 8, c: 7}}))["fusion_steps"] is None
    # 1024 short everywhere: the rule needs 4096's run, then takes it
    short = pilots.choose_claim6(_fusion_curves({1024: {a: 6, b: 6, c: 6}}))
    assert short["K2"] is None and short["missing"] == 4096
    both = pilots.choose_claim6(_fusion_curves({1024: {a: 6, b: 6, c: 6}, 4096: {a: 7, b: 8, c: 8}}))
    assert (both["K2"], both["fusion_steps"]) == (4096, c)
    none = pilots.choose_claim6(_fusion_curves({1024: {a: 1, b: 2, c: 6}, 4096: {a: 0, b: 5, c: 6}}))
    assert none["K2"] is None and none["fusion_steps"] is None and "missing" not in none
    # a run that stopped before the last grid step decides nothing
    cut = _fusion_curves({1024: {a: 8}})
    cut[1024]["steps"] = cut[1024]["steps"][:-1]
    cut[1024]["acc_icl"] = cut[1024]["acc_icl"][:-1]
    assert pilots.choose_claim6(cut)["missing"] == 1024


def test_the_fusion_premise_level_is_confounded_icl_above_copy_plus_two_binomial_se():
    from mmicl.proofs.claims.testbed.common import above_copy

    level = 0.5 + 2 * math.sqrt(0.25 / 1024)   # 0.53125
    assert above_copy([level - 1e-9, level, level + 1e-9, 0.99], 0.5, 1024).tolist() == [False, False, True, True]
    assert above_copy([0.52], 0.5, 4096).tolist() == [True]   # more items, a lower level


def _v4_fusion_curves(k2_counts: dict[int, dict[int, int]]):
    return _fusion_curves(k2_counts, copy=0.125, grid=pilots.V4_FUSION_STEP_GRID)


def test_v4_claim6s_rule_takes_one_grid_point_past_the_first_with_all_eight():
    a, b, c = pilots.V4_FUSION_STEP_GRID
    got = pilots.choose_v4_claim6(_v4_fusion_curves({1024: {a: 8, b: 8, c: 8}}))
    assert (got["K2"], got["fusion_steps"]) == (1024, b)          # all 8 at a: one point further
    assert pilots.choose_v4_claim6(_v4_fusion_curves({1024: {a: 7, b: 8, c: 8}}))["fusion_steps"] == c
    assert pilots.choose_v4_claim6(_v4_fusion_curves({1024: {a: 6, b: 7, c: 7}}))["fusion_steps"] == c   # never 8
    short = pilots.choose_v4_claim6(_v4_fusion_curves({1024: {a: 6, b: 6, c: 6}}))
    assert short["K2"] is None and short["missing"] == 4096
    both = pilots.choose_v4_claim6(_v4_fusion_curves({1024: {a: 6, b: 6, c: 6}, 4096: {a: 8, b: 8, c: 8}}))
    assert (both["K2"], both["fusion_steps"]) == (4096, b)
    none = pilots.choose_v4_claim6(_v4_fusion_curves({1024: {c: 6}, 4096: {c: 6}}))
    assert none["K2"] is None and "missing" not in none


def test_v4_claim6s_verdict_settings_are_the_choice_or_the_largest_grid_point_where_it_picks_none():
    assert pilots.v4_claim6_settings({"K2": 1024, "fusion_steps": 15000}) == (1024, 15000)
    assert pilots.v4_claim6_settings({"K2": None, "fusion_steps": None}) == (
        max(pilots.V4_FUSION_K2_GRID), max(pilots.V4_FUSION_STEP_GRID))
    with pytest.raises(ValueError, match="without"):
        pilots.v4_claim6_settings({"K2": None, "fusion_steps": 15000})


def test_the_v4_premise_level_is_a_tenth_above_copy_plus_two_se_at_that_level():
    from mmicl.proofs.claims.testbed.common import above_copy, copy_level

    level = 0.225 + 2 * math.sqrt(0.225 * 0.775 / 1024)
    assert copy_level(0.125, 1024, plus=0.10) == pytest.approx(level)
    assert above_copy([level - 1e-9, level + 1e-9], 0.125, 1024, plus=0.10).tolist() == [False, True]
    with pytest.raises(ValueError, match="copy"):
        copy_level(0.95, 1024, plus=0.10)


@committed
def test_the_committed_claim6_pilot_gives_the_piloted_K2_and_steps():
    doc = _read("claim6_v31")
    picked = pilots.choose_claim6({int(k): v for k, v in doc["curves"].items()})
    assert {k: picked[k] for k in ("K2", "fusion_steps")} == PILOTED["claim6"]
    assert doc["K2"] == PILOTED["claim6"]["K2"] and doc["premise_counts"] == picked["premise_counts"]
    assert doc["pilot_seeds"] == list(pilots.STAGE1_PILOT_SEEDS)
    assert not set(pilots.STAGE1_PILOT_SEEDS) & {s for f in FAMILIES.values() for s in f}


# ---- claim 7 ---------------------------------------------------------------------------------------
def test_claim7s_rule_takes_the_step_count_nearest_each_target_and_refuses_a_double_pick():
    acc = {0: [0.0, 0.02], 10: [0.38, 0.44], 20: [0.58, 0.6], 40: [0.7, 0.74], 80: [0.8, 0.82], 160: [0.9, 0.96]}
    assert pilots.choose_claim7(acc)["encoder_steps"] == (0, 10, 20, 80)  # the targets 0.2, 0.4, 0.6, 0.8
    assert pilots.choose_claim7(acc, (0.4, 0.6, 0.8, 0.95))["encoder_steps"] == (10, 20, 80, 160)
    assert pilots.choose_claim7({0: [0.0], 10: [0.5], 20: [0.6]})["encoder_steps"] is None


@committed
def test_the_committed_claim7_pilot_gives_the_piloted_doses():
    doc = _read("claim7")
    acc = {int(s): v for s, v in doc["accuracy"].items()}
    assert tuple(pilots.choose_claim7(acc)["encoder_steps"]) == PILOTED["claim7"]["encoder_steps"]
    assert tuple(doc["encoder_steps"]) == PILOTED["claim7"]["encoder_steps"]
    assert doc["pilot_seeds"] == list(PILOT_SEEDS) and sorted(acc) == sorted(pilots.ENCODER_STEP_GRID)


def test_every_pilot_of_the_table_reads_a_store_and_states_its_rule():
    for name, pilot in pilots.PILOTS.items():
        assert pilot.rule and pilot.seeds and callable(pilot.choose), name


# ---- version 4: the size ---------------------------------------------------------------------------
def _stage1_curves(icl_by_step: dict[int, list[float]], induction: float = 0.6) -> dict:
    """A stage-1 pilot curve: ICL per seed at each step, every seed with one head of score ``induction``."""
    steps = sorted(icl_by_step)
    ind = [[[[induction, 0.0], [0.0, 0.0]] for _ in icl_by_step[s]] for s in steps]
    return {"steps": steps, "acc_icl": [icl_by_step[s] for s in steps], "induction": ind}


def test_the_v4_stage1_rule_takes_the_fewest_steps_with_seven_of_eight_meeting_the_premise():
    lo, hi = [0.5] * 8, [0.99] * 8
    seven = [0.99] * 7 + [0.5]
    assert pilots.choose_v4_stage1(_stage1_curves({5000: lo, 7500: seven, 10000: hi}))["steps"] == 7500
    assert pilots.choose_v4_stage1(_stage1_curves({5000: seven, 7500: seven, 10000: hi}))["steps"] == 5000
    six = [0.99] * 6 + [0.5] * 2
    got = pilots.choose_v4_stage1(_stage1_curves({5000: six, 7500: six, 10000: six}))
    assert got["steps"] is None and got["premise_counts"] == {"5000": 6, "7500": 6, "10000": 6}
    # the premise needs an induction head too, and a step of the grid must be there
    assert pilots.choose_v4_stage1(_stage1_curves({5000: hi, 7500: hi, 10000: hi}, induction=0.2))["steps"] is None
    assert pilots.choose_v4_stage1(_stage1_curves({5000: hi, 10000: hi}))["missing"] == [7500]


def _s2(no_stage2: list[float], final: list[float]) -> dict:
    return {"steps": [0, 250, pilots.V4_STAGE2_STEPS], "acc_icl_m2only": [no_stage2, no_stage2, final]}


def test_the_v4_distractor_rule_needs_a_low_start_and_a_rise_on_the_seeds_meeting_stage1():
    copy, ok = 1 / 8, [True] * 4
    low, high = [0.15, 0.2, 0.22, 0.2], [0.9, 0.8, 0.85, 0.9]
    got = pilots.choose_v4_distractors({1.0: _s2(low, high), 3.0: _s2(low, high)}, ok, copy)
    assert got["sigma"] == 1.0
    # σ = 1 leaves M2 solved by the random projector (median 0.6 > 0.225): the rule goes on to σ = 3
    got = pilots.choose_v4_distractors({1.0: _s2([0.6] * 4, [0.95] * 4), 3.0: _s2(low, high)}, ok, copy)
    assert got["sigma"] == 3.0 and got["by_sigma"]["1"]["no_stage2_median"] == pytest.approx(0.6)
    # low start but stage 2 does not lift it by 0.30: no σ
    flat = [x + 0.2 for x in low]
    assert pilots.choose_v4_distractors({1.0: _s2(low, flat), 3.0: _s2(low, flat)}, ok, copy)["sigma"] is None
    # only the seeds whose stage 1 meets the premise count
    mixed = pilots.choose_v4_distractors({1.0: _s2([0.1, 0.1, 0.9, 0.9], [0.9, 0.9, 0.9, 0.9]),
                                          3.0: _s2(low, high)}, [True, True, False, False], copy)
    assert mixed["sigma"] == 1.0 and mixed["seeds_meeting_stage1"] == 2
    assert pilots.choose_v4_distractors({1.0: _s2(low, high)}, ok, copy)["sigma"] == 1.0
    assert pilots.choose_v4_distractors({3.0: _s2(low, high)}, ok, copy)["missing"] == 1.0
    with pytest.raises(ValueError, match="steps"):
        pilots.choose_v4_distractors({1.0: {"steps": [0, 250], "acc_icl_m2only": [low, high]}}, ok, copy)


def test_claim8s_v4_head_rule_keeps_4_heads_only_where_7_of_8_seeds_meet_every_premise():
    copy = 1 / 8
    ind = [[[True, False], [False, False]]] * 8
    out = {"icl": [0.9] * 8, "induction_heads": ind, "has_matched_control": [True] * 7 + [False]}
    assert pilots.choose_v4_claim8_heads(out, copy)["heads"] == 4
    out["has_matched_control"] = [True] * 6 + [False] * 2
    assert pilots.choose_v4_claim8_heads(out, copy)["heads"] == 8
    out = {"icl": [0.9] * 6 + [0.13] * 2, "induction_heads": ind, "has_matched_control": [True] * 8}
    assert pilots.choose_v4_claim8_heads(out, copy)["heads"] == 8     # 0.13 is not above 1/8 + 2 se
    out = {"icl": [0.9] * 8, "induction_heads": [[[False, False], [False, False]]] * 2 + ind[:6],
           "has_matched_control": [True] * 8}
    got = pilots.choose_v4_claim8_heads(out, copy)
    assert got["heads"] == 8 and got["count"] == 6


@committed
def test_the_committed_v4_pilots_give_the_piloted_v4_settings_by_their_rules():
    size = _read("v4_size")
    assert size["pilot_seeds"] == list(pilots.V4_PILOT_SEEDS) and size["data_seed"] == pilots.V4_PILOT_DATA_SEED
    assert size["rules"] == {"stage1": pilots.V4_STAGE1_RULE, "distractors": pilots.V4_DISTRACTOR_RULE}
    assert pilots.choose_v4_stage1(size["stage1_curves"])["steps"] == PILOTED["v4_stage1"]["steps"]
    curves = {float(s): c for s, c in size["stage2_curves"].items() if float(s) > 0}
    got = pilots.choose_v4_distractors(curves, size["stage1_premise_at_end"], size["copy"])
    assert got["sigma"] == PILOTED["v4_m2"]["distractor_scale"]
    assert pilots.V4_DISTRACTOR_DIMS == PILOTED["v4_m2"]["distractor_dims"]
    heads4 = _read("v4_claim8")
    assert heads4["rule"] == pilots.V4_CLAIM8_RULE     # read the size pilot's 4-head decoders
    assert {len(m[0]) for m in heads4["analysis"]["induction_heads"]} == {4}
    assert pilots.choose_v4_claim8_heads(heads4["analysis"], heads4["copy"])["heads"] == PILOTED["v4_claim8"]["heads"]
    heads8 = _read("v4_claim8_8heads")
    assert heads8["rule"] == pilots.V4_CLAIM8_8HEADS_RULE and heads8["decoder_heads"] == 8
    assert heads8["steps"] == PILOTED["v4_stage1"]["steps"]
    claim1 = _read("v4_claim1")
    assert claim1["rule"] == pilots.V4_CLAIM1_RULE and claim1["pilot_seeds"] == list(pilots.V4_PILOT_SEEDS)
    assert claim1["train"]["steps"] == PILOTED["v4_stage1"]["steps"]
    finals = {int(k): v for k, v in claim1["finals"].items()}
    assert pilots.choose_v4_claim1(finals)["K_edge"] == PILOTED["v4_claim1"]["K_edge"]
    claim3 = _read("v4_claim3")
    assert claim3["rule"] == pilots.V4_CLAIM3_RULE and claim3["pilot_seeds"] == list(pilots.V4_SETTLED_PILOT_SEEDS)
    assert pilots.choose_settled_steps(claim3["curves"])["steps"] == PILOTED["v4_claim3"]["steps"]
    claim2 = _read("v4_claim2")
    assert claim2["rule"] == pilots.V4_CLAIM2_RULE and claim2["pilot_seeds"] == list(pilots.V4_SETTLED_PILOT_SEEDS)
    assert pilots.choose_settled_steps(claim2["curves"])["steps"] == PILOTED["v4_claim2"]["steps"]
    claim6 = _read("v4_claim6")
    assert claim6["rule"] == pilots.V4_CLAIM6_RULE and claim6["pilot_seeds"] == list(pilots.V4_PILOT_SEEDS)
    assert claim6["data_seed"] == pilots.V4_PILOT_DATA_SEED
    picked = pilots.choose_v4_claim6({int(k): v for k, v in claim6["curves"].items()})
    assert {k: picked[k] for k in ("K2", "fusion_steps")} == PILOTED["v4_claim6"]
    assert "missing" not in picked and picked["premise_counts"] == claim6["premise_counts"]


# ---- claims 2 and 3 of version 4: settled step counts ---------------------------------------------------
def test_settled_by_steps_reads_the_last_quarter_of_each_step_count_on_one_long_run():
    steps = list(range(0, 15001, 1250))
    rising = np.linspace(0.1, 0.9, len(steps))                          # still rising everywhere
    flat_late = np.concatenate([np.linspace(0.1, 0.9, 5), np.full(len(steps) - 5, 0.9)])  # flat from step 5000
    curve = np.stack([rising, flat_late], 1)
    by = pilots.settled_by_steps(curve, steps)
    assert by == {5000: [False, False], 10000: [False, True], 15000: [False, True]}
    assert pilots.settled_by_steps(curve[:5], steps[:5]) == {5000: [False, False]}   # a shorter run: the rest left out


def test_the_settled_rule_takes_the_smallest_step_count_at_which_every_arm_settles_on_every_seed():
    steps = list(range(0, 15001, 1250))
    flat = {"steps": steps, "curve": np.full((len(steps), 4), 0.5).tolist()}
    late = np.full((len(steps), 4), 0.5)
    late[:9, 0] = np.linspace(0.0, 0.5, 9)                              # seed 0 settles only after step 10000
    assert pilots.choose_settled_steps({"a": flat, "b": flat})["steps"] == 5000
    got = pilots.choose_settled_steps({"a": flat, "b": {"steps": steps, "curve": late.tolist()}})
    assert got["steps"] == 15000 and got["settled_counts"]["b steps=10000"] == 3
    never = late.copy()
    never[:, 0] = np.linspace(0.0, 1.0, len(steps))
    assert pilots.choose_settled_steps({"a": {"steps": steps, "curve": never.tolist()}})["steps"] == 15000  # none: the largest
    short = pilots.choose_settled_steps({"a": {"steps": steps[:9], "curve": flat["curve"][:9]}})
    assert short["steps"] is None and short["missing"] == ["a"]
    assert pilots.SETTLED_TOL == pytest.approx(2 * math.sqrt(0.5 / 1024))
    for rule in (pilots.V4_CLAIM2_RULE, pilots.V4_CLAIM3_RULE):
        assert "(5000, 10000, 15000)" in rule and "9012–9015" in rule
