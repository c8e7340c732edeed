"""LAW text and laws: reading text gives the law it describes, and a law written with ``spec()``
and read back is the same law — the same quadrature rules and the same moments, not only the
same bounds (mmicl.testing: ``written_laws``, ``any_task_laws``)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given

from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.scalar import Point, SumLaw, Uniform
from mmicl.numerics.laws.task import TaskLaw
from mmicl.testing import any_task_laws, written_laws

EPS = np.finfo(float).eps
U = EPS / 2  # unit roundoff

WEIGHT_RTOL = 16 * U
"""How far a probability may move in a round trip.  ``Discrete`` divides its probabilities by
their float sum every time it is built.  For probabilities that already sum to 1 in floats
(k ≤ 4 of them, each normalised with error ≤ u), the exact sum is 1 ± (2k − 1)u, the float sum
adds (k − 1)u, and the division u: each probability moves by at most (3k − 1)u = 11u; a mixture
weight multiplies it with one more rounding (12u).  16u covers it.  Nodes do not move: every
number is written with ``repr`` and reads back as the same float."""

SUM_RULE_RTOL = 2e-13
"""The rule of s = ‖v‖² + ‖r‖² is the product of the two rules compressed piece by piece into
Gauss rules (``SumLaw.rule``, Lanczos); a perturbation of the weights by ulps moves its result by
the Lanczos rounding, ≤ 1e-13 of the mass (measured in test_laws), once for each of the two
rules compared."""

DEPTHS = (1, 100)
MOMENTS = {
    "s": lambda s: s,
    "s^2": lambda s: s**2,
    "s^3": lambda s: s**3,
    "s^4": lambda s: s**4,
    "s/(1+s)": lambda s: s / (1 + s),
    "sqrt(s)·exp(-s)": lambda s: np.sqrt(s) * np.exp(-s),
}
"""Non-negative functions, so E|f| = E f sets the scale of the tolerance."""


def _scalar_laws(law: TaskLaw):
    return {"s": law.s} if law.s is not None else {"sv": law.sv, "sr": law.sr}


@given(written_laws(bounded=False))
def test_reading_written_text_gives_the_law_it_describes(written):
    """LAW text written with any of several number formats, spacing, item order and defaults left
    out is read as exactly the law built from the same numbers by the constructors."""
    text, law = written
    assert parse_law(text) == law


@given(any_task_laws)
def test_a_law_read_back_from_its_spec_has_the_same_quadrature_rules(law):
    """``parse_law(law.spec())`` has, for every law of a squared norm in it (s, or sv and sr), the
    same quadrature rule at depths 1 and 100: the same nodes, the same weights to WEIGHT_RTOL;
    the same ζ law and dimensions; and the same rule of E[ζ² h(s)] (node for node unless s is a
    sum ‖v‖² + ‖r‖², whose compressed rule is compared through its product rule)."""
    back = parse_law(law.spec())
    assert back.zeta == law.zeta and (back.d1, back.d2) == (law.d1, law.d2)
    assert _scalar_laws(back).keys() == _scalar_laws(law).keys()
    for key, part in _scalar_laws(law).items():
        other = _scalar_laws(back)[key]
        assert type(other) is type(part) and other.support() == part.support()
        for depth in DEPTHS:
            r, want = other.rule(depth), part.rule(depth)
            np.testing.assert_array_equal(r.nodes, want.nodes)
            np.testing.assert_allclose(r.weights, want.weights, rtol=WEIGHT_RTOL, atol=0)
    for depth in DEPTHS:
        if isinstance(law.s_law(), SumLaw):
            r, want = back.s_law().product_rule(depth), law.s_law().product_rule(depth)
            np.testing.assert_array_equal(r.nodes, want.nodes)
            np.testing.assert_allclose(r.weights, want.weights, rtol=2 * WEIGHT_RTOL, atol=0)
        else:
            r, want = back.rule(depth), law.rule(depth)
            np.testing.assert_array_equal(r.nodes, want.nodes)
            np.testing.assert_allclose(r.weights, want.weights, rtol=WEIGHT_RTOL, atol=0)


@given(any_task_laws)
def test_a_law_read_back_from_its_spec_has_the_same_moments(law):
    """E[s], E[s^k] for k = 2, 3, 4, E[s/(1+s)] and E[√s e^{−s}] (not a polynomial) of the law
    read back equal the original's, at depths 1 and 100, to WEIGHT_RTOL of E|f| (SUM_RULE_RTOL
    when s is a sum ‖v‖² + ‖r‖²); and so do the means of each part."""
    back = parse_law(law.spec())
    is_sum = isinstance(law.s_law(), SumLaw)
    rtol = SUM_RULE_RTOL if is_sum else 2 * WEIGHT_RTOL
    for depth in DEPTHS:
        r_back, r_law = back.s_law().rule(depth), law.s_law().rule(depth)
        for name, f in MOMENTS.items():
            want = r_law.expect(f)
            assert abs(r_back.expect(f) - want) <= rtol * want, (name, depth)
    for key, part in _scalar_laws(law).items():
        assert _scalar_laws(back)[key].mean() == pytest.approx(part.mean(), rel=2 * WEIGHT_RTOL, abs=0)


@pytest.mark.xfail(strict=True, reason="TaskLaw.spec() leaves out anisotropy_v/anisotropy_r (the LAW "
                   "language has no item for them)")
def test_an_anisotropic_law_survives_its_spec():
    """A law whose v-directions are stretched is not the isotropic law with the same norms (its
    best LSA differs), so its text must say so.  Today the text drops the stretch and reads back
    as the isotropic law."""
    law = TaskLaw(d1=2, d2=1, sv=Uniform(0.5, 2.0), sr=Point(1.0), anisotropy_v=(1.0, 3.0))
    assert parse_law(law.spec()) == law
