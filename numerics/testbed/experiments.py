"""Grids of runs: several data settings ("arms") × several seeds as ONE ensemble per model shape.

``run_arms(model, arms, seeds, train)`` trains ``len(arms) · len(seeds)`` models at once and returns
``ArmResults``, which answers "the final (or peak) value of a metric for arm a, one number per seed"
and "the curve of a metric for arm a".  Per-head metrics are reduced to scalars by
``induction_max`` (strongest induction score over all heads) and ``prev_token_max`` (strongest
previous-token score over all heads).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import DataConfig, MemberSpec, ModelConfig, TrainConfig
from .train import History, TrainedEnsemble, train_ensemble

DERIVED = {
    "induction_max": ("induction", lambda t: t.flatten(-2).max(-1).values),
    "prev_token_max": ("prev_token", lambda t: t.flatten(-2).max(-1).values),
}


@dataclass(frozen=True)
class Arm:
    """One data setting of a grid, with a short name for tables and figures."""

    name: str
    data: DataConfig


@dataclass
class StoredRun:
    """An ensemble run read back from a results store: its curves (the models are not kept)."""

    history: History


@dataclass
class ArmResults:
    arms: list[Arm]
    seeds: list[int]
    run: TrainedEnsemble | StoredRun

    def _index(self, arm: str) -> list[int]:
        names = [a.name for a in self.arms]
        if arm not in names:
            raise KeyError(f"no arm {arm!r}; arms are {names}")
        a = names.index(arm)
        return [a * len(self.seeds) + s for s in range(len(self.seeds))]

    def curve(self, metric: str, arm: str) -> np.ndarray:
        """(evaluations, seeds) values of a scalar metric (or a ``DERIVED`` one) along training."""
        h = self.run.history
        if metric in DERIVED:
            base, reduce = DERIVED[metric]
            full = reduce(h.curve(base))
        else:
            full = h.curve(metric)
        if full.dim() != 2:
            raise ValueError(f"{metric} is per head; use one of {sorted(DERIVED)}")
        return full[:, self._index(arm)].numpy()

    def final(self, metric: str, arm: str) -> np.ndarray:
        return self.curve(metric, arm)[-1]

    def peak(self, metric: str, arm: str) -> np.ndarray:
        return self.curve(metric, arm).max(0)

    @property
    def steps(self) -> list[int]:
        return self.run.history.steps

    def table(self, metrics=("acc_icl", "acc_iwl", "acc_flip", "iwl_context_rate", "induction_max",
                             "prev_token_max")) -> dict:
        """Final value per arm and metric: mean and per-seed values (JSON-ready)."""
        return {a.name: {m: {"mean": float(self.final(m, a.name).mean()),
                             "seeds": [round(float(v), 4) for v in self.final(m, a.name)]}
                         for m in metrics} | {"peak_acc_icl": [round(float(v), 4) for v in self.peak("acc_icl", a.name)]}
                for a in self.arms}


def run_arms(model: ModelConfig, arms: list[Arm], seeds: list[int], train: TrainConfig,
             device: str = "cpu", data_seed: int = 0, progress: bool = False,
             description: str = "ensemble") -> ArmResults:
    """Train every (arm, seed) pair as one ensemble; member seeds are ``1000·arm + seed`` offsets
    so that no two members share classes or weights."""
    if not arms or not seeds:
        raise ValueError("run_arms needs at least one arm and one seed")
    members = [MemberSpec(a.data, seed=int(s) + 7919 * i) for i, a in enumerate(arms) for s in seeds]
    run = train_ensemble(model, members, train, device=device, data_seed=data_seed, progress=progress,
                         description=description)
    return ArmResults(arms, list(seeds), run)
