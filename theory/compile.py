"""Compile SymPy expressions to Python functions, cached on disk as source text.

``compiled(name, build, module)`` returns a Python function ``f(*args) -> tuple`` evaluating the
expressions that ``build()`` derives, for one of three targets:

- ``"numpy"``: numpy functions (arrays in, arrays out);
- ``"mpmath"``: mpmath functions, at the working precision;
- ``"operators"``: Python operators only (``+ − × /`` and integer powers), no module at all, so the
  same function runs on floats, numpy arrays and torch tensors (any device, autograd included).
  An expression that needs anything else (a square root, a function) is refused at build time.
  This is how the torch models use formulas from ``theory/`` without ``theory/`` importing torch.
  The generated source (common subexpressions eliminated) is
written under ``$MMICL_CACHE`` (default ``~/.cache/mmicl``; an empty value means unset) with a key
made of the name, the module, the SymPy version, and a hash of the ``theory/`` sources and of the
source file that defines the builder, so a cache hit skips the derivation and a change to either
invalidates it.  The cache holds plain ``.py`` text, never pickles.

What is read back is checked before it runs: each file starts with a line carrying the SHA-256 of
the rest, and a file whose hash does not match (truncated, garbled, edited, or from an earlier
version without the line) is renamed with a ``.corrupt`` suffix, named in one warning line, and
rebuilt.  The hash detects damage and stale files, not a deliberate edit by someone who can write the
folder (they could rewrite the hash too): against that, a cache folder that others can write is not
used (one warning line; the formulas are then derived in memory).
"""
from __future__ import annotations

import hashlib
import os
import stat
import tempfile
import warnings
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import MpmathPrinter, PythonCodePrinter

__all__ = ["compiled", "cache_dir", "source_of", "MODULES"]

MODULES = ("numpy", "mpmath", "operators")

Builder = Callable[[], tuple[Sequence[sp.Expr], Sequence[sp.Symbol]]]


def cache_dir() -> Path:
    """``$MMICL_CACHE``, or ``~/.cache/mmicl`` where it is unset or empty."""
    return Path(os.environ.get("MMICL_CACHE") or Path.home() / ".cache" / "mmicl")


_HEADER = "# mmicl formula cache, sha256 of the rest: "


def _sealed(src: str) -> str:
    """``src`` with its hash line in front."""
    return _HEADER + hashlib.sha256(src.encode()).hexdigest() + "\n" + src


def _unsealed(text: str) -> str | None:
    """The source behind a valid hash line, else None."""
    head, _, body = text.partition("\n")
    if not head.startswith(_HEADER) or head[len(_HEADER):] != hashlib.sha256(body.encode()).hexdigest():
        return None
    return body


_WARNED: set[str] = set()


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def _usable(folder: Path) -> bool:
    """False (with one warning) where ``folder`` exists and is not a folder, or others than its owner
    can write it."""
    try:
        mode = folder.stat().st_mode
    except OSError:
        return True  # not there yet: it is made with the user's umask
    if not stat.S_ISDIR(mode):
        _warn_once(f"mmicl: the formula cache {folder} is not a folder; running without the cache "
                   "(set MMICL_CACHE to a folder, or leave it unset for ~/.cache/mmicl)")
        return False
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        _warn_once(f"mmicl: the formula cache {folder} is writable by others than its owner; not using it "
                   f"(chmod go-w {folder}, or set MMICL_CACHE to a folder of your own)")
        return False
    return True


def _builder_hash(build: Builder) -> str:
    """A hash of the file that defines ``build`` (its derivation may call helpers beside it)."""
    code = getattr(build, "__code__", None)
    try:
        return hashlib.sha256(Path(code.co_filename).read_bytes()).hexdigest()[:16] if code else "none"
    except OSError:
        return "none"


@lru_cache(maxsize=1)
def _theory_hash() -> str:
    h = hashlib.sha256(sp.__version__.encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _require_operators_only(expr: sp.Expr) -> None:
    """Refuse an expression that Python operators alone cannot evaluate."""
    for node in sp.preorder_traversal(expr):
        if isinstance(node, (sp.Symbol, sp.Add, sp.Mul)) or (isinstance(node, sp.Number) and node.is_finite):
            continue
        if isinstance(node, sp.Pow) and node.exp.is_Integer:
            continue
        raise ValueError(f"the 'operators' target prints only + − × / and integer powers; {expr} needs {node}")


def source_of(fname: str, exprs: Sequence[sp.Expr], args: Sequence[sp.Symbol], module: str) -> str:
    """Python source of ``def fname(*args): return (exprs...)`` for ``module`` (see ``MODULES``)."""
    if module not in MODULES:
        raise ValueError(f"module must be one of {', '.join(MODULES)}, got {module!r}")
    if module == "numpy":
        printer = NumPyPrinter({"fully_qualified_modules": True})
    elif module == "mpmath":
        printer = MpmathPrinter()
    else:
        for e in exprs:
            _require_operators_only(sp.sympify(e))
        printer = PythonCodePrinter()
    subs, reduced = sp.cse(list(exprs), symbols=sp.numbered_symbols("_x"))
    names = [printer.doprint(a) for a in args]
    header = [] if module == "operators" else [f"import {module}", ""]
    lines = [*header, f"def {fname}({', '.join(names)}):"]
    lines += [f"    {printer.doprint(sym)} = {printer.doprint(e)}" for sym, e in subs]
    lines.append(f"    return ({', '.join(printer.doprint(e) for e in reduced)},)")
    return "\n".join(lines) + "\n"


_LOADED: dict[tuple[str, str], Callable] = {}


def compiled(name: str, build: Builder, module: str = "numpy") -> Callable:
    """The compiled function for ``name`` (``[A-Za-z0-9_]``), building it on a cache miss."""
    if module not in MODULES:
        raise ValueError(f"module must be one of {', '.join(MODULES)}, got {module!r}")
    key = (name, module)
    if key in _LOADED:
        return _LOADED[key]
    folder = cache_dir()
    digest = hashlib.sha256(f"{_theory_hash()}:{_builder_hash(build)}".encode()).hexdigest()[:16]
    path = folder / f"{name}__{module}__{digest}.py"
    src = None
    if _usable(folder):
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            text = None
        except (OSError, UnicodeDecodeError):
            text = ""
        if text is not None:
            src = _unsealed(text)
            if src is None:
                _quarantine(path)
    if src is None:
        exprs, args = build()
        src = source_of("f", exprs, args, module)
        if _usable(folder):
            _write_atomic(path, _sealed(src))
    namespace: dict = {}
    exec(compile(src, str(path), "exec"), namespace)
    _LOADED[key] = namespace["f"]
    return namespace["f"]


def _quarantine(path: Path) -> None:
    """Rename a damaged cache file to ``*.corrupt`` (kept for inspection), with one warning line."""
    target = path.with_name(path.name + ".corrupt")
    try:
        os.replace(path, target)
    except OSError:
        target = path
    _warn_once(f"mmicl: the formula cache file {path} failed its hash check (damaged, edited or from an earlier "
               f"version); moved to {target.name}, rebuilding it")


def _write_atomic(path: Path, text: str) -> None:
    """Temporary file + ``os.replace``, as ``numerics.atomic`` does (which ``theory/`` cannot import:
    imports flow numerics → theory); a cache that cannot be written is skipped, not an error."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)  # a read-only home or a full disk: run uncached
