"""A LAW text that does not parse is refused with what was expected where: the message names the
mistake, shows the text on one line and a caret under the place on the next, and ends with the
grammar (``numerics/laws/language.py``)."""
from __future__ import annotations

import pytest

from mmicl.numerics.laws.language import GRAMMAR, LawSyntaxError, parse_law, parse_scalar_law, parse_zeta


def _refusal(parse, text: str) -> tuple[str, int | None]:
    """The first line of the message and the caret's column in the text shown above it (None: no
    caret); the text line must be the text itself, two spaces in."""
    with pytest.raises(LawSyntaxError) as e:
        parse(text)
    lines = str(e.value).split("\n")
    assert str(e.value).endswith(f"The LAW grammar:\n{GRAMMAR}")
    if lines[1].startswith("The LAW grammar"):
        assert e.value.position is None
        return lines[0], None
    assert lines[1] == "  " + text and set(lines[2]) == {" ", "^"} and lines[3] == "The LAW grammar:", lines
    column = lines[2].index("^") - 2
    assert column == e.value.position
    return lines[0], column


# (LAW text, a fragment of the first line, the caret's column)
CASES = [
    # two items with no ';' between them: the caret at the second key
    ("s=uniform(1,2) d1=3", "expected ';' between two items", 15),
    ("sv=beta(2,5,0.2,3) sr=twopoint(0.5,2)", "expected ';' between two items", 19),
    ("d1=3 d2=2; s=point(1)", "expected ';' between two items", 5),
    ("s=point(1); zeta=normal d1=2", "expected ';' between two items", 24),
    ("s=uniform(1,2), d1=3", "expected ';' between two items, not ','", 14),
    # the numbers of each law: how many, their names; the caret where one is missing or extra
    ("sv=beta(2,5,0.2,3); sr=twopoint(0.5,2)",
     "twopoint(a,b,p) takes 3 numbers: a, b and the probability p of a; got 2", 37),
    ("s=uniform(1)", "uniform(a,b) takes 2 numbers: the ends a and b of the interval; got 1", 11),
    ("s=uniform(1,2,3)", "uniform(a,b) takes 2 numbers", 14),
    ("s=point()", "point(c) takes 1 number: the value c; got 0", 8),
    ("s=beta(2,5,0,3,4)",
     "beta(p,q,a,b) takes 4 numbers: the shapes p and q, then the ends a and b of the support; got 5", 15),
    ("s=exponential(1,2)", "exponential(rate) takes 1 number: the rate; got 2", 16),
    ("s=beta(1,x,0,1)", "beta(p,q,a,b): q must be a number, got 'x'", 9),
    ("s=twopoint(1,2,)", "twopoint(a,b,p): p must be a number, got ''", 15),
    ("s=discrete(1:0.5,2)", "discrete atoms are VALUE:PROB, got '2'", 17),
    ("s=discrete(1:0.5,y:0.5)", "discrete(v1:p1,...): the value must be a number, got 'y'", 17),
    ("s=mix(0.5*point(1),point(2))", "mixture parts are WEIGHT*DIST, got 'point(2)'", 19),
    ("s=mix(w*point(1))", "mix(w1*DIST,...): the weight must be a number, got 'w'", 6),
    ("s=mix(1*point(1) x)", "expected ',' or ')' after point(…), got 'x'", 17),
    ("s=point(1) x", "expected ';' or the end of the law after point(…), got 'x'", 11),
    ("s=point", "expected '(' after point: point(c)", 7),
    ("s=", "expected a value after 's='", 2),
    # unknown names: the known ones, and the close match
    ("s=unifrm(1,2)", "unknown law 'unifrm' (did you mean 'uniform'?); the laws are point, uniform, twopoint, beta, "
                      "discrete, mix, exponential", 2),
    ("s=mix(0.5*point(1),0.5*gauss(1,2))", "unknown law 'gauss'; the laws are point, uniform", 23),
    ("s=normal", "unknown law 'normal' (a law of ζ: write zeta=normal)", 2),
    ("q=point(1)", "unknown key 'q'; the keys are s, sv, sr, zeta, d1, d2", 0),
    ("s=point(1); zeta=normak",
     "unknown ζ law 'normak' (did you mean 'normal'?); ζ is normal, rademacher or const(c)", 17),
    ("s=point(1); zeta=cauchy", "unknown ζ law 'cauchy'; ζ is normal, rademacher or const(c)", 17),
    ("s=point(1); zeta=uniform(1,2)", "unknown ζ law 'uniform' (a law of s, sv or sr, not of ζ)", 17),
    ("s=point(1); zeta=normal(1)", "normal takes no arguments", 23),
    ("s=point(1); zeta=const(1,2)", "const(c) takes 1 number: the value c of ζ; got 2", 25),
    ("s=point(1); zeta=const(x)", "const(c): c must be a number, got 'x'", 23),
    # unbalanced parentheses, at the parenthesis
    ("s=uniform(0.5,", "unbalanced '(': it is never closed (expected ')')", 9),
    ("s=mix(0.5*point(1),0.5*point(2)", "unbalanced '('", 5),
    ("s=uniform(1,2))", "unbalanced ')': it closes no '('", 14),
    ("s=point(1)); d1=2", "unbalanced ')'", 10),
    # the items themselves
    ("s point(1)", "expected '=' after the key 's'", 1),
    ("uniform(1,2)", "each item is KEY=VALUE with KEY one of s, sv, sr, zeta, d1, d2; got 'uniform(1,2)' "
                     "(a law needs its key: s=uniform(1,2))", 0),
    ("=point(1)", "expected a key (s, sv, sr, zeta, d1, d2) before '='", 0),
    ("s=point(1); s=point(2)", "s is given twice", 12),
    ("s=point(1); d1=x", "d1 must be a positive integer, got 'x'", 15),
    ("d1=2", "give s=DIST, or sv=DIST and sr=DIST", 4),
]


