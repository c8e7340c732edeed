"""The ground of the store of runs: the format of run records and the key of each run.

A run is a kind and its full configuration (``RunSpec``).  Its key is the first 16 hex digits of the
SHA-256 of the canonical JSON (sorted keys, no spaces) of ``{"format": FORMAT, "kind": kind,
"config": config}``: the same configuration always has the same key, in any sweep or claim, and the
results store recomputes it from every record it reads back.  This module imports nothing of mmicl.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

__all__ = ["FORMAT", "RunSpec", "run_key"]

FORMAT = 1
"""The format of run records; part of every run's key."""


@dataclass(frozen=True)
class RunSpec:
    """One run: its ``kind`` (a key of ``kinds.KINDS``) and its normalised ``config``."""

    kind: str
    config: dict

    @property
    def key(self) -> str:
        """``run_key(kind, config)``."""
        text = json.dumps({"format": FORMAT, "kind": self.kind, "config": self.config}, sort_keys=True,
                          separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_key(kind: str, config: dict) -> str:
    """The key of a run: the first 16 hex digits of the SHA-256 of the canonical JSON (sorted keys,
    no spaces) of ``{"format": FORMAT, "kind": kind, "config": config}``.  The results store
    recomputes it from each record it reads back, to check the record's ``key``."""
    return RunSpec(kind, config).key
