"""``mmicl testbed stage1|stage2|fusion|encoder`` run end to end at a toy size (structure only: the
files, the JSON keys, the exit codes and messages of bad inputs; whether the protocol works is
measured by the ``testbed.claim4``–``claim9`` registry claims, not here)."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from click.testing import CliRunner

from mmicl.proofs.claims.testbed import sizes
from mmicl.numerics.testbed.config import DataConfig, SecondModality, TrainConfig
from mmicl.cli import main
from mmicl.commands.testbed_multimodal import MULTIMODAL_METRICS

pytestmark = pytest.mark.xdist_group("testbed_commands")
"""One worker runs every test of this group (``--dist loadgroup``): they share what a fixture built once."""

torch.set_num_threads(1)

TINY_TRAIN = TrainConfig(steps=2, batch=8, lr=1e-3, eval_every=2, eval_size=8)
TOY = replace(sizes.MULTIMODAL_QUICK, m1=DataConfig(K=64, L=4, D=8, N=4, B=2, p_bursty=1.0, eps=0.1),
              model=replace(sizes.MULTIMODAL_QUICK.model, width=8), stage1=TINY_TRAIN, stage2=TINY_TRAIN,
              m2=SecondModality(K=4, D=8, eps=0.1), seeds=2, encoder_K2=8, encoder_steps=(0, 3))
METRICS = {"acc_icl", "acc_icl_m2only", "acc_icl_m1only", "acc_iwl", "acc_flip", "conflict_follow_m1",
           "conflict_follow_m2", "induction_max", "prev_token_max", "attn_match_m1_top", "attn_match_m2_top"}


def test_the_commands_report_the_metrics_the_claims_read():
    assert METRICS <= set(MULTIMODAL_METRICS)


@pytest.fixture(autouse=True)
def toy(monkeypatch):
    monkeypatch.setattr(sizes, "MULTIMODAL_QUICK", TOY)


def _run(*argv: str):
    r = CliRunner().invoke(main, ["testbed", *argv])
    assert r.exit_code == 0, (r.output, r.exception)
    return r


def _json(*argv: str) -> dict:
    return json.loads(_run(*argv, "--json").output)


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """One stage-1 checkpoint (2 seeds) for every stage-2 test."""
    mp = pytest.MonkeyPatch()
    mp.setattr(sizes, "MULTIMODAL_QUICK", TOY)
    try:
        path = tmp_path_factory.mktemp("stage1") / "stage1.pt"
        out = _json("stage1", "--quick", "--out", str(path), "--device", "cpu")
    finally:
        mp.undo()
    return path, out


def _check_final(out: dict, seeds: int, encoder: bool = False, last: int = 2) -> None:
    final = out["final"]
    assert set(final) == set(MULTIMODAL_METRICS) | ({"encoder_acc"} if encoder else set()) and METRICS <= set(final)
    for v in final.values():
        assert set(v) >= {"mean", "interval95", "seeds"} and len(v["seeds"]) == seeds
    baselines = {"copy", "uniform_guess", "prev_token", "induction", "attn_match_m1", "attn_match_m2"}
    assert baselines <= set(out["baselines"])
    assert out["baselines"]["copy"] == 0.5 and out["baselines"]["uniform_guess"] == 0.25
    assert out["history"]["steps"][0] == 0 and out["history"]["steps"][-1] == last


@pytest.mark.train
def test_stage1_writes_a_checkpoint(checkpoint):
    path, out = checkpoint
    assert path.is_file() and out["checkpoint"] == str(path)
    assert len(out["seeds"]) == 2 and out["settings"]["m1"]["K"] == 64
    assert {"acc_icl", "acc_iwl", "induction_max"} <= set(out["final"])
    assert len(out["final"]["acc_icl"]["seeds"]) == 2


@pytest.mark.train
@pytest.mark.parametrize("layout", ["m1_first", "m2_first"])
def test_stage2_from_the_checkpoint_reports_the_conflict_rates(checkpoint, layout, tmp_path):
    path, s1 = checkpoint
    out = _json("stage2", "--from", str(path), "--quick", "--layout", layout, "--device", "cpu",
                "--out", str(tmp_path))
    _check_final(out, seeds=2)
    assert out["seeds"] == s1["seeds"] and out["settings"]["layout"] == layout
    assert out["settings"]["trainable"] == "projector+readout" and out["settings"]["m2"]["K"] == 4
    saved = json.loads((tmp_path / "testbed_stage2.json").read_text())
    assert saved["final"]["conflict_follow_m1"] == out["final"]["conflict_follow_m1"]
    assert (tmp_path / "testbed_stage2.png").is_file()


@pytest.mark.train
def test_stage2_with_an_encoder_a_random_decoder_and_the_projector_alone(checkpoint):
    path, _ = checkpoint
    out = _json("stage2", "--from", str(path), "--quick", "--K2", "8", "--encoder-steps", "2", "--random-decoder",
                "--no-train-readout", "--device", "cpu")
    _check_final(out, seeds=2, encoder=True)
    assert out["settings"]["trainable"] == "projector" and out["settings"]["decoder"] == "random"
    r = _run("stage2", "--from", str(path), "--quick", "--steps", "1", "--device", "cpu")  # the printed summary
    assert "conflict_follow_m2" in r.output and "baselines" in r.output


@pytest.mark.train
@pytest.mark.parametrize("layout", ["m1_first", "m2_first"])
def test_fusion_reports_the_conflict_rates(layout, tmp_path):
    out = _json("fusion", "--quick", "--layout", layout, "--seeds", "1", "--device", "cpu", "--out", str(tmp_path))
    _check_final(out, seeds=1, last=4)  # fusion's default steps: stage 1's and stage 2's
    assert out["settings"]["train"]["steps"] == 4
    assert out["final"]["conflict_follow_m1"]["interval95"] is None
    assert out["final"]["conflict_follow_m1"]["interval95_null_reason"]
    assert out["settings"]["trainable"] == "all" and out["settings"]["layout"] == layout
    assert (tmp_path / "testbed_fusion.json").is_file() and (tmp_path / "testbed_fusion.png").is_file()


@pytest.mark.train
def test_encoder_reports_held_out_accuracy_per_number_of_steps():
    out = _json("encoder", "--quick", "--steps-list", "0,3", "--device", "cpu")
    assert out["steps"] == [0, 3] and set(out["encoder_acc"]) == {"0", "3"}
    assert all(len(v["seeds"]) == 2 and 0 <= v["mean"] <= 1 for v in out["encoder_acc"].values())
    assert out["settings"]["m2"]["K"] == 8


def _refused(argv: list[str], option: str, fragment: str) -> None:
    r = CliRunner().invoke(main, ["testbed", *argv])
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert "Traceback" not in r.output
    error = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and option in error[0] and fragment in error[0], r.output


def test_bad_inputs_are_usage_errors(checkpoint, tmp_path):
    path, _ = checkpoint
    missing = tmp_path / "nope.pt"
    _refused(["stage2", "--from", str(missing), "--quick"], "--from", f"no stage-1 checkpoint at {missing}")
    garbled = tmp_path / "garbled.pt"
    garbled.write_bytes(b"not a checkpoint")
    _refused(["stage2", "--from", str(garbled), "--quick"], "--from", "is not a stage-1 checkpoint")
    _refused(["stage2", "--from", str(path), "--quick", "--K2", "6"], "--K2", "must be a multiple of L=4")
    _refused(["fusion", "--quick", "--K2", "6"], "--K2", "must be a multiple of L=4")
    _refused(["encoder", "--quick", "--K2", "6"], "--K2", "must be a multiple of L=4")
    _refused(["encoder", "--quick", "--steps-list", "3,3"], "--steps-list", "more than once")
    _refused(["encoder", "--quick", "--steps-list", "-1"], "--steps-list", "integer from 0")
    _refused(["stage1", "--quick", "--out", str(tmp_path)], "--out", "it is a folder")
    _refused(["stage1", "--quick", "--N", "2", "--out", str(tmp_path / "x.pt")], "--N/--B", "conflict set")
    _refused(["stage1", "--quick"], "--out", "Missing option")


@pytest.mark.parametrize("command, options", [
    ("stage1", ["--K", "--L", "--pB", "--zipf", "--layers", "--pos", "--steps", "--eval-every", "--seeds", "--seed",
                "--device", "--threads", "--out", "--json", "--quick"]),
    ("stage2", ["--from", "--K2", "--D2", "--eps2", "--zipf2", "--pB", "--layout", "--train-readout",
                "--no-train-readout", "--encoder-steps", "--random-decoder", "--steps", "--batch", "--lr",
                "--eval-every", "--seed", "--device", "--threads", "--out", "--json", "--quick"]),
    ("fusion", ["--K", "--N", "--D", "--L", "--B", "--K2", "--D2", "--layout", "--encoder-steps", "--width",
                "--steps", "--seeds", "--seed", "--out", "--json", "--quick"]),
    ("encoder", ["--K2", "--D2", "--eps2", "--zipf2", "--steps-list", "--seeds", "--seed", "--device", "--threads",
                 "--json", "--quick"]),
])
def test_help_lists_the_options(command, options):
    r = CliRunner().invoke(main, ["testbed", command, "--help"])
    assert r.exit_code == 0
    missing = [o for o in options if o not in r.output]
    assert not missing, missing


def test_the_testbed_group_lists_the_new_commands():
    r = CliRunner().invoke(main, ["testbed", "--help"])
    assert r.exit_code == 0
    for c in ("stage1", "stage2", "fusion", "encoder", "train", "sweep"):
        assert f"  {c} " in r.output, r.output


@pytest.mark.train
def test_testbed_train_command_prints_json_curves():
    from mmicl.cli import main

    r = CliRunner().invoke(main, ["testbed", "train", "--quick", "--steps", "3", "--eval-every", "3", "--seeds", "2",
                                  "--width", "8", "--batch", "8", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["history"]["steps"] == [0, 3] and len(out["final"]["acc_icl"]["seeds"]) == 2


def test_testbed_rejects_bad_settings_with_a_message():
    from mmicl.cli import main

    r = CliRunner().invoke(main, ["testbed", "train", "--quick", "--K", "100", "--steps", "1"])
    assert r.exit_code != 0 and "multiple of L" in r.output
