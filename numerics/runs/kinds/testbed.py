"""The ``testbed`` kind: the data, model and training settings of the testbed
(``numerics.testbed.config``) and a ``seed``; one model trained (``train_ensemble``); result: its
final metrics and the strongest head's induction and previous-token scores (its time is in the
provenance).  ``testbed_fields`` and ``testbed_parts`` read the flat settings of a sweep file (the
``ensemble`` kind takes them too)."""
from __future__ import annotations

from dataclasses import asdict, fields

from . import Kind
from mmicl.numerics.testbed.config import DataConfig, MemberSpec, ModelConfig, TrainConfig
from mmicl.numerics.validate import check_seed

__all__ = ["KIND", "testbed_fields", "testbed_parts"]


def testbed_fields() -> dict[str, str]:

    return {f.name: part for part, cls in (("data", DataConfig), ("model", ModelConfig), ("train", TrainConfig))
            for f in fields(cls)}


def testbed_parts(config: dict):

    where = testbed_fields()
    parts = {"data": {}, "model": {}, "train": {}}
    for k, v in config.items():
        if k != "seed":
            parts[where[k]][k] = v
    return DataConfig(**parts["data"]), ModelConfig(**parts["model"]), TrainConfig(**parts["train"])


def _testbed_normalise(config: dict) -> dict:

    data, model, train = testbed_parts(config)
    return {**asdict(data), **asdict(model), **asdict(train), "seed": check_seed(config.get("seed", 0))}


def _testbed_compute(config: dict) -> dict:
    import torch

    from mmicl.numerics.testbed.train import train_ensemble

    torch.set_num_threads(1)
    data, model, train = testbed_parts(config)
    run = train_ensemble(model, [MemberSpec(data, config["seed"])], train, data_seed=config["seed"])
    h = run.history
    final = {k: float(h.final(k)[0]) for k in ("acc_icl", "acc_iwl", "acc_flip", "iwl_context_rate")}
    final["induction_max"] = float(h.final("induction")[0].max())
    final["prev_token_max"] = float(h.final("prev_token")[0].max())
    return {"final": final}  # timings go to the provenance (seconds), so that results are reproducible


KIND = Kind(frozenset(testbed_fields()) | {"seed"}, _testbed_normalise, _testbed_compute)
