"""What is measured on a testbed ensemble, per member.

- ``acc_icl``: accuracy on the ICL set (new classes; the answer is only in the context);
- ``acc_flip``: accuracy on the ICL-flip set (known classes, labels ℓ → ℓ+1 in context and target);
- ``acc_iwl``: accuracy on the IWL set (query class and label absent from the context);
- ``iwl_context_rate``: on the IWL set, the fraction of predictions equal to some in-context label
  (always wrong there: a copying model scores high);
- ``icl_context_rate``: on the ICL set, the fraction of predictions equal to some in-context label
  (the copy rate: 1 for a model that always copies a context label, right or not; B/N of it is
  right when the label copied is a random one of the context);
- ``flip_weights_rate``: on the ICL-flip set, the fraction of predictions equal to the unflipped
  (in-weights) label;
- ``prev_token[l, h]``: mean over positions t ≥ 1 of the attention from t to t−1 (ICL set);
- ``induction[l, h]``: the query's total attention to the label tokens whose label is the answer,
  minus its total attention to the other label tokens (ICL set); in [−1, 1], 1 for a perfect
  induction head, −(N−B)/(2N+1)·… for uniform attention (negative, since fewer labels match);
- ``ablation_drop[l, h]``: ICL accuracy minus ICL accuracy with head (l, h) zeroed (or, with
  ``means``, mean-ablated: its output replaced by its mean over a reference batch, ``head_means``).

Attention patching (``patched_icl``): ICL accuracy and copy rate with the query's attention row of
chosen heads replaced by a fixed pattern over the context's label tokens (``PATCH_ROWS``):
``uniform_labels`` spreads it evenly over the N label tokens, keeping "read a label" and removing
"which label" (the match an induction head makes); ``matching_labels`` spreads it evenly over the
label tokens that carry the answer, the match made perfectly.  The two differ only in the match.

Per-member summaries of the per-head scores (``head_summary``; ``head_scores`` computes both ends):
``induction_max`` = max over (l, h) of ``induction``, ``induction_min`` = min over (l, h) (a head that
answers by elimination, attending only to the *other* labels, scores −1 and shows here, not in the
max), ``prev_token_max`` = max over (l, h) of ``prev_token``.

Label-balanced in-weights metrics (version 3; only when the sets are drawn with ``balanced=True``,
or by ``evaluate_iwl_balanced``), on the set ``Mixture.iwl_balanced_batch`` (the query's label
uniform over the L labels, the context avoiding it as on the IWL set):
- ``acc_iwl_balanced``: the model's accuracy there;
- ``iwl_blind_best``: the expected accuracy of the best query-blind rule, exactly from the set and
  the law it was drawn from: per sequence max_ℓ P(ℓ | context) (``Mixture.blind_posterior``), the
  Bayes rule given everything but the query (elimination of the context's labels, weighted by the
  class law), averaged over the set;
- ``iwl_balanced_over_blind`` = ``acc_iwl_balanced`` − ``iwl_blind_best``: what the query itself adds;
- ``iwl_blind_marginal``: the most frequent target label's share of the set (a rule blind to the
  query *and* the context; ≈ 1/L by construction, and never above the Bayes rule in expectation).

Chance levels: 1/L for a uniform guess; B/N for a model that copies a random in-context label
(on the ICL set that is the accuracy of "copy some label of the context").
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .data import Mixture, Sequences, blind_best_accuracy
from .model import EnsembleDecoder

__all__ = ["EvalSets", "balanced_seed", "draw_iwl_balanced", "balanced_metrics", "evaluate_iwl_balanced",
           "random_shift", "uniform_prev_token", "uniform_induction", "uniform_baselines", "chance_levels",
           "baselines", "label_positions", "accuracy", "previous_token_strength", "induction_strength",
           "readout_contrast", "readout_attention", "head_summary", "head_scores", "head_means", "reference_means",
           "evaluate", "ablation_drop", "ablated_icl_accuracy", "PATCH_ROWS", "label_attention_rows",
           "patched_icl"]



@dataclass
class EvalSets:
    """Fixed evaluation sequences (and APE shifts) of a run, drawn once from ``seed``."""

    icl: Sequences
    flip: Sequences
    iwl: Sequences
    shifts: dict[str, torch.Tensor]
    iwl_balanced: Sequences | None = None
    """the label-balanced IWL set (``balanced=True``), else None"""
    iwl_blind_best: torch.Tensor | None = None
    """(E,) the best query-blind rule's expected accuracy on ``iwl_balanced``"""

    @staticmethod
    def draw(mixture: Mixture, size: int, seed: int, ape_slots: int | None, balanced: bool = False) -> "EvalSets":
        """The three sets from one stream seeded by ``seed``; with ``balanced`` also the label-balanced
        IWL set, from a stream of its own (``balanced_seed(seed)``), so the three are unchanged."""
        g = torch.Generator(device=mixture.device).manual_seed(int(seed))
        sets = {"icl": mixture.icl_batch(size, g), "flip": mixture.flip_batch(size, g),
                "iwl": mixture.iwl_batch(size, g)}
        T = sets["icl"].tokens.shape[2]
        shifts = {k: random_shift(mixture.E, size, T, ape_slots, g, mixture.device) for k in sets}
        out = EvalSets(shifts=shifts, **sets)
        if balanced:
            out.iwl_balanced, out.shifts["iwl_balanced"], out.iwl_blind_best = draw_iwl_balanced(
                mixture, size, balanced_seed(seed), ape_slots)
        return out


