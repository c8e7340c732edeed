"""The API guards what the command line guards (issue 18): every refusal is one short line, a
``ValueError`` subclass (``InputError`` or ``LawError``), raised before any work starts.

"Before any work" is checked without a clock: the law's computations (``TaskLaw.s_law``,
``TaskLaw.rule``, a claim's ``run``) are replaced by a function that raises ``AssertionError``, which
is not a ``ValueError``: a refusal that came after the work had started fails the test.  The limits
themselves are ``numerics.validate``'s, and the command line uses the same numbers."""
from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import mmicl
from mmicl.numerics import validate as V
from mmicl.numerics.lca import two_parameter_terms
from mmicl.numerics.laws.task import TaskLaw, ZetaLaw
from mmicl.numerics.validate import InputError
import inspect

LAW = "s=uniform(0.5,4)"
EXP = "s=exponential(1)"


def _boom(*args, **kwargs):
    raise AssertionError("the computation started: the refusal came too late")


@pytest.fixture
def no_work(monkeypatch):
    """Every computation on a law fails loudly (not with a ValueError).  The rules the numerics
    memoise per (law, depth) are forgotten first, so that a rule an earlier test built in this
    process does not let a call past the disabled computation."""
    from mmicl.numerics import asymptotics, lca, untied

    for cached in (lca._rule, untied.cached_excess_rule, asymptotics._alpha_expansion):
        cached.cache_clear()
    monkeypatch.setattr(TaskLaw, "s_law", _boom)
    monkeypatch.setattr(TaskLaw, "rule", _boom)
    from mmicl.proofs.claim import Claim

    monkeypatch.setattr(Claim, "run", _boom)


def _one_line_refusal(call, *match: str) -> str:
    with pytest.raises(ValueError) as info:
        call()
    assert isinstance(info.value, (InputError, mmicl.LawError)), type(info.value)
    message = str(info.value)
    first = message.splitlines()[0]
    assert "\n" not in message or isinstance(info.value, mmicl.LawError), message  # a syntax error adds the grammar
    assert len(first) <= 300, len(first)
    for m in match:
        assert m in message, (m, message)
    return message


# every public function that takes a law, called with LAW text ``law`` (the rest of its arguments fixed)
LAW_CALLS = {
    "alpha_star": lambda law: mmicl.alpha_star(law),
    "alpha_T": lambda law: mmicl.alpha_T(law, 10),
    "alpha_T_mp": lambda law: mmicl.alpha_T_mp(law, 10),
    "excess_risk": lambda law: mmicl.excess_risk(law, 10),
    "bayes_risk": lambda law: mmicl.bayes_risk(law),
    "population_loss": lambda law: mmicl.population_loss(law, 3, 0.3),
    "TwoParameterLoss": lambda law: mmicl.TwoParameterLoss(law, 5),
    "minimise_two": lambda law: mmicl.minimise_two(law, 5),
    "flow_one": lambda law: mmicl.flow_one(law, 5),
    "flow_two": lambda law: mmicl.flow_two(law, 5),
    "alpha_expansion": lambda law: mmicl.alpha_expansion(law),
    "excess_expansion": lambda law: mmicl.excess_expansion(law),
    "alpha_T_unbounded": lambda law: mmicl.alpha_T_unbounded(law, 5),
    "optimal_schedule": lambda law: mmicl.optimal_schedule(law, 5),
    "untied_excess": lambda law: mmicl.untied_excess(law, [0.3, 0.3]),
    "certify_alpha_T": lambda law: mmicl.certify_alpha_T(law, 5),
    "certify_gap": lambda law: mmicl.certify_gap(law),
    "certify_all_depths": lambda law: mmicl.certify_all_depths(law),
    "best_lsa": lambda law: mmicl.best_lsa(law),
    "verify": lambda law: mmicl.verify("thm6.2", law=law),
}


# --- ζ: one stated range of E[ζ²], judged without squaring -----------------------------------

