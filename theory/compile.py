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
from sympy.printing.pycode import MpmathPrinter, PythonCodePrinter

__all__ = ["compiled", "cache_dir", "source_of", "MODULES"]

MODULES = ("numpy", "mpmath", "operators")

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
    """Temporary file + ``os.replace``, as ``numerics.atomic`` does (which ``theory/`` cannot import:
    imports flow numerics → theory); a cache that cannot be written is skipped, not an error."""
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)  # a read-only home or a full disk: run uncached