def balanced_seed(seed: int) -> int:
    """The seed of the label-balanced IWL set's own stream, given the evaluation sets' seed."""
    return (int(seed) * 31 + 104_729) % (2 ** 63 - 1)


def draw_iwl_balanced(mixture: Mixture, size: int, seed: int, ape_slots: int | None
                      ) -> tuple[Sequences, torch.Tensor, torch.Tensor]:
    """The label-balanced IWL set, its APE shifts and the best query-blind rule's expected accuracy
    on it (E,), from a generator seeded by ``seed``."""
    g = torch.Generator(device=mixture.device).manual_seed(int(seed))
    s = mixture.iwl_balanced_batch(size, g)
    shift = random_shift(mixture.E, size, s.tokens.shape[2], ape_slots, g, mixture.device)
    blind = blind_best_accuracy(mixture.blind_posterior(s.context_labels, balanced=True))
    return s, shift, blind.float()


def balanced_metrics(pred: torch.Tensor, target: torch.Tensor, blind_best: torch.Tensor, L: int
                     ) -> dict[str, torch.Tensor]:
    """The label-balanced in-weights metrics (module docstring) of predictions ``pred`` (E, b) of
    the set's ``target`` (E, b), beside the set's ``blind_best`` (E,)."""
    acc = (pred == target).float().mean(-1)
    blind = blind_best.to(acc.device, acc.dtype)
    counts = torch.zeros(pred.shape[0], L, device=target.device).scatter_add_(
        1, target, torch.ones_like(target, dtype=torch.float))
    return {"acc_iwl_balanced": acc, "iwl_blind_best": blind, "iwl_balanced_over_blind": acc - blind,
            "iwl_blind_marginal": (counts.max(-1).values / target.shape[1]).to(acc.device)}


@torch.no_grad()
def evaluate_iwl_balanced(model: EnsembleDecoder, mixture: Mixture, size: int, seed: int) -> dict[str, torch.Tensor]:
    """The label-balanced in-weights metrics of a trained model on a fresh set drawn from ``seed``
    (with APE shifts when the model uses APE); tensors (E,) on the CPU."""
    c = model.config
    s, shift, blind = draw_iwl_balanced(mixture, size, seed, c.ape_slots if c.pos == "ape" else None)
    pred = model(s.tokens, shift).logits.argmax(-1)
    return {k: v.float().cpu() for k, v in balanced_metrics(pred, s.target, blind, mixture.L).items()}


def random_shift(E: int, b: int, T: int, ape_slots: int | None, g: torch.Generator, device) -> torch.Tensor:
    """Offsets in [0, ape_slots − T] of the one-hot positions (zeros when positions are not one-hot)."""
    if ape_slots is None:
        return torch.zeros(E, b, dtype=torch.long, device=device)
    return torch.randint(0, ape_slots - T + 1, (E, b), generator=g, device=device)


