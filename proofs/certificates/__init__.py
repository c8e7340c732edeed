"""Certificates: exact, independently checkable proofs of two statements for a task law.

* ``certify_alpha_T(law, T, width)``: α_T, the minimiser of the one-parameter LCA loss at depth T,
  is unique and lies in ``[lo, hi]`` with rational end points, ``hi − lo < width`` (``alpha``);
* ``certify_gap(law)``: Theorem 4.1's gap, the excess risk of the best single-layer LSA over Bayes
  at n → ∞, lies in ``[lo, hi]`` with ``lo > 0`` (or is exactly 0) (``gap``);
* ``check.check(certificate) -> (ok, reasons)``: the independent checker (standard library only;
  ``python -m mmicl.proofs.certificates.check FILE``).  Import it from its module,
  ``from mmicl.proofs.certificates.check import check``: the module and the function share the name.

The modules: ``exact_law`` (laws with exact rational parameters and their moments),
``derivative`` (dL/dα as an exact polynomial, from theory/lca.py), ``alpha``, ``gap``, ``document``
(the JSON layout, reading and atomic writing) and ``check``.  See docs/certificates.md.

Names load on first use, so that ``python -m mmicl.proofs.certificates.check`` imports nothing but
the checker.
"""
from __future__ import annotations

from importlib import import_module

_API = {
    "certify_alpha_T": ("alpha", "certify_alpha_T"),
    "MAX_CERTIFY_DEPTH": ("alpha", "MAX_CERTIFY_DEPTH"),
    "certify_gap": ("gap", "certify_gap"),
    "bundle": ("document", "bundle"),
    "write_certificate": ("document", "write_certificate"),
    "read_certificate": ("document", "read_certificate"),
    "UnsupportedLawError": ("exact_law", "UnsupportedLawError"),
    "read_exact_law": ("exact_law", "read_exact_law"),
}

__all__ = ["MAX_CERTIFY_DEPTH", "UnsupportedLawError", "bundle", "certify_alpha_T", "certify_gap", "read_certificate",
           "read_exact_law", "write_certificate"]


def __getattr__(name: str):
    if name in _API:
        module, attr = _API[name]
        return getattr(import_module(f"{__name__}.{module}"), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
