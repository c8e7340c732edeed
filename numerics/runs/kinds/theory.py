"""The ``theory`` kind: settings ``law`` (LAW text) and ``T``; result: α*, α_T and the excess risk
at α_T (``numerics.lca``)."""
from __future__ import annotations

from . import Kind
from mmicl.numerics.validate import check_depth

__all__ = ["KIND"]


def _theory_normalise(config: dict) -> dict:
    from mmicl.numerics.laws.language import parse_law

    if "law" not in config or "T" not in config:
        raise ValueError("a theory run needs law (LAW text) and T (a depth ≥ 1)")
    parse_law(str(config["law"]))
    return {"law": str(config["law"]), "T": check_depth(config["T"])}


def _theory_compute(config: dict) -> dict:
    from mmicl.numerics.lca import alpha_star, alpha_T, excess_risk_scaled
    from mmicl.numerics.laws.language import parse_law

    law = parse_law(config["law"])
    a = alpha_T(law, config["T"])
    ex = excess_risk_scaled(law, config["T"], a)
    return {"alpha_star": alpha_star(law), "alpha_T": a, "excess_log10": ex.log10,
            "excess": ex.value if ex.value is not None else None}


KIND = Kind(frozenset({"law", "T"}), _theory_normalise, _theory_compute)
