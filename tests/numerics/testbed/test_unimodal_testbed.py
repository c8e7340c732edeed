"""Structure and invariants of the testbed (numerics/testbed): fast, tiny models, few steps.

Learning checks (ICL/IWL emerge) are in test_learning.py, marked slow.
"""
from __future__ import annotations

import math

import pytest
import torch

from mmicl.numerics.testbed.config import (DataConfig, MemberSpec, ModelConfig, SecondModality, TestbedConfigError,
                                           TrainConfig)
from mmicl.numerics.testbed.data import Mixture, Sequences
from mmicl.numerics.testbed.metrics import EvalSets, induction_strength, label_positions, previous_token_strength
from mmicl.numerics.testbed.model import EnsembleDecoder
from mmicl.numerics.testbed.train import train_ensemble

torch.set_num_threads(1)

SMALL = DataConfig(K=64, L=8, D=8, N=4, B=2, p_bursty=0.5, eps=0.1)
TINY = ModelConfig(layers=2, heads=2, width=16, mlp_ratio=1, ape_slots=12)


def mixture(*datas: DataConfig, seeds=None) -> Mixture:
    seeds = seeds or list(range(len(datas)))
    return Mixture([MemberSpec(d, s) for d, s in zip(datas, seeds)])


# ---- configuration at the boundary ---------------------------------------------------------
@pytest.mark.parametrize("bad", [dict(K=100, L=32), dict(N=7, B=2), dict(eps=float("nan")), dict(zipf=-1.0),
                                 dict(p_bursty=1.5), dict(K=0), dict(N=80, B=2, L=8)])
def test_bad_data_settings_are_refused_with_a_fix(bad):
    with pytest.raises(TestbedConfigError):
        DataConfig(**bad)


@pytest.mark.parametrize("cls, field", [(DataConfig, "N"), (ModelConfig, "heads"), (TrainConfig, "batch"),
                                        (SecondModality, "K")])
@pytest.mark.parametrize("bad", [0, -3, 2.0, True, "4"])
def test_a_count_that_is_not_a_positive_integer_is_refused_naming_the_field(cls, field, bad):
    """A bool is an int to Python, not a count to a config."""
    with pytest.raises(TestbedConfigError, match=rf"{field} must be a positive integer, got {bad!r}"):
        cls(**{field: bad})


def test_bad_model_and_train_settings_are_refused():
    with pytest.raises(TestbedConfigError):
        ModelConfig(width=30, heads=4)
    with pytest.raises(TestbedConfigError):
        ModelConfig(pos="sinusoid")
    with pytest.raises(TestbedConfigError):
        TrainConfig(lr=float("inf"))
    with pytest.raises(TestbedConfigError):
        Mixture([MemberSpec(SMALL, 0), MemberSpec(DataConfig(K=64, L=8, D=16, N=4, B=2), 1)])


# ---- data ------------------------------------------------------------------------------------
def test_iwl_set_never_shows_the_query_class_or_label_in_context():
    """Even with a steep Zipf law (most draws hit the query's label), the IWL context avoids it."""
    mx = mixture(DataConfig(K=16, L=8, D=8, N=6, B=2, zipf=2.5), DataConfig(K=64, L=8, D=8, N=6, B=2))
    s = mx.iwl_batch(500, torch.Generator().manual_seed(3))
    assert not (s.context_classes == s.query_class.unsqueeze(-1)).any()
    assert not (s.context_labels == s.target.unsqueeze(-1)).any()
    assert torch.equal(s.target, s.query_class % 8)


def test_icl_set_shows_each_new_class_B_times_with_distinct_labels():
    mx = mixture(SMALL)
    s = mx.icl_batch(300, torch.Generator().manual_seed(1))
    counts = torch.nn.functional.one_hot(s.context_labels, 8).sum(2)      # (E, b, L)
    assert set(counts.unique().tolist()) <= {0, 2}
    assert (counts > 0).sum(-1).eq(2).all()                                # N/B = 2 distinct labels
    assert (s.context_labels == s.target.unsqueeze(-1)).sum(-1).eq(2).all()
    assert (s.query_class == -1).all()


def test_flip_set_shifts_every_label_by_one():
    mx = mixture(SMALL)
    s = mx.flip_batch(200, torch.Generator().manual_seed(2))
    assert torch.equal(s.context_labels, (s.context_classes + 1) % 8)
    assert torch.equal(s.target, (s.query_class + 1) % 8)
    assert (s.context_classes == s.query_class.unsqueeze(-1)).any(-1).all()


def test_bursty_training_sequences_hold_each_class_B_times():
    mx = mixture(DataConfig(K=4096, L=8, D=8, N=4, B=2, p_bursty=1.0))
    s = mx.train_batch(200, torch.Generator().manual_seed(0))
    same = (s.context_classes.unsqueeze(-1) == s.context_classes.unsqueeze(-2)).sum(-1)
    assert (same >= 2).all()                                                # every class at least twice
    assert (s.context_classes == s.query_class.unsqueeze(-1)).any(-1).all()


