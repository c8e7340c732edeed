"""Checkpoints mmicl reads back are verified against what it wrote (issue "Files you can trust").

Each test makes the damage itself on a tiny stage-1 run (or a tiny ``train`` run) and asserts the
exact outcome: the stage-1 file (``numerics/testbed/checkpoint.py``) is refused in one
``TestbedConfigError`` line naming the file and what is wrong (content hash, weight names, shapes,
finite values, an earlier format); ``mmicl testbed stage2 --from`` refuses a damaged file with one error line (exit 2) and leaves it as
it is; ``mmicl testbed stage1 --out`` on a full disk is one line, exit 2 (before training when the
free space is known to be short); the ``mmicl train --checkpoint`` file carries a content hash too;
and ``numerics.digest`` tells states apart by any one element.
"""
from __future__ import annotations

import copy
import errno
import json
import os
from dataclasses import replace

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from mmicl.proofs.claims.testbed import sizes
from mmicl.numerics.digest import digest
from mmicl.numerics.testbed.checkpoint import Stage1
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, SecondModality, TestbedConfigError, TrainConfig
from mmicl.numerics.testbed.multimodal_experiments import run_stage1
from mmicl.cli import main

torch.set_num_threads(1)

TINY = ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, ape_slots=21)
M1 = DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1)
TRAIN = TrainConfig(steps=3, batch=8, lr=1e-2, eval_every=2, eval_size=16)
TOY = replace(sizes.MULTIMODAL_QUICK, m1=M1, model=TINY, stage1=TRAIN, stage2=TRAIN, m2=SecondModality(K=4, D=4, eps=0.1),
              seeds=2)


@pytest.fixture(scope="module")
def s1() -> Stage1:
    return run_stage1(TINY, M1, [0, 1], TRAIN)


@pytest.fixture
def saved(s1, tmp_path):
    return s1.save(tmp_path / "s1.pt")


def _raw(path) -> dict:
    return torch.load(path, map_location="cpu", weights_only=True)


def _resave(path, raw: dict, rehash: bool) -> None:
    """Write ``raw`` back, with its digest recomputed (so the checks behind the hash are what
    fires) or with the digest mmicl wrote (an edit after the fact)."""
    if rehash:
        raw = {**raw, "digest": digest({k: v for k, v in raw.items() if k != "digest"})}
    torch.save(raw, path)


def _edit_meta(raw: dict, **changes) -> dict:
    return {**raw, "meta": json.dumps({**json.loads(raw["meta"]), **changes})}


