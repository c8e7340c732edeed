"""The plugin's case type: the proportional-limit parameters α = ℓ/d, κ = k/d, τ = n/d², the label
noise ρ and the ridge λ, as text.

``alpha=10; kappa=0.5; tau=2; rho=0.01; lambda=1e-6`` (items in any order; ``kappa=inf`` for a new
task in every pretraining sequence; ``α``, ``κ``, ``τ``, ``ρ``, ``λ`` as aliases).  A text that is not
a case is refused with the reason.
"""
from __future__ import annotations

import math

import mmicl

__all__ = ["CASE", "parse_case", "case_text", "KEYS"]

KEYS = ("alpha", "kappa", "tau", "rho", "lambda")
_LIMITS = {"alpha": (1e-3, 1e4), "kappa": (1e-3, math.inf), "tau": (1e-3, 1e4), "rho": (0.0, 1e2), "lambda": (0.0, 1e3)}


def parse_case(text: str) -> tuple[float, float, float, float, float]:
    """``(α, κ, τ, ρ, λ)`` from the text (module docstring); ``ValueError`` with the reason."""
    items = mmicl.case_items(text, KEYS, {"α": "alpha", "κ": "kappa", "τ": "tau", "ρ": "rho", "λ": "lambda"})
    missing = [k for k in KEYS if k not in items]
    if missing:
        raise ValueError(f"{', '.join(missing)} missing (give all of {', '.join(KEYS)})")
    out = []
    for key in KEYS:
        raw = items[key].strip()
        try:
            value = math.inf if key == "kappa" and raw in ("inf", "∞") else float(raw)
        except ValueError:
            raise ValueError(f"{key} is a number, got {raw!r}") from None
        low, high = _LIMITS[key]
        if not (low <= value <= high) or math.isnan(value) or (math.isinf(value) and key != "kappa"):
            raise ValueError(f"{key} is a number from {low:g} to {high:g}, got {raw!r}")
        out.append(value)
    return tuple(out)


def case_text(case) -> str:
    """The text ``parse_case`` reads back as ``case``, each float written exactly."""
    return "; ".join(f"{k}={'inf' if math.isinf(v) else repr(float(v))}" for k, v in zip(KEYS, case))


def _strategy():
    from hypothesis import strategies as st

    return st.tuples(st.sampled_from([2.0, 5.0, 10.0]), st.sampled_from([0.5, 2.0, math.inf]),
                     st.sampled_from([0.5, 2.0, 4.0]), st.sampled_from([0.01, 0.1]), st.sampled_from([1e-6, 0.1]))


CASE = mmicl.CaseType("the limit's ratios α, κ, τ, the noise ρ and the ridge λ", parse=parse_case, text=case_text,
                      strategy=_strategy, example="alpha=10; kappa=0.5; tau=2; rho=0.01; lambda=1e-6")
"""The case type of the claims ``llzmp.*``."""
