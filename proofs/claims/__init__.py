"""Importing this package registers every built-in claim (one module per claim or family), with
the origin ``"built-in"``."""
from importlib import import_module

from mmicl.proofs.claim import BUILTIN
from mmicl.proofs.registry import registering_as

CLAIM_MODULES = [
    "mmicl.proofs.claims.lca",
    "mmicl.proofs.claims.testbed",
    "mmicl.proofs.claims.testbed_multimodal",
    "mmicl.proofs.claims.montecarlo",
    "mmicl.proofs.claims.lsa",
    "mmicl.proofs.claims.untied",
    "mmicl.proofs.claims.variants",
]

with registering_as(BUILTIN):
    for _name in CLAIM_MODULES:
        import_module(_name)
