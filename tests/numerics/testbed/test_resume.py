"""Training snapshots (``numerics.testbed.resume``): a run killed midway and started again finishes
as the uninterrupted run does (the same history and weights, compared within one process, where the
same operations on the same tensors give the same numbers); a snapshot of other settings, or a
damaged one, is not used; a finished run's snapshot leaves the store."""
from __future__ import annotations

import json
from dataclasses import asdict, replace

import pytest
import torch
from click.testing import CliRunner

from mmicl.cli import main
from mmicl.numerics.runs import Store
from mmicl.numerics.runs.artifacts import ARTIFACTS, SNAPSHOTS, snapshot_for, using_store
from mmicl.numerics.runs.key import RunSpec
from mmicl.numerics.runs.kinds import KINDS
from mmicl.numerics.runs.runner import run_here
from mmicl.numerics.testbed.config import (DataConfig, MemberSpec, ModelConfig, MultimodalConfig, SecondModality,
                                           TrainConfig)
from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, run_fusion
from mmicl.numerics.testbed.resume import Snapshot, load_snapshot, save_snapshot
from mmicl.numerics.testbed.train import History, train_ensemble

pytestmark = pytest.mark.train

DATA = DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=0.5, eps=0.1)
MODEL = ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, ape_slots=12)
TRAIN = TrainConfig(steps=9, batch=8, lr=1e-2, eval_every=4, eval_size=16, warmup=3)
MEMBERS = [MemberSpec(DATA, 0), MemberSpec(replace(DATA, p_bursty=1.0), 1)]


class Killed(Exception):
    """Stands for the process being killed."""


