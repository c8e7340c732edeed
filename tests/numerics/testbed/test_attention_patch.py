"""Attention patching (claim 8, version 4.1): the query's attention row of chosen heads replaced by a
fixed row over the context's label tokens, and the analysis that reads it (``heads.induction_patching``).

Every model is tiny (width 8, untrained or a few steps), on the CPU; what is asserted holds for any
weights: where the patch lands, what it leaves alone, and what the rows are.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from mmicl.numerics.testbed.config import DataConfig, MemberSpec, ModelConfig, TrainConfig
from mmicl.numerics.testbed.data import Mixture
from mmicl.numerics.testbed.experiments import Arm, run_arms
from mmicl.numerics.testbed.heads import (ANALYSES, COUNT_MATCHED_RULE, count_matched_control, induction_circuit,
                                          induction_patching)
from mmicl.numerics.testbed.metrics import EvalSets, label_attention_rows, label_positions, patched_icl
from mmicl.numerics.testbed.model import EnsembleDecoder

torch.set_num_threads(1)

DATA = DataConfig(K=64, L=8, D=4, N=4, B=1)
MODEL = ModelConfig(layers=2, heads=2, width=8, ape_slots=16)


def _model_and_sets(pos: str = "ape", seeds=(0, 1)):
    model_cfg = ModelConfig(layers=2, heads=2, width=8, ape_slots=16, pos=pos)
    mixture = Mixture([MemberSpec(DATA, seed=s) for s in seeds])
    net = EnsembleDecoder(model_cfg, mixture.D, mixture.L, list(seeds))
    sets = EvalSets.draw(mixture, 32, seed=11, ape_slots=16 if pos == "ape" else None)
    return net, sets


def test_rows_put_weight_on_label_tokens_only_and_sum_to_one():
    _, sets = _model_and_sets()
    icl = sets.icl
    labels = label_positions(DATA.N)
    for kind in ("uniform_labels", "matching_labels"):
        rows = label_attention_rows(icl, kind)
        assert rows.shape == icl.tokens.shape[:3]
        torch.testing.assert_close(rows.sum(-1), torch.ones(rows.shape[:2]))
        others = torch.ones(rows.shape[-1], dtype=torch.bool)
        others[labels] = False
        assert torch.all(rows[..., others] == 0)
    uniform = label_attention_rows(icl, "uniform_labels")
    assert torch.all(uniform[..., labels] == 1 / DATA.N)
    matching = label_attention_rows(icl, "matching_labels")[..., labels]
    answer = icl.context_labels == icl.target.unsqueeze(-1)
    assert torch.all((matching > 0) == answer)               # weight exactly where the label is the answer
    with pytest.raises(ValueError, match="one of uniform_labels"):
        label_attention_rows(icl, "uniform")
    with pytest.raises(ValueError, match="no context label equal to its answer"):
        label_attention_rows(sets.iwl, "matching_labels")    # the IWL set's answer is never in the context


@pytest.mark.parametrize("pos", ["ape", "rope"])
def test_the_patched_heads_query_row_is_the_given_row_and_nothing_else_moves(pos):
    net, sets = _model_and_sets(pos)
    tokens, shift = sets.icl.tokens, sets.shifts["icl"]
    plain = net(tokens, shift, return_attention=True)
    rows = label_attention_rows(sets.icl, "uniform_labels")
    mask = torch.zeros(net.E, 2, 2, dtype=torch.bool)
    # an all-false mask changes nothing
    same = net(tokens, shift, return_attention=True, attention_patch=(mask, rows))
    torch.testing.assert_close(same.logits, plain.logits, rtol=0, atol=0)
    mask[0, 1, 0] = True                                     # member 0, layer 1 (the last), head 0
    patched = net(tokens, shift, return_attention=True, attention_patch=(mask, rows))
    torch.testing.assert_close(patched.attention[1][0, :, 0, -1], rows[0], rtol=0, atol=0)
    torch.testing.assert_close(patched.attention[1][0, :, 1], plain.attention[1][0, :, 1], rtol=0, atol=0)
    torch.testing.assert_close(patched.attention[1][0, :, 0, :-1], plain.attention[1][0, :, 0, :-1], rtol=0, atol=0)
    torch.testing.assert_close(patched.attention[0], plain.attention[0], rtol=0, atol=0)
    torch.testing.assert_close(patched.logits[1], plain.logits[1], rtol=0, atol=0)   # member 1 untouched
    assert not torch.equal(patched.logits[0], plain.logits[0])
    # a patch in the first layer reaches the logits through the query token only
    first = torch.zeros_like(mask)
    first[0, 0, 1] = True
    early = net(tokens, shift, return_attention=True, attention_patch=(first, rows))
    torch.testing.assert_close(early.attention[0][0, :, 1, -1], rows[0], rtol=0, atol=0)
    torch.testing.assert_close(early.attention[1][0, :, :, :-1], plain.attention[1][0, :, :, :-1], rtol=0, atol=0)


def test_a_patch_of_the_wrong_shape_is_refused():
    net, sets = _model_and_sets()
    rows = label_attention_rows(sets.icl, "uniform_labels")
    with pytest.raises(ValueError, match="attention_patch needs a mask of shape"):
        net(sets.icl.tokens, sets.shifts["icl"], attention_patch=(torch.zeros(net.E, 2, 3, dtype=torch.bool), rows))
    with pytest.raises(ValueError, match="attention_patch needs a mask of shape"):
        net(sets.icl.tokens, sets.shifts["icl"], attention_patch=(torch.zeros(net.E, 2, 2, dtype=torch.bool), rows[..., 1:]))


def test_patched_icl_with_no_head_patched_is_the_plain_accuracy_and_copy_rate():
    net, sets = _model_and_sets()
    logits = net(sets.icl.tokens, sets.shifts["icl"]).logits
    pred = logits.argmax(-1)
    got = patched_icl(net, sets, torch.zeros(net.E, 2, 2, dtype=torch.bool), "uniform_labels")
    torch.testing.assert_close(got["acc_icl"], (pred == sets.icl.target).float().mean(-1))
    torch.testing.assert_close(got["icl_context_rate"],
                               (sets.icl.context_labels == pred.unsqueeze(-1)).any(-1).float().mean(-1))


@settings(deadline=None, max_examples=40)
@given(st.lists(st.booleans(), min_size=8, max_size=8), st.lists(st.booleans(), min_size=8, max_size=8),
       st.integers(0, 2 ** 32 - 1))
def test_count_matched_control_takes_as_many_eligible_heads_as_there_are_induction_heads(ind, elig, seed):
    induction = np.array(ind).reshape(2, 4)
    eligible = np.array(elig).reshape(2, 4) & ~induction
    got = count_matched_control(induction, eligible, np.random.default_rng(seed))
    if not induction.any() or eligible.sum() < induction.sum():
        assert got is None
    else:
        assert got.shape == induction.shape and got.sum() == induction.sum()
        assert not (got & ~eligible).any()                   # only eligible heads, any layer


def test_count_matched_control_refuses_overlapping_or_misshapen_masks():
    with pytest.raises(ValueError, match="both an induction head and eligible"):
        count_matched_control(np.eye(2, dtype=bool), np.eye(2, dtype=bool), np.random.default_rng(0))
    with pytest.raises(ValueError, match="two \\(layers, H\\) masks"):
        count_matched_control(np.zeros((2, 2), bool), np.zeros((2, 3), bool), np.random.default_rng(0))
    assert "any layer" in COUNT_MATCHED_RULE


def test_induction_patching_adds_the_patches_to_the_circuit_analysis():
    run = run_arms(MODEL, [Arm("a", DATA)], [0, 1], TrainConfig(steps=4, batch=8, eval_every=2, eval_size=16)).run
    params = {"selection_seed": 5, "reference_seed": 6, "threshold": 0.0, "prev_threshold": 0.5, "control_seed": 7}
    out = induction_patching(run, 16, **params)
    circuit = induction_circuit(run, 16, **params)
    assert {k: out[k] for k in circuit} == circuit            # the circuit analysis is kept as it was
    assert ANALYSES["induction_patching"] is induction_patching
    induction = np.asarray(out["induction_heads"], bool)
    again = patched_icl(run.model, run.eval_sets, torch.from_numpy(induction), "uniform_labels")
    assert out["icl_patched_induction_uniform"] == [float(v) for v in again["acc_icl"]]
    assert out["icl_patched_induction_uniform_context_rate"] == [float(v) for v in again["icl_context_rate"]]
    matching = patched_icl(run.model, run.eval_sets, torch.from_numpy(induction), "matching_labels")
    assert out["icl_patched_induction_matching"] == [float(v) for v in matching["acc_icl"]]
    for e, has in enumerate(out["has_count_matched_control"]):
        heads = np.asarray(out["count_matched_heads"][e], bool)
        if has:
            assert heads.sum() == induction[e].sum() and out["icl_patched_count_matched_uniform"][e] is not None
        else:
            assert not heads.any() and out["icl_patched_count_matched_uniform"][e] is None
