"""The built-in claims as data: id, title, statement, the module and function that evaluate each,
whether a plain ``mmicl verify`` runs it, and the variants it is stated for.

Listing claims reads this table and imports nothing else: a claim's module (and torch, SciPy,
SymPy under it) is imported when the claim first runs (``claim.ModuleFunction``).  This is the one
place the built-in claims are named; ``proofs.claims`` registers them from it."""
from __future__ import annotations

from dataclasses import dataclass

from mmicl.proofs.claim import Claim, ModuleFunction

__all__ = ["BuiltinClaim", "CATALOG"]

_HERE = "mmicl.proofs.claims"


@dataclass(frozen=True)
class BuiltinClaim:
    """One built-in claim: what ``Claim`` needs, with ``evaluate`` named by ``module`` (under
    ``mmicl.proofs.claims``) and ``function``."""

    id: str
    title: str
    statement: str
    module: str
    function: str
    default: bool = True
    variants: tuple[str, ...] = ()

    def claim(self) -> Claim:
        """The ``Claim``, its ``evaluate`` imported at its first call."""
        return Claim(self.id, self.title, self.statement, ModuleFunction(f"{_HERE}.{self.module}", self.function),
                     default=self.default, variants=self.variants)


def _testbed(number: int, title: str, statement: str) -> BuiltinClaim:
    return BuiltinClaim(f"testbed.claim{number}", title, statement, "testbed", f"evaluate_claim{number}",
                        default=False)


