"""The stage-1 artefact of the multimodal protocol: one file that stage 2 loads and never
regenerates.

It holds, per member of the stage-1 ensemble: the decoder weights, the M1 class means and label
vectors it was trained with, its data settings and seed; and, shared: the decoder's shape, the
training settings, the final stage-1 metrics, the package version and the time it took.  Stage 2
reads the class means and label vectors from here (an in-weights shortcut through regenerated
tables is impossible by construction).  Written atomically (``numerics.atomic``); read with
``torch.load(weights_only=True)`` (tensors, numbers and strings only: no code is unpickled).

Beside its content the file stores the SHA-256 of all of it (``numerics.digest``: the weights, the
tables and the JSON record with the settings and the final metrics).  ``Stage1.load`` refuses, in
one ``Stage1Error`` line naming the file and what is wrong: a file it cannot read; one of an earlier
format (``/1`` had no hash, so it cannot be verified); a hash that does not match (the file was
changed after mmicl wrote it: zeroed weights, an edited metric); and, behind a matching hash, weights
whose names are not exactly the decoder's for the recorded ``ModelConfig``, tensors whose shapes are
not E × the decoder's (class means E × K_max × D, label vectors E × L × D for the recorded data),
and non-finite values.
"""
from __future__ import annotations

import io
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from .config import DataConfig, MemberSpec, ModelConfig, TestbedConfigError, TrainConfig, stage1_ape_slots
from mmicl.numerics.testbed.model import EnsembleDecoder
from mmicl.numerics.atomic import write_bytes
from mmicl.numerics.digest import digest

__all__ = ["FORMAT", "EARLIER", "REMAKE", "MAKE", "Stage1Error", "size_lower_bound", "Stage1"]


FORMAT = "mmicl.testbed.stage1/2"
"""``/2``: the content hash (``digest``) beside the content; ``/1`` (no hash) is refused."""
EARLIER = ("mmicl.testbed.stage1/1",)
REMAKE = "remake it with `mmicl testbed stage1 --out FILE`"
MAKE = "give a file written by `mmicl testbed stage1 --out FILE`"


class Stage1Error(TestbedConfigError):
    """A stage-1 file that cannot be used: ``str()`` is one line, the path, what is wrong and what to
    do; ``problem`` is what is wrong alone (for a caller with its own remedy, such as a cache)."""

    def __init__(self, path: Path, problem: str, advice: str = ""):
        self.path, self.problem = Path(path), problem
        super().__init__(f"{path} {problem}" + (f"; {advice}" if advice else ""))


