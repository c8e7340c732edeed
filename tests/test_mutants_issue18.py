"""Tests that kill the mutant classes the hidden mutation round of issue 18 found alive.

Each test states a piece of the maths (or of a written promise) against an independent computation,
so that it kills the whole class of slips, not one mutant:

- the Student-t interval over seeds (degrees of freedom, standard error, quantile) against an
  mpmath inversion of the t distribution and against its coverage by simulation;
- the Welch interval and the Monte Carlo ``Estimate`` against their textbook formulas;
- the copy-plateau level against the binomial standard error from scipy's binomial law;
- the atomic writer's file mode against its docstring ("readable by everyone");
- every public API function with a depth refuses ``True`` and ``False``;
- the exponential law's stationarity function ``G(α) = E[s r^{2T−1}]`` against exact rational
  arithmetic and an mpmath quadrature, for rates k ≠ 1.

(The two-parameter rest test accepting a saddle is killed by
``tests/test_two_parameter_accuracy.py::test_a_saddle_is_not_a_rest_point``.)
"""
from __future__ import annotations

import inspect
import math
import os
import stat
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from scipy import stats as st

import mmicl
from mmicl.numerics import atomic
from mmicl.numerics.estimate import Z95, Estimate
from mmicl.numerics.testbed import plateau
from mmicl.numerics.testbed.stats import decide, t_interval, welch_interval
from mmicl.numerics.unbounded import stationarity_quadrature, stationarity_unbounded


# ------------------------------------------------------------------ Student t, by mpmath


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
    assert iv.lo == -math.inf and iv.hi == math.inf and decide(iv) is None


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


def test_welch_interval_is_the_textbook_welch_satterthwaite_interval():
    a = np.array([1.0, 1.4, 0.7, 2.2, 1.9])
    b = np.array([0.2, 0.9, 0.4])
    va, vb = a.var(ddof=1) / 5, b.var(ddof=1) / 3
    df = (va + vb) ** 2 / (va**2 / 4 + vb**2 / 2)
    half = t_quantile(0.975, df) * math.sqrt(va + vb)
    d = a.mean() - b.mean()
    iv = welch_interval(a, b)
    assert iv.mean == pytest.approx(d, rel=1e-14)
    assert (iv.lo, iv.hi) == (pytest.approx(d - half, rel=1e-8), pytest.approx(d + half, rel=1e-8))
    assert iv.lo > 0 and decide(iv) is True and decide(iv, margin=10) is False and decide(iv, margin=1.0) is None


def test_welch_interval_is_finite_where_the_variances_squares_underflow():
    """Spreads near 1e-100 made (va + vb)²/(va²/(na−1) + vb²/(nb−1)) divide 0 by 0; in shares of
    va + vb the degrees of freedom are finite, and equal the textbook value where it is finite."""
    iv = welch_interval(np.array([8.08884728e-100, 0.0, 0.0]), np.array([0.0, 1e-101, 0.0]))
    assert math.isfinite(iv.lo) and math.isfinite(iv.hi) and iv.lo < iv.mean < iv.hi
    df = float(iv.method.split("df=")[1])
    assert 2.0 <= df <= 4.0                      # between min(na, nb) − 1 and na + nb − 2


def test_decide_is_strict_at_the_margin():
    """An interval whose end equals the margin does not lie above (or below) it: undecided."""
    from mmicl.numerics.testbed.stats import Interval

    assert decide(Interval(1.0, 0.0, 2.0, 3, "t"), margin=0.0) is None
    assert decide(Interval(-1.0, -2.0, 0.0, 3, "t"), margin=0.0) is None
    assert decide(Interval(1.0, 0.5, 2.0, 3, "t"), margin=0.0) is True
    assert decide(Interval(-1.0, -2.0, -0.5, 3, "t"), margin=0.0) is False


def test_monte_carlo_estimate_is_mean_and_sd_over_root_k():
    """``Estimate.of``: mean, se = sd/√k with the unbiased sd; z = (mean − v)/se; interval95 =
    mean ± z_{0.975}·se (z_{0.975} checked against mpmath's normal quantile)."""
    v = np.array([0.3, 1.1, -0.4, 2.0, 0.9, 0.2, 1.5])
    k = v.size
    mean = sum(v) / k
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (k - 1))
    e = Estimate.of(v)
    assert (e.mean, e.samples) == (pytest.approx(mean, rel=1e-14), k)
    assert e.se == pytest.approx(sd / math.sqrt(k), rel=1e-13)
    assert e.z(0.1) == pytest.approx((mean - 0.1) / (sd / math.sqrt(k)), rel=1e-13)
    with mp.workdps(30):
        z975 = float(mp.sqrt(2) * mp.erfinv(mp.mpf("0.95")))
    assert Z95 == pytest.approx(z975, rel=1e-15)
    lo, hi = e.interval95()
    assert (lo, hi) == (pytest.approx(mean - z975 * e.se, rel=1e-13), pytest.approx(mean + z975 * e.se, rel=1e-13))
    assert Estimate.of([2.0]).se == math.inf


