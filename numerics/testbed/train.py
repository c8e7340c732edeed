"""Train an ensemble: Adam on the sum over members of each member's mean cross-entropy.

The sum makes member e's gradient depend only on member e's weights and data, and Adam acts
elementwise, so the ensemble trains E independent models.  Every ``eval_every`` steps (and at step
0 and the last step) the metrics of ``metrics.evaluate`` are recorded on fixed evaluation sets.
Given a ``resume.Snapshot``, the loop saves its state every few minutes and a restarted run goes
on from there (``training_loop``).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import torch
import torch.nn.functional as F

from .config import MemberSpec, ModelConfig, TrainConfig
from .data import Mixture
from .metrics import EvalSets, evaluate, random_shift
from .model import EnsembleDecoder
from .resume import Snapshot, load_snapshot, save_snapshot
from mmicl.numerics.progress import progress_bar

__all__ = ["History", "TrainedEnsemble", "train_ensemble", "member_cross_entropy", "training_loop"]



@dataclass
class History:
    """Metric curves: ``steps`` and, per metric, a list (one entry per evaluation) of tensors with
    leading axis E; ``loss`` is the mean training loss per member over each evaluation window."""

    steps: list[int] = field(default_factory=list)
    metrics: dict[str, list[torch.Tensor]] = field(default_factory=dict)
    loss: list[torch.Tensor] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, step: int, values: dict[str, torch.Tensor], loss: torch.Tensor) -> None:
        self.steps.append(step)
        for k, v in values.items():
            self.metrics.setdefault(k, []).append(v)
        self.loss.append(loss)

    def curve(self, name: str) -> torch.Tensor:
        """(evaluations, E, …) stacked curve of one metric."""
        return torch.stack(self.metrics[name])

    def final(self, name: str) -> torch.Tensor:
        return self.metrics[name][-1]

    def to_json(self) -> dict:
        return {"steps": self.steps, "seconds": self.seconds,
                "loss": [v.tolist() for v in self.loss],
                "metrics": {k: [v.tolist() for v in vs] for k, vs in self.metrics.items()}}

    @staticmethod
    def from_json(d: dict) -> "History":
        """The inverse of ``to_json`` (float32 tensors; a missing loss is NaN, as at step 0)."""
        def tensor(v):
            return torch.tensor([float("nan") if x is None else x for x in v] if isinstance(v, list) and v
                                and not isinstance(v[0], list) else v, dtype=torch.float32)
        return History(steps=list(d["steps"]), seconds=float(d.get("seconds") or 0.0),
                       loss=[tensor(v) for v in d["loss"]],
                       metrics={k: [tensor(v) for v in vs] for k, vs in d["metrics"].items()})


@dataclass
class TrainedEnsemble:
    model: EnsembleDecoder
    mixture: Mixture
    eval_sets: EvalSets
    history: History
    members: list[MemberSpec]


def train_ensemble(model_config: ModelConfig, members: list[MemberSpec], train: TrainConfig,
                   device: str = "cpu", data_seed: int = 0, progress: bool = False,
                   description: str = "training", snapshot: Snapshot | None = None) -> TrainedEnsemble:
    """Train ``len(members)`` models of shape ``model_config`` at once; returns the models, their
    data, the fixed evaluation sets and the metric curves.  ``data_seed`` seeds the stream of
    training sequences and the evaluation sets; each member's seed its classes and weights.  With a
    ``snapshot`` the training resumes from, and saves, snapshots there (``training_loop``)."""
    mixture = Mixture(members, device)
    model = EnsembleDecoder(model_config, mixture.D, mixture.L, [m.seed for m in members], device)
    ape_slots = model_config.ape_slots if model_config.pos == "ape" else None
    T = 2 * mixture.N + 1
    sets = EvalSets.draw(mixture, train.eval_size, seed=data_seed + 1_000_003, ape_slots=ape_slots)
    g = torch.Generator(device=mixture.device).manual_seed(int(data_seed))

    def member_losses() -> torch.Tensor:
        batch = mixture.train_batch(train.batch, g)
        shift = random_shift(mixture.E, train.batch, T, ape_slots, g, mixture.device)
        return member_cross_entropy(model(batch.tokens, shift).logits, batch.target)

    history = training_loop(list(model.parameters()), member_losses, lambda: evaluate(model, sets), train,
                            mixture.E, progress, description, snapshot=snapshot, generators=(g,))
    return TrainedEnsemble(model, mixture, sets, history, members)


def member_cross_entropy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """(E,) mean cross-entropy of each member: logits (E, b, L), target (E, b)."""
    per = F.cross_entropy(logits.flatten(0, 1), target.flatten(), reduction="none")
    return per.view(logits.shape[0], -1).mean(-1)


def training_loop(params: list[torch.nn.Parameter], member_losses, evaluate_now, train: TrainConfig, E: int,
                  progress: bool = False, description: str = "training", snapshot: Snapshot | None = None,
                  generators: tuple[torch.Generator, ...] = ()) -> History:
    """The one loop: Adam on Σ_e member_losses()[e] over ``params`` for ``train.steps`` steps;
    ``evaluate_now()`` (a dict of per-member metrics) at step 0, every ``eval_every`` steps and at
    the end, beside the mean training loss of each member over the window.  With ``train.warmup``
    the learning rate rises linearly to ``train.lr`` over the first ``warmup`` steps.

    With a ``snapshot`` (``resume.Snapshot``) the loop saves its state there every
    ``snapshot.every_s`` seconds (the ``generators`` are those ``member_losses`` draws from), and
    starts from a snapshot saved there for the same settings: a killed run resumes where it stopped,
    and finishes as it would have without the interruption (``History.seconds`` adds up both)."""
    opt = torch.optim.Adam(params, lr=train.lr)
    history = History()
    running, count, start, before = None, 0, 1, 0.0
    identity = None
    if snapshot is not None:
        identity = {**snapshot.identity, "E": int(E), "train": asdict(train),
                    "shapes": [list(p.shape) for p in params], "generators": len(generators)}
        state = load_snapshot(snapshot.path, identity)
        if state is not None:
            start, before, running, count = _restore(state, params, opt, generators, history)
    t0 = time.perf_counter()
    if start == 1:
        history.add(0, evaluate_now(), torch.full((E,), float("nan")))
    last_save = time.perf_counter()
    bar = _progress(progress, description, train.steps, start - 1)
    for step in range(start, train.steps + 1):
        if step <= train.warmup:
            for group in opt.param_groups:
                group["lr"] = train.lr * step / train.warmup
        per_member = member_losses()
        opt.zero_grad(set_to_none=True)
        per_member.sum().backward()
        opt.step()
        running = per_member.detach() if running is None else running + per_member.detach()  # stays on the device
        count += 1
        if step % train.eval_every == 0 or step == train.steps:
            history.add(step, evaluate_now(), (running / count).cpu())
            running, count = None, 0
        if bar is not None:
            bar[0].update(bar[1], advance=1)
        if snapshot is not None and step < train.steps and time.perf_counter() - last_save >= snapshot.every_s:
            save_snapshot(snapshot.path, identity, _capture(step, before + time.perf_counter() - t0, params, opt,
                                                            generators, history, running, count))
            last_save = time.perf_counter()
    if bar is not None:
        bar[0].stop()
    history.seconds = before + time.perf_counter() - t0
    return history


def _capture(step: int, seconds: float, params, opt, generators, history: History, running, count: int) -> dict:
    """The loop's state after ``step`` (``seconds`` of training so far), as a snapshot keeps it."""
    return {"step": step, "seconds": seconds, "params": [p.detach().cpu() for p in params], "adam": opt.state_dict(),
            "generators": [g.get_state() for g in generators],
            "history": {"steps": list(history.steps), "loss": list(history.loss),
                        "metrics": {k: list(v) for k, v in history.metrics.items()}},
            "running": None if running is None else running.cpu(), "count": count}


def _restore(state: dict, params, opt, generators, history: History):
    """Load a snapshot's ``state`` (``_capture``) into the loop's parameters, optimiser, generators and history;
    (first step to take, seconds already spent, running loss window, its count)."""
    with torch.no_grad():
        for p, v in zip(params, state["params"]):
            p.copy_(v.to(p.device))
    opt.load_state_dict(state["adam"])
    for g, v in zip(generators, state["generators"]):
        g.set_state(v)
    h = state["history"]
    history.steps, history.loss, history.metrics = list(h["steps"]), list(h["loss"]), dict(h["metrics"])
    running = state["running"]
    device = params[0].device if params else torch.device("cpu")
    return int(state["step"]) + 1, float(state["seconds"]), None if running is None else running.to(device), \
        int(state["count"])


def _progress(enabled: bool, description: str, total: int, completed: int = 0):
    if not enabled:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, TimeRemainingColumn


    p = progress_bar("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                     TimeRemainingColumn())
    p.start()
    return p, p.add_task(description, total=total, completed=completed)
