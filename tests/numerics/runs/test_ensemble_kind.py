"""The ``ensemble`` run kind (``numerics.runs.kinds.ensemble``): the flat sweep form, keys that ignore order and
explicit defaults, refused settings, analyses, and running pending runs once."""
from __future__ import annotations
from dataclasses import asdict
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mmicl.numerics.testbed import experiments
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
from mmicl.numerics.testbed.train import History
from mmicl.numerics.runs import Store, expand
from mmicl.numerics.runs.runner import run_here
from mmicl.numerics.runs.kinds import KINDS
from mmicl.numerics.runs.spec import RunSpec, SweepSpecError


FEW = settings(deadline=None)
"""Few examples (the profile of tests/conftest.py: 25; ``HYPOTHESIS_PROFILE=thorough`` for 300)."""

# ---- 3. the induction ablation on a tiny trained ensemble ---------------------------------------
TINY_DATA = DataConfig(K=64, L=4, D=4, N=4, B=2)

# ---- 7. the ensemble sweep kind ----------------------------------------------------------------
FLAT = {"K": 64, "L": 4, "D": 4, "N": 4, "B": 2, "width": 8, "ape_slots": 16,
        "steps": 2, "batch": 8, "eval_every": 2, "eval_size": 16}

normalise = KINDS["ensemble"].normalise

def _nested(**changes) -> dict:
    base = {"model": asdict(ModelConfig(width=8, ape_slots=16)),
            "train": asdict(TrainConfig(steps=2, batch=8, eval_every=2, eval_size=16)),
            "arms": [{"name": "run", "data": asdict(DataConfig(K=64, L=4, D=4, N=4, B=2))}],
            "seeds": [0], "data_seed": 0}
    return base | changes

ANALYSIS = {"name": "induction_ablation", "threshold": 0.5, "selection_seed": 1, "control_seed": 2}


@FEW
@given(n=st.integers(1, 6), seed=st.integers(0, 10_000))
def test_the_flat_sweep_form_is_one_arm_with_seeds_seed_to_seed_plus_n_minus_one(n, seed):
    """The flat form names the same run as the nested form it stands for (the same key)."""
    flat = normalise(FLAT | {"seeds": n, "seed": seed})
    assert flat["seeds"] == list(range(seed, seed + n)) and flat["data_seed"] == seed
    assert [a["name"] for a in flat["arms"]] == ["run"]
    assert flat["arms"][0]["data"] == asdict(DataConfig(K=64, L=4, D=4, N=4, B=2))
    assert flat["device"] == "cpu" and flat["analysis"] is None
    nested = normalise(_nested(seeds=list(range(seed, seed + n)), data_seed=seed))
    assert RunSpec("ensemble", flat).key == RunSpec("ensemble", nested).key


def test_the_same_settings_give_the_same_key_whatever_their_order_or_explicit_defaults():
    a = normalise(_nested())
    b = normalise(dict(reversed(list(_nested(device="cpu", analysis=None).items()))))
    c = normalise(_nested(train=asdict(TrainConfig(steps=2, batch=8, eval_every=2, eval_size=16, warmup=0))))
    assert RunSpec("ensemble", a).key == RunSpec("ensemble", b).key == RunSpec("ensemble", c).key
    assert RunSpec("ensemble", a).key != RunSpec("ensemble", normalise(_nested(seeds=[1]))).key
    assert RunSpec("ensemble", a).key != RunSpec("ensemble", normalise(
        _nested(train=asdict(TrainConfig(steps=2, batch=8, eval_every=2, eval_size=16, warmup=1))))).key


def test_a_sweep_file_of_kind_ensemble_expands_to_one_run_per_grid_point():
    runs = expand({"kind": "ensemble", "base": FLAT | {"seeds": 2}, "grid": {"seed": [0, 10], "warmup": [0, 1]}})
    assert len({r.key for r in runs}) == 4
    assert {tuple(r.config["seeds"]) for r in runs} == {(0, 1), (10, 11)}
    assert {r.config["train"]["warmup"] for r in runs} == {0, 1}
    with pytest.raises(SweepSpecError, match="no setting"):
        expand({"kind": "ensemble", "base": FLAT | {"analysis": "induction_ablation"}})


@pytest.mark.parametrize("config", [
    _nested(bogus=1),
    _nested(arms=[{"name": "a", "data": asdict(TINY_DATA)}, {"name": "a", "data": asdict(TINY_DATA)}]),
    _nested(analysis={"name": "no_such_analysis"}),
    _nested(analysis=ANALYSIS | {"name": "Induction_Ablation"}),
    _nested(device="tpu"),
    _nested(device="cuda:0"),
    _nested(arms=[]),
    _nested(seeds=[]),
    FLAT | {"seeds": 0},
    FLAT | {"seeds": True},
    FLAT | {"seeds": 2.0},
    FLAT | {"K": 66},                                # not a multiple of L
    _nested(analysis="induction_ablation"),
    FLAT | {"bogus": 1},
    {k: v for k, v in _nested().items() if k != "model"},
])
def test_bad_ensemble_settings_are_refused_with_a_value_error(config):
    with pytest.raises(ValueError):
        normalise(config)


def test_a_known_analysis_is_accepted_and_kept_in_the_configuration():
    assert normalise(_nested(analysis=ANALYSIS))["analysis"] == ANALYSIS


@pytest.mark.train
def test_run_here_runs_a_pending_ensemble_once_then_skips_it(tmp_path, monkeypatch):
    store = Store(tmp_path)
    spec = RunSpec("ensemble", normalise(FLAT | {"seeds": 2, "seed": 3}))
    first = run_here([spec, spec], store)
    assert (first.total, first.done, first.skipped, first.failed) == (1, 1, 0, 0)
    record = store.record(spec.key)
    assert record["status"] == "done"
    assert all(len(v) == 2 for v in record["result"]["summary"]["run"].values())
    history = History.from_json(record["result"]["history"])
    assert history.steps == [0, FLAT["steps"]] and history.final("acc_icl").shape == (2,)

    def no_training(*a, **k):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(experiments, "run_arms", no_training)
    second = run_here([spec], Store(tmp_path))                   # a fresh handle on the same folder
    assert (second.total, second.done, second.skipped, second.failed) == (1, 0, 1, 0)


@pytest.mark.train
def test_a_failed_ensemble_run_is_recorded_and_run_again_by_the_next_call(tmp_path, monkeypatch):
    store = Store(tmp_path)
    spec = RunSpec("ensemble", normalise(FLAT | {"seeds": 1, "seed": 4}))

    def broken(*a, **k):
        raise RuntimeError("out of memory")

    with monkeypatch.context() as m:
        m.setattr(experiments, "run_arms", broken)
        s = run_here([spec], store)
    assert (s.done, s.failed) == (0, 1) and "out of memory" in store.record(spec.key)["error"]
    s = run_here([spec], store)
    assert (s.done, s.failed, s.skipped) == (1, 0, 0) and store.record(spec.key)["status"] == "done"