@pytest.mark.parametrize("name", LAW_CALLS)
@pytest.mark.parametrize("c", ["1e200", "1e-200", "1e16", "-1e-16"])
def test_zeta_outside_its_range_is_one_line_naming_the_range(name, c, no_work):
    message = _one_line_refusal(lambda: LAW_CALLS[name](f"{LAW}; zeta=const({c})"), "[1e-30, 1e+30]")
    assert "ζ ≡ 0" not in message.replace("not ζ ≡ 0", "")


@pytest.mark.parametrize("c", [1e200, 1e-200, -1e200])
def test_a_zeta_law_built_directly_is_refused_the_same_way(c):
    _one_line_refusal(lambda: ZetaLaw("const", c), "[1e-30, 1e+30]")
    _one_line_refusal(lambda: ZetaLaw("samples", samples=(c, c)), "[1e-30, 1e+30]")


def test_zeta_at_the_ends_of_its_range_is_taken_and_scales_the_risk():
    assert mmicl.alpha_T(f"{LAW}; zeta=const(1e15)", 10) == mmicl.alpha_T(LAW, 10)  # α_T does not depend on ζ
    for c in (1e-15, 1e15):
        ratio = mmicl.bayes_risk(f"{LAW}; zeta=const({c:g})") / mmicl.bayes_risk(LAW)
        assert ratio == pytest.approx(c * c, rel=1e-12)
    _one_line_refusal(lambda: ZetaLaw("const", 0.0), "ζ ≡ 0")  # a true ζ ≡ 0 is still called that


def test_the_command_line_refuses_zeta_with_the_same_range():
    from mmicl.cli import main

    for z in ("const(1e200)", "const(1e-200)"):
        r = CliRunner().invoke(main, ["alpha", "--law", LAW, "--T", "3", "--zeta", z])
        assert r.exit_code == 2 and "[1e-30, 1e+30]" in r.output and "Traceback" not in r.output, r.output


# --- depths: one limit per function, refused before any work ---------------------------------

DEPTH_CALLS = {
    "alpha_T": (lambda T: mmicl.alpha_T(LAW, T), V.MAX_DEPTH_ONE),
    "excess_risk": (lambda T: mmicl.excess_risk(LAW, T), V.MAX_DEPTH_ONE),
    "two_parameter_terms": (lambda T: two_parameter_terms(LAW, T, 0.3, -0.2), V.MAX_DEPTH_TWO),
    "flow_one": (lambda T: mmicl.flow_one(LAW, T), V.MAX_DEPTH_ONE),
    "alpha_T_mp": (lambda T: mmicl.alpha_T_mp(LAW, T), V.MAX_DEPTH_MP),
    "TwoParameterLoss": (lambda T: mmicl.TwoParameterLoss(LAW, T), V.MAX_DEPTH_TWO),
    "minimise_two": (lambda T: mmicl.minimise_two(LAW, T), V.MAX_DEPTH_TWO),
    "flow_two": (lambda T: mmicl.flow_two(LAW, T), V.MAX_DEPTH_FLOW_TWO),
    "optimal_schedule": (lambda T: mmicl.optimal_schedule(LAW, T), V.MAX_DEPTH_UNTIED),
    "untied_excess": (lambda T: mmicl.untied_excess(LAW, [0.3] * T), V.MAX_DEPTH_UNTIED),
    "alpha_T_unbounded": (lambda T: mmicl.alpha_T_unbounded(EXP, T), V.MAX_DEPTH_UNBOUNDED),
}


@pytest.mark.parametrize("name", DEPTH_CALLS)
def test_a_depth_beyond_the_functions_limit_is_refused_before_any_work(name, no_work):
    call, limit = DEPTH_CALLS[name]
    for T in (limit + 1, 10**7) if name != "untied_excess" else (limit + 1,):
        _one_line_refusal(lambda: call(T), f"≤ {limit}")


