"""Values below resolution (numerics/resolution.py): one convention, a float that says what it is.

Asserted for any value and resolution: the flag is set exactly at or below the resolution, every
display says ``below resolution r``, strict JSON writes null with that reason, and the variants'
excess uses it (the default variant at T = 1000 on a uniform law is far below its rounding bound)."""
from __future__ import annotations

import json
import math
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

import mmicl
from mmicl.numerics import variants as nv
from mmicl.numerics.resolution import BelowResolution, flag_resolution, is_below_resolution
from mmicl.numerics.strict_json import dumps

finite = st.floats(-1e300, 1e300, allow_nan=False)
positive = st.floats(1e-300, 1e300, allow_nan=False)


@given(finite, positive)
def test_a_value_is_flagged_exactly_where_it_is_at_or_below_the_resolution(x, r):
    got = flag_resolution(x, r)
    assert float(got) == x
    assert is_below_resolution(got) == (abs(x) <= r)
    if abs(x) > r:
        assert type(got) is float


@given(finite, positive)
def test_every_display_of_a_flagged_value_says_below_resolution(x, r):
    v = BelowResolution(x, r)
    text = f"below resolution {r:.3g}"
    assert str(v) == repr(v) == f"{v}" == f"{v:.3e}" == f"{v:g}" == text
    assert json.loads(dumps({"excess": v}))["excess"] is None
    assert json.loads(dumps({"excess": v}))["excess_null_reason"] == text
    assert json.loads(dumps({"rows": [v]}))["rows"] == [None]
    back = pickle.loads(pickle.dumps(v))
    assert is_below_resolution(back) and back.resolution == r and float(back) == x
    assert type(v + 1.0) is float                           # arithmetic gives plain floats


def test_the_default_variants_excess_at_depth_1000_is_below_resolution_not_a_digit_string():
    law = "s=uniform(0.5,4)"
    best = mmicl.variant_minimum(law, 1000, nv.DEFAULT_VARIANT)
    assert is_below_resolution(best.excess) and not best.resolved
    x = mmicl.variant_excess(law, 1000, nv.DEFAULT_VARIANT, best.params)
    assert mmicl.is_below_resolution(x) and x.resolution == pytest.approx(nv.resolution(law, 1000), rel=1e-15)
    assert str(x) == f"below resolution {nv.resolution(law, 1000):.3g}"
    # where the excess is above the rounding bound it is a plain number
    shallow = mmicl.variant_excess(law, 3, nv.DEFAULT_VARIANT, best.params)
    assert type(shallow) is float and shallow > nv.resolution(law, 3)


def test_reports_and_verdicts_show_a_value_below_resolution_as_such(tmp_path):
    from mmicl.proofs.claim import Check, ClaimResult, RunConfig
    from mmicl.report import render_html, render_report

    x = BelowResolution(5.4e-33, 1.3e-22)
    r = ClaimResult("mine.x", "holds", "", [], [Check("c", "exact", True, {"excess": x})], summary={"excess": x})
    cfg = RunConfig(quick=True, out=tmp_path)
    md = render_report([r], cfg)
    assert "excess = below resolution 1.3e-22" in md and "5.4e-33" not in md
    assert '"excess_null_reason": "below resolution 1.3e-22"' in md
    html = render_html([r], cfg)
    assert "below resolution 1.3e-22" in html and "5.4e-33" not in html
    doc = json.loads(dumps(r.to_json()))
    assert doc["evidence"]["summary"]["excess"] is None
    assert doc["evidence"]["summary"]["excess_null_reason"] == "below resolution 1.3e-22"


@given(st.floats(0.01, 50.0), st.sampled_from(["d1=1;d2=1", "d1=2;d2=3", "d1=4;d2=1"]))
def test_the_lsa_gap_of_a_point_law_is_zero_and_is_below_its_resolution(c, dims):
    """A point law's best LSA is Bayes-optimal: its gap is 0, so whatever best_lsa computes is
    rounding, and gap_resolution must bound it (the resolution is a bound, not a guess)."""
    best = mmicl.best_lsa(f"s=point({c!r});{dims}")
    assert is_below_resolution(best.gap) and abs(float(best.gap)) <= best.resolution


def test_a_real_lsa_gap_is_a_plain_number_far_above_its_resolution():
    best = mmicl.best_lsa("s=uniform(0.5,4)")
    assert type(best.gap) is float and best.gap > 1e15 * best.resolution
    near = mmicl.best_lsa("s=uniform(1,1.0000001)")      # a gap of 1e-16, still resolved
    assert type(near.gap) is float and near.gap > 1e6 * near.resolution
    assert json.loads(dumps(mmicl.best_lsa("s=point(2)").to_json()))["gap_null_reason"].startswith("below resolution")


def test_a_floor_of_zero_is_below_resolution_and_a_positive_floor_is_a_number():
    zero = mmicl.variant_floor("s=uniform(0.5,4)", nv.DEFAULT_VARIANT)
    assert zero.zero and is_below_resolution(zero.value) and str(zero.value).startswith("below resolution")
    # its resolution is ZERO_FLOOR of the zero predictor's excess, E[ζ² s/(1+s)] = 1 − log(5/1.5)/3.5 here
    assert zero.value.resolution == pytest.approx(nv.ZERO_FLOOR * (1 - math.log(5 / 1.5) / 3.5), rel=1e-12)
    positive = mmicl.variant_floor("s=uniform(0.5,4)", "f0=zero,skip=off")
    assert not positive.zero and type(positive.value) is float and positive.value > 0.1
