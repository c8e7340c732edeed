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
- ``stage1``: stage 1 of the multimodal protocol (``numerics.testbed.multimodal_experiments.run_stage1``):
  settings ``{"model", "data" (M1), "train", "seeds" (a list), "data_seed" (0), "device" ("cpu")}``
  (the model with the APE slots stage 1 really trains, ``stage1_ape_slots``); result: ``artifact``
  ``{"file", "sha256", "bytes"}`` of its checkpoint, written (atomically, ``Stage1.save``) to
  ``<store>/artifacts/<key>.pt`` and verified once written, and ``final``, the final stage-1 metrics
  per seed (per head for the head scores).  The record holds no weights.
- ``stage2``: stage 2 on a ``stage1`` run's checkpoint (``run_stage2``): settings ``{"stage1"`` (the
  stage1 run's settings, whose key names its record), ``"arms"`` (``[{"name", "data": {"m1", "m2",
  "p_bursty", "layout"}, "decoder", "encoder_steps"}]``, ``MultimodalArm`` as ``arm_to_json`` writes
  it), ``"train", "trainable"`` ("projector+readout"; "projector"; "all": every weight trains, the
  unfrozen stage 2 of testbed claim 9), ``"device", "data_seed"`` (both the stage-1
  run's by default), ``"analysis"`` (None, or ``{"name", **parameters}`` of ``MULTIMODAL_ANALYSES``,
  or ``{"name": "head_score_spread"}``: ``multimodal_analyses()``), ``"eval_on"`` (optional: the
  evaluation sets measured during training, ``multimodal_metrics.METRICS_OF``; absent, every set)};
  the stage-1 record must be finished and its checkpoint have the SHA-256 it states and load
  (``load_stage1``), else the run fails with one line naming the file and what to do.  Result: as
  ``ensemble`` — ``summary`` (the final value of every scalar metric, ``induction_max`` and
  ``prev_token_max`` per arm and stage-1 member), ``history`` (every curve), ``analysis`` — and
  ``stage1`` ``{"key", "sha256"}``, the checkpoint it started from.  One run is one arms list on one
  stage-1 run (one ensemble, as the claims train it); a one-arm list is a run of its own, so a claim
  may go arm by arm, but the members of a lone arm get the seeds of the first arm of a grid (not a
  bit-for-bit piece of the joint run).
- ``fusion``: early fusion from scratch (``run_fusion``): settings ``{"model", "m1", "arms", "seeds",
  "train", "device", "data_seed", "analysis"}`` (arms as for ``stage2``); result as ``stage2``'s
  without ``stage1``.

The multimodal kinds have nested settings: the claims make them (``KINDS[kind].normalise``), not
sweep files.  ``stage1`` and ``stage2`` runs find their store through ``STORE_ENV``: run them inside
``using_store(store)`` (``stored_stage1(store, settings)`` does, and returns the verified ``Stage1``);
``stored_arm_results(record)`` gives a stage2 or fusion record's ``ArmResults`` (curves).

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
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from mmicl.theory.errors import InputError

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
    from mmicl.numerics.laws.language import parse_law
    from mmicl.numerics.validate import check_depth

    if "law" not in config or "T" not in config:
        raise ValueError("a theory run needs law (LAW text) and T (a depth ≥ 1)")
    parse_law(str(config["law"]))
    return {"law": str(config["law"]), "T": check_depth(config["T"])}


def _theory_compute(config: dict) -> dict:
    from mmicl.numerics.lca import alpha_star, alpha_T, excess_risk_scaled
    from mmicl.numerics.laws.language import parse_law

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
    from mmicl.numerics.provenance import __version__
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


def _curves_and_finals(r, metrics) -> dict:
    """What a run of trained arms keeps: the final value of each of ``metrics`` per arm and seed
    (``summary``) and every curve (``history``, without its time: timings go to the provenance,
    so that results are reproducible)."""
    history = r.run.history.to_json()
    history.pop("seconds")
    summary = {a.name: {m: [round(float(v), 6) for v in r.final(m, a.name)] for m in metrics} for a in r.arms}
    return {"summary": summary, "history": history}


