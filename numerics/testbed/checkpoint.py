"""The stage-1 artefact of the multimodal protocol: one file that stage 2 loads and never
regenerates.

It holds, per member of the stage-1 ensemble: the decoder weights, the M1 class means and label
vectors it was trained with, its data settings and seed; and, shared: the decoder's shape, the
training settings, the final stage-1 metrics, the package version and the time it took.  Stage 2
reads the class means and label vectors from here (an in-weights shortcut through regenerated
tables is impossible by construction).  Written atomically (``numerics.atomic``); read with
``torch.load(weights_only=True)`` (tensors, numbers and strings only: no code is unpickled).
"""
from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from .config import DataConfig, MemberSpec, ModelConfig, TestbedConfigError, TrainConfig

FORMAT = "mmicl.testbed.stage1/1"


@dataclass
class Stage1:
    model: ModelConfig
    members: list[MemberSpec]
    train: TrainConfig
    weights: dict[str, torch.Tensor]   # name → (E, …) stacked decoder weights
    means: torch.Tensor                # (E, K_max, D1) M1 class means
    label_vectors: torch.Tensor        # (E, L, D1)
    final: dict[str, list]             # stage-1 metrics at the last step, per member
    data_seed: int
    seconds: float
    version: str

    @property
    def E(self) -> int:
        return len(self.members)

    def state(self, e: int) -> dict[str, torch.Tensor]:
        """Member e's decoder weights."""
        return {k: v[e] for k, v in self.weights.items()}

    def save(self, path: str | Path) -> Path:
        from ..atomic import write_bytes

        meta = {"format": FORMAT, "model": asdict(self.model), "train": asdict(self.train),
                "members": [{"data": asdict(m.data), "seed": m.seed} for m in self.members],
                "final": self.final, "data_seed": self.data_seed, "seconds": self.seconds, "version": self.version}
        buf = io.BytesIO()
        torch.save({"meta": json.dumps(meta), "weights": {k: v.detach().cpu() for k, v in self.weights.items()},
                    "means": self.means.detach().cpu(), "label_vectors": self.label_vectors.detach().cpu()}, buf)
        write_bytes(Path(path), buf.getvalue())
        return Path(path)

    @staticmethod
    def load(path: str | Path) -> "Stage1":
        path = Path(path)
        if not path.is_file():
            raise TestbedConfigError(f"no stage-1 checkpoint at {path}: make one with `mmicl testbed stage1 --out {path}`")
        try:
            raw = torch.load(path, map_location="cpu", weights_only=True)
            meta = json.loads(raw["meta"])
        except Exception as e:  # noqa: BLE001 -- any unreadable file gets the same message
            raise TestbedConfigError(f"{path} is not a stage-1 checkpoint of mmicl (unreadable: {type(e).__name__}); "
                                     "give a file written by `mmicl testbed stage1 --out FILE`") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            found = meta.get("format") if isinstance(meta, dict) else None
            raise TestbedConfigError(f"{path} has format {found!r}; this version reads {FORMAT!r}")
        try:
            members = [MemberSpec(DataConfig(**m["data"]), m["seed"]) for m in meta["members"]]
            return Stage1(ModelConfig(**meta["model"]), members, TrainConfig(**meta["train"]), raw["weights"],
                          raw["means"], raw["label_vectors"], meta["final"], meta["data_seed"], meta["seconds"],
                          meta["version"])
        except (KeyError, TypeError, TestbedConfigError) as e:
            raise TestbedConfigError(f"{path} is a damaged stage-1 checkpoint ({type(e).__name__}: {e})") from None
