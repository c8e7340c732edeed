"""Numbers as people read them: ``ScaledValue``'s repr says the value in base 10, and ``mmicl
limits`` prints every number to 4 significant digits with its sign written once."""
from __future__ import annotations

import math
import re

import pytest
from click.testing import CliRunner

from mmicl.numerics.lca import ScaledValue
from mmicl.commands.common import MINUS, number, signed_sum
from mmicl.commands.limits import correction_text

LN10 = math.log(10)


# ------------------------------------------------------------------ ScaledValue


@pytest.mark.parametrize("mantissa, log_scale, shown", [
    (3.52, -542 * LN10, "3.52e-542"),
    (0.734, -1248.1, "6.64895e-543"),        # unnormalised mantissa, natural-log scale
    (-2.5, 3 * LN10, "-2.5e+03"),
    (1.0, 0.0, "1e+00"),
    (12.5, 0.0, "1.25e+01"),
    (9.9999999, 0.0, "1e+01"),               # rounds up into the next decade
    (1.0, 2000 * LN10, "1e+2000"),
    (0.0, 5.0, "0"),
])
def test_the_repr_says_the_value_in_base_10(mantissa, log_scale, shown):
    v = ScaledValue(mantissa, log_scale)
    assert repr(v) == f"ScaledValue({shown})" and str(v) == repr(v)
    assert (v.mantissa, v.log_scale) == (mantissa, log_scale)  # the fields are as given


def test_the_repr_digits_come_from_log10_and_match_the_float_where_there_is_one():
    v = ScaledValue(0.734, -1248.1)
    d, k = v.decimal(12).split("e")
    assert 1 <= float(d) < 10 and int(k) == math.floor(v.log10)
    assert float(d) == pytest.approx(10 ** (v.log10 - int(k)), rel=1e-11)
    inside = ScaledValue(-0.3, -5.0)
    assert float(inside.decimal(12)) == pytest.approx(inside.value, rel=1e-11)


def test_scaled_value_keeps_its_behaviour():
    a, b = ScaledValue(0.5, -10.0), ScaledValue(0.5, -10.0)
    assert a == b and hash(a) == hash(b) and a.value == 0.5 * math.exp(-10.0)
    assert a.to_json("x")["log10_x"] == a.log10
    assert repr(ScaledValue(1.0, -math.inf)) == "ScaledValue(0.0)" and repr(ScaledValue(math.nan, 1.0)) == "ScaledValue(nan)"


# ------------------------------------------------------------------ mmicl limits


@pytest.mark.parametrize("x, shown", [
    (0.0621, "0.0621"), (-0.0621, f"{MINUS}0.0621"), (0.123456, "0.1235"), (-0.0, "0"), (0.0, "0"),
    (123456.0, "1.235e+05"), (1.499e-15, "1.499e-15"), (-1.0, f"{MINUS}1"), (math.inf, "inf"),
])
def test_number_has_4_significant_digits_and_a_true_minus(x, shown):
    assert number(x) == shown


def test_signed_sum_writes_each_sign_once():
    assert signed_sum([(-0.0621, "·log T"), (-0.0237, "")]) == f"{MINUS}0.0621·log T {MINUS} 0.0237"
    assert signed_sum([(0.0621, "·log T"), (-0.0237, "")]) == f"0.0621·log T {MINUS} 0.0237"
    assert signed_sum([(-0.0621, "·log T"), (0.0237, "")]) == f"{MINUS}0.0621·log T + 0.0237"
    assert signed_sum([(0.086130714, "/T"), (-0.10565598, "/T²")]) == f"0.08613/T {MINUS} 0.1057/T²"
    assert "+ -" not in signed_sum([(-1.0, ""), (-2.0, ""), (-3.0, "")])


def test_the_correction_is_printed_with_its_signs():
    log_form = {"form": "(a log T + c)/T", "log_coefficient": -0.06213, "coefficient": -0.02371, "second": None}
    assert correction_text(log_form) == f"({MINUS}0.06213·log T {MINUS} 0.02371)/T + o(1/T)"
    with_second = {**log_form, "second": (-0.03116, 0.01258, -0.001252)}
    assert correction_text(with_second) == (f"({MINUS}0.06213·log T {MINUS} 0.02371)/T + ({MINUS}0.001252·log²T + "
                                            f"0.01258·log T {MINUS} 0.03116)/T² + …")
    c_form = {"form": "c/T", "log_coefficient": None, "coefficient": 0.08613071474, "second": (-0.1056559831, 0.0, 0.0)}
    assert correction_text(c_form) == f"0.08613/T {MINUS} 0.1057/T² + …"
    assert correction_text({**c_form, "second": None}) == "0.08613/T + o(1/T)"


def test_limits_prints_one_precision():
    from mmicl.cli import main

    r = CliRunner().invoke(main, ["limits", "--law", "s=exponential(1)", "--T-max", "10"])
    assert r.exit_code == 0, r.output
    assert "T=    5: α_T = 0.184   T·α_T = 0.92" in r.output
    assert re.search(rf"log-log slope of α_T over T = \[2, 5, 10\]: {MINUS}0\.\d{{1,4}}\n", r.output), r.output


def test_limits_model_two_below_its_depths_is_a_usage_error():
    from mmicl.cli import main

    r = CliRunner().invoke(main, ["limits", "--law", "s=uniform(0.5,4)", "--model", "two", "--T-max", "20"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "--model two needs the depths 5, 10, 20 and 30 at least" in r.output
