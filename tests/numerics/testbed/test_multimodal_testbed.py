"""Structure and invariants of the multimodal testbed (numerics/testbed/multimodal_*.py, checkpoint.py):
the pairing of the two modalities, the evaluation sets, the token layout, what stage 2 freezes, the
stage-1 checkpoint, the encoder's pretraining and the attention metrics' uniform baselines.

Every property is checked against what the generator was built from (its class-mean tables, or
items recovered exactly at ε = 0, where an item *is* its class mean), never against the
generator's own bookkeeping alone.  Tiny sizes, a few Adam steps.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import replace
import os

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mmicl.numerics.testbed import multimodal_experiments as mme
from mmicl.numerics.testbed.checkpoint import Stage1
from mmicl.numerics.testbed.config import (DataConfig, ModelConfig, MultimodalConfig, MultimodalMember,
                                           SecondModality, TestbedConfigError, TrainConfig)
from mmicl.numerics.testbed.metrics import previous_token_strength, readout_attention, readout_contrast
from mmicl.numerics.testbed.model import EnsembleDecoder
from mmicl.numerics.testbed.multimodal_data import SETS, MultimodalMixture
from mmicl.numerics.testbed.multimodal_experiments import MultimodalArm, run_fusion, run_stage1, run_stage2
from mmicl.numerics.testbed.multimodal_metrics import (METRICS_OF, MultimodalEvalSets, encoder_accuracy,
                                                       evaluate_multimodal, uniform_baselines)
from mmicl.numerics.testbed.multimodal_model import EnsembleMLP, MultimodalSystem, token_positions
from mmicl.numerics.testbed.multimodal_train import train_encoder
from mmicl.numerics.testbed.multimodal_experiments import arm_to_json, arms_from_json
from mmicl.numerics.testbed.multimodal_model import feature_standardisation

torch.set_num_threads(1)

TINY = ModelConfig(layers=2, heads=1, width=8, mlp_ratio=1, ape_slots=21)
TRAIN = TrainConfig(steps=3, batch=8, lr=1e-2, eval_every=2, eval_size=16)
M1 = DataConfig(K=64, L=4, D=4, N=4, B=2, p_bursty=1.0, eps=0.0)


def member(L=4, K1=64, K2=8, N=4, B=2, D1=4, D2=4, eps1=0.0, eps2=0.0, zipf1=0.0, zipf2=0.0, p_bursty=1.0,
           layout="m1_first", seed=0) -> MultimodalMember:
    m1 = DataConfig(K=K1, L=L, D=D1, N=N, B=B, eps=eps1, zipf=zipf1)
    return MultimodalMember(MultimodalConfig(m1, SecondModality(K=K2, D=D2, eps=eps2, zipf=zipf2), p_bursty, layout),
                            seed)


def exact_class(items: torch.Tensor, means: torch.Tensor) -> torch.Tensor:
    """The class of every item (E, b, n, D) whose value equals a row of ``means`` (E, K, D) exactly
    (at ε = 0 an item is its class mean); −1 where it equals none.  Rows are distinct, so at most one."""
    eq = (items.unsqueeze(-2) == means[:, None, None]).all(-1)            # (E, b, n, K)
    assert (eq.sum(-1) <= 1).all()
    return torch.where(eq.any(-1), eq.float().argmax(-1), torch.full(eq.shape[:-1], -1))


def same_item(x: torch.Tensor) -> torch.Tensor:
    """(E, b, n, D) → (E, b, n, n): which context items are exactly equal."""
    return (x.unsqueeze(3) == x.unsqueeze(2)).all(-1)


@st.composite
def shapes(draw):
    """Shared shapes of a two-member ensemble: L labels, N/B = C ≥ 2 pairs of B items, and per
    member K1 = r1·L and K2 = r2·L classes (different per member)."""
    L = draw(st.integers(2, 6))
    C = draw(st.integers(2, L))
    B = draw(st.integers(1, 3))
    r1 = draw(st.lists(st.integers(1, 6), min_size=2, max_size=2))
    r2 = draw(st.lists(st.integers(1, 6), min_size=2, max_size=2))
    D1, D2 = draw(st.integers(2, 6)), draw(st.integers(2, 6))
    zipf2 = draw(st.sampled_from([0.0, 1.5]))
    seed = draw(st.integers(0, 2 ** 20))
    members = [member(L=L, K1=r1[e] * L, K2=r2[e] * L, N=C * B, B=B, D1=D1, D2=D2, zipf2=zipf2, seed=seed + e)
               for e in range(2)]
    return MultimodalMixture(members), seed


# ---- 1. pairing ---------------------------------------------------------------------------------
@given(shapes())
def test_bursty_training_pairs_an_M1_class_with_an_M2_class_of_the_same_label(drawn):
    """p_bursty = 1, ε = 0: classes recovered from the items; every M1 class has its M2 partner's
    label, which is the position's label; each (M1, M2) pair fills a multiple of B positions, at most
    N/B pairs; the query is one of the context pairs and its target that pair's label."""
    mx, seed = drawn
    s = mx.train_batch(32, torch.Generator().manual_seed(seed))
    k1, k2 = exact_class(s.m1, mx.m1.means), exact_class(s.m2, mx.m2.means)
    assert (k1 >= 0).all() and (k2 >= 0).all()
    assert (k1 < mx.m1.K.view(-1, 1, 1)).all() and (k2 < mx.m2.K.view(-1, 1, 1)).all()
    L, N, B = mx.L, mx.N, mx.B
    assert torch.equal(k1 % L, k2 % L)
    assert torch.equal(s.labels, k2[..., :N] % L)
    assert torch.equal(s.target, k2[..., N] % L)
    pair = k1 * 10_000 + k2                                                  # one id per (M1, M2) pair
    ctx = pair[..., :N]
    count = (ctx.unsqueeze(-1) == ctx.unsqueeze(-2)).sum(-1)                 # (E, b, N)
    assert (count % B == 0).all()
    distinct = (1.0 / count).sum(-1).round().long()
    assert (distinct <= N // B).all()
    assert (ctx == pair[..., N:]).any(-1).all()


def test_with_many_classes_a_bursty_context_holds_exactly_N_over_B_distinct_pairs_B_times_each():
    mx = MultimodalMixture([member(L=4, K1=4096, K2=4096, N=6, B=2, seed=3)])
    s = mx.train_batch(200, torch.Generator().manual_seed(0))
    k1, k2 = exact_class(s.m1, mx.m1.means), exact_class(s.m2, mx.m2.means)
    ctx = (k1 * 10_000 + k2)[..., :6]
    count = (ctx.unsqueeze(-1) == ctx.unsqueeze(-2)).sum(-1)
    assert (count == 2).all()                                                # 3 pairs, each twice
    assert (same_item(k2[..., :6, None]) == same_item(k1[..., :6, None])).all()   # M2 class ↔ M1 partner


def test_non_bursty_training_labels_are_M2s_and_M1_carries_no_label():
    """Member 0 bursty, member 1 not (p_bursty per member): in member 1 the label is the M2 class's
    and the M1 class's label agrees with it only by chance (≈ 1/L), in member 0 always."""
    mx = MultimodalMixture([member(p_bursty=1.0, seed=0), member(p_bursty=0.0, seed=1)])
    s = mx.train_batch(400, torch.Generator().manual_seed(1))
    k1, k2 = exact_class(s.m1, mx.m1.means), exact_class(s.m2, mx.m2.means)
    assert torch.equal(s.labels, k2[..., :-1] % 4) and torch.equal(s.target, k2[..., -1] % 4)
    agree = (k1 % 4 == k2 % 4).float().mean((1, 2))
    assert agree[0] == 1.0
    assert abs(agree[1] - 0.25) < 0.05                                      # 2000 positions, SE ≈ 0.01
    # non-bursty: the query is usually not among the context pairs
    pairs = k1 * 10_000 + k2
    assert (pairs[1, :, :-1] == pairs[1, :, -1:]).any(-1).float().mean() < 0.2


@given(L=st.integers(2, 8), r=st.lists(st.integers(1, 8), min_size=2, max_size=2), seed=st.integers(0, 2 ** 20))
def test_m1_partner_is_an_M1_class_of_the_label_and_covers_all_of_them(L, r, seed):
    """Per member: classes < K1 with class mod L = label; every one of the K1/L classes of each label
    is drawn (4000 draws, ≤ 8 classes per label), each about equally often."""
    mx = MultimodalMixture([member(L=L, K1=r[e] * L, K2=L, N=4, B=2, seed=e) for e in range(2)])
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, L, (2, 1, 4000), generator=g)
    k = mx.m1_partner(labels, g)
    assert (k >= 0).all() and (k % L == labels).all()
    for e in range(2):
        K1 = r[e] * L
        assert (k[e] < K1).all()
        counts = torch.bincount(k[e].flatten(), minlength=K1)
        assert (counts > 0).all()
        assert (counts > 0.5 * 4000 / K1).all()                              # expected 4000/K1 ≥ 62


