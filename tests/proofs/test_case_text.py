"""mmicl.case_items, matrix_from_text, matrix_text: the pieces of a case's text."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, strategies as st

import mmicl
import mmicl.testing as mt


def test_items_in_any_order_with_spaces_and_aliases():
    assert mmicl.case_items(" N = 5 ;Λ= diag( 1, 2 ) ", ["Lambda", "N"], {"Λ": "Lambda"}) == {"N": " 5 ", "Lambda": " diag( 1, 2 ) "}
    assert mmicl.case_items("", ["a"]) == {}


@pytest.mark.parametrize("text, says", [("a=1; a=2", "given twice"), ("b=1", "unknown key 'b': the keys are a (or α), c"),
                                        ("a", "is not KEY=VALUE")])
def test_items_that_are_not_a_case_say_why(text, says):
    with pytest.raises(ValueError, match=says.replace("(", r"\(").replace(")", r"\)")):
        mmicl.case_items(text, ["a", "c"], {"α": "a"})


@given(mt.positive_definite_matrices(st.integers(1, 4), 1.0, 100.0))
def test_a_matrix_written_as_text_reads_back_exactly(m):
    assert np.array_equal(mmicl.matrix_from_text(mmicl.matrix_text(m)), m)


def test_a_diagonal_matrix_is_written_as_diag():
    assert mmicl.matrix_text(np.diag([1.0, 0.1])) == "diag(1.0,0.1)"


@pytest.mark.parametrize("text, says", [("diag(1,x)", "could not convert"), ("[[1,2],[3]]", "same length"),
                                        ("[[1,2]]", "square"), ("[[1,true],[1,1]]", "is a number"),
                                        ("diag(1,inf)", "finite"), ("{1: 2}", "list of rows"), ("[[1,", "not diag")])
def test_a_text_that_is_not_a_matrix_says_why(text, says):
    with pytest.raises(ValueError, match=says):
        mmicl.matrix_from_text(text, "Σ")
