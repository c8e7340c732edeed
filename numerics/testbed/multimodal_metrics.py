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

Per-sequence head scores (additive, testbed claim 9 version 3): ``head_scores_per_sequence`` gives
each head's ``induction`` and ``prev_token`` value on every ICL-set sequence, and
``head_score_spread`` their means and per-sequence sd (the evaluation se of a score is sd/√n).

Ablations (``ablation_drop``, ``ablated_accuracy``) zero a head by default or, given ``means``
(``head_means_multimodal`` over a reference batch), replace its output by its mean there.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .data import blind_best_accuracy
from .metrics import (accuracy, balanced_metrics, balanced_seed, chance_levels, head_summary, previous_token_strength,
                      random_shift, readout_attention, readout_contrast, uniform_induction, uniform_prev_token)
from .multimodal_data import SETS, MultimodalMixture, PairSequences
from .multimodal_model import MultimodalSystem, adjacent_modality, sequence_length, token_positions

__all__ = ["MultimodalEvalSets", "follow_adjacent_minus_other", "uniform_baselines", "baselines", "METRICS_OF",
           "check_eval_on", "evaluate_multimodal", "head_scores_multimodal", "head_scores_per_sequence",
           "head_score_spread", "head_means_multimodal", "ablated_accuracy", "encoder_accuracy", "ablation_drop"]



@dataclass
class MultimodalEvalSets:
    """Fixed evaluation sets (and APE shifts) of a multimodal run, drawn once from ``seed``."""

    sets: dict[str, PairSequences]
    shifts: dict[str, torch.Tensor]
    iwl_blind_best: torch.Tensor | None = None
    """(E,) the best query-blind rule's expected accuracy on ``sets["iwl_balanced"]`` (when drawn)"""

    @staticmethod
    def draw(mixture: MultimodalMixture, size: int, seed: int, ape_slots: int | None,
             balanced: bool = False) -> "MultimodalEvalSets":
        """The sets ``SETS`` (APE shifts for the layout's length); with ``balanced`` also the
        label-balanced IWL set ``iwl_balanced`` from a stream of its own (the others unchanged)."""
        T = sequence_length(mixture.layout, mixture.N)
        g = torch.Generator(device=mixture.device).manual_seed(int(seed))
        first = SETS[:6]  # drawn from one stream, in this order (the sets of the first version)
        sets = {name: mixture.batch(name, size, g) for name in first}
        shifts = {k: random_shift(mixture.E, size, T, ape_slots, g, mixture.device) for k in first}
        for k, name in enumerate(SETS[6:]):  # later sets: a stream each, so the earlier sets stay as they were
            g = torch.Generator(device=mixture.device).manual_seed(int(seed) + 7919 * (k + 1))
            sets[name] = mixture.batch(name, size, g)
            shifts[name] = random_shift(mixture.E, size, T, ape_slots, g, mixture.device)
        out = MultimodalEvalSets(sets, shifts)
        if balanced:
            g = torch.Generator(device=mixture.device).manual_seed(balanced_seed(seed))
            s = mixture.iwl_balanced_batch(size, g)
            out.sets["iwl_balanced"] = s
            out.shifts["iwl_balanced"] = random_shift(mixture.E, size, T, ape_slots, g, mixture.device)
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


