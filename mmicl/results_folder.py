"""The folder ``mmicl verify --out OUT`` writes: a summary that always agrees with itself.

A run holds the folder for its whole length: ``OUT/.mmicl.lock`` is locked (``fcntl.flock``,
released by the operating system when the process ends, however it ends) and names the holder's
pid, so a second run into the same folder is refused with one line (``FolderBusyError``) instead of
mixing its files into the first one's.  Where ``fcntl`` is missing (Windows) the lock file is
created exclusively and a file left by a process that no longer runs is taken over.

The summary is three files, ``verdicts.json``, ``report.md`` and ``report.html``, always written
together from the same results (``numerics.atomic.write_together``: all three are complete on disk
before the first replaces its predecessor).  They are written

1. when the run starts: no claim yet, state ``running`` -- the earlier run's summary is replaced,
   not merged (its figures and evidence files stay where they are until a claim of this run
   rewrites them; the summary lists only this run's);
2. after each claim, before its figures: the claim's verdict, its figures listed as pending;
3. after its figures are written: the same, figures written;
4. at the end: state ``complete``.

So a run killed at any moment leaves a summary of the claims it had finished, in state
``running``, and a run stopped by a full disk leaves the claims it had finished, in state
``stopped``, with the reason.  Figures are written through the one atomic writer; a figure listed
as written is whole.
"""
from __future__ import annotations

import os
import stat
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from mmicl.numerics.atomic import (DiskFullError, NotAFileError, check_replaceable, deferred_figures, is_temporary,
                                   write_together)
from mmicl.numerics.strict_json import dumps
from mmicl.numerics.provenance import software
from mmicl.numerics.validate import InputError

from mmicl.proofs.claim import Claim, ClaimResult, RunConfig
from mmicl.proofs.claim import relative_path
from mmicl.report import render_html, render_report

__all__ = ["LOCK_NAME", "SUMMARY", "FolderBusyError", "RunState", "holding", "ResultsFolder"]


LOCK_NAME = ".mmicl.lock"
SUMMARY = ("verdicts.json", "report.md", "report.html")


class FolderBusyError(InputError):
    """Another live ``mmicl verify`` holds the folder; the message names it and its pid."""


@dataclass
class RunState:
    """What the summary says about the run itself (beside its claims' results)."""

    state: str  # "running" | "complete" | "stopped"
    planned: list[str]
    pid: int = field(default_factory=os.getpid)
    started: float = field(default_factory=time.time)
    wall_seconds: float = 0.0
    """From the command's start to the last write: start-up included."""
    startup_seconds: float = 0.0
    """From the command's start to the run's folder, before the first claim: the command line,
    the plugins, selecting the claims (the claims' own modules are imported as each first runs,
    in its ``seconds``)."""
    pending_figures: list[str] = field(default_factory=list)
    reason: str = ""

    def to_json(self, out: Path) -> dict:

        return {"state": self.state, "planned": self.planned, "pid": self.pid,
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.started)),
                "wall_seconds": round(self.wall_seconds, 3), "startup_seconds": round(self.startup_seconds, 3),
                "pending_figures": [relative_path(f, out) for f in self.pending_figures], "reason": self.reason}

    def line(self, done: int) -> str:
        """One sentence for the reports' header."""
        said = {"running": f"running (or killed): {done} of {len(self.planned)} claims finished",
                "complete": f"complete: {done} of {len(self.planned)} claims",
                "stopped": f"stopped after {done} of {len(self.planned)} claims: {self.reason}"}[self.state]
        if self.pending_figures:
            said += f"; {len(self.pending_figures)} figure(s) still being written"
        return said


@contextmanager
def holding(out: Path) -> Iterator[Path]:
    """Hold ``out`` for one run (see the module docstring); ``FolderBusyError`` if a live run holds it,
    ``NotAFileError`` if ``out`` is not a folder or its lock is not a regular file."""
    if out.exists() and not out.is_dir():
        raise NotAFileError(f"cannot write into {out}: it exists and is not a folder; give a folder path")
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # Windows: an exclusive file naming its holder
        fcntl = None
    if fcntl is not None:
        check_replaceable(path)  # a link, folder or FIFO named .mmicl.lock is refused, never written through
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0),
                         0o644)
        except OSError as e:  # a link or FIFO put there between the check and the open
            raise NotAFileError(f"cannot take the lock {path}: {e.strerror}; move it away or choose another --out") from None
        if os.fstat(fd).st_nlink > 1:  # a hard link: writing the pid would change the other name's file too
            os.close(fd)
            raise NotAFileError(f"cannot take the lock {path}: it is a hard link to another file, which writing the "
                                "pid would change; move it away or choose another --out")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = _holder(path)
            os.close(fd)
            raise FolderBusyError(f"{out} is in use by another mmicl verify (pid {holder}); wait for it to finish "
                                  "or choose another --out") from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
            yield out
        finally:
            os.close(fd)  # closing releases the lock; the file stays (removing it would race a new holder)
        return
    yield from _exclusive(out, path)


