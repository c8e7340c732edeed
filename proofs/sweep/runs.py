"""What one run of a sweep computes, by kind, and the record it leaves.

- ``theory``: settings ``law`` (LAW text) and ``T``; result: α*, α_T and the excess risk at α_T
  (``numerics.lca``);
- ``testbed``: the data, model and training settings of the testbed (``numerics.testbed.config``)
  and a ``seed``; one model trained (``train_ensemble``); result: its final metrics and the strongest
  head's induction and previous-token scores (its time is in the provenance).
- ``ensemble``: several data settings ("arms") × several seeds trained at once as one ensemble
  (``numerics.testbed.experiments.run_arms``), optionally followed by a named analysis of the trained
  models (``numerics.testbed.heads.ANALYSES``); result: the final value of each metric per arm and
  seed (``summary``), every metric curve (``history``) and the analysis.  The testbed claims run
  their arms as runs of this kind.  In a sweep file it takes the flat settings of ``testbed`` plus
  ``seeds`` (how many; seeds ``seed`` … ``seed + seeds − 1``, one arm); the claims give it
  ``{"model", "train", "arms": [{"name", "data"}], "seeds", "data_seed", "device", "analysis"}``.
- ``montecarlo``: one Monte Carlo training of a torch model of ``numerics.models`` (``build_model``)
  on the multimodal-ICL task law, as ``mmicl train`` does it, on the CPU: settings ``model``,
  ``law`` (LAW text; d1=, d2=, zeta= in it), ``T``, ``n`` (0: the large-context limit), ``steps``,
  ``lr``, ``batch``, ``optimizer``, ``seed``, ``samples`` (defaults those of the command); result:
  the trained parameters (``numerics.training.describe``: α, β of the reduced models, summaries of
  the matrices), the final loss, the risk and excess risk on ``samples`` fresh prompts with their
  standard errors, the Bayes risk, and whether training diverged (its time is in the provenance).

``execute(kind, config)`` never raises: a run that fails returns a record with ``status`` "failed",
the error and its traceback, so that one failing run does not stop a sweep.  Every record carries its
format, its key (``spec.run_key`` of its kind and configuration) and its provenance: the package
version, the host, the process, the device, the start and end times.  The store seals it with a
checksum when it writes it (``store.sealed``) and checks both when it reads it back.
"""
from __future__ import annotations

import inspect
import math
import os
import socket
import time
import traceback
from dataclasses import asdict, dataclass, fields
from collections.abc import Callable

FORMAT = 1
"""The format of run records; part of every run's key."""


@dataclass(frozen=True)
class Kind:
    settings: frozenset[str]
    normalise: Callable[[dict], dict]
    """The full configuration (defaults filled in, checked), from the given settings."""
    compute: Callable[[dict], dict]


# ---- theory ----------------------------------------------------------------------------------
def _theory_normalise(config: dict) -> dict:
    from mmicl.numerics.law_language import parse_law
    from mmicl.numerics.validate import check_depth

    if "law" not in config or "T" not in config:
        raise ValueError("a theory run needs law (LAW text) and T (a depth ≥ 1)")
    parse_law(str(config["law"]))
    return {"law": str(config["law"]), "T": check_depth(config["T"])}


def _theory_compute(config: dict) -> dict:
    from mmicl.numerics.lca import alpha_star, alpha_T, excess_risk_scaled
    from mmicl.numerics.law_language import parse_law

    law = parse_law(config["law"])
    a = alpha_T(law, config["T"])
    ex = excess_risk_scaled(law, config["T"], a)
    return {"alpha_star": alpha_star(law), "alpha_T": a, "excess_log10": ex.log10,
            "excess": ex.value if ex.value is not None else None}


# ---- testbed ---------------------------------------------------------------------------------
def _testbed_fields() -> dict[str, str]:
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig

    return {f.name: part for part, cls in (("data", DataConfig), ("model", ModelConfig), ("train", TrainConfig))
            for f in fields(cls)}


def _testbed_parts(config: dict):
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig

    where = _testbed_fields()
    parts = {"data": {}, "model": {}, "train": {}}
    for k, v in config.items():
        if k != "seed":
            parts[where[k]][k] = v
    return DataConfig(**parts["data"]), ModelConfig(**parts["model"]), TrainConfig(**parts["train"])


