"""Values below resolution: one convention for every number mmicl computes below what it can resolve.

A function that knows its resolution r (the size below which its value is rounding, not a
measurement) returns a value at or below r as a ``BelowResolution``: the variants' excess
(``variants.excess_at``, ``variants.minimise``; r = ``variants.resolution``) and the best LSA's gap
(``lsa.best_lsa``; r = ``lsa.gap_resolution``).  Functions whose accuracy is relative (the one-parameter
``lca.excess_risk_scaled``, log-scaled: every term's relative rounding is bounded) have no such floor
and return plain numbers; a law they cannot resolve at all is refused (``LawError``).  A
``BelowResolution``:

- it is a ``float`` (the value the arithmetic produced), so code that only passes it on keeps working,
  and arithmetic on it gives plain floats;
- every display of it says so: ``str``, ``repr`` and any ``format`` give ``below resolution r``, never
  a digit string of the rounding;
- strict JSON (``strict_json``: ``verdicts.json``, ``--json``, reports) writes it as ``null`` with
  ``"<key>_null_reason": "below resolution r"`` beside it, as it writes every number it cannot give;
- ``is_below_resolution(x)`` and ``x.resolution`` tell a program.

Above r the function returns a plain ``float``.
"""
from __future__ import annotations

__all__ = ["BelowResolution", "flag_resolution", "is_below_resolution", "below_resolution_text"]


def below_resolution_text(resolution: float) -> str:
    """The words every display of a value below ``resolution`` uses."""
    return f"below resolution {resolution:.3g}"


class BelowResolution(float):
    """A value at or below its function's resolution (module docstring); ``resolution`` is r."""

    below_resolution = True

    def __new__(cls, value: float, resolution: float) -> "BelowResolution":
        obj = super().__new__(cls, value)
        obj.resolution = float(resolution)
        return obj

    def __repr__(self) -> str:
        return below_resolution_text(self.resolution)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(below_resolution_text(self.resolution), "" if not spec or spec[-1] not in "s" else spec)

    def __reduce__(self):
        return BelowResolution, (float(self), self.resolution)


def flag_resolution(value: float, resolution: float) -> float:
    """``value`` as a plain float where it is above ``resolution``, else ``BelowResolution``."""
    value = float(value)
    return BelowResolution(value, resolution) if abs(value) <= resolution else value


def is_below_resolution(x) -> bool:
    """Whether ``x`` is a value below its function's resolution (``BelowResolution``)."""
    return isinstance(x, BelowResolution)
