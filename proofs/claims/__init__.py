"""Importing this package registers every built-in claim (one module per claim or family), with
the origin ``"built-in"``."""
from importlib import import_module

from mmicl.proofs.registry import _ORIGIN, BUILTIN

CLAIM_MODULES = [
    "mmicl.proofs.claims.lca",
    "mmicl.proofs.claims.testbed",
    "mmicl.proofs.claims.testbed_multimodal",
    "mmicl.proofs.claims.montecarlo",
    "mmicl.proofs.claims.lsa",
    "mmicl.proofs.claims.untied",
    "mmicl.proofs.claims.variants",
]

_token = _ORIGIN.set(BUILTIN)
try:
    for _name in CLAIM_MODULES:
        import_module(_name)
finally:
    _ORIGIN.reset(_token)