def _ensemble_compute(config: dict, progress: bool = False, description: str = "ensemble") -> dict:
    from mmicl.numerics.testbed.config import ModelConfig, TrainConfig
    from mmicl.numerics.testbed.experiments import run_arms
    from mmicl.numerics.testbed.heads import ANALYSES

    train = TrainConfig(**config["train"])
    r = run_arms(ModelConfig(**config["model"]), ensemble_arms(config), config["seeds"], train,
                 device=config["device"], data_seed=config["data_seed"], progress=progress, description=description)
    out = _curves_and_finals(r, ("acc_icl", "acc_iwl", "acc_flip", "induction_max", "prev_token_max"))
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


def _montecarlo_normalise(config: dict) -> dict:
    from mmicl.numerics.laws.language import read_law
    from mmicl.numerics.models import MODELS
    from mmicl.numerics.validate import (MAX_CONTEXT, MAX_SAMPLES, MAX_STEPS, MAX_TRAIN_DEPTH, check_batch_memory,
                                         check_depth, check_finite, check_seed)

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
    law = read_law(c["law"])
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
    check_batch_memory(out["batch"], law.d, "batch, d1/d2 or T" if layers > 1 else "batch or d1/d2",
                       "one training batch", copies=layers)
    check_batch_memory(min(out["samples"], _RISK_CHUNK), law.d, "d1/d2 (d1=, d2= in law)",
                       "one chunk of the risk estimate")
    return out


def _montecarlo_compute(config: dict, progress: bool = False, description: str | None = None) -> dict:
    """``mmicl train`` on the CPU, one thread, without the stationary point of lca1/lca2; ``progress``
    and ``description`` are accepted for the runner and not used."""
    import torch

    from mmicl.numerics.laws.language import parse_law
    from mmicl.numerics.lca import bayes_risk
    from mmicl.numerics.models import build_model
    from mmicl.numerics.laws.scalar import LawError
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


# ---- stage1, stage2, fusion: the multimodal protocol ------------------------------------------
STORE_ENV = "MMICL_SWEEP_STORE"
"""The environment variable that tells a ``stage1`` or ``stage2`` run where its results store is
(``using_store`` sets it; a Dask worker on another machine needs it set, to the same store on a
shared file system)."""
ARTIFACTS = "artifacts"
"""The folder of a results store that holds the runs' artifact files (``<key>.pt``)."""
STAGE1_SETTINGS = frozenset({"model", "data", "train", "seeds", "data_seed", "device"})
STAGE2_SETTINGS = frozenset({"stage1", "arms", "train", "trainable", "device", "data_seed", "analysis", "eval_on"})
FUSION_SETTINGS = frozenset({"model", "m1", "arms", "seeds", "train", "device", "data_seed", "analysis"})


class StoredArtifactError(InputError):
    """A run's artifact (or the record that states it) that cannot be used: ``str()`` is one line,
    the file, what is wrong and what to do; ``problem`` is the file and what is wrong alone."""

    def __init__(self, problem: str, advice: str = ""):
        self.problem = problem
        super().__init__(problem + (f"; {advice}" if advice else ""))


@contextmanager
def using_store(store):
    """``with using_store(store): run_here(specs, store)``: the ``stage1`` and ``stage2`` runs made
    inside find their store (a ``Store`` or its folder) through ``STORE_ENV``, which this sets for
    the block (and for the processes started in it, e.g. a Dask LocalCluster's workers)."""
    root = str(Path(getattr(store, "root", store)).resolve())
    old = os.environ.get(STORE_ENV)
    os.environ[STORE_ENV] = root
    try:
        yield Path(root)
    finally:
        if old is None:
            os.environ.pop(STORE_ENV, None)
        else:
            os.environ[STORE_ENV] = old


