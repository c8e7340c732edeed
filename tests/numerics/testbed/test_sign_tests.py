"""The testbed decisions (``numerics.testbed.sign_tests``): exact sign tests over seeds
against a margin, with power known in advance, checked against scipy's binomtest and against
seeded simulations of the rule itself."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from mmicl.numerics.testbed import sign_tests as dv
import torch
from mmicl.numerics.testbed.experiments import area_under
from mmicl.numerics.testbed.sign_tests import area_under_se
from mmicl.numerics.testbed.train import History

ALPHA = 0.05
N_SIM = 20_000


def _simulate_outcomes(rng, runs, n, p_plus, p_minus):
    """Seeds independently +1 / −1 / 0 with the given probabilities, shape (runs, n)."""
    u = rng.random((runs, n))
    return np.where(u < p_plus, 1, np.where(u < p_plus + p_minus, -1, 0))


def _rate_and_se(hits, runs):
    rate = hits / runs
    return rate, math.sqrt(max(rate * (1 - rate), 1 / runs) / runs)


def _decisions(samples, alpha=ALPHA):
    return [dv.sign_test(row, alpha).decision for row in samples]


# --- the reviewer's zero-variance trap ---------------------------------------------------------

def test_identical_seeds_one_point_apart_are_not_decided_above_a_two_point_margin():
    acc_a, acc_b, n_eval = np.ones(3), np.full(3, 0.99), 1000
    diffs = acc_a - acc_b
    for ses in (dv.accuracy_difference_se(acc_a, acc_b, n_eval), np.zeros(3)):
        out = dv.seed_outcomes(diffs, ses, margin=0.02)
        assert out.tolist() == [-1, -1, -1]
        assert dv.sign_test(out, ALPHA).decision is not True


def test_three_seeds_cannot_decide_at_five_percent_even_when_all_three_are_above():
    out = dv.seed_outcomes(np.full(3, 0.01), np.zeros(3), margin=0.0)
    assert out.tolist() == [1, 1, 1]
    t = dv.sign_test(out, ALPHA)
    assert t.p_above == pytest.approx(0.125, abs=1e-15)
    assert t.p_above == pytest.approx(stats.binomtest(3, 3, 0.5, alternative="greater").pvalue)
    assert t.decision is None
    assert dv.min_plus_to_decide(3, ALPHA) is None


# --- per-seed resolution -----------------------------------------------------------------------

def test_a_seed_is_resolved_only_beyond_z_evaluation_standard_errors_from_the_margin():
    diffs = [0.15, 0.13, 0.10, 0.07, 0.05, 0.10, 0.10001, 0.09999]
    ses = [0.02, 0.02, 0.02, 0.02, 0.02, 0.0, 0.0, 0.0]
    assert dv.seed_outcomes(diffs, ses, margin=0.1, z=2.0).tolist() == [1, 0, 0, 0, -1, 0, 1, -1]


def test_the_independent_items_se_does_not_understate_the_noise_of_paired_accuracy_differences():
    rng = np.random.default_rng(3)
    n_eval, reps, p_a, p_b = 400, 4000, 0.8, 0.7
    # paired items with positively correlated correctness: B right implies A right on a shared item
    u = rng.random((reps, n_eval))
    a = u < p_a
    b = u < p_b
    paired_sd = np.std(a.mean(1) - b.mean(1), ddof=1)
    # independent items: the formula is exact
    indep_sd = np.std(a.mean(1) - (rng.random((reps, n_eval)) < p_b).mean(1), ddof=1)
    se = dv.accuracy_difference_se(p_a, p_b, n_eval)
    assert paired_sd <= se
    assert indep_sd == pytest.approx(se, rel=0.05)
    assert dv.accuracy_difference_se(1.0, 1.0, n_eval) == 0.0


# --- the sign test against scipy and against simulation ----------------------------------------

@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
def test_min_plus_to_decide_is_the_least_count_scipy_binomtest_rejects(alpha):
    for n in range(1, 31):
        rejecting = [k for k in range(n + 1)
                     if stats.binomtest(k, n, 0.5, alternative="greater").pvalue <= alpha]
        expected = min(rejecting) if rejecting else None
        assert dv.min_plus_to_decide(n, alpha) == expected, n


def test_eight_seeds_decide_at_the_count_binomtest_derives_which_is_seven():
    derived = min(k for k in range(9) if stats.binomtest(k, 8, 0.5, alternative="greater").pvalue <= 0.05)
    assert dv.min_plus_to_decide(8, 0.05) == derived == 7


def test_sign_test_p_values_equal_binomtest_over_the_resolved_seeds_only():
    for plus, minus, zero in [(7, 1, 0), (5, 0, 3), (2, 6, 1), (0, 0, 4), (12, 4, 0)]:
        t = dv.sign_test([1] * plus + [-1] * minus + [0] * zero, ALPHA)
        r = plus + minus
        assert (t.n, t.plus, t.minus, t.unresolved) == (r + zero, plus, minus, zero)
        if r:
            assert t.p_above == pytest.approx(stats.binomtest(plus, r, 0.5, alternative="greater").pvalue)
            assert t.p_below == pytest.approx(stats.binomtest(minus, r, 0.5, alternative="greater").pvalue)
        else:
            assert t.p_above == t.p_below == 1.0
        expected = True if t.p_above <= ALPHA else False if t.p_below <= ALPHA else None
        assert t.decision is expected


@pytest.mark.parametrize("p_plus,p_minus", [(0.9, None), (0.7, 0.1)])
def test_exact_power_agrees_with_a_simulation_of_the_rule_within_four_standard_errors(p_plus, p_minus):
    rng = np.random.default_rng(20240)
    pm = 1 - p_plus if p_minus is None else p_minus
    hits = sum(d is True for d in _decisions(_simulate_outcomes(rng, N_SIM, 8, p_plus, pm)))
    rate, se = _rate_and_se(hits, N_SIM)
    assert abs(dv.power(8, p_plus, p_minus, ALPHA) - rate) <= 4 * se


def test_the_false_positive_rate_under_h0_is_at_most_alpha():
    rng = np.random.default_rng(7)
    for p_half, n in [(0.5, 8), (0.3, 12)]:
        samples = _simulate_outcomes(rng, N_SIM, n, p_half, p_half)
        hits = sum(d is True for d in _decisions(samples))
        rate, se = _rate_and_se(hits, N_SIM)
        assert rate <= ALPHA + 4 * se
    assert max(dv.power(n, 0.5, 0.5, ALPHA) for n in range(1, 41)) <= ALPHA


def test_seeds_for_power_is_the_least_n_whose_exact_power_reaches_the_target():
    for p in (0.8, 0.9, 0.95):
        n = dv.seeds_for_power(p, target=0.8, alpha=ALPHA, max_n=64)
        assert n is not None and dv.power(n, p, alpha=ALPHA) >= 0.8
        assert all(dv.power(k, p, alpha=ALPHA) < 0.8 for k in range(1, n))
    assert dv.seeds_for_power(0.5, target=0.8, max_n=30) is None


# --- non-inferiority ---------------------------------------------------------------------------

def test_non_inferiority_holds_within_the_margin_and_fails_beyond_it_in_most_seeds():
    ses = np.full(8, 0.005)
    assert dv.non_inferior(np.full(8, -0.01), ses, margin=0.05).decision is True
    assert dv.non_inferior(np.full(8, -0.10), ses, margin=0.05).decision is False
    one_bad = np.array([-0.01] * 7 + [-0.3])
    assert dv.non_inferior(one_bad, ses, margin=0.05).decision is True


# --- two seed families -------------------------------------------------------------------------

def test_agreeing_families_pooled_decide_with_more_power_than_one_family():
    assert dv.power(16, 0.9) > dv.power(8, 0.9) > dv.power(8, 0.9) ** 2
    assert dv.power(16, 0.8) > dv.power(8, 0.8)
    rng = np.random.default_rng(11)
    runs = 4000
    fa = _simulate_outcomes(rng, runs, 8, 0.8, 0.2)
    fb = _simulate_outcomes(rng, runs, 8, 0.8, 0.2)
    combined = sum(dv.combine_families(dv.sign_test(x), dv.sign_test(y), ALPHA).decision is True
                   for x, y in zip(fa, fb))
    rate, se = _rate_and_se(combined, runs)
    assert rate > dv.power(8, 0.8) + 4 * se
    assert rate <= dv.power(16, 0.8) + 4 * se


def test_combining_two_null_families_keeps_the_false_positive_rate_at_most_alpha():
    rng = np.random.default_rng(12)
    fa = _simulate_outcomes(rng, N_SIM // 2, 8, 0.5, 0.5)
    fb = _simulate_outcomes(rng, N_SIM // 2, 8, 0.5, 0.5)
    hits = sum(dv.combine_families(dv.sign_test(x), dv.sign_test(y), ALPHA).decision is True
               for x, y in zip(fa, fb))
    rate, se = _rate_and_se(hits, N_SIM // 2)
    assert rate <= ALPHA + 4 * se


def test_families_that_decide_opposite_ways_give_no_verdict_and_say_they_disagree():
    up, down = dv.sign_test([1] * 8), dv.sign_test([-1] * 8)
    c = dv.combine_families(up, down, ALPHA)
    assert (c.decision_a, c.decision_b, c.decision) == (True, False, None)
    assert "the families disagree" in c.reason


def test_a_family_deciding_against_the_pooled_verdict_vetoes_it():
    strong, against = dv.sign_test([1] * 16), dv.sign_test([-1] * 7 + [0])
    c = dv.combine_families(strong, against, ALPHA)
    assert c.pooled.decision is True and c.decision_b is False
    assert c.decision is None and "the families disagree" in c.reason
    agree = dv.combine_families(dv.sign_test([1] * 6 + [-1] * 2), dv.sign_test([1] * 6 + [-1] * 2))
    assert agree.decision is True and agree.decision_a is None and "disagree" not in agree.reason


# --- premises ----------------------------------------------------------------------------------

def test_premise_count_reports_failing_seeds_and_applies_the_stated_count_rule():
    p = dv.premise_count([True, True, False, True, True, True, True, False], required_fraction=0.75)
    assert (p.count, p.failing, p.required, p.holds) == (6, (2, 7), 6, True)
    short = dv.premise_count([True] * 6 + [False] * 2, required_fraction=0.8)
    assert (short.required, short.holds) == (7, False)
    assert short.p_below == pytest.approx(stats.binom.cdf(6, 8, 0.8))
    assert dv.premise_count([1, 1, 0], required_fraction=1.0).holds is False
    assert dv.premise_count([True] * 4, required_fraction=1.0).holds is True


# --- refusals ----------------------------------------------------------------------------------

BAD = [
    (dv.seed_outcomes, ([0.1, 0.2], [0.01], 0.0)),
    (dv.seed_outcomes, ([0.1, float("nan")], [0.01, 0.01], 0.0)),
    (dv.seed_outcomes, ([0.1], [-0.01], 0.0)),
    (dv.seed_outcomes, ([0.1], [0.01], float("inf"))),
    (dv.seed_outcomes, ([], [], 0.0)),
    (dv.sign_test, ([1, 2, -1],)),
    (dv.sign_test, ([1, 1, 1], 0.0)),
    (dv.sign_test, ([1, 1, 1], 1.5)),
    (dv.min_plus_to_decide, (0,)),
    (dv.min_plus_to_decide, (8, -0.1)),
    (dv.power, (8, 1.2)),
    (dv.power, (8, 0.7, 0.5)),
    (dv.power, (8.5, 0.7)),
    (dv.seeds_for_power, (0.9, 0.0)),
    (dv.non_inferior, ([0.1], [0.01], -0.05)),
    (dv.combine_families, ("not a test", "nor this")),
    (dv.premise_count, ([True, False], 1.5)),
    (dv.premise_count, ([0.3, 1.0],)),
    (dv.accuracy_difference_se, (1.1, 0.5, 100)),
    (dv.accuracy_difference_se, (0.9, 0.5, 0)),
]


@pytest.mark.parametrize("fn,args", BAD, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(BAD)])
def test_bad_input_is_refused_with_a_one_line_value_error(fn, args):
    with pytest.raises(ValueError) as err:
        fn(*args)
    msg = str(err.value)
    assert msg and "\n" not in msg


# ---- the area's standard error ------------------------------------------------------------------
def test_a_constant_curve_has_the_binomial_se_of_one_evaluation():
    p, n = 0.3, 400
    assert area_under_se([p] * 5, [0, 10, 30, 60, 100], n) == pytest.approx(math.sqrt(p * (1 - p) / n))


def test_the_area_se_weights_evaluations_as_the_trapezoid_does():
    # steps 0, 1, 3: trapezoid weights (1/2·1, 1/2·1 + 1/2·2, 1/2·2) / 3 = (1/6, 1/2, 1/3)
    s = area_under_se(np.array([[0.5, 0.0], [0.0, 0.5], [0.0, 0.0]]), [0, 1, 3], 100)
    assert s == pytest.approx([0.05 / 6, 0.05 / 2])


def test_the_area_se_bounds_the_sd_of_the_area_whatever_the_correlation():
    """Simulated evaluation errors, independent and perfectly correlated: the sd of the area never
    exceeds the bound (equal to it when perfectly correlated)."""
    rng = np.random.default_rng(0)
    p, steps, n = np.array([0.2, 0.5, 0.9, 0.95]), np.array([0, 250, 500, 1000]), 256
    bound = area_under_se(p, steps, n)
    w = np.array([250 / 2, 250 / 2 + 250 / 2, 250 / 2 + 500 / 2, 500 / 2]) / 1000
    sd_one = np.sqrt(p * (1 - p) / n)
    independent = math.sqrt(float(np.sum((w * sd_one) ** 2)))
    correlated = float(np.sum(w * sd_one))
    assert independent < bound and correlated == pytest.approx(bound)
    z = rng.standard_normal(20000)
    area = (w * (p + np.outer(z, sd_one))).sum(1)  # one shared error: perfectly correlated
    assert area.std() == pytest.approx(bound, rel=0.05)  # 20 000 draws: the sd's relative se is 0.5 %


@pytest.mark.parametrize("bad", [dict(curve=[0.5, 1.2], steps=[0, 1]), dict(curve=[0.5, 0.4], steps=[1, 1]),
                                 dict(curve=[0.5], steps=[0, 1])])
def test_the_area_se_refuses_what_is_not_an_accuracy_curve(bad):
    with pytest.raises(ValueError):
        area_under_se(bad["curve"], bad["steps"], 100)


def test_area_under_se_is_the_area_under_the_binomial_se_curve_and_at_most_its_maximum():
    n = 100
    p = np.array([[0.5, 0.0], [0.5, 1.0], [0.5, 0.1]])          # (evaluations, seeds)
    steps = [0, 10, 30]
    got = area_under_se(p, steps, n)
    # a constant curve: the se of one accuracy, √(p(1−p)/n)
    assert got[0] == pytest.approx(math.sqrt(0.25 / n))
    # trapezoid weights (5, 15, 10)/30 on the per-evaluation se's 0, 0, √(0.09/n)
    assert got[1] == pytest.approx(10 / 30 * math.sqrt(0.09 / n))
    s = np.sqrt(p * (1 - p) / n)
    assert np.all(got <= s.max(0) + 1e-15)
    # the same weights as area_under
    h = History(steps=steps, metrics={"x": [torch.tensor(v) for v in s]})
    assert np.allclose(area_under(h, "x"), got)
    # one evaluation: that evaluation's se
    assert area_under_se(p[:1], [5], n) == pytest.approx(s[0])
    with pytest.raises(ValueError):
        area_under_se(p, [0, 1], n)


def test_area_under_se_bounds_the_spread_of_areas_and_is_attained_by_perfectly_correlated_evaluations():
    """Areas of curves drawn on shared items (positively correlated evaluations) or on fresh items
    (independent): the sd over draws is within the bound, and equals it when every evaluation is
    the same accuracy on the same items (perfect correlation)."""
    rng = np.random.default_rng(0)
    n, draws = 200, 20000
    for q, shared in ((np.array([0.3, 0.6, 0.9]), True), (np.array([0.3, 0.6, 0.9]), False),
                      (np.array([0.6, 0.6, 0.6]), True)):
        u = rng.random((draws, 1 if shared else 3, n))
        curves = (u < q[None, :, None]).mean(-1)                   # (draws, evaluations)
        areas = (curves[:, :-1] + curves[:, 1:]).sum(1) / 4         # steps 0, 1, 2
        bound = area_under_se(q[:, None], [0, 1, 2], n)[0]
        assert areas.std() <= bound * 1.02                           # Monte Carlo error of an sd: ≈ 0.5 %
    assert areas.std() >= bound * 0.98                               # the last case attains it


# ------------------------------------------------------------------ the power of the two-family rule


def test_outcome_probabilities_match_a_simulation_of_seed_outcomes():
    from mmicl.numerics.testbed.sign_tests import outcome_probabilities

    rng = np.random.default_rng(5)
    n = 200_000
    for mean, sd, se, margin in ((0.04, 0.015, 0.01, 0.05), (0.12, 0.03, 0.02, 0.10), (0.0, 0.0, 0.02, 0.05)):
        d = rng.normal(mean, sd, n) + rng.normal(0, se, n)
        o = dv.seed_outcomes(d, np.full(n, se), margin)
        pp, pm = outcome_probabilities(mean, sd, se, margin)
        for sim, exact in ((np.mean(o == 1), pp), (np.mean(o == -1), pm)):
            assert abs(sim - exact) <= 5 * np.sqrt(exact * (1 - exact) / n) + 1e-12, (mean, sim, exact)
    assert outcome_probabilities(0.2, 0.0, 0.0, 0.1) == (1.0, 0.0)
    assert outcome_probabilities(0.1, 0.0, 0.0, 0.1) == (0.0, 0.0)


def test_the_two_family_rule_decides_as_a_simulation_of_it_does():
    """``combined_power`` against 20 000 simulated pairs of families run through ``sign_test`` and
    ``combine_families``: each decision's frequency within 5 binomial se of its exact probability."""
    from mmicl.numerics.testbed.sign_tests import combined_power

    rng = np.random.default_rng(6)
    reps = 20_000
    for pp, pm in ((0.7, 0.2), (0.45, 0.45), (0.3, 0.1)):
        exact = combined_power(8, 8, pp, pm)
        assert sum(exact.values()) == pytest.approx(1.0, abs=1e-12)
        counts, decided = {True: 0, False: 0, None: 0}, {}
        draws = rng.multinomial(8, [pp, pm, 1 - pp - pm], size=(reps, 2))  # (+1, −1, 0) counts per family
        for key in map(tuple, draws.reshape(reps, 6)):
            if key not in decided:  # the same counts always decide the same way: run the rule once per count
                fams = [np.repeat([1, -1, 0], key[3 * f: 3 * f + 3]) for f in range(2)]
                decided[key] = dv.combine_families(dv.sign_test(fams[0]), dv.sign_test(fams[1])).decision
            counts[decided[key]] += 1
        for k, p in exact.items():
            assert abs(counts[k] / reps - p) <= 5 * np.sqrt(p * (1 - p) / reps) + 1e-12, (pp, pm, k, counts, exact)


