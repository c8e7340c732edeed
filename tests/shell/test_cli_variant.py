"""``--variant`` on alpha, flow2, limits and train: the numbers are numerics.variants' own, the JSON
is strict, bad values and clashing aliases are one-line usage errors, and the default variant
changes nothing."""
from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from mmicl.numerics.laws.language import parse_law
from mmicl.numerics.variants import excess_at, floor, gradient_flow, minimise, parse_variant
from mmicl.cli import main

LAW = "s=uniform(0.5,4)"
law = parse_law(LAW)


def run(*args, code=0):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == code, r.output
    return r.output


def strict(text):
    def no_constant(c):
        raise AssertionError(f"non-strict JSON constant {c}")

    return json.loads(text, parse_constant=no_constant)


def error_line(output):
    (line,) = [ln for ln in output.splitlines() if ln.startswith("Error")]
    return line


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300)


def check_floor(got, v):
    f = floor(law, v)
    assert got["regime"] == f.regime and close(got["value"], f.value)
    assert close(got["stable"], f.stable) and close(got["scaled"], f.scaled)
    assert list(got["phi"]) == list(f.names) and all(map(close, got["phi"].values(), f.params))


def check_minimiser(row, T, v):
    m = minimise(law, T, v)
    assert all(map(close, row["theta"].values(), m.params)) and close(row["excess"], m.excess)
    assert math.isclose(row["excess"], excess_at(law, T, v, m.params), rel_tol=1e-9)


def test_alpha_variant_is_the_numerics():
    text = "readout=evolved-keys-and-query"
    v = parse_variant(text)
    out = strict(run("alpha", "--law", LAW, "--variant", text, "--T", "3", "5", "--alpha0", "-0.01", "--json"))
    assert out["variant"] == v.text and out["params"] == ["alpha"]
    check_floor(out["floor"], v)
    for row, T in zip(out["rows"], (3, 5)):
        assert row["T"] == T
        check_minimiser(row, T, v)
        fl = gradient_flow(law, T, v, start=(-0.01,))
        assert row["flow"]["converged"] == fl.converged and row["flow"]["reason"] == fl.reason
        assert close(row["flow"]["params"]["alpha"], fl.params[0])
    text_out = run("alpha", "--law", LAW, "--variant", text, "--T", "3")
    assert "floor" in text_out and "θ_T" in text_out


def test_alpha_variant_refusals():
    line = error_line(run("alpha", "--law", LAW, "--variant", "param=untied", "--T", "3", code=2))
    assert "mmicl limits --model untied" in line
    line = error_line(run("alpha", "--law", LAW, "--variant", "f0=tokens,param=two", "--alpha0", "0.1", "--T", "3",
                          code=2))
    assert "flow2" in line


def test_flow2_variant_is_the_numerics():
    text = "f0=tokens,param=two"
    v = parse_variant(text)
    out = strict(run("flow2", "--law", LAW, "--T", "3", "--variant", text, "--alpha0", "0.1", "--json"))
    fl, m = gradient_flow(law, 3, v, start=(0.1, 0.0)), minimise(law, 3, v)
    assert out["variant"] == v.text and out["converged"] == fl.converged and out["reason"] == fl.reason
    assert close(out["alpha"], fl.params[0]) and close(out["beta"], fl.params[1])
    assert all(map(close, out["minimiser"], m.params)) and close(out["minimiser_excess"], m.excess)
    # a variant whose prediction does not depend on α: α is null with its reason
    out = strict(run("flow2", "--law", LAW, "--T", "3", "--variant",
                     "readout=evolved-keys,f0=tokens,skip=off,param=two", "--json"))
    assert out["alpha"] is None and "alpha_null_reason" in out and out["params"] == ["beta"]


def test_flow2_refuses_param_one_in_one_line():
    line = error_line(run("flow2", "--law", LAW, "--T", "3", "--variant", "f0=tokens", code=2))
    assert "two-parameter flow" in line and "mmicl alpha --variant f0=tokens" in line


