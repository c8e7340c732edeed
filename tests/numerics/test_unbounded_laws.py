"""An unbounded law given to a function that needs a bounded one is refused with the function that
takes it instead (``numerics.lca.UNBOUNDED_HINTS``, ``TaskLaw.require_bounded(hint=...)``)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import mmicl
from mmicl.numerics import lca
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.scalar import UnboundedSupportError
import math
from fractions import Fraction
import mpmath as mp
from mmicl.numerics.unbounded import stationarity_quadrature, stationarity_unbounded

EXP = "s=exponential(1)"

# (the call, the pointer its message must end with)
CASES = [
    ("alpha_T", lambda law: mmicl.alpha_T(law, 10), "in place of alpha_T, for s = exponential(rate) use "
                                                    "mmicl.alpha_T_unbounded(law, T)"),
    ("alpha_T_mp", lambda law: mmicl.alpha_T_mp(law, 3), "in place of alpha_T_mp, for s = exponential(rate) use "
                                                         "mmicl.alpha_T_unbounded(law, T)"),
    ("loss_gradient_one", lambda law: lca.loss_gradient_one(law, 3, 0.5),
     "mmicl.numerics.unbounded.stationarity_unbounded(law, T, alpha)"),
    ("mmicl.excess_risk", lambda law: mmicl.excess_risk(law, 10), "mmicl.alpha_T_unbounded(law, T) gives its minimiser"),
    ("excess_risk", lambda law: lca.excess_risk(law, 3, 0.5), "mmicl.alpha_T_unbounded(law, T)"),
    ("excess_risk two", lambda law: lca.excess_risk(law, 3, 0.5, -0.1), "mmicl.alpha_T_unbounded(law, T)"),
    ("population_loss", lambda law: mmicl.population_loss(law, 3, 0.5), "mmicl.alpha_T_unbounded(law, T)"),
]


@pytest.mark.parametrize("name, call, pointer", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("law", [EXP, "s=mix(0.5*point(1),0.5*exponential(2))"])
def test_an_unbounded_law_is_told_what_to_call_instead(name, call, pointer, law):
    with pytest.raises(UnboundedSupportError) as e:
        call(law)
    message = str(e.value)
    assert "\n" not in message
    key = {"population_loss": "excess_risk"}.get(name, name.split()[0].removeprefix("mmicl."))
    assert "must be bounded" in message and message.endswith("; " + lca.UNBOUNDED_HINTS[key])
    assert pointer in message


def test_the_pointers_lead_to_functions_that_take_the_law():
    from mmicl.numerics.unbounded import stationarity_unbounded

    a = mmicl.alpha_T_unbounded(EXP, 10)
    assert 0 < a < 1
    assert abs(float(stationarity_unbounded(parse_law(EXP), 10, a))) < 1e-6


def test_without_a_hint_the_message_is_unchanged_and_a_bounded_law_passes():
    law = parse_law(EXP)
    with pytest.raises(UnboundedSupportError) as plain:
        law.require_bounded("x")
    with pytest.raises(UnboundedSupportError) as hinted:
        law.require_bounded("x", hint="call y")
    assert str(hinted.value) == f"{plain.value}; call y"
    assert parse_law("s=uniform(0.5,4)").require_bounded("x", hint="call y") == (0.5, 4.0)
    assert parse_law("s=uniform(0.5,4)").require_signal("x", hint="call y") == (0.5, 4.0)


def test_the_alpha_command_points_to_limits():
    from mmicl.cli import main

    r = CliRunner().invoke(main, ["alpha", "--law", EXP, "--T", "3"])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "run: mmicl limits --law 's=exponential(1); zeta=normal; d1=1; d2=1'" in r.output


def exact_G(k: Fraction, T: int, alpha: Fraction) -> Fraction:
    """G(α) = E[s (α(1+s) − 1)^{2T−1}] for s ~ exponential(k), exactly: expand r = αs + (α − 1)
    binomially and use E[s^m] = m!/k^m."""
    n = 2 * T - 1
    return sum(Fraction(math.comb(n, j)) * alpha**j * (alpha - 1) ** (n - j) * math.factorial(j + 1) / k ** (j + 1)
               for j in range(n + 1))

def quad_G(k: float, T: int, alpha: float) -> mp.mpf:
    """The same G by mpmath quadrature against the density k e^{−ks} (split where r = 0)."""
    with mp.workdps(30):
        k, a = mp.mpf(k), mp.mpf(alpha)
        n = 2 * T - 1
        s0 = (1 - a) / a
        f = lambda s: s * (a * (1 + s) - 1) ** n * k * mp.exp(-k * s)  # noqa: E731
        return mp.quad(f, [0, s0, s0 + 40 / k, mp.inf])


@pytest.mark.parametrize("k", [Fraction(1, 2), Fraction(1), Fraction(2), Fraction(3)])
@pytest.mark.parametrize("T", [1, 2, 4])
@pytest.mark.parametrize("alpha", [Fraction(1, 5), Fraction(1, 2), Fraction(4, 5)])
def test_exponential_stationarity_against_exact_moments_and_quadrature(k, T, alpha):
    """``stationarity_unbounded`` and ``stationarity_quadrature`` against exact rational arithmetic
    (and, for the smaller depths, an independent mpmath quadrature): a slip by a power of k moves
    the value for every k ≠ 1 even where it keeps the root."""
    law = f"s=exponential({float(k)!r})"
    want = exact_G(k, T, alpha)
    scale = float(sum(abs(Fraction(math.comb(2 * T - 1, j)) * alpha**j * (alpha - 1) ** (2 * T - 1 - j))
                      * math.factorial(j + 1) / k ** (j + 1) for j in range(2 * T)))
    got = stationarity_unbounded(law, T, float(alpha))
    assert abs(float(got) - float(want)) <= 1e-15 * scale + 1e-15 * abs(float(want))
    got_q = stationarity_quadrature(law, T, float(alpha))
    assert abs(float(got_q) - float(want)) <= 1e-10 * scale
    if T <= 2:
        assert abs(float(quad_G(float(k), T, float(alpha))) - float(want)) <= 1e-12 * scale


@pytest.mark.parametrize("k", [0.5, 3.0])
def test_alpha_T_unbounded_is_the_root_of_the_exact_G(k):
    """At T = 2 the minimiser is where the exact G changes sign: G(α_T(1 ∓ 1e-9)) have opposite
    signs (G increases in α)."""
    a = mmicl.alpha_T_unbounded(f"s=exponential({k!r})", 2)
    kf = Fraction(k)
    assert exact_G(kf, 2, Fraction(a * (1 - 1e-9))) < 0 < exact_G(kf, 2, Fraction(a * (1 + 1e-9)))