# ---- 2. evaluation sets ------------------------------------------------------------------------
def _pair_structure(s, N, B, C):
    """Context of a new-class set at ε = 0: items equal per pair, M1 equality ⇔ M2 equality, one
    label per pair, distinct labels across pairs, C pairs of B items."""
    e1, e2 = same_item(s.m1[:, :, :N]), same_item(s.m2[:, :, :N])
    assert torch.equal(e1, e2)
    same_label = s.labels.unsqueeze(-1) == s.labels.unsqueeze(-2)
    assert torch.equal(e1, same_label)
    assert (e1.sum(-1) == B).all()
    assert (len(torch.unique(s.labels[0, 0])) == C)


@given(shapes())
def test_evaluation_sets_of_new_classes_point_the_query_where_their_definitions_say(drawn):
    mx, seed = drawn
    g = torch.Generator().manual_seed(seed)
    N, B, C = mx.N, mx.B, mx.C
    for name in ("icl", "icl_m2only", "icl_m1only", "conflict"):
        s = mx.batch(name, 32, g)
        _pair_structure(s, N, B, C)
        # brand-new classes: no item is a mean of the class tables
        assert (exact_class(s.m1, mx.m1.means) == -1).all() and (exact_class(s.m2, mx.m2.means) == -1).all()
        q1 = (s.m1[:, :, :N] == s.m1[:, :, N:]).all(-1)                       # (E, b, N): context M1 = query M1
        q2 = (s.m2[:, :, :N] == s.m2[:, :, N:]).all(-1)
        lab1 = torch.where(q1, s.labels, -1).max(-1).values                  # label of the matching pair (−1: none)
        lab2 = torch.where(q2, s.labels, -1).max(-1).values
        if name == "icl":
            assert torch.equal(q1, q2) and q1.any(-1).all()
            assert torch.equal(s.target, lab1) and torch.equal(s.follow_m1, lab1) and torch.equal(s.follow_m2, lab1)
        elif name == "icl_m2only":
            assert not q1.any() and q2.any(-1).all()
            assert (s.follow_m1 == -1).all()
            assert torch.equal(s.target, lab2) and torch.equal(s.follow_m2, lab2)
        elif name == "icl_m1only":
            assert not q2.any() and q1.any(-1).all()
            assert (s.follow_m2 == -1).all()
            assert torch.equal(s.target, lab1) and torch.equal(s.follow_m1, lab1)
        else:
            assert q1.any(-1).all() and q2.any(-1).all() and not (q1 & q2).any()
            assert (s.target == -1).all()
            assert torch.equal(s.follow_m1, lab1) and torch.equal(s.follow_m2, lab2)
            assert (s.follow_m1 != s.follow_m2).all()
            assert (s.labels == s.follow_m1.unsqueeze(-1)).any(-1).all()
            assert (s.labels == s.follow_m2.unsqueeze(-1)).any(-1).all()


@given(shapes())
def test_known_class_M2_necessary_set_uses_distinct_known_M2_classes_with_labels_from_the_context(drawn):
    """icl_m2known at ε = 0: every context M2 item is the mean of a known class of its member, the
    N/B pairs have distinct classes and distinct labels, the query's M2 item is one pair's class and
    the target that pair's label (of this sequence, not necessarily k mod L); M1 items are of brand-new
    classes and the query's M1 item is in no pair."""
    mx, seed = drawn
    g = torch.Generator().manual_seed(seed)
    N = mx.N
    s = mx.batch("icl_m2known", 32, g)
    _pair_structure(s, N, mx.B, mx.C)
    k2 = exact_class(s.m2, mx.m2.means)
    assert (k2 >= 0).all() and (k2 < mx.m2.K.view(-1, 1, 1)).all()
    assert (exact_class(s.m1, mx.m1.means) == -1).all()
    assert not (s.m1[:, :, :N] == s.m1[:, :, N:]).all(-1).any()
    q2 = k2[..., :N] == k2[..., N:]                                          # (E, b, N)
    assert q2.any(-1).all()
    assert torch.equal(s.target, torch.where(q2, s.labels, -1).max(-1).values)
    assert (s.follow_m1 == -1).all() and torch.equal(s.follow_m2, s.target)
    same_class = k2[..., :N].unsqueeze(-1) == k2[..., :N].unsqueeze(-2)
    assert torch.equal(same_class, s.labels.unsqueeze(-1) == s.labels.unsqueeze(-2))


@given(shapes())
def test_flip_set_shifts_the_label_of_every_known_pair_by_one(drawn):
    mx, seed = drawn
    s = mx.batch("flip", 32, torch.Generator().manual_seed(seed))
    k1, k2 = exact_class(s.m1, mx.m1.means), exact_class(s.m2, mx.m2.means)
    L, N = mx.L, mx.N
    assert (k1 >= 0).all() and (k2 >= 0).all()
    assert torch.equal(k1 % L, k2 % L)                                       # pairs keep their own label
    assert torch.equal(s.labels, (k2[..., :N] % L + 1) % L)
    assert torch.equal(s.target, (k2[..., N] % L + 1) % L)
    pair = k1 * 10_000 + k2
    assert (pair[..., :N] == pair[..., N:]).any(-1).all()                    # the query's pair is in context


@given(shapes())
def test_iwl_set_never_shows_the_query_label_in_context(drawn):
    mx, seed = drawn
    s = mx.batch("iwl", 64, torch.Generator().manual_seed(seed))
    k1, k2 = exact_class(s.m1, mx.m1.means), exact_class(s.m2, mx.m2.means)
    L, N = mx.L, mx.N
    assert (k1 >= 0).all() and (k2 >= 0).all()
    assert torch.equal(k1 % L, k2 % L)
    assert torch.equal(s.target, k2[..., N] % L) and torch.equal(s.labels, k2[..., :N] % L)
    assert not (s.labels == s.target.unsqueeze(-1)).any()


