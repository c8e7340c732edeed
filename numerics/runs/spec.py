"""The grid of a sweep and the key of each run.

A sweep is ``{"kind": KIND, "base": {...}, "grid": {name: [values, ...]}}`` (the tables of a TOML
file): every combination of the grid's values, laid over ``base``, is one run.  A run's key is the
first 16 hex digits of the SHA-256 of its canonical JSON (kind, configuration and the runs' format
version), so that the same configuration always has the same key, in any sweep (``run_key``; the
results store checks every record it reads back against it).
"""
from __future__ import annotations

import itertools
import math
from pathlib import Path

from mmicl.theory.errors import InputError

from .key import RunSpec, run_key
from .kinds import KINDS

__all__ = ["SweepSpecError", "expand", "load_spec", "RunSpec", "run_key"]


class SweepSpecError(InputError):
    """A sweep specification that cannot be run; the message says what to change."""


def _scalar(name: str, v):
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise SweepSpecError(f"{name} = {v!r}: a run setting must be a number or a string")
    if isinstance(v, float) and not math.isfinite(v):
        raise SweepSpecError(f"{name} = {v!r}: settings must be finite")
    return v


def expand(spec: dict) -> list[RunSpec]:
    """Every run of the grid, in grid order; refuses unknown kinds and settings."""
    if not isinstance(spec, dict) or "kind" not in spec:
        raise SweepSpecError(f"a sweep needs kind = one of {sorted(KINDS)} (and optional [base] and [grid] tables)")
    kind = spec["kind"]
    if kind not in KINDS:
        raise SweepSpecError(f"kind {kind!r} is not one of {sorted(KINDS)}")
    extra = set(spec) - {"kind", "base", "grid"}
    if extra:
        raise SweepSpecError(f"unknown top-level entries {sorted(extra)}; a sweep has kind, [base] and [grid]")
    base, grid = dict(spec.get("base", {})), dict(spec.get("grid", {}))
    allowed = KINDS[kind].settings
    for name in [*base, *grid]:
        if name not in allowed:
            raise SweepSpecError(f"{kind} runs have no setting {name!r}; they have {sorted(allowed)}")
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise SweepSpecError(f"grid.{name} must be a non-empty list of values")
    runs = []
    for combo in itertools.product(*grid.values()):
        config = {k: _scalar(k, v) for k, v in base.items()} | {k: _scalar(k, v) for k, v in zip(grid, combo)}
        runs.append(RunSpec(kind, KINDS[kind].normalise(config)))
    return runs


def load_spec(path: str | Path) -> list[RunSpec]:
    """The runs of a TOML sweep file."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib

    path = Path(path)
    try:
        spec = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SweepSpecError(f"cannot read the sweep file {path}: {e}") from None
    return expand(spec)
