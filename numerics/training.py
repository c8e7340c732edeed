"""One training loop for every model of ``numerics.models``, and the risk of a trained model.

``train(model, law, n=…, steps=…)`` minimises the squared error ``(ŷ_q − y_q)²`` by Adam or SGD:

- ``data="online"``: fresh prompts every step (an unbiased gradient of the population loss at
  context length n; ``n=None`` is the large-context limit C = Λ, h = ζ m);
- ``data="fixed"``: a training set of ``train_size`` prompts drawn once; with ``batch ≥ train_size``
  every step is full-batch gradient descent on it (a "population-style" run when it is large).

Prompts are drawn through their moments (``sample_moments``, exactly the law of the tokens' moments)
unless ``tokens=True`` (then the tokens are drawn and the model reads them; needed for
``LCA.forward_layers``-style models only).  The run records the loss and the parameters every
``record_every`` steps, stops and reports when the loss or a parameter stops being finite or the loss
exceeds ``divergence_factor · E[ζ²]`` (the risk of predicting 0), can write an atomic checkpoint
and resume from it, and shows a rich progress bar when asked.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Literal

import torch
from torch import nn

from .atomic import replacing
from .estimate import Estimate
from mmicl.numerics.laws.language import takes_law
from .models import Batch, ReducedLCA, bayes_prediction
from .sampling import PromptMoments, moments_of, sample_moments, sample_prompts
from mmicl.numerics.laws.task import TaskLaw
from .validate import InputError
from mmicl.numerics.digest import digest
from mmicl.numerics.progress import progress_bar

__all__ = ["TrainResult", "RiskEstimate", "train", "estimate_risk", "describe", "draw_batch"]


@dataclass
class TrainResult:
    """What a run did.  ``history`` maps ``"step"``, ``"loss"`` and each recorded parameter summary
    to a list (one entry per record); ``diverged`` with the step and reason when it stopped early
    (the model then holds the last finite parameters)."""

    steps_done: int
    history: dict[str, list[float]]
    diverged: bool = False
    divergence_step: int | None = None
    message: str = ""
    seconds: float = 0.0
    seed: int = 0
    final: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {
            "steps_done": self.steps_done, "diverged": self.diverged,
            "divergence_step": self.divergence_step, "message": self.message,
            "seconds": round(self.seconds, 3), "seed": self.seed, "final": self.final,
            "history": self.history,
        }


def describe(model: nn.Module) -> dict[str, float]:
    """Scalars that summarise the parameters: α, β for reduced models; for matrices the mean of the
    diagonal and the root-mean-square of the off-diagonal entries (over layers when untied)."""
    if isinstance(model, ReducedLCA):
        return model.params()
    out: dict[str, float] = {}
    for name, p in model.named_parameters():
        p = p.detach()
        if p.numel() <= 4:
            for i, v in enumerate(p.flatten().tolist()):
                out[f"{name}[{i}]"] = v
            continue
        diag = torch.diagonal(p, dim1=-2, dim2=-1)
        off = p - torch.diag_embed(diag)
        k = p.shape[-1]
        out[f"{name}.diag_mean"] = float(diag.mean())
        out[f"{name}.offdiag_rms"] = float((off**2).sum() / max(off.numel() - diag.numel(), 1)) ** 0.5 if k > 1 else 0.0
    return out


@takes_law
def draw_batch(law: TaskLaw, batch: int, n: int | None, generator: torch.Generator, device, dtype,
               tokens: bool = False) -> Batch:
    if tokens:
        if n is None:
            raise ValueError("tokens=True needs a finite context length n")
        return sample_prompts(law, batch, n, generator, device, dtype)
    return sample_moments(law, batch, n, generator, device, dtype)


def _concat(batches: list[PromptMoments]) -> PromptMoments:
    cat = lambda k: torch.cat([getattr(b, k) for b in batches])  # noqa: E731
    return PromptMoments(cov=cat("cov"), xy=cat("xy"), yy=cat("yy"), query_x=cat("query_x"),
                         query_y=cat("query_y"), m=cat("m"), zeta=cat("zeta"), n=batches[0].n)


def _index(b: PromptMoments, idx: torch.Tensor) -> PromptMoments:
    return PromptMoments(cov=b.cov[idx], xy=b.xy[idx], yy=b.yy[idx], query_x=b.query_x[idx],
                         query_y=b.query_y[idx], m=b.m[idx], zeta=b.zeta[idx], n=b.n)


@takes_law
def train(
    model: nn.Module,
    law: TaskLaw,
    *,
    n: int | None,
    steps: int,
    batch: int = 1024,
    lr: float = 1e-2,
    optimizer: Literal["adam", "sgd"] = "adam",
    schedule: Literal["constant", "cosine"] = "constant",
    seed: int = 0,
    device: str | torch.device = "cpu",
    dtype: torch.dtype = torch.float32,
    data: Literal["online", "fixed"] = "online",
    train_size: int | None = None,
    tokens: bool = False,
    record_every: int | None = None,
    divergence_factor: float = 1e6,
    checkpoint: str | Path | None = None,
    checkpoint_every: int = 500,
    progress: bool = False,
    on_record: Callable[[int, dict], None] | None = None,
) -> TrainResult:
    """Train ``model`` (in place) on prompts of the latent-factor model with ``law``.

    ``n``: context length (``None``: the large-context limit).  ``schedule="cosine"`` anneals the
    learning rate to 0 over ``steps`` (the end point then sits close to a minimiser of the loss it is
    trained on — the population loss for ``data="online"``, the sampled training set's loss for
    ``data="fixed"`` — instead of jittering around it at the scale of ``lr``; nothing here checks that
    it is stationary).  With ``checkpoint`` set, the run resumes from that
    file when it exists (same model, same optimiser state, same random stream; a file of another run
    or an earlier version is refused in one line, see ``_load_checkpoint``) and rewrites it every
    ``checkpoint_every`` steps and at the end.
    """
    if steps < 0 or batch < 1 or not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"need steps ≥ 0, batch ≥ 1 and a finite lr > 0; got steps={steps}, "
                         f"batch={batch}, lr={lr}")
    if data == "fixed" and (train_size is None or train_size < 1):
        raise ValueError("data='fixed' needs train_size ≥ 1 (the number of training prompts)")
    if data not in ("online", "fixed"):
        raise ValueError(f"data must be 'online' or 'fixed', got {data!r}")
    model.to(device=device, dtype=dtype)
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "adam":
        opt: torch.optim.Optimizer = torch.optim.Adam(params, lr=lr)
    elif optimizer == "sgd":
        opt = torch.optim.SGD(params, lr=lr)
    else:
        raise ValueError(f"optimizer must be 'adam' or 'sgd', got {optimizer!r}")
    sched = (torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(steps, 1))
             if schedule == "cosine" else None)
    gen = torch.Generator(device=device).manual_seed(seed)
    record_every = record_every or max(1, steps // 200)
    history: dict[str, list[float]] = {"step": [], "loss": []}
    start = 0
    ckpt = Path(checkpoint) if checkpoint is not None else None
    run = {"model": type(model).__name__, "model_settings": _model_settings(model), "law": law.spec(),
           "seed": int(seed), "n": n, "data": data, "train_size": train_size, "tokens": bool(tokens),
           "optimizer": optimizer, "lr": float(lr), "batch": int(batch), "schedule": schedule,
           # the total steps change a cosine schedule's every step; under a constant one, a run of more
           # steps resumed from a shorter one's checkpoint is the same run continued
           "steps": int(steps) if schedule != "constant" else None,
           "dtype": str(dtype)}
    if ckpt is not None and ckpt.exists():
        state = _load_checkpoint(ckpt, device, run)
        try:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            if sched is not None and state.get("scheduler"):
                sched.load_state_dict(state["scheduler"])
            gen.set_state(state["generator"].cpu())
        except (RuntimeError, ValueError, KeyError, TypeError) as e:
            raise InputError(f"the checkpoint {ckpt} does not fit this model: "
                             f"{str(e).splitlines()[0][:160]}; delete it to start afresh") from None
        history, start = state["history"], int(state["step"])

    fixed = None
    if data == "fixed":
        fixed_gen = torch.Generator(device=device).manual_seed(seed + 7919)  # the set does not depend on resumes
        chunks = [draw_batch(law, min(4096, train_size - i), n, fixed_gen, device, dtype, tokens)
                  for i in range(0, train_size, 4096)]
        fixed = _concat([c if isinstance(c, PromptMoments) else moments_of(c) for c in chunks])

    scale = law.zeta.second_moment()  # risk of the zero predictor (ζ ⊥ u, E[u²] = 1)
    last_good = {k: v.detach().clone() for k, v in model.state_dict().items()}
    result = TrainResult(steps_done=start, history=history, seed=seed)
    t0 = time.perf_counter()
    bar = _progress(progress)
    task = bar.add_task(f"train {type(model).__name__}", total=steps, completed=start) if bar else None
    try:
        for step in range(start, steps):
            if fixed is None:
                b = draw_batch(law, batch, n, gen, device, dtype, tokens)
            elif batch >= train_size:
                b = fixed
            else:
                b = _index(fixed, torch.randint(0, train_size, (batch,), generator=gen, device=device))
            loss = ((model(b) - b.query_y) ** 2).mean()
            bad = _divergence(loss, model, divergence_factor * scale)
            if bad:
                model.load_state_dict(last_good)
                result.diverged, result.divergence_step = True, step
                result.message = f"diverged at step {step}: {bad}; parameters reset to step {step - 1}"
                break
            if step % record_every == 0:
                _record(history, step, float(loss.detach()), model, on_record)
                last_good = {k: v.detach().clone() for k, v in model.state_dict().items()}
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            if sched is not None:
                sched.step()
            result.steps_done = step + 1
            if bar:
                bar.update(task, advance=1)
            if ckpt is not None and (step + 1) % checkpoint_every == 0:
                _checkpoint(ckpt, model, opt, sched, gen, history, step + 1, run)
    finally:
        if bar:
            bar.stop()
    if not result.diverged:
        with torch.no_grad():
            final_gen = torch.Generator(device=device).manual_seed(seed + 104729)  # not the training stream
            b = draw_batch(law, batch, n, final_gen, device, dtype, tokens) if fixed is None else fixed
            final_loss = float(((model(b) - b.query_y) ** 2).mean())
        if not history["step"] or history["step"][-1] != result.steps_done:
            _record(history, result.steps_done, final_loss, model, on_record)
        if ckpt is not None:
            _checkpoint(ckpt, model, opt, sched, gen, history, result.steps_done, run)
    result.final = describe(model)
    result.seconds = time.perf_counter() - t0
    return result


def _divergence(loss: torch.Tensor, model: nn.Module, limit: float) -> str:
    value = float(loss.detach())
    if not math.isfinite(value):
        return f"the loss is {value}"
    if value > limit:
        return f"the loss {value:.3g} exceeds {limit:.3g} (divergence_factor × E[ζ²])"
    for name, p in model.named_parameters():
        if not torch.isfinite(p).all():
            return f"parameter {name} is not finite"
    return ""


def _record(history, step, loss, model, hook) -> None:
    history["step"].append(step)
    history["loss"].append(loss)
    for k, v in describe(model).items():
        history.setdefault(k, []).append(v)
    if hook is not None:
        hook(step, {k: vals[-1] for k, vals in history.items()})


def _model_settings(model) -> dict:
    """The model's own settings that change what it computes and that its parameter shapes need not
    show (the depth ``T``, ``tied``, ``skip``, ``mode``, ``d``, …): its public attributes that are
    plain numbers, texts, booleans or None (``training`` aside)."""
    return {k: v for k, v in sorted(vars(model).items())
            if not k.startswith("_") and k != "training" and (v is None or isinstance(v, (bool, int, float, str)))}


def _load_checkpoint(path: Path, device, run: dict) -> dict:
    """The state saved by ``_checkpoint``, read with ``weights_only=True`` (tensors, numbers,
    strings and containers only: nothing else is unpickled) and verified.  Refused in one line
    (``InputError``) where it cannot be read; carries no content hash (an earlier version of mmicl:
    it cannot be verified); its content hash (``numerics.digest`` of everything else in it) does not
    match (changed after mmicl wrote it); records no run (model, law, seed) or another run (any
    setting that changes the result differs: the model and its settings such as the depth ``T``, the
    law, seed, n, data, training set size, optimizer, learning rate, batch, schedule, steps or
    dtype); lacks a part; or its model state holds non-finite values."""

    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as e:  # noqa: BLE001 — any unreadable file is the caller's input, reported in one line
        raise InputError(f"the checkpoint {path} cannot be read ({type(e).__name__}: "
                         f"{str(e).splitlines()[0][:120] if str(e) else 'no message'}); delete it to start afresh") from None
    if isinstance(state, dict) and "digest" not in state:
        raise InputError(f"the checkpoint {path} carries no content hash: written by an earlier version of mmicl "
                         "(or not by mmicl train), it cannot be verified; delete it to start afresh")
    if not isinstance(state, dict) or not isinstance(state.get("run"), dict):
        raise InputError(f"the checkpoint {path} records no run (model, law, seed) to check it against: written by "
                         "an earlier version of mmicl or not by mmicl train; delete it to start afresh")
    try:
        actual = digest({k: v for k, v in state.items() if k != "digest"})
    except TypeError as e:
        raise InputError(f"the checkpoint {path} is damaged ({e}); delete it to start afresh") from None
    if actual != state["digest"]:
        raise InputError(f"the checkpoint {path} has a content hash that does not match: the file was changed after "
                         "mmicl wrote it; delete it to start afresh")
    saved = dict(state["run"])
    mine = dict(run)
    for r in (saved, mine):  # each model setting is compared (and named) on its own
        settings = r.pop("model_settings", None)
        r.update({f"model {k}": v for k, v in (settings or {}).items()} if isinstance(settings, dict) else
                 {"model settings": settings})
    differ = [k for k in [*mine, *(k for k in saved if k not in mine)] if saved.get(k) != mine.get(k)]
    if differ:
        said = ", ".join(f"{k} {saved.get(k)!r} (this run: {mine.get(k)!r})" for k in differ)
        raise InputError(f"the checkpoint {path} belongs to another run: {said}; use another --checkpoint file")
    missing = [k for k in ("model", "optimizer", "generator", "history", "step") if k not in state]
    if missing:
        raise InputError(f"the checkpoint {path} lacks {', '.join(missing)}; delete it to start afresh")
    if isinstance(state["model"], dict):
        for name, t in state["model"].items():
            bad = int((~torch.isfinite(t)).sum()) if isinstance(t, torch.Tensor) and t.is_floating_point() else 0
            if bad:
                raise InputError(f"the checkpoint {path} has {bad} non-finite value{'s' if bad > 1 else ''} in the "
                                 f"model's {name}; delete it to start afresh")
    return state


def _checkpoint(path, model, opt, sched, gen, history, step, run) -> None:
    """Save the run's state with its content hash (``numerics.digest`` of all of it but the hash)."""

    state = {"model": model.state_dict(), "optimizer": opt.state_dict(),
             "scheduler": sched.state_dict() if sched is not None else None,
             "generator": gen.get_state(), "history": history, "step": step, "run": run}
    state["digest"] = digest(state)
    with replacing(path, "wb") as f:  # a killed run leaves the previous checkpoint whole
        torch.save(state, f)


