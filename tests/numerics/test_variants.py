"""LCA variants as data (theory/variants.py, numerics/variants.py, the claim variant.floor).

Every supported combination of readout × F⁰ × skip × {one, two} parameters is derived from one
description; here each is checked against a computation that does not use the derivation: d×d
matrices for the model, direct sampling of s for the floor, the specialised default numerics."""
from __future__ import annotations

import itertools
import math
import zlib

import numpy as np
import pytest

from mmicl.numerics import flows, lca
from mmicl.numerics import variants as nv
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.validate import InputError
from mmicl.theory import variants as tv

COMBINATIONS = [tv.Variant(r, f, s, p) for r, f, s, p in itertools.product(tv.READOUTS, tv.F0S, tv.SKIPS, ("one", "two"))]
USER_LAW = "sv=beta(2,5,0.2,3); sr=twopoint(0.5,2,0.5); zeta=rademacher; d1=3; d2=2"
BOTH_EVOLVED = tv.Variant(readout="evolved-keys-and-query")


# ---- the description ------------------------------------------------------------------------

def test_the_default_is_the_convention_and_text_round_trips():
    assert tv.Variant() == tv.DEFAULT and tv.DEFAULT.is_default and tv.DEFAULT.short == "default"
    for v in COMBINATIONS + [tv.Variant(param="untied")]:
        assert tv.Variant.parse(v.text) == v and tv.Variant.parse(v.short) == v
    assert tv.Variant.parse(None) == tv.Variant.parse("") == tv.Variant.parse("default") == tv.DEFAULT


@pytest.mark.parametrize("text, says", [
    ("readout=both", "one of raw-keys, evolved-keys, evolved-keys-and-query"),
    ("skip=maybe", "one of on, off"),
    ("colour=red", "is not key=value with a key among readout, f0, skip, param"),
    ("readout", "is not key=value"),
    ("skip=on,skip=off", "skip given twice"),
    ("param=untied,readout=evolved-keys-and-query", "drop param=untied"),
])
def test_a_bad_variant_is_one_line_naming_the_mistake(text, says):
    with pytest.raises(InputError, match=None) as e:
        nv.parse_variant(text)
    assert says in str(e.value) and "\n" not in str(e.value)


def test_skip_off_with_zero_start_has_no_parameters_and_predicts_zero():
    """F⁰ = 0 and no skip: P_T ≡ 0 at every weight, so the excess is the zero predictor's."""
    law = parse_law(USER_LAW)
    for v in (tv.Variant(skip="off"), tv.Variant(skip="off", param="two")):
        assert tv.derive(v).params == ()
        r = nv.minimise(law, 7, v)
        assert r.params == () and "does not depend" in r.note
        assert r.excess == pytest.approx(law.rule(1).expect(lambda s: s / (1 + s)), rel=1e-12)


# ---- the derivation against computations that do not use it --------------------------------

@pytest.mark.parametrize("variant", COMBINATIONS, ids=lambda v: v.short)
def test_iterated_layer_equals_matrices_and_the_closed_form(variant):
    """Three routes to one prompt's excess: the compiled layer jet iterated T times (on the point
    law of s), the closed form in symbolic T from rsolve, and d×d matrices in which every token
    column evolves (numerics.variants.matrix_excess_variant).  Tolerance: 1e-9 relative + 1e-14·
    ζ²(1+s)² absolute (float64 rounding of ≤ 11 d×d products and of risk − Bayes risk); the closed
    form 1e-8 relative (the claim's CLOSED_RTOL)."""
    rng = np.random.default_rng(zlib.crc32(variant.text.encode()))  # the same draws on every machine
    model, closed = tv.derive(variant), nv.closed_form(variant)
    for _ in range(4):
        d = int(rng.integers(2, 6))
        m = rng.standard_normal(d)
        m *= math.sqrt(rng.uniform(0.1, 4.0)) / np.linalg.norm(m)
        s, zeta, T = float(m @ m), float(rng.standard_normal()), int(rng.integers(1, 12))
        theta = tuple(float(rng.uniform(0.05, 1.5) / (1 + s)) * (1 if str(p) == "alpha" else -1) for p in model.params)
        allowed = lambda x: 1e-9 * abs(x) + 1e-14 * zeta**2 * (1 + s) ** 2  # noqa: E731
        iterated = zeta**2 * nv.excess_at(f"s=point({s!r})", T, variant, theta)
        direct = nv.matrix_excess_variant(m, zeta, variant, theta, T)
        assert abs(iterated - direct) <= allowed(direct)
        # the closed form divides by w_V λ ≥ 0.05 and forms q^T by a power: 1e-8 relative (CLOSED_RTOL)
        assert abs(zeta**2 * closed(theta, s, T) - iterated) <= 1e-8 * abs(iterated) + 1e-14 * zeta**2 * (1 + s) ** 2


