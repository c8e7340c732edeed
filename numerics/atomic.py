"""Atomic file writes: a killed run never leaves a half-written result behind.

Every write goes to a temporary file in the target's folder, is flushed to disk, and then replaces
the target in one ``os.replace`` (atomic on POSIX and Windows within one file system).  On any
error the temporary file is removed and the target is left as it was.  This is the one atomic
writer of the package: text, JSON, binary files (torch checkpoints) and figures all go through
``replacing``.

The temporary file is named ``.<target>.<8 random characters>.mmicl-tmp`` (``TEMP_SUFFIX``), a
name no one else writes, so that ``is_temporary`` can tell a file this writer left behind (a killed
run's) from a user's own file that merely starts with a dot.  A target that exists but is not a
regular file (a folder, a symbolic link, a FIFO, a device) is refused before anything is written
(``NotAFileError``, one line): replacing it would remove or write through what mmicl did not make.

A full disk is an error, not a loss: a write that finds no space (``ENOSPC``, or ``EDQUOT`` for a
quota) raises ``DiskFullError``, whose message is one line naming the folder, the bytes the write
needed and the bytes free; the target keeps its earlier content.  ``require_space`` refuses a run
before its work starts where the size of what it will write is known.

Figures are rendered in memory and written through the same writer (``save_figure``).  Inside
``deferred_figures()`` they are held, not written, until the caller flushes them: ``mmicl verify``
saves a claim's verdict before its figures.
"""
from __future__ import annotations

import errno
import io
import os
import shutil
import tempfile
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any, Iterator

import re
import stat

from mmicl.theory.errors import InputError, MmiclError

from .strict_json import dumps

__all__ = ["DiskFullError", "NotAFileError", "TEMP_SUFFIX", "is_temporary", "check_replaceable", "replacing",
           "write_text", "write_bytes", "write_json", "write_together", "save_figure", "deferred_figures",
           "require_space", "free_bytes"]

_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}


class DiskFullError(MmiclError, OSError):
    """No space (or no quota) left where mmicl writes; ``str()`` is one line naming the folder, the
    bytes needed and the bytes free."""

    def __init__(self, folder: Path, needed: int | None, free: int | None, what: str = ""):
        self.folder, self.needed, self.free = Path(folder), needed, free
        need = f"needs {_size(needed)}" if needed is not None else "needs more space"
        have = f", {_size(free)} free" if free is not None else ""
        super().__init__(errno.ENOSPC, f"no space left in {self.folder}: {what or 'this write'} {need}{have}; "
                                       "free some space or choose another folder")

    def __str__(self) -> str:
        return self.strerror


class NotAFileError(InputError):
    """A path mmicl would replace exists as something other than a regular file (a folder, a
    symbolic link, a FIFO, a device): one line naming it and what it is."""


TEMP_SUFFIX = ".mmicl-tmp"
"""The suffix of this writer's temporary files (the module docstring)."""

_TEMPORARY = re.compile(r"^\..+\.[a-z0-9_]{8}" + re.escape(TEMP_SUFFIX) + r"$")


def is_temporary(name: str) -> bool:
    """Whether ``name`` is a temporary file of this writer: ``.<target>.<8 of [a-z0-9_]>.mmicl-tmp``,
    as ``tempfile.mkstemp`` makes them here (``.notes.txt.backup1`` and ``.env.local`` are not)."""
    return bool(_TEMPORARY.match(name))


def _kind(mode: int) -> str:
    return ("a folder" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode) else
            "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device file")


