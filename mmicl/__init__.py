"""mmicl: a symbolic–numeric verifier for multi-modal in-context learning.

The public API, for notebooks and scripts (the ``mmicl`` command line is a client of it)::

    import mmicl
    law = mmicl.parse_law("s=uniform(0.5,4)")      # or build one: mmicl.TaskLaw(s=mmicl.Uniform(0.5, 4))
    mmicl.alpha_star(law)                           # 2/(2 + s_lo + s_hi)
    mmicl.alpha_T("s=uniform(0.5,4)", 10)           # every function that takes a law takes LAW text too
    mmicl.excess_risk(law, 1000).log10              # a ScaledValue: never overflows
    flow = mmicl.flow_one(law, 10, alpha0=0.0)      # flow.time, flow.alphas: 1-D trajectory
    mmicl.minimise_two(law, 20)                     # (α_T, β_T)
    mmicl.best_lsa(law).gap                         # Theorem 4.1's gap
    [r.verdict for r in mmicl.verify("thm6.2")]     # run claims, read verdicts

    @mmicl.claim("mine.alpha_third", title="α* = 1/3", statement="for s=uniform(1,3), α* = 1/3")
    def evaluate(config):                           # your own claim: hypotheses and checks
        a = mmicl.alpha_star("s=uniform(1,3)")
        return [], [mmicl.Check("α* = 1/3", "closed form", abs(a - 1/3) < 1e-15, {"alpha_star": a})]

Names are imported on first use, so ``import mmicl`` is cheap and changes no global state
(no matplotlib backend, no torch threads).
"""
from __future__ import annotations

from importlib import import_module

from mmicl.numerics.provenance import __version__

