"""Checks at the boundary: each names the value, what is allowed, and how to fix it.

The checks of the caller's values raise ``InputError`` (a ``ValueError``), so that a caller can tell
"the caller gave a value that cannot be used" apart from a failure inside a computation: the
command line turns exactly these errors (and ``LawError``, ``TestbedConfigError``) into usage
errors, and lets anything else surface as the bug it is.

This module imports nothing heavy (it is used by the command line's start-up path).
"""
from __future__ import annotations

import math
import numbers

__all__ = [
    "MAX_LAW_SCALE",
    "MAX_SEED",
    "MAX_ZETA2",
    "InputError",
    "check_depth",
    "check_finite",
    "check_seed",
]

MAX_SEED = 2**32 - 1
"""Largest seed accepted: numpy's legacy limit; derived seeds (``seed·100 + k``, ``seed + 7919``)
stay far inside the 64-bit range of ``torch.Generator.manual_seed``."""

MAX_LAW_SCALE = 1e6
"""Largest ``s = ‖m‖²`` a law may reach.  Far above it float64 keeps fewer and fewer digits of
``1 + s``: at ``s ≈ 1e20`` α_T comes out as α*/2 whatever T, at ``s ≈ 1e77`` the
two-parameter minimiser is NaN, at ``s ≈ 1e308`` the excess risk is 10^1749.  Tokens of norm up to
10³ are also what float32 training can take without losing the noise."""

MAX_ZETA2 = 1e30
"""Largest ``E[ζ²]``: ζ only scales the labels (every risk scales by ``E[ζ²]``), but the torch models
train in float32, whose largest number is 3.4e38, on squared labels."""


class InputError(ValueError):
    """A value given by the caller that cannot be used; the message says which and what is allowed."""


def check_depth(T, error: type[ValueError] = InputError) -> int:
    """The depth ``T`` as a positive int (an integral float such as ``10.0`` is accepted), or an
    ``error`` that says what a depth must be."""
    if isinstance(T, bool) or not isinstance(T, numbers.Integral):
        if isinstance(T, float) and T.is_integer():
            T = int(T)
        else:
            raise error(f"the depth T must be a positive integer (number of layers), got {T!r}")
    if T < 1:
        raise error(f"the depth T must be ≥ 1 (T = 0 is no model at all), got {T}")
    return int(T)


def check_finite(name: str, x, error: type[ValueError] = ValueError) -> float:
    """``x`` as a finite float, or an ``error`` (a ``ValueError`` subclass) naming ``name``.

    A plain ``ValueError`` by default: this check also guards values computed inside (an α that
    became NaN is a failure of the computation, not of the caller); pass ``InputError`` where ``x``
    is the caller's."""
    try:
        x = float(x)
    except (TypeError, ValueError, OverflowError):
        raise error(f"{name} must be a real number, got {x!r}") from None
    if not math.isfinite(x):
        raise error(f"{name} must be finite, got {x!r}")
    return x


def check_seed(seed, name: str = "seed", error: type[ValueError] = InputError) -> int:
    """``seed`` as an int in ``[0, MAX_SEED]`` (numpy refuses negative seeds, torch refuses seeds
    beyond 64 bits, and both only with a traceback)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise error(f"{name} must be an integer from 0 to {MAX_SEED}, got {seed!r}")
    if not 0 <= seed <= MAX_SEED:
        raise error(f"{name} must be an integer from 0 to {MAX_SEED} (2^32 − 1), got {seed}")
    return int(seed)
