"""Task laws and the LAW language: parsing, validation, sampling."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given

from mmicl.numerics.law_language import GRAMMAR, LawSyntaxError, parse_law
from mmicl.numerics.laws import LawError, TaskLaw, UnboundedSupportError, Uniform, ZetaLaw
from strategies import scalar_laws, task_laws


@pytest.mark.parametrize("text, match", [
    ("s=uniform(2,1)", "empty"),
    ("s=point(-1)", "negative"),
    ("s=uniform(nan,2)", "finite"),
    ("s=uniform(0,inf)", "finite"),
    ("s=beta(0,1,0,1)", "p > 0"),
    ("s=twopoint(1,2,1.5)", "0 ≤ p ≤ 1"),
    ("s=discrete(1:0.5,2:0.6)", "sum to 1"),
    ("s=mix(0.5*point(1),0.6*point(2))", "sum to 1"),
    ("s=point(1); zeta=const(0)", "no signal"),
    ("s=point(1); d1=0", "positive integer"),
    ("s=exponential(-1)", "rate > 0"),
    ("s=point(1); sv=point(1); sr=point(1)", "not both"),
    ("sv=point(1)", "both"),
])
def test_invalid_laws_give_clear_errors(text, match):
    with pytest.raises(LawError, match=match):
        parse_law(text)


@pytest.mark.parametrize("text", ["s=unifrm(1,2)", "s=uniform(1)", "s=uniform(1,2", "q=point(1)", "s point(1)",
                                  "s=point(1); zeta=cauchy", "d1=2"])
def test_syntax_errors_show_the_grammar(text):
    with pytest.raises(LawSyntaxError) as e:
        parse_law(text)
    assert GRAMMAR in str(e.value)


def test_unbounded_law_is_refused_where_a_bound_is_needed():
    law = parse_law("s=exponential(2)")
    assert law.s_law().sample(5, np.random.default_rng(0)).shape == (5,)
    with pytest.raises(UnboundedSupportError, match="bounded"):
        law.rule()


@given(task_laws())
def test_spec_round_trips_through_the_parser(law):
    """Writing a law as LAW text and reading it back gives the same law."""
    back = parse_law(law.spec())
    assert back.s_bounds() == pytest.approx(law.s_bounds())
    assert back.zeta == law.zeta and (back.d1, back.d2) == (law.d1, law.d2)


@given(scalar_laws)
def test_rule_weights_are_a_probability_and_nodes_lie_in_the_support(law):
    r = law.rule(100)
    lo, hi = law.support()
    assert r.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert np.all(r.nodes >= lo - 1e-12) and np.all(r.nodes <= hi + 1e-12)


@given(scalar_laws)
def test_rule_mean_matches_the_sample_mean(law):
    """The quadrature mean of S against 20,000 samples: within 5 standard errors."""
    x = law.sample(20_000, np.random.default_rng(0))
    se = x.std() / math.sqrt(x.size)
    assert abs(law.rule().expect(lambda s: s) - x.mean()) <= 5 * se + 1e-12


def test_tasks_have_the_law_of_their_squared_norm():
    law = TaskLaw(sv=Uniform(0.0, 2.0), sr=Uniform(1.0, 1.5), d1=3, d2=2)
    v, r, z = law.sample_tasks(50_000, np.random.default_rng(1))
    s = (v**2).sum(1) + (r**2).sum(1)
    assert v.shape == (50_000, 3) and r.shape == (50_000, 2)
    assert s.min() >= 1.0 - 1e-12 and s.max() <= 3.5 + 1e-12
    se = s.std() / math.sqrt(s.size)
    assert abs(s.mean() - law.s_law().mean()) < 5 * se


def test_zeta_second_moment_scales_the_rule():
    law = TaskLaw(s=Uniform(0.5, 4.0), zeta=ZetaLaw("const", 3.0))
    assert law.rule().weights.sum() == pytest.approx(9.0)
