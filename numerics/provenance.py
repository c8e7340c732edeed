"""The one stamp every record mmicl writes carries: which mmicl made it, on what software, where
and when.

- ``__version__``: mmicl's version (what ``mmicl --version`` prints and the build reads);
- ``software()``: the platform (system and machine), the versions of mmicl, Python, numpy, scipy,
  sympy and torch, and the git commit
  of mmicl's own checkout where it runs from one (``None`` with its reason otherwise): what a later
  comparison of two runs needs to know;
- ``host()``: the machine and the process (``{"host", "pid"}``);
- ``utc_now()``: the time, as ISO 8601 text in UTC, to the second.

Only the standard library is imported here (``import mmicl`` reads ``__version__`` from this module).
"""
from __future__ import annotations

import os
import socket
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["__version__", "software", "git_commit", "host", "utc_now"]

__version__ = "0.2.0"
"""mmicl's version, as ``mmicl.__version__`` and ``mmicl --version`` give it."""


def software() -> dict:
    """The versions of mmicl, Python, numpy, scipy, sympy and torch, and the git commit of mmicl's
    checkout where it runs from one; each ``None`` entry has its reason under ``<key>_null_reason``
    ("not installed", "mmicl is not run from a git checkout")."""
    import platform
    from importlib import metadata

    def version(dist: str) -> str | None:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return None

    out = {"mmicl": __version__, "git_commit": git_commit(), "platform": f"{platform.system()} {platform.machine()}",
           "python": platform.python_version(),
           **{name: version(name) for name in ("numpy", "scipy", "sympy", "torch")}}
    for k, v in list(out.items()):
        if v is None:
            out[f"{k}_null_reason"] = ("mmicl is not run from a git checkout" if k == "git_commit"
                                       else "not installed")
    return out


def git_commit() -> str | None:
    """The commit (and ``+dirty`` with uncommitted changes) of the checkout mmicl is imported from;
    None where it is not imported from one, or git is not there."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def host() -> dict:
    """The machine and the process a record was made on: ``{"host": name, "pid": process id}``."""
    return {"host": socket.gethostname(), "pid": os.getpid()}


def utc_now() -> str:
    """Now, in UTC, as ISO 8601 text to the second (``2026-12-02T11:31:30+00:00``)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