@torch.no_grad()
def evaluate_multimodal(system: MultimodalSystem, sets: MultimodalEvalSets, summaries: bool = False,
                        eval_on: tuple[str, ...] | None = None) -> dict[str, torch.Tensor]:
    """Every metric of the module docstring (tensors with leading axis E, on the CPU); with
    ``summaries`` also ``induction_max``, ``induction_min`` and ``prev_token_max``.  ``eval_on``:
    the sets to measure (``METRICS_OF``; None, every set drawn); the others are not run."""
    on = set(check_eval_on(eval_on) or METRICS_OF)
    out: dict[str, torch.Tensor] = {}
    preds = {}
    for name in ("icl_m2only", "icl_m1only", "icl_m2known", "flip", "iwl"):
        if name not in on:
            continue
        s = sets.sets[name]
        logits = system(s, sets.shifts[name]).logits
        preds[name], L = logits.argmax(-1), logits.shape[-1]
        out[f"acc_{name}"] = (preds[name] == s.target).float().mean(-1)
    if "iwl" in on:
        out["iwl_context_rate"] = (sets.sets["iwl"].labels == preds["iwl"].unsqueeze(-1)).any(-1).float().mean(-1)
    if "flip" in on:
        out["flip_weights_rate"] = (preds["flip"] == (sets.sets["flip"].target - 1) % L).float().mean(-1)
    if "iwl_balanced" in sets.sets and "iwl_balanced" in on:
        s = sets.sets["iwl_balanced"]
        logits = system(s, sets.shifts["iwl_balanced"]).logits
        out |= balanced_metrics(logits.argmax(-1), s.target, sets.iwl_blind_best, logits.shape[-1])
    if "conflict" in on:
        c = sets.sets["conflict"]
        pred = system(c, sets.shifts["conflict"]).logits.argmax(-1)
        out["conflict_follow_m1"] = (pred == c.follow_m1).float().mean(-1)
        out["conflict_follow_m2"] = (pred == c.follow_m2).float().mean(-1)
    if "icl" not in on:
        return {k: v.float().cpu() for k, v in out.items()}
    icl = sets.sets["icl"]
    fwd = system(icl, sets.shifts["icl"], return_attention=True)
    out["acc_icl"] = accuracy(fwd.logits, icl.target)
    pos = token_positions(system.layout, icl.labels.shape[-1])
    match = icl.labels == icl.target.unsqueeze(-1)
    out["prev_token"] = torch.stack([previous_token_strength(a) for a in fwd.attention], dim=1)
    out["induction"] = torch.stack([readout_contrast(a, pos["label"], match) for a in fwd.attention], dim=1)
    for m in ("m1", "m2"):
        out[f"attn_match_{m}"] = torch.stack([readout_attention(a, pos[m], match) for a in fwd.attention], dim=1)
        out[f"pair_attn_{m}"] = torch.stack([a[..., pos["label"], pos[m]].mean(dim=(1, -1)) for a in fwd.attention],
                                            dim=1)
    top = out["induction"].flatten(1).argmax(1, keepdim=True)
    copy = (out["pair_attn_m1"] + out["pair_attn_m2"]).flatten(1).argmax(1, keepdim=True)
    for m in ("m1", "m2"):
        out[f"attn_match_{m}_top"] = torch.gather(out[f"attn_match_{m}"].flatten(1), 1, top).squeeze(1)
        out[f"pair_attn_{m}_top"] = torch.gather(out[f"pair_attn_{m}"].flatten(1), 1, copy).squeeze(1)
    if summaries:
        out |= head_summary(out["induction"], out["prev_token"])
    return {k: v.float().cpu() for k, v in out.items()}


@torch.no_grad()
def head_scores_multimodal(system: MultimodalSystem, sets: MultimodalEvalSets) -> dict[str, torch.Tensor]:
    """Every head's ``induction`` and ``prev_token`` score (E, layers, H) on the ICL set (the values
    of ``evaluate_multimodal``) and their ``head_summary`` (E,); on the CPU."""
    icl = sets.sets["icl"]
    fwd = system(icl, sets.shifts["icl"], return_attention=True)
    pos = token_positions(system.layout, icl.labels.shape[-1])
    match = icl.labels == icl.target.unsqueeze(-1)
    out = {"prev_token": torch.stack([previous_token_strength(a) for a in fwd.attention], dim=1),
           "induction": torch.stack([readout_contrast(a, pos["label"], match) for a in fwd.attention], dim=1)}
    out |= head_summary(out["induction"], out["prev_token"])
    return {k: v.float().cpu() for k, v in out.items()}


