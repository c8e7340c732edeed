"""Evaluating a multimodal ensemble in slices of items, and drawing only the sets a run measures
(numerics/testbed/multimodal_metrics.py: ``item_slices``, ``evaluate_multimodal(chunk=...)``,
``MultimodalEvalSets.draw(only=...)``).

A slice's forward pass sees only its own items (every sequence is attended within itself), so the
per-item logits and attention maps of a sliced evaluation are those of the whole one up to float
rounding: a matrix product over a different number of rows may sum in another order on another
BLAS kernel.  Hence, for every machine:
- an accuracy or rate is a mean of per-item indicators; an item's indicator can change only where
  its two largest logits are within rounding of each other (``TIE``), so the sliced and whole values
  differ by at most the count of such items over n (counted on the whole forward pass);
- an attention metric is a mean of n per-item values in [−1, 1]; summing them in slices instead
  of at once moves it by at most n · 2⁻²⁴ per value in float32 (``ATOL``, with a factor 4 for the
  weighting and the per-slice means).
"""
from __future__ import annotations

import pytest
import torch

from mmicl.numerics.testbed.config import ModelConfig
from mmicl.numerics.testbed.model import EnsembleDecoder
from mmicl.numerics.testbed.multimodal_data import SETS, MultimodalMixture
from mmicl.numerics.testbed.multimodal_metrics import (METRICS_OF, MultimodalEvalSets, ablation_drop,
                                                       evaluate_multimodal, head_means_multimodal,
                                                       head_scores_multimodal, head_scores_per_sequence, item_slices)
from mmicl.numerics.testbed.multimodal_model import EnsembleMLP, MultimodalSystem

from test_multimodal_testbed import member

torch.set_num_threads(1)

N_ITEMS = 37
"""Items per set: a prime, so that no slice size below it divides it (the last slice is short)."""
TIE = 1e-4
"""Two logits closer than this may swap order under a different summation order: float32 logits of
magnitude about 1 through two layers of width 8 round at about 1e-6, so 1e-4 leaves a factor 100."""
ATOL = 4 * N_ITEMS * 2.0 ** -24
"""The float32 bound on moving a mean of N_ITEMS values in [−1, 1] by summing it in slices."""

ACCURACIES = [m for name in ("icl_m2only", "icl_m1only", "icl_m2known", "flip", "iwl", "iwl_balanced", "conflict")
              for m in METRICS_OF[name]] + ["acc_icl"]


@pytest.fixture(scope="module")
def system_and_sets():
    mx = MultimodalMixture([member(seed=e) for e in range(3)])
    dec = EnsembleDecoder(ModelConfig(layers=2, heads=2, width=8, mlp_ratio=1, ape_slots=21), 4, 4, [0, 1, 2])
    system = MultimodalSystem(dec, EnsembleMLP([4, 8, 4], [0, 1, 2]), mx.label_vectors, "m1_first")
    return system, mx, MultimodalEvalSets.draw(mx, N_ITEMS, 0, 21, balanced=True)


def _near_ties(system, sets, name) -> torch.Tensor:
    """(E,) the items of set ``name`` whose two largest logits (one whole forward pass) are within TIE."""
    logits = system(sets.sets[name], sets.shifts[name]).logits
    top2 = logits.topk(2, dim=-1).values
    return ((top2[..., 0] - top2[..., 1]) < TIE).sum(-1)


@pytest.mark.parametrize("chunk", [1, 5, N_ITEMS - 1])
def test_a_sliced_evaluation_gives_the_whole_evaluations_numbers(system_and_sets, chunk):
    system, _, sets = system_and_sets
    whole = evaluate_multimodal(system, sets, summaries=True)
    sliced = evaluate_multimodal(system, sets, summaries=True, chunk=chunk)
    assert set(sliced) == set(whole)
    for m in ACCURACIES:
        name = next(n for n, ms in METRICS_OF.items() if m in ms)
        ties = _near_ties(system, sets, name)
        assert ((sliced[m] - whole[m]).abs() * N_ITEMS <= ties + 0.5).all(), m
    for m in sorted(set(whole) - set(ACCURACIES)):
        if m.endswith("_top"):  # a value at the top head: the same head unless two heads tie
            continue
        torch.testing.assert_close(sliced[m], whole[m], rtol=0, atol=ATOL, msg=m)
    # the top heads (by induction; by copy attention) lead the runners-up beyond rounding, so the
    # values read at them are read at the same heads in both
    ind = whole["induction"].flatten(1).topk(2, dim=1).values
    copy = (whole["pair_attn_m1"] + whole["pair_attn_m2"]).flatten(1).topk(2, dim=1).values
    assert ((ind[:, 0] - ind[:, 1]) > 4 * ATOL).all() and ((copy[:, 0] - copy[:, 1]) > 4 * ATOL).all()
    for m in ("attn_match_m1_top", "attn_match_m2_top", "pair_attn_m1_top", "pair_attn_m2_top"):
        torch.testing.assert_close(sliced[m], whole[m], rtol=0, atol=ATOL, msg=m)


