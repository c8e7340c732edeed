"""The ``stage2`` kind: stage 2 on a ``stage1`` run's checkpoint (``run_stage2``): settings
``{"stage1"`` (the stage1 run's settings, whose key names its record), ``"arms"`` (``[{"name",
"data": {"m1", "m2", "p_bursty", "layout"}, "decoder", "encoder_steps"}]``, ``MultimodalArm`` as
``arm_to_json`` writes it), ``"train", "trainable"`` ("projector+readout"; "projector"; "all": every
weight trains, the unfrozen stage 2 of testbed claim 9), ``"device", "data_seed"`` (both the
stage-1 run's by default), ``"analysis"`` (None, or ``{"name", **parameters}`` of
``multimodal.multimodal_analyses()``), ``"eval_on"`` (optional: the evaluation sets measured during
training, ``multimodal_metrics.METRICS_OF``; absent, every set)}``; the stage-1 record must be
finished and its checkpoint have the SHA-256 it states and load (``artifacts.load_stage1``), else
the run fails with one line naming the file and what to do.  Result: as ``ensemble`` — ``summary``
(the final value of every scalar metric, ``induction_max`` and ``prev_token_max`` per arm and
stage-1 member), ``history`` (every curve), ``analysis`` — and ``stage1`` ``{"key", "sha256"}``, the
checkpoint it started from.  One run is one arms list on one stage-1 run (one ensemble, as the
claims train it); a one-arm list is a run of its own, so a claim may go arm by arm, but the members
of a lone arm get the seeds of the first arm of a grid (not a bit-for-bit piece of the joint run)."""
from __future__ import annotations

from dataclasses import asdict

from ..artifacts import StoredArtifactError, load_stage1, snapshot_for, stage1_record_path, store_root
from ..store import read_record
from . import Kind
from .multimodal import STAGE2_SETTINGS, analysis_setting, arms_result, check_settings, device_setting
from .stage1 import normalise as _stage1_normalise
from mmicl.numerics.provenance import __version__
from mmicl.numerics.testbed.config import TrainConfig
from mmicl.numerics.validate import check_seed

__all__ = ["KIND"]


def _stage2_normalise(config: dict) -> dict:
    from mmicl.numerics.testbed.multimodal_experiments import arm_to_json, arms_from_json
    from mmicl.numerics.testbed.multimodal_metrics import check_eval_on

    config = check_settings("stage2", config, STAGE2_SETTINGS, {"stage1", "arms", "train"})
    s1 = _stage1_normalise(config["stage1"])
    trainable = config.get("trainable", "projector+readout")
    if trainable not in ("projector", "projector+readout", "all"):
        raise ValueError(f"trainable must be 'projector' or 'projector+readout' (the decoder's blocks frozen, as "
                         f"published), or 'all' (an unfrozen stage 2, testbed claim 9), got {trainable!r}")
    out = {"stage1": s1, "arms": [arm_to_json(a) for a in arms_from_json(config["arms"])],
           "train": asdict(TrainConfig(**config["train"])), "trainable": trainable,
           "device": device_setting(config, s1["device"]),
           "data_seed": check_seed(config.get("data_seed", s1["data_seed"]), "data_seed"),
           "analysis": analysis_setting(config.get("analysis")), "mmicl": __version__}
    eval_on = check_eval_on(config.get("eval_on"))
    if eval_on is not None:  # absent when every set is measured, so those runs keep their keys
        out["eval_on"] = list(eval_on)
    return out


def _stage2_compute(config: dict, progress: bool = False, description: str = "stage2") -> dict:
    from mmicl.numerics.testbed.multimodal_experiments import arms_from_json, run_stage2

    root = store_root("stage2")
    where = stage1_record_path(root, config["stage1"])
    record, why = read_record(where) if where.is_file() else (None, "no such file")
    if record is None or record["status"] != "done":
        state = why if record is None else f"it failed: {record.get('error')}"
        raise StoredArtifactError(f"the stage-1 run of this stage-2 run has no finished record {where} ({state}): "
                                  "run the stage1 run first (runner.stored_stage1, or its spec before this one)")
    s1 = load_stage1(root, record)
    r = run_stage2(s1, arms_from_json(config["arms"]), TrainConfig(**config["train"]), trainable=config["trainable"],
                   device=config["device"], data_seed=config["data_seed"], progress=progress, description=description,
                   eval_on=config.get("eval_on"), snapshot=snapshot_for("stage2", config))
    used = {"key": record["key"], "sha256": record["result"]["artifact"]["sha256"]}
    return {**arms_result(r, config), "stage1": used}


KIND = Kind(STAGE2_SETTINGS, _stage2_normalise, _stage2_compute)
