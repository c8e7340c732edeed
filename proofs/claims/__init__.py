"""Importing this package registers every claim (one module per claim or family)."""
from importlib import import_module

CLAIM_MODULES = [
    "proofs.claims.lca",
    "proofs.claims.testbed",
    "proofs.claims.montecarlo",
    "proofs.claims.lsa",
]

for _name in CLAIM_MODULES:
    import_module(_name)