def kill_at(monkeypatch, step: int):
    """Adam's ``step`` raises ``Killed`` on its ``step``-th call (that training step never happens)."""
    calls = {"n": 0}
    real = torch.optim.Adam.step

    def step_or_die(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == step:
            raise Killed
        return real(self, *a, **k)

    monkeypatch.setattr(torch.optim.Adam, "step", step_or_die)


def same_history(a: History, b: History) -> None:
    assert a.steps == b.steps
    assert set(a.metrics) == set(b.metrics)
    for k in a.metrics:
        assert all(torch.equal(x, y) for x, y in zip(a.metrics[k], b.metrics[k], strict=True)), k
    assert all(torch.equal(x, y) or (x.isnan().all() and y.isnan().all())
               for x, y in zip(a.loss, b.loss, strict=True))


def same_weights(a: torch.nn.Module, b: torch.nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


@pytest.mark.parametrize("killed_at", [2, 5, 9])  # before, at (step 4 is evaluated) and after an evaluation; the last step
def test_a_killed_ensemble_resumes_where_it_stopped_and_finishes_as_the_uninterrupted_run(tmp_path, monkeypatch,
                                                                                          killed_at):
    whole = train_ensemble(MODEL, MEMBERS, TRAIN, data_seed=3)
    snap = Snapshot(tmp_path / "run.pt", every_s=0.0, identity={"key": "k"})
    with monkeypatch.context() as m:
        kill_at(m, killed_at)
        with pytest.raises(Killed):
            train_ensemble(MODEL, MEMBERS, TRAIN, data_seed=3, snapshot=snap)
    assert snap.path.is_file()
    resumed = train_ensemble(MODEL, MEMBERS, TRAIN, data_seed=3, snapshot=snap)
    same_history(whole.history, resumed.history)
    same_weights(whole.model, resumed.model)


def test_a_resumed_run_takes_only_the_steps_after_its_snapshot(tmp_path, monkeypatch):
    snap = Snapshot(tmp_path / "run.pt", every_s=0.0)
    with monkeypatch.context() as m:
        kill_at(m, 7)
        with pytest.raises(Killed):
            train_ensemble(MODEL, MEMBERS, TRAIN, data_seed=3, snapshot=snap)
    calls = []
    real = torch.optim.Adam.step
    monkeypatch.setattr(torch.optim.Adam, "step", lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    train_ensemble(MODEL, MEMBERS, TRAIN, data_seed=3, snapshot=snap)
    assert len(calls) == TRAIN.steps - 6  # steps 7 … 9: the snapshot was taken after step 6


def test_a_snapshot_of_other_settings_or_a_damaged_one_is_not_used(tmp_path, monkeypatch, capsys):
    whole = train_ensemble(MODEL, MEMBERS, TRAIN, data_seed=3)
    snap = Snapshot(tmp_path / "run.pt", every_s=0.0, identity={"key": "a"})
    with monkeypatch.context() as m:
        kill_at(m, 6)
        with pytest.raises(Killed):
            train_ensemble(MODEL, MEMBERS, replace(TRAIN, lr=2e-2), data_seed=3, snapshot=snap)
    for damage in ("other settings", "cannot be read"):
        if damage == "cannot be read":
            snap.path.write_bytes(snap.path.read_bytes()[:100])
        fresh = train_ensemble(MODEL, MEMBERS, replace(TRAIN, steps=4), data_seed=3,
                               snapshot=Snapshot(snap.path, every_s=1e9, identity={"key": "a"}))
        assert damage in capsys.readouterr().err
        again = train_ensemble(MODEL, MEMBERS, replace(TRAIN, steps=4), data_seed=3)
        same_history(fresh.history, again.history)
    assert whole.history.steps[-1] == TRAIN.steps


def test_snapshots_round_trip_and_refuse_bad_settings(tmp_path):
    state = {"step": 3, "x": [torch.arange(3.0)], "none": None}
    save_snapshot(tmp_path / "s.pt", {"a": 1}, state)
    back = load_snapshot(tmp_path / "s.pt", {"a": 1})
    assert back["step"] == 3 and torch.equal(back["x"][0], torch.arange(3.0)) and back["none"] is None
    assert load_snapshot(tmp_path / "missing.pt", {"a": 1}) is None
    with pytest.raises(ValueError, match="every_s"):
        Snapshot(tmp_path / "s.pt", every_s=-1.0)


def test_a_killed_multimodal_run_resumes_and_finishes_as_the_uninterrupted_run(tmp_path, monkeypatch):
    m1 = DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0)
    arms = [MultimodalArm("fusion", MultimodalConfig(m1, SecondModality(K=8, D=3, eps=0.0)))]
    model = replace(MODEL, ape_slots=16)  # the multimodal layout has 3N + 2 = 14 positions
    train = replace(TRAIN, steps=6)
    whole = run_fusion(model, m1, arms, [0, 1], train, data_seed=5)
    snap = Snapshot(tmp_path / "fusion.pt", every_s=0.0)
    with monkeypatch.context() as m:
        kill_at(m, 4)
        with pytest.raises(Killed):
            run_fusion(model, m1, arms, [0, 1], train, data_seed=5, snapshot=snap)
    resumed = run_fusion(model, m1, arms, [0, 1], train, data_seed=5, snapshot=snap)
    same_history(whole.run.history, resumed.run.history)


def test_a_stored_run_keeps_a_snapshot_while_it_trains_and_none_once_its_record_is_stored(tmp_path, monkeypatch):
    config = KINDS["ensemble"].normalise({
        "model": asdict(MODEL), "train": asdict(TRAIN), "seeds": [0, 1], "data_seed": 0,
        "arms": [{"name": "run", "data": asdict(DATA)}]})
    spec = RunSpec("ensemble", config)
    store = Store(tmp_path / "store")
    assert snapshot_for("ensemble", config) is None  # outside a store: nowhere to keep one
    path = store.root / ARTIFACTS / SNAPSHOTS / f"{spec.key}.pt"
    seen = []
    real = torch.optim.Adam.step
    monkeypatch.setattr(torch.optim.Adam, "step", lambda self, *a, **k: seen.append(path.is_file()) or
                        real(self, *a, **k))
    with using_store(store):
        assert snapshot_for("ensemble", config).path == path
        with monkeypatch.context() as m:
            m.setattr(snapshot_for, "__defaults__", (0.0,))  # a snapshot after every step
            run_here([spec], store)
    assert any(seen)  # a snapshot was there during training
    assert store.status(spec.key) == "done" and not path.exists()


def test_the_status_of_a_store_lists_a_killed_run_at_the_step_of_its_snapshot(tmp_path, monkeypatch):
    config = KINDS["ensemble"].normalise({
        "model": asdict(MODEL), "train": asdict(TRAIN), "seeds": [0], "data_seed": 0,
        "arms": [{"name": "run", "data": asdict(DATA)}]})
    spec = RunSpec("ensemble", config)
    store = Store(tmp_path / "store")
    with monkeypatch.context() as m:
        m.setattr(snapshot_for, "__defaults__", (0.0,))
        kill_at(m, 6)
        with pytest.raises(Killed):  # a real kill: the run leaves no record, only its snapshot
            with using_store(store):
                KINDS["ensemble"].compute(config)
    r = CliRunner().invoke(main, ["sweep", "--status", "--store", str(store.root)])
    assert r.exit_code == 0, r.output
    assert f"in training {spec.key} (ensemble): step 5 of {TRAIN.steps}" in r.output
    r = CliRunner().invoke(main, ["sweep", "--status", "--store", str(store.root), "--json"])
    [t] = json.loads(r.output)["in_training"]
    assert (t["key"], t["step"], t["steps"]) == (spec.key, 5, TRAIN.steps)
