"""Which heads are induction heads, and what zeroing them does, against a control ablation.

``induction_ablation(run, ...)``, for every member of a trained ensemble:

1. **Selection on held-out sequences.** Induction and previous-token scores of every head are
   measured on a *selection* ICL set drawn from its own seed, not on the evaluation set that the
   ablations are measured on.  The induction heads are those scoring above ``threshold``; when no
   head does, the single strongest head (so that every member ablates at least one head).
2. **Control heads**: as many heads as there are induction heads, drawn at random (``control_seed``)
   among the member's non-induction heads, in the *same layer* as each induction head where that
   layer has a non-induction head left, otherwise from the other layers (the result says which
   members' controls are layer-matched).  A member whose heads are all induction heads has no
   control (``None``).
3. **Ablations on the evaluation set**: ICL accuracy with nothing zeroed, with the induction heads
   zeroed, with the control heads zeroed, and the drop of each head zeroed alone.

Everything is returned as JSON-ready lists (member-major), so that it can be stored with the run.

``rank_heads(run, ...)`` (version 3), for every member:

1. **Reference means** μ_{l,h,t} = mean over the ICL set drawn from ``reference_seed`` of head
   (l, h)'s output at position t (``metrics.head_means``).  *Mean-ablating* a head replaces its
   output by μ; *zeroing* it replaces it by 0.
2. **Single-head drops on a selection set** (the ICL set drawn from ``selection_seed``, never the
   evaluation set): d_mode[l, h] = acc(intact) − acc(head (l, h) ablated alone), mode ∈ {mean, zero},
   beside every head's induction and previous-token score there.
3. **Top induction head**: the head with the largest d_mean among the heads whose selection
   induction score exceeds ``threshold`` (among all heads if none does); equal drops go to the higher
   induction score, then to the first head in (layer, head) order.
4. **Control head**: the head of the *same layer* as the top head with the smallest d_mean (the
   least needed head of that layer); equal drops are broken at random (``control_seed``).  A model
   with one head per layer has no same-layer control: None, with the reason.
5. **On the evaluation set**: ICL accuracy intact, with the top head ablated and with the control
   head ablated, in both modes.

``rank_heads_multimodal`` does the same for a ``MultimodalSystem`` (accuracy on one named set).
``induction_patching`` (version 4.1 of claim 8) adds attention patching to ``induction_circuit``: the
query's attention row of every induction head replaced by a fixed row over the context's label
tokens, uniform over them (the match removed) or on the answer's labels (the match made perfect;
``metrics.PATCH_ROWS``), and the uniform row on as many heads that are neither, from any layer
(``count_matched_control``).
``induction_circuit`` adds the ablation of head sets: every induction head at once, against every
head that is neither an induction nor a previous-token head, against a *matched* control (as many
"neither" heads as there are induction heads in each layer, ``matched_control``; version 4), and
every previous-token head at once.
"""
from __future__ import annotations

import itertools
from typing import Callable

import numpy as np
import torch

from .metrics import (EvalSets, ablated_icl_accuracy, ablation_drop, accuracy, evaluate, head_scores,
                      patched_icl, reference_means)
from .train import TrainedEnsemble
from mmicl.numerics.testbed.multimodal_metrics import MultimodalEvalSets, ablated_accuracy, ablation_drop as multimodal_drop, head_means_multimodal, head_scores_multimodal
from mmicl.numerics.testbed.metrics import draw_iwl_balanced, evaluate_iwl_balanced

__all__ = ["CONTROL_RULE", "TOP_RULE", "MATCHED_RULE", "matched_control", "induction_ablation", "choose_top_and_control",
           "AccuracyFn", "rank_heads",
           "induction_circuit", "COUNT_MATCHED_RULE", "count_matched_control", "induction_patching",
           "rank_heads_multimodal", "iwl_balanced", "ANALYSES"]


CONTROL_RULE = ("the head of the top head's layer with the smallest selection-set mean-ablation drop; "
                "ties broken at random (control_seed)")