def test_iwl_set_avoids_the_query_label_under_a_steep_M2_zipf_law():
    """K2 = 8, L = 4, α2 = 2.5: most M2 draws have label 0, yet 2000 contexts never show the query's."""
    mx = MultimodalMixture([member(K2=8, zipf2=2.5, N=6, B=2, seed=0), member(K2=4, zipf2=2.5, N=6, B=2, seed=1)])
    for seed in range(4):
        s = mx.batch("iwl", 500, torch.Generator().manual_seed(seed))
        k2 = exact_class(s.m2, mx.m2.means)
        assert torch.equal(s.target, k2[..., -1] % 4)
        assert not (s.labels == s.target.unsqueeze(-1)).any()
    assert (s.target == 0).float().mean() > 0.5                             # the law is steep indeed


def test_eval_sets_are_fixed_by_their_seed_and_have_every_set():
    mx = MultimodalMixture([member(seed=0), member(seed=1)])
    a, b = MultimodalEvalSets.draw(mx, 12, 5, 21), MultimodalEvalSets.draw(mx, 12, 5, 21)
    assert set(a.sets) == set(SETS)
    for name in SETS:
        for f in ("m1", "m2", "labels", "target", "follow_m1", "follow_m2"):
            assert torch.equal(getattr(a.sets[name], f), getattr(b.sets[name], f))
        assert torch.equal(a.shifts[name], b.shifts[name])
        assert (a.shifts[name] >= 0).all() and (a.shifts[name] <= 21 - 14).all()


def test_unknown_evaluation_set_is_refused():
    mx = MultimodalMixture([member()])
    with pytest.raises(ValueError, match="no evaluation set"):
        mx.batch("icl_both", 4, torch.Generator())


# ---- 3. layout ---------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["m1_first", "m2_first"])
def test_tokens_interleave_M1_projected_M2_and_labels_in_the_layout(layout):
    """A one-layer projector z = x P + c with a recognisable offset c: the sequence is
    [M1_i, z(M2_i), y_i]_i, [M1_q, z(M2_q)] for m1_first and the two items swapped for m2_first,
    3N+2 tokens; ``token_positions`` names the same positions."""
    N, D1, D2 = 4, 4, 3
    mx = MultimodalMixture([member(N=N, D1=D1, D2=D2, layout=layout, seed=e) for e in range(2)])
    s = mx.train_batch(5, torch.Generator().manual_seed(0))
    proj = EnsembleMLP([D2, D1], [0, 1])
    P = torch.randn(2, D2, D1)
    c = torch.tensor([[100.0], [200.0]]) + torch.arange(D1)
    with torch.no_grad():
        proj.w[0].copy_(P)
        proj.b[0].copy_(c)
    system = MultimodalSystem(EnsembleDecoder(TINY, D1, 4, [0, 1]), proj, mx.label_vectors, layout)
    tok = system.tokens(s)
    assert tok.shape == (2, 5, 3 * N + 2, D1)
    z = torch.einsum("ebnd,edk->ebnk", s.m2, P) + c[:, None, None]
    y = torch.stack([mx.label_vectors[e][s.labels[e]] for e in range(2)])
    i = torch.arange(N) * 3
    a, b = (s.m1, z) if layout == "m1_first" else (z, s.m1)
    torch.testing.assert_close(tok[:, :, i], a[:, :, :N], rtol=0, atol=0)
    torch.testing.assert_close(tok[:, :, i + 1], b[:, :, :N], rtol=1e-6, atol=1e-4)
    torch.testing.assert_close(tok[:, :, i + 2], y, rtol=0, atol=0)
    torch.testing.assert_close(tok[:, :, 3 * N], a[:, :, N], rtol=1e-6, atol=1e-4)
    torch.testing.assert_close(tok[:, :, 3 * N + 1], b[:, :, N], rtol=1e-6, atol=1e-4)
    pos = token_positions(layout, N)
    first, second = ("m1", "m2") if layout == "m1_first" else ("m2", "m1")
    assert torch.equal(pos[first], i) and torch.equal(pos[second], i + 1) and torch.equal(pos["label"], i + 2)
    assert int(pos[f"{first}_q"]) == 3 * N and int(pos[f"{second}_q"]) == 3 * N + 1
    torch.testing.assert_close(tok[:, :, pos["m1"]], s.m1[:, :, :N], rtol=0, atol=0)
    torch.testing.assert_close(tok[:, :, int(pos["m1_q"])], s.m1[:, :, N], rtol=0, atol=0)
    assert system(s).logits.shape == (2, 5, 4)


def test_with_an_encoder_M2_enters_through_its_features():
    mx = MultimodalMixture([member(D2=3, seed=0)])
    s = mx.train_batch(3, torch.Generator().manual_seed(0))
    enc = EnsembleMLP([3, 6, 5, 8], [0])
    proj = EnsembleMLP([5, 8, 4], [1])
    system = MultimodalSystem(EnsembleDecoder(TINY, 4, 4, [0]), proj, mx.label_vectors, "m1_first", enc)
    tok = system.tokens(s)
    torch.testing.assert_close(tok[:, :, 1::3][:, :, :4], proj(enc.features(s.m2))[:, :, :4])
    assert enc.features(s.m2).shape[-1] == 5


# ---- 4. stage 2 --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stage1() -> Stage1:
    """Two tiny stage-1 decoders (M1 at ε = 0, so M1 items are exactly class means)."""
    return run_stage1(TINY, M1, [0, 1], TrainConfig(steps=3, batch=8, lr=1e-2, eval_every=2, eval_size=16))


@pytest.fixture
def capture(monkeypatch):
    """Every call of ``train_multimodal`` from the experiments: the system, the parameters it
    trains and a copy of the system's state just before training."""
    calls = []
    real = mme.train_multimodal

    def spy(system, mixture, params, *args, **kwargs):
        calls.append({"system": system, "params": params,
                      "before": {k: v.detach().clone() for k, v in system.state_dict().items()}})
        return real(system, mixture, params, *args, **kwargs)

    monkeypatch.setattr(mme, "train_multimodal", spy)
    return calls


def _marked_tables(s1: Stage1) -> Stage1:
    """The checkpoint with M1 tables that no seed regenerates: stage 2 must use these."""
    g = torch.Generator().manual_seed(123)
    return dataclasses.replace(s1, means=torch.randn(s1.means.shape, generator=g) + 7.0,
                               label_vectors=torch.randn(s1.label_vectors.shape, generator=g) - 7.0)


ARMS = [MultimodalArm("K2=8", MultimodalConfig(M1, SecondModality(K=8, D=3, eps=0.0))),
        MultimodalArm("random", MultimodalConfig(M1, SecondModality(K=4, D=3, eps=0.0)), decoder="random")]
READOUT = ("norm_out", "w_out")