def _store_root(kind: str) -> Path:
    root = os.environ.get(STORE_ENV)
    if not root:
        raise StoredArtifactError(f"a {kind} run keeps its stage-1 checkpoint beside its results store, and none is "
                                  f"given: run it inside runs.using_store(store) (or set {STORE_ENV} to the store's "
                                  "folder)")
    root = Path(root)
    if not (root / "runs").is_dir():
        raise StoredArtifactError(f"{STORE_ENV}={str(root)!r} is not a results store (no runs/ folder)")
    return root


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _device(config: dict, default: str = "cpu") -> str:
    device = config.get("device", default)
    if device not in ("cpu", "cuda"):
        raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
    return device


def _seeds(seeds) -> list[int]:
    from mmicl.numerics.validate import check_seed

    if not isinstance(seeds, (list, tuple)) or not seeds:
        raise ValueError(f"seeds must be a non-empty list of seeds, got {seeds!r}")
    out = [check_seed(s) for s in seeds]
    if len(set(out)) != len(out):
        raise ValueError(f"seeds must differ, got {out}")
    return out


def _check_settings(kind: str, config: dict, allowed: frozenset, needed: set) -> dict:
    if not isinstance(config, dict):
        raise ValueError(f"the settings of a {kind} run are a dict, got {config!r}")
    config = {k: v for k, v in config.items() if k != "mmicl"}     # a normalised configuration again
    unknown = set(config) - allowed
    if unknown:
        raise ValueError(f"{kind} runs have no setting {sorted(unknown)}; they have {sorted(allowed)}")
    missing = needed - set(config)
    if missing:
        raise ValueError(f"a {kind} run needs {sorted(missing)} as well (it has {sorted(config)})")
    return config


def head_score_spread(r) -> dict:
    """The analysis ``head_score_spread`` of a stage-2 or fusion run: each head's induction and
    previous-token score on the ICL set with the per-sequence sd behind it, on the trained models
    (``multimodal_metrics.head_score_spread``; testbed claim 9, version 3)."""
    from mmicl.numerics.testbed.multimodal_metrics import head_score_spread as spread

    return spread(r.run.model, r.run.eval_sets)


def multimodal_analyses() -> dict:
    """The analyses a ``stage2`` or ``fusion`` run may name: ``MULTIMODAL_ANALYSES`` and, added here,
    ``head_score_spread``."""
    from mmicl.numerics.testbed.multimodal_experiments import MULTIMODAL_ANALYSES

    return {**MULTIMODAL_ANALYSES, "head_score_spread": head_score_spread}


def _analysis(analysis):
    MULTIMODAL_ANALYSES = multimodal_analyses()

    if analysis is None:
        return None
    if not isinstance(analysis, dict) or analysis.get("name") not in MULTIMODAL_ANALYSES:
        raise ValueError(f'analysis must be {{"name": one of {sorted(MULTIMODAL_ANALYSES)}, **parameters}} or '
                         f"absent, got {analysis!r}")
    allowed = set(inspect.signature(MULTIMODAL_ANALYSES[analysis["name"]]).parameters) - {"r"}
    given = set(analysis) - {"name"}
    if given != allowed:
        raise ValueError(f"analysis {analysis['name']!r} takes the parameters {sorted(allowed)}, got {sorted(given)}")
    from mmicl.numerics.testbed.multimodal_data import SETS

    if "set_name" in analysis and analysis["set_name"] not in SETS:
        raise ValueError(f"analysis set_name must be one of {list(SETS)}, got {analysis['set_name']!r}")
    return dict(analysis)


def _stage1_normalise(config: dict) -> dict:
    from mmicl.numerics.provenance import __version__
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
    from mmicl.numerics.testbed.config import stage1_ape_slots
    from mmicl.numerics.validate import check_seed

    config = _check_settings("stage1", config, STAGE1_SETTINGS, {"model", "data", "train", "seeds"})
    data = DataConfig(**config["data"])
    model = stage1_ape_slots(ModelConfig(**config["model"]), data)      # the decoder stage 1 really trains
    return {"model": asdict(model), "data": asdict(data), "train": asdict(TrainConfig(**config["train"])),
            "seeds": _seeds(config["seeds"]), "data_seed": check_seed(config.get("data_seed", 0), "data_seed"),
            "device": _device(config), "mmicl": __version__}


