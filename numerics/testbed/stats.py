"""The Student-t interval of a mean over seeds, for the summaries of testbed runs.

With n seeds and values v_i: mean ± t_{0.975, n−1}·s/√n (Student t; assumes the seed-to-seed
spread is roughly normal, which is what "several seeds" can support).  One seed gives no interval
(±∞).  ``mmicl testbed train`` prints it beside each metric, and the testbed figures draw it; the
testbed claims decide by per-seed sign tests instead (``sign_tests``).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats as _st

__all__ = ["LEVEL", "Interval", "t_interval"]


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