@pytest.mark.train
def test_stage2_trains_only_the_projector_and_readout_on_the_checkpoints_M1_tables(stage1, capture):
    s1 = _marked_tables(stage1)
    r = run_stage2(s1, ARMS, TRAIN, trainable="projector+readout")
    (call,) = capture
    system, before = call["system"], call["before"]
    E1 = s1.E
    assert system.E == 2 * E1
    after = system.state_dict()
    dec = system.decoder.weights
    for k in dec:
        # the stage-1 arm starts from the checkpoint's decoders (member i·E1 + e ← stage-1 member e)
        assert torch.equal(before[f"decoder.weights.{k}"][:E1], s1.weights[k]), k
        if k in READOUT:
            for e in range(2 * E1):
                assert not torch.equal(after[f"decoder.weights.{k}"][e], before[f"decoder.weights.{k}"][e]), (k, e)
        else:
            assert torch.equal(dec[k][:E1].detach(), s1.weights[k]), k            # exactly the checkpoint
            assert torch.equal(after[f"decoder.weights.{k}"], before[f"decoder.weights.{k}"]), k
    for name, p in system.projector.named_parameters():
        for e in range(2 * E1):
            assert not torch.equal(p[e].detach(), before[f"projector.{name}"][e]), (name, e)
    # M1's class means and label vectors are the checkpoint's, tiled arm-major
    mix = r.run.mixture
    for i in range(len(ARMS)):
        for e in range(E1):
            assert torch.equal(mix.m1.means[i * E1 + e], s1.means[e])
            assert torch.equal(mix.label_vectors[i * E1 + e], s1.label_vectors[e])
            assert torch.equal(system.label_vectors[i * E1 + e], s1.label_vectors[e])
    # … and the M1 items of the known-class sets are drawn from them (ε1 = 0: items are the means)
    for name in ("flip", "iwl"):
        k1 = exact_class(r.run.eval_sets.sets[name].m1, mix.m1.means)
        assert (k1 >= 0).all(), name
    assert r.steps == [0, 2, 3]


@pytest.mark.train
def test_stage2_with_projector_only_keeps_the_readout_too(stage1, capture):
    run_stage2(stage1, ARMS[:1], TRAIN, trainable="projector")
    (call,) = capture
    system, before = call["system"], call["before"]
    for k, v in system.decoder.weights.items():
        assert torch.equal(v.detach(), stage1.weights[k]), k
    assert all(any(p is q for q in system.projector.parameters()) for p in call["params"])
    for name, p in system.projector.named_parameters():
        assert not torch.equal(p.detach(), before[f"projector.{name}"]), name


@pytest.mark.train
def test_stage2_freezes_a_pretrained_encoder(stage1, capture):
    arms = [MultimodalArm(f"enc{s}", MultimodalConfig(M1, SecondModality(K=8, D=3, eps=0.1)), encoder_steps=s)
            for s in (0, 2)]
    r = run_stage2(stage1, arms, TRAIN)
    (call,) = capture
    system, before = call["system"], call["before"]
    for name, p in system.encoder.named_parameters():
        assert torch.equal(p.detach(), before[f"encoder.{name}"]), name
    q = r.run.history.final("encoder_acc")
    assert q.shape == (4,) and ((q >= 0) & (q <= 1)).all()


# ---- 5. checkpoint -----------------------------------------------------------------------------
def test_checkpoint_round_trip_is_exact(stage1, tmp_path):
    path = stage1.save(tmp_path / "s1.pt")
    back = Stage1.load(path)
    assert back.model == stage1.model and back.train == stage1.train and back.members == stage1.members
    assert back.final == stage1.final and back.data_seed == stage1.data_seed
    assert back.seconds == stage1.seconds and back.version == stage1.version
    assert set(back.weights) == set(stage1.weights)
    for k in stage1.weights:
        assert torch.equal(back.weights[k], stage1.weights[k]), k
    assert torch.equal(back.means, stage1.means) and torch.equal(back.label_vectors, stage1.label_vectors)
    assert sorted(os.listdir(tmp_path)) == ["s1.pt"]                         # no temporary file left


def test_checkpoint_is_replaced_atomically_or_not_at_all(stage1, tmp_path, monkeypatch):
    """A write that fails before the final rename leaves the old checkpoint whole and no temp file."""
    from mmicl.numerics import atomic

    path = stage1.save(tmp_path / "s1.pt")
    old = path.read_bytes()

    def boom(*_):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "fsync", boom)
    with pytest.raises(OSError, match="disk full"):
        dataclasses.replace(stage1, seconds=123.0).save(path)
    monkeypatch.undo()
    assert path.read_bytes() == old and sorted(os.listdir(tmp_path)) == ["s1.pt"]
    assert Stage1.load(path).seconds == stage1.seconds


def test_missing_or_garbage_checkpoints_are_refused_with_their_path(stage1, tmp_path):
    missing = tmp_path / "nowhere.pt"
    with pytest.raises(TestbedConfigError, match="nowhere.pt"):
        Stage1.load(missing)
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a torch file \x00\x01" * 10)
    with pytest.raises(TestbedConfigError, match="garbage.pt"):
        Stage1.load(garbage)
    other = tmp_path / "other.pt"
    torch.save({"meta": '{"format": "something/9"}'}, other)
    with pytest.raises(TestbedConfigError, match="other.pt"):
        Stage1.load(other)


# ---- 6. encoder pretraining --------------------------------------------------------------------
def _encoder(seeds):
    return EnsembleMLP([3, 8, 6, 8], seeds)


def _state(enc, e):
    return [p.detach()[e].clone() for p in enc.parameters()]


def _plain_adam(enc, mx, steps, batch, lr, eval_size, seed):
    """The reference: every member trained by plain Adam for ``steps`` steps on the same stream
    (held-out items drawn first, then one batch per step); the weights after each step."""
    g = torch.Generator().manual_seed(seed)
    mx.single_items(eval_size, g)
    opt = torch.optim.Adam(enc.parameters(), lr=lr)
    states = [[_state(enc, e) for e in range(mx.E)]]
    for _ in range(steps):
        x, k = mx.single_items(batch, g)
        logits = enc(x)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), k.flatten(), reduction="none")
        opt.zero_grad()
        loss.view(mx.E, -1).mean(-1).sum().backward()
        opt.step()
        states.append([_state(enc, e) for e in range(mx.E)])
    return states


@pytest.mark.train
def test_each_encoder_member_stops_at_its_own_step_count():
    """steps [0, 3, 10]: member e has the weights that plain Adam on the whole ensemble gives it
    after steps[e] steps (member 0 its initial weights): a member that stops is not moved by the
    others' steps, and the others are not moved by its stopping; the quality is the held-out
    accuracy of those final weights."""
    mx = MultimodalMixture([member(K2=8, D2=3, eps2=0.3, seed=e) for e in range(3)])
    seeds = [4, 5, 6]
    kw = {"batch": 8, "lr": 1e-2, "eval_size": 64, "seed": 9}
    enc = _encoder(seeds)
    q = train_encoder(enc, mx, [0, 3, 10], **kw)
    ref = _plain_adam(_encoder(seeds), mx, 10, **kw)
    eq = lambda a, b: all(torch.equal(x, y) for x, y in zip(a, b))       
    for e, k in enumerate((0, 3, 10)):
        assert eq(_state(enc, e), ref[k][e]), e
        assert not eq(_state(enc, e), ref[k + 1 if k < 10 else 9][e]), e      # the weights of that very step
    assert q.shape == (3,) and ((q >= 0) & (q <= 1)).all()
    held_out = mx.single_items(64, torch.Generator().manual_seed(9))
    assert torch.equal(q, encoder_accuracy(enc, *held_out))