def test_the_two_family_rule_keeps_its_level_and_the_guard_only_removes_decisions():
    from mmicl.numerics.testbed.sign_tests import combined_power

    for p in (0.5, 0.4, 0.2):
        law = combined_power(8, 8, p, p)
        assert law[True] <= 0.05 and law[False] <= 0.05
    for pp in (0.6, 0.8, 0.9):
        assert combined_power(8, 8, pp, 1 - pp)[True] <= dv.power(16, pp, 1 - pp) + 1e-12
    # with unequal families the guard bites: 30 + 5 seeds at (0.7, 0.3), where a small family that
    # decides the opposite vetoes a pooled decision; the pooled test alone is exactly power(35, …)
    # (every seed resolved), which the rule with its guard stays strictly below
    assert combined_power(30, 5, 0.7, 0.3)[True] < dv.power(35, 0.7, 0.3) - 1e-4


def test_slope_and_its_se_from_the_doses_se():
    x = np.array([[0.2, 0.2], [0.4, 0.4], [0.6, 0.6], [0.8, 0.8]])
    b_true = np.array([0.5, -1.0])
    y = 0.1 + b_true * x
    sxx = 0.2
    b, se = dv.slope_and_se(x, y, 0.0, 0.02)
    np.testing.assert_allclose(b, b_true, rtol=1e-12)
    np.testing.assert_allclose(se, 0.02 / math.sqrt(sxx), rtol=1e-12)       # Σ c_k² = 1/Sxx
    _, se_x = dv.slope_and_se(x, y, 0.01, 0.0)                             # a straight line: |b|·se_x/√Sxx
    np.testing.assert_allclose(se_x, np.abs(b_true) * 0.01 / math.sqrt(sxx), rtol=1e-12)
    rng = np.random.default_rng(1)                                          # Monte Carlo, both errors
    sims = [dv.slope_and_se(x + rng.normal(0, 0.01, x.shape), y + rng.normal(0, 0.02, x.shape), 0, 0)[0]
            for _ in range(4000)]
    _, se_both = dv.slope_and_se(x, y, 0.01, 0.02)
    np.testing.assert_allclose(np.std(sims, 0), se_both, rtol=0.06)
    b, se = dv.slope_and_se(np.full((4, 1), 0.5), np.arange(4.0).reshape(4, 1), 0.01, 0.01)
    assert np.isnan(b[0]) and np.isnan(se[0])


def test_binomial_se_is_the_sd_of_a_sampled_accuracy():
    p, n = np.array([0.0, 0.25, 0.5, 1.0]), 400
    np.testing.assert_allclose(dv.binomial_se(p, n), np.sqrt(p * (1 - p) / n), rtol=1e-12)
    rng = np.random.default_rng(3)                                          # Monte Carlo at p = 0.25
    draws = rng.binomial(n, 0.25, size=20000) / n
    assert abs(np.std(draws) - dv.binomial_se(0.25, n)) < 0.03 * dv.binomial_se(0.25, n)  # sd's own MC error ≈ 0.5 %