def test_the_default_through_the_variant_path_is_the_specialised_numerics():
    """The generic minimiser on the default variant finds the specialised α_T (Brent on the
    derivative) and (α_T, β_T) (minimise_two), with the same excess."""
    law = parse_law("s=uniform(0.5,4)")
    r1 = nv.minimise(law, 10, tv.DEFAULT)
    a = lca.alpha_T(law, 10)
    assert r1.params[0] == pytest.approx(a, rel=1e-9)
    assert r1.excess == pytest.approx(lca.excess_risk(law, 10, a), rel=1e-9)
    r2 = nv.minimise(law, 10, tv.Variant(param="two"))
    assert r2.params == pytest.approx(lca.minimise_two(law, 10), rel=1e-8)
    flow = nv.gradient_flow(law, 10, tv.DEFAULT)
    assert flow.converged and flow.params[0] == pytest.approx(flows.gradient_flow_one(law, 10, 0.0).alpha, abs=1e-9)


# ---- the floor ------------------------------------------------------------------------------

def test_the_defaults_floor_is_zero_and_attained_in_the_stable_family():
    fl = nv.floor(USER_LAW, tv.DEFAULT)
    assert fl.regime == "stable" and fl.value <= 1e-12 and fl.zero


def test_both_evolved_floor_by_direct_sampling_of_s():
    """With keys and query evolved the floor on the law below lies on the scaled family at τ < 0
    (α = τ/T: P_T < 0 and P_T² ≈ λ^{-1}·…), below the stable family's value (P = 1/λ, the best a
    positive α reaches as T → ∞).  Checked without the compiled formulas: s drawn from the law
    (200 000 draws), P = (1 − e^{−τλ})/λ written out, the excess (s/λ)(λP² − 1)² averaged, its
    minimum over a τ grid: the derived floor is within 4 standard errors of it."""
    law = parse_law(USER_LAW)
    fl = nv.floor(law, BOTH_EVOLVED)
    assert fl.regime == "scaled" and fl.params[0] < 0 and fl.value < fl.stable
    s = law.s_law().sample(200_000, np.random.default_rng(7))
    lam = 1 + s

    def excess(tau):
        P = (1 - np.exp(-tau * lam)) / lam if tau != 0 else np.zeros_like(lam)
        return s / lam * (lam * P**2 - 1) ** 2

    taus = np.linspace(-1.0, 1.0, 401)
    means = np.array([excess(t).mean() for t in taus])
    best = int(np.argmin(means))
    se = excess(taus[best]).std(ddof=1) / math.sqrt(s.size)
    assert abs(means[best] - fl.value) <= 4 * se + (taus[1] - taus[0]) ** 2  # grid: quadratic in the step
    assert abs(taus[best] - fl.params[0]) <= 2 * (taus[1] - taus[0]) + 0.05
    stable = (s / lam * (1 / lam - 1) ** 2).mean()
    assert abs(stable - fl.stable) <= 4 * (s / lam * (1 / lam - 1) ** 2).std(ddof=1) / math.sqrt(s.size)


