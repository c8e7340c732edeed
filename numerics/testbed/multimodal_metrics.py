"""What is measured on a multimodal ensemble, per member (leading axis E).

Accuracies (the sets are those of ``multimodal_data``):
- ``acc_icl`` (confounded: M1 alone can answer), ``acc_icl_m2only`` (M2-necessary),
  ``acc_icl_m1only`` (M1-necessary), ``acc_icl_m2known`` (M2-necessary on known M2 classes with
  per-sequence labels), ``acc_flip``, ``acc_iwl``;
- ``iwl_context_rate``: IWL-set predictions equal to some context label (always wrong there);
  ``flip_weights_rate``: flip-set predictions equal to the unflipped (in-weights) label;
- ``conflict_follow_m1`` / ``conflict_follow_m2``: on the conflict set, the fraction of predictions
  equal to the label that the query's M1 item / M2 item points to.

Attention, on the ICL set, per layer and head (E, layers, H), each beside its uniform-attention
baseline (``uniform_baselines``):
- ``prev_token``: mean over t ≥ 1 of the attention from t to t−1 (on the period-3 layout);
- ``induction``: the readout's total attention to the label tokens whose label is the answer, minus
  its attention to the other label tokens;
- ``attn_match_m1`` / ``attn_match_m2``: the readout's total attention to the M1 items / M2 items of
  the context pairs whose label is the answer (which modality the induction match uses).
- ``pair_attn_m1`` / ``pair_attn_m2``: each context label token's attention to the M1 item / the M2
  item of its own pair, averaged over the N label tokens (which modality the copy step, that writes
  a pair's item into its label token, reads).
Scalars: ``attn_match_m1_top`` / ``attn_match_m2_top`` at each member's strongest induction head;
``pair_attn_m1_top`` / ``pair_attn_m2_top`` at its strongest copy head (largest pair_attn_m1 +
pair_attn_m2); on request (``summaries``, or ``head_scores_multimodal``) ``induction_max``,
``induction_min`` (the lowest head: one answering by elimination scores −1) and ``prev_token_max``.

Version 3 (additive; the keys above are unchanged):
- ``follow_adjacent_minus_other(metrics, layout)``: ``conflict_follow_<adjacent>`` minus
  ``conflict_follow_<other>``, the adjacent modality being the one whose context item is next to
  the label token (``multimodal_model.adjacent_modality``); derived from the two stored rates, no
  new key;
- with sets drawn with ``balanced=True``: ``acc_iwl_balanced``, ``iwl_blind_best``,
  ``iwl_balanced_over_blind`` and ``iwl_blind_marginal`` on the label-balanced IWL set, as in the
  unimodal ``metrics`` (the best query-blind rule from M2's class law, whose labels these are).
- In the ``readout_last*`` layouts the readout is the token R (the last token), so every
  attention metric that reads "the readout's attention" (``induction``, ``attn_match_*``) reads R's.

Measuring part of the sets (``evaluate_multimodal(..., eval_on=names)``): only the metrics of the
named sets are computed (``METRICS_OF``), bit for bit as in the full evaluation.  Each set costs one
forward pass over its items; a claim that reads one curve of a large evaluation set (testbed claim
7, version 3) evaluates that set alone.

Large sets are measured in slices of items (``item_slices``: at most ``EVAL_CHUNK_SEQUENCES``
sequences, members × items, per forward pass), the metrics being item-weighted means over the
slices; ``MultimodalEvalSets.draw(..., only=names)`` draws the named sets at once and any other
when it is first read, with the same items.  A run that measures one set of 8192 items on 32
members holds that set alone and a slice of its attention maps (testbed claim 7, version 4).

Per-sequence head scores (additive, testbed claim 9 version 3): ``head_scores_per_sequence`` gives
each head's ``induction`` and ``prev_token`` value on every ICL-set sequence, and
``head_score_spread`` their means and per-sequence sd (the evaluation se of a score is sd/√n).

Ablations (``ablation_drop``, ``ablated_accuracy``) zero a head by default or, given ``means``
(``head_means_multimodal`` over a reference batch), replace its output by its mean there.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

import torch

from .data import blind_best_accuracy
from .metrics import (balanced_metrics, balanced_seed, chance_levels, head_summary, previous_token_strength,
                      random_shift, readout_attention, readout_contrast, uniform_induction, uniform_prev_token)
from .multimodal_data import SETS, MultimodalMixture, PairSequences
from .multimodal_model import MultimodalSystem, adjacent_modality, sequence_length, token_positions

__all__ = ["MultimodalEvalSets", "EVAL_CHUNK_SEQUENCES", "item_slices", "follow_adjacent_minus_other", "uniform_baselines", "baselines", "METRICS_OF",
           "check_eval_on", "evaluate_multimodal", "head_scores_multimodal", "head_scores_per_sequence",
           "head_score_spread", "head_means_multimodal", "ablated_accuracy", "encoder_accuracy", "ablation_drop"]



EVAL_CHUNK_SEQUENCES = 32768
"""The most sequences (members × items) one evaluation forward pass takes: larger sets are measured
in slices of ``EVAL_CHUNK_SEQUENCES // E`` items (``item_slices``), so that an evaluation's memory
does not grow with the set's size.  One forward pass of E × b sequences holds attention scores of
E·b·H·T² floats per layer: testbed claim 7 (32 members × 8192 items, 4 heads, 26 tokens) asked for
2.8 GB at once for one of them.  A slice's metrics are those of its items; the set's are the
item-weighted means over its slices (up to float rounding; bit for bit when one slice holds it)."""


def item_slices(E: int, b: int, chunk: int | None = None) -> list[slice]:
    """The slices of b items that an evaluation of E members runs one forward pass each on:
    ``chunk`` items each (None: ``EVAL_CHUNK_SEQUENCES // E``, at least 1), the last one shorter."""
    n = max(1, EVAL_CHUNK_SEQUENCES // max(int(E), 1)) if chunk is None else chunk
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"chunk is the number of items per forward pass, a whole number ≥ 1 (or None), got {chunk!r}")
    return [slice(i, min(i + n, b)) for i in range(0, b, n)] or [slice(0, 0)]


def _part(s: PairSequences, sl: slice) -> PairSequences:
    """The items ``sl`` of every member of ``s``."""
    return PairSequences(*(getattr(s, f.name)[:, sl] for f in fields(s)))


class _SetDrawer:
    """Draws the evaluation sets of a run on request, each exactly as if every set were drawn: the
    first six sets of ``SETS`` come from one stream in their order (drawing one draws the six, and
    keeps the ones asked for), each later set from a stream of its own."""

    def __init__(self, mixture: MultimodalMixture, size: int, seed: int, ape_slots: int | None):
        self.mixture, self.size, self.seed, self.ape_slots = mixture, int(size), int(seed), ape_slots
        self.names = list(SETS)
        self.sets: dict[str, PairSequences] = {}
        self.shifts: dict[str, torch.Tensor] = {}

    def _shift(self, g: torch.Generator) -> torch.Tensor:
        m = self.mixture
        return random_shift(m.E, self.size, sequence_length(m.layout, m.N), self.ape_slots, g, m.device)

    def load(self, names) -> None:
        want = [n for n in names if n not in self.sets]
        unknown = [n for n in want if n not in self.names]
        if unknown:
            raise KeyError(f"no evaluation set {unknown[0]!r}; the sets drawn here are {self.names}")
        first = SETS[:6]
        if any(n in first for n in want):
            g = torch.Generator(device=self.mixture.device).manual_seed(self.seed)
            kept = {}
            for name in first:  # one stream, in this order (the sets of the first version)
                s = self.mixture.batch(name, self.size, g)
                if name in want:
                    kept[name] = s
                del s  # a set not asked for is let go now, not when the next one replaces it
            for name in first:
                shift = self._shift(g)
                if name in want:
                    self.sets[name], self.shifts[name] = kept[name], shift
        for k, name in enumerate(SETS[6:]):  # later sets: a stream each, so the earlier sets stay as they were
            if name in want:
                g = torch.Generator(device=self.mixture.device).manual_seed(self.seed + 7919 * (k + 1))
                self.sets[name] = self.mixture.batch(name, self.size, g)
                self.shifts[name] = self._shift(g)


class _Drawn(Mapping):
    """The sets (or their APE shifts) of a ``_SetDrawer``, by name; a set not drawn yet is drawn
    on first use."""

    def __init__(self, drawer: _SetDrawer, what: str):
        self._drawer, self._what = drawer, what

    def __getitem__(self, name: str):
        self._drawer.load([name])
        return getattr(self._drawer, self._what)[name]

    def __contains__(self, name) -> bool:
        return name in self._drawer.names

    def __iter__(self):
        return iter(self._drawer.names)

    def __len__(self) -> int:
        return len(self._drawer.names)

    def __or__(self, other: Mapping) -> dict:  # as a dict's ``|``: every set, drawn, then ``other``'s
        return {**self, **other}

    def __ror__(self, other: Mapping) -> dict:
        return {**other, **self}


@dataclass
class MultimodalEvalSets:
    """Fixed evaluation sets (and APE shifts) of a multimodal run, drawn from ``seed``."""

    sets: Mapping[str, PairSequences]
    shifts: Mapping[str, torch.Tensor]
    iwl_blind_best: torch.Tensor | None = None
    """(E,) the best query-blind rule's expected accuracy on ``sets["iwl_balanced"]`` (when drawn)"""

    @staticmethod
    def draw(mixture: MultimodalMixture, size: int, seed: int, ape_slots: int | None,
             balanced: bool = False, only: tuple[str, ...] | None = None) -> "MultimodalEvalSets":
        """The sets ``SETS`` (APE shifts for the layout's length); with ``balanced`` also the
        label-balanced IWL set ``iwl_balanced`` from a stream of its own (the others unchanged).
        ``only``: the sets of ``SETS`` drawn now (None: all); any other is drawn when first read,
        the same items either way, so that a run measuring one large set holds that one only."""
        drawer = _SetDrawer(mixture, size, seed, ape_slots)
        drawer.load(SETS if only is None else [n for n in only if n in SETS])
        out = MultimodalEvalSets(_Drawn(drawer, "sets"), _Drawn(drawer, "shifts"))
        if balanced:
            g = torch.Generator(device=mixture.device).manual_seed(balanced_seed(seed))
            s = mixture.iwl_balanced_batch(size, g)
            drawer.names.append("iwl_balanced")
            drawer.sets["iwl_balanced"], drawer.shifts["iwl_balanced"] = s, drawer._shift(g)
            out.iwl_blind_best = blind_best_accuracy(mixture.m2.blind_posterior(s.labels, balanced=True)).float()
        return out


def follow_adjacent_minus_other(metrics: dict, layout: str):
    """``conflict_follow_<adjacent>`` − ``conflict_follow_<other>`` (claim 6, version 3): how much
    more often a prediction on the conflict set follows the modality next to the label token
    (``adjacent_modality(layout)``) than the other one.  ``metrics`` holds the two rates (tensors,
    arrays or curves of either; the result has their shape)."""
    adj = adjacent_modality(layout)
    other = "m1" if adj == "m2" else "m2"
    return metrics[f"conflict_follow_{adj}"] - metrics[f"conflict_follow_{other}"]


def uniform_baselines(N: int, B: int, layout: str = "m1_first") -> dict[str, float]:
    """The value of each attention metric when every token attends uniformly to its causal past
    (3N+2 tokens, 3N+3 in the ``readout_last*`` layouts; on the ICL set B of the N context pairs
    carry the answer's label)."""
    T = sequence_length(layout, N)
    own_item = sum(1 / (3 * i + 3) for i in range(N)) / N   # label token 3i+2 sees 3i+3 tokens
    return {"prev_token": uniform_prev_token(T), "induction": uniform_induction(N, B, T),
            "attn_match_m1": B / T, "attn_match_m2": B / T,
            "pair_attn_m1": own_item, "pair_attn_m2": own_item}


def baselines(m1, layout: str = "m1_first") -> dict[str, float]:
    """Chance levels and uniform-attention metrics of the multimodal layout, for M1's ``DataConfig``
    (its L, N and B)."""
    return chance_levels(m1.N, m1.B, m1.L) | uniform_baselines(m1.N, m1.B, layout)


METRICS_OF = {
    "icl_m2only": ("acc_icl_m2only",), "icl_m1only": ("acc_icl_m1only",), "icl_m2known": ("acc_icl_m2known",),
    "flip": ("acc_flip", "flip_weights_rate"), "iwl": ("acc_iwl", "iwl_context_rate"),
    "iwl_balanced": ("acc_iwl_balanced", "iwl_blind_best", "iwl_balanced_over_blind", "iwl_blind_marginal"),
    "conflict": ("conflict_follow_m1", "conflict_follow_m2"),
    "icl": ("acc_icl", "prev_token", "induction", "attn_match_m1", "attn_match_m2", "pair_attn_m1", "pair_attn_m2",
            "attn_match_m1_top", "attn_match_m2_top", "pair_attn_m1_top", "pair_attn_m2_top"),
}
"""The metrics each evaluation set gives (``evaluate_multimodal``'s ``eval_on``); ``iwl_balanced``
only where the sets were drawn with ``balanced=True``, and the head summaries of ``summaries`` come
with ``icl``."""


def check_eval_on(eval_on) -> tuple[str, ...] | None:
    """``eval_on`` as a sorted tuple of set names of ``METRICS_OF`` (None: every set); a
    ``ValueError`` naming the known sets for anything else (an empty list measures nothing)."""
    if eval_on is None:
        return None
    if isinstance(eval_on, str) or not all(isinstance(n, str) for n in eval_on):
        raise ValueError(f"eval_on is a list of evaluation set names, got {eval_on!r}")
    names = tuple(sorted(set(eval_on)))
    unknown = [n for n in names if n not in METRICS_OF]
    if unknown or not names:
        raise ValueError(f"eval_on names the evaluation sets to measure during training, one or more of "
                         f"{', '.join(METRICS_OF)}; got {list(eval_on)!r}"
                         + (f" ({', '.join(unknown)} unknown)" if unknown else ""))
    return names


def _predictions(system: MultimodalSystem, s: PairSequences, shift: torch.Tensor, chunk: int | None = None,
                 **kw) -> tuple[torch.Tensor, int]:
    """(E, b) the argmax of the logits on every item of ``s`` (one forward pass per ``item_slices``
    slice; ``kw``: ``head_mask``, ``head_mean``) and the number of labels L."""
    preds, L = [], 0
    for sl in item_slices(*s.target.shape, chunk):
        logits = system(_part(s, sl), shift[:, sl], **kw).logits
        preds.append(logits.argmax(-1))
        L = logits.shape[-1]
    return torch.cat(preds, dim=1), L


def _attention_means(attention, icl: PairSequences, layout: str) -> dict[str, torch.Tensor]:
    """The ICL set's attention metrics (E, layers, H) of the module docstring, means over the items
    of ``icl`` whose attention maps (one (E, b, H, T, T) per layer) are given."""
    pos = token_positions(layout, icl.labels.shape[-1])
    match = icl.labels == icl.target.unsqueeze(-1)
    out = {"prev_token": torch.stack([previous_token_strength(a) for a in attention], dim=1),
           "induction": torch.stack([readout_contrast(a, pos["label"], match) for a in attention], dim=1)}
    for m in ("m1", "m2"):
        out[f"attn_match_{m}"] = torch.stack([readout_attention(a, pos[m], match) for a in attention], dim=1)
        out[f"pair_attn_{m}"] = torch.stack([a[..., pos["label"], pos[m]].mean(dim=(1, -1)) for a in attention],
                                            dim=1)
    return out


def _weighted(total: torch.Tensor | None, value: torch.Tensor, weight: float) -> torch.Tensor:
    """``total + weight · value`` (``weight · value`` when ``total`` is None): one slice's step of an
    item-weighted mean over slices.  A set in one slice has weight 1, which leaves ``value``'s bits."""
    value = value * weight
    return value if total is None else total + value


def _icl_metrics(system: MultimodalSystem, sets: MultimodalEvalSets, chunk: int | None) -> tuple[torch.Tensor, dict]:
    """(E, b) predictions on the ICL set and its attention metrics (``_attention_means``), each
    the item-weighted mean of its values on the ``item_slices`` slices."""
    icl, shift = sets.sets["icl"], sets.shifts["icl"]
    b = icl.target.shape[1]
    preds, means = [], {}
    for sl in item_slices(*icl.target.shape, chunk):
        part = _part(icl, sl)
        fwd = system(part, shift[:, sl], return_attention=True)
        preds.append(fwd.logits.argmax(-1))
        w = (sl.stop - sl.start) / b
        means = {k: _weighted(means.get(k), v, w) for k, v in _attention_means(fwd.attention, part,
                                                                              system.layout).items()}
    return torch.cat(preds, dim=1), means


@torch.no_grad()
def evaluate_multimodal(system: MultimodalSystem, sets: MultimodalEvalSets, summaries: bool = False,
                        eval_on: tuple[str, ...] | None = None, chunk: int | None = None) -> dict[str, torch.Tensor]:
    """Every metric of the module docstring (tensors with leading axis E, on the CPU); with
    ``summaries`` also ``induction_max``, ``induction_min`` and ``prev_token_max``.  ``eval_on``:
    the sets to measure (``METRICS_OF``; None, every set drawn); the others are not run.  ``chunk``:
    items per forward pass (None: ``EVAL_CHUNK_SEQUENCES // E``; the numbers do not depend on it
    beyond float rounding)."""
    on = set(check_eval_on(eval_on) or METRICS_OF)
    out: dict[str, torch.Tensor] = {}
    preds = {}
    for name in ("icl_m2only", "icl_m1only", "icl_m2known", "flip", "iwl"):
        if name not in on:
            continue
        s = sets.sets[name]
        preds[name], L = _predictions(system, s, sets.shifts[name], chunk)
        out[f"acc_{name}"] = (preds[name] == s.target).float().mean(-1)
    if "iwl" in on:
        out["iwl_context_rate"] = (sets.sets["iwl"].labels == preds["iwl"].unsqueeze(-1)).any(-1).float().mean(-1)
    if "flip" in on:
        out["flip_weights_rate"] = (preds["flip"] == (sets.sets["flip"].target - 1) % L).float().mean(-1)
    if "iwl_balanced" in sets.sets and "iwl_balanced" in on:
        s = sets.sets["iwl_balanced"]
        pred, L = _predictions(system, s, sets.shifts["iwl_balanced"], chunk)
        out |= balanced_metrics(pred, s.target, sets.iwl_blind_best, L)
    if "conflict" in on:
        c = sets.sets["conflict"]
        pred, _ = _predictions(system, c, sets.shifts["conflict"], chunk)
        out["conflict_follow_m1"] = (pred == c.follow_m1).float().mean(-1)
        out["conflict_follow_m2"] = (pred == c.follow_m2).float().mean(-1)
    if "icl" not in on:
        return {k: v.float().cpu() for k, v in out.items()}
    pred, means = _icl_metrics(system, sets, chunk)
    out["acc_icl"] = (pred == sets.sets["icl"].target).float().mean(-1)
    out |= means
    top = out["induction"].flatten(1).argmax(1, keepdim=True)
    copy = (out["pair_attn_m1"] + out["pair_attn_m2"]).flatten(1).argmax(1, keepdim=True)
    for m in ("m1", "m2"):
        out[f"attn_match_{m}_top"] = torch.gather(out[f"attn_match_{m}"].flatten(1), 1, top).squeeze(1)
        out[f"pair_attn_{m}_top"] = torch.gather(out[f"pair_attn_{m}"].flatten(1), 1, copy).squeeze(1)
    if summaries:
        out |= head_summary(out["induction"], out["prev_token"])
    return {k: v.float().cpu() for k, v in out.items()}


@torch.no_grad()
def head_scores_multimodal(system: MultimodalSystem, sets: MultimodalEvalSets,
                           chunk: int | None = None) -> dict[str, torch.Tensor]:
    """Every head's ``induction`` and ``prev_token`` score (E, layers, H) on the ICL set (the values
    of ``evaluate_multimodal``) and their ``head_summary`` (E,); on the CPU."""
    _, means = _icl_metrics(system, sets, chunk)
    out = {"prev_token": means["prev_token"], "induction": means["induction"]}
    out |= head_summary(out["induction"], out["prev_token"])
    return {k: v.float().cpu() for k, v in out.items()}


@torch.no_grad()
def head_scores_per_sequence(system: MultimodalSystem, sets: MultimodalEvalSets,
                             chunk: int | None = None) -> dict[str, torch.Tensor]:
    """Every head's ``induction`` and ``prev_token`` value on each sequence of the ICL set,
    (E, b, layers, H) on the CPU: the values whose mean over the b sequences ``head_scores_multimodal``
    reports (the same formulas as ``metrics.previous_token_strength`` and ``metrics.readout_contrast``,
    without the mean over sequences)."""
    icl, shift = sets.sets["icl"], sets.shifts["icl"]
    pos = token_positions(system.layout, icl.labels.shape[-1])
    prev, ind = [], []
    for sl in item_slices(*icl.target.shape, chunk):
        part = _part(icl, sl)
        fwd = system(part, shift[:, sl], return_attention=True)
        m = (part.labels == part.target.unsqueeze(-1)).unsqueeze(2)           # (E, b, 1, n)
        p, i = [], []
        for a in fwd.attention:                                               # (E, b, H, T, T)
            p.append(torch.diagonal(a, offset=-1, dim1=-2, dim2=-1).mean(-1))  # (E, b, H)
            to = a[..., -1, pos["label"].to(a.device)]                        # (E, b, H, n)
            w = m.to(device=a.device, dtype=a.dtype)
            i.append((to * w - to * (1 - w)).sum(-1))
        prev.append(torch.stack(p, dim=2))
        ind.append(torch.stack(i, dim=2))
    return {"prev_token": torch.cat(prev, dim=1).float().cpu(), "induction": torch.cat(ind, dim=1).float().cpu()}


def head_score_spread(system: MultimodalSystem, sets: MultimodalEvalSets) -> dict:
    """Per head (E, layers, H), as nested lists: the ``induction`` and ``prev_token`` scores (means over
    the n ICL-set sequences, as ``head_scores_multimodal``) and ``induction_sd`` / ``prev_token_sd``, the
    sample standard deviation (ddof = 1) over those sequences of the per-sequence values
    (``head_scores_per_sequence``); ``n``.  A score's evaluation se is then sd/√n, and a difference of
    two such means over the same sequences has se ≤ (sd_a + sd_b)/√n whatever their correlation
    (testbed claim 9, version 3)."""
    per = head_scores_per_sequence(system, sets)
    n = int(per["induction"].shape[1])
    out: dict = {"n": n, "ddof": 1}
    for k, v in per.items():
        out[k] = v.double().mean(1).tolist()
        out[f"{k}_sd"] = (v.double().std(1, correction=1) if n > 1 else torch.zeros_like(v[:, 0]).double()).tolist()
    return out


@torch.no_grad()
def head_means_multimodal(system: MultimodalSystem, sets: MultimodalEvalSets, name: str = "icl_m2only",
                          chunk: int | None = None) -> torch.Tensor:
    """(E, layers, H, T, head_dim): each head's output (before W_o) at each position, averaged over
    the sequences of the set ``name`` of ``sets`` (a reference batch; see ``metrics.head_means``)."""
    s, shift = sets.sets[name], sets.shifts[name]
    b = s.target.shape[1]
    total = None
    for sl in item_slices(*s.target.shape, chunk):
        fwd = system(_part(s, sl), shift[:, sl], return_head_outputs=True)
        total = _weighted(total, torch.stack([o.mean(1) for o in fwd.head_outputs], dim=1), (sl.stop - sl.start) / b)
    return total


@torch.no_grad()
def ablated_accuracy(system: MultimodalSystem, sets: MultimodalEvalSets, per_member_heads: torch.Tensor,
                     name: str = "icl_m2only", means: torch.Tensor | None = None,
                     chunk: int | None = None) -> torch.Tensor:
    """(E,) accuracy on the set ``name`` with the heads of the boolean mask ``per_member_heads``
    (E, layers, H) zeroed, or mean-ablated (output o_{l,h,t} → μ_{l,h,t}) when ``means`` is given."""
    s, shift = sets.sets[name], sets.shifts[name]
    mask = (~per_member_heads.to(s.m1.device)).to(s.m1.dtype)
    mean = None if means is None else means.to(s.m1.device)
    pred, _ = _predictions(system, s, shift, chunk, head_mask=mask, head_mean=mean)
    return (pred == s.target).float().mean(-1)


@torch.no_grad()
def encoder_accuracy(encoder, items: torch.Tensor, classes: torch.Tensor) -> torch.Tensor:
    """(E,) accuracy of an M2 encoder (an ``EnsembleMLP`` ending in K2 logits) on single items."""
    return (encoder(items).argmax(-1) == classes).float().mean(-1).cpu()


@torch.no_grad()
def ablation_drop(system: MultimodalSystem, sets: MultimodalEvalSets, name: str = "icl_m2only",
                  means: torch.Tensor | None = None, chunk: int | None = None) -> torch.Tensor:
    """(E, layers, H): accuracy on the set ``name`` lost when head (l, h) of each member is zeroed
    (default) or, with ``means`` (``head_means_multimodal``), mean-ablated."""
    s, shift = sets.sets[name], sets.shifts[name]
    c = system.decoder.config

    def acc(**kw) -> torch.Tensor:
        return (_predictions(system, s, shift, chunk, **kw)[0] == s.target).float().mean(-1)

    base = acc()
    drop = torch.zeros(system.E, c.layers, c.heads)
    for layer in range(c.layers):
        for h in range(c.heads):
            mask = torch.ones(system.E, c.layers, c.heads, device=s.m1.device)
            mask[:, layer, h] = 0.0
            mean = None if means is None else means.to(mask.device)
            drop[:, layer, h] = (base - acc(head_mask=mask, head_mean=mean)).cpu()
    return drop
