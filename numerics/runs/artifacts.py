"""Where the multimodal runs keep their files: a stage-1 run's checkpoint is written to
``<store>/artifacts/<key>.pt`` beside its record, and a stage-2 run reads it back, verified.

``stage1`` and ``stage2`` runs find their store through ``STORE_ENV``: run them inside
``using_store(store)`` (``runner.stored_stage1(store, settings)`` does, and returns the verified
``Stage1``).  ``load_stage1(root, record)`` checks a checkpoint against its record: the file exists,
has the SHA-256 the record states, loads (``Stage1.load``: content hash, names, shapes, finite
values) and was trained with the record's settings; else ``StoredArtifactError``, one line.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

from mmicl.theory.errors import InputError

from .key import run_key
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig

__all__ = ["STORE_ENV", "ARTIFACTS", "SNAPSHOTS", "SNAPSHOT_EVERY_S", "StoredArtifactError", "using_store",
           "store_root", "sha256", "stage1_record_path", "load_stage1", "snapshot_for", "discard_snapshot", "in_training"]

STORE_ENV = "MMICL_SWEEP_STORE"
"""The environment variable that tells a ``stage1`` or ``stage2`` run where its results store is
(``using_store`` sets it; a Dask worker on another machine needs it set, to the same store on a
shared file system)."""
ARTIFACTS = "artifacts"
"""The folder of a results store that holds the runs' artifact files (``<key>.pt``)."""
SNAPSHOTS = "snapshots"
"""The folder, inside ``ARTIFACTS``, of the snapshots of runs in progress (``<key>.pt``,
``testbed.resume``): a killed run resumes from its snapshot, which goes once its record is stored."""
SNAPSHOT_EVERY_S = 300.0
"""Seconds of training between two snapshots of a run in progress: at most this much of a killed
run's training is done again, for a write of well under a second (the weights and Adam's state)."""


class StoredArtifactError(InputError):
    """A run's artifact (or the record that states it) that cannot be used: ``str()`` is one line,
    the file, what is wrong and what to do; ``problem`` is the file and what is wrong alone."""

    def __init__(self, problem: str, advice: str = ""):
        self.problem = problem
        super().__init__(problem + (f"; {advice}" if advice else ""))


@contextmanager
def using_store(store):
    """``with using_store(store): run_here(specs, store)``: the ``stage1`` and ``stage2`` runs made
    inside find their store (a ``Store`` or its folder) through ``STORE_ENV``, which this sets for
    the block (and for the processes started in it, e.g. a Dask LocalCluster's workers)."""
    root = str(Path(getattr(store, "root", store)).resolve())
    old = os.environ.get(STORE_ENV)
    os.environ[STORE_ENV] = root
    try:
        yield Path(root)
    finally:
        if old is None:
            os.environ.pop(STORE_ENV, None)
        else:
            os.environ[STORE_ENV] = old


def store_root(kind: str) -> Path:
    root = os.environ.get(STORE_ENV)
    if not root:
        raise StoredArtifactError(f"a {kind} run keeps its stage-1 checkpoint beside its results store, and none is "
                                  f"given: run it inside runs.using_store(store) (or set {STORE_ENV} to the store's "
                                  "folder)")
    root = Path(root)
    if not (root / "runs").is_dir():
        raise StoredArtifactError(f"{STORE_ENV}={str(root)!r} is not a results store (no runs/ folder)")
    return root


def snapshot_for(kind: str, config: dict, every_s: float = SNAPSHOT_EVERY_S):
    """The ``resume.Snapshot`` of the run (kind, config) in the results store that ``using_store``
    names (``<store>/artifacts/snapshots/<key>.pt``); None outside ``using_store`` (a run made
    without a store has nowhere to keep one)."""
    from mmicl.numerics.testbed.resume import Snapshot

    root = os.environ.get(STORE_ENV)
    if not root or not (Path(root) / "runs").is_dir():
        return None
    key = run_key(kind, config)
    return Snapshot(Path(root) / ARTIFACTS / SNAPSHOTS / f"{key}.pt", every_s, {"kind": kind, "key": key})


def discard_snapshot(root, key: str) -> None:
    """Remove the snapshot of the run ``key`` from the store at ``root``, if there is one (its record
    is stored: nothing resumes from it any more)."""
    (Path(root) / ARTIFACTS / SNAPSHOTS / f"{key}.pt").unlink(missing_ok=True)


def in_training(root) -> list[dict]:
    """The runs of the store at ``root`` that have a training snapshot (killed or still training),
    each ``{"key", "kind", "step", "steps", "seconds", "saved"}`` (``saved``: the file's time, Unix
    seconds), by key; a snapshot that cannot be read has ``step`` None."""
    from mmicl.numerics.testbed.resume import snapshot_progress

    out = []
    for path in sorted((Path(root) / ARTIFACTS / SNAPSHOTS).glob("*.pt")):
        p = snapshot_progress(path) or {}
        out.append({"key": path.stem, "kind": (p.get("identity") or {}).get("kind"), "step": p.get("step"),
                    "steps": p.get("steps"), "seconds": p.get("seconds"), "saved": path.stat().st_mtime})
    return out


def sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def stage1_record_path(root: Path, stage1_config: dict) -> Path:

    return Path(root) / "runs" / f"{run_key('stage1', stage1_config)}.json"


def load_stage1(root, record: dict):
    """The ``Stage1`` of a finished ``stage1`` run's record, from its artifact in the store at
    ``root``: the file must exist, have the SHA-256 the record states, and load (``Stage1.load``:
    content hash, names, shapes, finite values) with the record's settings; else
    ``StoredArtifactError`` (one line: the file, what is wrong, what to do)."""
    from mmicl.numerics.testbed.checkpoint import Stage1, Stage1Error

    root, config = Path(root), record["config"]
    art = (record.get("result") or {}).get("artifact") or {}
    where = root / "runs" / f"{record['key']}.json"
    redo = ("run mmicl verify, or runner.stored_stage1 with these stage-1 settings, again (either sets the "
            f"file aside and trains stage 1 again), or delete {where}")
    if not isinstance(art.get("file"), str) or not isinstance(art.get("sha256"), str):
        raise StoredArtifactError(f"the stage-1 record {where} names no artifact file and digest", redo)
    path = root / ARTIFACTS / Path(art["file"]).name
    if not path.is_file():
        raise StoredArtifactError(f"the stage-1 checkpoint {path} (of the record {where}) is missing", redo)
    if sha256(path) != art["sha256"]:
        raise StoredArtifactError(f"the stage-1 checkpoint {path} does not have the SHA-256 its record {where} "
                                  "states (it was changed or replaced after it was written)", redo)
    try:
        s1 = Stage1.load(path)
    except Stage1Error as e:
        raise StoredArtifactError(f"the stage-1 checkpoint {path} {e.problem}", redo) from None
    if not s1.trained_with(ModelConfig(**config["model"]), DataConfig(**config["data"]), TrainConfig(**config["train"]),
                           config["seeds"], config["data_seed"]):
        raise StoredArtifactError(f"the stage-1 checkpoint {path} records other settings than its record {where}",
                                  redo)
    return s1
