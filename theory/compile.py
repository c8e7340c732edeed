"""Compile SymPy expressions to numpy or mpmath functions, cached on disk as source text.

``compiled(name, build, module)`` returns a Python function ``f(*args) -> tuple`` evaluating the
expressions that ``build()`` derives.  The generated source (common subexpressions eliminated) is
written under ``$MMICL_CACHE`` (default ``~/.cache/mmicl``) with a key made of the name, the module,
the SymPy version and a hash of the ``theory/`` sources, so a cache hit skips the derivation and a
change to the theory invalidates it.  The cache holds plain ``.py`` text, never pickles; delete the
folder to force a rebuild.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Callable, Sequence

import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import MpmathPrinter

__all__ = ["compiled", "cache_dir", "source_of"]

Builder = Callable[[], tuple[Sequence[sp.Expr], Sequence[sp.Symbol]]]


def cache_dir() -> Path:
    return Path(os.environ.get("MMICL_CACHE", Path.home() / ".cache" / "mmicl"))


@lru_cache(maxsize=1)
def _theory_hash() -> str:
    h = hashlib.sha256(sp.__version__.encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def source_of(fname: str, exprs: Sequence[sp.Expr], args: Sequence[sp.Symbol], module: str) -> str:
    """Python source of ``def fname(*args): return (exprs...)`` for ``module`` numpy or mpmath."""
    printer = NumPyPrinter({"fully_qualified_modules": True}) if module == "numpy" else MpmathPrinter()
    subs, reduced = sp.cse(list(exprs), symbols=sp.numbered_symbols("_x"))
    names = [printer.doprint(a) for a in args]
    lines = [f"import {module}", "", f"def {fname}({', '.join(names)}):"]
    lines += [f"    {printer.doprint(sym)} = {printer.doprint(e)}" for sym, e in subs]
    lines.append(f"    return ({', '.join(printer.doprint(e) for e in reduced)},)")
    return "\n".join(lines) + "\n"


_LOADED: dict[tuple[str, str], Callable] = {}


def compiled(name: str, build: Builder, module: str = "numpy") -> Callable:
    """The compiled function for ``name`` (``[A-Za-z0-9_]``), building it on a cache miss."""
    if module not in ("numpy", "mpmath"):
        raise ValueError(f"module must be 'numpy' or 'mpmath', got {module!r}")
    key = (name, module)
    if key in _LOADED:
        return _LOADED[key]
    path = cache_dir() / f"{name}__{module}__{_theory_hash()}.py"
    try:
        src = path.read_text()
    except OSError:
        exprs, args = build()
        src = source_of("f", exprs, args, module)
        _write_atomic(path, src)
    namespace: dict = {}
    exec(compile(src, str(path), "exec"), namespace)
    _LOADED[key] = namespace["f"]
    return namespace["f"]


def _write_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home: run uncached
