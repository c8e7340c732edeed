"""The public claim API and plugins: a user's claim registers, runs, and is reported with its origin
beside the built-in claims; a bad id, a clash, a plugin that cannot be imported and an ``evaluate``
that raises each get their one-line error or their ``error`` verdict, and never stop the others."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import mmicl
from mmicl.numerics.strict_json import SCHEMA_VERSION
from mmicl.cli import main
from mmicl.proofs.claim import RunConfig
from mmicl.proofs.registry import REGISTRY


@pytest.fixture(autouse=True)
def _clean(clean_registry):  # tests/conftest.py
    yield


def _ok(config):
    return [], [mmicl.Check("true", "arithmetic", True)]


def test_the_claim_api_is_public():
    for name in ("Claim", "Check", "Hypothesis", "RunConfig", "ClaimResult", "VERDICTS", "claim", "register",
                 "decide", "hypotheses", "ClaimError", "PluginError"):
        assert name in mmicl.__all__ and getattr(mmicl, name) is not None
    assert set(mmicl.VERDICTS) == {"holds", "fails", "hypothesis-not-met", "inconclusive", "error"}


def test_a_decorated_claim_runs_with_its_origin_and_two_or_three_returns():
    @mmicl.claim("mine.two", title="t", statement="s")
    def two(config):
        return [mmicl.Hypothesis("h", True)], [mmicl.Check("c", "m", True)]

    @mmicl.claim("mine.three", title="t", statement="s")
    def three(config):
        return [], [mmicl.Check("c", "m", False)], {"x": 1.0}

    assert isinstance(two, mmicl.Claim) and two.origin == "user" and not two.default
    r2, r3 = mmicl.verify(["mine.two", "mine.three"])
    assert (r2.verdict, r2.origin, r3.verdict, r3.summary) == ("holds", "user", "fails", {"x": 1.0})
    assert json.loads(json.dumps(r2.to_json()))["origin"] == "user"


@pytest.mark.parametrize("bad, says", [
    ("thm6.mine", "the namespace 'thm6' is reserved"),
    ("testbed.claim99", "the namespace 'testbed' is reserved"),
    ("depth", "an id is 'namespace.name'"),
    ("mine", "an id is 'namespace.name'"),
    ("mine.", "an id is 'namespace.name'"),
    ("mine.a b", "an id is 'namespace.name'"),
    (42, "an id is 'namespace.name'"),
])
def test_a_bad_or_reserved_id_is_refused_in_one_line(bad, says):
    with pytest.raises(mmicl.ClaimError, match=says.replace(".", r"\.").replace("(", r"\(")):
        mmicl.register(mmicl.Claim(bad, "t", "s", _ok))


def test_registering_twice_needs_replace_and_builtin_claims_stay():
    mmicl.register(mmicl.Claim("mine.x", "first", "s", _ok))
    with pytest.raises(mmicl.ClaimError, match="registered twice: by user and by user; pass replace=True"):
        mmicl.register(mmicl.Claim("mine.x", "second", "s", _ok))
    mmicl.register(mmicl.Claim("mine.x", "second", "s", _ok), replace=True)
    assert REGISTRY["mine.x"].title == "second"
    mmicl.claims()  # the built-in claims are loaded
    with pytest.raises(mmicl.ClaimError, match="reserved"):
        mmicl.register(mmicl.Claim("thm6.2", "mine", "s", _ok), replace=True)
    with pytest.raises(mmicl.ClaimError, match="the origin 'built-in' is mmicl's own"):
        mmicl.register(mmicl.Claim("mine.y", "t", "s", _ok, origin="built-in"))
    assert REGISTRY["thm6.2"].origin == "built-in"


@pytest.mark.parametrize("returned, says", [
    (None, "evaluate must return (hypotheses, checks[, summary[, figures]]), got NoneType"),
    (([],), "got tuple of length 1"),
    (([], [1]), "the checks must be a list of mmicl.Check"),
    ((["h"], []), "the hypotheses must be a list of mmicl.Hypothesis"),
    (([], [], "x"), "the summary must be a dict"),
    (([], [], {}, "fig.png"), "the figures must be a list of paths"),
])
def test_a_wrong_return_value_is_an_error_verdict_that_says_why(returned, says):
    res = mmicl.Claim("mine.bad", "t", "s", lambda config: returned, origin="user").run(RunConfig())
    assert res.verdict == "error" and says in res.verdict_reason and "ClaimError" in res.verdict_reason


def test_an_evaluate_that_raises_is_an_error_verdict_but_bad_input_is_not():
    def boom(config):
        raise ZeroDivisionError("1/0 in my claim")

    res = mmicl.Claim("mine.boom", "t", "s", boom, origin="user").run(RunConfig())
    assert res.verdict == "error" and res.verdict_reason == "evaluate raised ZeroDivisionError: 1/0 in my claim"
    assert "ZeroDivisionError" in res.error and res.to_json()["error"] == res.error

    def bad_law(config):
        return mmicl.parse_law("s=uniform(4,1)"), []

    res = mmicl.Claim("mine.law", "t", "s", bad_law, origin="user").run(RunConfig())
    assert res.verdict == "error" and res.verdict_reason.startswith("evaluate raised LawSyntaxError") or "LawError" in res.error
    with pytest.raises(mmicl.LawError):  # a built-in claim: the --law given does not suit it, a usage error
        mmicl.Claim("thm6.law", "t", "s", bad_law, origin="built-in").run(RunConfig())


PLUGIN = '''
import mmicl

@mmicl.claim("mine.good", title="holds", statement="1 = 1")
def good(config):
    return [], [mmicl.Check("1 = 1", "arithmetic", True)]

@mmicl.claim("mine.boom", title="raises", statement="x")
def boom(config):
    raise RuntimeError("my bug")

@mmicl.claim("mine.after", title="runs after the error", statement="2 = 2")
def after(config):
    return [], [mmicl.Check("2 = 2", "arithmetic", True)]
'''


def test_verify_with_a_plugin_file_records_origins_and_runs_past_an_error(tmp_path):
    (tmp_path / "mine.py").write_text(PLUGIN)
    out = tmp_path / "r"
    r = CliRunner().invoke(main, ["verify", "--plugin", str(tmp_path / "mine.py"), "--claim", "mine.*",
                                  "--out", str(out)])
    assert r.exit_code == 1, r.output  # an error verdict, like fails
    assert "mine.boom (plugin file mine.py): evaluate raised RuntimeError: my bug" in r.output
    doc = json.loads((out / "verdicts.json").read_text())
    assert doc["schema_version"] == SCHEMA_VERSION and doc["run"]["state"] == "complete"
    assert [(c["id"], c["verdict"], c["origin"]) for c in doc["claims"]] == [
        ("mine.good", "holds", "plugin file mine.py"), ("mine.boom", "error", "plugin file mine.py"),
        ("mine.after", "holds", "plugin file mine.py")]
    md = (out / "report.md").read_text()
    assert "| mine.boom | **error** |" in md and "Origin: plugin file mine.py" in md and "RuntimeError: my bug" in md
    assert "plugin file mine.py" in (out / "report.html").read_text()


@pytest.mark.parametrize("source, says", [
    ("import mmicl\nraise ImportError('needs a package you lack')\n",
     "plugin file bad.py: cannot import {path}: ImportError: needs a package you lack"),
    ("import mmicl\nmmicl.register(mmicl.Claim('mine.good', 't', 's', lambda c: ([], [])))\n",
     "plugin file bad.py: claim 'mine.good' is registered twice: by plugin file mine.py and by plugin file bad.py"),
    ("import mmicl\nmmicl.register(mmicl.Claim('thm6.2', 't', 's', lambda c: ([], [])))\n",
     "plugin file bad.py: claim id 'thm6.2': the namespace 'thm6' is reserved"),
    ("def (:\n", "plugin file bad.py: cannot import {path}: SyntaxError"),
])
def test_a_plugin_that_cannot_load_stops_the_run_before_any_work(tmp_path, source, says):
    (tmp_path / "mine.py").write_text(PLUGIN)
    (tmp_path / "bad.py").write_text(source)
    out = tmp_path / "r"
    r = CliRunner().invoke(main, ["verify", "--plugin", str(tmp_path / "mine.py"), "--plugin", str(tmp_path / "bad.py"),
                                  "--claim", "mine.*", "--out", str(out)])
    assert r.exit_code == 2, r.output
    assert says.format(path=tmp_path / "bad.py") in r.output and "Traceback" not in r.output
    assert not out.exists()


def test_a_missing_plugin_is_one_line():
    r = CliRunner().invoke(main, ["verify", "--plugin", "no_such_plugin_module", "--claim", "x.*"])
    assert r.exit_code == 2 and "plugin module no_such_plugin_module: cannot import" in r.output
    r = CliRunner().invoke(main, ["claims", "--plugin", "missing.py"])
    assert r.exit_code == 2 and "plugin file missing.py: no such file" in r.output


def _fake_distribution(site: Path, body: str) -> None:
    """An installed distribution ``mypkg 0.1.0`` with the entry point ``mine = mypkg.claims``: a
    package and its ``.dist-info`` on a folder that ``importlib.metadata`` searches (``PYTHONPATH``)."""
    (site / "mypkg").mkdir(parents=True)
    (site / "mypkg" / "__init__.py").write_text("")
    (site / "mypkg" / "claims.py").write_text(body)
    info = site / "mypkg-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mypkg\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[mmicl.claims]\nmine = mypkg.claims\n")


def _python(site: Path, code: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


@pytest.mark.subprocess
def test_an_installed_plugin_is_seen_once_by_claims_and_verify(tmp_path):
    counter = tmp_path / "imports.txt"
    _fake_distribution(tmp_path / "site", f"import pathlib\npathlib.Path({str(counter)!r}).open('a').write('x')\n" + PLUGIN)
    code = textwrap.dedent("""
        import json, sys
        import mmicl
        from click.testing import CliRunner
        from mmicl.cli import main
        listed = mmicl.claims()
        mmicl.claims()
        res = mmicl.verify("mine.good", out="r")
        cli = CliRunner().invoke(main, ["claims", "--json"])
        origins = {c["id"]: c["origin"] for c in json.loads(cli.output)["claims"]}
        print(json.dumps({"listed": "mine.good" in listed, "verdict": res[0].verdict, "origin": res[0].origin,
                          "cli": origins.get("mine.after"), "builtin": origins.get("thm6.2"),
                          "first": next(iter(listed))}))
    """)
    p = _python(tmp_path / "site", code, tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got == {"listed": True, "verdict": "holds", "origin": "plugin mine (mypkg 0.1.0)",
                   "cli": "plugin mine (mypkg 0.1.0)", "builtin": "built-in",
                   "first": "thm6.2"}  # mmicl's own claims are listed first, the plugins' after them
    assert counter.read_text() == "x"  # imported once, lazily, for every listing and run


@pytest.mark.subprocess
def test_a_broken_installed_plugin_is_one_line_exit_2(tmp_path):
    _fake_distribution(tmp_path / "site", "import no_such_dependency_xyz\n")
    code = ("import sys\nfrom mmicl.cli import main\n"
            "sys.argv = ['mmicl', 'verify', '--claim', 'mine.*', '--out', 'r']\nmain()")
    p = _python(tmp_path / "site", code, tmp_path)
    assert p.returncode == 2, p.stderr[-2000:]
    assert ("Error: plugin mine (mypkg 0.1.0): cannot import mypkg.claims: ModuleNotFoundError: "
            "No module named 'no_such_dependency_xyz'") in p.stderr
    assert "Traceback" not in p.stderr and not (tmp_path / "r").exists()


@pytest.mark.subprocess
def test_the_helpers_a_plugin_needs_are_public():
    """What the second paper's plugin needed: per-purpose random streams from the run's seed, torch's
    thread count for a block, a Monte Carlo estimate, and ``python -m mmicl``."""
    import numpy as np
    import torch

    c = mmicl.RunConfig(seed=7)
    a, b = c.rng(1, "train").random(4), c.rng(1, "train").random(4)
    assert np.array_equal(a, b) and not np.array_equal(a, c.rng(2).random(4))
    assert not np.array_equal(a, mmicl.RunConfig(seed=8).rng(1, "train").random(4))
    with pytest.raises(mmicl.ClaimError, match="whole numbers ≥ 0 or texts"):
        c.rng(-1)
    before = torch.get_num_threads()
    with mmicl.torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with pytest.raises(ValueError, match="whole number of threads ≥ 1"):
        with mmicl.torch_threads(0):
            pass
    e = mmicl.Estimate.of([1.0, 2.0, 3.0])
    assert (e.mean, e.samples) == (2.0, 3) and abs(e.se - 1 / 3 ** 0.5) < 1e-15
    p = subprocess.run([sys.executable, "-m", "mmicl", "--version"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0 and p.stdout.startswith("mmicl, version")


@pytest.mark.subprocess
def test_a_plugins_origin_does_not_depend_on_who_imported_it_first(tmp_path):
    """A test that imports the plugin's module itself, before mmicl loads the entry point, records the
    plugin as the origin, not "user"."""
    _fake_distribution(tmp_path / "site", PLUGIN)
    code = textwrap.dedent("""
        import json
        import mypkg.claims  # first, as a test file of the plugin's own would
        import mmicl
        from mmicl.proofs.registry import REGISTRY
        first = REGISTRY["mine.good"].origin
        res = mmicl.verify("mine.good", out="r")
        print(json.dumps({"first": first, "run": res[0].origin, "count": sum(i.startswith("mine.") for i in mmicl.claims())}))
    """)
    p = _python(tmp_path / "site", code, tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["first"] == got["run"] == "plugin mine (mypkg 0.1.0)" and got["count"] >= 1


@pytest.mark.parametrize("pattern, only", [
    ("thm6.2", True), ("testbed.*", True), ("appF", True), ("variant.floor", True), ("thm4.*", True),
    ("thm*", False), ("*", False), ("mine.*", False), ("[t]hm6.2", False), ("t?stbed.claim1", False),
])
def test_a_pattern_whose_namespace_is_reserved_and_written_out_can_match_only_built_in_claims(pattern, only):
    from mmicl.proofs.verify import built_in_only

    assert built_in_only(pattern) is only


def test_selecting_built_in_claims_imports_no_installed_plugin(monkeypatch):
    """No plugin may register a reserved namespace, so ``--claim thm6.2`` need not import any; a
    pattern that could match a plugin's claim does."""
    from mmicl.proofs import verify as V

    calls = []
    monkeypatch.setattr(V, "load_installed", lambda: calls.append(1))
    assert [c.id for c in V.select(["thm6.2", "testbed.claim1"])] == ["thm6.2", "testbed.claim1"]
    assert calls == []
    V.select(["thm*"])
    assert calls == [1]
