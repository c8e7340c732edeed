"""The plugin's case type: a covariance Σ (or a dimension d, with Σ = I), a context length n and the
deepest stack L, as text.

``Sigma=diag(1,1,0.25,0.0625,1); n=20; L=4`` or ``d=3; n=10; L=2`` (L defaults to 4); ``Σ`` for
``Sigma``, items in any order.  The tasks are w ~ N(0, Σ⁻¹), as in the paper.  A text that is not
a case is refused with the reason; whether Σ is positive definite is a hypothesis of the claims.
"""
from __future__ import annotations

import numpy as np

import mmicl

__all__ = ["CASE", "parse_case", "case_text"]


def _whole(text: str, key: str, low: int, high: int) -> int:
    text = text.strip()
    if not text.isdigit() or not low <= int(text) <= high:
        raise ValueError(f"{key} is a whole number from {low} to {high}, got {text!r}")
    return int(text)


def parse_case(text: str) -> tuple[np.ndarray, int, int]:
    """``(Σ, n, L)`` from the text (module docstring); ``ValueError`` with the reason."""
    items = mmicl.case_items(text, ["Sigma", "d", "n", "L"], {"Σ": "Sigma"})
    if "n" not in items:
        raise ValueError("n missing")
    if ("Sigma" in items) == ("d" in items):
        raise ValueError("give Sigma=… or d=… (Σ = I), one of them")
    sigma = mmicl.matrix_from_text(items["Sigma"], "Sigma") if "Sigma" in items else np.eye(_whole(items["d"], "d", 1, 10))
    if sigma.shape[0] > 10:
        raise ValueError(f"the dimension is at most 10, got {sigma.shape[0]}")
    return sigma, _whole(items["n"], "n", 1, 10**5), _whole(items.get("L", "4"), "L", 1, 4)


def case_text(case) -> str:
    """The text ``parse_case`` reads back as ``case``, each float written exactly."""
    sigma, n, L = case
    sigma = np.asarray(sigma, float)
    head = f"d={sigma.shape[0]}" if np.array_equal(sigma, np.eye(sigma.shape[0])) else f"Sigma={mmicl.matrix_text(sigma)}"
    return f"{head}; n={int(n)}; L={int(L)}"


def _strategy():
    from hypothesis import strategies as st

    import mmicl.testing as mt

    return st.tuples(mt.positive_definite_matrices(st.integers(1, 4), 1.0, 20.0), st.integers(2, 40), st.integers(1, 3))


CASE = mmicl.CaseType("a covariance Σ (or d, Σ = I), a context length n and the deepest stack L", parse=parse_case,
                      text=case_text, strategy=_strategy, example="Sigma=diag(1,1,0.25,0.0625,1); n=20; L=4")
"""The case type of the claims ``acds.*``."""