def _exclusive(out: Path, path: Path) -> Iterator[Path]:
    check_replaceable(path)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = _holder(path)
            if holder is not None and _alive(holder):
                raise FolderBusyError(f"{out} is in use by another mmicl verify (pid {holder}); wait for it to "
                                      "finish or choose another --out") from None
            path.unlink(missing_ok=True)  # left by a run that no longer exists
            continue
        os.write(fd, f"{os.getpid()}\n".encode())
        os.close(fd)
        try:
            yield out
        finally:
            path.unlink(missing_ok=True)
        return
    raise FolderBusyError(f"{out}: could not take {path}; remove it if no mmicl verify is running")


def _holder(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


UNSET_REASONS = {"law": "no --law: each claim ran on its own laws",
                 "variant": "no --variant: the claims ran on mmicl's default model",
                 "case": "no --case: each claim ran on its own cases"}
"""The run settings the summary records even when they are unset (null, with this reason beside
them), so that ``mmicl compare`` can tell a run on its own laws from one on a given law."""


class ResultsFolder:
    """The summary of one run into ``config.out`` (hold the folder first: ``holding``)."""

    def __init__(self, config: RunConfig, planned: list[str], started: float | None = None):
        """``started``: ``time.perf_counter()`` when the command started (the wall time counts from
        it, ``RunState.startup_seconds`` up to here); None: from here."""
        self.config = config
        self.out = Path(config.out)
        self.results: list[ClaimResult] = []
        self.run = RunState("running", planned)
        now = time.perf_counter()
        self._t0 = now if started is None or started > now else started
        self.run.startup_seconds = now - self._t0
        self._provenance = software()
        # a summary name that is not a file is refused by the first write, before anything is replaced
        for name in ("figures", "montecarlo"):
            if (self.out / name).exists() and not (self.out / name).is_dir():
                raise NotAFileError(f"cannot write into {self.out / name}: it exists and is not a folder; move it "
                                    "away or choose another --out")
        _remove_leftovers(self.out)

    def write(self) -> None:
        """``verdicts.json``, ``report.md`` and ``report.html`` from the same results, together."""

        self.run.wall_seconds = time.perf_counter() - self._t0
        doc = {"seed": self.config.seed, "quick": self.config.quick, "size": self.config.size,
               "device": self.config.device,
               **{k: getattr(self.config, k) for k in UNSET_REASONS},
               **{f"{k}_null_reason": why for k, why in UNSET_REASONS.items() if getattr(self.config, k) is None},
               "provenance": self._provenance, "run": self.run.to_json(self.out),
               "claims": [r.to_json(relative_to=self.out) for r in self.results]}
        write_together({self.out / "verdicts.json": (dumps(doc) + "\n").encode(),
                        self.out / "report.md": render_report(self.results, self.config, self.run).encode(),
                        self.out / "report.html": render_html(self.results, self.config, self.run).encode()})

    def run_claim(self, claim: Claim) -> ClaimResult:
        """Run ``claim`` with its figures held in memory; save its verdict, then its figures, then
        the summary again.  A full disk while writing a figure stops the run with the verdict kept
        (``DiskFullError`` propagates after the summary says so)."""
        with deferred_figures() as figures:
            result = claim.run(self.config)
        self.results.append(result)
        self.run.pending_figures = [str(p) for p in figures.paths]
        self.write()
        try:
            figures.flush()
        except DiskFullError as e:
            self.stop(str(e))
            raise
        self.run.pending_figures = []
        self.write()
        return result

    def stop(self, reason: str) -> None:
        """Mark the run stopped (a full disk) and write the summary if there is room for it."""
        self.run.state, self.run.reason = "stopped", reason
        try:
            self.write()
        except DiskFullError:
            pass  # the previous summary stays, whole: it lists every claim whose verdict was written

    @contextmanager
    def stopping_on_exit(self) -> Iterator[None]:
        """Mark the run ``stopped`` with the reason if the block ends by an exception: a Ctrl-C
        (swallowed: the caller reads ``run.state`` and exits 130), a full disk or anything else
        (marked, then raised).  So the folder ends ``complete`` or ``stopped``, never ``running``,
        unless the process is killed outright."""
        try:
            yield
        except KeyboardInterrupt:
            self.stop("interrupted (Ctrl-C)")
        except BaseException as e:
            if self.run.state != "stopped":
                first = str(e).splitlines()[0][:200] if str(e) else ""
                self.stop(f"{type(e).__name__}" + (f": {first}" if first else ""))
            raise

    def finish(self) -> None:
        self.run.state = "complete"
        self.write()


def _remove_leftovers(out: Path) -> None:
    """Temporary files of the atomic writer left by a killed run in the summary's folder,
    ``figures/`` and ``montecarlo/``: only names the writer makes (``atomic.is_temporary``:
    ``.<name>.<8 random characters>.mmicl-tmp``), only regular files (a link is never followed or
    removed), safe to remove while this run holds the folder.  Nothing else is touched."""
    for folder in (out, out / "figures", out / "montecarlo"):
        if not folder.is_dir() or folder.is_symlink() and folder != out:
            continue
        for p in folder.iterdir():
            if is_temporary(p.name) and stat.S_ISREG(os.lstat(p).st_mode):
                p.unlink(missing_ok=True)