TOP_RULE = ("the largest selection-set mean-ablation drop among heads whose selection induction score exceeds "
            "the threshold (all heads if none does); ties to the higher induction score, then the first head")


def _control_heads(ind: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray | None, bool]:
    """A control mask of the same size as ``ind`` (layers, H) for one member, and whether every
    control head shares its induction head's layer; (None, False) when no non-induction head exists."""
    free = ~ind
    if not free.any():
        return None, False
    control = np.zeros_like(ind)
    matched = True
    for layer, h in zip(*np.nonzero(ind)):
        same = [(layer, j) for j in np.flatnonzero(free[layer])]
        if same:
            pick = same[rng.integers(len(same))]
        else:
            matched = False
            others = list(zip(*np.nonzero(free)))
            if not others:
                return None, False
            pick = others[rng.integers(len(others))]
        control[pick] = True
        free[pick] = False
    return control, matched


MATCHED_RULE = ("in each layer, as many heads as that layer has induction heads, drawn uniformly at random "
                "(control_seed) among its heads that are neither induction nor previous-token heads; no control "
                "when a layer has too few")


def _control_masks(who: str, induction, eligible) -> tuple[np.ndarray, np.ndarray]:
    """The induction and eligible masks of one member as booleans, refused unless both are (layers, H)
    of one shape and disjoint."""
    induction, eligible = np.asarray(induction, bool), np.asarray(eligible, bool)
    if induction.shape != eligible.shape or induction.ndim != 2:
        raise ValueError(f"{who} needs two (layers, H) masks of one shape, got {induction.shape} and {eligible.shape}")
    if (induction & eligible).any():
        raise ValueError(f"{who}: a head is both an induction head and eligible as its control")
    return induction, eligible


