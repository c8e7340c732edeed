"""What every testbed claim shares (``proofs/claims/testbed/common.py``), on synthetic per-seed results:
the decision is the pooled sign test's, a family that alone decides the opposite makes it
inconclusive, every number states its tolerance, a premise may fail on at most two seeds of a family,
the per-seed spread has a binomial floor, and the claims' torch threads are set for the block only."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from mmicl.proofs.claim import RunConfig, tolerance_of
from mmicl.proofs.claims.testbed import common
from mmicl.proofs.claims.testbed.common import above_copy, copy_level, decide_check, headroom, premise
from mmicl.proofs.claims.testbed.design import FAMILIES, PlannedCheck

SUP = PlannedCheck("x beats y", "acc_icl", "a", "b", 0.10, "a regime")
SE = {f: np.full(8, 0.01) for f in "AB"}


def test_an_effect_above_the_margin_in_both_families_holds():
    c = decide_check(SUP, {"A": np.full(8, 0.5), "B": np.full(8, 0.4)}, SE, "binomial")
    assert c.passed is True and c.numbers["plus"] == 16


def test_an_effect_below_the_margin_fails_and_zero_variance_alone_decides_nothing():
    """[1,1,1] against [.99,.99,.99]: a difference of 0.01 is below a 0.10 margin on every seed."""
    c = decide_check(SUP, {"A": np.full(3, 0.01), "B": np.full(3, 0.01)}, {f: np.zeros(3) for f in "AB"}, "none")
    assert c.passed is False  # six resolved seeds below the margin: p = 1/64
    c = decide_check(SUP, {"A": np.full(2, 0.01), "B": np.full(2, 0.01)}, {f: np.zeros(2) for f in "AB"}, "none")
    assert c.passed is None   # four seeds cannot decide at α = 0.05 (p = 1/16)


def test_a_check_records_each_seeds_evaluation_se_beside_its_difference():
    """A power simulation of the rule at the observed effects needs each seed's se, not only its
    outcome."""
    ses = {"A": np.linspace(0.01, 0.02, 8), "B": np.array([0.02, 0.03, 0.04])}
    c = decide_check(SUP, {"A": np.full(8, 0.5), "B": np.full(3, 0.4)}, ses, "binomial")
    assert c.numbers["se_A"] == ses["A"].tolist() and c.numbers["se_B"] == ses["B"].tolist()
    # and the magnitude beside the decision: the mean difference over seeds with its se
    assert c.numbers["mean_diff"] == pytest.approx((8 * 0.5 + 3 * 0.4) / 11) and c.numbers["mean_diff_se"] > 0
    assert "mean A − B +0.473 ±" in c.detail and "against the margin 0.1" in c.detail


def test_headroom_is_the_room_above_a_baseline_for_the_margin_and_two_se():
    """Claim 5's v3 base areas (0.940–0.992) against its 0.03 margin on 1024 items: no room on most
    seeds, so the check could not have passed whatever the truth."""
    se = lambda b: np.sqrt(b * (1 - b) / 1024)  # noqa: E731
    room = headroom([0.5, 0.94, 0.992], 0.03, 1024)
    assert room.tolist() == [True, bool(0.94 + 0.03 + 2 * se(0.94) < 1), False]
    assert not headroom([1.0], 0.0, 1024)[0]  # at the ceiling: no room even for no margin
    # 0.96 + 0.03 < 1, but not by two se (2·√(0.96·0.04/1024) ≈ 0.012): no room
    assert 0.96 + 0.03 < 1 and not headroom([0.96], 0.03, 1024)[0]
    with pytest.raises(ValueError, match="accuracies in"):
        headroom([1.2], 0.03)


def test_families_that_disagree_leave_it_inconclusive():
    c = decide_check(SUP, {"A": np.full(8, 0.5), "B": np.full(8, -0.5)}, SE, "binomial")
    assert c.passed is None and "disagree" in c.detail


def test_inferiority_and_non_inferiority_read_the_sign_they_state():
    inf = PlannedCheck("x lowers y", "acc_icl", "a", "b", 0.05, "a shift", kind="inferiority")
    assert decide_check(inf, {"A": np.full(8, -0.3), "B": np.full(8, -0.3)}, SE, "b").passed is True
    non = PlannedCheck("x no worse", "acc_icl", "a", "b", 0.05, "a shift", kind="non-inferiority")
    assert decide_check(non, {"A": np.full(8, -0.01), "B": np.full(8, 0.0)}, SE, "b").passed is True
    assert decide_check(non, {"A": np.full(8, -0.3), "B": np.full(8, -0.3)}, SE, "b").passed is False


def test_every_number_of_a_decided_check_states_its_tolerance():
    c = decide_check(SUP, {"A": np.linspace(0, 1, 8), "B": np.linspace(0, 0.5, 8)}, SE, "binomial")
    assert all(tolerance_of(c.atol, c.rtol, k) is not None for k in c.numbers)


def test_a_family_with_every_seed_left_out_says_nothing():
    c = decide_check(SUP, {"A": np.zeros(0), "B": np.full(8, 0.5)}, {"A": np.zeros(0), "B": np.full(8, 0.01)}, "b")
    assert c.passed is True and c.numbers["plus"] == 8 and c.numbers["outcomes_A"] == []


def test_a_premise_may_fail_on_at_most_two_seeds_of_a_family():
    seeds = {f: list(s) for f, s in FAMILIES.items()}
    ok = {"A": np.array([1, 1, 1, 1, 1, 1, 0, 0], bool), "B": np.ones(8, bool)}
    assert premise("p", ok, seeds).met
    bad = {"A": np.array([1, 1, 1, 1, 1, 0, 0, 0], bool), "B": np.ones(8, bool)}
    h = premise("p", bad, seeds)
    assert not h.met and "3005" in h.detail


def test_a_summary_counts_each_premises_seeds_per_family_with_the_familys_size_as_tolerance():
    ok = {"A": np.array([1, 1, 1, 1, 1, 1, 0, 0], bool), "B": np.ones(8, bool)}
    check = decide_check(SUP, {"A": np.full(8, 0.5), "B": np.full(8, 0.4)}, SE, "binomial")
    s = common.premise_summary({"effect": 0.45}, {"effect": 0.01}, {"headroom": ok, "stage1": {"A": ok["B"], "B": ok["A"]}},
                               [check], why="why")
    assert list(s) == ["effect", "premise_headroom_seeds_A", "premise_headroom_seeds_B", "premise_stage1_seeds_A",
                               "premise_stage1_seeds_B", f"verdict: {check.name}"]
    assert (s["premise_headroom_seeds_A"], s["premise_stage1_seeds_B"]) == (6, 6)
    assert s[f"verdict: {check.name}"] == "passes"
    assert s.atol == {"effect": 0.01, **{k: 8.0 for k in s if k.startswith("premise_")}} and s.why == "why"


def test_the_copy_level_is_two_binomial_standard_errors_above_b_over_n():
    assert copy_level(0.5, 1024) == pytest.approx(0.5 + 2 * math.sqrt(0.25 / 1024))
    assert above_copy([0.5, 0.54, 0.51], 0.5, 1024).tolist() == [False, True, False]   # the level is 0.53125


def test_the_stage1_premise_needs_icl_and_an_induction_head():
    final = {"acc_icl": [0.99, 0.99, 0.6], "induction": [[[0.1], [0.8]], [[0.2], [0.25]], [[0.9], [0.1]]]}
    assert common.stage1_premise(final).tolist() == [True, False, False]


def test_the_per_seed_spread_has_a_binomial_floor():
    v = np.array([0.2, 0.4, 0.6])
    assert common.seed_sd(v) == pytest.approx(0.2)
    assert common.mean_se(v) == pytest.approx(0.2 / math.sqrt(3))
    # an accuracy on 100 sequences: at least the binomial sd at the mean, p kept off 0 and 1
    assert common.seed_sd([0.5, 0.5], n_eval=100) == pytest.approx(0.05)
    assert common.seed_sd([1.0, 1.0, 1.0], n_eval=100) == pytest.approx(math.sqrt(0.01 * 0.99 / 100))
    assert common.seed_sd([1.0]) == 0.0


def test_testbed_threads_sets_torchs_threads_for_the_block_and_restores_them():
    old = torch.get_num_threads()
    with common.testbed_threads(RunConfig(testbed_threads=old + 1)):
        assert torch.get_num_threads() == old + 1
    assert torch.get_num_threads() == old
    with pytest.raises(KeyError), common.testbed_threads(RunConfig(testbed_threads=old + 1)):
        raise KeyError("a claim that fails midway")
    assert torch.get_num_threads() == old
    with common.testbed_threads(RunConfig(testbed_threads=None)):
        assert torch.get_num_threads() == old
    seen = []
    common.threaded(lambda config: seen.append(torch.get_num_threads()))(RunConfig(testbed_threads=old + 1))
    assert seen == [old + 1] and torch.get_num_threads() == old


def test_mean_entry_reports_the_mean_and_the_atol_of_its_se_with_the_binomial_floor():
    from mmicl.proofs.claims.number_tolerances import sampling_atol

    numbers, atol = {}, {}
    common.mean_entry(numbers, atol, "icl", [0.5, 0.5], 100)          # no spread: the binomial sd at 0.5
    assert numbers == {"icl": 0.5} and atol["icl"] == pytest.approx(sampling_atol(0.05 / math.sqrt(2)))
    common.mean_entry(numbers, atol, "gap", [0.1, 0.3])                # no n_eval: the sample sd alone
    assert numbers["gap"] == pytest.approx(0.2) and atol["gap"] == pytest.approx(sampling_atol(np.std([0.1, 0.3], ddof=1) / math.sqrt(2)))
