"""How far a built-in check's numbers may move between two runs and still be the same result.

A check's ``atol`` / ``rtol`` (``claim.Check``) are what ``mmicl compare`` and the
``mmicl_baseline`` fixture allow a number to move between a baseline and a new run of the same
claim at the same size and seed, on another machine (CPU, BLAS kernel, thread count, a patch
release of numpy, SciPy or torch).  They are not the check's decision tolerance: that says
whether the claim's statement holds; these say whether two runs got the same numbers.  Three
kinds of number, three rules:

- **exact** (``EXACT``: atol 0, rtol 0): integers, counts, settings (depths, sample sizes, grid
  sizes, seeds), the law's own parameters, and numbers computed in exact arithmetic.  Any move
  is a change.
- **float64 computations** (closed forms, quadrature, root finding, ODE integration): the
  accuracy of the method that produced the number, which is what any two correct runs can
  differ by.  For a number that is itself an error or a difference of two computed values
  (``|flow − root|``, a residual), that accuracy is its absolute size scale: the number may be
  anywhere between 0 and it.
- **seeded sampling** (Monte Carlo means, trained parameters): the draws are the same on every
  machine (numpy's ``Generator`` and torch's CPU generator are platform independent), but
  floating-point reductions are not, and training amplifies their rounding; at worst two runs
  are two independent estimates, whose difference has standard deviation √2·se.
  ``sampling_atol(se)`` allows ``MOVE_Z``·√2·se.  A number derived from such estimates (a
  z-score, a slope, a bound) moves by what its inputs allow, propagated to first order.
"""
from __future__ import annotations

import math

from mmicl.proofs.claim import MOVE_Z

__all__ = ["EXACT", "MOVE_Z", "SAMPLING_WHY", "sampling_atol", "exact"]


EXACT = 0.0
"""The tolerance of an exact number: any move is a change."""

SAMPLING_WHY = (f"sampled numbers: {MOVE_Z:g}·√2·se (two runs on different machines are at worst two "
                "independent estimates); settings and counts exact")


def sampling_atol(se: float) -> float:
    """``MOVE_Z``·√2·``se``: how far a sampled estimate with standard error ``se`` may move between
    two runs (0 for a non-finite or negative ``se``, which cannot say)."""
    se = float(se)
    return MOVE_Z * math.sqrt(2.0) * se if math.isfinite(se) and se > 0 else 0.0


def exact(*keys: str) -> dict[str, float]:
    """``{key: EXACT}`` for each key: to merge into a check's ``atol`` and ``rtol`` dicts."""
    return {k: EXACT for k in keys}
