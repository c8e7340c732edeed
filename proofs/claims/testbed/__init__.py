"""The testbed claims 1-9 (docs/testbed.md): empirical, on several seeds, each decided by a
pre-registered design.

- ``design``: the designs as data (arms, seeds, metrics, margins, premises, pilot rules, versions);
- ``pilots``: the rules that chose the settings a design leaves open, and what they chose;
- ``sizes``: the quick and full sizes;
- ``common``: the runs through the results store, the per-seed decision, premises, result files;
- ``unimodal`` (claims 1, 2, 3, 8), ``transfer`` (4, 5, 9), ``modalities`` (6, 7): each says only
  which arms it trains and which checks it decides;
- ``results``: the committed verdict runs as the tables of docs/testbed.md.

The nine claims are registered from ``proofs.claims.catalog`` (``default=False``: ``mmicl verify
--quick --claim 'testbed.*'`` runs them); this package is imported when one of them first runs.
"""
from .common import threaded
from .modalities import claim6, claim7
from .transfer import claim4, claim5, claim9
from .unimodal import claim1, claim2, claim3, claim8

__all__ = ["claim1", "claim2", "claim3", "claim4", "claim5", "claim6", "claim7", "claim8", "claim9",
           "evaluate_claim1", "evaluate_claim2", "evaluate_claim3", "evaluate_claim4", "evaluate_claim5",
           "evaluate_claim6", "evaluate_claim7", "evaluate_claim8", "evaluate_claim9"]

evaluate_claim1, evaluate_claim2, evaluate_claim3, evaluate_claim4, evaluate_claim5, evaluate_claim6, \
    evaluate_claim7, evaluate_claim8, evaluate_claim9 = (
        threaded(f) for f in (claim1, claim2, claim3, claim4, claim5, claim6, claim7, claim8, claim9))
"""Each claim's ``evaluate`` (``proofs.claims.catalog`` names them): the claim function run under
``testbed_threads``."""
