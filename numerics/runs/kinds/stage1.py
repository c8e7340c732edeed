"""The ``stage1`` kind: stage 1 of the multimodal protocol
(``numerics.testbed.multimodal_experiments.run_stage1``): settings ``{"model", "data" (M1), "train",
"seeds" (a list), "data_seed" (0), "device" ("cpu")}`` (the model with the APE slots stage 1 really
trains, ``stage1_ape_slots``); result: ``artifact`` ``{"file", "sha256", "bytes"}`` of its
checkpoint, written (atomically, ``Stage1.save``) to ``<store>/artifacts/<key>.pt`` and verified
once written, and ``final``, the final stage-1 metrics per seed (per head for the head scores).  The
record holds no weights."""
from __future__ import annotations

from dataclasses import asdict

from ..artifacts import ARTIFACTS, sha256, snapshot_for, store_root
from ..key import run_key
from . import Kind
from .multimodal import STAGE1_SETTINGS, check_settings, device_setting, seed_list
from mmicl.numerics.provenance import __version__
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig, stage1_ape_slots
from mmicl.numerics.validate import check_seed

__all__ = ["KIND", "normalise"]


def _stage1_normalise(config: dict) -> dict:

    config = check_settings("stage1", config, STAGE1_SETTINGS, {"model", "data", "train", "seeds"})
    data = DataConfig(**config["data"])
    model = stage1_ape_slots(ModelConfig(**config["model"]), data)      # the decoder stage 1 really trains
    return {"model": asdict(model), "data": asdict(data), "train": asdict(TrainConfig(**config["train"])),
            "seeds": seed_list(config["seeds"]), "data_seed": check_seed(config.get("data_seed", 0), "data_seed"),
            "device": device_setting(config), "mmicl": __version__}


def _stage1_compute(config: dict, progress: bool = False, description: str = "stage1") -> dict:
    from mmicl.numerics.testbed.checkpoint import Stage1
    from mmicl.numerics.testbed.multimodal_experiments import run_stage1

    folder = store_root("stage1") / ARTIFACTS
    s1 = run_stage1(ModelConfig(**config["model"]), DataConfig(**config["data"]), config["seeds"],
                    TrainConfig(**config["train"]), device=config["device"], data_seed=config["data_seed"],
                    progress=progress, snapshot=snapshot_for("stage1", config))
    folder.mkdir(parents=True, exist_ok=True)
    path = s1.save(folder / f"{run_key('stage1', config)}.pt")
    Stage1.load(path)                                  # what stage 2 will read: verified once written
    return {"artifact": {"file": path.name, "sha256": sha256(path), "bytes": path.stat().st_size},
            "final": s1.final}


normalise = _stage1_normalise
"""The full configuration of a stage-1 run (stage-2 runs normalise the stage-1 settings they name with it)."""
KIND = Kind(STAGE1_SETTINGS, _stage1_normalise, _stage1_compute)
