"""An unbounded law given to a function that needs a bounded one is refused with the function that
takes it instead (``numerics.lca.UNBOUNDED_HINTS``, ``TaskLaw.require_bounded(hint=...)``)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

import mmicl
from mmicl.numerics import lca
from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.laws.scalar import UnboundedSupportError

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