def _testbed_normalise(config: dict) -> dict:
    from mmicl.numerics.validate import check_seed

    data, model, train = _testbed_parts(config)
    return {**asdict(data), **asdict(model), **asdict(train), "seed": check_seed(config.get("seed", 0))}


def _testbed_compute(config: dict) -> dict:
    import torch

    from mmicl.numerics.testbed.config import MemberSpec
    from mmicl.numerics.testbed.train import train_ensemble

    torch.set_num_threads(1)
    data, model, train = _testbed_parts(config)
    run = train_ensemble(model, [MemberSpec(data, config["seed"])], train, data_seed=config["seed"])
    h = run.history
    final = {k: float(h.final(k)[0]) for k in ("acc_icl", "acc_iwl", "acc_flip", "iwl_context_rate")}
    final["induction_max"] = float(h.final("induction")[0].max())
    final["prev_token_max"] = float(h.final("prev_token")[0].max())
    return {"final": final}  # timings go to the provenance (seconds), so that results are reproducible


# ---- ensemble --------------------------------------------------------------------------------
ENSEMBLE_NESTED = frozenset({"model", "train", "arms", "seeds", "data_seed", "device", "analysis"})


def _ensemble_normalise(config: dict) -> dict:
    from mmicl import __version__
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
    from mmicl.numerics.testbed.heads import ANALYSES
    from mmicl.numerics.validate import check_seed

    if "arms" not in config:                       # the flat form of a sweep file: one arm
        n = config.get("seeds", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"seeds must be a positive whole number (how many models), got {n!r}")
        flat = {k: v for k, v in config.items() if k not in ("seeds", "device")}
        unknown = set(flat) - set(_testbed_fields()) - {"seed"}
        if unknown:
            raise ValueError(f"ensemble runs have no setting {sorted(unknown)}; in a sweep file they take the "
                             f"testbed settings, seed, seeds and device")
        data, model, train = _testbed_parts(flat)
        seed = check_seed(config.get("seed", 0))
        config = {"model": asdict(model), "train": asdict(train), "arms": [{"name": "run", "data": asdict(data)}],
                  "seeds": [seed + i for i in range(n)], "data_seed": seed, "device": config.get("device", "cpu")}
    config = {k: v for k, v in config.items() if k != "mmicl"}     # a normalised configuration again
    unknown = set(config) - ENSEMBLE_NESTED
    if unknown:
        raise ValueError(f"ensemble runs have no setting {sorted(unknown)}; they have {sorted(ENSEMBLE_NESTED)}")
    missing = {"model", "train", "arms", "seeds"} - set(config)
    if missing:
        raise ValueError(f"an ensemble run needs {sorted(missing)} as well (it has {sorted(config)})")
    arms = config["arms"]
    if not arms or not config["seeds"]:
        raise ValueError("an ensemble run needs at least one arm and one seed")
    names = [str(a["name"]) for a in arms]
    if len(set(names)) != len(names):
        raise ValueError(f"arm names must differ, got {names}")
    analysis = config.get("analysis")
    if analysis is not None:
        if not isinstance(analysis, dict) or analysis.get("name") not in ANALYSES:
            raise ValueError(f'analysis must be {{"name": one of {sorted(ANALYSES)}, **parameters}} or absent, '
                             f"got {analysis!r}")
        allowed = set(inspect.signature(ANALYSES[analysis["name"]]).parameters) - {"run", "eval_size"}
        extra = set(analysis) - {"name"} - allowed
        if extra or allowed - set(analysis):
            raise ValueError(f"analysis {analysis['name']!r} takes the parameters {sorted(allowed)}, "
                             f"got {sorted(set(analysis) - {'name'})}")
    device = config.get("device", "cpu")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return {"model": asdict(ModelConfig(**config["model"])), "train": asdict(TrainConfig(**config["train"])),
            "arms": [{"name": n, "data": asdict(DataConfig(**a["data"]))} for n, a in zip(names, arms)],
            "seeds": [check_seed(s) for s in config["seeds"]], "data_seed": check_seed(config.get("data_seed", 0)),
            "device": device, "analysis": analysis, "mmicl": __version__}


def ensemble_arms(config: dict):
    """The ``Arm`` s of a normalised ensemble configuration."""
    from mmicl.numerics.testbed.config import DataConfig
    from mmicl.numerics.testbed.experiments import Arm

    return [Arm(a["name"], DataConfig(**a["data"])) for a in config["arms"]]


