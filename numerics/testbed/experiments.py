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
from mmicl.numerics.testbed.metrics import evaluate_iwl_balanced

__all__ = ["area_under", "DERIVED", "Arm", "StoredRun", "ArmResults", "run_arms"]



def area_under(history, metric: str, steps: tuple[int, int] | None = None) -> np.ndarray:
    """Normalised area under a metric's curve, per member (E,) (or per trailing index):
    the trapezoid rule over the evaluation steps, divided by the span of those steps, so that a
    constant curve c has area c and an accuracy's area lies in [0, 1].

    ``history``: a ``History`` or its ``to_json`` dict; ``metric``: a recorded scalar metric or a
    ``DERIVED`` one (``induction_max``, ``prev_token_max``); ``steps``: None for every evaluation,
    or a window (first, last): the evaluations with first ≤ step ≤ last.  Evaluations need not be
    evenly spaced.  A window holding one evaluation gives that value; none is an error."""
    if isinstance(history, dict):
        history = History.from_json(history)
    if metric in DERIVED:
        base, reduce = DERIVED[metric]
        curve = reduce(history.curve(base))
    else:
        curve = history.curve(metric)
    y = curve.double().numpy()
    x = np.asarray(history.steps, dtype=np.float64)
    if steps is not None:
        lo, hi = steps
        keep = (x >= lo) & (x <= hi)
        x, y = x[keep], y[keep]
    if len(x) == 0:
        raise ValueError(f"no evaluation of {metric} in the window {steps}; the steps are {history.steps}")
    if len(x) == 1:
        return y[0]
    order = np.argsort(x, kind="stable")
    x, y = x[order], y[order]
    dx = np.diff(x).reshape(-1, *(1,) * (y.ndim - 1))
    return (dx * (y[1:] + y[:-1]) / 2).sum(0) / (x[-1] - x[0])

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

    def member_indices(self, arm: str) -> list[int]:
        """The ensemble members of ``arm`` (arm-major: arm a's seeds are members a·S … a·S + S − 1)."""
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
        return full[:, self.member_indices(arm)].numpy()

    def area_under(self, metric: str, arm: str, steps: tuple[int, int] | None = None) -> np.ndarray:
        """Per seed, the normalised area under the curve of ``metric`` for ``arm`` (``area_under``)."""
        return area_under(self.run.history, metric, steps)[self.member_indices(arm)]

    def balanced_iwl(self, arm: str, size: int, seed: int, metric: str = "iwl_balanced_over_blind") -> np.ndarray:
        """Per seed, a label-balanced in-weights metric (``metrics.evaluate_iwl_balanced``: the final
        model on a fresh label-balanced IWL set of ``size`` items drawn from ``seed``).  Needs the
        trained models (a run trained in this process, not one read back from a store)."""
        if not isinstance(self.run, TrainedEnsemble):
            raise ValueError("balanced_iwl needs the trained models; a stored run keeps only its curves")

        values = evaluate_iwl_balanced(self.run.model, self.run.mixture, size, seed)[metric]
        return values[self.member_indices(arm)].numpy()

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
             description: str = "ensemble", snapshot=None) -> ArmResults:
    """Train every (arm, seed) pair as one ensemble; member e = (arm i, seed s) has seed ``s + 7919·i``,
    so that no two members share classes or weights.  ``snapshot``: a ``resume.Snapshot`` where the
    training resumes from, and saves, its progress (None: none)."""
    if not arms or not seeds:
        raise ValueError("run_arms needs at least one arm and one seed")
    members = [MemberSpec(a.data, seed=int(s) + 7919 * i) for i, a in enumerate(arms) for s in seeds]
    run = train_ensemble(model, members, train, device=device, data_seed=data_seed, progress=progress,
                         description=description, snapshot=snapshot)
    return ArmResults(arms, list(seeds), run)
