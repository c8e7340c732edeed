"""Hypotheses shared by the claims, each computed from the task law (never assumed); public as
``mmicl.hypotheses``.

Every builder takes a ``TaskLaw`` or LAW text and returns a ``Hypothesis`` whose ``met`` is decided
from the law's own numbers, with the numbers that decided it in ``detail``:

- ``bounded_s(law)``: s = ‖m‖² is bounded, s_hi < ∞;
- ``has_signal(law)``: s is not almost surely 0;
- ``label_scale(law)``: 0 < E[ζ²] < ∞ (ζ is independent of m by construction);
- ``at_least_values(law, k, why)``: s takes at least k distinct values where m ≠ 0
  (``signal_values(law, cap)`` counts them, a continuous piece counting as ``cap``).

For claims with their own kind of case (a matrix, a context length), three builders take the
case's numbers instead of a law: ``positive_definite(matrix, name)``, ``spectrum_within(matrix, lo,
hi, name)`` and ``integer_in(value, lo, hi, name)``.

``float64_resolution_check(label, law, T)`` is not a hypothesis but the check a claim adds where
float64 cannot resolve the law at depth T (the claim is then ``inconclusive``, never ``fails``).
"""
from __future__ import annotations

import math

import numpy as np

from mmicl.numerics.laws.language import takes_law
from mmicl.numerics.laws.task import TaskLaw
from mmicl.proofs.claim import Hypothesis
from mmicl.proofs.claim import Check

__all__ = ["bounded_s", "has_signal", "label_scale", "at_least_values", "signal_values", "float64_resolution_check",
           "positive_definite", "spectrum_within", "integer_in"]


@takes_law
def signal_values(law: TaskLaw, cap: int = 3) -> int:
    """How many distinct values s = ‖m‖² takes over prompts with m ≠ 0, counted up to ``cap``
    (``cap`` means '``cap`` or more').  A continuous piece counts as ``cap``."""
    if not law.s_law().is_bounded:
        return cap  # a continuous unbounded law: the boundedness hypothesis speaks for it
    nodes = law.s_law().rule(1).nodes
    return min(len(np.unique(nodes[nodes > 0])), cap)


@takes_law
def bounded_s(law: TaskLaw) -> Hypothesis:
    """"s = ‖m‖² is bounded": met where the support of s ends at a finite s_hi (not an exponential
    piece); the detail gives the support [s_lo, s_hi] and the law."""
    lo, hi = law.s_bounds()
    return Hypothesis("s = ‖m‖² is bounded (s_hi < ∞)", math.isfinite(hi), f"s ∈ [{lo:g}, {hi:g}] for {law.spec()}")


@takes_law
def has_signal(law: TaskLaw) -> Hypothesis:
    """"s is not a.s. 0": met where some prompts have m ≠ 0, so the tokens carry signal; the
    detail gives the range of s over those prompts (an atom at s = 0 is left out of it)."""
    sig = law.signal_bounds()
    return Hypothesis("s is not a.s. 0 (the tokens carry signal)", sig is not None,
                      f"over prompts with m ≠ 0, s ∈ [{sig[0]:g}, {sig[1]:g}]" if sig else "s ≡ 0")


@takes_law
def label_scale(law: TaskLaw) -> Hypothesis:
    """ζ is drawn from its own law, independently of m, by construction of ``TaskLaw``; what can
    fail is its second moment."""
    ez2 = law.zeta.second_moment()
    return Hypothesis("ζ is independent of m (by construction of the task law) with 0 < E[ζ²] < ∞",
                      bool(math.isfinite(ez2) and ez2 > 0), f"ζ ~ {law.zeta.spec()}, E[ζ²] = {ez2:g}")


