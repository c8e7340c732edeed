"""Importing this package registers every built-in claim, with the origin ``"built-in"``, from the
table ``catalog.CATALOG``: no claim module is imported until its claim runs (a claim's ``evaluate``
is a ``claim.ModuleFunction``), so listing the claims costs no torch, SciPy or SymPy import."""
from mmicl.proofs.claim import BUILTIN
from mmicl.proofs.registry import register, registering_as

from .catalog import CATALOG

CLAIM_MODULES = sorted({entry.module for entry in CATALOG})
"""The modules (and the testbed package) that evaluate the built-in claims."""

__all__ = ["CLAIM_MODULES"]

with registering_as(BUILTIN):
    for _entry in CATALOG:
        register(_entry.claim())