@torch.no_grad()
def head_scores_per_sequence(system: MultimodalSystem, sets: MultimodalEvalSets) -> dict[str, torch.Tensor]:
    """Every head's ``induction`` and ``prev_token`` value on each sequence of the ICL set,
    (E, b, layers, H) on the CPU: the values whose mean over the b sequences ``head_scores_multimodal``
    reports (the same formulas as ``metrics.previous_token_strength`` and ``metrics.readout_contrast``,
    without the mean over sequences)."""
    icl = sets.sets["icl"]
    fwd = system(icl, sets.shifts["icl"], return_attention=True)
    pos = token_positions(system.layout, icl.labels.shape[-1])
    m = (icl.labels == icl.target.unsqueeze(-1)).unsqueeze(2)                # (E, b, 1, n)
    prev, ind = [], []
    for a in fwd.attention:                                                   # (E, b, H, T, T)
        prev.append(torch.diagonal(a, offset=-1, dim1=-2, dim2=-1).mean(-1))  # (E, b, H)
        to = a[..., -1, pos["label"].to(a.device)]                            # (E, b, H, n)
        w = m.to(device=a.device, dtype=a.dtype)
        ind.append((to * w - to * (1 - w)).sum(-1))
    return {"prev_token": torch.stack(prev, dim=2).float().cpu(), "induction": torch.stack(ind, dim=2).float().cpu()}


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
def head_means_multimodal(system: MultimodalSystem, sets: MultimodalEvalSets, name: str = "icl_m2only") -> torch.Tensor:
    """(E, layers, H, T, head_dim): each head's output (before W_o) at each position, averaged over
    the sequences of the set ``name`` of ``sets`` (a reference batch; see ``metrics.head_means``)."""
    fwd = system(sets.sets[name], sets.shifts[name], return_head_outputs=True)
    return torch.stack([o.mean(1) for o in fwd.head_outputs], dim=1)


@torch.no_grad()
def ablated_accuracy(system: MultimodalSystem, sets: MultimodalEvalSets, per_member_heads: torch.Tensor,
                     name: str = "icl_m2only", means: torch.Tensor | None = None) -> torch.Tensor:
    """(E,) accuracy on the set ``name`` with the heads of the boolean mask ``per_member_heads``
    (E, layers, H) zeroed, or mean-ablated (output o_{l,h,t} → μ_{l,h,t}) when ``means`` is given."""
    s, shift = sets.sets[name], sets.shifts[name]
    mask = (~per_member_heads.to(s.m1.device)).to(s.m1.dtype)
    mean = None if means is None else means.to(s.m1.device)
    return accuracy(system(s, shift, head_mask=mask, head_mean=mean).logits, s.target)


@torch.no_grad()
def encoder_accuracy(encoder, items: torch.Tensor, classes: torch.Tensor) -> torch.Tensor:
    """(E,) accuracy of an M2 encoder (an ``EnsembleMLP`` ending in K2 logits) on single items."""
    return (encoder(items).argmax(-1) == classes).float().mean(-1).cpu()


@torch.no_grad()
def ablation_drop(system: MultimodalSystem, sets: MultimodalEvalSets, name: str = "icl_m2only",
                  means: torch.Tensor | None = None) -> torch.Tensor:
    """(E, layers, H): accuracy on the set ``name`` lost when head (l, h) of each member is zeroed
    (default) or, with ``means`` (``head_means_multimodal``), mean-ablated."""
    s, shift = sets.sets[name], sets.shifts[name]
    c = system.decoder.config
    base = accuracy(system(s, shift).logits, s.target)
    drop = torch.zeros(system.E, c.layers, c.heads)
    for layer in range(c.layers):
        for h in range(c.heads):
            mask = torch.ones(system.E, c.layers, c.heads, device=s.m1.device)
            mask[:, layer, h] = 0.0
            mean = None if means is None else means.to(mask.device)
            drop[:, layer, h] = (base - accuracy(system(s, shift, head_mask=mask, head_mean=mean).logits,
                                                 s.target)).cpu()
    return drop
