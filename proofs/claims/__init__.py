"""Importing this package registers every claim (one module per claim or family)."""
from importlib import import_module

CLAIM_MODULES = [
    "mmicl.proofs.claims.lca",
    "mmicl.proofs.claims.testbed",
    "mmicl.proofs.claims.testbed_multimodal",
    "mmicl.proofs.claims.montecarlo",
    "mmicl.proofs.claims.lsa",
    "mmicl.proofs.claims.untied",
]

for _name in CLAIM_MODULES:
    import_module(_name)
