"""What one run computes, and the record it leaves.

``execute(kind, config, key)`` never raises: a run that fails returns a record with ``status``
"failed", the error and its traceback, so that one failing run does not stop a sweep.  Every record
carries its format, its key (``key.run_key`` of its kind and configuration) and its provenance: the
package version, the host, the process, the device, the start and end times
(``numerics.provenance``).  The store seals it with a checksum when it writes it (``store.sealed``)
and checks both when it reads it back.
"""
from __future__ import annotations

import math
import time
import traceback

from .key import FORMAT
from .kinds import KINDS
from mmicl.numerics.provenance import __version__, host

__all__ = ["execute", "finite_or_none"]


def execute(kind: str, config: dict, key: str, progress: bool = False, description: str | None = None) -> dict:
    """Run one configuration; the record of it, finished or failed (never raises)."""

    started = time.time()
    record = {"format": FORMAT, "key": key, "kind": kind, "config": config,
              "provenance": {"version": __version__, **host(), "device": config.get("device", "cpu"),
                             "seed": config.get("seed", config.get("seeds")), "started": started}}
    try:
        compute = KINDS[kind].compute
        result = (compute(config, progress=progress, description=description or kind) if progress
                  else compute(config))
        record.update(status="done", result=finite_or_none(result))
    except Exception as e:  # noqa: BLE001 -- recorded, not raised: one failing run must not stop the sweep
        record.update(status="failed", error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
    finished = time.time()
    record["provenance"].update(finished=finished, seconds=round(finished - started, 3))
    return record


def finite_or_none(x):
    """Results as strict JSON: non-finite floats become None."""
    if isinstance(x, dict):
        return {k: finite_or_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite_or_none(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x