def matched_control(induction: np.ndarray, eligible: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """One member's layer- and count-matched control mask (``MATCHED_RULE``): for each layer l, k_l =
    the number of induction heads in l, and k_l heads drawn without replacement among the
    ``eligible`` heads of l (both masks (layers, H), disjoint); None when some layer has fewer than
    k_l eligible heads (the control cannot be matched) or there is no induction head."""
    induction, eligible = _control_masks("matched_control", induction, eligible)
    if not induction.any():
        return None
    control = np.zeros_like(induction)
    for layer in range(induction.shape[0]):
        k, free = int(induction[layer].sum()), np.flatnonzero(eligible[layer])
        if k > len(free):
            return None
        control[layer, rng.choice(free, size=k, replace=False)] = True
    return control


@torch.no_grad()
def induction_ablation(run: TrainedEnsemble, eval_size: int, selection_seed: int, threshold: float,
                       control_seed: int) -> dict:
    """Induction heads selected on a held-out set, ablated on the evaluation set beside a control
    ablation of as many non-induction heads (see the module docstring)."""
    model, c = run.model, run.model.config
    ape_slots = c.ape_slots if c.pos == "ape" else None
    selection = EvalSets.draw(run.mixture, eval_size, seed=selection_seed, ape_slots=ape_slots)
    scores = evaluate(model, selection)
    ind_score = scores["induction"].numpy()                                  # (E, layers, H)
    heads = ind_score > threshold
    for e in range(model.E):
        if not heads[e].any():
            heads[e].flat[int(ind_score[e].argmax())] = True
    rng = np.random.default_rng(control_seed)
    controls, matched, has_control = np.zeros_like(heads), [], []
    for e in range(model.E):
        mask, same_layer = _control_heads(heads[e], rng)
        has_control.append(mask is not None)
        matched.append(bool(same_layer))
        if mask is not None:
            controls[e] = mask
    sets = run.eval_sets
    base = accuracy(model(sets.icl.tokens, sets.shifts["icl"]).logits, sets.icl.target).cpu()
    after_induction = ablated_icl_accuracy(model, sets, [], torch.from_numpy(heads)).cpu()
    after_control = ablated_icl_accuracy(model, sets, [], torch.from_numpy(controls)).cpu()
    single = ablation_drop(model, sets, base.to(sets.icl.tokens.device))
    return {
        "threshold": threshold, "selection_seed": selection_seed, "control_seed": control_seed,
        "selection_induction": ind_score.round(4).tolist(),
        "selection_prev_token": scores["prev_token"].numpy().round(4).tolist(),
        "induction_heads": heads.tolist(), "control_heads": controls.tolist(),
        "has_control": has_control, "control_layer_matched": matched,
        "icl": base.tolist(), "icl_without_induction_heads": after_induction.tolist(),
        "icl_without_control_heads": [v if ok else None for v, ok in zip(after_control.tolist(), has_control)],
        "single_head_drop": single.numpy().round(4).tolist(),
    }


def choose_top_and_control(induction: np.ndarray, drop: np.ndarray, threshold: float,
                           rng: np.random.Generator) -> dict:
    """One member's top induction head and same-layer control (rules of the module docstring,
    ``TOP_RULE`` and ``CONTROL_RULE``) from its selection-set ``induction`` scores and mean-ablation
    ``drop`` s, both (layers, H).  Returns ``top`` [l, h], ``top_above_threshold``, ``control``
    [l, h] or None, and ``control_reason`` (None when there is a control)."""
    induction, drop = np.asarray(induction, dtype=float), np.round(np.asarray(drop, dtype=float), 6)
    layers, H = induction.shape
    above = induction > threshold
    candidates = list(zip(*np.nonzero(above))) if above.any() else list(itertools.product(range(layers), range(H)))
    top = max(candidates, key=lambda lh: (drop[lh], induction[lh], -lh[0] * H - lh[1]))
    top = (int(top[0]), int(top[1]))
    out = {"top": list(top), "top_above_threshold": bool(above.any()), "control": None, "control_reason": None}
    if H < 2:
        out["control_reason"] = f"one head per layer: layer {top[0]} has no other head for a same-layer control"
        return out
    others = [j for j in range(H) if j != top[1]]
    low = min(drop[top[0], j] for j in others)
    tied = [j for j in others if drop[top[0], j] == low]
    out["control"] = [top[0], int(tied[rng.integers(len(tied))]) if len(tied) > 1 else int(tied[0])]
    return out


AccuracyFn = Callable[[torch.Tensor, "torch.Tensor | None"], torch.Tensor]
"""acc(mask, means): (E,) accuracy with the heads of the boolean mask (E, layers, H) ablated, by
zeroing (means None) or mean-ablation."""


def _rank(acc_selection: AccuracyFn, drop_selection: Callable, acc_evaluation: AccuracyFn,
          selection_induction: torch.Tensor, means: torch.Tensor, threshold: float, control_seed: int) -> dict:
    """Steps 2–5 of the module docstring, given the accuracy functions on both sets and
    ``drop_selection(means)``, the single-head drops on the selection set (``ablation_drop``)."""
    E, layers, H = selection_induction.shape
    none = torch.zeros(E, layers, H, dtype=torch.bool)
    base = acc_selection(none, None).cpu()
    drops = {mode: drop_selection(mu).double().numpy() for mode, mu in (("mean", means), ("zero", None))}
    rng = np.random.default_rng(control_seed)
    picks = [choose_top_and_control(selection_induction[e].numpy(), drops["mean"][e], threshold, rng)
             for e in range(E)]
    top, control = none.clone(), none.clone()
    for e, p in enumerate(picks):
        top[e, p["top"][0], p["top"][1]] = True
        if p["control"] is not None:
            control[e, p["control"][0], p["control"][1]] = True
    has = [p["control"] is not None for p in picks]
    out = {"selection_icl": base.tolist(),
           "selection_drop_mean": drops["mean"].round(4).tolist(), "selection_drop_zero": drops["zero"].round(4).tolist(),
           "top_rule": TOP_RULE, "control_rule": CONTROL_RULE,
           "top_head": [p["top"] for p in picks], "top_above_threshold": [p["top_above_threshold"] for p in picks],
           "control_head": [p["control"] for p in picks], "control_reason": [p["control_reason"] for p in picks],
           "icl": acc_evaluation(none, None).cpu().tolist()}
    for mode, mu in (("mean", means), ("zero", None)):
        out[f"icl_without_top_{mode}"] = acc_evaluation(top, mu).cpu().tolist()
        after = acc_evaluation(control, mu).cpu().tolist()
        out[f"icl_without_control_{mode}"] = [v if ok else None for v, ok in zip(after, has)]
    return out


def _scores_json(prefix: str, scores: dict[str, torch.Tensor]) -> dict:
    return {f"{prefix}{k}": v.double().numpy().round(4).tolist() for k, v in scores.items()}


@torch.no_grad()
def rank_heads(run: TrainedEnsemble, eval_size: int, selection_seed: int, reference_seed: int,
               threshold: float, control_seed: int) -> dict:
    """Single-head ablation ranking, top induction head and same-layer control, mean-ablation and
    zeroing both (see the module docstring).  The selection and reference sets are the ICL sets of
    ``EvalSets.draw(run.mixture, eval_size, seed)`` for their seeds; the evaluation set is the run's.
    JSON-ready; ``selection_*`` keys are measured on the selection set, the others on the evaluation
    set (``induction``, ``prev_token`` per head and ``induction_min`` / ``induction_max`` /
    ``prev_token_max`` there too)."""
    return _ranked(run, eval_size, selection_seed, reference_seed, threshold, control_seed)[0]


def _ranked(run: TrainedEnsemble, eval_size: int, selection_seed: int, reference_seed: int, threshold: float,
            control_seed: int) -> tuple[dict, dict[str, torch.Tensor], torch.Tensor]:
    """``rank_heads``'s result, with the selection-set scores and the reference means it used."""
    model, c = run.model, run.model.config
    ape_slots = c.ape_slots if c.pos == "ape" else None
    selection = EvalSets.draw(run.mixture, eval_size, seed=selection_seed, ape_slots=ape_slots)
    if selection.icl.tokens.shape == run.eval_sets.icl.tokens.shape and \
            torch.equal(selection.icl.tokens, run.eval_sets.icl.tokens):
        raise ValueError(f"selection_seed={selection_seed} draws the evaluation set itself; choose another seed")
    means = reference_means(model, run.mixture, eval_size, reference_seed)

    def acc(sets: EvalSets) -> AccuracyFn:
        return lambda mask, mu: ablated_icl_accuracy(model, sets, [], mask, means=mu)

    sel = head_scores(model, selection)
    out = {"threshold": threshold, "selection_seed": selection_seed, "reference_seed": reference_seed,
           "control_seed": control_seed}
    out |= _scores_json("selection_", sel) | _scores_json("", head_scores(model, run.eval_sets))
    out |= _rank(acc(selection), lambda mu: ablation_drop(model, selection, means=mu), acc(run.eval_sets),
                 sel["induction"], means, threshold, control_seed)
    return out, sel, means


@torch.no_grad()
def induction_circuit(run: TrainedEnsemble, eval_size: int, selection_seed: int, reference_seed: int,
                      threshold: float, prev_threshold: float, control_seed: int) -> dict:
    """``rank_heads``, and the ablation of head *sets* chosen on the selection set:

    - the **induction heads**, every head whose selection-set induction score exceeds ``threshold``;
    - the **neither heads**, every head that is neither an induction head nor a previous-token head
      (selection-set previous-token score above ``prev_threshold``): the heads that the circuit
      "previous-token head, then induction head" does not name, the control of the set ablation;
    - the **matched heads** (``matched_control``, ``MATCHED_RULE``): as many "neither" heads as each
      layer has induction heads (``has_matched_control`` False, and nothing ablated for it, when a
      layer has too few);
    - the **previous-token heads**: every head that is not an induction head and whose previous-token
      score exceeds ``prev_threshold``.

    On the evaluation set, ICL accuracy with each set ablated, by mean-ablation and by zeroing
    (``icl_without_induction_heads_mean`` …), beside the masks (``induction_heads``,
    ``neither_heads``: per member, (layers, H) booleans).  A member with an empty set ablates
    nothing for it (its accuracy is then the intact one; the masks say so)."""
    out, sel, means = _ranked(run, eval_size, selection_seed, reference_seed, threshold, control_seed)
    induction = sel["induction"] > threshold
    prev = ~induction & (sel["prev_token"] > prev_threshold)
    neither = ~induction & ~(sel["prev_token"] > prev_threshold)
    rng = np.random.default_rng([control_seed, 1])       # a stream of its own: the tie-breaks' stays as it was
    found = [matched_control(induction[e].cpu().numpy(), neither[e].cpu().numpy(), rng) for e in range(len(induction))]
    matched = torch.from_numpy(np.stack([np.zeros(tuple(induction.shape[1:]), bool) if m is None else m
                                         for m in found])).to(induction.device)
    out |= {"prev_threshold": prev_threshold, "induction_heads": induction.tolist(), "neither_heads": neither.tolist(),
            "prev_token_heads": prev.tolist(), "matched_heads": matched.tolist(),
            "has_matched_control": [m is not None for m in found], "matched_rule": MATCHED_RULE}
    for name, mask in (("induction", induction), ("neither", neither), ("matched", matched), ("prev_token", prev)):
        for mode, mu in (("mean", means), ("zero", None)):
            out[f"icl_without_{name}_heads_{mode}"] = ablated_icl_accuracy(
                run.model, run.eval_sets, [], mask, means=mu).cpu().tolist()
    return out


COUNT_MATCHED_RULE = ("as many heads as the member has induction heads, drawn uniformly at random (control_seed) "
                      "among its heads that are neither induction nor previous-token heads, in any layer; no control "
                      "when there are fewer")


def count_matched_control(induction: np.ndarray, eligible: np.ndarray, rng: np.random.Generator) -> np.ndarray | None:
    """One member's count-matched control mask (``COUNT_MATCHED_RULE``): k = the number of induction
    heads, and k heads drawn without replacement among the ``eligible`` heads of any layer (both
    masks (layers, H), disjoint); None when fewer than k are eligible or there is no induction head."""
    induction, eligible = _control_masks("count_matched_control", induction, eligible)
    k, free = int(induction.sum()), np.flatnonzero(eligible)
    if k == 0 or k > len(free):
        return None
    control = np.zeros(induction.size, bool)
    control[rng.choice(free, size=k, replace=False)] = True
    return control.reshape(induction.shape)


@torch.no_grad()
def induction_patching(run: TrainedEnsemble, eval_size: int, selection_seed: int, reference_seed: int,
                       threshold: float, prev_threshold: float, control_seed: int) -> dict:
    """``induction_circuit``, and on the evaluation set the ICL accuracy and copy rate with the query's
    attention row patched (``metrics.patched_icl``):

    - ``icl_patched_induction_uniform``: every induction head's row uniform over the context labels;
    - ``icl_patched_induction_matching``: the same heads' rows on the answer's labels only;
    - ``icl_patched_count_matched_uniform``: the uniform row on the count-matched heads
      (``count_matched_control``, ``COUNT_MATCHED_RULE``; None for a member without them);

    with ``…_context_rate`` beside each.  A member without induction heads patches nothing (its
    values are the intact ones; ``induction_heads`` says so)."""
    out = induction_circuit(run, eval_size, selection_seed, reference_seed, threshold, prev_threshold, control_seed)
    induction, neither = np.asarray(out["induction_heads"], bool), np.asarray(out["neither_heads"], bool)
    rng = np.random.default_rng([control_seed, 2])       # a stream of its own: the matched control's stays
    found = [count_matched_control(induction[e], neither[e], rng) for e in range(len(induction))]
    counted = np.stack([np.zeros(induction.shape[1:], bool) if m is None else m for m in found])
    out |= {"count_matched_heads": counted.tolist(), "has_count_matched_control": [m is not None for m in found],
            "count_matched_rule": COUNT_MATCHED_RULE}
    for name, mask, kinds in (("induction", induction, ("uniform", "matching")), ("count_matched", counted, ("uniform",))):
        for kind in kinds:
            got = patched_icl(run.model, run.eval_sets, torch.from_numpy(mask), f"{kind}_labels")
            ok = [True] * len(mask) if name == "induction" else out["has_count_matched_control"]
            out[f"icl_patched_{name}_{kind}"] = [float(v) if k else None for v, k in zip(got["acc_icl"].tolist(), ok)]
            out[f"icl_patched_{name}_{kind}_context_rate"] = [float(v) if k else None
                                                              for v, k in zip(got["icl_context_rate"].tolist(), ok)]
    return out


@torch.no_grad()
def rank_heads_multimodal(system, mixture, eval_sets, eval_size: int, selection_seed: int, reference_seed: int,
                          threshold: float, control_seed: int, name: str = "icl_m2only") -> dict:
    """``rank_heads`` for a ``MultimodalSystem``: induction scores on the ICL set, accuracies on the
    set ``name`` (default the M2-necessary set), selection and reference sets drawn as
    ``MultimodalEvalSets.draw(mixture, eval_size, seed)``, evaluation on ``eval_sets``."""

    c = system.decoder.config
    ape_slots = c.ape_slots if c.pos == "ape" else None
    selection = MultimodalEvalSets.draw(mixture, eval_size, selection_seed, ape_slots)
    ours, theirs = selection.sets[name].m1, eval_sets.sets[name].m1
    if ours.shape == theirs.shape and torch.equal(ours, theirs):
        raise ValueError(f"selection_seed={selection_seed} draws the evaluation set itself; choose another seed")
    means = head_means_multimodal(system, MultimodalEvalSets.draw(mixture, eval_size, reference_seed, ape_slots), name)

    def acc(sets) -> AccuracyFn:
        return lambda mask, mu: ablated_accuracy(system, sets, mask, name, means=mu)

    sel = head_scores_multimodal(system, selection)
    out = {"threshold": threshold, "selection_seed": selection_seed, "reference_seed": reference_seed,
           "control_seed": control_seed, "set": name}
    out |= _scores_json("selection_", sel) | _scores_json("", head_scores_multimodal(system, eval_sets))
    return out | _rank(acc(selection), lambda mu: multimodal_drop(system, selection, name, means=mu), acc(eval_sets),
                       sel["induction"], means, threshold, control_seed)


@torch.no_grad()
def iwl_balanced(run: TrainedEnsemble, eval_size: int, seed: int) -> dict:
    """The label-balanced in-weights metrics of every member's final model
    (``metrics.evaluate_iwl_balanced``) on a fresh set of ``eval_size`` items drawn from ``seed``:
    ``{metric: [value per member]}``, member-major as the run's members; and
    ``iwl_blind_best_sd``, the sample sd over the set's sequences of the query-blind rule's expected
    accuracy on each (max_ℓ P(ℓ | context)), from which its mean's standard error follows."""

    values = evaluate_iwl_balanced(run.model, run.mixture, eval_size, seed)
    c = run.model.config
    s, _, _ = draw_iwl_balanced(run.mixture, eval_size, seed, c.ape_slots if c.pos == "ape" else None)
    per_sequence = run.mixture.blind_posterior(s.context_labels, balanced=True).max(-1).values  # (E, b)
    sd = per_sequence.double().std(-1) if per_sequence.shape[-1] > 1 else torch.zeros(per_sequence.shape[0])
    return {"seed": seed, **{k: v.double().numpy().round(6).tolist() for k, v in values.items()},
            "iwl_blind_best_sd": sd.cpu().numpy().round(6).tolist()}


ANALYSES = {"induction_ablation": induction_ablation, "head_ranking": rank_heads,
            "induction_circuit": induction_circuit, "induction_patching": induction_patching,
            "iwl_balanced": iwl_balanced}
"""Analyses a stored ensemble run may carry out on its trained models, by name."""
