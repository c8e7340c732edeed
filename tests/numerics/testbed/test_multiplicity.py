"""Holm's step-down correction: equal to the closed testing procedure with Bonferroni local tests
(computed here by brute force over every subset), never weaker than Bonferroni, and keeping the
family-wise error rate at α by simulation under the global null."""
from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, strategies as st

from mmicl.numerics.testbed.multiplicity import holm

p_values = st.dictionaries(st.sampled_from([f"claim{i}" for i in range(1, 10)]),
                           st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.05 / 3, 0.025, 0.05, 1.0])),
                           min_size=1, max_size=9)


def _closed_testing(ps: dict[str, float], alpha: float) -> dict[str, bool]:
    """Reject H_i when every subset S ∋ i has min_{j∈S} p_j ≤ α/|S| (Bonferroni's local test),
    judged exactly on the values given."""
    names = list(ps)
    out = {}
    for i in names:
        others = [n for n in names if n != i]
        out[i] = all(min(_exact(ps[n]) for n in (i, *rest)) * (1 + len(rest)) <= _exact(alpha)
                     for r in range(len(others) + 1) for rest in itertools.combinations(others, r))
    return out


def _exact(x) -> Fraction:
    return Fraction(float(x))


@given(ps=p_values, alpha=st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_is_closed_testing_with_bonferroni_and_rejects_what_bonferroni_does(ps, alpha):
    r = holm(ps, alpha)
    assert r.rejected == _closed_testing(ps, alpha)
    m = len(ps)
    for n, p in ps.items():
        if _exact(p) * m <= _exact(alpha):
            assert r.rejected[n], (n, p)
        assert r.adjusted[n] >= p and r.adjusted[n] <= 1
    # the adjusted p-values keep the order of the p-values
    order = sorted(ps, key=ps.get)
    assert all(r.adjusted[a] <= r.adjusted[b] for a, b in zip(order, order[1:]))


def test_a_worked_family():
    r = holm({"a": 0.01, "b": 0.04, "c": 0.03}, 0.05)
    assert r.adjusted == pytest.approx({"a": 0.03, "b": 0.06, "c": 0.06})
    assert r.rejected == {"a": True, "b": False, "c": False}
    # a p-value exactly at its step's boundary α/(m − j + 1) is rejected, whatever the rounding
    assert holm({"a": 0.05 / 3, "b": 0.5, "c": 0.9}, 0.05).rejected["a"] is (3 * _exact(0.05 / 3) <= _exact(0.05))


def test_holm_keeps_the_family_wise_error_rate_under_the_global_null():
    """Nine true nulls with independent uniform p-values: at least one rejection with probability
    1 − (1 − α/9)·… ≤ α; simulated 20 000 times, within 4 binomial standard errors of at most α."""
    rng = np.random.default_rng(0)
    n, alpha, m = 20_000, 0.05, 9
    hits = sum(any(holm({str(i): float(p) for i, p in enumerate(rng.uniform(size=m))}, alpha).rejected.values())
               for _ in range(n))
    assert hits / n <= alpha + 4 * math.sqrt(alpha * (1 - alpha) / n)


@pytest.mark.parametrize("bad, says", [({}, "at least one"), ({"a": 1.5}, "in \\[0, 1\\]"),
                                       ({"a": float("nan")}, "in \\[0, 1\\]"), ({"a": True}, "in \\[0, 1\\]")])
def test_what_is_not_a_family_of_p_values_is_refused(bad, says):
    with pytest.raises(ValueError, match=says):
        holm(bad)
    with pytest.raises(ValueError, match="alpha"):
        holm({"a": 0.1}, 1.0)
