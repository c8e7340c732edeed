"""The ``ensemble`` kind: several data settings ("arms") × several seeds trained at once as one
ensemble (``numerics.testbed.experiments.run_arms``), optionally followed by a named analysis of the
trained models (``numerics.testbed.heads.ANALYSES``); result: the final value of each metric per arm
and seed (``summary``), every metric curve (``history``) and the analysis.  The testbed claims run
their arms as runs of this kind.  In a sweep file it takes the flat settings of ``testbed`` plus
``seeds`` (how many; seeds ``seed`` … ``seed + seeds − 1``, one arm); the claims give it
``{"model", "train", "arms": [{"name", "data"}], "seeds", "data_seed", "device", "analysis"}``."""
from __future__ import annotations

import inspect
from dataclasses import asdict

from . import Kind
from ..artifacts import snapshot_for
from .testbed import testbed_fields, testbed_parts
from mmicl.numerics.provenance import __version__
from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
from mmicl.numerics.validate import check_seed

__all__ = ["KIND", "ENSEMBLE_NESTED", "ensemble_arms", "curves_and_finals"]

ENSEMBLE_NESTED = frozenset({"model", "train", "arms", "seeds", "data_seed", "device", "analysis"})


def _ensemble_normalise(config: dict) -> dict:
    from mmicl.numerics.testbed.heads import ANALYSES

    if "arms" not in config:                       # the flat form of a sweep file: one arm
        n = config.get("seeds", 1)
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"seeds must be a positive whole number (how many models), got {n!r}")
        flat = {k: v for k, v in config.items() if k not in ("seeds", "device")}
        unknown = set(flat) - set(testbed_fields()) - {"seed"}
        if unknown:
            raise ValueError(f"ensemble runs have no setting {sorted(unknown)}; in a sweep file they take the "
                             f"testbed settings, seed, seeds and device")
        data, model, train = testbed_parts(flat)
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
    from mmicl.numerics.testbed.experiments import Arm

    return [Arm(a["name"], DataConfig(**a["data"])) for a in config["arms"]]


def curves_and_finals(r, metrics) -> dict:
    """What a run of trained arms keeps: the final value of each of ``metrics`` per arm and seed
    (``summary``) and every curve (``history``, without its time: timings go to the provenance,
    so that results are reproducible)."""
    history = r.run.history.to_json()
    history.pop("seconds")
    summary = {a.name: {m: [round(float(v), 6) for v in r.final(m, a.name)] for m in metrics} for a in r.arms}
    return {"summary": summary, "history": history}


def _ensemble_compute(config: dict, progress: bool = False, description: str = "ensemble") -> dict:
    from mmicl.numerics.testbed.experiments import run_arms
    from mmicl.numerics.testbed.heads import ANALYSES

    train = TrainConfig(**config["train"])
    r = run_arms(ModelConfig(**config["model"]), ensemble_arms(config), config["seeds"], train,
                 device=config["device"], data_seed=config["data_seed"], progress=progress, description=description,
                 snapshot=snapshot_for("ensemble", config))
    out = curves_and_finals(r, ("acc_icl", "acc_iwl", "acc_flip", "induction_max", "prev_token_max"))
    analysis = config.get("analysis")
    if analysis is not None:
        params = {k: v for k, v in analysis.items() if k != "name"}
        out["analysis"] = ANALYSES[analysis["name"]](r.run, eval_size=train.eval_size, **params)
    return out


KIND = Kind(frozenset(testbed_fields()) | {"seed", "seeds", "device"}, _ensemble_normalise, _ensemble_compute)
