"""Snapshots of a training loop in progress, so that a killed run resumes where it stopped.

A long run (one ensemble of a testbed claim trains for hours on one CPU thread) saves, every
``every_s`` seconds of wall time, everything its next step depends on: the parameters, Adam's state,
the states of the random generators that draw its training batches, the metric history so far and
the running training-loss window.  Restarted with the same settings, ``training_loop`` loads the
snapshot and goes on from the step after it; what follows is the computation an uninterrupted run
would have made (the same operations on the same tensors in the same order), so the finished run
does not depend on whether, or where, it was interrupted.

A snapshot is written atomically (``numerics.atomic``) and read with ``torch.load(weights_only=True)``
(tensors, numbers and strings only).  It names what it belongs to (``identity``: the run's key and
the loop's settings, the number of members, the parameters' shapes); a file that cannot be read or
belongs to other settings is not used (one warning line) and training starts from step 0.
"""
from __future__ import annotations

import io
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch

from mmicl.numerics.atomic import write_bytes

__all__ = ["FORMAT", "Snapshot", "save_snapshot", "load_snapshot", "snapshot_progress"]

FORMAT = "mmicl.testbed.snapshot/1"


@dataclass(frozen=True)
class Snapshot:
    """Where a training loop keeps its snapshot (``path``), how often it writes it (``every_s``
    seconds of wall time; 0: after every step) and what it belongs to (``identity``: JSON-ready,
    e.g. the run's key; the loop adds its own settings)."""

    path: Path
    every_s: float = 600.0
    identity: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.every_s >= 0:
            raise ValueError(f"Snapshot.every_s is seconds between snapshots, ≥ 0; got {self.every_s!r}")


def _identity_text(identity: dict) -> str:
    return json.dumps(identity, sort_keys=True, separators=(",", ":"), default=str)


def save_snapshot(path: Path, identity: dict, state: dict) -> None:
    """Write ``state`` (tensors, numbers, strings, and lists and dicts of them) with ``identity``
    to ``path``, atomically."""
    buf = io.BytesIO()
    torch.save({"format": FORMAT, "identity": _identity_text(identity), "state": state}, buf)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_bytes(path, buf.getvalue())


def _read(path: Path) -> tuple[dict | None, str]:
    """(the saved dict, "") of the snapshot at ``path``, or (None, why it is not a readable snapshot)."""
    try:
        saved = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 -- any unreadable file is set aside the same way
        return None, f"cannot be read ({type(e).__name__})"
    if not (isinstance(saved, dict) and saved.get("format") == FORMAT and isinstance(saved.get("state"), dict)):
        return None, "is not a training snapshot of this mmicl"
    return saved, ""


def load_snapshot(path: Path, identity: dict) -> dict | None:
    """The state saved at ``path`` for ``identity``; None when there is no file, and None with one
    warning line on stderr when the file cannot be read or was saved for other settings."""
    path = Path(path)
    if not path.is_file():
        return None
    saved, why = _read(path)
    if saved is not None and saved["identity"] != _identity_text(identity):
        saved, why = None, "was saved for other settings"
    if saved is None:
        print(f"warning: the training snapshot {path} {why}; training from step 0 (it is overwritten at the "
              "next snapshot)", file=sys.stderr)
        return None
    return saved["state"]


def snapshot_progress(path: Path) -> dict | None:
    """How far the run of the snapshot at ``path`` had trained: ``{"identity" (what it belongs to),
    "step", "steps" (of the run), "seconds" (of training so far)}``; None for a file that is not a
    readable snapshot."""
    saved, _ = _read(Path(path))
    if saved is None:
        return None
    try:
        identity, state = json.loads(saved["identity"]), saved["state"]
        return {"identity": identity, "step": int(state["step"]), "steps": int(identity["train"]["steps"]),
                "seconds": float(state["seconds"])}
    except (KeyError, TypeError, ValueError):  # a snapshot without the loop's fields
        return None