def test_single_items_are_uniform_over_each_members_M2_classes():
    mx = MultimodalMixture([member(K2=8, eps2=0.0, seed=0), member(K2=16, eps2=0.0, seed=1)])
    x, k = mx.single_items(4000, torch.Generator().manual_seed(0))
    assert torch.equal(exact_class(x.unsqueeze(2), mx.m2.means).squeeze(2), k)
    for e, K2 in enumerate((8, 16)):
        counts = torch.bincount(k[e], minlength=K2)
        assert counts.numel() == K2 and (counts > 0.6 * 4000 / K2).all()


def test_encoder_steps_must_be_one_per_member_and_not_negative():
    mx = MultimodalMixture([member(K2=8, D2=3, seed=e) for e in range(2)])
    for steps in ([1], [1, -1]):
        with pytest.raises(ValueError, match="per member"):
            train_encoder(_encoder([0, 1]), mx, steps, batch=4, lr=1e-2, eval_size=4, seed=0)


# ---- 7. metrics --------------------------------------------------------------------------------
def _own_pair(attn, layout, N, m):
    """(E, b, H, T, T) → (E, H): mean over label tokens 3i+2 of their attention to the ``m`` item of
    their own pair (3i for the first modality of the layout, 3i+1 for the second)."""
    offset = 0 if (m == "m1") == (layout == "m1_first") else 1
    return torch.stack([attn[..., 3 * i + 2, 3 * i + offset] for i in range(N)], -1).mean((1, -1))


def _uniform_causal(E, b, H, T):
    t = torch.arange(T)
    return (t.view(T, 1) >= t.view(1, T)).float().div(t.view(T, 1) + 1).expand(E, b, H, T, T)


@given(C=st.integers(2, 4), B=st.integers(1, 3), layout=st.sampled_from(["m1_first", "m2_first"]))
def test_uniform_baselines_are_the_metrics_of_uniform_causal_attention(C, B, layout):
    N = C * B
    mx = MultimodalMixture([member(L=4, N=N, B=B, layout=layout)])
    s = mx.batch("icl", 6, torch.Generator().manual_seed(0))
    attn = _uniform_causal(1, 6, 2, 3 * N + 2)
    pos = token_positions(layout, N)
    match = s.labels == s.target.unsqueeze(-1)
    base = uniform_baselines(N, B)
    got = {"prev_token": previous_token_strength(attn), "induction": readout_contrast(attn, pos["label"], match),
           "attn_match_m1": readout_attention(attn, pos["m1"], match),
           "attn_match_m2": readout_attention(attn, pos["m2"], match),
           # each label token 3i+2 to its own pair's items 3i and 3i+1, averaged over the N labels
           "pair_attn_m1": _own_pair(attn, layout, N, "m1"), "pair_attn_m2": _own_pair(attn, layout, N, "m2")}
    assert set(got) == set(base)
    for k, v in got.items():
        torch.testing.assert_close(v, torch.full((1, 2), base[k]), rtol=1e-5, atol=1e-6, msg=k)


@pytest.mark.parametrize("layout", ["m1_first", "m2_first"])
def test_evaluate_multimodal_on_a_uniformly_attending_decoder_gives_the_baselines(layout):
    """Queries and keys zeroed: every head attends uniformly to its causal past, so every attention
    metric of ``evaluate_multimodal`` equals its uniform baseline; the conflict follow rates are
    rates of disjoint events."""
    N, B = 4, 2
    members = [member(N=N, B=B, layout=layout, seed=e) for e in range(2)]
    mx = MultimodalMixture(members)
    cfg = ModelConfig(layers=2, heads=2, width=8, mlp_ratio=1, ape_slots=21)
    dec = EnsembleDecoder(cfg, 4, 4, [0, 1])
    with torch.no_grad():
        for layer in range(2):
            dec.weights[f"l{layer}_w_qkv"][..., :16] = 0.0
    system = MultimodalSystem(dec, EnsembleMLP([4, 8, 4], [0, 1]), mx.label_vectors, layout)
    out = evaluate_multimodal(system, MultimodalEvalSets.draw(mx, 16, 0, 21))
    base = uniform_baselines(N, B)
    for k in ("prev_token", "induction", "attn_match_m1", "attn_match_m2", "pair_attn_m1", "pair_attn_m2"):
        assert out[k].shape == (2, 2, 2)
        torch.testing.assert_close(out[k], torch.full((2, 2, 2), base[k]), rtol=1e-5, atol=1e-6, msg=k)
    for k in ("attn_match_m1", "attn_match_m2", "pair_attn_m1", "pair_attn_m2"):
        torch.testing.assert_close(out[f"{k}_top"], torch.full((2,), base[k]), msg=k)
    f1, f2 = out["conflict_follow_m1"], out["conflict_follow_m2"]
    assert ((f1 >= 0) & (f1 <= 1) & (f2 >= 0) & (f2 <= 1)).all() and (f1 + f2 <= 1).all()
    for k in ("acc_icl", "acc_icl_m2only", "acc_icl_m1only", "acc_flip", "acc_iwl"):
        assert out[k].shape == (2,) and ((out[k] >= 0) & (out[k] <= 1)).all()


def test_measuring_some_sets_gives_exactly_their_metrics_of_the_full_evaluation():
    """``eval_on`` names sets; the evaluation gives the metrics ``METRICS_OF`` lists for them (those
    of ``iwl_balanced`` where it was drawn) and no others, each equal bit for bit to the full
    evaluation's; with ``summaries`` the head summaries come with ``icl``.  Every metric of the full
    evaluation belongs to exactly one set."""
    mx = MultimodalMixture([member(seed=e) for e in range(2)])
    cfg = ModelConfig(layers=2, heads=2, width=8, mlp_ratio=1, ape_slots=21)
    system = MultimodalSystem(EnsembleDecoder(cfg, 4, 4, [0, 1]), EnsembleMLP([4, 8, 4], [0, 1]), mx.label_vectors,
                              "m1_first")
    sets = MultimodalEvalSets.draw(mx, 32, 0, 21, balanced=True)
    full = evaluate_multimodal(system, sets)
    owned = [m for name in METRICS_OF for m in METRICS_OF[name]]
    assert sorted(owned) == sorted(full) and len(set(owned)) == len(owned)
    for name, metrics in METRICS_OF.items():
        part = evaluate_multimodal(system, sets, eval_on=(name,))
        assert set(part) == set(metrics), name
        assert all(torch.equal(part[m], full[m]) for m in metrics), name
    two = evaluate_multimodal(system, sets, summaries=True, eval_on=["icl", "flip"])
    assert set(two) == {*METRICS_OF["icl"], *METRICS_OF["flip"], "induction_max", "induction_min", "prev_token_max"}
    for bad, words in ((["icl", "x"], "x unknown"), ("icl", "list"), ((), "one or more")):
        with pytest.raises(ValueError, match=words):
            evaluate_multimodal(system, sets, eval_on=bad)