@pytest.mark.parametrize("name", [n for n in DEPTH_CALLS if n != "untied_excess"])
@pytest.mark.parametrize("T", [True, np.True_, 2.5, np.float32(2.5), float("inf"), "3", None, np.array([3]), 0],
                         ids=repr)
def test_a_depth_that_is_no_whole_number_is_refused_before_any_work(name, T, no_work):
    _one_line_refusal(lambda: DEPTH_CALLS[name][0](T), "depth T")


INTEGRAL = [np.int64(4), 4.0, np.float32(4.0), np.float64(4.0), np.array(4)]


@pytest.mark.parametrize("name", [n for n in DEPTH_CALLS if n != "untied_excess"])  # its depth is a length
@pytest.mark.parametrize("T", INTEGRAL, ids=repr)
def test_integral_depths_of_every_numeric_type_pass_the_guard(name, T, no_work):
    """Taken: the call gets past its guard into the (disabled) computation."""
    with pytest.raises(AssertionError, match="computation started"):
        DEPTH_CALLS[name][0](T)


@pytest.mark.parametrize("T", INTEGRAL, ids=repr)
def test_an_integral_depth_of_any_type_is_that_depth(T):
    assert V.check_depth(T) == 4 and type(V.check_depth(T)) is int
    assert mmicl.alpha_T(LAW, T) == mmicl.alpha_T(LAW, 4)
    assert mmicl.optimal_schedule(LAW, T) == mmicl.optimal_schedule(LAW, 4)


# --- real parameters: numpy scalars and 0-d arrays taken, arrays with ndim > 0 refused -------

REAL_CALLS = {
    "flow_one alpha0": lambda x: mmicl.flow_one(LAW, 5, alpha0=x),
    "flow_two alpha0": lambda x: mmicl.flow_two(LAW, 3, alpha0=x, beta0=-0.1),
    "flow_two beta0": lambda x: mmicl.flow_two(LAW, 3, alpha0=0.1, beta0=x),
    "excess_risk alpha": lambda x: mmicl.excess_risk(LAW, 5, x),
    "population_loss alpha": lambda x: mmicl.population_loss(LAW, 5, x),
}


@pytest.mark.parametrize("name", REAL_CALLS)
@pytest.mark.parametrize("x", [np.array([0.1]), np.array([[0.1]]), np.array([0.1, 0.2]), True, "0.1",
                               float("nan"), None], ids=repr)
def test_a_real_parameter_that_is_not_one_number_is_one_line(name, x, no_work):
    if x is None and "flow" not in name:
        return  # excess_risk(law, T, None): at α_T, by design
    _one_line_refusal(lambda: REAL_CALLS[name](x))


@pytest.mark.parametrize("name", REAL_CALLS)
@pytest.mark.parametrize("x", [np.float64(0.1), np.array(0.1), np.float32(0.1), 0], ids=repr)
def test_numpy_scalars_and_0d_arrays_pass_the_guard(name, x, no_work):
    with pytest.raises(AssertionError, match="computation started"):
        REAL_CALLS[name](x)


def test_a_numpy_scalar_or_0d_array_is_that_number():
    want = mmicl.excess_risk(LAW, 5, 0.1).log10
    for x in (np.float64(0.1), np.array(0.1)):
        assert mmicl.excess_risk(LAW, 5, x).log10 == want
    assert mmicl.excess_risk(LAW, 5, np.float32(0.1)).log10 == pytest.approx(want, rel=1e-6)
    assert mmicl.flow_one(LAW, 3, alpha0=np.array(0.1)).alpha == mmicl.flow_one(LAW, 3, alpha0=0.1).alpha


def test_flow_tolerances_are_checked_too(no_work):
    _one_line_refusal(lambda: mmicl.flow_one(LAW, 5, rtol=np.array([1e-8])), "rtol")
    _one_line_refusal(lambda: mmicl.flow_two(LAW, 5, atol=-1.0), "atol")


# --- sizes: best_lsa and verify -------------------------------------------------------------

