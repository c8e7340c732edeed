"""The plugin's case type: a covariance Σ (or a dimension d, with Σ = I), a context length n, a
target function g and the label noise's standard deviation, as text.

``d=3; n=6; target=sign(z)`` or ``Sigma=diag(1,3); n=5; noise=0.5`` (the target defaults to ``z``,
linear regression, and the noise to 0) or ``Sigma=[[2,1],[1,3]]; n=4; target=2*z``; ``Σ`` for
``Sigma``, items in any order.
The target is an expression in ``z`` (``Abs`` and ``sign`` allowed).  A text that is not a case is
refused with the reason; whether Σ is positive definite, g odd, and Σ = I for a non-linear g are
hypotheses of the claims, decided from the case.
"""
from __future__ import annotations

import numpy as np

import mmicl

from .theory import TargetError, parse_target

__all__ = ["CASE", "parse_case", "case_text", "TARGETS"]

TARGETS = ("z", "2*z", "z**3", "z*Abs(z)", "sign(z)", "z**3 + z", "z*Abs(z) - z")
"""Odd targets the drawn cases use (each one's moments derive in closed form)."""

def _whole(text: str, key: str, low: int, high: int) -> int:
    text = text.strip()
    if not text.isdigit() or not low <= int(text) <= high:
        raise ValueError(f"{key} is a whole number from {low} to {high}, got {text!r}")
    return int(text)


def parse_case(text: str) -> tuple[np.ndarray, int, str, float]:
    """``(Σ, n, target, noise)`` from the text (module docstring); ``ValueError`` with the reason."""
    items = mmicl.case_items(text, ["Sigma", "d", "n", "target", "noise"], {"Σ": "Sigma"})
    if "n" not in items:
        raise ValueError("n missing")
    if ("Sigma" in items) == ("d" in items):
        raise ValueError("give Sigma=… or d=… (Σ = I), one of them")
    sigma = mmicl.matrix_from_text(items["Sigma"], "Sigma") if "Sigma" in items else np.eye(_whole(items["d"], "d", 1, 6))
    if sigma.shape[0] > 6:
        raise ValueError(f"the dimension is at most 6 (the moments are integrated symbolically), got {sigma.shape[0]}")
    target = items.get("target", "z").strip()
    try:
        parse_target(target)
    except TargetError as e:
        raise ValueError(str(e)) from None
    try:
        noise = float(items.get("noise", "0"))
    except ValueError:
        raise ValueError(f"noise is a number ≥ 0 (the standard deviation of the label noise), got {items['noise']!r}") from None
    if not (np.isfinite(noise) and 0 <= noise <= 1e3):
        raise ValueError(f"noise is a number from 0 to 1000 (the label noise's standard deviation), got {noise!r}")
    return sigma, _whole(items["n"], "n", 1, 10**6), target, noise


def case_text(case) -> str:
    """The text ``parse_case`` reads back as ``case``, each float written exactly."""
    sigma, n, target, noise = case
    sigma = np.asarray(sigma, float)
    head = f"d={sigma.shape[0]}" if np.array_equal(sigma, np.eye(sigma.shape[0])) else f"Sigma={mmicl.matrix_text(sigma)}"
    return f"{head}; n={int(n)}; target={target}" + (f"; noise={float(noise)!r}" if noise else "")


def _strategy():
    from hypothesis import strategies as st

    import mmicl.testing as mt

    noise = st.sampled_from([0.0, 0.0, 0.25, 1.0])
    isotropic = st.tuples(st.integers(1, 3).map(np.eye), st.integers(2, 30), st.sampled_from(TARGETS), noise)
    linear = st.tuples(mt.positive_definite_matrices(st.integers(1, 3), 1.0, 20.0), st.integers(2, 30), st.just("z"), noise)
    return st.one_of(isotropic, linear)


CASE = mmicl.CaseType("a covariance Σ (or d, Σ = I), a context length n, an odd target g and label noise",
                      parse=parse_case,
                      text=case_text, strategy=_strategy, example="d=3; n=6; target=sign(z)")
"""The case type of the claims ``mhm.*``."""
