"""The plugin's own kind of case: a covariance Λ and a context length N, as text.

``Lambda=diag(1,2,4); N=5`` or ``Lambda=[[2,1],[1,3]]; N=3`` (``Λ`` for ``Lambda`` too; items in
any order, spaces anywhere).  ``CASE`` is the ``mmicl.CaseType`` the three claims declare, so

    mmicl verify --plugin mmicl_zfb.claims --claim 'zfb.*' --case 'Lambda=diag(1,3); N=2'

runs them on that case, and ``mmicl.testing.check_claim("zfb.minimiser", case=(Lam, N))`` on a case
object (``(Λ as a numpy array, N)``).  The text is read as it stands: a matrix that is not square,
not finite or not numbers, or an N that is not a whole number, is refused with the reason; whether
Λ is symmetric positive definite is a hypothesis of each claim, decided from the case.
"""
from __future__ import annotations

import json
import re

import numpy as np

import mmicl

__all__ = ["CASE", "parse_case", "case_text"]

_DIAG = re.compile(r"^diag\((.*)\)$", re.S)


def _matrix(text: str) -> np.ndarray:
    text = text.strip()
    m = _DIAG.match(text)
    try:
        if m:
            values = [float(v) for v in m.group(1).split(",")]
            lam = np.diag(values)
        else:
            rows = json.loads(text)
            if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
                raise ValueError("a matrix is diag(a,b,...) or a list of rows [[a,b],[c,d]]")
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for r in rows for v in r):
                raise ValueError("every entry of the matrix is a number")
            if len({len(r) for r in rows}) != 1:
                raise ValueError("every row of the matrix has the same length")
            lam = np.array(rows, dtype=float)
    except json.JSONDecodeError:
        raise ValueError(f"Lambda={text!r}: not diag(a,b,...) nor a list of rows [[a,b],[c,d]]") from None
    if lam.ndim != 2 or lam.shape[0] != lam.shape[1]:
        raise ValueError(f"Lambda is square, got shape {lam.shape}")
    if not np.all(np.isfinite(lam)):
        raise ValueError("every entry of Lambda is a finite number")
    return lam


def parse_case(text: str) -> tuple[np.ndarray, int]:
    """``(Λ, N)`` from ``"Lambda=...; N=..."`` (module docstring); ``ValueError`` with the reason."""
    items = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep:
            raise ValueError(f"{part.strip()!r} is not KEY=VALUE")
        key = "Lambda" if key == "Λ" else key
        if key not in ("Lambda", "N"):
            raise ValueError(f"unknown key {key!r}: the keys are Lambda (or Λ) and N")
        if key in items:
            raise ValueError(f"{key} is given twice")
        items[key] = value
    missing = [k for k in ("Lambda", "N") if k not in items]
    if missing:
        raise ValueError(f"{' and '.join(missing)} missing")
    n = items["N"].strip()
    if not n.isdigit() or int(n) < 1:
        raise ValueError(f"N is a whole number ≥ 1, got {n!r}")
    return _matrix(items["Lambda"]), int(n)


def case_text(case) -> str:
    """The text ``parse_case`` reads back as ``case`` (``(Λ, N)``), each float written exactly."""
    lam, n = case
    lam = np.asarray(lam, dtype=float)
    if lam.ndim == 2 and np.array_equal(lam, np.diag(np.diag(lam))):
        matrix = "diag(" + ",".join(repr(float(v)) for v in np.diag(lam)) + ")"
    else:
        matrix = json.dumps(lam.tolist())
    return f"Lambda={matrix}; N={int(n)}"


def _strategy():
    from hypothesis import strategies as st

    import mmicl.testing as mt

    return st.tuples(mt.positive_definite_matrices(st.integers(1, 3), 1.0, 100.0), st.integers(1, 50))


CASE = mmicl.CaseType("a covariance Λ and a context length N", parse=parse_case, text=case_text,
                      strategy=_strategy, example="Lambda=diag(1,2,4); N=5")
"""The case type of the claims ``zfb.*``."""