@takes_law
def at_least_values(law: TaskLaw, k: int, why: str) -> Hypothesis:
    """"s takes at least ``k`` values where m ≠ 0 (``why``)": met where the law of s over prompts
    with m ≠ 0 has ``k`` or more distinct values (``signal_values``; a continuous piece counts as
    any number), which a statement needs when it is about a spread of s (``why`` says which)."""
    n = signal_values(law, cap=k)
    return Hypothesis(f"s takes at least {k} values where m ≠ 0 ({why})", n >= k,
                      f"{n if n < k else f'≥ {k}'} distinct value(s) of s over prompts with m ≠ 0")


@takes_law
def float64_resolution_check(label: str, law: TaskLaw, T: int = 1, sampled: bool = False):
    """``None`` where float64 resolves ``law`` at depth ``T`` (``TaskLaw.float64_unresolved``),
    else an undecided ``Check`` with the reason: the law's hypotheses are met, so the claim is
    ``inconclusive`` there (never ``fails`` from rounding), and the checks it stands for are not run."""

    why = law.float64_unresolved(T, sampled)
    if why is None:
        return None
    return Check(f"{label} float64 resolves the law at depth T = {T}" + (" (sampled loss)" if sampled else ""),
                 "float64 resolution", None, {"rho": law.spread(), "T": T, "sampled": sampled},
                 "TaskLaw.float64_unresolved: T·eps/ρ (T·eps/ρ^T for the sampled loss) ≤ 2^-10",
                 why + "; the checks that need it are not run")


# ---------------------------------------------------------------------------------------------
# Cases beyond laws: matrices, spectra, whole numbers
# ---------------------------------------------------------------------------------------------


def _matrix(matrix, name: str) -> np.ndarray:
    m = np.asarray(matrix, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or m.size == 0:
        raise ValueError(f"{name} is a square matrix, got shape {m.shape}")
    return m


def positive_definite(matrix, name: str = "Λ") -> Hypothesis:
    """"``name`` is symmetric positive definite": met where the matrix equals its transpose exactly
    and its least eigenvalue (of the symmetric part, ``numpy.linalg.eigvalsh``) is > 0; the detail
    gives max |M − Mᵀ| and the eigenvalues.  Asymmetry is judged exactly: a matrix built
    symmetric (``(M + Mᵀ)/2``) is, and a rounding-level asymmetry is a hint that it was not."""
    m = _matrix(matrix, name)
    asym = float(np.max(np.abs(m - m.T)))
    ev = np.linalg.eigvalsh((m + m.T) / 2)
    met = bool(np.all(np.isfinite(m)) and asym == 0.0 and ev[0] > 0)
    return Hypothesis(f"{name} is symmetric positive definite", met,
                      f"max |{name} − {name}ᵀ| = {asym:g}; eigenvalues {np.array2string(ev, precision=6)}")


def spectrum_within(matrix, lo: float, hi: float, name: str = "Λ") -> Hypothesis:
    """"The eigenvalues of ``name`` lie in [``lo``, ``hi``]": met where every eigenvalue of the
    symmetric part does (a condition number or a scale that a statement assumes); the detail gives
    the least and the largest."""
    m = _matrix(matrix, name)
    ev = np.linalg.eigvalsh((m + m.T) / 2)
    met = bool(np.all(np.isfinite(ev)) and lo <= ev[0] and ev[-1] <= hi)
    return Hypothesis(f"the eigenvalues of {name} lie in [{lo:g}, {hi:g}]", met,
                      f"least {ev[0]:.6g}, largest {ev[-1]:.6g}")


def integer_in(value, lo: int, hi: int | None = None, name: str = "N") -> Hypothesis:
    """"``name`` is a whole number in [``lo``, ``hi``]" (``hi`` None: ≥ ``lo``): met where ``value``
    is an integer (a Python or numpy integer, not a bool and not a float such as 5.0) in range."""
    whole = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    met = bool(whole and lo <= value and (hi is None or value <= hi))
    where = f"≥ {lo}" if hi is None else f"in [{lo}, {hi}]"
    return Hypothesis(f"{name} is a whole number {where}", met, f"{name} = {value!r}")