# ------------------------------------------------------------------ the copy plateau


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


# ------------------------------------------------------------------ the atomic writer's file mode


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_atomic_writes_are_readable_by_everyone(tmp_path, umask):
    """The docstring of ``atomic.replacing``: "The file is readable by everyone" (mkstemp's 0600 is
    not kept).  Under the usual umask 022 the mode is the one ``open()`` gives (0644); under any
    umask it is readable by owner, group and others, writable by the owner, executable by nobody;
    the same when it replaces an existing private file."""
    old = os.umask(umask)
    try:
        (tmp_path / "plain").write_text("x")
        plain = stat.S_IMODE((tmp_path / "plain").stat().st_mode)
        (tmp_path / "old.json").write_text("{}")
        os.chmod(tmp_path / "old.json", 0o600)
        paths = [atomic.write_text(tmp_path / "a.txt", "hello"), atomic.write_bytes(tmp_path / "b.bin", b"\x00"),
                 atomic.write_json(tmp_path / "c.json", {"x": 1}), atomic.write_json(tmp_path / "old.json", {"y": 2})]
        with atomic.replacing(tmp_path / "d.txt") as f:
            f.write("d")
        paths.append(tmp_path / "d.txt")
    finally:
        os.umask(old)
    for p in paths:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o444 == 0o444 and mode & 0o200 and not mode & 0o111, (p.name, oct(mode))
        if umask == 0o022:
            assert mode == plain == 0o644, (p.name, oct(mode))
    assert sorted(q.name for q in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.json", "d.txt", "old.json", "plain"]


# ------------------------------------------------------------------ bool depths


LAW = "s=uniform(0.5,4)"
EXP = "s=exponential(2)"
DEPTH_NAMES = ("T", "depth")
EXTRA = {"alpha": 0.3, "variant": "readout=evolved-keys-and-query", "params": (0.1,)}  # other required parameters a depth function may have


def _depth_functions():
    out = []
    for name in mmicl.__all__:
        obj = getattr(mmicl, name)
        if not callable(obj) or inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        if any(p in sig.parameters for p in DEPTH_NAMES):
            out.append(name)
    return out


DEPTH_FUNCTIONS = _depth_functions()


def test_the_depth_functions_are_found():
    """The discovery below is not empty and finds the functions known to take a depth."""
    assert {"alpha_T", "alpha_T_mp", "excess_risk", "population_loss", "TwoParameterLoss", "minimise_two",
            "flow_one", "flow_two", "alpha_T_unbounded", "optimal_schedule", "certify_alpha_T"} <= set(DEPTH_FUNCTIONS)


@pytest.mark.parametrize("name", DEPTH_FUNCTIONS)
@pytest.mark.parametrize("T", [True, False, np.True_, np.False_], ids=repr)
def test_every_public_function_with_a_depth_refuses_a_bool(name, T):
    """``True`` is not a number of layers (accepting it would compute at T = 1): every public API
    function with a parameter named T or depth refuses a bool with a ValueError that says so."""
    fn = getattr(mmicl, name)
    sig = inspect.signature(fn)
    depth = next(p for p in DEPTH_NAMES if p in sig.parameters)
    kwargs = {depth: T}
    for pname, p in sig.parameters.items():
        if pname == depth or p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if pname == "law":
            kwargs["law"] = EXP if "unbounded" in name else LAW
        elif pname in EXTRA:
            kwargs[pname] = EXTRA[pname]
        else:
            pytest.fail(f"{name} has a required parameter {pname!r} this test does not know how to fill")
    with pytest.raises(ValueError, match="bool|depth"):
        fn(**kwargs)


def test_a_bool_context_length_is_refused():
    for n in (True, False):
        with pytest.raises(ValueError):
            mmicl.best_lsa(LAW, n=n)


# ------------------------------------------------------------------ the exponential law's G(α)


def exact_G(k: Fraction, T: int, alpha: Fraction) -> Fraction:
    """G(α) = E[s (α(1+s) − 1)^{2T−1}] for s ~ exponential(k), exactly: expand r = αs + (α − 1)
    binomially and use E[s^m] = m!/k^m."""
    n = 2 * T - 1
    return sum(Fraction(math.comb(n, j)) * alpha**j * (alpha - 1) ** (n - j) * math.factorial(j + 1) / k ** (j + 1)
               for j in range(n + 1))


def quad_G(k: float, T: int, alpha: float) -> mp.mpf:
    """The same G by mpmath quadrature against the density k e^{−ks} (split where r = 0)."""
    with mp.workdps(30):
        k, a = mp.mpf(k), mp.mpf(alpha)
        n = 2 * T - 1
        s0 = (1 - a) / a
        f = lambda s: s * (a * (1 + s) - 1) ** n * k * mp.exp(-k * s)  # noqa: E731
        return mp.quad(f, [0, s0, s0 + 40 / k, mp.inf])


@pytest.mark.parametrize("k", [Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3)])
@pytest.mark.parametrize("T", [1, 2, 4])
@pytest.mark.parametrize("alpha", [Fraction(1, 5), Fraction(1, 2), Fraction(4, 5)])
def test_exponential_stationarity_against_exact_moments_and_quadrature(k, T, alpha):
    """``stationarity_unbounded`` and ``stationarity_quadrature`` against exact rational arithmetic
    (and, for the smaller depths, an independent mpmath quadrature): a slip by a power of k moves
    the value for every k ≠ 1 even where it keeps the root."""
    law = f"s=exponential({float(k)!r})"
    want = exact_G(k, T, alpha)
    scale = float(sum(abs(Fraction(math.comb(2 * T - 1, j)) * alpha**j * (alpha - 1) ** (2 * T - 1 - j))
                      * math.factorial(j + 1) / k ** (j + 1) for j in range(2 * T)))
    got = stationarity_unbounded(law, T, float(alpha))
    assert abs(float(got) - float(want)) <= 1e-15 * scale + 1e-15 * abs(float(want))
    got_q = stationarity_quadrature(law, T, float(alpha))
    assert abs(float(got_q) - float(want)) <= 1e-10 * scale
    if T <= 2:
        assert abs(float(quad_G(float(k), T, float(alpha))) - float(want)) <= 1e-12 * scale