def _stage1_compute(config: dict, progress: bool = False, description: str = "stage1") -> dict:
    from mmicl.numerics.testbed.checkpoint import Stage1
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
    from mmicl.numerics.testbed.multimodal_experiments import run_stage1

    from .spec import run_key

    folder = _store_root("stage1") / ARTIFACTS
    s1 = run_stage1(ModelConfig(**config["model"]), DataConfig(**config["data"]), config["seeds"],
                    TrainConfig(**config["train"]), device=config["device"], data_seed=config["data_seed"],
                    progress=progress)
    folder.mkdir(parents=True, exist_ok=True)
    path = s1.save(folder / f"{run_key('stage1', config)}.pt")
    Stage1.load(path)                                  # what stage 2 will read: verified once written
    return {"artifact": {"file": path.name, "sha256": _sha256(path), "bytes": path.stat().st_size},
            "final": s1.final}


def _stage1_record_path(root: Path, stage1_config: dict) -> Path:
    from .spec import run_key

    return Path(root) / "runs" / f"{run_key('stage1', stage1_config)}.json"


def load_stage1(root, record: dict):
    """The ``Stage1`` of a finished ``stage1`` run's record, from its artifact in the store at
    ``root``: the file must exist, have the SHA-256 the record states, and load (``Stage1.load``:
    content hash, names, shapes, finite values) with the record's settings; else
    ``StoredArtifactError`` (one line: the file, what is wrong, what to do)."""
    from mmicl.numerics.testbed.checkpoint import Stage1, Stage1Error
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig

    root, config = Path(root), record["config"]
    art = (record.get("result") or {}).get("artifact") or {}
    where = root / "runs" / f"{record['key']}.json"
    redo = ("run stored_stage1 with these stage-1 settings again (it sets the file aside and trains stage 1 "
            f"again), or delete {where}")
    if not isinstance(art.get("file"), str) or not isinstance(art.get("sha256"), str):
        raise StoredArtifactError(f"the stage-1 record {where} names no artifact file and digest", redo)
    path = root / ARTIFACTS / Path(art["file"]).name
    if not path.is_file():
        raise StoredArtifactError(f"the stage-1 checkpoint {path} (of the record {where}) is missing", redo)
    if _sha256(path) != art["sha256"]:
        raise StoredArtifactError(f"the stage-1 checkpoint {path} does not have the SHA-256 its record {where} "
                                  "states (it was changed or replaced after it was written)", redo)
    try:
        s1 = Stage1.load(path)
    except Stage1Error as e:
        raise StoredArtifactError(f"the stage-1 checkpoint {path} {e.problem}", redo) from None
    if not s1.trained_with(ModelConfig(**config["model"]), DataConfig(**config["data"]), TrainConfig(**config["train"]),
                           config["seeds"], config["data_seed"]):
        raise StoredArtifactError(f"the stage-1 checkpoint {path} records other settings than its record {where}",
                                  redo)
    return s1


def _stage2_normalise(config: dict) -> dict:
    from mmicl.numerics.provenance import __version__
    from mmicl.numerics.testbed.config import TrainConfig
    from mmicl.numerics.testbed.multimodal_experiments import arm_to_json, arms_from_json
    from mmicl.numerics.testbed.multimodal_metrics import check_eval_on
    from mmicl.numerics.validate import check_seed

    config = _check_settings("stage2", config, STAGE2_SETTINGS, {"stage1", "arms", "train"})
    s1 = _stage1_normalise(config["stage1"])
    trainable = config.get("trainable", "projector+readout")
    if trainable not in ("projector", "projector+readout", "all"):
        raise ValueError(f"trainable must be 'projector' or 'projector+readout' (the decoder's blocks frozen, as "
                         f"published), or 'all' (an unfrozen stage 2, testbed claim 9), got {trainable!r}")
    out = {"stage1": s1, "arms": [arm_to_json(a) for a in arms_from_json(config["arms"])],
           "train": asdict(TrainConfig(**config["train"])), "trainable": trainable,
           "device": _device(config, s1["device"]),
           "data_seed": check_seed(config.get("data_seed", s1["data_seed"]), "data_seed"),
           "analysis": _analysis(config.get("analysis")), "mmicl": __version__}
    eval_on = check_eval_on(config.get("eval_on"))
    if eval_on is not None:  # absent when every set is measured, so those runs keep their keys
        out["eval_on"] = list(eval_on)
    return out


