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

import numpy as np

import mmicl

__all__ = ["CASE", "parse_case", "case_text"]

def parse_case(text: str) -> tuple[np.ndarray, int]:
    """``(Λ, N)`` from ``"Lambda=...; N=..."`` (module docstring); ``ValueError`` with the reason."""
    items = mmicl.case_items(text, ["Lambda", "N"], {"Λ": "Lambda"})
    missing = [k for k in ("Lambda", "N") if k not in items]
    if missing:
        raise ValueError(f"{' and '.join(missing)} missing")
    n = items["N"].strip()
    if not n.isdigit() or int(n) < 1:
        raise ValueError(f"N is a whole number ≥ 1, got {n!r}")
    return mmicl.matrix_from_text(items["Lambda"], "Lambda"), int(n)


def case_text(case) -> str:
    """The text ``parse_case`` reads back as ``case`` (``(Λ, N)``), each float written exactly."""
    lam, n = case
    return f"Lambda={mmicl.matrix_text(lam)}; N={int(n)}"


def _strategy():
    from hypothesis import strategies as st

    import mmicl.testing as mt

    return st.tuples(mt.positive_definite_matrices(st.integers(1, 3), 1.0, 100.0), st.integers(1, 50))


CASE = mmicl.CaseType("a covariance Λ and a context length N", parse=parse_case, text=case_text,
                      strategy=_strategy, example="Lambda=diag(1,2,4); N=5")
"""The case type of the claims ``zfb.*``."""