def uniform_prev_token(T: int) -> float:
    """``previous_token_strength`` of uniform causal attention over T tokens: mean over t ≥ 1 of 1/(t+1)."""
    return sum(1 / (t + 1) for t in range(1, T)) / (T - 1)


def uniform_induction(N: int, B: int, T: int) -> float:
    """The induction score of a last token that attends uniformly to all T tokens, when B of the N
    label tokens carry the answer's label: (B − (N − B))/T."""
    return (2 * B - N) / T


def uniform_baselines(N: int, B: int) -> dict[str, float]:
    """The attention metrics of uniform causal attention on the unimodal layout (2N+1 tokens)."""
    T = 2 * N + 1
    return {"prev_token": uniform_prev_token(T), "induction": uniform_induction(N, B, T)}


def chance_levels(N: int, B: int, L: int) -> dict[str, float]:
    """Accuracy of a uniform guess (1/L) and of copying a random context label (B/N)."""
    return {"uniform_guess": 1 / L, "copy": B / N}


def baselines(data) -> dict[str, float]:
    """Chance levels and uniform-attention metrics of a unimodal ``DataConfig``: what every result
    file reports beside the measured values."""
    return chance_levels(data.N, data.B, data.L) | uniform_baselines(data.N, data.B)


def label_positions(N: int) -> torch.Tensor:
    """Indices of the label tokens y_1 … y_N in [x1, y1, …, xN, yN, xq]."""
    return torch.arange(N) * 2 + 1


