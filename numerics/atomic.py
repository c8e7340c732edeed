"""Atomic file writes: a killed run never leaves a half-written result behind.

Every write goes to a temporary file in the target's folder, is flushed to disk, and then replaces
the target in one ``os.replace`` (atomic on POSIX and Windows within one file system).  On any
error the temporary file is removed and the target is left as it was.  This is the one atomic
writer of the package: text, JSON and binary files (torch checkpoints) all go through
``replacing``.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any, Iterator

from .strict_json import dumps

__all__ = ["replacing", "write_text", "write_bytes", "write_json"]


@contextmanager
def replacing(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """``with replacing(path, mode) as f: …`` writes ``f`` and then puts it at ``path`` atomically.

    ``mode`` is ``"w"`` (text, UTF-8) or ``"wb"`` (bytes).  The file is readable by everyone
    (``mkstemp`` makes it private; results are for sharing)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    with replacing(path, "w") as f:
        f.write(text)
    return Path(path)


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    with replacing(path, "wb") as f:
        f.write(data)
    return Path(path)


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as strict JSON (``strict_json.dumps``: no NaN/Infinity, ``schema_version``)."""
    return write_text(path, dumps(obj) + "\n")
