"""The ``fusion`` kind: early fusion from scratch (``run_fusion``): settings ``{"model", "m1", "arms",
"seeds", "train", "device", "data_seed", "analysis"}`` (arms as for ``stage2``); result as
``stage2``'s without ``stage1``."""
from __future__ import annotations

from dataclasses import asdict

from ..artifacts import snapshot_for
from . import Kind
from .multimodal import FUSION_SETTINGS, analysis_setting, arms_result, check_settings, device_setting, seed_list
from mmicl.numerics.provenance import __version__
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig, stage1_ape_slots
from mmicl.numerics.validate import check_seed

__all__ = ["KIND"]


def _fusion_normalise(config: dict) -> dict:
    from mmicl.numerics.testbed.multimodal_experiments import arm_to_json, arms_from_json

    config = check_settings("fusion", config, FUSION_SETTINGS, {"model", "m1", "arms", "seeds", "train"})
    m1 = DataConfig(**config["m1"])
    return {"model": asdict(stage1_ape_slots(ModelConfig(**config["model"]), m1)), "m1": asdict(m1),
            "arms": [arm_to_json(a) for a in arms_from_json(config["arms"])], "seeds": seed_list(config["seeds"]),
            "train": asdict(TrainConfig(**config["train"])), "device": device_setting(config),
            "data_seed": check_seed(config.get("data_seed", 0), "data_seed"),
            "analysis": analysis_setting(config.get("analysis")), "mmicl": __version__}


def _fusion_compute(config: dict, progress: bool = False, description: str = "fusion") -> dict:
    from mmicl.numerics.testbed.multimodal_experiments import arms_from_json, run_fusion

    r = run_fusion(ModelConfig(**config["model"]), DataConfig(**config["m1"]), arms_from_json(config["arms"]),
                   config["seeds"], TrainConfig(**config["train"]), device=config["device"],
                   data_seed=config["data_seed"], progress=progress, description=description,
                   snapshot=snapshot_for("fusion", config))
    return arms_result(r, config)


KIND = Kind(FUSION_SETTINGS, _fusion_normalise, _fusion_compute)