def accuracy(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return (logits.argmax(-1) == target).float().mean(-1)


def previous_token_strength(attn: torch.Tensor) -> torch.Tensor:
    """(E, b, H, T, T) → (E, H): mean over sequences and t ≥ 1 of attn[t, t−1]."""
    return torch.diagonal(attn, offset=-1, dim1=-2, dim2=-1).mean(dim=(-1, 1))


def induction_strength(attn: torch.Tensor, seqs: Sequences) -> torch.Tensor:
    """(E, b, H, T, T) → (E, H): query attention to matching label tokens minus to the others."""
    N = seqs.context_labels.shape[-1]
    return readout_contrast(attn, label_positions(N), seqs.context_labels == seqs.target.unsqueeze(-1))


def readout_contrast(attn: torch.Tensor, positions: torch.Tensor, match: torch.Tensor) -> torch.Tensor:
    """(E, b, H, T, T) → (E, H): the last token's total attention to the ``positions`` (n,) whose
    ``match`` (E, b, n) is true, minus its total attention to the other ``positions``."""
    to = attn[..., -1, positions.to(attn.device)]                          # (E, b, H, n)
    m = match.unsqueeze(2).to(attn.dtype)                                  # (E, b, 1, n)
    return (to * m - to * (1 - m)).sum(-1).mean(1)


def readout_attention(attn: torch.Tensor, positions: torch.Tensor, match: torch.Tensor) -> torch.Tensor:
    """(E, b, H, T, T) → (E, H): the last token's total attention to the ``positions`` (n,) whose
    ``match`` (E, b, n) is true."""
    to = attn[..., -1, positions.to(attn.device)]
    return (to * match.unsqueeze(2).to(attn.dtype)).sum(-1).mean(1)


def head_summary(induction: torch.Tensor, prev_token: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per member (E,), from per-head scores (E, layers, H): ``induction_max`` and ``induction_min``
    (max and min over every head (l, h) of the induction score) and ``prev_token_max``."""
    ind = induction.flatten(1)
    return {"induction_max": ind.max(1).values, "induction_min": ind.min(1).values,
            "prev_token_max": prev_token.flatten(1).max(1).values}


@torch.no_grad()
def head_scores(model: EnsembleDecoder, sets: EvalSets) -> dict[str, torch.Tensor]:
    """Every head's ``induction`` and ``prev_token`` score (E, layers, H) on the ICL set of ``sets``
    (the values ``evaluate`` reports), and their ``head_summary`` (E,); on the CPU."""
    icl = model(sets.icl.tokens, sets.shifts["icl"], return_attention=True)
    out = {"prev_token": torch.stack([previous_token_strength(a) for a in icl.attention], dim=1),
           "induction": torch.stack([induction_strength(a, sets.icl) for a in icl.attention], dim=1)}
    out |= head_summary(out["induction"], out["prev_token"])
    return {k: v.float().cpu() for k, v in out.items()}


@torch.no_grad()
def head_means(model: EnsembleDecoder, tokens: torch.Tensor, shift: torch.Tensor | None = None) -> torch.Tensor:
    """(E, layers, H, T, head_dim): μ_{e,l,h,t} = (1/b) Σ_i o_{e,l,h,t}(s_i), the output of head
    (l, h) of member e at position t (before W_o, every other head intact), averaged over the b
    reference sequences s_i of ``tokens`` (E, b, T, D) — per member, per head, per position."""
    fwd = model(tokens, shift, return_head_outputs=True)
    return torch.stack([o.mean(1) for o in fwd.head_outputs], dim=1)


@torch.no_grad()
def reference_means(model: EnsembleDecoder, mixture: Mixture, size: int, seed: int) -> torch.Tensor:
    """``head_means`` over the ICL set of ``EvalSets.draw(mixture, size, seed)``: a reference batch
    drawn from its own seed (with its own random APE shifts)."""
    c = model.config
    ref = EvalSets.draw(mixture, size, seed=seed, ape_slots=c.ape_slots if c.pos == "ape" else None)
    return head_means(model, ref.icl.tokens, ref.shifts["icl"])


@torch.no_grad()
def evaluate(model: EnsembleDecoder, sets: EvalSets, ablate: bool = False,
             summaries: bool = False) -> dict[str, torch.Tensor]:
    """Every metric of the module docstring, each a tensor with leading axis E (on the CPU); with
    ``summaries`` also ``induction_max``, ``induction_min`` and ``prev_token_max`` (``head_summary``)."""
    out: dict[str, torch.Tensor] = {}
    icl = model(sets.icl.tokens, sets.shifts["icl"], return_attention=True)
    flip = model(sets.flip.tokens, sets.shifts["flip"])
    iwl = model(sets.iwl.tokens, sets.shifts["iwl"])
    out["acc_icl"] = accuracy(icl.logits, sets.icl.target)
    out["acc_flip"] = accuracy(flip.logits, sets.flip.target)
    out["acc_iwl"] = accuracy(iwl.logits, sets.iwl.target)
    iwl_pred = iwl.logits.argmax(-1)
    out["iwl_context_rate"] = (sets.iwl.context_labels == iwl_pred.unsqueeze(-1)).any(-1).float().mean(-1)
    icl_pred = icl.logits.argmax(-1)
    out["icl_context_rate"] = (sets.icl.context_labels == icl_pred.unsqueeze(-1)).any(-1).float().mean(-1)
    L = flip.logits.shape[-1]
    out["flip_weights_rate"] = (flip.logits.argmax(-1) == (sets.flip.target - 1) % L).float().mean(-1)
    out["prev_token"] = torch.stack([previous_token_strength(a) for a in icl.attention], dim=1)
    out["induction"] = torch.stack([induction_strength(a, sets.icl) for a in icl.attention], dim=1)
    if sets.iwl_balanced is not None:
        bal = model(sets.iwl_balanced.tokens, sets.shifts["iwl_balanced"])
        out |= balanced_metrics(bal.logits.argmax(-1), sets.iwl_balanced.target, sets.iwl_blind_best, L)
    if ablate:
        out["ablation_drop"] = ablation_drop(model, sets, out["acc_icl"])
    if summaries:
        out |= head_summary(out["induction"], out["prev_token"])
    return {k: v.float().cpu() for k, v in out.items()}


@torch.no_grad()
def ablation_drop(model: EnsembleDecoder, sets: EvalSets, base: torch.Tensor | None = None,
                  heads: list[tuple[int, int]] | None = None, means: torch.Tensor | None = None) -> torch.Tensor:
    """(E, layers, H): ICL accuracy lost when head (l, h) of each member is zeroed (default) or,
    with ``means`` (``head_means``), mean-ablated."""
    c = model.config
    if base is None:
        base = accuracy(model(sets.icl.tokens, sets.shifts["icl"]).logits, sets.icl.target)
    drop = torch.zeros(model.E, c.layers, c.heads)
    for layer in range(c.layers):
        for h in range(c.heads):
            drop[:, layer, h] = (base - ablated_icl_accuracy(model, sets, [(layer, h)], means=means)).cpu()
    return drop


@torch.no_grad()
def ablated_icl_accuracy(model: EnsembleDecoder, sets: EvalSets, heads: list[tuple[int, int]],
                         per_member_heads: torch.Tensor | None = None,
                         means: torch.Tensor | None = None) -> torch.Tensor:
    """ICL accuracy (E,) with the listed heads zeroed in every member, or with the boolean mask
    ``per_member_heads`` (E, layers, H) of heads to zero.  With ``means`` μ (E, layers, H, T,
    head_dim), from ``head_means`` on a reference batch, the heads are mean-ablated instead: head
    (l, h)'s output o_{l,h,t} is replaced by μ_{l,h,t} (``EnsembleDecoder.forward``)."""
    c = model.config
    mask = torch.ones(model.E, c.layers, c.heads, device=sets.icl.tokens.device)
    for layer, h in heads:
        mask[:, layer, h] = 0.0
    if per_member_heads is not None:
        mask = mask * (~per_member_heads.to(mask.device)).float()
    if means is None:
        logits = model(sets.icl.tokens, sets.shifts["icl"], head_mask=mask).logits
    else:
        logits = model(sets.icl.tokens, sets.shifts["icl"], head_mask=mask, head_mean=means.to(mask.device)).logits
    return accuracy(logits, sets.icl.target)


PATCH_ROWS = {
    "uniform_labels": "the query attends to each of the N context label tokens with weight 1/N",
    "matching_labels": "the query attends evenly to the context label tokens whose label is the answer, and to "
                       "nothing else",
}
"""The attention rows ``patched_icl`` can put in place of a head's query row, by name."""


def label_attention_rows(seqs: Sequences, kind: str) -> torch.Tensor:
    """(E, b, T) attention rows over the positions of [x1, y1, …, xN, yN, xq] (``PATCH_ROWS``): weight
    on label tokens only, each row summing to 1.  ``matching_labels`` needs the answer in the context
    (the ICL set); a sequence without it is refused."""
    if kind not in PATCH_ROWS:
        raise ValueError(f"unknown attention row {kind!r}: one of {', '.join(PATCH_ROWS)}")
    E, b, T = seqs.tokens.shape[:3]
    N = seqs.context_labels.shape[-1]
    if kind == "uniform_labels":
        weights = torch.ones(E, b, N, device=seqs.tokens.device)
    else:
        weights = (seqs.context_labels == seqs.target.unsqueeze(-1)).float()
        if (weights.sum(-1) == 0).any():
            raise ValueError("matching_labels: some sequence has no context label equal to its answer (only the ICL "
                             "set has one in every sequence)")
    rows = torch.zeros(E, b, T, device=seqs.tokens.device)
    rows[..., label_positions(N).to(rows.device)] = weights / weights.sum(-1, keepdim=True)
    return rows


@torch.no_grad()
def patched_icl(model: EnsembleDecoder, sets: EvalSets, heads: torch.Tensor, kind: str) -> dict[str, torch.Tensor]:
    """On the ICL set, ``acc_icl`` and ``icl_context_rate`` (E,) with the query's attention row of
    the heads of the boolean mask ``heads`` (E, layers, H) replaced by the row ``kind``
    (``PATCH_ROWS``, ``label_attention_rows``); every other head and row as trained."""
    icl = sets.icl
    rows = label_attention_rows(icl, kind)
    logits = model(icl.tokens, sets.shifts["icl"], attention_patch=(heads.to(icl.tokens.device), rows)).logits
    pred = logits.argmax(-1)
    return {"acc_icl": accuracy(logits, icl.target).cpu(),
            "icl_context_rate": (icl.context_labels == pred.unsqueeze(-1)).any(-1).float().mean(-1).cpu()}
