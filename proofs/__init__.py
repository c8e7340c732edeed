"""mmicl's claims and verdicts: ``claim`` (checks, hypotheses, the claim object and the one verdict
rule), ``registry`` (the registered claims and their origins), ``plugins`` (claims from installed
packages and files), ``verify`` (selecting and running claims), ``hypotheses`` (the hypotheses the
claims share), ``certificates`` (exact, independently checkable proofs) and ``claims`` (the
built-in claims, one module or package per family). Imports go to ``mmicl.numerics`` and
``mmicl.theory`` only."""

__all__: list[str] = []
