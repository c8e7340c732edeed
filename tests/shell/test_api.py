"""The public API of ``import mmicl``: LAW text wherever a law goes, depths checked at the boundary,
trajectories with a real time axis, and no global state changed by importing it."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import mmicl
from mmicl.numerics.models import LCA, ReducedLCA

TEXT = "s=uniform(0.5,4)"
LAW = mmicl.parse_law(TEXT)
TWO_MODALITY = "sv=uniform(0.2,1); sr=uniform(0.5,2); d1=3; d2=2"


def test_every_public_name_resolves_and_is_listed():
    for name in mmicl.__all__:
        assert getattr(mmicl, name) is not None
    assert set(dir(mmicl)) == set(mmicl.__all__)
    with pytest.raises(AttributeError):
        mmicl.no_such_name  # noqa: B018


# (function, arguments after the law): each must give the same answer for LAW text and a TaskLaw
CALLS = [
    ("alpha_star", ()),
    ("alpha_T", (10,)),
    ("bayes_risk", ()),
    ("excess_risk", (10,)),
    ("population_loss", (3, 0.3)),
    ("minimise_two", (5,)),
    ("best_lsa", ()),
]


@pytest.mark.parametrize("name,args", CALLS, ids=[c[0] for c in CALLS])
def test_functions_that_take_a_law_take_law_text_too(name, args):
    f = getattr(mmicl, name)
    assert repr(f(TEXT, *args)) == repr(f(LAW, *args))  # repr: results may hold numpy arrays


def test_flows_and_loss_objects_take_law_text():
    assert mmicl.flow_one(TEXT, 5).alpha == mmicl.flow_one(LAW, 5).alpha
    assert mmicl.flow_two(TEXT, 3, 0.1, -0.1).alpha == mmicl.flow_two(LAW, 3, 0.1, -0.1).alpha
    np.testing.assert_array_equal(mmicl.TwoParameterLoss(TEXT, 3).terms(0.3, -0.2),
                                  mmicl.TwoParameterLoss(LAW, 3).terms(0.3, -0.2))


def test_bad_law_text_is_a_law_error_with_the_grammar():
    with pytest.raises(mmicl.LawError, match="LAW"):
        mmicl.alpha_T("s=uniform(0.5,", 3)
    with pytest.raises(mmicl.LawError, match="TaskLaw or LAW text"):
        mmicl.alpha_T(3.0, 3)


BAD_DEPTHS = [0, -1, 2.5, "3", True, None, float("nan")]


@pytest.mark.parametrize("T", BAD_DEPTHS, ids=repr)
@pytest.mark.parametrize("call", [
    lambda T: mmicl.alpha_T(LAW, T),
    lambda T: mmicl.excess_risk(LAW, T, 0.3),
    lambda T: mmicl.flow_one(LAW, T),
    lambda T: mmicl.flow_two(LAW, T),
    lambda T: mmicl.minimise_two(LAW, T),
    lambda T: mmicl.TwoParameterLoss(LAW, T),
    lambda T: ReducedLCA(T, "one", 0.1),
    lambda T: LCA(2, T),
], ids=["alpha_T", "excess_risk", "flow_one", "flow_two", "minimise_two", "TwoParameterLoss", "ReducedLCA", "LCA"])
def test_depths_are_checked_at_the_boundary(call, T):
    with pytest.raises(ValueError, match="depth T"):
        call(T)


def test_an_integral_float_depth_is_that_depth():
    assert mmicl.alpha_T(LAW, 4.0) == mmicl.alpha_T(LAW, 4)
    assert ReducedLCA(np.int64(3)).T == 3


def test_excess_risk_defaults_to_alpha_T_and_never_overflows():
    at = mmicl.excess_risk(LAW, 10)
    assert at.value == mmicl.excess_risk(LAW, 10, mmicl.alpha_T(LAW, 10)).value
    deep = mmicl.excess_risk(LAW, 10_000)
    assert deep.value is None and math.isfinite(deep.log10) and deep.log10 < -300


def test_one_parameter_trajectory_is_1d_with_a_real_time_axis():
    f = mmicl.flow_one(LAW, 10, 0.0, time="real")
    assert f.alphas.ndim == 1 and f.time.ndim == 1 and len(f.alphas) == len(f.time)
    assert f.betas is None and f.time[0] == 0 and np.all(np.diff(f.time) >= 0)


def test_the_rescaled_clock_reports_the_same_real_time_as_the_real_clock():
    """The rescaled orbit's real time comes from a quadrature of dt = dα/(−L'(α)); on the same orbit
    it must match the real-clock integration, whose rtol is 1e-11.  Compared at interior α
    (linear interpolation between solver steps: the tolerance 1e-3 covers it, measured ~1e-4)."""
    real = mmicl.flow_one(LAW, 10, 0.0, time="real")
    resc = mmicl.flow_one(LAW, 10, 0.0, time="rescaled")
    assert resc.clock == "rescaled"
    for a in (0.1, 0.2, 0.29):
        t1, t2 = np.interp(a, real.alphas, real.time), np.interp(a, resc.alphas, resc.time)
        assert abs(t1 - t2) <= 1e-3 * t1


def test_at_large_depth_the_real_time_is_given_in_log10():
    f = mmicl.flow_one(LAW, 1000)
    assert f.clock == "rescaled" and f.converged
    assert np.all(np.diff(f.log10_time[1:]) >= 0) and f.log10_time[-1] > 308
    assert np.isinf(f.time[-1])  # beyond float64: read log10_time


def test_two_parameter_trajectory_has_alpha_and_beta_columns():
    f = mmicl.flow_two(LAW, 3, 0.1, -0.1)
    assert f.alphas.shape == f.betas.shape == f.time.shape
    assert f.alphas[0] == pytest.approx(0.1) and f.betas[0] == pytest.approx(-0.1)


def test_verify_runs_a_claim_and_returns_its_verdict(tmp_path):
    from mmicl.proofs.claim import Check, Claim, Hypothesis
    from mmicl.proofs.registry import REGISTRY, register

    claim = register(Claim("test.api", "a claim", "1 = 1",
                           lambda cfg: ([Hypothesis("none", True)], [Check("1 = 1", "arithmetic", True)], {}, []),
                           default=False))
    try:
        (res,) = mmicl.verify("test.api", out=tmp_path)
        assert res.verdict == "holds" and res.verdict in mmicl.VERDICTS
        assert "test.api" in mmicl.claims() and "test.api" not in mmicl.claims(everything=False)
        with pytest.raises(mmicl.LawError):
            mmicl.verify("test.api", law="s=uniform(", out=tmp_path)
    finally:
        del REGISTRY[claim.id]


@pytest.mark.subprocess
def test_importing_mmicl_changes_no_global_state():
    """Import torch and matplotlib first, then mmicl and every public name: neither torch's thread
    count nor matplotlib's backend moves (run in a fresh interpreter)."""
    code = (
        "import matplotlib, torch\n"
        "before = (torch.get_num_threads(), matplotlib.get_backend())\n"
        "import mmicl\n"
        "for name in mmicl.__all__: getattr(mmicl, name)\n"
        "import mmicl.proofs.figures, mmicl.numerics.mc_figures, mmicl.numerics.testbed.figures\n"
        "import mmicl.proofs.claims\n"
        "after = (torch.get_num_threads(), matplotlib.get_backend())\n"
        "assert before == after, (before, after)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.subprocess
def test_the_command_line_starts_without_the_heavy_libraries():
    """``mmicl --help``, ``--version`` and ``laws`` load neither torch, SciPy, SymPy nor matplotlib
    (their start-up time is measured in benchmarks/bench_startup.py)."""
    code = (
        "import sys\n"
        "from mmicl.cli import main\n"
        "for args in (['--help'], ['--version'], ['verify', '--help'], ['laws']):\n"
        "    try: main(args)\n"
        "    except SystemExit: pass\n"
        "heavy = [m for m in ('torch', 'scipy', 'sympy', 'matplotlib') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


@pytest.mark.subprocess
def test_listing_claims_and_running_a_light_plugin_import_no_claim_module_and_no_heavy_library(tmp_path):
    """``mmicl claims`` lists the built-in claims from their table, and ``verify`` of a plugin claim
    that needs nothing heavy imports only what it runs: no built-in claim's module, no torch, SciPy,
    SymPy or matplotlib (``--device cpu``: ``auto`` asks torch where a GPU driver is present)."""
    (tmp_path / "light.py").write_text(
        "import mmicl\n"
        "@mmicl.claim('light.one', title='one', statement='1 == 1')\n"
        "def one(config):\n"
        "    return [], [mmicl.Check('one', 'exact', True, {'one': 1})]\n", encoding="utf-8")
    code = (
        "import sys\n"
        "from mmicl.cli import main\n"
        f"for args in (['claims'], ['claims', '--json'], ['verify', '--plugin', {str(tmp_path / 'light.py')!r}, "
        f"'--claim', 'light.*', '--device', 'cpu', '--out', {str(tmp_path / 'out')!r}]):\n"
        "    try: main(args)\n"
        "    except SystemExit as e: assert not e.code, (args, e.code)\n"
        "heavy = [m for m in ('torch', 'scipy', 'sympy', 'matplotlib') if m in sys.modules]\n"
        "claims = [m for m in sys.modules if m.startswith('mmicl.proofs.claims.') and m != 'mmicl.proofs.claims.catalog']\n"
        "assert not heavy and not claims, (heavy, claims)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "thm4.1" in p.stdout and "light.one" in p.stdout
    import json

    assert json.loads((tmp_path / "out" / "verdicts.json").read_text())["claims"][0]["verdict"] == "holds"


def test_a_built_in_claim_names_its_evaluate_and_imports_it_on_first_run():
    """Every entry of the catalog names a function that exists, and the registry's claim calls it."""
    import pickle

    from mmicl.proofs.claim import ModuleFunction
    from mmicl.proofs.claims.catalog import CATALOG
    from mmicl.proofs.verify import registered

    reg = registered()
    for entry in CATALOG:
        ev = reg[entry.id].evaluate
        assert isinstance(ev, ModuleFunction) and callable(ev.function()), entry.id
        again = pickle.loads(pickle.dumps(ev))  # a claim travels to a Dask worker as its two names
        assert (again.module, again.name) == (ev.module, ev.name) and again.function() is ev.function()


def test_every_public_numerics_function_with_a_law_parameter_takes_law_text():
    """Structural: each public function of ``mmicl.numerics`` whose signature has ``law`` is wrapped
    by ``takes_law`` (so the rule holds for functions added later too)."""
    import importlib
    import inspect
    import pkgutil

    import mmicl.numerics
    from mmicl.numerics.laws.language import as_law, takes_law

    wrapper_code = takes_law(lambda law: law).__code__
    missing = []
    for info in pkgutil.walk_packages(mmicl.numerics.__path__, "mmicl.numerics."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != module.__name__:
                continue
            if obj is as_law:
                continue  # the coercion itself
            if "law" in inspect.signature(obj).parameters and obj.__code__ is not wrapper_code:
                missing.append(f"{info.name}.{name}")
    assert missing == []
    assert mmicl.numerics.sampling.sample_tasks.__wrapped__  # the scan did look at wrapped ones