def test_the_least_excess_approaches_the_floor_like_one_over_T():
    law = parse_law(USER_LAW)
    fl = nv.floor(law, BOTH_EVOLVED)
    gaps = [abs(nv.minimise(law, T, BOTH_EVOLVED).excess - fl.value) for T in (10, 100)]
    assert gaps[1] < gaps[0] / 5  # O(1/T): a decade of T divides it by about 10


def test_the_flow_from_zero_cannot_leave_zero_when_both_sides_evolve():
    """At θ = 0, P_T = 0 and the readout P² has gradient 2P·∂P = 0: the flow is stuck there."""
    fl = nv.gradient_flow(USER_LAW, 10, BOTH_EVOLVED)
    assert not fl.converged and fl.params == (0.0,) and "stuck" in fl.reason


def test_untied_and_unbounded_are_refused_in_one_line():
    with pytest.raises(InputError, match="untied LCA has its own numerics"):
        nv.minimise(USER_LAW, 10, "param=untied")
    with pytest.raises(Exception, match="bounded"):
        nv.floor("s=exponential(1)", BOTH_EVOLVED)


# ---- claims ---------------------------------------------------------------------------------

def test_a_theorem_on_another_variant_is_hypothesis_not_met_and_computes_nothing(tmp_path):
    import mmicl

    (r,) = mmicl.verify("thm6.2", size="smoke", out=tmp_path, variant="readout=evolved-keys-and-query")
    assert r.verdict == "hypothesis-not-met" and r.checks == []
    assert "default LCA" in r.hypotheses[0].text and "variant.*" in r.hypotheses[0].detail


def test_variant_floor_holds_at_the_smoke_size_on_both_evolved(tmp_path):
    import mmicl

    (r,) = mmicl.verify("variant.floor", size="smoke", out=tmp_path, variant="readout=evolved-keys-and-query")
    assert r.verdict == "holds", r.verdict_reason
    assert r.summary["regime"] == "scaled" and r.summary["floor"] < r.summary["stable"]


# ---- the limit check's decision rule -----------------------------------------------------------

from mmicl.proofs.claims.variants import _limit_rule  # noqa: E402


@pytest.mark.parametrize("gap, expected", [
    ([1e-2, 1e-3, 1e-4], True),        # falls like 1/T: holds
    ([1e-2, 9e-3, 8.5e-3], False),     # two flat decades above accuracy: a plateau at another value
    ([1e-2, 1e-3, 9e-4], None),        # fell, then flat: cannot say
    ([1e-2, 1e-3, 1e-20], True),       # within the accuracy at the deepest depth
    ([1e-2, -1e-3, 1e-4], True),       # the sign does not matter: |E_T − F| falls
])
def test_the_limit_rule_decides_what_it_says(gap, expected):
    Ts = [10, 100, 1000]
    passed, slopes = _limit_rule(Ts, np.array(gap), np.full(3, 1e-15))
    assert passed is expected
    assert slopes["last_slope"] == pytest.approx(math.log10(abs(gap[2]) / abs(gap[1])))


def test_an_atom_at_the_top_leaves_a_zero_floor_checked_and_a_positive_one_not(tmp_path):
    """On s=twopoint(1,3,0.3) (an atom at s_hi): the default's floor is 0, which the alternating
    regime cannot undercut, so its hypothesis is met; with both sides evolved the floor is
    positive and the claim says hypothesis-not-met.  (The hypothesis was once decided before the
    floor was known, so a zero floor never counted.)"""
    import mmicl

    law = "s=twopoint(1,3,0.3)"
    (r,) = mmicl.verify("variant.floor", size="smoke", out=tmp_path, law=law, variant="param=two")
    assert all(h.met for h in r.hypotheses) and r.verdict != "hypothesis-not-met", r.verdict_reason
    (r,) = mmicl.verify("variant.floor", size="smoke", out=tmp_path, law=law, variant="readout=evolved-keys-and-query")
    assert r.verdict == "hypothesis-not-met" and "an atom" in r.hypotheses[-1].detail
