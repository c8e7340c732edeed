"""The protocols of the multimodal testbed, each an ensemble of arms × seeds.

- ``run_stage1``: the decoder trained on M1 alone (the unimodal testbed); returns a ``Stage1``
  artefact (weights, class means, label vectors, settings) that stage 2 loads.
- ``run_stage2``: for every arm and every stage-1 member, a copy of that member's decoder with its
  blocks frozen, a fresh projector of M2 (and optionally a pretrained M2 encoder), trained on the
  arm's multimodal data built on that member's M1 tables.  An arm may instead start from a decoder
  with random weights (a control: what stage 2 does without M1 pretraining).
- ``run_fusion``: early fusion: decoder, projector (and encoder) from scratch, all trained together
  on the multimodal data.

Each returns ``ArmResults`` (``experiments.py``) whose members are ordered arm-major, seed-minor.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from .checkpoint import Stage1
from .config import (DataConfig, MemberSpec, ModelConfig, MultimodalConfig, MultimodalMember, TestbedConfigError, TrainConfig,
                     stage1_ape_slots)
from .experiments import Arm, ArmResults, run_arms
from .metrics import evaluate
from .multimodal_data import MultimodalMixture
from .multimodal_metrics import MultimodalEvalSets, check_eval_on
from .multimodal_model import EnsembleMLP, MultimodalSystem, decoder_from_states
from .multimodal_train import train_encoder, train_multimodal
from .train import TrainedEnsemble
from mmicl.numerics.provenance import __version__
from mmicl.numerics.testbed.config import SecondModality
from mmicl.numerics.testbed.multimodal_metrics import ablation_drop

__all__ = ["ENCODER_HIDDEN", "MultimodalArm", "run_stage1", "arm_members", "run_stage2", "run_fusion", "arm_to_json",
           "arms_from_json", "stage2_ablation_drop", "MULTIMODAL_ANALYSES"]


ENCODER_HIDDEN = (64, 32)
"""The M2 encoder: an MLP D2 → 64 → 32 → K2 (GELU); its 32 features feed the projector."""


@dataclass(frozen=True)
class MultimodalArm:
    """One setting of a multimodal grid.  ``decoder``: ``stage1`` (the stage-1 weights) or
    ``random`` (a control); ``encoder_steps``: pretraining steps of an M2 encoder (None: no encoder,
    M2 items go to the projector raw)."""

    name: str
    data: MultimodalConfig
    decoder: str = "stage1"
    encoder_steps: int | None = None
    standardise_features: bool = False
    """version 3 (claim 7): the pretrained encoder's features standardised per member on a
    reference batch (``EnsembleMLP.standardise_features``) before they reach the projector"""


def run_stage1(model: ModelConfig, data: DataConfig, seeds: list[int], train: TrainConfig, device: str = "cpu",
               data_seed: int = 0, progress: bool = False, snapshot=None) -> Stage1:

    model = stage1_ape_slots(model, data)
    r = run_arms(model, [Arm("m1", data)], seeds, train, device=device, data_seed=data_seed, progress=progress,
                 description="stage 1 (M1)", snapshot=snapshot)
    run = r.run
    final = {k: v.tolist() for k, v in evaluate(run.model, run.eval_sets).items()}
    return Stage1(model, run.members, train, {k: v.detach().cpu() for k, v in run.model.weights.items()},
                  run.mixture.means.cpu(), run.mixture.label_vectors.cpu(), final, data_seed,
                  run.history.seconds, __version__, history=run.history)


def arm_members(arms: list[MultimodalArm], m1: list[MemberSpec]) -> list[MultimodalMember]:
    return [MultimodalMember(replace(a.data, m1=spec.data), seed=spec.seed + 7919 * i)
            for i, a in enumerate(arms) for spec in m1]


def _check_arms(arms: list[MultimodalArm]) -> None:
    if not arms:
        raise TestbedConfigError("give at least one arm")
    with_encoder = {a.encoder_steps is not None for a in arms}
    if len(with_encoder) > 1:
        raise TestbedConfigError("arms of one ensemble must all have an encoder or none; run them separately")
    if with_encoder == {True} and len({a.data.m2.K for a in arms}) > 1:
        raise TestbedConfigError("arms with an M2 encoder must share K2 (the encoder's classes)")
    if len({a.standardise_features for a in arms}) > 1:
        raise TestbedConfigError("arms of one ensemble must all standardise the encoder's features or none; run them "
                                 "separately")
    if any(a.standardise_features and a.encoder_steps is None for a in arms):
        raise TestbedConfigError("standardise_features needs an encoder (encoder_steps ≥ 0)")


def _system(model: ModelConfig, mixture: MultimodalMixture, states, seeds, arms_per_member, device,
            encoder_seed: int, train: TrainConfig) -> tuple[MultimodalSystem, dict[str, torch.Tensor]]:
    decoder = decoder_from_states(model, mixture.m1.D, mixture.L, states, seeds, device)
    D2 = mixture.m2_item_dim
    encoder, extra = None, {}
    if arms_per_member[0].encoder_steps is not None:
        K2 = int(mixture.m2.K[0])
        encoder = EnsembleMLP([D2, *ENCODER_HIDDEN, K2], seeds, device, salt=2)
        extra["encoder_acc"] = train_encoder(encoder, mixture, [a.encoder_steps for a in arms_per_member],
                                             batch=train.batch, lr=train.lr, eval_size=train.eval_size,
                                             seed=encoder_seed)
        if arms_per_member[0].standardise_features:  # a reference batch of its own stream
            g = torch.Generator(device=mixture.device).manual_seed(int(encoder_seed) + 1)
            encoder.standardise_features(mixture.single_items(train.eval_size, g)[0])
    d_in = ENCODER_HIDDEN[-1] if encoder is not None else D2
    projector = EnsembleMLP([d_in, model.width, mixture.m1.D], seeds, device, salt=1)
    return MultimodalSystem(decoder, projector, mixture.label_vectors, mixture.layout, encoder), extra


def _finish(system, mixture, params, arms, seeds, train, data_seed, progress, description, extra, eval_on=None,
            snapshot=None):
    ape = system.decoder.config.ape_slots if system.decoder.config.pos == "ape" else None
    if ape is not None and ape < 3 * mixture.N + 2:
        raise TestbedConfigError(f"the decoder has {ape} APE slots, the multimodal layout needs {3 * mixture.N + 2}: "
                                 "train stage 1 with more ape_slots")
    sets = MultimodalEvalSets.draw(mixture, train.eval_size, seed=data_seed + 1_000_003, ape_slots=ape,
                                   only=eval_on)  # the sets measured; any other, drawn when read
    history = train_multimodal(system, mixture, params, train, sets, data_seed, progress, description, extra,
                               eval_on=eval_on, snapshot=snapshot)
    run = TrainedEnsemble(system, mixture, sets, history, mixture.members)
    return ArmResults(list(arms), list(seeds), run)


def run_stage2(stage1: Stage1, arms: list[MultimodalArm], train: TrainConfig, trainable: str = "projector+readout",
               device: str = "cpu", data_seed: int = 0, progress: bool = False,
               description: str = "stage 2", eval_on: tuple[str, ...] | None = None,
               snapshot=None) -> ArmResults:
    """Stage 2 for every (arm, stage-1 member); seeds of the result are the stage-1 member seeds.
    ``eval_on``: the evaluation sets measured during training (``evaluate_multimodal``; None, all);
    ``snapshot``: a ``resume.Snapshot`` the training resumes from and saves (None: none)."""
    _check_arms(arms)
    eval_on = check_eval_on(eval_on)
    m1 = stage1.members
    members = arm_members(arms, m1)
    E1 = stage1.E
    tables = (stage1.means.repeat(len(arms), 1, 1), stage1.label_vectors.repeat(len(arms), 1, 1))
    mixture = MultimodalMixture(members, device, m1_tables=tables)
    states = [stage1.state(e % E1) if a.decoder == "stage1" else None
              for a in arms for e in range(E1)]
    seeds = [m.seed for m in members]
    per_member = [a for a in arms for _ in range(E1)]
    system, extra = _system(stage1.model, mixture, states, seeds, per_member, device, data_seed + 77, train)
    params = system.trainable(trainable)
    return _finish(system, mixture, params, arms, [s.seed for s in m1], train, data_seed, progress, description,
                   extra, eval_on, snapshot)


def run_fusion(model: ModelConfig, m1: DataConfig, arms: list[MultimodalArm], seeds: list[int], train: TrainConfig,
               device: str = "cpu", data_seed: int = 0, progress: bool = False,
               description: str = "early fusion", snapshot=None) -> ArmResults:
    """Early fusion: everything from scratch, trained together on each arm's multimodal data (M1
    tables drawn from the member seeds); ``snapshot`` as in ``run_stage2``."""
    _check_arms(arms)
    model = stage1_ape_slots(model, m1)
    members = arm_members(arms, [MemberSpec(m1, s) for s in seeds])
    mixture = MultimodalMixture(members, device)
    mseeds = [m.seed for m in members]
    per_member = [a for a in arms for _ in seeds]
    system, extra = _system(model, mixture, [None] * len(members), mseeds, per_member, device, data_seed + 77, train)
    params = system.trainable("all")
    return _finish(system, mixture, params, arms, seeds, train, data_seed, progress, description, extra,
                   snapshot=snapshot)


# ---- the JSON form of arms, and analyses of a trained multimodal ensemble (the sweep kinds) -------
def arm_to_json(arm: MultimodalArm) -> dict:
    """An arm as plain JSON: ``{"name", "data": {"m1", "m2", "p_bursty", "layout"}, "decoder",
    "encoder_steps"}`` and ``"standardise_features": true`` when set (left out otherwise, so that runs
    stored before it existed keep their keys): what the sweep runs ``stage2`` and ``fusion`` take and key on."""
    from dataclasses import asdict

    out = {"name": arm.name, "data": asdict(arm.data), "decoder": arm.decoder, "encoder_steps": arm.encoder_steps}
    if arm.standardise_features:  # only when set, so that the keys of earlier runs stay what they were
        out["standardise_features"] = True
    return out


def arms_from_json(arms: list[dict]) -> list[MultimodalArm]:
    """The inverse of ``arm_to_json`` for a list of arms, checked: every setting valid (the
    configurations' own checks), names distinct, ``decoder`` ``stage1`` or ``random``,
    ``encoder_steps`` absent/None or a whole number ≥ 0, and the arms runnable as one ensemble (all
    with an encoder or none; one K2 with an encoder).  ``TestbedConfigError`` (one line) otherwise."""

    if not isinstance(arms, (list, tuple)) or not arms:
        raise TestbedConfigError(f"arms must be a non-empty list of arms, got {arms!r}")
    out = []
    for a in arms:
        if not isinstance(a, dict) or not {"name", "data"} <= set(a) or set(a) - {"name", "data", "decoder",
                                                                                    "encoder_steps",
                                                                                    "standardise_features"}:
            raise TestbedConfigError(f'an arm is {{"name", "data", optional "decoder", "encoder_steps", '
                                     f'"standardise_features"}}, got {a!r}')
        d = a["data"]
        if not isinstance(d, dict) or not {"m1", "m2"} <= set(d):
            raise TestbedConfigError(f'arm {a["name"]!r}: data is {{"m1", "m2", optional "p_bursty", "layout"}}, '
                                     f"got {d!r}")
        try:
            data = MultimodalConfig(DataConfig(**d["m1"]), SecondModality(**d["m2"]),
                                    **{k: v for k, v in d.items() if k not in ("m1", "m2")})
        except TypeError as e:
            raise TestbedConfigError(f"arm {a['name']!r}: {e}") from None
        decoder, steps = a.get("decoder", "stage1"), a.get("encoder_steps")
        if decoder not in ("stage1", "random"):
            raise TestbedConfigError(f"arm {a['name']!r}: decoder must be 'stage1' or 'random', got {decoder!r}")
        if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 0):
            raise TestbedConfigError(f"arm {a['name']!r}: encoder_steps must be None or a whole number ≥ 0, "
                                     f"got {steps!r}")
        std = a.get("standardise_features", False)
        if not isinstance(std, bool):
            raise TestbedConfigError(f"arm {a['name']!r}: standardise_features must be true or false, got {std!r}")
        out.append(MultimodalArm(str(a["name"]), data, decoder, steps, std))
    names = [a.name for a in out]
    if len(set(names)) != len(names):
        raise TestbedConfigError(f"arm names must differ, got {names}")
    _check_arms(out)
    return out


def stage2_ablation_drop(r: ArmResults, set_name: str) -> list:
    """(E, layers, H) as nested lists: the accuracy on the evaluation set ``set_name`` that each
    member loses when head (l, h) alone is zeroed (``multimodal_metrics.ablation_drop``), on the
    trained models of a stage-2 or fusion run."""

    return ablation_drop(r.run.model, r.run.eval_sets, set_name).tolist()


MULTIMODAL_ANALYSES = {"ablation_drop": stage2_ablation_drop}
"""Analyses a stored stage-2 or fusion run may carry out on its trained models, by name: each takes
the ``ArmResults`` and its parameters by name, and returns JSON-ready values."""
