"""Checks at the boundary: each names the value, what is allowed, and how to fix it."""
from __future__ import annotations

import math
import numbers

__all__ = ["check_depth", "check_finite"]


def check_depth(T) -> int:
    """The depth ``T`` as a positive int (an integral float such as ``10.0`` is accepted), or a
    ``ValueError`` that says what a depth must be."""
    if isinstance(T, bool) or not isinstance(T, numbers.Integral):
        if isinstance(T, float) and T.is_integer():
            T = int(T)
        else:
            raise ValueError(f"the depth T must be a positive integer (number of layers), got {T!r}")
    if T < 1:
        raise ValueError(f"the depth T must be ≥ 1 (T = 0 is no model at all), got {T}")
    return int(T)


def check_finite(name: str, x, error: type[ValueError] = ValueError) -> float:
    """``x`` as a finite float, or an ``error`` (a ``ValueError`` subclass) naming ``name``."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise error(f"{name} must be a real number, got {x!r}") from None
    if not math.isfinite(x):
        raise error(f"{name} must be finite, got {x!r}")
    return x