def test_limits_variant_is_the_numerics():
    text = "skip=off,f0=tokens"
    v = parse_variant(text)
    out = strict(run("limits", "--law", LAW, "--variant", text, "--T-max", "20", "--json"))
    check_floor(out["floor"], v)
    assert [r["T"] for r in out["rows"]] == [10, 20]
    for r in out["rows"]:
        check_minimiser(r, r["T"], v)
        assert close(r["gap_to_floor"], r["excess"] - out["floor"]["value"])
    assert "not derived for variants" in out["note"]
    assert "not derived for variants" in run("limits", "--law", LAW, "--variant", text, "--T-max", "10")


def test_limits_model_is_an_alias_of_param():
    a = run("limits", "--law", LAW, "--model", "untied", "--T-max", "5", "--json")
    assert run("limits", "--law", LAW, "--variant", "param=untied", "--T-max", "5", "--json") == a
    assert run("limits", "--law", LAW, "--variant", "param=untied", "--model", "untied", "--T-max", "5",
               "--json") == a
    line = error_line(run("limits", "--law", LAW, "--model", "two", "--variant", "f0=tokens", code=2))
    assert "--model two" in line and "--variant f0=tokens" in line


@pytest.fixture
def fast_stationary(monkeypatch):
    """lca1's stationary point (200k prompts, seconds) replaced by a stand-in: only the wiring is tested."""
    from mmicl.commands import train

    class Point:
        theta, se = [0.25], [0.0]

    monkeypatch.setattr(train, "stationary_point", lambda *a, **k: Point())


TRAIN = ("train", "--law", LAW, "--T", "3", "--steps", "30", "--batch", "64", "--samples", "200", "--n", "0",
         "--device", "cpu", "--json")


@pytest.mark.train
def test_train_variant_reports_the_trained_parameters_and_the_minimiser():
    text = "readout=evolved-keys-and-query"
    v = parse_variant(text)
    out = strict(run(*TRAIN, "--variant", text))
    m = minimise(law, 3, v)
    assert out["variant"] == v.text and set(out["params"]) == {"alpha"}
    assert out["start"] == {"alpha": math.copysign(0.01, m.params[0])}  # 0 is stationary: a small start
    assert all(map(close, out["minimiser"]["theta"].values(), m.params))
    assert out["excess_se"] > 0 and out["risk_se"] > 0
    out = strict(run(*TRAIN, "--variant", "f0=tokens,param=two", "--model", "lca2"))
    assert out["start"] == {"alpha": 0.0, "beta": 0.0}


def test_train_alias_rules():
    line = error_line(run(*TRAIN, "--variant", "f0=tokens", "--model", "lca2", code=2))
    assert "--model lca2" in line and "param=one" in line
    assert "--model lsa" in error_line(run(*TRAIN, "--variant", "f0=tokens", "--model", "lsa", code=2))
    assert "--model" in error_line(run(*TRAIN, code=2))
    assert "no parameters" in error_line(run(*TRAIN, "--variant", "skip=off", code=2))


@pytest.mark.parametrize("cmd", [("alpha", "--T", "3"), ("flow2", "--T", "3"), ("limits",), TRAIN[:1] + TRAIN[3:]])
def test_bad_variant_is_one_line_exit_2(cmd):
    line = error_line(run(*cmd, "--law", LAW, "--variant", "readout=sideways", code=2))
    assert "'--variant'" in line and "readout" in line


@pytest.mark.parametrize("args, same", [
    (("alpha", "--T", "3", "10"), ("--variant", "default")),
    (("alpha", "--T", "3", "--json"), ("--variant", "param=one")),
    (("flow2", "--T", "3", "--json"), ("--variant", "param=two")),
    (("flow2", "--T", "3"), ("--variant", "param=two")),
    (("limits", "--model", "untied", "--T-max", "5"), ("--variant", "param=untied")),
])
def test_default_variant_changes_nothing(args, same):
    assert run(*args, "--law", LAW, *same) == run(*args, "--law", LAW)


@pytest.mark.train
def test_train_default_variant_changes_nothing(fast_stationary):
    a = run(*TRAIN, "--model", "lca1")
    assert run(*TRAIN, "--variant", "param=one") == a
    assert run(*TRAIN, "--variant", "default", "--model", "lca1") == a