def test_head_scores_means_and_ablations_do_not_depend_on_the_slices(system_and_sets):
    system, _, sets = system_and_sets
    for a, b in ((head_scores_multimodal(system, sets), head_scores_multimodal(system, sets, chunk=4)),
                 (head_scores_per_sequence(system, sets), head_scores_per_sequence(system, sets, chunk=4))):
        assert set(a) == set(b)
        for k in a:
            torch.testing.assert_close(b[k], a[k], rtol=0, atol=ATOL, msg=k)
    assert head_scores_per_sequence(system, sets, chunk=4)["induction"].shape[1] == N_ITEMS
    means = head_means_multimodal(system, sets)
    torch.testing.assert_close(head_means_multimodal(system, sets, chunk=4), means, rtol=1e-5, atol=1e-6)
    ties = _near_ties(system, sets, "icl_m2only")
    assert (ties == 0).all(), "a near tie on the ablation set: pick another seed for this test"
    # with no near tie on the intact model, ablated ones may still tie: compare within one item's worth
    drop, drop4 = ablation_drop(system, sets), ablation_drop(system, sets, chunk=4)
    assert ((drop4 - drop).abs() * N_ITEMS <= 1 + 1e-6).all()


def test_item_slices_cover_every_item_once_in_order():
    for E, b, chunk in ((3, 37, 5), (1, 8, 8), (2, 8, 100), (4, 1, None), (32, 8192, None)):
        sl = item_slices(E, b, chunk)
        assert [i for s in sl for i in range(s.start, s.stop)] == list(range(b))
        n = chunk or max(1, 32768 // E)
        assert all(0 < s.stop - s.start <= n for s in sl)
    assert len(item_slices(32, 8192)) == 8   # testbed claim 7's ensemble: 1024 items per forward pass
    assert len(item_slices(32, 1024)) == 1   # the design's evaluation size: one pass, as before
    for bad in (0, -3, 2.5, True, "4"):
        with pytest.raises(ValueError, match="whole number"):
            item_slices(2, 10, bad)


def _counting(monkeypatch, mx):
    calls = []
    batch = mx.batch

    def counted(name, b, g):
        calls.append(name)
        return batch(name, b, g)

    monkeypatch.setattr(mx, "batch", counted)
    return calls


def test_drawing_some_sets_gives_the_same_items_and_draws_the_rest_when_read(monkeypatch, system_and_sets):
    """``only`` draws the named sets now; a set read later is drawn then, with the items (and APE
    shifts) it has when every set is drawn at once, whatever the order of reading."""
    _, mx, full = system_and_sets
    calls = _counting(monkeypatch, mx)
    part = MultimodalEvalSets.draw(mx, N_ITEMS, 0, 21, only=("icl_m2known",))
    assert calls == ["icl_m2known"]                       # a stream of its own: nothing else drawn
    assert set(part.sets) == set(SETS) and len(part.sets) == len(SETS) and "iwl_balanced" not in part.sets
    for name in ("flip", "icl_m2known", "icl", "iwl", "flip"):
        for f in ("m1", "m2", "labels", "target", "follow_m1", "follow_m2"):
            assert torch.equal(getattr(part.sets[name], f), getattr(full.sets[name], f)), (name, f)
        assert torch.equal(part.shifts[name], full.shifts[name])
    # "flip" drew the first stream's six sets in order, keeping "flip"; "icl" and "iwl" drew it again
    assert calls[1:7] == list(SETS[:6]) and len(calls) == 1 + 3 * 6
    calls.clear()
    one_stream = MultimodalEvalSets.draw(mx, N_ITEMS, 0, 21, only=("icl", "conflict"))
    assert calls == list(SETS[:6])
    assert torch.equal(one_stream.sets["conflict"].m2, full.sets["conflict"].m2)
    with pytest.raises(KeyError, match="no evaluation set 'nope'"):
        part.sets["nope"]
    merged = part.sets | {"flip": full.sets["icl"]}
    assert set(merged) == set(SETS) and merged["flip"] is full.sets["icl"]


def test_drawing_one_set_of_the_first_stream_holds_that_set_only(monkeypatch, system_and_sets):
    """The six sets of the first stream are drawn in turn to reach the asked one's items; the others
    are let go as they are drawn, so that a run measuring one large set never holds six (every set
    drawn is alive or not when the APE shifts, drawn after them, begin)."""
    import gc
    import weakref

    from mmicl.numerics.testbed import multimodal_metrics as mm

    _, mx, _ = system_and_sets
    drawn, alive_then = [], []
    batch, shift = mx.batch, mm.random_shift

    def tracked(name, b, g):
        s = batch(name, b, g)
        drawn.append((name, weakref.ref(s)))
        return s

    def first_shift(*a, **k):
        if not alive_then:
            gc.collect()
            alive_then.append([name for name, r in drawn if r() is not None])
        return shift(*a, **k)

    monkeypatch.setattr(mx, "batch", tracked)
    monkeypatch.setattr(mm, "random_shift", first_shift)
    MultimodalEvalSets.draw(mx, N_ITEMS, 0, 21, only=("flip",))
    assert [name for name, _ in drawn] == list(SETS[:6]) and alive_then == [["flip"]]