def size_lower_bound(model: ModelConfig, data: DataConfig, members: int) -> int:
    """Bytes a stage-1 file of ``members`` decoders takes at least: their float32 weights (members ×
    the decoder's parameters, APE slots as ``run_stage1`` adds them), class means (members × K × D)
    and label vectors (members × L × D); a lower bound (the JSON record and the pickle framing come
    on top), so a disk check with it never refuses a file that fits."""

    params = sum(p[0].numel() for p in EnsembleDecoder(stage1_ape_slots(model, data), data.D, data.L, [0]).parameters())
    return 4 * members * (params + data.K * data.D + data.L * data.D)


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
    history: object = field(default=None, compare=False, repr=False)
    """the stage-1 run's curves (``train.History``) when it was just trained; not in the checkpoint
    (None after ``load``)"""

    @property
    def E(self) -> int:
        return len(self.members)

    def trained_with(self, model: ModelConfig, data, train: TrainConfig, seeds, data_seed: int) -> bool:
        """Whether this checkpoint records these settings: the decoder, the M1 data of every member,
        the training, the members' seeds in order, and the data seed."""
        return ((self.model, self.train, self.data_seed) == (model, train, data_seed)
                and [(m.data, m.seed) for m in self.members] == [(data, s) for s in seeds])

    def state(self, e: int) -> dict[str, torch.Tensor]:
        """Member e's decoder weights."""
        return {k: v[e] for k, v in self.weights.items()}

    def _payload(self) -> dict:
        meta = {"format": FORMAT, "model": asdict(self.model), "train": asdict(self.train),
                "members": [{"data": asdict(m.data), "seed": m.seed} for m in self.members],
                "final": self.final, "data_seed": self.data_seed, "seconds": self.seconds, "version": self.version}
        return {"meta": json.dumps(meta), "weights": {k: v.detach().cpu() for k, v in self.weights.items()},
                "means": self.means.detach().cpu(), "label_vectors": self.label_vectors.detach().cpu()}

    def save(self, path: str | Path) -> Path:
        """Write the checkpoint with its content hash, atomically (a full disk: ``DiskFullError``,
        the file at ``path`` left as it was)."""

        payload = self._payload()
        payload["digest"] = digest(payload)
        buf = io.BytesIO()
        torch.save(payload, buf)
        write_bytes(Path(path), buf.getvalue())
        return Path(path)

    @staticmethod
    def load(path: str | Path) -> "Stage1":
        """The checkpoint at ``path``, verified (see the module docstring); else ``Stage1Error``."""

        path = Path(path)
        if not path.is_file():
            raise TestbedConfigError(f"no stage-1 checkpoint at {path}: make one with `mmicl testbed stage1 --out {path}`")
        try:
            raw = torch.load(path, map_location="cpu", weights_only=True)
            meta = json.loads(raw["meta"])
        except Exception as e:  # noqa: BLE001 -- any unreadable file gets the same message
            raise Stage1Error(path, f"is not a stage-1 checkpoint of mmicl (unreadable: {type(e).__name__})",
                              MAKE) from None
        found = meta.get("format") if isinstance(meta, dict) else None
        if found in EARLIER:
            raise Stage1Error(path, f"was written by an earlier mmicl (format {found}, without a content hash) and "
                                    "cannot be verified", REMAKE)
        if found != FORMAT:
            raise Stage1Error(path, f"has format {found!r}; this version reads {FORMAT!r}", MAKE)
        stored = raw.get("digest")
        if not isinstance(stored, str):
            raise Stage1Error(path, "carries no content hash (damaged)", REMAKE)
        try:
            actual = digest({k: v for k, v in raw.items() if k != "digest"})
        except TypeError as e:
            raise Stage1Error(path, f"is a damaged stage-1 checkpoint ({e})", REMAKE) from None
        if actual != stored:
            raise Stage1Error(path, "has a content hash that does not match: the file was changed after mmicl wrote it",
                              REMAKE)
        try:
            members = [MemberSpec(DataConfig(**m["data"]), m["seed"]) for m in meta["members"]]
            s1 = Stage1(ModelConfig(**meta["model"]), members, TrainConfig(**meta["train"]), raw["weights"],
                        raw["means"], raw["label_vectors"], meta["final"], meta["data_seed"], meta["seconds"],
                        meta["version"])
        except (KeyError, TypeError, ValueError) as e:  # ValueError: TestbedConfigError of a setting
            raise Stage1Error(path, f"is a damaged stage-1 checkpoint ({type(e).__name__}: {e})", REMAKE) from None
        problem = s1._problem()
        if problem:
            raise Stage1Error(path, problem, REMAKE)
        return s1

    def _problem(self) -> str | None:
        """What makes this checkpoint unusable by stage 2, or None: no members, members of different
        D or L, weight names other than the decoder's, shapes other than E × the decoder's (tables
        E × K_max × D and E × L × D), non-float or non-finite tensors, metrics that are not a dict."""

        if not self.members:
            return "holds no decoders (no members)"
        D, L = self.members[0].data.D, self.members[0].data.L
        if any((m.data.D, m.data.L) != (D, L) for m in self.members):
            return "has members with different M1 dimensions D or labels L"
        if not isinstance(self.final, dict):
            return "has no final stage-1 metrics (not a dict)"
        E, K = self.E, max(m.data.K for m in self.members)
        if not isinstance(self.weights, dict) or not all(isinstance(v, torch.Tensor) for v in self.weights.values()):
            return "has weights that are not tensors"
        # the decoder of the recorded ModelConfig, one member (a few randn draws): its names and shapes
        expected = {k: (E, *v.shape[1:]) for k, v in EnsembleDecoder(self.model, D, L, [0]).weights.items()}
        missing = [k for k in expected if k not in self.weights]
        if missing:
            return f"lacks the decoder weight{'s' if len(missing) > 1 else ''} {', '.join(missing)}"
        extra = [k for k in self.weights if k not in expected]
        if extra:
            return (f"has weight{'s' if len(extra) > 1 else ''} {', '.join(map(str, extra))} that the decoder "
                    f"(layers={self.model.layers}) does not have")
        tensors = [(f"weight {k}", self.weights[k], expected[k]) for k in expected]
        tensors += [("the class means", self.means, (E, K, D)), ("the label vectors", self.label_vectors, (E, L, D))]
        for what, t, shape in tensors:
            if not isinstance(t, torch.Tensor):
                return f"has {what} that is not a tensor"
            if tuple(t.shape) != shape:
                return f"has {what} of shape {tuple(t.shape)}, expected {shape} (E={E} members)"
            if not t.is_floating_point():
                return f"has {what} of dtype {t.dtype}, expected a floating-point dtype"
        for what, t, _ in tensors:
            bad = int((~torch.isfinite(t)).sum())
            if bad:
                return f"has {bad} non-finite value{'s' if bad > 1 else ''} in {what}"
        return None