def _progress(enabled: bool):
    if not enabled:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, TimeRemainingColumn


    bar = progress_bar("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                       TimeRemainingColumn())
    bar.start()
    return bar


# ---------------------------------------------------------------------------------------------
# Risk of a model, with standard errors
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RiskEstimate:
    """Monte Carlo risk on ``samples`` fresh prompts at context length ``n``: ``risk = E[(ŷ − y_q)²]``
    and ``excess = E[(ŷ − E[y_q | x_q, task])²]`` (the risk minus the Bayes risk ``E[ζ²/(1+s)]``,
    estimated without the label noise: y_q's noise given x_q is independent of ŷ), each an
    ``Estimate`` on the same prompts (standard error = sample standard deviation / √samples).
    ``risk``, ``risk_se``, ``excess``, ``excess_se`` and ``samples`` read them as numbers."""

    risk_estimate: Estimate
    excess_estimate: Estimate
    n: int | None

    @property
    def risk(self) -> float:
        return self.risk_estimate.mean

    @property
    def risk_se(self) -> float:
        return self.risk_estimate.se

    @property
    def excess(self) -> float:
        return self.excess_estimate.mean

    @property
    def excess_se(self) -> float:
        return self.excess_estimate.se

    @property
    def samples(self) -> int:
        return self.risk_estimate.samples

    def to_json(self) -> dict:
        return {"risk": self.risk, "risk_se": self.risk_se, "excess": self.excess,
                "excess_se": self.excess_se, "samples": self.samples, "n": self.n}


@takes_law
@torch.no_grad()
def estimate_risk(model: nn.Module, law: TaskLaw, *, n: int | None, samples: int = 100_000,
                  seed: int = 12345, device="cpu", dtype=torch.float32, chunk: int = 8192,
                  tokens: bool = False) -> RiskEstimate:
    """Risk and excess risk of ``model`` on fresh prompts (seeded apart from training)."""
    if samples < 2:
        raise ValueError(f"need samples ≥ 2 for a standard error, got {samples}")
    model.to(device=device, dtype=dtype)
    gen = torch.Generator(device=device).manual_seed(seed)
    sq, ex = [], []
    for i in range(0, samples, chunk):
        b = draw_batch(law, min(chunk, samples - i), n, gen, device, dtype, tokens)
        pred = model(b).double()
        sq.append((pred - b.query_y.double()) ** 2)
        ex.append((pred - bayes_prediction(b).double()) ** 2)
    return RiskEstimate(Estimate.of(torch.cat(sq)), Estimate.of(torch.cat(ex)), n)