class _Stub(torch.nn.Module):
    """A stand-in for ``MultimodalSystem`` in ``evaluate_multimodal``: given logits per set and one
    layer of hand-made attention on the ICL set."""

    def __init__(self, layout, logits, attention=None):
        super().__init__()
        self.layout, self.logits, self.attention = layout, logits, attention

    def forward(self, s, shift=None, return_attention=False):
        from mmicl.numerics.testbed.model import Forward

        return Forward(self.logits(s), [self.attention(s)] if return_attention else None)


@pytest.mark.parametrize("layout", ["m1_first", "m2_first"])
def test_evaluate_multimodal_reads_each_modality_at_its_layout_positions(layout):
    """Hand-made attention, positions written out by hand from the layout: each label token 3i+2
    attends to its own pair's M1 item, the readout to the M1 items of the pairs with the answer's
    label (1/B each), every other row to token 0.  Then pair_attn_m1 = 1, pair_attn_m2 = 0,
    attn_match_m1 = 1, attn_match_m2 = 0, induction = 0, and prev_token counts the rows whose
    target is the token just before (label rows in m2_first, where M1 sits at 3i+1, and row 1)."""
    N, B = 4, 2
    T = 3 * N + 2
    mx = MultimodalMixture([member(N=N, B=B, layout=layout, seed=e) for e in range(2)])
    sets = MultimodalEvalSets.draw(mx, 8, 0, 21)
    m1_at = 0 if layout == "m1_first" else 1

    def attention(s):
        E, b = s.target.shape
        a = torch.zeros(E, b, 1, T, T)
        a[..., :, 0] = 1.0
        for i in range(N):
            a[..., 3 * i + 2, :] = 0.0
            a[..., 3 * i + 2, 3 * i + m1_at] = 1.0
        a[..., T - 1, :] = 0.0
        match = (s.labels == s.target.unsqueeze(-1)).float() / B              # (E, b, N)
        for i in range(N):
            a[:, :, 0, T - 1, 3 * i + m1_at] = match[..., i]
        return a

    out = evaluate_multimodal(_Stub(layout, lambda s: torch.zeros(*s.target.shape, 4), attention), sets)
    one, zero = torch.ones(2, 1, 1), torch.zeros(2, 1, 1)
    for k, v in (("pair_attn_m1", one), ("pair_attn_m2", zero), ("attn_match_m1", one), ("attn_match_m2", zero),
                 ("induction", zero)):
        torch.testing.assert_close(out[k], v, msg=k)
    prev = (1 + (N if layout == "m2_first" else 0)) / (T - 1)
    torch.testing.assert_close(out["prev_token"], torch.full((2, 1, 1), prev))
    torch.testing.assert_close(out["attn_match_m1_top"], torch.ones(2))
    torch.testing.assert_close(out["pair_attn_m2_top"], torch.zeros(2))


def test_conflict_follow_rates_count_predictions_of_each_pointed_label():
    """A readout that answers the M1-pointed label of the conflict set follows M1 at rate 1 and M2
    at rate 0; one that answers a label pointed to by neither follows both at rate 0."""
    mx = MultimodalMixture([member(seed=0)])
    sets = MultimodalEvalSets.draw(mx, 16, 0, 21)
    uniform = lambda s: _uniform_causal(*s.target.shape, 1, 14)           
    follow = lambda f: lambda s: torch.nn.functional.one_hot(f(s).clamp(min=0), 4).float()
    out = evaluate_multimodal(_Stub("m1_first", follow(lambda s: s.follow_m1), uniform), sets)
    assert out["conflict_follow_m1"].item() == 1.0 and out["conflict_follow_m2"].item() == 0.0
    out = evaluate_multimodal(_Stub("m1_first", follow(lambda s: s.follow_m2), uniform), sets)
    assert out["conflict_follow_m1"].item() == 0.0 and out["conflict_follow_m2"].item() == 1.0
    # a label in neither pair: the conflict context shows only N/B = 2 labels of L = 4
    other = lambda s: torch.stack([torch.tensor(min(set(range(4)) - set(r.tolist())))
                                   for r in s.labels.flatten(0, 1)]).view(s.target.shape)
    out = evaluate_multimodal(_Stub("m1_first", follow(other), uniform), sets)
    assert out["conflict_follow_m1"].item() == 0.0 and out["conflict_follow_m2"].item() == 0.0


# ---- 8. settings refused -----------------------------------------------------------------------
@pytest.mark.parametrize("make, words", [
    (lambda: MultimodalConfig(DataConfig(K=64, L=4, D=4, N=4, B=2), SecondModality(K=6)), "multiple of L"),
    (lambda: MultimodalConfig(DataConfig(K=64, L=8, D=4, N=4, B=2), SecondModality(K=4)), "at least L"),
    (lambda: MultimodalConfig(DataConfig(K=64, L=4, D=4, N=4, B=4), SecondModality(K=4)), "N/B"),
    (lambda: MultimodalConfig(DataConfig(K=64, L=4, D=4, N=4, B=2), SecondModality(K=4), layout="m3_first"),
     "layout"),
    (lambda: MultimodalConfig(DataConfig(K=64, L=4, D=4, N=4, B=2), SecondModality(K=4), p_bursty=1.5), "p_bursty"),
    (lambda: SecondModality(K=4, eps=-0.1), "eps"),
    (lambda: SecondModality(K=4, zipf=float("nan")), "zipf"),
    (lambda: SecondModality(K=0), "K"),
    (lambda: SecondModality(K=4, D=0), "D"),
    (lambda: SecondModality(K=4, distractor_dims=-1, distractor_scale=1.0), "distractor_dims"),
    (lambda: SecondModality(K=4, distractor_dims=2.5, distractor_scale=1.0), "distractor_dims"),
    (lambda: SecondModality(K=4, distractor_dims=4, distractor_scale=float("inf")), "distractor_scale"),
    (lambda: SecondModality(K=4, distractor_dims=4), "both"),
    (lambda: SecondModality(K=4, distractor_scale=2.0), "both"),
])
def test_bad_multimodal_settings_are_refused_with_a_message(make, words):
    with pytest.raises(TestbedConfigError, match=words):
        make()


def test_ensembles_and_checkpoints_of_other_shapes_are_refused(stage1):
    with pytest.raises(TestbedConfigError, match="share"):
        MultimodalMixture([member(D2=4), member(D2=5)])
    with pytest.raises(TestbedConfigError, match="distractor_dims"):
        MultimodalMixture([distracted(member(), 4, 1.0), member()])
    with pytest.raises(TestbedConfigError, match="layout"):
        MultimodalMixture([member(layout="m1_first"), member(layout="m2_first")])
    with pytest.raises(TestbedConfigError, match="M1 tables"):
        MultimodalMixture([member(K1=128)], m1_tables=(stage1.means[:1], stage1.label_vectors[:1]))
    with pytest.raises(TestbedConfigError, match="encoder"):
        run_stage2(stage1, [ARMS[0], dataclasses.replace(ARMS[0], name="b", encoder_steps=1)], TRAIN)


