"""Intervals over seeds, and the three-way decision of an empirical claim.

With n seeds and values v_i: mean ± t_{0.975, n−1}·s/√n (Student t; assumes the seed-to-seed
spread is roughly normal, which is what "several seeds" can support).  A difference of two groups
uses Welch's interval.  ``decide(lo, hi)`` is True when the interval lies above the margin, False
when below, None (inconclusive) when it straddles it.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["LEVEL", "Interval", "t_interval", "welch_df", "welch_interval", "decide", "spearman", "Association",
           "stratified_association"]


LEVEL = 0.95


@dataclass
class Interval:
    mean: float
    lo: float
    hi: float
    n: int
    method: str

    def to_json(self) -> dict:
        """Rounded to 6 decimals; an interval that cannot be formed (one seed: ±∞) is null, with why."""
        out = {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}
        if not (math.isfinite(self.lo) and math.isfinite(self.hi)):
            why = f"no interval from {self.n} seed(s): the spread over seeds is unknown"
            out.update(lo=None, hi=None, lo_null_reason=why, hi_null_reason=why)
        return out

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.lo:.3f}, {self.hi:.3f}]"


def _values(values) -> np.ndarray:
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0 or not np.all(np.isfinite(v)):
        raise ValueError(f"an interval needs finite values, got {v!r}")
    return v


def t_interval(values, level: float = LEVEL) -> Interval:
    """Student-t interval of the mean over seeds (infinite with one seed: it cannot decide)."""
    v = _values(values)
    n = v.size
    if n < 2:
        return Interval(float(v.mean()), -math.inf, math.inf, n, "t (one seed: no interval)")
    se = v.std(ddof=1) / math.sqrt(n)
    q = _st.t.ppf(0.5 + level / 2, n - 1)
    return Interval(float(v.mean()), float(v.mean() - q * se), float(v.mean() + q * se), n, f"t, {level:.0%}")


def welch_df(va: float, vb: float, na: int, nb: int) -> float:
    """Welch–Satterthwaite degrees of freedom (va + vb)² / (va²/(na − 1) + vb²/(nb − 1)) of two
    squared standard errors ``va``, ``vb`` from ``na``, ``nb`` values, written in the shares
    va/(va + vb), vb/(va + vb) so that tiny variances do not underflow (va² → 0 gave 0/0); nan
    when va + vb = 0 or either side has fewer than 2 values."""
    total = va + vb
    if not total > 0 or min(na, nb) < 2:
        return math.nan
    ra, rb = va / total, vb / total
    return 1.0 / (ra ** 2 / (na - 1) + rb ** 2 / (nb - 1))


def welch_interval(a, b, level: float = LEVEL) -> Interval:
    """Interval of mean(a) − mean(b), Welch–Satterthwaite degrees of freedom."""
    a, b = _values(a), _values(b)
    if a.size < 2 or b.size < 2:
        d = float(a.mean() - b.mean())
        return Interval(d, -math.inf, math.inf, min(a.size, b.size), "welch (one seed: no interval)")
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    d = float(a.mean() - b.mean())
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(d, d, d, min(a.size, b.size), "welch (no spread)")
    df = welch_df(va, vb, a.size, b.size)
    q = _st.t.ppf(0.5 + level / 2, df)
    return Interval(d, d - q * se, d + q * se, min(a.size, b.size), f"welch, {level:.0%}, df={df:.1f}")


def decide(interval: Interval, margin: float = 0.0) -> bool | None:
    """True if the whole interval is above ``margin``, False if the whole of it is below, else None."""
    if interval.lo > margin:
        return True
    if interval.hi < margin:
        return False
    return None


def spearman(x, y) -> float:
    """Rank correlation; nan when either side is constant."""
    x, y = np.asarray(x, float).ravel(), np.asarray(y, float).ravel()
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(_st.spearmanr(x, y).statistic)


@dataclass
class Association:
    """A time-stratified rank association of two per-seed curves, with its permutation p-values."""

    statistic: float
    p_greater: float
    p_less: float
    permutations: int
    exact: bool
    informative_steps: int

    def to_json(self) -> dict:
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}

    def decision(self, level: float = LEVEL) -> bool | None:
        """True when the association is positive at two-sided level ``level``, False when negative,
        None when neither p-value reaches (1 − level)/2."""
        alpha = (1 - level) / 2
        if self.p_greater <= alpha:
            return True
        if self.p_less <= alpha:
            return False
        return None


def _centred_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks across seeds (axis 1) within each step (row), ties averaged, centred per row."""
    r = np.apply_along_axis(_st.rankdata, 1, x)
    return r - r.mean(1, keepdims=True)


def stratified_association(x, y, max_exact_seeds: int = 8, permutations: int = 20_000,
                           seed: int = 0) -> Association:
    """Do seeds with larger ``x`` have larger ``y`` *at the same training step*?

    ``x``, ``y``: (steps, seeds).  Within each step the seeds are ranked on x and on y; the
    statistic is the correlation of the centred ranks pooled over steps, so that time itself (which
    moves every seed together) contributes nothing.  Null: the seeds' y-curves are exchangeable
    with respect to their x-curves.  The p-values come from permuting whole y-curves across seeds
    (one permutation for all steps, which keeps each seed's persistence over time): every
    permutation when there are at most ``max_exact_seeds`` seeds, else ``permutations`` random ones
    (``seed``), each with the +1 correction of a Monte Carlo test.  Steps where x or y is the same
    for every seed carry no information and add nothing.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape != y.shape or x.ndim != 2:
        raise ValueError(f"x and y must both be (steps, seeds), got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("the curves must be finite")
    n = x.shape[1]
    keep = (np.ptp(x, 1) > 0) & (np.ptp(y, 1) > 0)
    informative = int(keep.sum())
    rx, ry = _centred_ranks(x)[keep], _centred_ranks(y)[keep]
    norm = math.sqrt(float((rx ** 2).sum() * (ry ** 2).sum()))
    if n < 3 or norm == 0:
        return Association(float("nan"), 1.0, 1.0, 0, True, informative)
    stat = float((rx * ry).sum() / norm)
    if math.factorial(n) <= math.factorial(max_exact_seeds):
        import itertools

        perms = np.array(list(itertools.permutations(range(n))))
        exact = True
    else:
        rng = np.random.default_rng(seed)
        perms = np.array([rng.permutation(n) for _ in range(permutations)])
        exact = False
    # Σ_k Σ_i rx[k, i] · ry[k, π(i)] = Σ_i Σ_j C[i, j]·[π(i) = j] with C = rx^T ry
    C = rx.T @ ry
    null = C[np.arange(n)[None, :], perms].sum(1) / norm
    tol = 1e-12 * max(1.0, abs(stat))
    ge, le = int(np.sum(null >= stat - tol)), int(np.sum(null <= stat + tol))
    if exact:
        p_greater, p_less = ge / len(perms), le / len(perms)
    else:
        p_greater, p_less = (ge + 1) / (len(perms) + 1), (le + 1) / (len(perms) + 1)
    return Association(stat, p_greater, p_less, len(perms), exact, informative)
