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
"""
from __future__ import annotations

import numpy as np
import torch

from .metrics import EvalSets, ablated_icl_accuracy, ablation_drop, accuracy, evaluate
from .train import TrainedEnsemble


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


ANALYSES = {"induction_ablation": induction_ablation}
"""Analyses a stored ensemble run may carry out on its trained models, by name."""
