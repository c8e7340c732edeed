"""The multimodal run kinds of the sweep store (``numerics/runs/``: stage1, stage2, fusion):
a stage-1 checkpoint kept as an artifact beside the store and verified by the digest its record
states, stage 2 and early fusion as resumable runs, reruns that read finished runs back without
training, and a damaged or missing checkpoint as a failed run whose one-line error names the file.
Tiny sizes, a few Adam steps, CPU."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import asdict

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from mmicl.cli import main
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, MultimodalConfig, SecondModality, TrainConfig
from mmicl.numerics.testbed.multimodal_experiments import (MultimodalArm, arm_to_json, arms_from_json, run_fusion,
                                                           run_stage2)
from mmicl.numerics.runs import RunSpec, Store
from mmicl.numerics.runs import artifacts
from mmicl.numerics.runs.record import execute
from mmicl.numerics.runs.runner import run_here
from mmicl.numerics.runs.artifacts import STORE_ENV, using_store
from mmicl.numerics.runs.kinds import KINDS
from mmicl.numerics.runs.runner import stored_arm_results, stored_stage1

torch.set_num_threads(1)

TINY = ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, ape_slots=21)
TRAIN = TrainConfig(steps=3, batch=8, lr=1e-2, eval_every=2, eval_size=16)
M1 = DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.0)
ARMS = [MultimodalArm("K2=8", MultimodalConfig(M1, SecondModality(K=8, D=3, eps=0.0))),
        MultimodalArm("random", MultimodalConfig(M1, SecondModality(K=4, D=3, eps=0.0)), decoder="random")]
STAGE1 = {"model": asdict(TINY), "data": asdict(M1), "train": asdict(TRAIN), "seeds": [0, 1], "data_seed": 3}


def spec(kind: str, settings: dict) -> RunSpec:
    return RunSpec(kind, KINDS[kind].normalise(settings))


def stage2_settings(arms=ARMS, **extra) -> dict:
    return {"stage1": STAGE1, "arms": [arm_to_json(a) for a in arms], "train": asdict(TRAIN), **extra}


FUSION = {"model": asdict(TINY), "m1": asdict(M1), "arms": [arm_to_json(ARMS[0])], "seeds": [0, 1],
          "train": asdict(TRAIN), "data_seed": 3}


@pytest.fixture
def calls(monkeypatch):
    """How many times each multimodal kind computed (trained) a run."""
    counts = {k: 0 for k in ("stage1", "stage2", "fusion")}
    for kind in counts:
        real = KINDS[kind].compute

        def counted(config, *args, _real=real, _kind=kind, **kwargs):
            counts[_kind] += 1
            return _real(config, *args, **kwargs)

        monkeypatch.setitem(KINDS, kind, dataclasses.replace(KINDS[kind], compute=counted))
    return counts


def run_in(store: Store, specs: list[RunSpec]):
    with using_store(store):
        return run_here(specs, store)


def files(store: Store) -> dict[str, bytes]:
    return {str(p.relative_to(store.root)): p.read_bytes() for p in sorted(store.root.rglob("*")) if p.is_file()}


@pytest.mark.train
def test_stage1_then_stage2_through_a_store_and_a_rerun_reads_both_back(tmp_path, calls):
    store = Store(tmp_path / "store")
    s1, s2 = spec("stage1", STAGE1), spec("stage2", stage2_settings())
    summary = run_in(store, [s1, s2])
    assert (summary.done, summary.failed) == (2, 0) and calls == {"stage1": 1, "stage2": 1, "fusion": 0}
    r1, r2 = store.record(s1.key), store.record(s2.key)
    # the checkpoint is an artifact beside the store, named by the run's key; the record states its digest
    art = r1["result"]["artifact"]
    path = store.root / "artifacts" / f"{s1.key}.pt"
    assert art["file"] == path.name and art["bytes"] == path.stat().st_size
    assert art["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert len((store.runs / f"{s1.key}.json").read_bytes()) < 20_000           # no weights in the JSON record
    final = r1["result"]["final"]
    assert set(final) >= {"acc_icl", "acc_iwl", "induction"} and len(final["acc_icl"]) == 2
    # stage 2 names the checkpoint it started from, and keeps every arm × stage-1 member
    assert r2["result"]["stage1"] == {"key": s1.key, "sha256": art["sha256"]}
    summ = r2["result"]["summary"]
    assert set(summ) == {"K2=8", "random"} and all(len(v) == 2 for a in summ.values() for v in a.values())
    assert {"acc_icl_m2only", "acc_icl", "conflict_follow_m1", "induction_max",
            "attn_match_m1_top"} <= set(summ["K2=8"])
    # … the same numbers as stage 2 run in-process on the stored checkpoint
    loaded = artifacts.load_stage1(store.root, r1)
    here = run_stage2(loaded, ARMS, TRAIN, data_seed=3)
    back = stored_arm_results(r2)
    assert back.seeds == [0, 1] and [a.name for a in back.arms] == ["K2=8", "random"]
    for m in ("acc_icl_m2only", "acc_iwl", "induction_max"):
        for a in ("K2=8", "random"):
            np.testing.assert_allclose(back.curve(m, a), here.curve(m, a), atol=1e-6)
            assert summ[a][m] == pytest.approx(here.final(m, a).tolist(), abs=1e-6)
    # a rerun (a fresh opening of the store, as a later session) trains nothing and changes no file
    before = files(store)
    again = Store(tmp_path / "store")
    summary = run_in(again, [s1, s2])
    assert (summary.skipped, summary.done) == (2, 0) and calls == {"stage1": 1, "stage2": 1, "fusion": 0}
    s1_back = stored_stage1(again, STAGE1)
    assert calls["stage1"] == 1 and files(again) == before
    assert all(torch.equal(s1_back.weights[k], loaded.weights[k]) for k in loaded.weights)
    assert STORE_ENV not in os.environ                           # using_store cleans up


@pytest.mark.train
def test_a_claim_killed_after_stage1_resumes_with_stage2_only(tmp_path, calls):
    store = Store(tmp_path / "store")
    s1, s2 = spec("stage1", STAGE1), spec("stage2", stage2_settings())
    run_in(store, [s1])                          # the claim was killed here
    summary = run_in(Store(tmp_path / "store"), [s1, s2])
    assert (summary.skipped, summary.done, summary.failed) == (1, 1, 0)
    assert calls == {"stage1": 1, "stage2": 1, "fusion": 0}
    # stored_stage1 trains on first use only
    s1b = spec("stage1", {**STAGE1, "seeds": [5]})
    a = stored_stage1(store, s1b.config)
    b = stored_stage1(store, {**STAGE1, "seeds": [5]})
    assert calls["stage1"] == 2 and a.E == b.E == 1 and store.status(s1b.key) == "done"


@pytest.mark.train
def test_a_tampered_checkpoint_fails_stage2_in_one_line_naming_the_file(tmp_path, calls):
    store = Store(tmp_path / "store")
    s1, s2 = spec("stage1", STAGE1), spec("stage2", stage2_settings())
    run_in(store, [s1])
    path = store.root / "artifacts" / f"{s1.key}.pt"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    run_in(store, [s2])
    r = store.record(s2.key)
    assert r["status"] == "failed" and "\n" not in r["error"]
    assert str(path) in r["error"] and "SHA-256" in r["error"] and "stored_stage1" in r["error"]
    # the remedy it names: stored_stage1 sets the file aside (one warning) and trains stage 1 again
    with pytest.warns(RuntimeWarning, match="moved to .*corrupt.*training stage 1 again") as w:
        stored_stage1(store, STAGE1)
    assert len(w) == 1 and calls["stage1"] == 2 and path.with_name(path.name + ".corrupt").is_file()
    summary = run_in(store, [s1, s2])            # the failed stage-2 run is redone, stage 1 is not
    assert (summary.skipped, summary.done) == (1, 1) and store.status(s2.key) == "done"
    # a missing checkpoint: the same, with "missing"
    path.unlink()
    s2b = spec("stage2", stage2_settings(arms=ARMS[:1]))
    run_in(store, [s2b])
    err = store.record(s2b.key)["error"]
    assert "missing" in err and str(path) in err and "\n" not in err


def test_stage2_without_its_stage1_run_or_its_store_fails_in_one_line(tmp_path):
    store = Store(tmp_path / "store")
    s2 = spec("stage2", stage2_settings())
    run_in(store, [s2])
    err = store.record(s2.key)["error"]
    assert "no finished record" in err and "run the stage1 run first" in err and "\n" not in err
    s1 = spec("stage1", STAGE1)
    record = execute(s1.kind, s1.config, s1.key)  # outside any store: nowhere to put the checkpoint
    assert record["status"] == "failed" and "using_store" in record["error"] and "\n" not in record["error"]


@pytest.mark.train
def test_fusion_round_trips_and_a_rerun_reads_it_back(tmp_path, calls):
    store = Store(tmp_path / "store")
    f = spec("fusion", {**FUSION, "analysis": {"name": "ablation_drop", "set_name": "icl_m2only"}})
    assert run_here([f], store).done == 1
    r = store.record(f.key)
    here = run_fusion(TINY, M1, ARMS[:1], [0, 1], TRAIN, data_seed=3)
    back = stored_arm_results(r)
    np.testing.assert_allclose(back.curve("acc_icl_m2only", "K2=8"), here.curve("acc_icl_m2only", "K2=8"), atol=1e-6)
    assert np.asarray(r["result"]["analysis"]).shape == (2, TINY.layers, TINY.heads)
    assert run_here([f], Store(tmp_path / "store")).skipped == 1 and calls["fusion"] == 1


@pytest.mark.train
def test_the_status_listing_counts_the_multimodal_kinds(tmp_path):
    store = Store(tmp_path / "store")
    specs = [spec("stage1", STAGE1), spec("stage2", stage2_settings()), spec("fusion", FUSION)]
    run_in(store, specs)
    ro = Store(tmp_path / "store", writable=False)
    assert ro.summary() == {"done": 3} and {r["kind"] for r in ro.table()} == {"stage1", "stage2", "fusion"}
    index = json.loads((store.root / "index.json").read_text())["runs"]
    assert sorted(e["kind"] for e in index.values()) == ["fusion", "stage1", "stage2"]
    out = CliRunner().invoke(main, ["sweep", "--status", "--store", str(store.root)])
    assert out.exit_code == 0 and "done 3" in out.stdout, out.output


def test_normalise_fills_defaults_and_refuses_bad_settings():
    s1 = KINDS["stage1"].normalise(STAGE1)
    assert s1["device"] == "cpu" and s1["model"]["ape_slots"] >= 21 and KINDS["stage1"].normalise(s1) == s1
    s2 = KINDS["stage2"].normalise(stage2_settings())
    assert (s2["trainable"], s2["data_seed"], s2["device"], s2["analysis"]) == ("projector+readout", 3, "cpu", None)
    assert s2["stage1"] == s1 and KINDS["stage2"].normalise(s2) == s2
    # an unfrozen stage 2 (testbed claim 9, version 3) is a setting of its own; the default's key is unchanged
    unfrozen = KINDS["stage2"].normalise(stage2_settings(trainable="all"))
    assert unfrozen["trainable"] == "all" and RunSpec("stage2", unfrozen).key != RunSpec("stage2", s2).key
    assert arms_from_json(s2["arms"]) == ARMS
    # a stage-2 run's key follows its stage-1 settings
    other = KINDS["stage2"].normalise({**stage2_settings(), "stage1": {**STAGE1, "seeds": [0, 2]}})
    assert RunSpec("stage2", other).key != RunSpec("stage2", s2).key
    bad = [("stage1", {**STAGE1, "seed": 0}, "no setting"), ("stage1", {**STAGE1, "seeds": []}, "seeds"),
           ("stage1", {k: v for k, v in STAGE1.items() if k != "data"}, "needs"),
           ("stage1", {**STAGE1, "device": "tpu"}, "device"),
           ("stage2", stage2_settings(trainable="blocks"), "trainable"),
           ("stage2", {**stage2_settings(), "arms": []}, "arms"),
           ("stage2", {**stage2_settings(), "arms": [arm_to_json(ARMS[0])] * 2}, "differ"),
           ("stage2", {**stage2_settings(), "arms": [{**arm_to_json(ARMS[0]), "decoder": "x"}]}, "decoder"),
           ("stage2", stage2_settings(analysis={"name": "ablation_drop"}), "parameters"),
           ("stage2", stage2_settings(analysis={"name": "ablation_drop", "set_name": "nope"}), "set_name"),
           ("fusion", {**FUSION, "arms": [arm_to_json(dataclasses.replace(ARMS[0], encoder_steps=1)),
                                          arm_to_json(ARMS[1])]}, "encoder")]
    for kind, settings, words in bad:
        with pytest.raises(ValueError, match=words):
            KINDS[kind].normalise(settings)


@pytest.mark.train
def test_a_stage2_run_measuring_one_set_gives_that_sets_curves_bit_for_bit_and_a_key_of_its_own(tmp_path):
    """``eval_on`` skips the other sets' forward passes: the measured set's curves are the full
    evaluation's exactly (training does not read the evaluation), the others are absent, and a run
    that measures every set keeps the key it had before the setting existed (no ``eval_on`` key)."""
    store = Store(tmp_path / "store")
    full, one = spec("stage2", stage2_settings()), spec("stage2", stage2_settings(eval_on=["icl_m2known"]))
    assert "eval_on" not in full.config and one.config["eval_on"] == ["icl_m2known"] and one.key != full.key
    assert KINDS["stage2"].normalise(one.config) == one.config
    run_in(store, [spec("stage1", STAGE1), full, one])
    a, b = stored_arm_results(store.record(full.key)), stored_arm_results(store.record(one.key))
    assert set(b.run.history.metrics) == {"acc_icl_m2known"} < set(a.run.history.metrics)
    for arm in ("K2=8", "random"):
        assert np.array_equal(b.curve("acc_icl_m2known", arm), a.curve("acc_icl_m2known", arm))
    for eval_on, words in (("icl_m2known", "list"), (["icl", "nope"], "nope unknown"), ([], "one or more")):
        with pytest.raises(ValueError, match=words):
            KINDS["stage2"].normalise(stage2_settings(eval_on=eval_on))