def _ensemble_compute(config: dict, progress: bool = False, description: str = "ensemble") -> dict:
    from mmicl.numerics.testbed.config import ModelConfig, TrainConfig
    from mmicl.numerics.testbed.experiments import run_arms
    from mmicl.numerics.testbed.heads import ANALYSES

    train = TrainConfig(**config["train"])
    r = run_arms(ModelConfig(**config["model"]), ensemble_arms(config), config["seeds"], train,
                 device=config["device"], data_seed=config["data_seed"], progress=progress, description=description)
    history = r.run.history.to_json()
    history.pop("seconds")                  # timings go to the provenance, so that results are reproducible
    summary = {a.name: {m: [round(float(v), 6) for v in r.final(m, a.name)]
                        for m in ("acc_icl", "acc_iwl", "acc_flip", "induction_max", "prev_token_max")}
               for a in r.arms}
    out = {"summary": summary, "history": history}
    analysis = config.get("analysis")
    if analysis is not None:
        params = {k: v for k, v in analysis.items() if k != "name"}
        out["analysis"] = ANALYSES[analysis["name"]](r.run, eval_size=train.eval_size, **params)
    return out


# ---- montecarlo ------------------------------------------------------------------------------
MONTECARLO_DEFAULTS = {"T": 5, "n": 2000, "steps": 3000, "lr": 3e-3, "batch": 1024, "optimizer": "adam",
                       "seed": 0, "samples": 200_000}
"""The defaults of ``mmicl train`` (``model`` and ``law`` have none)."""
MONTECARLO_SETTINGS = frozenset({"model", "law", *MONTECARLO_DEFAULTS})
_RISK_CHUNK = 8192  # the chunk of fresh prompts of the risk estimate (as mmicl train)


def _whole(name: str, v, lo: int, hi: int | None = None, why: str = "") -> int:
    from mmicl.numerics.validate import InputError

    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
        allowed = f"an integer from {lo} to {hi}" if hi is not None else f"an integer ≥ {lo}"
        raise InputError(f"{name} = {v!r}: it must be {allowed}" + (f" ({why})" if why else ""))
    return v


def _cli_check(check, *args, **kwargs):
    """A check of ``mmicl train``'s inputs (``proofs.commands.common``), its ``click.BadParameter``
    turned into an ``InputError`` (a ``ValueError``) with the same message."""
    import click

    from mmicl.numerics.validate import InputError

    try:
        return check(*args, **kwargs)
    except click.BadParameter as e:
        raise InputError(e.message) from None


def _montecarlo_normalise(config: dict) -> dict:
    from mmicl.numerics.models import MODELS
    from mmicl.numerics.validate import InputError, check_depth, check_finite, check_seed
    from mmicl.proofs.commands.common import (MAX_CONTEXT, MAX_SAMPLES, MAX_STEPS, MAX_TRAIN_DEPTH,
                                              check_batch_memory, load_law)

    unknown = set(config) - MONTECARLO_SETTINGS
    if unknown:
        raise InputError(f"montecarlo runs have no setting {sorted(unknown)}; they have {sorted(MONTECARLO_SETTINGS)}")
    if "model" not in config or "law" not in config:
        raise InputError(f"a montecarlo run needs model (one of {', '.join(MODELS)}) and law (LAW text, e.g. "
                         "'s=uniform(0.5,4)'; d1=, d2=, zeta= go in it)")
    c = {**MONTECARLO_DEFAULTS, **config}
    if c["model"] not in MODELS:
        raise InputError(f"model = {c['model']!r}: it must be one of {', '.join(MODELS)}")
    if not isinstance(c["law"], str):
        raise InputError(f"law = {c['law']!r}: it must be LAW text, e.g. 's=uniform(0.5,4)' (see 'mmicl laws')")
    law = _cli_check(load_law, c["law"], hint="law")
    T = check_depth(c["T"])
    if T > MAX_TRAIN_DEPTH:
        raise InputError(f"T = {T}: it must be at most {MAX_TRAIN_DEPTH} (a T-layer model runs T layers per step)")
    lr = check_finite("lr", c["lr"], InputError)
    if not lr > 0:
        raise InputError(f"lr = {lr!r}: the learning rate must be > 0")
    if c["optimizer"] not in ("adam", "sgd"):
        raise InputError(f"optimizer = {c['optimizer']!r}: it must be 'adam' or 'sgd'")
    out = {"model": c["model"], "law": c["law"], "T": T,
           "n": _whole("n", c["n"], 0, MAX_CONTEXT, "0: the large-context limit"),
           "steps": _whole("steps", c["steps"], 1, MAX_STEPS), "lr": lr,
           "batch": _whole("batch", c["batch"], 1), "optimizer": c["optimizer"], "seed": check_seed(c["seed"]),
           "samples": _whole("samples", c["samples"], 2, MAX_SAMPLES, "at least 2 for a standard error")}
    layers = T if out["model"] in ("lca", "lca-noskip") else 1
    _cli_check(check_batch_memory, out["batch"], law.d, "batch", "batch, d1/d2 or T" if layers > 1 else "batch or d1/d2",
               "one training batch", copies=layers)
    _cli_check(check_batch_memory, min(out["samples"], _RISK_CHUNK), law.d, "law", "d1/d2 (d1=, d2= in law)",
               "one chunk of the risk estimate")
    return out


