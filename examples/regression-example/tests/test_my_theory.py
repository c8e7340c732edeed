"""My theory's regression tests: two properties over random task laws (mmicl.testing.task_laws),
verdicts asserted, and a baseline of verdicts and numbers (the mmicl_baseline fixture).

Run: ``pytest`` (smoke size, few examples); ``pytest --mmicl-profile thorough`` for more examples
where a test does not fix its own; ``pytest --mmicl-update-baseline`` after a change that is meant
to move the numbers (then commit ``tests/baselines/``)."""
from hypothesis import assume, given, settings

import mmicl
import mmicl.testing as mt
from my_claims import DEFAULT_LAW


@settings(max_examples=5)
@given(drawn=mt.task_laws())
def test_alpha_T_lies_between_the_reciprocals_of_the_ends(drawn):
    """α_T ∈ [1/(1 + s_hi), 1/(1 + s_lo)], the ends of s over prompts with m ≠ 0 (from the facts)."""
    assume(drawn.facts.has_signal)
    a = mmicl.alpha_T(drawn.law, 10)
    assert 1 / (1 + drawn.facts.s_hi) * (1 - 1e-12) <= a <= 1 / (1 + drawn.facts.s_lo) * (1 + 1e-12), drawn


@settings(max_examples=5)
@given(drawn=mt.task_laws(bounded=False))
def test_thm62_never_fails_and_names_its_hypotheses(drawn, mmicl_size):
    """Theorem 6.2 needs s bounded and not a.s. 0; then it holds (or cannot decide), never fails."""
    met = drawn.facts.bounded and drawn.facts.has_signal
    mt.assert_verdict("thm6.2", drawn, expected={"holds", "inconclusive"} if met else "hypothesis-not-met",
                      size=mmicl_size)


def test_verdicts_on_named_laws():
    mt.assert_verdict("thm6.2", "s=point(2)")
    mt.assert_verdict("thm6.2", "s=exponential(1)", expected="hypothesis-not-met")
    mt.assert_verdict("mytheory.alpha_star", "sv=point(1); sr=uniform(0,2); d1=2; d2=3")


def test_my_claim_baseline(mmicl_baseline):
    """The verdict and numbers of my claim, against tests/baselines/test_my_theory/."""
    mmicl_baseline.check(mt.check_claim("mytheory.alpha_star", DEFAULT_LAW))


def test_key_numbers(mmicl_baseline):
    law = "s=beta(2,5,0.5,4)"
    mmicl_baseline.check({
        "alpha_star": mmicl.alpha_star(law),
        "alpha_T": {f"T={T}": mmicl.alpha_T(law, T) for T in (1, 10, 100)},
        "log10_excess_at_T=100": mmicl.excess_risk(law, 100).log10,
    })
