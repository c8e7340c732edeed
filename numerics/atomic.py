"""Atomic file writes: a killed run never leaves a half-written result behind."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from .strict_json import dumps


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` via a temporary file in the same folder and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes files only their owner can read; results are for sharing
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as strict JSON (``strict_json.dumps``: no NaN/Infinity, ``schema_version``)."""
    return write_text(path, dumps(obj) + "\n")
