"""Settings of a testbed run: the data law, the decoder, the optimiser.

Every field is checked when the object is built, and the error says how to fix it.  An ensemble
is a list of ``MemberSpec`` (data settings and seed per member) sharing one ``ModelConfig``.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from typing import Literal

from mmicl.theory.errors import InputError

Positional = Literal["ape", "rope", "alibi"]
Layout = Literal["m1_first", "m2_first", "readout_last", "readout_last_m2_first", "readout_last_query_reversed",
                 "readout_last_m2_first_query_reversed"]
LAYOUTS = ("m1_first", "m2_first", "readout_last", "readout_last_m2_first", "readout_last_query_reversed",
           "readout_last_m2_first_query_reversed")
"""The multimodal layouts; the ``readout_last*`` ones end in a learned readout token R (version 3), and
the ``*_query_reversed`` ones put the query's two items in the other order than the context's
(version 4)."""
READOUT_LAYOUTS = ("readout_last", "readout_last_m2_first", "readout_last_query_reversed",
                   "readout_last_m2_first_query_reversed")
QUERY_REVERSED_LAYOUTS = ("readout_last_query_reversed", "readout_last_m2_first_query_reversed")


class TestbedConfigError(InputError):
    """A testbed setting that cannot be run; the message says which and how to fix it."""

    __test__ = False  # not a pytest test class


def _positive_integers(config, names: tuple[str, ...], what: str = "") -> None:
    """Refuse a field of ``config`` among ``names`` that is not an integer ≥ 1 (a bool is not one)."""
    for name in names:
        v = getattr(config, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise TestbedConfigError(f"{what}{name} must be a positive integer, got {v!r}")


@dataclass(frozen=True)
class DataConfig:
    """The Gaussian-mixture law of the testbed (docs/testbed.md).

    K classes with means μ_k ~ N(0, I/D), L label vectors ~ N(0, I/D), class k has label k mod L.
    An item of class k is (μ_k + ε η)/√(1+ε²) with η ~ N(0, I/D).  Class frequencies P(k) ∝ (k+1)^(−α).
    A sequence holds N item–label pairs then the query; with probability ``p_bursty`` it is bursty
    (N/B classes, each B times, the query one of them), otherwise its N+1 classes are independent.
    """

    K: int = 1024
    L: int = 32
    D: int = 32
    N: int = 8
    B: int = 2
    p_bursty: float = 1.0
    eps: float = 0.1
    zipf: float = 0.0

    def __post_init__(self):
        _positive_integers(self, ("K", "L", "D", "N", "B"))
        if self.K % self.L:
            raise TestbedConfigError(
                f"K={self.K} must be a multiple of L={self.L} (class k has label k mod L); "
                f"use K={self.L * max(1, round(self.K / self.L))}")
        if self.N % self.B:
            raise TestbedConfigError(f"N={self.N} must be a multiple of B={self.B} (N/B classes, B times each)")
        if self.N // self.B > self.L:
            raise TestbedConfigError(
                f"a bursty ICL sequence needs N/B={self.N // self.B} distinct labels but L={self.L}; raise L or B")
        for name, lo, hi in (("p_bursty", 0.0, 1.0), ("eps", 0.0, math.inf), ("zipf", 0.0, math.inf)):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and lo <= v <= hi):
                raise TestbedConfigError(f"{name} must be a finite number in [{lo}, {hi}], got {v!r}")

    @property
    def seq_len(self) -> int:
        """Tokens per sequence: N items, N labels, one query."""
        return 2 * self.N + 1

    @property
    def classes_per_bursty_sequence(self) -> int:
        return self.N // self.B


@dataclass(frozen=True)
class ModelConfig:
    """The decoder: ``layers`` blocks of pre-RMSNorm causal attention and gated SiLU MLP.

    ``pos``: ``ape`` concatenates a one-hot position code (``ape_slots`` slots, random shift) to each
    token; ``rope`` rotates queries and keys (base ``rope_base``); ``alibi`` adds −slope_h·(i−j) to the
    scores.  All variants go through the same input projection to ``width``.
    """

    layers: int = 2
    heads: int = 1
    width: int = 64
    mlp_ratio: int = 2
    pos: Positional = "ape"
    ape_slots: int = 64
    rope_base: float = 10000.0

    def __post_init__(self):
        _positive_integers(self, ("layers", "heads", "width", "mlp_ratio", "ape_slots"))
        if self.width % self.heads:
            raise TestbedConfigError(f"width={self.width} must be divisible by heads={self.heads}")
        if self.pos not in ("ape", "rope", "alibi"):
            raise TestbedConfigError(f"pos must be ape, rope or alibi, got {self.pos!r}")
        if self.pos == "rope" and (self.width // self.heads) % 2:
            raise TestbedConfigError(f"RoPE needs an even head width; width/heads = {self.width // self.heads}")

    @property
    def head_dim(self) -> int:
        return self.width // self.heads


@dataclass(frozen=True)
class TrainConfig:
    """Adam on the L-way cross-entropy at the query; metrics every ``eval_every`` steps on fixed
    evaluation sets of ``eval_size`` sequences per member.  ``warmup`` > 0 raises the learning rate
    linearly, lr·t/warmup at step t ≤ warmup, then holds it at lr (0: constant lr from step 1)."""

    steps: int = 2000
    batch: int = 128
    lr: float = 1e-3
    eval_every: int = 250
    eval_size: int = 512
    warmup: int = 0

    def __post_init__(self):
        _positive_integers(self, ("steps", "batch", "eval_every", "eval_size"))
        if not isinstance(self.warmup, int) or isinstance(self.warmup, bool) or self.warmup < 0:
            raise TestbedConfigError(f"warmup must be a whole number of steps ≥ 0, got {self.warmup!r}")
        if not (math.isfinite(self.lr) and self.lr > 0):
            raise TestbedConfigError(f"lr must be a positive finite number, got {self.lr!r}")


@dataclass(frozen=True)
class MemberSpec:
    """One model of an ensemble: its data law and its seed (class means, labels, weights)."""

    data: DataConfig
    seed: int

    def describe(self) -> dict:
        return {**asdict(self.data), "seed": self.seed}


@dataclass(frozen=True)
class SecondModality:
    """The second modality M2 of the multimodal protocol: its own Gaussian mixture.

    K classes with means in R^D, drawn like M1's; an item is (μ + ε η)/√(1+ε²), η ~ N(0, I/D);
    class k has label k mod L (the labels are M1's label vectors); class law P(k) ∝ (k+1)^(−α).

    ``distractor_dims`` > 0 appends that many class-free coordinates σ·ξ, ξ ~ N(0, I/d), σ =
    ``distractor_scale``, drawn afresh per item: an item then has ``item_dim`` = D + d coordinates,
    of which only the first D carry its class.  Two items of one class then have a raw cosine of
    about 1/((1+ε²)(1+σ²)) instead of 1/(1+ε²), so a random map of the items hardly tells their
    classes apart, and a map that has learnt to drop the distractors does (version 4: an M2 that
    stage 2 must learn).
    """

    K: int = 16
    D: int = 16
    eps: float = 0.1
    zipf: float = 0.0
    distractor_dims: int = 0
    distractor_scale: float = 0.0

    def __post_init__(self):
        _positive_integers(self, ("K", "D"), "M2 ")
        for name in ("eps", "zipf"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise TestbedConfigError(f"M2 {name} must be a finite number ≥ 0, got {v!r}")
        d, s = self.distractor_dims, self.distractor_scale
        if isinstance(d, bool) or not isinstance(d, int) or d < 0:
            raise TestbedConfigError(f"M2 distractor_dims must be a whole number ≥ 0, got {d!r}")
        if isinstance(s, bool) or not isinstance(s, (int, float)) or not math.isfinite(s) or s < 0:
            raise TestbedConfigError(f"M2 distractor_scale must be a finite number ≥ 0, got {s!r}")
        if (d == 0) != (s == 0):
            raise TestbedConfigError(
                f"M2 distractors need both distractor_dims and distractor_scale above 0 (or both 0), got "
                f"distractor_dims={d!r}, distractor_scale={s!r}")

    @property
    def item_dim(self) -> int:
        """Coordinates of an M2 item: D class coordinates, then the distractors."""
        return self.D + self.distractor_dims


@dataclass(frozen=True)
class MultimodalConfig:
    """A multimodal data law: M1 (``m1``: K1, D1, ε1, α1, and the shared L, N, B), M2 (``m2``),
    the probability ``p_bursty`` that a training sequence is bursty, and the ``layout``.

    ``m1_first``: [M1_1, M2_1, y_1, …, M1_N, M2_N, y_N, M1_q, M2_q]; ``m2_first`` swaps the two items
    of every pair and of the query, so the modality next to the label (and read out last) is M1.
    ``readout_last``: [M1_1, M2_1, y_1, …, M1_q, M2_q, R], R a learned readout token read out last,
    so the modality next to the label (M2) is no longer the read-out position; ``readout_last_m2_first``
    the same with the items of every pair and of the query swapped (M1 next to the label).
    ``readout_last_query_reversed``: the context as ``readout_last``, the query reversed, [M2_q, M1_q,
    R], so that the modality next to the label in the context (M2) is *not* the one next to R;
    ``readout_last_m2_first_query_reversed``: context [M2_i, M1_i, y_i], query [M1_q, M2_q, R].
    """

    m1: DataConfig
    m2: SecondModality
    p_bursty: float = 1.0
    layout: Layout = "m1_first"

    def __post_init__(self):
        L = self.m1.L
        if self.m2.K % L or self.m2.K < L:
            raise TestbedConfigError(
                f"M2 K={self.m2.K} must be a multiple of L={L} and at least L (class k has label k mod L); "
                f"the smallest is K2=L={L}")
        if not (isinstance(self.p_bursty, (int, float)) and 0 <= self.p_bursty <= 1):
            raise TestbedConfigError(f"p_bursty must be in [0, 1], got {self.p_bursty!r}")
        if self.layout not in LAYOUTS:
            raise TestbedConfigError(f"layout must be one of {', '.join(LAYOUTS)}, got {self.layout!r}")
        if self.m1.N // self.m1.B < 2:
            raise TestbedConfigError(
                f"the conflict set needs two context pairs with different labels: N/B = "
                f"{self.m1.N // self.m1.B}; raise N or lower B")

    @property
    def seq_len(self) -> int:
        """Tokens per sequence: N (M1, M2, label) triples and the two query items (and the readout
        token R in the ``readout_last*`` layouts)."""
        return 3 * self.m1.N + 2 + (self.layout in READOUT_LAYOUTS)


@dataclass(frozen=True)
class MultimodalMember:
    """One model of a multimodal ensemble: its data law and the seed of its M2 classes."""

    data: MultimodalConfig
    seed: int

    def describe(self) -> dict:
        return {**asdict(self.data), "seed": self.seed}


def check_compatible(members: list[MemberSpec]) -> None:
    """Members of one ensemble may differ in K, p_bursty, ε, α and seed, not in the shapes
    (L, D, N, B)."""
    if not members:
        raise TestbedConfigError("an ensemble needs at least one member")
    first = members[0].data
    for m in members[1:]:
        for name in ("L", "D", "N", "B"):
            if getattr(m.data, name) != getattr(first, name):
                raise TestbedConfigError(
                    f"ensemble members must share {name} (shapes); got {getattr(first, name)} and "
                    f"{getattr(m.data, name)}: run them as separate ensembles")


def with_data(data: DataConfig, **changes) -> DataConfig:
    return replace(data, **changes)


def stage1_ape_slots(model: ModelConfig, data: DataConfig) -> ModelConfig:
    """APE needs slots for the 3N+2 tokens of the multimodal layout (and room for the random shift):
    stage 1 is trained with that many, 1.5 × 3N+2 rounded up."""
    need = 3 * data.N + 2
    if model.pos == "ape" and model.ape_slots < need + need // 2:
        return replace(model, ape_slots=need + need // 2)
    return model


__all__ = ["DataConfig", "ModelConfig", "TrainConfig", "MemberSpec", "TestbedConfigError",
           "SecondModality", "MultimodalConfig", "MultimodalMember", "LAYOUTS", "READOUT_LAYOUTS", "QUERY_REVERSED_LAYOUTS",
           "check_compatible", "with_data", "stage1_ape_slots", "field"]
