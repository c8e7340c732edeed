"""Importing this package registers every built-in claim (one module per claim or family), with
the origin ``"built-in"``."""
from mmicl.proofs.claim import BUILTIN
from mmicl.proofs.registry import registering_as

CLAIM_MODULES = ["lca", "testbed", "montecarlo", "lsa", "untied", "variants"]
"""The modules (and the testbed package) whose import registers the built-in claims, in the order the
registry lists them."""

__all__ = ["CLAIM_MODULES"]

with registering_as(BUILTIN):
    from . import lca, testbed, montecarlo, lsa, untied, variants  # noqa: F401,E402  (importing registers)
