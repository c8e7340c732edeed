"""What every testbed claim's toy end-to-end test asserts of its checks (shared by
tests/proofs/testbed/test_unimodal_claims.py, test_transfer_claims.py and test_modality_claims.py)."""
from __future__ import annotations


def assert_checks_follow_the_design(checks, design) -> None:
    """The claim's checks are its pre-registered design's, in order, with the same roles and
    margins, and each states the tolerance of its decision."""
    assert [c.name for c in checks] == [c.name for c in design.checks]
    assert [c.role for c in checks] == [c.role for c in design.checks]
    for c, d in zip(checks, design.checks):
        assert c.tolerance and c.numbers["margin"] == d.margin, c.name


def uncovered_numbers(checks, summary) -> list[str]:
    """The numbers of the checks and the summary that state no tolerance (none, for a claim whose
    results a rerun can be compared with)."""
    from mmicl.compare import number_keys
    from mmicl.proofs.claim import tolerance_of

    out = [f"summary: {k}" for k in number_keys(summary) if tolerance_of(summary.atol, summary.rtol, k) is None]
    for c in checks:
        out += [f"{c.name}: {k}" for k in number_keys(c.numbers) if tolerance_of(c.atol, c.rtol, k) is None]
    return out
