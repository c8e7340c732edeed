"""Intervals over seeds and the copy plateau of the testbed (``numerics.testbed.stats``, ``plateau``), each against
an independent computation: the Student-t interval against an mpmath inversion of the t distribution and against
its coverage by simulation, the copy-plateau level against the binomial standard error of scipy's binomial law."""
from __future__ import annotations
import math
import mpmath as mp
import numpy as np
import pytest
from scipy import stats as st
from mmicl.numerics.testbed import plateau
from mmicl.numerics.testbed.stats import t_interval


def t_quantile(p: float, df: float) -> float:
    """The p-quantile (p > 1/2) of Student's t with ``df`` degrees of freedom, by inverting
    P(|T| > t) = I_{df/(df+t²)}(df/2, 1/2) in mpmath (no scipy)."""
    with mp.workdps(30):
        tail = 2 * (1 - mp.mpf(p))
        nu = mp.mpf(df)

        def two_sided(t):  # P(|T| > t), decreasing in t
            return mp.betainc(nu / 2, mp.mpf(1) / 2, 0, nu / (nu + t * t), regularized=True)

        lo, hi = mp.mpf(0), mp.mpf(1)
        while two_sided(hi) > tail:
            hi *= 2
        for _ in range(80):  # bisection to 2^-80 of the bracket
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if two_sided(mid) > tail else (lo, mid)
        return float((lo + hi) / 2)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 8, 20])
def test_t_interval_half_width_is_the_t_quantile_at_n_minus_1_times_the_standard_error(n):
    """mean ± t_{0.975, n−1}·s/√n with s the sample sd (ddof 1); the quantile computed here by
    mpmath, the values asymmetric so that no sum of deviations cancels by chance."""
    rng = np.random.default_rng(n)
    v = rng.gamma(2.0, 1.5, size=n) + np.arange(n) ** 2 / 7
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1))
    half = t_quantile(0.975, n - 1) * sd / math.sqrt(n)
    iv = t_interval(v)
    assert iv.n == n
    assert iv.mean == pytest.approx(mean, rel=1e-13)
    assert iv.lo == pytest.approx(mean - half, rel=1e-9, abs=1e-12)
    assert iv.hi == pytest.approx(mean + half, rel=1e-9, abs=1e-12)
    # another level, same rule
    iv90 = t_interval(v, level=0.9)
    assert iv90.hi - iv90.mean == pytest.approx(t_quantile(0.95, n - 1) * sd / math.sqrt(n), rel=1e-9)


def test_t_interval_of_one_seed_cannot_decide():
    iv = t_interval([0.7])
    assert iv.lo == -math.inf and iv.hi == math.inf and iv.n == 1
    assert iv.to_json()["lo"] is None and "1 seed" in iv.to_json()["lo_null_reason"]


@pytest.mark.parametrize("n", [3, 5])
def test_t_interval_covers_the_true_mean_95_percent_of_the_time(n):
    """Coverage by simulation (normal seeds, fixed generator): 8 000 intervals, within 4 binomial
    standard errors of 0.95.  With n for n − 1 degrees of freedom the coverage is 0.91 (n = 3) and
    0.935 (n = 5), 7 and 4.5 standard errors away; with a z quantile it is lower still."""
    trials = 8000
    rng = np.random.default_rng(20 + n)
    data = rng.normal(1.0, 2.0, size=(trials, n))
    hits = 0
    for row in data:
        iv = t_interval(row)
        hits += iv.lo < 1.0 < iv.hi
    se = math.sqrt(0.95 * 0.05 / trials)
    assert abs(hits / trials - 0.95) < 4 * se, hits / trials


@pytest.mark.parametrize("N, B, eval_size", [(2, 1, 256), (8, 1, 512), (16, 4, 100), (10, 3, 1000)])
def test_plateau_level_is_two_binomial_standard_errors_above_the_copy_rate(N, B, eval_size):
    """B/N + 2·sd(accuracy) with the accuracy the mean of eval_size Bernoulli(B/N) draws: sd from
    scipy's binomial law divided by eval_size ((2, 1, 256) gives 0.5625)."""
    p = B / N
    want = p + 2 * st.binom(eval_size, p).std() / eval_size
    assert plateau.plateau_level(N, B, eval_size) == pytest.approx(want, rel=1e-12)
    if (N, B, eval_size) == (2, 1, 256):
        assert want == pytest.approx(0.5625, rel=1e-15)


def test_plateau_exit_reads_the_first_step_strictly_above_the_level():
    icl = np.array([[0.5, 0.5], [0.6, 0.5], [0.7, 0.6], [0.55, 0.6]])
    out = plateau.plateau_exit(icl, [10, 20, 30, 40], 0.6)
    assert out["first_step_above"] == [30, None] and out["ended_above"] == [False, False]
    out = plateau.plateau_exit(icl, [10, 20, 30, 40], 0.52)
    assert out["first_step_above"] == [20, 30] and out["n_ended_above"] == 2 and out["median_exit_step"] == 25.0
