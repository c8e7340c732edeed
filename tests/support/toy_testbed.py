"""Toy sizes of the testbed claims, and fixtures-in-a-function that put them in place.

A claim module binds the design's constants (``FAMILIES``, ``EVAL_SIZE``, …) when it is imported, so
a toy run replaces them in every module that reads them, through ``monkeypatch`` (undone after the
test).  The toy sizes are tiny (width-8 decoders, a few steps, two seeds per family): a toy run says
whether a claim runs end to end and states every tolerance, never whether the claim holds.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from mmicl.numerics.testbed.config import DataConfig, ModelConfig, SecondModality, TrainConfig
from mmicl.proofs.claims.testbed import common, design, modalities, pilots, sizes, transfer, unimodal

TOY_FAMILIES = {"A": (3000, 3001), "B": (4000, 4001)}

TOY_PILOTED_UNIMODAL = {"v4_claim1": {"K_edge": 32}, "v4_claim2": {"steps": 4}, "v4_claim3": {"steps": 4},
                        "v4_claim8": {"heads": 2}, "v4_stage1": {"steps": 4}}

_TRANSFER_TRAIN = TrainConfig(steps=4, batch=8, lr=1e-3, eval_every=4, eval_size=16)
TOY_TRANSFER = replace(sizes.MULTIMODAL_QUICK,
                       m1=DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1),
                       model=ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, pos="ape", ape_slots=21),
                       stage1=_TRANSFER_TRAIN, stage2=_TRANSFER_TRAIN, m2=SecondModality(K=4, D=4, eps=0.1), seeds=2,
                       deep_layers=3)

TOY_V4_TRANSFER = replace(TOY_TRANSFER, m1=DataConfig(K=64, L=4, D=4, N=4, B=1, p_bursty=1.0, eps=0.1),
                          model=ModelConfig(layers=2, heads=2, width=8, mlp_ratio=1, pos="ape", ape_slots=21),
                          stage1=replace(_TRANSFER_TRAIN, eval_every=2), stage2=replace(_TRANSFER_TRAIN, eval_every=2),
                          m2=SecondModality(K=4, D=4, eps=0.1, distractor_dims=2, distractor_scale=1.0))
"""Claims 4, 5 and 9 of version 4 at a toy size: copy baseline 1/4, two heads per layer (claim 9's
control), M2 with two distractor coordinates."""


def _toy_v4_size(config, claim: str):
    """``TOY_V4_TRANSFER``, after the real size's refusals (a run that is not ``--quick``)."""
    sizes.multimodal_v4(config, claim, 4, 2, 1.0)
    return TOY_V4_TRANSFER


_MODALITY_TRAIN = TrainConfig(steps=3, batch=8, lr=1e-3, eval_every=2, eval_size=16)
TOY_MODALITIES = replace(sizes.MULTIMODAL_QUICK, m1=DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.1),
                         model=ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, pos="ape", ape_slots=21),
                         stage1=_MODALITY_TRAIN, stage2=_MODALITY_TRAIN, m2=SecondModality(K=4, D=4, eps=0.1), seeds=2,
                         encoder_K2=8)
TOY_PILOTED_MODALITIES = {"v4_claim6": {"K2": 8, "fusion_steps": 4}, "v4_claim7": {"encoder_steps": (0, 1, 2, 4)}}
TOY_EVAL_SIZE = 16


TOY_V4_FAMILIES = {"A": design.Family((5000, 5001), data_offset=1), "B": design.Family((6000, 6001), data_offset=2)}
"""Two seeds per version-4 family, each with its own data stream (as ``design.FAMILY_SETS[4]``)."""
TOY_V41_FAMILIES = {"A": design.Family((7000, 7001), data_offset=3), "B": design.Family((8000, 8001), data_offset=4)}
"""Two seeds per version-4.1 family (as ``design.FAMILY_SETS[4.1]``)."""
TOY_V4_UNIMODAL = sizes.V4UnimodalSize(DataConfig(K=64, L=4, D=4, N=4, B=1, p_bursty=1.0, eps=0.1),
                                      ModelConfig(layers=2, heads=2, width=8, mlp_ratio=1, pos="ape", ape_slots=16),
                                      TrainConfig(steps=4, batch=8, lr=1e-3, eval_every=2, eval_size=16))
