"""The hypotheses mmicl's own claims share, for your claims: each computed from the task law.

Every builder takes a ``TaskLaw`` or LAW text and returns an ``mmicl.Hypothesis`` whose ``met`` is
decided from the law's own numbers, with those numbers in its ``detail``::

    from mmicl import hypotheses as hyp

    def evaluate(config):
        law = "s=uniform(0.5,4)"
        hyps = [hyp.bounded_s(law), hyp.has_signal(law), hyp.at_least_values(law, 3, "α_T is unique")]
        ...

- ``bounded_s(law)``: s = ‖m‖² is bounded (s_hi < ∞);
- ``has_signal(law)``: s is not almost surely 0 (the tokens carry signal);
- ``label_scale(law)``: 0 < E[ζ²] < ∞ (ζ is independent of m by construction of the law);
- ``at_least_values(law, k, why)``: s takes at least ``k`` distinct values where m ≠ 0;
- ``signal_values(law, cap=3)``: how many values s takes where m ≠ 0, up to ``cap`` (a continuous
  piece counts as ``cap``);
- ``float64_resolution_check(label, law, T=1)``: ``None`` where float64 resolves the law at depth
  T, else an undecided ``Check`` saying why (add it to your checks: the claim is then
  ``inconclusive``, never ``fails`` from rounding).

For a claim with its own kind of case (``mmicl.CaseType``), the builders take the case's numbers:

- ``positive_definite(matrix, name="Λ")``: symmetric (exactly) with least eigenvalue > 0;
- ``spectrum_within(matrix, lo, hi, name="Λ")``: every eigenvalue in [lo, hi];
- ``integer_in(value, lo, hi=None, name="N")``: a whole number (not a float or a bool) in range.
"""
from mmicl.proofs.hypotheses import (at_least_values, bounded_s, float64_resolution_check, has_signal, integer_in,
                                     label_scale, positive_definite, signal_values, spectrum_within)

__all__ = ["bounded_s", "has_signal", "label_scale", "at_least_values", "signal_values", "float64_resolution_check",
           "positive_definite", "spectrum_within", "integer_in"]
