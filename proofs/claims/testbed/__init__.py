"""The testbed claims 1-9 (docs/testbed.md): empirical, on several seeds, each decided by a
pre-registered design.

- ``design``: the designs as data (arms, seeds, metrics, margins, premises, pilot rules, versions);
- ``pilots``: the rules that chose the settings a design leaves open, and what they chose;
- ``sizes``: the quick and full sizes;
- ``common``: the runs through the results store, the per-seed decision, premises, result files;
- ``unimodal`` (claims 1, 2, 3, 8), ``transfer`` (4, 5, 9), ``modalities`` (6, 7): each says only
  which arms it trains and which checks it decides;
- ``results``: the committed verdict runs as the tables of docs/testbed.md.

Importing this package registers the nine claims (``default=False``: ``mmicl verify --quick
--claim 'testbed.*'`` runs them).
"""
from ...claim import Claim
from ...registry import register
from .common import threaded
from .modalities import claim6, claim7
from .transfer import claim4, claim5, claim9
from .unimodal import claim1, claim2, claim3, claim8

__all__ = ["claim1", "claim2", "claim3", "claim4", "claim5", "claim6", "claim7", "claim8", "claim9"]

for _id, _title, _statement, _evaluate in (
        ("claim1", "ICL needs data complexity (K, burstiness, ε; Zipf trades ICL for IWL)",
         "More classes K, burstiness and within-class variation ε push a small transformer toward ICL; "
         "a Zipfian class law trades ICL against IWL.", claim1),
        ("claim2", "Scaling layers or heads favours IWL over ICL (unimodal)",
         "At fixed data complexity, more layers or heads shift the trained model from ICL toward IWL.", claim2),
        ("claim3", "RoPE raises the ICL threshold and weakens prev-token/induction patterns",
         "Compared with absolute (one-hot, shifted) positions, RoPE needs more classes K for ICL and shows "
         "weaker previous-token and induction attention.", claim3),
        ("claim8", "Induction-head strength tracks ICL; ablating the induction head collapses ICL",
         "Along training the induction score rises with ICL accuracy, and ablating the top induction head "
         "lowers ICL more than ablating a control head of its layer.", claim8),
        ("claim4", "After diverse M1 pretraining, an M2 with few classes suffices for multimodal ICL",
         "After stage 1 on high-K bursty M1, stage 2 with K2 = L M2 classes gives ICL that needs M2 "
         "(M2-necessary set) well above what a decoder pretrained in the in-weights regime (K1 = 64) gives, "
         "and no worse than stage 2 with 16 times as many M2 classes.", claim4),
        ("claim5", "In the multimodal setting a larger decoder gives better ICL",
         "A deeper decoder (same width) learns M2-necessary ICL faster in stage 2 (area under its curve); the "
         "same comparison at a matched parameter count corroborates.", claim5),
        ("claim6", "Early fusion reverses the asymmetry: the label-adjacent modality dominates",
         "Trained from scratch together, the model follows the modality next to the label on the conflict set "
         "more than after staged training does (both in a layout whose readout token follows both query items).",
         claim6),
        ("claim7", "A better M2 encoder gives better multimodal ICL",
         "Across ≥ 4 encoder qualities (one knob: pretraining steps), M2-necessary ICL on known M2 classes "
         "(labels given only by the context), as the area under its stage-2 curve, rises with the encoder's "
         "held-out accuracy (features standardised, so that the knob changes accuracy, not scale).", claim7),
        ("claim9", "Multimodal training refines the induction head; the previous-token head stays",
         "On a 2-layer × 4-head decoder, stage 2 with every weight trainable (at a tenth of the learning rate) "
         "raises the top induction head's score, over the frozen stage 2 on the same decoder and sequences, "
         "more than a same-layer control head's, and does not lower the previous-token head's.", claim9),
):
    register(Claim(f"testbed.{_id}", _title, _statement, threaded(_evaluate), default=False))