def test_tokens_interleave_items_and_label_vectors():
    mx = mixture(SMALL)
    s = mx.train_batch(10, torch.Generator().manual_seed(0))
    assert s.tokens.shape == (1, 10, 9, 8)
    expected = mx.label_vectors[0][s.context_labels[0]]
    assert torch.equal(s.tokens[0, :, label_positions(4)], expected)


def test_items_have_the_stated_variance():
    """x = (μ + εη)/√(1+ε²) with μ, η ~ N(0, I/D): E‖x‖² = 1 (4000 items × D=8; SE ≈ 0.008)."""
    mx = mixture(DataConfig(K=4096, L=8, D=8, N=4, B=2, eps=0.7))
    s = mx.train_batch(500, torch.Generator().manual_seed(0))
    sq = s.tokens[0, :, 0:8:2].pow(2).sum(-1).flatten()
    se = sq.std() / math.sqrt(sq.numel())
    assert abs(sq.mean() - 1.0) < 5 * se


def test_same_seed_same_data_and_member_tables_do_not_depend_on_the_ensemble():
    a = mixture(SMALL, DataConfig(K=128, L=8, D=8, N=4, B=2), seeds=[5, 6])
    b = mixture(DataConfig(K=128, L=8, D=8, N=4, B=2), seeds=[6])
    assert torch.equal(a.means[1, :128], b.means[0])
    assert torch.equal(a.label_vectors[1], b.label_vectors[0])
    s1 = a.train_batch(7, torch.Generator().manual_seed(9))
    s2 = a.train_batch(7, torch.Generator().manual_seed(9))
    assert torch.equal(s1.tokens, s2.tokens) and torch.equal(s1.target, s2.target)


# ---- model -----------------------------------------------------------------------------------
@pytest.mark.parametrize("pos", ["ape", "rope", "alibi"])
def test_query_only_fast_path_equals_the_full_forward(pos):
    model = EnsembleDecoder(ModelConfig(layers=2, heads=2, width=16, mlp_ratio=1, pos=pos, ape_slots=12),
                            8, 8, [0, 1])
    x = torch.randn(2, 5, 9, 8)
    shift = torch.randint(0, 4, (2, 5))
    fast = model(x, shift).logits
    full = model(x, shift, return_attention=True)
    torch.testing.assert_close(fast, full.logits, rtol=1e-5, atol=1e-6)
    assert len(full.attention) == 2 and full.attention[0].shape == (2, 5, 2, 9, 9)
    assert torch.allclose(full.attention[0].sum(-1), torch.ones(()))
    assert (full.attention[0].triu(1) == 0).all()                          # causal


@pytest.mark.train
@pytest.mark.parametrize("pos", ["ape", "rope"])
def test_an_ensemble_trains_exactly_like_separate_models(pos):
    """Member e of an ensemble, fed member e's data, matches a model trained alone from the same
    seed after 5 Adam steps (float32 tolerance: different matmul batching orders sums differently)."""
    cfg = ModelConfig(layers=2, heads=2, width=16, mlp_ratio=1, pos=pos, ape_slots=12)
    ens = EnsembleDecoder(cfg, 8, 8, [11, 12])
    alone = EnsembleDecoder(cfg, 8, 8, [12])
    for k in alone.weights:
        torch.testing.assert_close(ens.weights[k][1:], alone.weights[k], rtol=0, atol=0)
    mx = mixture(SMALL, SMALL, seeds=[11, 12])
    g = torch.Generator().manual_seed(0)
    opt_e, opt_a = torch.optim.Adam(ens.parameters(), 1e-2), torch.optim.Adam(alone.parameters(), 1e-2)
    for _ in range(5):
        s = mx.train_batch(16, g)
        for model, opt, sl in ((ens, opt_e, slice(0, 2)), (alone, opt_a, slice(1, 2))):
            logits = model(s.tokens[sl]).logits
            loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), s.target[sl].flatten(),
                                                     reduction="none").view(logits.shape[0], -1).mean(-1).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
    for k in alone.weights:
        torch.testing.assert_close(ens.weights[k][1:], alone.weights[k], rtol=1e-4, atol=1e-5)


def test_rope_scores_depend_only_on_relative_position():
    """Standard RoPE: ⟨R_s q, R_t k⟩ depends on t − s only."""
    from mmicl.numerics.testbed.model import _rotate, rope_tables

    cos, sin = rope_tables(12, 8, 10000.0, "cpu", torch.float64)
    q, k = torch.randn(8, dtype=torch.float64), torch.randn(8, dtype=torch.float64)
    dots = [(_rotate(q, cos[s], sin[s]) * _rotate(k, cos[s + 3], sin[s + 3])).sum() for s in range(9)]
    torch.testing.assert_close(torch.stack(dots), dots[0].expand(9))