"""Claims 1 and 8 of version 4 at a toy size: copy baseline 1/4, two heads per layer."""
TOY_CLAIM1_V4 = replace(sizes.CLAIM1_V4, K=(8, 16, 64), K_edge_grid=(16, 32))
"""Claim 1's doses at the toy size: its K's scaled down with it (the toy's K_edge, 32, is not a K
level, so the ε = 0.1 arm is an arm of its own there)."""


TOY_CLAIM3_K = (16, 32, 64)
"""Claim 3's K dose at the toy size."""


def _toy_v4_unimodal_size(config, claim: str, heads: int, steps: int) -> sizes.V4UnimodalSize:
    """``TOY_V4_UNIMODAL``, after the real size's refusals (a run that is not ``--quick``)."""
    sizes.v4_unimodal_size(config, claim, heads, steps)
    return TOY_V4_UNIMODAL


def _families(monkeypatch, families=TOY_FAMILIES) -> None:
    for module in (design, common):
        monkeypatch.setattr(module, "FAMILIES", families)
    monkeypatch.setitem(design.FAMILY_SETS, 4, TOY_V4_FAMILIES)
    monkeypatch.setitem(design.FAMILY_SETS, 4.1, TOY_V41_FAMILIES)


def _eval_size(monkeypatch, n: int, *modules) -> None:
    for module in (sizes, common, *modules):
        monkeypatch.setattr(module, "EVAL_SIZE", n)


def toy_unimodal(monkeypatch) -> None:
    """Claims 1, 2, 3 and 8 (version 4) at ``TOY_V4_UNIMODAL`` on ``TOY_V4_FAMILIES`` (claim 1's doses
    ``TOY_CLAIM1_V4``, claim 3's K dose ``TOY_CLAIM3_K``)."""
    _families(monkeypatch)
    for claim, chosen in TOY_PILOTED_UNIMODAL.items():
        monkeypatch.setitem(pilots.PILOTED, claim, chosen)
    monkeypatch.setattr(unimodal, "v4_unimodal_size", _toy_v4_unimodal_size)
    monkeypatch.setattr(unimodal, "CLAIM1_V4", TOY_CLAIM1_V4)
    monkeypatch.setattr(unimodal, "CLAIM3_K_V4", TOY_CLAIM3_K)


def toy_transfer(monkeypatch) -> None:
    """Claims 4, 5 and 9 (version 4) at ``TOY_V4_TRANSFER``, on ``TOY_V4_FAMILIES``, evaluated on ``TOY_EVAL_SIZE``
    sequences; a toy stage 1 does not learn ICL, so every seed meets a lenient premise and the checks
    see every seed."""
    _families(monkeypatch)
    _eval_size(monkeypatch, TOY_EVAL_SIZE, transfer)
    monkeypatch.setattr(sizes, "MULTIMODAL_QUICK", TOY_TRANSFER)
    monkeypatch.setattr(transfer, "K1_DIVERSE", 64)
    monkeypatch.setattr(transfer, "K1_LOW", 8)
    monkeypatch.setattr(transfer, "v4_size", _toy_v4_size)
    monkeypatch.setattr(transfer, "must_learn", lambda before, copy: np.ones(np.shape(before), bool))
    monkeypatch.setattr(common, "STAGE1_ICL", 0.0)
    monkeypatch.setattr(common, "STAGE1_INDUCTION", -2.0)


def toy_modalities(monkeypatch) -> None:
    """Claims 6 and 7 (version 4) at ``TOY_V4_TRANSFER`` on ``TOY_V4_FAMILIES`` (claim 7's M2 from
    ``TOY_MODALITIES``), evaluated on ``TOY_EVAL_SIZE``
    sequences (claim 7 on 24, its own size being 8192 in the design)."""
    _families(monkeypatch)
    _eval_size(monkeypatch, TOY_EVAL_SIZE, modalities)
    monkeypatch.setattr(sizes, "MULTIMODAL_QUICK", TOY_MODALITIES)
    monkeypatch.setattr(modalities, "EVAL_SIZE7", 24)
    monkeypatch.setattr(modalities, "EVAL_EVERY7", 1)
    monkeypatch.setattr(common, "STAGE1_ICL", 0.0)                    # a toy stage 1 does not learn ICL
    monkeypatch.setattr(common, "STAGE1_INDUCTION", -2.0)
    monkeypatch.setattr(modalities, "v4_size", _toy_v4_size)          # claims 6 and 7, version 4
    monkeypatch.setattr(transfer, "K1_DIVERSE", 64)
    for claim, chosen in TOY_PILOTED_MODALITIES.items():
        monkeypatch.setitem(pilots.PILOTED, claim, chosen)