CATALOG: tuple[BuiltinClaim, ...] = (
    BuiltinClaim(
        "thm6.2", "one-parameter LCA: gradient flow → α_T → α*, Bayes-optimal as T → ∞",
        "For W^S = −W^V = αI, gradient flow on the large-context population loss converges to a unique α_T; as "
        "T → ∞, α_T → α* = 2/(2 + s_lo + s_hi) and the predictor tends to the Bayes predictor ζ Λ⁻¹ m · x_q.",
        "lca", "evaluate_thm62"),
    BuiltinClaim(
        "thm6.3", "two-parameter LCA: under conditions on the start, flow → (α_T, β_T) with β_T → −α_T, α_T → α*",
        "For W^S = αI, W^V = βI, under conditions on the initialisation gradient flow on the large-context "
        "population loss converges; as T → ∞, β_T → −α_T, α_T → α* and the predictor is Bayes-optimal.",
        "lca", "evaluate_thm63"),
    _testbed(1, "ICL needs data complexity (K, burstiness, ε; Zipf trades ICL for IWL)",
             "More classes K, burstiness and within-class variation ε push a small transformer toward ICL; a "
             "Zipfian class law trades ICL against IWL."),
    _testbed(2, "Scaling layers or heads favours IWL over ICL (unimodal)",
             "At fixed data complexity, more layers or heads shift the trained model from ICL toward IWL."),
    _testbed(3, "RoPE raises the ICL threshold and weakens prev-token/induction patterns",
             "Compared with absolute (one-hot, shifted) positions, RoPE needs more classes K for ICL and shows "
             "weaker previous-token and induction attention."),
    _testbed(8, "Induction-head strength tracks ICL; ablating the induction heads reduces the model to copying",
             "Along training the induction score rises with ICL accuracy; taking the match out of the induction "
             "heads (their query attention spread evenly over the context's labels) brings ICL to the copy "
             "baseline, not below it, and lower than the same heads patched onto the answer's labels."),
    _testbed(4, "After diverse M1 pretraining, an M2 with few classes suffices for multimodal ICL",
             "After stage 1 on high-K bursty M1, stage 2 with K2 = L M2 classes gives ICL that needs M2 "
             "(M2-necessary set) well above what a decoder pretrained in the in-weights regime (K1 = 64) gives, "
             "and no worse than stage 2 with 16 times as many M2 classes, for an M2 that stage 2 has to learn "
             "(no M2-necessary ICL before it)."),
    _testbed(5, "In the multimodal setting a larger decoder gives better ICL",
             "A deeper decoder (same width) learns M2-necessary ICL faster in stage 2 (area under its curve), for "
             "an M2 that stage 2 has to learn and a base below the ceiling; the same comparison at a matched "
             "parameter count corroborates."),
    _testbed(6, "Early fusion reverses the asymmetry: the label-adjacent modality dominates",
             "Trained from scratch together, the model follows the modality next to the label on the conflict set "
             "more than after staged training does (both in a layout whose readout token follows both query "
             "items)."),
    _testbed(7, "A better M2 encoder gives better multimodal ICL",
             "Across ≥ 4 encoder qualities (one knob: pretraining steps), M2-necessary ICL on known M2 classes "
             "(labels given only by the context), as the area under its stage-2 curve, rises with the encoder's "
             "held-out accuracy (features standardised, so that the knob changes accuracy, not scale)."),
    _testbed(9, "Multimodal training refines the induction head; the previous-token head stays",
             "On a 2-layer × 4-head decoder, stage 2 with every weight trainable (at a tenth of the learning rate) "
             "raises the top induction head's score over the frozen stage 2 on the same decoder and sequences, "
             "raises it more than a head's that is not an induction head, and does not lower the previous-token "
             "head's (each change paired sequence by sequence)."),
    BuiltinClaim(
        "appF", "no skip: the ablated LCA falls back to the sample-mean risk",
        "Without the skip S (W^S = 0) the LCA's risk does not fall with T and equals the risk of the plain "
        "sample-mean predictor, within Monte Carlo error.", "montecarlo", "evaluate_appF"),
    BuiltinClaim(
        "depth", "deeper is better: the trained LCA's excess risk falls with T",
        "The trained LCA's excess risk falls with T towards 0 (a single layer is not enough); the measured rate "
        "is compared with the theory's.", "montecarlo", "evaluate_depth"),
    BuiltinClaim(
        "thm4.1", "single-layer LSA is not Bayes-optimal uniformly over the task law",
        "When s = ‖m‖² is not a.s. constant on {s > 0} (so the covariance Λ = I + mmᵀ varies across prompts "
        "beyond its direction), the best single LSA layer (exact, from the normal equations of the full layer, "
        "which collapses to ŷ = x_qᵀΓ(1/n)Σy_i x_i) has excess risk over Bayes > 0; training the full layer "
        "reaches it and does not beat it.", "lsa", "evaluate"),
    BuiltinClaim(
        "ext.untied", "extension beyond the paper (not one of its claims): the untied LCA, one α_t per layer, "
                      "beats the tied one exponentially",
        "Extension beyond arXiv:2602.04872, not a claim of the paper. With one scalar per layer "
        "(W^S_t = −W^V_t = α_t I) the large-context excess is E[ζ² s/(1+s) ∏_t(1 − α_t(1+s))²]. Its minimum over "
        "schedules is 1/Σ_{k≤T} π_k(0)² (π_k orthonormal for μ = E[ζ²] s/(1+s) dP(s) in λ = 1+s), reached at "
        "α_t = 1/(Gauss nodes of λ dμ); it is never above the tied excess at α_T, is exactly 0 from T = m on for a "
        "law with m atoms, and for a density on [s_lo, s_hi] falls per layer like ((√κ−1)/(√κ+1))² against "
        "((κ−1)/(κ+1))² tied, κ = (1+s_hi)/(1+s_lo). Gradient flow on the schedule from random starts and Monte "
        "Carlo training reach it.", "untied", "evaluate_untied", default=False,
        variants=("readout=raw-keys,f0=zero,skip=on,param=untied",)),  # its model; it compares with the default
    BuiltinClaim(
        "variant.floor", "LCA variants: the least excess tends to the derived floor (0 for the default)",
        "For an LCA variant (readout, F⁰, skip, one or two tied parameters) on a bounded task law, the least "
        "excess risk over Bayes at depth T tends, as T → ∞, to the floor derived from the variant's layer map: the "
        "least excess over the stable family (fixed weights with |1 + w_V λ| < 1) and the 1/T-scaled family. It is "
        "0 for mmicl's default (raw keys, F⁰ = 0, skip on) and positive with both sides of the readout evolved.",
        "variants", "evaluate_floor", variants=("*",)),
)
"""The built-in claims, in the order ``mmicl claims`` lists them (as the modules registered them:
lca, testbed, montecarlo, lsa, untied, variants)."""