# public name -> (module, attribute); attribute None: the module itself
_API: dict[str, tuple[str, str | None]] = {
    # task laws
    "TaskLaw": ("mmicl.numerics.laws.task", "TaskLaw"),
    "ZetaLaw": ("mmicl.numerics.laws.task", "ZetaLaw"),
    "Point": ("mmicl.numerics.laws.scalar", "Point"),
    "Uniform": ("mmicl.numerics.laws.scalar", "Uniform"),
    "Beta": ("mmicl.numerics.laws.scalar", "Beta"),
    "TwoPoint": ("mmicl.numerics.laws.scalar", "TwoPoint"),
    "Discrete": ("mmicl.numerics.laws.scalar", "Discrete"),
    "Mixture": ("mmicl.numerics.laws.scalar", "Mixture"),
    "Exponential": ("mmicl.numerics.laws.scalar", "Exponential"),
    "LawError": ("mmicl.numerics.laws.scalar", "LawError"),
    "parse_law": ("mmicl.numerics.laws.language", "parse_law"),
    "as_law": ("mmicl.numerics.laws.language", "as_law"),
    "GRAMMAR": ("mmicl.numerics.laws.language", "GRAMMAR"),
    # the LCA theory
    "alpha_star": ("mmicl.numerics.lca", "alpha_star"),
    "alpha_T": ("mmicl.numerics.lca", "alpha_T"),
    "alpha_T_mp": ("mmicl.numerics.lca", "alpha_T_mp"),
    "excess_risk": ("mmicl.numerics.lca", "excess_risk_scaled"),
    "ScaledValue": ("mmicl.numerics.lca", "ScaledValue"),
    "bayes_risk": ("mmicl.numerics.lca", "bayes_risk"),
    "population_loss": ("mmicl.numerics.lca", "population_loss"),
    "TwoParameterLoss": ("mmicl.numerics.lca", "TwoParameterLoss"),
    "minimise_two": ("mmicl.numerics.lca", "minimise_two"),
    "flow_one": ("mmicl.numerics.flows", "gradient_flow_one"),
    "flow_two": ("mmicl.numerics.flows", "gradient_flow_two"),
    "FlowResult": ("mmicl.numerics.flows", "FlowResult"),
    # values below a function's resolution (one convention: variant_excess, variant_minimum's excess)
    "BelowResolution": ("mmicl.numerics.resolution", "BelowResolution"),
    "is_below_resolution": ("mmicl.numerics.resolution", "is_below_resolution"),
    # LCA variants (readout, F⁰, skip, parametrisation)
    "Variant": ("mmicl.numerics.variants", "Variant"),
    "parse_variant": ("mmicl.numerics.variants", "parse_variant"),
    "variant_excess": ("mmicl.numerics.variants", "excess_at"),
    "variant_minimum": ("mmicl.numerics.variants", "minimise"),
    "variant_floor": ("mmicl.numerics.variants", "floor"),
    "variant_flow": ("mmicl.numerics.variants", "gradient_flow"),
    "VariantLCA": ("mmicl.numerics.variant_models", "VariantLCA"),
    # depth T → ∞
    "alpha_expansion": ("mmicl.numerics.asymptotics", "alpha_expansion"),
    "excess_expansion": ("mmicl.numerics.asymptotics", "excess_expansion"),
    "alpha_T_unbounded": ("mmicl.numerics.unbounded", "alpha_T_unbounded"),
    # the untied LCA (an extension beyond the paper)
    "optimal_schedule": ("mmicl.numerics.untied", "optimal_schedule"),
    "untied_excess": ("mmicl.numerics.untied", "untied_excess"),
    # certificates
    "certify_alpha_T": ("mmicl.proofs.certificates.alpha", "certify_alpha_T"),
    "certify_gap": ("mmicl.proofs.certificates.gap", "certify_gap"),
    "certify_all_depths": ("mmicl.proofs.certificates.all_depths", "certify_all_depths"),
    # single-layer LSA (Theorem 4.1)
    "best_lsa": ("mmicl.numerics.lsa", "best_lsa"),
    "BestLSA": ("mmicl.numerics.lsa", "BestLSA"),
    # the theorem registry, and the claim API for your own theorems
    "verify": ("mmicl.proofs.verify", "verify"),
    "claims": ("mmicl.proofs.verify", "claims"),
    "ClaimResult": ("mmicl.proofs.claim", "ClaimResult"),
    "VERDICTS": ("mmicl.proofs.claim", "VERDICTS"),
    "Claim": ("mmicl.proofs.claim", "Claim"),
    "Check": ("mmicl.proofs.claim", "Check"),
    "Summary": ("mmicl.proofs.claim", "Summary"),
    "Hypothesis": ("mmicl.proofs.claim", "Hypothesis"),
    "RunConfig": ("mmicl.proofs.claim", "RunConfig"),
    "claim": ("mmicl.proofs.registry", "claim"),
    "register": ("mmicl.proofs.registry", "register"),
    "decide": ("mmicl.proofs.claim", "decide"),
    "ClaimError": ("mmicl.proofs.claim", "ClaimError"),
    "CaseType": ("mmicl.proofs.cases", "CaseType"),
    "CaseError": ("mmicl.proofs.cases", "CaseError"),
    "case_items": ("mmicl.proofs.cases", "case_items"),
    "matrix_from_text": ("mmicl.proofs.cases", "matrix_from_text"),
    "matrix_text": ("mmicl.proofs.cases", "matrix_text"),
    "z_check": ("mmicl.proofs.z_check", "z_check"),
    "rejection_power": ("mmicl.proofs.z_check", "rejection_power"),
    "PluginError": ("mmicl.proofs.plugins", "PluginError"),
    # the one root of mmicl's exceptions, and of every caller mistake
    "MmiclError": ("mmicl.theory.errors", "MmiclError"),
    "InputError": ("mmicl.theory.errors", "InputError"),
    "hypotheses": ("mmicl.hypotheses", None),  # the module of shared hypothesis builders
    "Estimate": ("mmicl.numerics.estimate", "Estimate"),
    "torch_threads": ("mmicl.numerics.threads", "torch_threads"),
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    if name in _API:
        module, attr = _API[name]
        value = import_module(module) if attr is None else getattr(import_module(module), attr)
        globals()[name] = value  # later look-ups skip this function
        return value
    raise AttributeError(f"module 'mmicl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
