"""The LCA variants say when float64 cannot resolve them, return a canonical representative where
the loss has a mirror symmetry, refuse what they cannot compute, and end every flow with a named
outcome in bounded work (numerics/variants.py)."""
from __future__ import annotations

import numpy as np
import pytest

from mmicl.numerics import variants as nv
from mmicl.numerics.laws.scalar import LawError
from mmicl.numerics.validate import MAX_DEPTH_VARIANT, InputError

LAW = "sv=beta(2,5,0.2,3); sr=twopoint(0.5,2,0.5); zeta=rademacher; d1=3; d2=2"
BOTH_TWO = "readout=evolved-keys-and-query,param=two"


def test_a_parameter_the_loss_is_even_in_is_returned_non_negative_and_its_mirror_is_as_good():
    m = nv.minimise(LAW, 20, BOTH_TWO)
    assert m.resolved and m.unique and m.params[0] >= 0
    mirror = nv.excess_at(LAW, 20, BOTH_TWO, [-m.params[0], m.params[1]])
    assert abs(mirror - m.excess) <= 8 * np.spacing(m.excess)  # the symmetry the choice rests on
    f = nv.floor(LAW, BOTH_TWO)
    assert f.params[0] >= 0 and f.details["unique"]


def test_a_parameter_the_loss_is_not_even_in_keeps_its_sign():
    """Evolved keys and query with one parameter: the least excess is on the negative branch, and
    flipping α's sign changes the loss, so no representative is chosen."""
    m = nv.minimise(LAW, 50, "readout=evolved-keys-and-query")
    assert m.params[0] < 0
    assert nv.excess_at(LAW, 50, "readout=evolved-keys-and-query", [-m.params[0]]) > m.excess * (1 + 1e-6)


def test_a_point_that_is_not_a_minimum_is_not_resolved():
    """The search's own rule, on a loss that is finite only at θ = 0, where its gradient is large:
    whatever it returns there is not stationary, so ``minimise`` cannot call it resolved."""
    def values(theta):
        return np.where(np.all(theta == 0, axis=1), 1.0, np.inf)

    def jet(x):
        return (1.0 if np.all(x == 0) else np.inf), np.array([1e3]), np.array([[1.0]])

    r = nv._search(values, jet, [np.linspace(-1, 1, 11)], 1, scale=1e-3)
    assert r.params == (0.0,) and not r.stationary


def test_a_wide_law_deep_model_is_resolved_only_where_its_answer_is_a_minimum():
    """s over [1e-6, 1e6] at T = 1000 without the skip: the loss overflows float64 for most α; the
    excess 3.3e11 at α = 0 (the zero predictor) is no minimum (α = 1.5e-6 gives 73.9)."""
    law, v = "s=uniform(1e-6,1e6)", "f0=tokens,skip=off"
    m = nv.minimise(law, 1000, v)
    assert not m.resolved or (m.stationary and m.excess <= nv.excess_at(law, 1000, v, [1.5e-6]))
    assert m.resolved or m.note


@pytest.mark.parametrize("law", ["s=uniform(5e-324,1e-300)", "s=uniform(1,1.0000000000000002)"])
def test_a_law_float64_cannot_resolve_is_refused_as_alpha_T_refuses_it(law):
    from mmicl.numerics import lca

    with pytest.raises(LawError, match="float64 cannot resolve"):
        lca.alpha_T(law, 10)
    for call in (lambda: nv.floor(law, "readout=evolved-keys"), lambda: nv.minimise(law, 10, "skip=off,f0=tokens"),
                 lambda: nv.excess_at(law, 10, "readout=evolved-keys", [0.1])):
        with pytest.raises(LawError, match="float64 cannot resolve"):
            call()


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "x"], ids=repr)
def test_parameters_that_are_not_finite_numbers_are_refused(bad):
    with pytest.raises(InputError):
        nv.excess_at(LAW, 10, "readout=evolved-keys", [bad])


def test_every_variant_function_honours_the_depth_limit():
    from mmicl.numerics.variant_models import VariantLCA

    for call in (lambda: VariantLCA("readout=evolved-keys", 10**18, [0.1]),
                 lambda: nv.minimise(LAW, MAX_DEPTH_VARIANT + 1, "readout=evolved-keys"),
                 lambda: nv.excess_at(LAW, 10**18, "readout=evolved-keys", [0.1]),
                 lambda: nv.gradient_flow(LAW, 10**18, BOTH_TWO)):
        with pytest.raises(InputError, match=str(MAX_DEPTH_VARIANT)):
            call()


def test_a_flow_from_where_the_state_overflows_ends_with_a_named_outcome():
    """From (10, −10) at T = 30 the iterated state is ~1e199: the integrator used to repeat its
    first step for more than ten minutes; now the flow stops within its evaluation budget."""
    r = nv.gradient_flow("s=uniform(0.5,4)", 30, BOTH_TWO, start=(10.0, -10.0))
    assert r.outcome in nv.FLOW_OUTCOMES and r.outcome != "minimum" and not r.converged and r.reason


def test_a_flow_that_comes_to_rest_says_minimum():
    r = nv.gradient_flow("s=uniform(0.5,4)", 5, BOTH_TWO, start=(0.5, -0.5))
    assert r.converged == (r.outcome == "minimum") and r.outcome in nv.FLOW_OUTCOMES