@pytest.mark.parametrize("k", [0.5, 3.0])
def test_alpha_T_unbounded_is_the_root_of_the_exact_G(k):
    """At T = 2 the minimiser is where the exact G changes sign: G(α_T(1 ∓ 1e-9)) have opposite
    signs (G increases in α)."""
    a = mmicl.alpha_T_unbounded(f"s=exponential({k!r})", 2)
    kf = Fraction(k)
    assert exact_G(kf, 2, Fraction(a * (1 - 1e-9))) < 0 < exact_G(kf, 2, Fraction(a * (1 + 1e-9)))


# ------------------------------------------------------------------ survivors of the extended set


@pytest.mark.parametrize("n", [True, False, np.True_])
def test_a_count_refuses_a_bool(n):
    """``check_count`` (grid sizes, sample counts) refuses a bool as check_depth does
    (mutant validate_count_bool)."""
    from mmicl.numerics.validate import check_count

    with pytest.raises(ValueError, match="whole number"):
        check_count("the grid size n", n, 0, 101)
    assert check_count("the grid size n", np.int64(3), 1, 101) == 3


def test_a_run_key_does_not_depend_on_the_order_of_its_settings():
    """Two RunSpecs whose configurations differ only in order have one key (mutant sweep_key_order:
    the key's JSON without sort_keys)."""
    from mmicl.numerics.runs.spec import RunSpec

    a = RunSpec("theory", {"law": "s=uniform(0.5,4)", "T": 3, "alpha0": 0.1})
    b = RunSpec("theory", {"alpha0": 0.1, "T": 3, "law": "s=uniform(0.5,4)"})
    assert a.key == b.key and a.key != RunSpec("theory", {"law": "s=uniform(0.5,4)", "T": 4, "alpha0": 0.1}).key


def test_the_store_table_flattens_nested_results_with_dotted_keys(tmp_path):
    """``Store.table`` joins nested keys with dots and leaves out the bulky entries (mutant
    store_flat_nested)."""
    from mmicl.numerics.runs.key import FORMAT
    from mmicl.numerics.runs.spec import run_key
    from mmicl.numerics.runs.store import Store

    config = {"law": "x", "opt": {"lr": 0.1}}
    key = run_key("theory", config)
    store = Store(tmp_path)
    store.write({"format": FORMAT, "key": key, "kind": "theory", "status": "done", "config": config,
                 "result": {"a": {"b": 1.5, "c": {"d": 2}}, "history": [1, 2]}, "provenance": {"seconds": 0.5}})
    row, = store.table()
    assert row["config.opt.lr"] == 0.1 and row["result.a.b"] == 1.5 and row["result.a.c.d"] == 2
    assert "result.a" not in row and not any(k.startswith("result.history") for k in row)
    assert row["seconds"] == 0.5 and Store(tmp_path).status(key) == "done"