def _arms_result(r, config: dict) -> dict:
    """What a stage-2 or fusion run keeps: the final value of every scalar metric per arm and member
    (``summary``), every curve (``history``, without its time) and the analysis."""
    from mmicl.numerics.testbed.experiments import DERIVED

    MULTIMODAL_ANALYSES = multimodal_analyses()
    h = r.run.history
    scalars = [m for m in h.metrics if h.final(m).dim() == 1] + [m for m, (base, _) in DERIVED.items()
                                                               if base in h.metrics]
    out = _curves_and_finals(r, scalars)
    analysis = config.get("analysis")
    if analysis is not None:
        out["analysis"] = MULTIMODAL_ANALYSES[analysis["name"]](r, **{k: v for k, v in analysis.items()
                                                                       if k != "name"})
    return out


def _stage2_compute(config: dict, progress: bool = False, description: str = "stage2") -> dict:
    from mmicl.numerics.testbed.config import TrainConfig
    from mmicl.numerics.testbed.multimodal_experiments import arms_from_json, run_stage2

    from .store import read_record

    root = _store_root("stage2")
    where = _stage1_record_path(root, config["stage1"])
    record, why = read_record(where) if where.is_file() else (None, "no such file")
    if record is None or record["status"] != "done":
        state = why if record is None else f"it failed: {record.get('error')}"
        raise StoredArtifactError(f"the stage-1 run of this stage-2 run has no finished record {where} ({state}): "
                                  "run the stage1 run first (runs.stored_stage1, or its spec before this one)")
    s1 = load_stage1(root, record)
    r = run_stage2(s1, arms_from_json(config["arms"]), TrainConfig(**config["train"]), trainable=config["trainable"],
                   device=config["device"], data_seed=config["data_seed"], progress=progress, description=description,
                   eval_on=config.get("eval_on"))
    used = {"key": record["key"], "sha256": record["result"]["artifact"]["sha256"]}
    return {**_arms_result(r, config), "stage1": used}


def _fusion_normalise(config: dict) -> dict:
    from mmicl.numerics.provenance import __version__
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
    from mmicl.numerics.testbed.config import stage1_ape_slots
    from mmicl.numerics.testbed.multimodal_experiments import arm_to_json, arms_from_json
    from mmicl.numerics.validate import check_seed

    config = _check_settings("fusion", config, FUSION_SETTINGS, {"model", "m1", "arms", "seeds", "train"})
    m1 = DataConfig(**config["m1"])
    return {"model": asdict(stage1_ape_slots(ModelConfig(**config["model"]), m1)), "m1": asdict(m1),
            "arms": [arm_to_json(a) for a in arms_from_json(config["arms"])], "seeds": _seeds(config["seeds"]),
            "train": asdict(TrainConfig(**config["train"])), "device": _device(config),
            "data_seed": check_seed(config.get("data_seed", 0), "data_seed"),
            "analysis": _analysis(config.get("analysis")), "mmicl": __version__}


def _fusion_compute(config: dict, progress: bool = False, description: str = "fusion") -> dict:
    from mmicl.numerics.testbed.config import DataConfig, ModelConfig, TrainConfig
    from mmicl.numerics.testbed.multimodal_experiments import arms_from_json, run_fusion

    r = run_fusion(ModelConfig(**config["model"]), DataConfig(**config["m1"]), arms_from_json(config["arms"]),
                   config["seeds"], TrainConfig(**config["train"]), device=config["device"],
                   data_seed=config["data_seed"], progress=progress, description=description)
    return _arms_result(r, config)


