"""Sweeps on Dask: keys, grids, the store, failing runs, and a sweep killed with SIGKILL and resumed."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from click.testing import CliRunner

from mmicl.numerics.runs import Store, expand, load_spec, run_sweep
from mmicl.numerics.runs.spec import SweepSpecError

TESTBED = """
kind = "testbed"
[base]
K = 64
L = 4
D = 4
N = 4
B = 2
width = 8
ape_slots = 16
steps = 150
batch = 8
eval_every = 75
eval_size = 16
[grid]
seed = [0, 1, 2]
eps = [0.1, 0.5]
"""


def test_a_runs_key_is_its_configuration_whatever_the_order_or_the_sweep():
    a = expand({"kind": "theory", "base": {"law": "s=uniform(0.5,4)"}, "grid": {"T": [3, 5]}})
    b = expand({"kind": "theory", "grid": {"T": [5, 3], "law": ["s=uniform(0.5,4)"]}})
    assert {r.key for r in a} == {r.key for r in b} and len({r.key for r in a}) == 2
    # defaults filled in: giving a default explicitly is the same run
    c = expand({"kind": "testbed", "base": {"K": 64, "L": 4}, "grid": {"seed": [0]}})
    d = expand({"kind": "testbed", "base": {"K": 64, "L": 4, "B": 2}, "grid": {"seed": [0]}})
    assert c[0].key == d[0].key and c[0].config["B"] == 2


def test_a_grid_is_every_combination_of_its_values():
    runs = expand({"kind": "testbed", "base": {"K": 64, "L": 4}, "grid": {"seed": [0, 1, 2], "eps": [0.1, 0.5]}})
    assert len(runs) == 6 and {(r.config["seed"], r.config["eps"]) for r in runs} == {
        (s, e) for s in (0, 1, 2) for e in (0.1, 0.5)}


@pytest.mark.parametrize("spec, words", [
    ({"base": {}}, "kind"),
    ({"kind": "magic"}, "not one of"),
    ({"kind": "theory", "base": {"law": "s=point(2)", "depth": 3}}, "no setting 'depth'"),
    ({"kind": "theory", "grid": {"T": []}, "base": {"law": "s=point(2)"}}, "non-empty list"),
    ({"kind": "theory", "base": {"law": "s=point(2)", "T": float("nan")}}, "finite"),
    ({"kind": "theory", "base": {"law": "s=point(2)", "T": 0}}, "T"),
    ({"kind": "testbed", "base": {"K": 100, "L": 16}}, "multiple of L"),
])
def test_a_spec_that_cannot_run_is_refused_before_anything_runs(spec, words):
    with pytest.raises((SweepSpecError, ValueError)) as e:
        expand(spec)
    assert words in str(e.value)


def test_a_failing_run_is_recorded_with_its_error_and_the_others_finish(tmp_path):
    runs = expand({"kind": "theory", "grid": {"law": ["s=uniform(0.5,4)", "s=point(0)"], "T": [2, 4]}})
    store = Store(tmp_path)
    s = run_sweep(runs, store, workers=1)
    assert (s.done, s.failed) == (2, 2)
    failed = [r for r in store.records() if r["status"] == "failed"]
    assert len(failed) == 2 and all("m = 0" in r["error"] and r["traceback"] for r in failed)
    index = json.loads((tmp_path / "index.json").read_text())["runs"]
    assert set(index) == {r.key for r in runs}
    # a rerun skips the done runs and tries the failed ones again
    s2 = run_sweep(runs, store, workers=1)
    assert (s2.skipped, s2.done, s2.failed) == (2, 0, 2)


SCRIPT = textwrap.dedent("""
    import sys
    from mmicl.numerics.runs import Store, load_spec, run_sweep
    if __name__ == "__main__":
        run_sweep(load_spec(sys.argv[1]), Store(sys.argv[2]), workers=1)
