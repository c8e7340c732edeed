"""Strict JSON for every document mmicl prints or writes.

Python's ``json`` writes ``NaN`` and ``Infinity``, which no strict parser (JavaScript's
``JSON.parse``, ``jq``, most JSON libraries) accepts.  Here every non-finite or unavailable number
becomes ``null``, and the reason sits next to it under ``"<key>_null_reason"`` (a reason the caller
gave is kept; otherwise the value it replaced is named).  A value below its function's resolution
(``resolution.BelowResolution``) becomes ``null`` with the reason ``below resolution r``.  numpy scalars and arrays become numbers and
lists, paths become strings, and every top-level document carries ``"schema_version"``.
"""
from __future__ import annotations

import dataclasses
import json
import math
from pathlib import PurePath
from typing import Any

from .resolution import BelowResolution, below_resolution_text

__all__ = ["SCHEMA_VERSION", "to_strict", "dumps", "null_reason_key", "context_length_fields"]

SCHEMA_VERSION = 4
"""Version of the layout of mmicl's JSON documents; raised when a key changes meaning or goes.
2: a verify summary records each claim's ``origin`` (built-in or its plugin), the verdict
``"error"`` exists, and ``verdicts.json`` says the run's state (``run``).
3: each check may carry a numeric tolerance (``atol``, ``rtol``), and ``verdicts.json`` records
the run's ``size`` and its ``provenance`` (versions of mmicl, Python and the numerical libraries,
the git commit where run from a checkout).
4: a check's ``atol`` and ``rtol`` may be a dict per number key, with ``numbers_tolerance`` saying
where they come from; a claim's summary may carry ``summary_atol``, ``summary_rtol`` and
``summary_tolerance``."""


def null_reason_key(key: str) -> str:
    """The key that explains why ``key`` is null."""
    return f"{key}_null_reason"


def context_length_fields(n: int | None) -> dict:
    """``{"n": n}``, or ``n`` null with its reason for the large-context limit (``n is None``)."""
    if n is None:
        return {"n": None, null_reason_key("n"): "the large-context limit n → ∞"}
    return {"n": n}


def _number(x: float) -> tuple[float | None, str | None]:
    if math.isfinite(x):
        return x, None
    return None, f"not a finite float64 ({x!r} replaced by null)"


def to_strict(obj: Any) -> Any:
    """``obj`` with only JSON types and finite numbers (see the module docstring)."""
    return _convert(obj)[0]


def _convert(obj: Any) -> tuple[Any, str | None]:
    """(converted value, reason if it became null or holds nulls that replaced numbers)."""
    if obj is None or isinstance(obj, (bool, str)):
        return obj, None
    if isinstance(obj, int):
        return obj, None
    if isinstance(obj, BelowResolution):
        return None, below_resolution_text(obj.resolution)
    if isinstance(obj, float):
        return _number(obj)
    if hasattr(obj, "dtype") and hasattr(obj, "tolist"):  # numpy and torch scalars and arrays
        return _convert(obj.tolist())
    if isinstance(obj, PurePath):
        return str(obj), None
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return _convert(obj.to_json() if hasattr(obj, "to_json") else dataclasses.asdict(obj))
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        reasons: dict[str, str] = {}
        for k, v in obj.items():
            value, why = _convert(v)
            out[str(k)] = value
            if why is not None:
                reasons[null_reason_key(str(k))] = why
        for rk, why in reasons.items():
            out.setdefault(rk, why)  # a reason the caller gave wins
        return out, None
    if isinstance(obj, (list, tuple)):
        items = [_convert(v) for v in obj]
        why = next((w for _, w in items if w is not None), None)
        return [v for v, _ in items], (f"some entries are null: {why}" if why else None)
    raise TypeError(f"cannot write {type(obj).__name__} as JSON: {obj!r}")


def dumps(obj: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text of ``obj``; a top-level dict gets ``schema_version`` first."""
    doc = to_strict(obj)
    if isinstance(doc, dict):
        doc = {"schema_version": SCHEMA_VERSION, **{k: v for k, v in doc.items() if k != "schema_version"}}
    return json.dumps(doc, indent=indent, allow_nan=False, ensure_ascii=False)
