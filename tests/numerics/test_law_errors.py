"""Errors in a law name what the user wrote, in LAW syntax, even when the constructor builds another
law inside (``uniform`` is a Beta, ``twopoint`` a Discrete or a Point)."""
from __future__ import annotations

import re

import pytest

from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.scalar import Beta, Discrete, Exponential, LawError, Mixture, Point, TwoPoint, Uniform
from mmicl.numerics.laws.task import ZetaLaw


def _names(message: str, word: str) -> bool:
    """``word`` occurs in ``message`` not as the tail of a longer name (``point`` in ``twopoint``)."""
    return re.search(rf"(?<![a-z]){re.escape(word)}", message) is not None


# (LAW text, what the message must contain, a law name it must not mention)
TEXT_CASES = [
    ("s=uniform(-1,2)", "uniform(-1, 2): a = -1 is negative", "beta"),
    ("s=uniform(0.5,-2)", "uniform(0.5, -2): b = -2 is negative", "beta"),
    ("s=uniform(2,1)", "uniform(2, 1): the support [a, b] = [2, 1] is empty", "beta"),
    ("s=uniform(3,3)", "uniform(3, 3)", "beta"),
    ("s=uniform(nan,2)", "uniform(nan, 2): a must be finite", "beta"),
    ("s=uniform(0,inf)", "uniform(0, inf): b must be finite", "beta"),
    ("s=twopoint(-1,2,0.5)", "twopoint(-1, 2, 0.5): a = -1 is negative", "discrete"),
    ("s=twopoint(1,-2,0.5)", "twopoint(1, -2, 0.5): b = -2 is negative", "discrete"),
    ("s=twopoint(1,-2,1)", "twopoint(1, -2, 1): b = -2 is negative", "point("),  # b has no mass, still wrong
    ("s=twopoint(-1,-1,0.5)", "twopoint(-1, -1, 0.5)", "point("),
    ("s=twopoint(1,2,1.5)", "twopoint(1, 2, 1.5) needs 0 ≤ p ≤ 1", "discrete"),
    ("s=beta(2,2,-1,3)", "beta(2, 2, -1, 3): a = -1 is negative", None),
    ("s=beta(0,1,0,1)", "beta(0, 1, 0, 1) needs p > 0", None),
    ("s=point(-1)", "point(-1): c = -1 is negative", None),
    ("s=discrete(1:0.5,-2:0.5)", "discrete(1:0.5, -2:0.5): value = -2 is negative", None),
    ("s=discrete(1:0.5,2:0.6)", "discrete(1:0.5, 2:0.6): probabilities must sum to 1", None),
    ("s=mix(0.5*point(1),0.6*point(2))", "mix(0.5*point(1), 0.6*point(2)): the weights must be ≥ 0 and sum to 1",
     None),
    ("s=mix(0.5*point(1),0.5*uniform(-1,2))", "uniform(-1, 2): a = -1 is negative", "beta"),
    ("s=exponential(-1)", "exponential(-1) needs rate > 0", None),
    ("s=point(1); zeta=const(nan)", "const(nan): c must be finite", None),
]


@pytest.mark.parametrize("text, says, not_says", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_law_text_errors_name_the_users_syntax(text, says, not_says):
    with pytest.raises(LawError) as e:
        parse_law(text)
    message = str(e.value)
    assert says in message
    if not_says is not None:
        assert not _names(message, not_says)


PYTHON_CASES = [
    (lambda: Uniform(-1, 2), "uniform(-1, 2)", "beta"),
    (lambda: Uniform(1.5, 1.5), "uniform(1.5, 1.5)", "beta"),
    (lambda: Uniform("x", 2), "uniform('x', 2): a must be a real number", "beta"),
    (lambda: TwoPoint(-1, 2, 0.5), "twopoint(-1, 2, 0.5)", "discrete"),
    (lambda: TwoPoint(1, 2, float("nan")), "twopoint(1, 2, nan): p must be finite", "discrete"),
    (lambda: TwoPoint(-3, -3, 0.25), "twopoint(-3, -3, 0.25)", "point("),
    (lambda: Beta(1, 1, -1, 2), "beta(1, 1, -1, 2)", None),
    (lambda: Point(float("inf")), "point(inf): c must be finite", None),
    (lambda: Discrete((1.0, 2.0), (1.0,)), "discrete(1:1, 2:?): a discrete law needs as many probabilities", None),
    (lambda: Mixture((Point(1),), (0.5, 0.5)), "mix(0.5*point(1), 0.5*?)", None),
    (lambda: Exponential(0), "exponential(0) needs rate > 0", None),
    (lambda: ZetaLaw("const", float("nan")), "const(nan)", None),
]


@pytest.mark.parametrize("build, says, not_says", PYTHON_CASES, ids=[c[1] for c in PYTHON_CASES])
def test_constructor_errors_name_the_constructor_called(build, says, not_says):
    with pytest.raises(LawError) as e:
        build()
    message = str(e.value)
    assert says in message
    if not_says is not None:
        assert not _names(message, not_says)


def test_valid_laws_built_through_another_law_are_unchanged():
    assert Uniform(0.5, 4) == Beta(1.0, 1.0, 0.5, 4.0) and Uniform(0.5, 4).spec() == "uniform(0.5,4)"
    assert TwoPoint(0.2, 3, 0.5) == Discrete((0.2, 3.0), (0.5, 0.5))
    assert TwoPoint(2, 2, 0.3) == Point(2) and TwoPoint(1, 2, 1) == Point(1) and TwoPoint(1, 2, 0) == Point(2)
