"""Holm's step-down correction for a family of tests: the testbed claims' decisive checks together.

Each decisive check of the nine testbed claims is an exact one-sided sign test at level α
(``sign_tests``).  Read together, nine such tests raise at least one false "decided" with
probability up to 9α.  Holm's procedure keeps that family-wise error rate at α whatever the
dependence between the tests: sort the m p-values, p₍₁₎ ≤ … ≤ p₍ₘ₎, and reject H₍₁₎, …, H₍ₖ₎ for the
largest k with p₍ⱼ₎ ≤ α/(m − j + 1) for every j ≤ k.  Its adjusted p-values are

    p̃₍ᵢ₎ = max_{j ≤ i} min(1, (m − j + 1)·p₍ⱼ₎),

and H₍ᵢ₎ is rejected exactly when p̃₍ᵢ₎ ≤ α (decided in exact arithmetic on the values given).  Holm is the closed testing procedure whose local tests
are Bonferroni's (a set S of hypotheses is rejected when min_{i∈S} p_i ≤ α/|S|), which is how the
tests check it, and it rejects everything Bonferroni (p_i ≤ α/m) rejects.
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Mapping

__all__ = ["HolmResult", "holm"]


@dataclass(frozen=True)
class HolmResult:
    """The adjusted p-values and the rejections of ``holm``, by the names it was given."""

    alpha: float
    adjusted: dict[str, float]
    rejected: dict[str, bool]


def holm(p_values: Mapping[str, float], alpha: float = 0.05) -> HolmResult:
    """Holm's step-down procedure at family-wise level ``alpha`` over ``p_values`` (name → p in
    [0, 1]); ties keep the order of the names given.  A ``ValueError`` for an empty family, an
    ``alpha`` outside (0, 1), or a p-value that is not a number in [0, 1]."""
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not 0 < alpha < 1:
        raise ValueError(f"alpha is a level in (0, 1), got {alpha!r}")
    if not p_values:
        raise ValueError("holm needs at least one p-value")
    for name, p in p_values.items():
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not (0 <= p <= 1):
            raise ValueError(f"p-value {name!r} is a number in [0, 1], got {p!r}")
    names = sorted(p_values, key=lambda n: float(p_values[n]))  # a stable sort: ties keep their order
    m = len(names)
    adjusted, running = {}, 0.0
    for j, name in enumerate(names):
        running = max(running, min(1.0, (m - j) * float(p_values[name])))
        adjusted[name] = running
    # the rejections in exact arithmetic on the values given, so that a p-value at a boundary
    # α/(m − j + 1) is judged as the inequality says, not by the rounding of (m − j + 1)·p
    rejected, stepping = {}, True
    for j, name in enumerate(names):
        stepping = stepping and (m - j) * Fraction(float(p_values[name])) <= Fraction(float(alpha))
        rejected[name] = stepping
    return HolmResult(float(alpha), {n: adjusted[n] for n in p_values}, {n: rejected[n] for n in p_values})
