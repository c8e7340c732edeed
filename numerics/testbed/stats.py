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
    df = (va + vb) ** 2 / (va ** 2 / (a.size - 1) + vb ** 2 / (b.size - 1))
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