def _montecarlo_compute(config: dict, progress: bool = False, description: str | None = None) -> dict:
    """``mmicl train`` on the CPU, one thread, without the stationary point of lca1/lca2; ``progress``
    and ``description`` are accepted for the runner and not used."""
    import torch

    from mmicl.numerics.law_language import parse_law
    from mmicl.numerics.lca import bayes_risk
    from mmicl.numerics.models import build_model
    from mmicl.numerics.scalar_laws import LawError
    from mmicl.numerics.strict_json import null_reason_key
    from mmicl.numerics.training import describe, estimate_risk, train

    torch.set_num_threads(1)
    law, seed = parse_law(config["law"]), config["seed"]
    ctx = None if config["n"] == 0 else config["n"]
    model = build_model(config["model"], law.d, config["T"], law, seed)
    res = train(model, law, n=ctx, steps=config["steps"], batch=config["batch"], lr=config["lr"],
                optimizer=config["optimizer"], schedule="cosine", seed=seed, device="cpu")
    est = estimate_risk(model, law, n=ctx, samples=config["samples"], seed=seed + 1, device="cpu", chunk=_RISK_CHUNK)
    try:
        bayes = {"bayes_risk": bayes_risk(law)}
    except LawError as e:  # unbounded law: no quadrature
        bayes = {"bayes_risk": None, null_reason_key("bayes_risk"): f"unavailable: {e}"}
    # timings go to the provenance (seconds), so that results are reproducible
    return {"params": describe(model), "final_loss": res.history["loss"][-1], "risk": est.risk,
            "risk_se": est.risk_se, "excess": est.excess, "excess_se": est.excess_se, **bayes,
            "steps": res.steps_done, "diverged": res.diverged, "message": res.message}


KINDS: dict[str, Kind] = {
    "theory": Kind(frozenset({"law", "T"}), _theory_normalise, _theory_compute),
    "testbed": Kind(frozenset(_testbed_fields()) | {"seed"}, _testbed_normalise, _testbed_compute),
    "ensemble": Kind(frozenset(_testbed_fields()) | {"seed", "seeds", "device"}, _ensemble_normalise,
                     _ensemble_compute),
    "montecarlo": Kind(MONTECARLO_SETTINGS, _montecarlo_normalise, _montecarlo_compute),
}


def execute(kind: str, config: dict, key: str, progress: bool = False, description: str | None = None) -> dict:
    """Run one configuration; the record of it, finished or failed (never raises)."""
    from mmicl._version import __version__

    started = time.time()
    record = {"format": FORMAT, "key": key, "kind": kind, "config": config,
              "provenance": {"version": __version__, "host": socket.gethostname(), "pid": os.getpid(),
                             "device": config.get("device", "cpu"),
                             "seed": config.get("seed", config.get("seeds")), "started": started}}
    try:
        compute = KINDS[kind].compute
        result = (compute(config, progress=progress, description=description or kind) if progress
                  else compute(config))
        record.update(status="done", result=_finite_or_none(result))
    except Exception as e:  # noqa: BLE001 -- recorded, not raised: one failing run must not stop the sweep
        record.update(status="failed", error=f"{type(e).__name__}: {e}", traceback=traceback.format_exc())
    finished = time.time()
    record["provenance"].update(finished=finished, seconds=round(finished - started, 3))
    return record


def _finite_or_none(x):
    """Results as strict JSON: non-finite floats become None."""
    if isinstance(x, dict):
        return {k: _finite_or_none(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite_or_none(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x