# ---- 9. reproducibility ------------------------------------------------------------------------
@pytest.mark.train
def test_early_fusion_reproduces_from_its_seeds_and_trains_everything(capture):
    arms = [MultimodalArm("m1_first", MultimodalConfig(M1, SecondModality(K=4, D=3, eps=0.1))),
            MultimodalArm("K2=8", MultimodalConfig(M1, SecondModality(K=8, D=3, eps=0.1)))]
    a = run_fusion(TINY, M1, arms, [0, 1], TRAIN, data_seed=3)
    b = run_fusion(TINY, M1, arms, [0, 1], TRAIN, data_seed=3)
    ha, hb = a.run.history, b.run.history
    assert ha.steps == hb.steps == [0, 2, 3]
    assert set(ha.metrics) == set(hb.metrics)
    for k in ha.metrics:
        for x, y in zip(ha.metrics[k], hb.metrics[k]):
            torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True, msg=k)
    for x, y in zip(ha.loss, hb.loss):
        torch.testing.assert_close(x, y, rtol=0, atol=0, equal_nan=True)
    for k, v in a.run.model.state_dict().items():
        assert torch.equal(v, b.run.model.state_dict()[k]), k
    before = capture[0]["before"]
    for k, v in a.run.model.decoder.weights.items():                          # early fusion: every block trains
        assert not torch.equal(v.detach(), before[f"decoder.weights.{k}"]), k
    assert a.final("acc_icl_m2only", "K2=8").shape == (2,)


@pytest.mark.train
def test_no_two_members_modules_start_from_the_same_random_numbers(capture):
    """Members are independent replicates: no layer of any member's encoder or projector starts
    from the random numbers of another (compared after undoing the 1/√fan_in scale)."""
    arm = MultimodalArm("enc", MultimodalConfig(M1, SecondModality(K=8, D=4, eps=0.1)), encoder_steps=0)
    run_fusion(TINY, M1, [arm], [0, 1, 2], dataclasses.replace(TRAIN, steps=1))
    system = capture[0]["system"]
    heads = []
    for module in ("encoder", "projector"):
        for k, w in enumerate(capture[0]["before"][f"{module}.w.{k}"] for k in range(len(getattr(system, module).w))):
            for e in range(system.E):
                heads.append(((module, k, e), (w[e] * w.shape[1] ** 0.5).flatten()[:8]))
    for i, (a, x) in enumerate(heads):
        for b, y in heads[i + 1:]:
            assert not torch.allclose(x, y), f"{a} and {b} start from the same random numbers"


def test_ablating_a_head_whose_output_is_already_zero_costs_nothing_and_others_can():
    """Head (0, 1) has a zero output projection, so zeroing it changes no logit: its ablation drop
    is exactly 0 in every member; the drops are differences of accuracies, so they lie in [−1, 1]."""
    from mmicl.numerics.testbed.multimodal_metrics import ablation_drop

    members = [member(seed=e) for e in range(2)]
    mx = MultimodalMixture(members)
    cfg = ModelConfig(layers=2, heads=2, width=8, mlp_ratio=1, ape_slots=21)
    dec = EnsembleDecoder(cfg, 4, 4, [0, 1])
    with torch.no_grad():
        dec.weights["l0_w_o"][:, 4:8, :] = 0.0        # the rows that read head 1 of layer 0
    system = MultimodalSystem(dec, EnsembleMLP([4, 8, 4], [0, 1]), mx.label_vectors, "m1_first")
    drop = ablation_drop(system, MultimodalEvalSets.draw(mx, 64, 0, 21))
    assert drop.shape == (2, 2, 2)
    assert (drop[:, 0, 1] == 0).all()
    assert ((drop >= -1) & (drop <= 1)).all()


# ---- feature standardisation -------------------------------------------------------------------
def test_standardised_features_have_one_scale_whatever_the_encoder_and_the_logits_stay():
    enc = EnsembleMLP([6, 16, 5, 3], [1, 2, 3])
    with torch.no_grad():                      # three members of very different feature scales
        for e, k in enumerate((0.1, 1.0, 30.0)):
            enc.w[1][e] *= k
            enc.b[1][e] += k
    ref = torch.randn(3, 400, 6)
    logits = enc(ref)
    raw = enc.features(ref).pow(2).sum(-1).mean(1)
    assert raw.max() / raw.min() > 100
    enc.standardise_features(ref)
    f = enc.features(ref)
    torch.testing.assert_close(f.mean(1), torch.zeros(3, 5), atol=1e-5, rtol=0)
    torch.testing.assert_close(f.pow(2).sum(-1).mean(1), torch.ones(3), atol=1e-4, rtol=0)
    torch.testing.assert_close(enc(ref), logits)           # the encoder's own accuracy is untouched
    enc.standardise_features(ref)                          # again: from the raw features, not twice
    torch.testing.assert_close(enc.features(ref).pow(2).sum(-1).mean(1), torch.ones(3), atol=1e-4, rtol=0)


def test_one_scale_per_member_keeps_the_features_geometry_and_constant_features_keep_scale_one():
    f = torch.tensor([[[1.0, 0.0], [-1.0, 0.0], [3.0, 0.0], [-3.0, 0.0]],     # one live coordinate
                      [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]])      # constant
    shift, scale = feature_standardisation(f)
    torch.testing.assert_close(shift, torch.tensor([[0.0, 0.0], [2.0, 2.0]]))
    torch.testing.assert_close(scale, torch.tensor([1 / math.sqrt(5.0), 1.0]))  # mean squared norm (1+1+9+9)/4 = 5
    with pytest.raises(ValueError):
        feature_standardisation(torch.zeros(3, 4))


def test_a_standardising_arm_round_trips_and_other_arms_keep_their_json():
    data = MultimodalConfig(DataConfig(K=64, L=4, D=4, N=4, B=2), SecondModality(K=8, D=4, eps=1.0))
    plain = MultimodalArm("a", data, encoder_steps=3)
    std = replace(plain, standardise_features=True)
    assert "standardise_features" not in arm_to_json(plain)
    assert arms_from_json([arm_to_json(std)]) == [std] and arms_from_json([arm_to_json(plain)]) == [plain]
    with pytest.raises(TestbedConfigError):
        arms_from_json([arm_to_json(std), {**arm_to_json(plain), "name": "b"}])
    with pytest.raises(TestbedConfigError):
        arms_from_json([{**arm_to_json(std), "encoder_steps": None}])


@pytest.mark.train
def test_stage2_standardises_the_encoder_features_it_feeds_the_projector(monkeypatch):
    import mmicl.numerics.testbed.multimodal_experiments as mme
    from mmicl.numerics.testbed.multimodal_experiments import run_stage1, run_stage2

    seen = {}
    real = mme.train_multimodal

    def spy(system, mixture, *a, **k):
        x, _ = mixture.single_items(300, torch.Generator().manual_seed(5))
        seen["norm"] = system.encoder.features(x).pow(2).sum(-1).mean(1)
        return real(system, mixture, *a, **k)

    monkeypatch.setattr(mme, "train_multimodal", spy)
    m1 = DataConfig(K=64, L=4, D=4, N=4, B=2)
    tr = TrainConfig(steps=1, batch=8, lr=1e-3, eval_every=1, eval_size=64)
    s1 = run_stage1(ModelConfig(layers=1, heads=1, width=8, mlp_ratio=1, ape_slots=21), m1, [0, 1], tr)
    data = MultimodalConfig(m1, SecondModality(K=8, D=4, eps=1.0))
    run_stage2(s1, [MultimodalArm(f"d{s}", data, encoder_steps=s, standardise_features=True) for s in (0, 3)], tr)
    assert seen["norm"].shape == (4,)
    # mean squared norm 1 on the reference batch; on another batch of the same law, close to it
    assert torch.all((seen["norm"] > 0.7) & (seen["norm"] < 1.3))