""")


def _results(store_dir) -> dict:
    return {r["key"]: (r["status"], r["config"], r["result"]) for r in Store(store_dir).records()}


@pytest.mark.subprocess
def test_a_sweep_killed_midway_resumes_to_exactly_the_uninterrupted_store(tmp_path):
    """Six tiny testbed runs on a one-worker LocalCluster: the driver's whole process group is killed
    with SIGKILL after two runs are stored; the rerun stores the other four.  Every run is then in the
    store exactly once, with the results of an uninterrupted sweep, and the runs stored before the
    kill were not run again."""
    spec, script = tmp_path / "spec.toml", tmp_path / "run.py"
    spec.write_text(TESTBED)
    script.write_text(SCRIPT)
    keys = {r.key for r in load_spec(spec)}
    assert len(keys) == 6
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    subprocess.run([sys.executable, str(script), str(spec), str(tmp_path / "whole")], check=True, timeout=300,
                   env=env, capture_output=True)
    killed = tmp_path / "killed"
    p = subprocess.Popen([sys.executable, str(script), str(spec), str(killed)], start_new_session=True, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while len(list((killed / "runs").glob("*.json"))) < 2:
        assert p.poll() is None, "the sweep ended before it could be killed"
        assert time.time() - t0 < 240, "no run was stored in time"
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=60)
    before = {r["key"]: r["provenance"]["started"] for r in Store(killed).records()}
    assert 2 <= len(before) < 6
    assert all(f.suffix == ".json" for f in (killed / "runs").glob("*.json"))
    for f in (killed / "runs").glob("*.json"):
        json.loads(f.read_text())  # whole JSON, never half a file
    subprocess.run([sys.executable, str(script), str(spec), str(killed)], check=True, timeout=300, env=env,
                   capture_output=True)
    after = Store(killed).records()
    assert sorted(r["key"] for r in after) == sorted(keys)                     # each run exactly once
    assert _results(killed) == _results(tmp_path / "whole")                   # the same results
    assert all(r["provenance"]["started"] == before[r["key"]] for r in after if r["key"] in before)
    index = json.loads((killed / "index.json").read_text())["runs"]
    assert set(index) == keys and all(v["status"] == "done" for v in index.values())


def test_sweep_command_runs_reads_and_exports_a_store(tmp_path):
    from mmicl.cli import main

    spec = tmp_path / "s.toml"
    spec.write_text('kind = "theory"\n[base]\nlaw = "s=uniform(0.5,4)"\n[grid]\nT = [2, 3]\n')
    r = CliRunner().invoke(main, ["sweep", str(spec), "--store", str(tmp_path / "st"), "--workers", "1", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["sweep"]["done"] == 2 and out["status"] == {"done": 2}
    r = CliRunner().invoke(main, ["sweep", "--status", "--store", str(tmp_path / "st"), "--export",
                                  str(tmp_path / "t.csv")])
    assert r.exit_code == 0 and "done 2" in r.output
    lines = (tmp_path / "t.csv").read_text().splitlines()
    assert len(lines) == 3 and "result.alpha_T" in lines[0]


def test_sweep_command_refuses_a_bad_spec_with_one_line(tmp_path):
    from mmicl.cli import main

    spec = tmp_path / "s.toml"
    spec.write_text('kind = "theory"\n[base]\nlaw = "s=uniform(0.5,4)"\ndepth = 3\n')
    r = CliRunner().invoke(main, ["sweep", str(spec), "--store", str(tmp_path / "st")])
    assert r.exit_code == 2 and "no setting 'depth'" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(main, ["sweep", "--store", str(tmp_path / "st")])
    assert r.exit_code == 2 and "SPEC" in r.output


# ---- the montecarlo kind: one `mmicl train` run per configuration ------------------------------
MONTECARLO = """
kind = "montecarlo"
[base]
model = "lca1"
law = "s=uniform(0.5,4)"
steps = 30
batch = 16
[grid]
T = [2, 5]
seed = [0, 1]
"""


def test_montecarlo_runs_expand_from_a_spec_with_the_train_commands_defaults(tmp_path):
    spec = tmp_path / "mc.toml"
    spec.write_text(MONTECARLO)
    runs = load_spec(spec)
    assert len(runs) == 4 and {r.kind for r in runs} == {"montecarlo"}
    assert {(r.config["T"], r.config["seed"]) for r in runs} == {(T, s) for T in (2, 5) for s in (0, 1)}
    assert runs[0].config == {"model": "lca1", "law": "s=uniform(0.5,4)", "T": 2, "n": 2000, "steps": 30,
                              "lr": 3e-3, "batch": 16, "optimizer": "adam", "seed": 0, "samples": 200_000}
    # a default given explicitly is the same run
    explicit = expand({"kind": "montecarlo", "base": {"model": "lca1", "law": "s=uniform(0.5,4)", "steps": 30,
                                                       "batch": 16, "optimizer": "adam", "n": 2000},
                       "grid": {"T": [2], "seed": [0]}})
    assert explicit[0].key == runs[0].key


@pytest.mark.parametrize("base, words", [
    ({"law": "s=point(2)"}, "needs model"),
    ({"model": "gpt", "law": "s=point(2)"}, "one of lsa, lca1"),
    ({"model": "lca1", "law": "s=wobbly(2)"}, "unknown law"),
    ({"model": "lca1", "law": "s=point(2)", "T": 0}, "T must be ≥ 1"),
    ({"model": "lca1", "law": "s=point(2)", "T": 5000}, "at most 1000"),
    ({"model": "lca1", "law": "s=point(2)", "lr": 0}, "lr = 0.0"),
    ({"model": "lca1", "law": "s=point(2)", "n": -1}, "0: the large-context limit"),
    ({"model": "lca1", "law": "s=point(2)", "steps": 2.5}, "steps = 2.5"),
    ({"model": "lca1", "law": "s=point(2)", "optimizer": "rmsprop"}, "'adam' or 'sgd'"),
    ({"model": "lca1", "law": "s=point(2)", "seed": -3}, "seed must be an integer"),
    ({"model": "lca1", "law": "s=point(2)", "samples": 1}, "at least 2"),
    ({"model": "lca", "law": "s=point(2); d1=100; d2=100", "T": 50}, "lower batch, d1/d2 or T"),
    ({"model": "lca1", "law": "s=point(2)", "d": 3}, "no setting 'd'"),
])
def test_a_montecarlo_run_that_cannot_run_is_refused_with_the_fix(base, words):
    with pytest.raises(ValueError) as e:
        expand({"kind": "montecarlo", "base": base})
    assert words in str(e.value)


@pytest.mark.train
def test_montecarlo_runs_on_dask_give_what_the_kind_computes_here(tmp_path):
    """Two tiny runs (the reduced lca1 and the general stack) on a one-worker LocalCluster: both done,
    and each result equals, to the last bit, the kind's compute called in this process."""
    import torch

    from mmicl.numerics.runs.kinds import KINDS

    from mmicl.numerics.runs.record import finite_or_none

    runs = expand({"kind": "montecarlo", "base": {"law": "s=uniform(0.5,4)", "T": 2, "n": 50, "steps": 15,
                                                  "batch": 16, "samples": 64, "lr": 0.05},
                   "grid": {"model": ["lca1", "lca"]}})
    store = Store(tmp_path)
    s = run_sweep(runs, store, workers=1)
    assert (s.done, s.failed) == (2, 0)
    records = {r["key"]: r for r in store.records()}
    threads = torch.get_num_threads()
    try:
        for run in runs:
            record = records[run.key]
            assert record["status"] == "done" and record["config"] == run.config
            here = json.loads(json.dumps(finite_or_none(KINDS["montecarlo"].compute(run.config))))
            assert record["result"] == here
            assert not record["result"]["diverged"] and record["result"]["steps"] == 15
            assert "seconds" in record["provenance"] and "seconds" not in json.dumps(record["result"])
    finally:
        torch.set_num_threads(threads)
    assert set(records[runs[0].key]["result"]["params"]) == {"alpha", "beta"}
    assert "w_s[0]" in records[runs[1].key]["result"]["params"]


@pytest.mark.train
def test_montecarlo_training_moves_lca1s_alpha_toward_alpha_star():
    """lca1 starts at α*/2; 40 Adam steps at n = ∞ bring α to within a quarter of that distance of α*
    (its minimiser there is α_T = 0.2939 at T = 5, α* = 0.3077)."""
    import torch

    from mmicl import alpha_star
    from mmicl.numerics.runs.kinds import KINDS

    kind = KINDS["montecarlo"]
    config = kind.normalise({"model": "lca1", "law": "s=uniform(0.5,4)", "T": 5, "n": 0, "steps": 40, "lr": 0.2,
                             "batch": 128, "samples": 100})
    threads = torch.get_num_threads()
    try:
        result = kind.compute(config)
    finally:
        torch.set_num_threads(threads)
    star = alpha_star("s=uniform(0.5,4)")
    start, alpha = star / 2, result["params"]["alpha"]
    assert abs(alpha - star) < abs(start - star) / 4, (start, alpha, star)
    assert result["params"]["beta"] == -alpha and not result["diverged"]