@pytest.mark.parametrize("text, says, column", CASES, ids=[c[0] for c in CASES])
def test_a_law_that_does_not_parse_says_what_was_expected_where(text, says, column):
    first, at = _refusal(parse_law, text)
    assert first.startswith(f"cannot read the law {text!r}: ")
    assert says in first, first
    assert at == column


@pytest.mark.parametrize("text, says, column", [
    ("uniform(1)", "uniform(a,b) takes 2 numbers", 9),
    ("  unifrm(1,2)", "did you mean 'uniform'?", 2),
    ("point(1", "unbalanced '('", 5),
])
def test_a_scalar_law_points_into_its_own_text(text, says, column):
    first, at = _refusal(parse_scalar_law, text)
    assert says in first and at == column


def test_zeta_points_into_its_own_text_also_when_given_apart():
    first, at = _refusal(parse_zeta, "const(2,3)")
    assert "const(c) takes 1 number" in first and at == 8
    with pytest.raises(LawSyntaxError) as e:  # the keyword argument is read as its own text
        parse_law("s=point(1)", zeta="rademachr")
    assert e.value.text == "rademachr" and "did you mean 'rademacher'?" in e.value.why and e.value.position == 0


def test_a_bad_keyword_argument_has_no_place_in_the_text():
    first, at = _refusal(lambda t: parse_law(t, d1="x"), "s=point(1)")
    assert "d1 (the keyword argument) must be a positive integer, got 'x'" in first and at is None


def test_a_long_law_is_shown_as_a_window_around_the_place():
    text = "s=discrete(" + ",".join(f"{i}:0.001" for i in range(1000)) + ") d1=3"
    with pytest.raises(LawSyntaxError) as e:
        parse_law(text)
    lines = str(e.value).split("\n")
    assert "expected ';' between two items" in lines[0] and len(lines[0]) < 240
    shown, caret = lines[1], lines[2]
    assert shown.startswith("  …") and len(shown) <= 80
    assert shown[caret.index("^"):].startswith("d1=3")
    assert e.value.position == text.index("d1=3")


def test_whitespace_and_newlines_keep_the_caret_in_its_column():
    text = "s=point(1);\n\td1=x"
    with pytest.raises(LawSyntaxError) as e:
        parse_law(text)
    lines = str(e.value).split("\n")
    assert lines[1] == "  s=point(1);  d1=x" and lines[2].index("^") - 2 == text.index("x")


@pytest.mark.parametrize("text", [
    "s=uniform(0.5,4)", " s = point( 1 ) ; zeta = const( 2 ) ;", ";s=point(1);;", "s=point\n(1)",
    "sv=point(1); sr=beta(2,2,0,3); zeta=rademacher; d1=3; d2=2", "s=discrete(1 : 0.5, 2 : 0.5)",
    "s=mix(0.5*point(1),0.5*mix(0.3*uniform(1,2),0.7*discrete(1:0.5,2:0.5)))", "s=exponential(2); d1=+3",
])
def test_the_accepted_forms_are_still_accepted(text):
    law = parse_law(text)
    assert parse_law(law.spec()) == law


@pytest.mark.parametrize("text, bad", [("s=uniform(０.5,4)", "０"), ("s=point(２)", "２"), ("s=uniform(−1,2)", "−"),
                                       ("s=point(2); d1=３", "３")])
def test_law_numbers_are_ascii_digits_only(text, bad):
    """float() reads full-width digits ('１' is 1): LAW text refuses every character that is not ASCII."""
    with pytest.raises(LawSyntaxError, match="LAW text is ASCII") as e:
        parse_law(text)
    assert e.value.position == text.index(bad)
    dist = text[2:].split(";")[0]
    if bad in dist:
        with pytest.raises(LawSyntaxError, match="LAW text is ASCII"):
            parse_scalar_law(dist)
    with pytest.raises(LawSyntaxError, match="LAW text is ASCII"):
        parse_zeta("const(１)")