@pytest.mark.parametrize("law", [f"{LAW}; d1=1000000", f"{LAW}; d1=600; d2=600"])
@pytest.mark.parametrize("name", ["best_lsa", "verify"])
def test_a_dimension_beyond_max_dim_is_refused_before_any_work(name, law, no_work):
    limit = V.MAX_DIM_VERIFY if name == "verify" else V.MAX_DIM
    _one_line_refusal(lambda: LAW_CALLS[name](law), f"≤ {limit}")


def test_best_lsa_refuses_moments_that_would_not_fit_before_allocating(monkeypatch):
    from mmicl.numerics import lsa

    monkeypatch.setattr(lsa, "conditional_moments", _boom)
    law = "sv=uniform(0.2,1); sr=beta(2,2,0.5,2); d1=128; d2=128"  # 32 400 nodes × 256²: 16 GiB
    _one_line_refusal(lambda: mmicl.best_lsa(law), "GiB")
    _one_line_refusal(lambda: lsa.lsa_excess(law, 0.1), "GiB")


def test_verify_with_cuda_where_there_is_none_is_one_line(monkeypatch, no_work):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    _one_line_refusal(lambda: mmicl.verify("thm6.2", device="cuda"), "CUDA", "device='cpu'")
    _one_line_refusal(lambda: mmicl.verify("thm6.2", device="gpu"), "'cpu' or 'cuda'")


def test_verify_refuses_what_the_command_line_refuses(no_work):
    _one_line_refusal(lambda: mmicl.verify("thm6.2", law="s=uniform(0,1e7)"), "≤ 1e+06")


# --- error lines stay short: a law's text is abbreviated ------------------------------------

ATOMS = ",".join(f"{1 + i * 1e-4:.4f}:0.0001" for i in range(10_000))
LONG_BAD_LAWS = {
    "probabilities": f"s=discrete({ATOMS},2:0.5)",
    "negative": f"s=discrete(-{ATOMS})",
    "syntax": f"s=discrete(x{ATOMS})",
    "key": f"s=discrete({ATOMS}); bogus=1",
    "mixture": f"s=mix(0.5*discrete({ATOMS}),0.7*point(1))",
}


@pytest.mark.parametrize("bad", LONG_BAD_LAWS, ids=list(LONG_BAD_LAWS))
@pytest.mark.parametrize("name", ["alpha_T", "best_lsa", "verify", "flow_two"])
def test_a_long_bad_law_gets_short_error_lines(name, bad, no_work):
    message = _one_line_refusal(lambda: LAW_CALLS[name](LONG_BAD_LAWS[bad]), "characters)")
    assert max(len(line) for line in message.splitlines()) <= 300


def test_abbreviate_keeps_short_text_and_says_the_length_of_long_text():
    assert V.abbreviate("s=point(1)") == "s=point(1)"
    long = "x" * 1000
    assert V.abbreviate(long) == "x" * V.MAX_QUOTE + "… (1000 characters)"
    reason = ": probabilities must sum to 1"
    assert V.shorten_message("d(" + "1:0.1," * 500 + ")" + reason).endswith(reason)


# --- one set of limits: the command line imports them ---------------------------------------

def test_the_command_line_uses_the_apis_limits():
    from mmicl.commands import common, limits

    assert common.MAX_DEPTH == V.MAX_DEPTH_ONE
    assert common.MAX_FLOW2_DEPTH == V.MAX_DEPTH_FLOW_TWO
    assert common.MAX_DIM == V.MAX_DIM
    assert limits.MAX_T == V.MAX_DEPTH_ONE
    assert limits.MAX_T_TWO <= min(V.MAX_DEPTH_TWO, V.MAX_DEPTH_FLOW_TWO)
    assert limits.MAX_T_UNTIED <= V.MAX_DEPTH_UNTIED
    from mmicl.numerics import unbounded, untied

    assert untied.MAX_DEPTH == V.MAX_DEPTH_UNTIED
    assert unbounded.MAX_DEPTH_UNBOUNDED == V.MAX_DEPTH_UNBOUNDED