def check_replaceable(path: str | os.PathLike) -> None:
    """``NotAFileError`` where ``path`` exists and is not a regular file (not followed if a link)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError:
        return  # e.g. a parent that is not a folder: the write itself says so
    if not stat.S_ISREG(mode):
        raise NotAFileError(f"cannot write {path}: it exists as {_kind(mode)}, not a file; mmicl replaces only "
                            "files it wrote: move it away or choose another folder")


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def free_bytes(folder: str | os.PathLike) -> int | None:
    """Bytes free to this user in ``folder`` (its nearest existing parent); None where unknown."""
    p = Path(folder).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return None


def require_space(folder: str | os.PathLike, needed: int, what: str) -> None:
    """Raise ``DiskFullError`` before any work when ``folder`` has fewer than ``needed`` bytes free
    (``what`` names what will be written).  Silent where the free space cannot be known."""
    free = free_bytes(folder)
    if free is not None and free < needed:
        raise DiskFullError(Path(folder), needed, free, what)


@contextmanager
def _staged(path: Path, mode: str, needed: int | None) -> Iterator[tuple[IO, str]]:
    """``(f, tmp)``: a temporary file beside ``path``, written by the block, then flushed to disk and
    made readable by everyone (``mkstemp`` makes it private; results are for sharing).  The caller
    renames ``tmp`` into place; on any error it is removed, and a full disk is a ``DiskFullError``."""
    check_replaceable(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX, dir=path.parent)
    except OSError as e:
        if e.errno in _FULL:
            raise DiskFullError(path.parent, needed, free_bytes(path.parent), f"writing {path.name}") from None
        raise
    try:
        with os.fdopen(fd, mode, **({"encoding": "utf-8"} if mode == "w" else {})) as f:
            yield f, tmp
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and not isinstance(e, DiskFullError) and e.errno in _FULL:
            raise DiskFullError(path.parent, needed, free_bytes(path.parent), f"writing {path.name}") from None
        raise


@contextmanager
def replacing(path: str | os.PathLike, mode: str = "w", needed: int | None = None) -> Iterator[IO]:
    """``with replacing(path, mode) as f: …`` writes ``f`` and then puts it at ``path`` atomically.

    ``mode`` is ``"w"`` (text, UTF-8) or ``"wb"`` (bytes).  The file is readable by everyone.
    ``needed`` (bytes, where the caller knows it) goes into the ``DiskFullError`` of a full disk."""
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    with _staged(path, mode, needed) as (f, tmp):
        yield f
    try:
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    data = text.encode("utf-8")
    with replacing(path, "wb", needed=len(data)) as f:
        f.write(data)
    return Path(path)


def write_bytes(path: str | os.PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    with replacing(path, "wb", needed=len(data)) as f:
        f.write(data)
    return Path(path)


def write_json(path: str | os.PathLike, obj: Any) -> Path:
    """Write ``obj`` as strict JSON (``strict_json.dumps``: no NaN/Infinity, ``schema_version``)."""
    return write_text(path, dumps(obj) + "\n")


def write_together(files: dict[str | os.PathLike, bytes]) -> list[Path]:
    """Write several files that must agree (a summary and its reports): every one is complete and
    flushed to disk under a temporary name before the first replaces its target, and the targets
    are then replaced one after the other.  A kill or a full disk while they are being prepared
    leaves all the targets as they were; only a kill between the renames (microseconds) can
    leave some new and some old.  A full disk names every file and the bytes of all of them."""
    staged: list[tuple[str, Path]] = []
    total = sum(map(len, files.values()))
    try:  # a target that is not a file is refused while staging (_staged), before any is replaced
        for target, data in files.items():
            target = Path(target)
            try:
                with _staged(target, "wb", total) as (f, tmp):
                    f.write(data)
            except DiskFullError as e:
                raise DiskFullError(e.folder, total, e.free,
                                    f"writing {', '.join(Path(t).name for t in files)}") from None
            staged.append((tmp, target))
        for tmp, target in staged:
            os.replace(tmp, target)
        staged = []
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return [Path(t) for t in files]


_DEFERRED: ContextVar[list | None] = ContextVar("mmicl_deferred_figures", default=None)


def save_figure(fig, path: str | os.PathLike, **savefig_kwargs) -> Path:
    """Render a matplotlib figure in memory (format from the suffix) and write it atomically; inside
    ``deferred_figures()`` hold the bytes until the caller flushes them.  Returns ``path``."""
    path = Path(path)
    buf = io.BytesIO()
    fig.savefig(buf, format=path.suffix.lstrip(".") or "png", **savefig_kwargs)
    pending = _DEFERRED.get()
    if pending is None:
        write_bytes(path, buf.getvalue())
    else:
        pending.append((path, buf.getvalue()))
    return path


class Deferred:
    """The figures a block rendered, in order; ``flush()`` writes them (atomically, one by one) and
    returns their paths; a ``DiskFullError`` leaves the ones already written and the rest pending."""

    def __init__(self, items: list):
        self.items = items

    @property
    def paths(self) -> list[Path]:
        return [p for p, _ in self.items]

    def flush(self) -> list[Path]:
        for path, _ in self.items:  # a figure name taken by a folder is refused before any is written
            check_replaceable(path)
        written = []
        while self.items:
            path, data = self.items[0]
            write_bytes(path, data)
            written.append(path)
            self.items.pop(0)
        return written


@contextmanager
def deferred_figures() -> Iterator[Deferred]:
    """``with deferred_figures() as d: …`` holds every ``save_figure`` of the block in ``d``."""
    items: list = []
    token = _DEFERRED.set(items)
    try:
        yield Deferred(items)
    finally:
        _DEFERRED.reset(token)
