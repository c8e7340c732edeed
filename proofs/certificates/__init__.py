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

This package's ``__init__`` imports nothing, so that ``python -m mmicl.proofs.certificates.check``
imports nothing but the checker: import the names from their modules (``mmicl.certify_alpha_T`` and
``mmicl.certify_gap`` are the public ones).
"""
from __future__ import annotations

__all__: list[str] = []
