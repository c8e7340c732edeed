"""Leaving the copy plateau: when does a run's ICL accuracy rise clearly above B/N?

Early in training a testbed model learns to copy *some* label of its context, which scores B/N on
the ICL set (B of the N context labels are right); ICL proper comes later, if at all.  A run has
*left the plateau* at the first evaluation where its ICL accuracy exceeds

    level = B/N + 2·√((B/N)(1 − B/N) / eval_size),

two binomial standard errors above the copy baseline on ``eval_size`` evaluation sequences, and it
*ends off the plateau* when its final ICL accuracy exceeds that level.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["plateau_level", "plateau_exit"]



def plateau_level(N: int, B: int, eval_size: int) -> float:
    """B/N plus two binomial standard errors of an accuracy of B/N on ``eval_size`` sequences."""
    p = B / N
    return p + 2 * math.sqrt(p * (1 - p) / eval_size)


def plateau_exit(icl: np.ndarray, steps, level: float) -> dict:
    """Per seed of an (evaluations, seeds) ICL curve: whether it ends above ``level`` and the first
    step at which it exceeded it (None: never); plus the count that ended above and the median exit
    step of the seeds that left (None if none did)."""
    icl = np.asarray(icl, float)
    steps = np.asarray(steps)
    if icl.ndim != 2 or icl.shape[0] != steps.size:
        raise ValueError(f"icl must be (evaluations, seeds) with one row per step, got {icl.shape} for {steps.size} steps")
    above = icl > level
    first = [int(steps[np.argmax(above[:, s])]) if above[:, s].any() else None for s in range(icl.shape[1])]
    left = [f for f in first if f is not None]
    ended = above[-1]
    return {"level": level, "ended_above": ended.tolist(), "n_ended_above": int(ended.sum()), "n_seeds": icl.shape[1],
            "first_step_above": first, "median_exit_step": float(np.median(left)) if left else None}