@pytest.mark.subprocess
def test_verify_refuses_a_law_beyond_its_own_dimension_limit_before_any_claim_runs(monkeypatch):
    """d1 + d2 = 64 fits MAX_DIM but not verify's Monte Carlo (8.7 GB and > 400 s measured at the
    quick size): refused in one line by the API and the command line, before any claim runs."""
    import subprocess
    import sys

    import mmicl
    from mmicl.numerics.validate import MAX_DIM, MAX_DIM_VERIFY
    from mmicl.proofs import claim as registry

    assert MAX_DIM_VERIFY < 64 <= MAX_DIM
    monkeypatch.setattr(registry.Claim, "run", lambda *a, **k: (_ for _ in ()).throw(AssertionError("ran")))
    with pytest.raises(ValueError) as e:
        mmicl.verify("thm4.1", law="s=uniform(0.5,4); d1=32; d2=32")
    assert "\n" not in str(e.value) and "≤ 32" in str(e.value)
    out = subprocess.run([sys.executable, "-m", "mmicl.cli", "verify", "--quick", "--claim", "thm4.1",
                          "--law", "s=uniform(0.5,4); d1=32; d2=32"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2 and "d1 + d2 = 64" in out.stderr


LAW = "s=uniform(0.5,4)"

EXP = "s=exponential(2)"

DEPTH_NAMES = ("T", "depth")

EXTRA = {"alpha": 0.3, "variant": "readout=evolved-keys-and-query", "params": (0.1,)}  # other required parameters a depth function may have

def _depth_functions():
    out = []
    for name in mmicl.__all__:
        obj = getattr(mmicl, name)
        if not callable(obj) or inspect.isclass(obj) and issubclass(obj, BaseException):
            continue
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            continue
        if any(p in sig.parameters for p in DEPTH_NAMES):
            out.append(name)
    return out

DEPTH_FUNCTIONS = _depth_functions()


def test_the_depth_functions_are_found():
    """The discovery below is not empty and finds the functions known to take a depth."""
    assert {"alpha_T", "alpha_T_mp", "excess_risk", "population_loss", "TwoParameterLoss", "minimise_two",
            "flow_one", "flow_two", "alpha_T_unbounded", "optimal_schedule", "certify_alpha_T"} <= set(DEPTH_FUNCTIONS)


@pytest.mark.parametrize("name", DEPTH_FUNCTIONS)
@pytest.mark.parametrize("T", [True, False, np.True_, np.False_], ids=repr)
def test_every_public_function_with_a_depth_refuses_a_bool(name, T):
    """``True`` is not a number of layers (accepting it would compute at T = 1): every public API
    function with a parameter named T or depth refuses a bool with a ValueError that says so."""
    fn = getattr(mmicl, name)
    sig = inspect.signature(fn)
    depth = next(p for p in DEPTH_NAMES if p in sig.parameters)
    kwargs = {depth: T}
    for pname, p in sig.parameters.items():
        if pname == depth or p.default is not inspect.Parameter.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if pname == "law":
            kwargs["law"] = EXP if "unbounded" in name else LAW
        elif pname in EXTRA:
            kwargs[pname] = EXTRA[pname]
        else:
            pytest.fail(f"{name} has a required parameter {pname!r} this test does not know how to fill")
    with pytest.raises(ValueError, match="bool|depth"):
        fn(**kwargs)


def test_a_bool_context_length_is_refused():
    for n in (True, False):
        with pytest.raises(ValueError):
            mmicl.best_lsa(LAW, n=n)


@pytest.mark.parametrize("n", [True, False, np.True_])
def test_a_count_refuses_a_bool(n):
    """``check_count`` (grid sizes, sample counts) refuses a bool as check_depth does
    (mutant validate_count_bool)."""
    from mmicl.numerics.validate import check_count

    with pytest.raises(ValueError, match="whole number"):
        check_count("the grid size n", n, 0, 101)
    assert check_count("the grid size n", np.int64(3), 1, 101) == 3