def _refused(path, *fragments: str) -> str:
    with pytest.raises(TestbedConfigError) as e:
        Stage1.load(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg, msg
    for f in fragments:
        assert f in msg, msg
    return msg


HASH = "has a content hash that does not match: the file was changed after mmicl wrote it"


# ---- 1. the stage-1 file --------------------------------------------------------------------------
@pytest.mark.train
def test_a_checkpoint_reads_back_exactly_and_carries_its_hash(s1, saved):
    raw = _raw(saved)
    assert json.loads(raw["meta"])["format"] == "mmicl.testbed.stage1/2"
    assert raw["digest"] == digest({k: v for k, v in raw.items() if k != "digest"})
    back = Stage1.load(saved)
    assert back.final == s1.final and all(torch.equal(back.weights[k], s1.weights[k]) for k in s1.weights)


def test_a_truncated_file_is_refused(saved):
    data = saved.read_bytes()
    saved.write_bytes(data[: len(data) // 2])
    _refused(saved, "is not a stage-1 checkpoint of mmicl (unreadable")


def test_garbage_bytes_are_refused(saved):
    saved.write_bytes(bytes(range(256)) * 8)
    _refused(saved, "is not a stage-1 checkpoint of mmicl (unreadable")


def test_zeroed_weights_edited_in_fail_the_hash(saved):
    raw = _raw(saved)
    _resave(saved, {**raw, "weights": {k: torch.zeros_like(v) for k, v in raw["weights"].items()}}, rehash=False)
    msg = _refused(saved, HASH, "remake it with `mmicl testbed stage1 --out")
    assert "Traceback" not in msg


def test_zeroed_weights_with_their_own_hash_are_not_damage(s1, saved):
    """What mmicl wrote is trusted: a file whose weights were zero when it was saved loads."""
    zero = replace(s1, weights={k: torch.zeros_like(v) for k, v in s1.weights.items()})
    back = Stage1.load(zero.save(saved))
    assert all(not v.any() for v in back.weights.values())


def test_final_metrics_edited_to_099_fail_the_hash(saved):
    raw = _raw(saved)
    final = json.loads(raw["meta"])["final"]
    _resave(saved, _edit_meta(raw, final={**final, "acc_icl": [0.99, 0.99]}), rehash=False)
    _refused(saved, HASH)


@pytest.mark.parametrize("rehash", [True, False])
def test_a_weight_of_the_wrong_shape_is_refused(saved, rehash):
    raw = _raw(saved)
    w = dict(raw["weights"])
    assert tuple(w["l0_w_o"].shape) == (2, 8, 8)
    w["l0_w_o"] = w["l0_w_o"][:, :, :7].clone()
    _resave(saved, {**raw, "weights": w}, rehash)
    if rehash:
        _refused(saved, "has weight l0_w_o of shape (2, 8, 7), expected (2, 8, 8)")
    else:
        _refused(saved, HASH)


@pytest.mark.parametrize("rehash", [True, False])
def test_a_missing_weight_is_refused(saved, rehash):
    raw = _raw(saved)
    w = {k: v for k, v in raw["weights"].items() if k != "l1_w_up"}
    _resave(saved, {**raw, "weights": w}, rehash)
    _refused(saved, "lacks the decoder weight l1_w_up" if rehash else HASH)


def test_an_extra_weight_and_tables_of_the_wrong_shape_are_refused(saved):
    raw = _raw(saved)
    _resave(saved, {**raw, "weights": {**raw["weights"], "l2_w_o": torch.zeros(2, 8, 8)}}, rehash=True)
    _refused(saved, "has weight l2_w_o that the decoder (layers=2) does not have")
    _resave(saved, {**raw, "means": raw["means"][:, :10].clone()}, rehash=True)
    _refused(saved, "has the class means of shape (2, 10, 4), expected (2, 64, 4)")
    _resave(saved, {**raw, "label_vectors": raw["label_vectors"][:1].clone()}, rehash=True)
    _refused(saved, "has the label vectors of shape (1, 4, 4), expected (2, 4, 4)")


def test_nan_weights_are_refused_before_any_training(saved):
    raw = _raw(saved)
    w = dict(raw["weights"])
    q = w["l0_w_qkv"].clone()
    q.view(-1)[:3] = torch.tensor([float("nan"), float("inf"), float("-inf")])
    w["l0_w_qkv"] = q
    _resave(saved, {**raw, "weights": w}, rehash=True)
    _refused(saved, "has 3 non-finite values in weight l0_w_qkv")


def test_a_file_of_the_earlier_format_is_refused_as_unverifiable(saved):
    """``/1`` files (no hash) as the earlier save wrote them."""
    raw = _raw(saved)
    old = _edit_meta({k: v for k, v in raw.items() if k != "digest"}, format="mmicl.testbed.stage1/1")
    torch.save(old, saved)
    _refused(saved, "was written by an earlier mmicl (format mmicl.testbed.stage1/1", "cannot be verified",
             "remake it with `mmicl testbed stage1 --out FILE`")


# ---- 2. the commands ------------------------------------------------------------------------------
def _one_error_line(r, exit_code: int = 2) -> str:
    assert r.exit_code == exit_code, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, r.output
    return errors[0]


@pytest.mark.parametrize("how", ["zeroed", "nan", "earlier format", "truncated"])
def test_stage2_from_a_damaged_file_is_one_error_line_and_the_file_is_left_alone(saved, how):
    raw = _raw(saved)
    if how == "zeroed":
        _resave(saved, {**raw, "weights": {k: torch.zeros_like(v) for k, v in raw["weights"].items()}}, rehash=False)
    elif how == "nan":
        _resave(saved, {**raw, "weights": {k: v.clone().fill_(float("nan")) for k, v in raw["weights"].items()}},
                rehash=True)
    elif how == "earlier format":
        torch.save(_edit_meta({k: v for k, v in raw.items() if k != "digest"}, format="mmicl.testbed.stage1/1"), saved)
    else:
        saved.write_bytes(saved.read_bytes()[:-50])
    before = saved.read_bytes()
    r = CliRunner().invoke(main, ["testbed", "stage2", "--from", str(saved), "--quick", "--device", "cpu"])
    line = _one_error_line(r)
    fragment = {"zeroed": HASH, "nan": "non-finite values in weight", "earlier format": "cannot be verified",
                "truncated": "unreadable"}[how]
    assert "--from" in line and str(saved) in line and fragment in line, line
    assert saved.read_bytes() == before and sorted(os.listdir(saved.parent)) == [saved.name]


@pytest.fixture
def toy_cli(monkeypatch):
    monkeypatch.setattr(sizes, "MULTIMODAL_QUICK", replace(TOY, stage1=replace(TRAIN, steps=2)))


def _stage1_cli(out):
    return CliRunner().invoke(main, ["testbed", "stage1", "--quick", "--out", str(out), "--device", "cpu", "--json"])


def test_stage1_out_on_a_full_disk_is_refused_before_training(toy_cli, tmp_path, monkeypatch):
    from mmicl.numerics import atomic
    from mmicl.numerics.testbed import multimodal_experiments as mme

    def no_training(*_, **__):
        raise AssertionError("trained although the disk is known to be full")

    monkeypatch.setattr(atomic, "free_bytes", lambda folder: 0)
    monkeypatch.setattr(mme, "run_stage1", no_training)
    out = tmp_path / "s1.pt"
    r = _stage1_cli(out)
    line = _one_error_line(r)
    assert r.output.strip() == line and line.startswith(f"Error: no space left in {tmp_path}: the stage-1 checkpoint")
    assert "0 bytes free" in line and not out.exists()


@pytest.mark.train
def test_stage1_out_when_the_write_finds_no_space_is_one_line_and_no_partial_file(toy_cli, tmp_path, monkeypatch):
    from mmicl.numerics import atomic

    def full(*_):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", full)
    out = tmp_path / "s1.pt"
    r = _stage1_cli(out)
    line = _one_error_line(r)
    assert r.output.strip() == line and line.startswith(f"Error: no space left in {tmp_path}: writing s1.pt")
    assert os.listdir(tmp_path) == []                                  # no file, no temporary file


@pytest.mark.train
def test_stage1_out_then_stage2_from_it_still_runs(toy_cli, tmp_path):
    out = tmp_path / "s1.pt"
    r = _stage1_cli(out)
    assert r.exit_code == 0, (r.output, r.exception)
    r = CliRunner().invoke(main, ["testbed", "stage2", "--from", str(out), "--quick", "--steps", "1", "--device",
                                  "cpu", "--json"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert json.loads(r.output)["stage1_final"]["acc_icl"]["seeds"] == json.loads(_raw(out)["meta"])["final"]["acc_icl"]


# ---- 4. the training checkpoint -------------------------------------------------------------------
@pytest.mark.train
@pytest.mark.parametrize("damage", ["edited", "nan", "earlier version"])
def test_an_edited_training_checkpoint_is_refused_in_one_line(tmp_path, damage):
    from mmicl.numerics.laws.language import parse_law
    from mmicl.numerics.models import ReducedLCA
    from mmicl.numerics.training import train
    from mmicl.numerics.validate import InputError

    law = parse_law("s=uniform(1,2); d1=2; d2=2")
    ckpt = tmp_path / "run.pt"
    train(ReducedLCA(3, "one", 0.1), law, n=None, steps=4, batch=8, seed=0, checkpoint=ckpt, checkpoint_every=2)
    state = torch.load(ckpt, weights_only=True)
    assert state["digest"] == digest({k: v for k, v in state.items() if k != "digest"})
    name = next(iter(state["model"]))
    model = dict(state["model"])
    if damage == "edited":
        model[name] = model[name] + 1.0
        torch.save({**state, "model": model}, ckpt)
        expected = "content hash that does not match"
    elif damage == "nan":
        model[name] = torch.full_like(model[name], float("nan"))
        body = {k: v for k, v in {**state, "model": model}.items() if k != "digest"}
        torch.save({**body, "digest": digest(body)}, ckpt)
        expected = "non-finite value"
    else:
        torch.save({k: v for k, v in state.items() if k != "digest"}, ckpt)
        expected = "earlier version of mmicl"
    with pytest.raises(InputError) as e:
        train(ReducedLCA(3, "one", 0.1), law, n=None, steps=8, batch=8, seed=0, checkpoint=ckpt, checkpoint_every=2)
    msg = str(e.value)
    assert "\n" not in msg and str(ckpt) in msg and expected in msg and "delete it to start afresh" in msg, msg
    if damage == "nan":
        assert name in msg


# ---- 5. the digest --------------------------------------------------------------------------------
ONE_CHANGE = [
    ({"a": 1}, {"a": 2}), ({"a": 1}, {"b": 1}), ([1, 2], [2, 1]), (1, True), (0, False), (1, 1.0), (0.0, -0.0),
    ("1", 1), (None, "None"), ([], {}), (["ab", "c"], ["a", "bc"]), ([[1], 2], [1, [2]]), ({"a": None}, {}),
    (torch.zeros(2, 3), torch.zeros(3, 2)), (torch.zeros(2), torch.zeros(2, dtype=torch.float64)),
    (torch.zeros(2), torch.zeros(2, dtype=torch.int32)), (torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5])),
    (torch.tensor(1.0), torch.tensor([1.0])), ({"w": torch.ones(3)}, {"w": torch.ones(3), "x": 0}),
]


@pytest.mark.parametrize("a, b", ONE_CHANGE, ids=range(len(ONE_CHANGE)))
def test_states_that_differ_in_one_element_have_different_digests(a, b):
    assert digest(a) != digest(b)


def test_equal_states_have_equal_digests_whatever_their_order_device_or_layout():
    t = torch.arange(12.0).view(3, 4)
    a = {"b": [1, 2.5, None, True], "a": {"t": t, 0: "x"}}
    b = {"a": {0: "x", "t": t.t().contiguous().t()}, "b": (1, 2.5, None, True)}
    assert digest(a) == digest(b) == digest(copy.deepcopy(a))
    with pytest.raises(TypeError, match="cannot hash a ndarray"):
        digest({"x": t.numpy()})


leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
states = st.recursive(leaves, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                       st.dictionaries(st.text(max_size=4), kids, max_size=4)),
                      max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(states, st.lists(st.floats(allow_nan=False, width=32), min_size=1, max_size=8), st.data())
def test_a_state_and_its_copy_agree_and_any_one_changed_tensor_element_tells(state, values, data):
    t = torch.tensor(values, dtype=torch.float32)
    full = {"state": state, "t": t}
    assert digest(full) == digest(copy.deepcopy(full))
    i = data.draw(st.integers(0, len(values) - 1))
    new = data.draw(st.floats(allow_nan=False, width=32).filter(
        lambda v: torch.tensor(v, dtype=torch.float32).view(torch.int32) != t[i].view(torch.int32)))
    changed = t.clone()
    changed[i] = new
    assert digest({"state": state, "t": changed}) != digest(full)
    assert digest({"state": [state], "t": t}) != digest(full)