# ---- 11. M2 distractor coordinates (version 4) ---------------------------------------------------
def distracted(m: MultimodalMember, dims: int, scale: float) -> MultimodalMember:
    m2 = replace(m.data.m2, distractor_dims=dims, distractor_scale=scale)
    return replace(m, data=replace(m.data, m2=m2))


@pytest.mark.parametrize("name", SETS + ("iwl_balanced",))
def test_without_distractors_the_M2_items_and_their_stream_are_the_mixtures_own(name):
    """distractor_dims = 0 draws nothing more: every set is the one drawn from the mixture's items."""
    mm = MultimodalMixture([member(eps2=0.3, seed=3)])
    plain = mm.m2.items
    a = mm.batch(name, 16, torch.Generator().manual_seed(5))
    mm.m2_items = lambda means, g: plain(means, g)          # the mixture's items, nothing appended
    b = mm.batch(name, 16, torch.Generator().manual_seed(5))
    assert mm.m2_item_dim == 4 and a.m2.shape[-1] == 4
    assert torch.equal(a.m2, b.m2) and torch.equal(a.m1, b.m1) and torch.equal(a.target, b.target)


@pytest.mark.parametrize("name", ["icl", "icl_m2only", "icl_m2known", "flip", "iwl"])
def test_distractors_are_appended_class_free_and_leave_the_class_coordinates_exact(name):
    """At ε2 = 0 the first D2 coordinates of an M2 item are its class mean exactly (as without
    distractors: the same classes and targets, since the distractors are drawn after the classes);
    the appended d coordinates have variance σ²/d whatever the class."""
    d, sigma = 12, 3.0
    mm = MultimodalMixture([distracted(member(eps2=0.0, K2=8, seed=1), d, sigma)])
    x = mm.batch(name, 512, torch.Generator().manual_seed(2)).m2
    assert mm.m2_item_dim == 4 + d and x.shape[-1] == 4 + d
    signal, noise = x[..., :4], x[..., 4:]
    if name in ("flip", "iwl"):   # known classes: every class coordinate block is a row of the means table
        assert (exact_class(signal, mm.m2.means) >= 0).all()
    n = noise.numel()
    var = float(noise.pow(2).mean())
    # the mean of n squares of N(0, σ²/d) has sd σ²/d·√(2/n): 6 of them
    assert abs(var - sigma ** 2 / d) <= 6 * sigma ** 2 / d * math.sqrt(2 / n)
    # class-free: two items' distractors are uncorrelated (per-coordinate product mean 0 within 6 sd)
    prod = noise[..., 0, :] * noise[..., 1, :]
    assert abs(float(prod.mean())) <= 6 * (sigma ** 2 / d) / math.sqrt(prod.numel())


def test_distractors_lower_the_same_class_cosine_as_stated():
    """Two items of one M2 class: raw cosine ≈ 1/((1+ε²)(1+σ²)) in expectation (SecondModality's
    docstring), checked at D2 = 64, d = 192 where the norms concentrate (relative spread ≈ 1/√D)."""
    eps, sigma = 0.5, 2.0
    m = distracted(member(D1=4, D2=64, K2=8, eps2=eps, seed=4), 192, sigma)
    mm = MultimodalMixture([m])
    g = torch.Generator().manual_seed(0)
    means = mm.m2.gather_means(torch.zeros(1, 2000, 2, dtype=torch.long))
    x = mm.m2_items(means, g)
    cos = torch.nn.functional.cosine_similarity(x[..., 0, :], x[..., 1, :], dim=-1)
    # x = aμ + bη ⊕ σξ, a² = 1/(1+ε²), b² = ε²/(1+ε²): E⟨x, x'⟩ = a²‖μ‖², E‖x‖² = a²‖μ‖² + b² + σ²
    # (‖μ‖² ≈ 1, which gives the docstring's form); the ratio of expectations is the mean cosine up
    # to O(1/(D2 + d)) = 0.004 relative, and a pair's cosine spreads by about 1/√(D2 + d) = 0.06,
    # 0.0014 over 2000 pairs: tolerance 0.01
    r = float(means[0, 0, 0].pow(2).sum())
    a2, b2 = 1 / (1 + eps ** 2), eps ** 2 / (1 + eps ** 2)
    expected = a2 * r / (a2 * r + b2 + sigma ** 2)
    assert abs(float(cos.mean()) - expected) <= 0.01, (float(cos.mean()), expected)
    assert expected < 0.25 * a2 * r / (a2 * r + b2)        # far below the cosine without distractors


# ---- 12. layouts with the query reversed (version 4) ---------------------------------------------
@pytest.mark.parametrize("layout, context, query", [
    ("readout_last", ("m1", "m2"), ("m1", "m2")),
    ("readout_last_m2_first", ("m2", "m1"), ("m2", "m1")),
    ("readout_last_query_reversed", ("m1", "m2"), ("m2", "m1")),
    ("readout_last_m2_first_query_reversed", ("m2", "m1"), ("m1", "m2")),
])
def test_readout_layouts_place_the_context_and_the_query_items_in_their_stated_orders(layout, context, query):
    """Every token at the place its layout says, read off the sequence the system builds (M1 items
    are exact; a projected M2 item is the projector's output; R last), and ``token_positions`` naming
    those places; the label-adjacent modality is the context's second, the one next to R the query's
    second."""
    from mmicl.numerics.testbed.multimodal_model import adjacent_modality, query_order

    N, D1, D2 = 4, 4, 3
    mx = MultimodalMixture([member(N=N, D1=D1, D2=D2, layout=layout, seed=e) for e in range(2)])
    s = mx.train_batch(5, torch.Generator().manual_seed(0))
    proj = EnsembleMLP([D2, D1], [0, 1])
    system = MultimodalSystem(EnsembleDecoder(replace(TINY, ape_slots=3 * N + 3), D1, 4, [0, 1]), proj,
                              mx.label_vectors, layout)
    tok = system.tokens(s)
    with torch.no_grad():
        z = proj(s.m2)
    items = {"m1": s.m1, "m2": z}
    assert tok.shape == (2, 5, 3 * N + 3, D1)
    i = torch.arange(N) * 3
    for k, name in enumerate(context):
        torch.testing.assert_close(tok[:, :, i + k], items[name][:, :, :N], rtol=0, atol=0)
    for k, name in enumerate(query):
        torch.testing.assert_close(tok[:, :, 3 * N + k], items[name][:, :, N], rtol=0, atol=0)
    torch.testing.assert_close(tok[:, :, 3 * N + 2], system.readout_token.detach().view(2, 1, D1).expand(2, 5, D1))
    pos = token_positions(layout, N)
    assert int(pos[f"{query[0]}_q"]) == 3 * N and int(pos[f"{query[1]}_q"]) == 3 * N + 1
    assert torch.equal(pos[context[0]], i) and torch.equal(pos[context[1]], i + 1)
    assert int(pos["readout"]) == 3 * N + 2
    assert adjacent_modality(layout) == context[1] and query_order(layout) == query
    assert system(s).logits.shape == (2, 5, 4)