def test_ablating_every_head_changes_the_output_and_a_mask_of_ones_does_not():
    model = EnsembleDecoder(TINY, 8, 8, [0])
    x = torch.randn(1, 4, 9, 8)
    base = model(x).logits
    torch.testing.assert_close(model(x, head_mask=torch.ones(1, 2, 2)).logits, base)
    assert not torch.allclose(model(x, head_mask=torch.zeros(1, 2, 2)).logits, base)


# ---- metrics ---------------------------------------------------------------------------------
def test_head_strengths_of_hand_made_attention():
    mx = mixture(SMALL)
    s = mx.icl_batch(6, torch.Generator().manual_seed(0))
    T = 9
    prev = torch.zeros(1, 6, 1, T, T)
    prev[..., 0, 0] = 1
    prev[..., torch.arange(1, T), torch.arange(0, T - 1)] = 1
    assert torch.allclose(previous_token_strength(prev), torch.ones(1, 1))
    ind = torch.zeros(1, 6, 1, T, T)
    match = (s.context_labels == s.target.unsqueeze(-1)).float()           # (1, 6, N)
    ind[0, :, 0, -1, label_positions(4)] = match[0] / match[0].sum(-1, keepdim=True)
    assert torch.allclose(induction_strength(ind, s), torch.ones(1, 1))
    anti = torch.zeros(1, 6, 1, T, T)
    anti[0, :, 0, -1, label_positions(4)] = (1 - match[0]) / (1 - match[0]).sum(-1, keepdim=True)
    assert torch.allclose(induction_strength(anti, s), -torch.ones(1, 1))


@pytest.mark.train
def test_training_records_finite_curves_and_reproduces_from_its_seeds():
    members = [MemberSpec(SMALL, 0), MemberSpec(DataConfig(K=256, L=8, D=8, N=4, B=2, p_bursty=1.0), 1)]
    train = TrainConfig(steps=12, batch=16, eval_every=5, eval_size=32)
    a = train_ensemble(TINY, members, train, data_seed=4)
    b = train_ensemble(TINY, members, train, data_seed=4)
    assert a.history.steps == [0, 5, 10, 12]
    for k, v in a.history.metrics.items():
        assert all(torch.isfinite(t).all() for t in v), k
        assert all(torch.equal(x, y) for x, y in zip(v, b.history.metrics[k])), k
    assert a.history.final("induction").shape == (2, 2, 2)
    for k in a.model.weights:
        assert torch.equal(a.model.weights[k], b.model.weights[k])


def test_eval_sets_are_fixed_by_their_seed():
    mx = mixture(SMALL)
    a, b = EvalSets.draw(mx, 20, 3, 12), EvalSets.draw(mx, 20, 3, 12)
    assert torch.equal(a.iwl.tokens, b.iwl.tokens) and torch.equal(a.shifts["icl"], b.shifts["icl"])


@pytest.mark.parametrize("N, B", [(4, 2), (8, 2), (6, 3), (4, 1)])
def test_unimodal_uniform_baselines_are_the_metrics_of_uniform_causal_attention(N, B):
    """Every position attending uniformly to its causal past gives, through the metric functions
    themselves, exactly the baselines that the results report."""
    from mmicl.numerics.testbed.metrics import induction_strength, previous_token_strength, uniform_baselines

    T = 2 * N + 1
    attn = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).view(T, 1)
    attn = attn.expand(1, 3, 1, T, T)
    C = N // B
    labels = torch.arange(C).repeat_interleave(B)[torch.randperm(N)].expand(1, 3, N)
    seqs = Sequences(torch.zeros(1, 3, T, 2), torch.zeros(1, 3, dtype=torch.long), labels,
                     torch.zeros(1, 3, N, dtype=torch.long), torch.zeros(1, 3, dtype=torch.long))
    base = uniform_baselines(N, B)
    assert previous_token_strength(attn).item() == pytest.approx(base["prev_token"], rel=1e-6)
    assert induction_strength(attn, seqs).item() == pytest.approx(base["induction"], rel=1e-6, abs=1e-7)


def test_the_fixed_parameter_decoder_is_the_closest_in_parameter_count():
    """The width chosen for the deeper decoder gives the parameter count nearest the base's among
    all allowed widths (multiples of 2·heads up to twice the base width)."""
    from dataclasses import replace

    from mmicl.numerics.testbed.config import ModelConfig
    from mmicl.numerics.testbed.model import decoder_parameters, width_matching_parameters

    base = ModelConfig(layers=2, heads=2, width=16, mlp_ratio=2, ape_slots=21)
    w = width_matching_parameters(base, 4, 8, 4)
    target = decoder_parameters(base, 8, 4)
    gap = abs(decoder_parameters(replace(base, layers=4, width=w), 8, 4) - target)
    for other in range(4, 36, 4):
        assert gap <= abs(decoder_parameters(replace(base, layers=4, width=other), 8, 4) - target)
    assert w % 4 == 0 and w < base.width