def stored_stage1(store, settings: dict, progress: bool = False):
    """The ``Stage1`` of these ``stage1`` settings, from the results store ``store`` (a writable
    ``Store``): read back and verified (``load_stage1``) when a finished run is there, else trained
    as a ``stage1`` run and stored (its record, and its checkpoint in ``artifacts/``).  A stored
    checkpoint that fails verification is renamed to ``<name>.corrupt`` (one warning line) and stage 1
    is trained again; a run that fails raises ``RuntimeError`` (one line, with its error)."""
    import warnings

    from .spec import RunSpec

    spec = RunSpec("stage1", KINDS["stage1"].normalise(settings))
    with using_store(store) as root:
        record = store.record(spec.key)
        if record is not None and record["status"] == "done":
            try:
                return load_stage1(root, record)
            except StoredArtifactError as e:
                path = root / ARTIFACTS / f"{spec.key}.pt"
                moved = ""
                if path.exists():
                    os.replace(path, path.with_name(path.name + ".corrupt"))
                    moved = f" (moved to {path.name}.corrupt)"
                warnings.warn(f"mmicl: {e.problem}{moved}; training stage 1 again", RuntimeWarning, stacklevel=2)
        record = execute("stage1", spec.config, spec.key, progress=progress, description=f"stage1 run ({spec.key})")
        store.write(record)
        if record["status"] != "done":
            raise RuntimeError(f"the stage1 run {spec.key} failed ({record['error']}); its record is "
                               f"{store.runs / (spec.key + '.json')}")
        return load_stage1(root, record)


def stored_arm_results(record: dict):
    """The ``ArmResults`` (curves; no models) of a finished ``stage2`` or ``fusion`` record, as
    ``run_stage2`` / ``run_fusion`` would return them: its arms, its seeds (the stage-1 seeds of a
    stage-2 run) and its history, timed by the record's provenance."""
    from mmicl.numerics.testbed.experiments import ArmResults, StoredRun
    from mmicl.numerics.testbed.multimodal_experiments import arms_from_json
    from mmicl.numerics.testbed.train import History

    config = record["config"]
    history = History.from_json(record["result"]["history"])
    history.seconds = float(record["provenance"].get("seconds") or 0.0)
    seeds = config["stage1"]["seeds"] if record["kind"] == "stage2" else config["seeds"]
    return ArmResults(arms_from_json(config["arms"]), list(seeds), StoredRun(history))


KINDS: dict[str, Kind] = {
    "theory": Kind(frozenset({"law", "T"}), _theory_normalise, _theory_compute),
    "testbed": Kind(frozenset(_testbed_fields()) | {"seed"}, _testbed_normalise, _testbed_compute),
    "ensemble": Kind(frozenset(_testbed_fields()) | {"seed", "seeds", "device"}, _ensemble_normalise,
                     _ensemble_compute),
    "montecarlo": Kind(MONTECARLO_SETTINGS, _montecarlo_normalise, _montecarlo_compute),
    "stage1": Kind(STAGE1_SETTINGS, _stage1_normalise, _stage1_compute),
    "stage2": Kind(STAGE2_SETTINGS, _stage2_normalise, _stage2_compute),
    "fusion": Kind(FUSION_SETTINGS, _fusion_normalise, _fusion_compute),
}


def execute(kind: str, config: dict, key: str, progress: bool = False, description: str | None = None) -> dict:
    """Run one configuration; the record of it, finished or failed (never raises)."""
    from mmicl.numerics.provenance import __version__, host

    started = time.time()
    record = {"format": FORMAT, "key": key, "kind": kind, "config": config,
              "provenance": {"version": __version__, **host(), "device": config.get("device", "cpu"),
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
