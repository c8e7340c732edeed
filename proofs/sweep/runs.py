"""What one run of a sweep computes, by kind, and the record it leaves.

- ``theory``: settings ``law`` (LAW text) and ``T``; result: α*, α_T and the excess risk at α_T
  (``numerics.lca``);
- ``testbed``: the data, model and training settings of the testbed (``numerics.testbed.config``)
  and a ``seed``; one model trained (``train_ensemble``); result: its final metrics and the strongest
  head's induction and previous-token scores (its time is in the provenance).

``execute(kind, config)`` never raises: a run that fails returns a record with ``status`` "failed",
the error and its traceback, so that one failing run does not stop a sweep.  Every record carries its
provenance: the package version, the host, the process, the device, the start and end times.
"""
from __future__ import annotations

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


KINDS: dict[str, Kind] = {
    "theory": Kind(frozenset({"law", "T"}), _theory_normalise, _theory_compute),
    "testbed": Kind(frozenset(_testbed_fields()) | {"seed"}, _testbed_normalise, _testbed_compute),
}


def execute(kind: str, config: dict, key: str) -> dict:
    """Run one configuration; the record of it, finished or failed (never raises)."""
    from mmicl._version import __version__

    started = time.time()
    record = {"format": FORMAT, "key": key, "kind": kind, "config": config,
              "provenance": {"version": __version__, "host": socket.gethostname(), "pid": os.getpid(),
                             "device": "cpu", "seed": config.get("seed"), "started": started}}
    try:
        result = KINDS[kind].compute(config)
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
