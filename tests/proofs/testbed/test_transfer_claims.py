"""Claims 4, 5 and 9 of the testbed: stage 2 of the multimodal protocol (proofs/claims/testbed/transfer.py).

End to end at a toy size, on the CPU and, where there is one, a CUDA device: the design's checks
and premises are there under its names, every number states its tolerance, the verdict is one of
the registry's, the result file is written (naming the device), and a second run (or another claim
with the same settings) reads its runs back from the store.  The pure functions are tested on
hand-made inputs with known answers.  Nothing here asserts how training turns out."""

from __future__ import annotations
import json
import math
from dataclasses import replace
import numpy as np
import pytest
import torch
from claim_checks import assert_checks_follow_the_design, uncovered_numbers
from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.proofs.claim import VERDICTS, RunConfig, decide
from mmicl.proofs.claims.testbed import common
from mmicl.proofs.claims.testbed import transfer as tr
from mmicl.proofs.claims.testbed.design import DESIGNS
from toy_testbed import TOY_TRANSFER as TOY
from toy_testbed import toy_transfer


torch.set_num_threads(1)



_TRAIN = TOY.stage1



@pytest.fixture
def toy(monkeypatch):
    toy_transfer(monkeypatch)



@pytest.mark.train
@pytest.mark.parametrize("claim", ["claim4", "claim5", "claim9"])
def test_each_claim_runs_end_to_end_at_a_toy_size(claim, device, toy, tmp_path):
    fn = getattr(tr, claim)
    cfg = RunConfig(quick=True, out=tmp_path, seed=1, device=device)
    hyps, checks, summary, figs = fn(cfg)
    design = DESIGNS[claim]
    assert_checks_follow_the_design(checks, design)
    assert all(len(c.numbers[f"diff_{f}"]) == len(c.numbers[f"outcomes_{f}"]) == 2 for c in checks for f in "AB")
    assert all(c.numbers["plus"] + c.numbers["minus"] + c.numbers["unresolved"] == 4 for c in checks)
    premises = [h for h in hyps if "seeds of a family may fail" in h.text]
    assert premises and all(design.premises[0] in h.text for h in premises)
    assert len(premises) == (3 if claim == "claim5" else 1)
    assert uncovered_numbers(checks, summary) == []
    verdict, _ = decide(hyps, checks)
    assert verdict in VERDICTS
    saved = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())
    assert saved["version"] == DESIGNS[claim].version and saved["families"] == {"A": [3000, 3001], "B": [4000, 4001]}
    assert saved["eval_size"] == 16 and saved["data_seed"] == 1 and saved["run_keys"]
    assert saved["device"] == device
    assert not [p for p in (tmp_path / "testbed").iterdir() if p.name.startswith(".")]   # no temp files left
    json.dumps(summary)
    assert figs == []



@pytest.mark.train
def test_the_claims_share_their_runs_through_the_store(toy, tmp_path, monkeypatch):
    """Claim 4's diverse stage 1 (2 layers × STAGE1_HEADS heads) is claim 9's stage 1
    when the two shapes are one, and with its K2 = L stage 2 claim 5's base runs (trained once); a
    second claim-5 run reads every run back and trains nothing."""
    monkeypatch.setattr(tr, "STAGE1_HEADS", tr.CLAIM9_HEADS)
    cfg = RunConfig(quick=True, out=tmp_path, seed=1)
    tr.claim4(cfg)
    four = json.loads((tmp_path / "testbed" / "claim4.json").read_text())["run_keys"]
    tr.claim9(cfg)
    nine = json.loads((tmp_path / "testbed" / "claim9.json").read_text())["run_keys"]
    assert [four["stage1"][f"diverse_{f}"] for f in "AB"] == [nine["stage1"][f] for f in "AB"]
    tr.claim5(cfg)
    five = json.loads((tmp_path / "testbed" / "claim5.json").read_text())["run_keys"]
    for f in "AB":   # claim 5's base (the same 4-head shape) is claim 4's diverse decoder and run
        assert four["stage1"][f"diverse_{f}"] == five["stage1"][f"base_{f}"]
        assert four["stage2"][f"diverse_L_{f}"] == five["stage2"][f"base_{f}"]
    runs = sorted((tmp_path / "testbed" / "runs" / "runs").glob("*.json"))
    stamps = {p: p.stat().st_mtime_ns for p in runs}

    from mmicl.numerics.runs.kinds import KINDS

    def no_training(*_, **__):
        raise AssertionError("a stored run was trained again")

    for k in ("stage1", "stage2"):
        monkeypatch.setitem(KINDS, k, replace(KINDS[k], compute=no_training))
    tr.claim5(cfg)
    assert {p: p.stat().st_mtime_ns for p in runs} == stamps



@pytest.mark.train
def test_seeds_failing_the_premise_are_left_out_of_the_checks_and_named(toy, tmp_path, monkeypatch):
    monkeypatch.setattr(common, "STAGE1_ICL", 2.0)            # no seed can meet it
    hyps, checks, summary, _ = tr.claim4(RunConfig(quick=True, out=tmp_path, seed=1))
    (premise,) = [h for h in hyps if "may fail" in h.text]
    assert "failing: [3000, 3001]" in premise.detail and premise.met   # 2 failing seeds: at most PREMISE_FAILURES
    assert all(c.numbers["diff_A"] == c.numbers["diff_B"] == [] and c.passed is None for c in checks)
    assert summary["premise_seeds_A"] == summary["premise_seeds_B"] == 0



@pytest.mark.parametrize("claim", ["claim4", "claim5", "claim9"])
def test_other_sizes_are_refused_with_a_fix(claim, tmp_path):
    with pytest.raises(TestbedConfigError, match="--quick"):
        getattr(tr, claim)(RunConfig(quick=False, out=tmp_path))



def test_the_stage1_premise_needs_both_icl_and_an_induction_head():
    final = {"acc_icl": [0.99, 0.95, 0.94, 0.99],
             "induction": [[[0.1], [0.8]], [[0.31], [0.0]], [[0.9], [0.9]], [[0.3], [0.2]]]}
    assert common.stage1_premise(final).tolist() == [True, True, False, False]



def test_select_heads_picks_the_top_a_same_layer_control_and_the_previous_token_head():
    ind = np.array([[[0.1, 0.2, 0.0], [0.9, -0.5, 0.3]],
                    [[0.7, 0.6, 0.6], [0.1, 0.2, 0.3]]])             # (E=2, layers=2, H=3)
    prev = np.array([[[0.2, 0.95, 0.1], [0.0, 0.0, 0.0]],
                     [[0.1, 0.1, 0.1], [0.5, 0.5, 0.4]]])
    h = tr.select_heads(ind, prev)
    assert h["top"].tolist() == [[1, 0], [0, 0]]
    assert h["control"].tolist() == [[1, 1], [0, 1]]                 # lowest of the layer; ties to the first
    assert h["prev"].tolist() == [[0, 1], [1, 0]]
    one = tr.select_heads(ind[:, :, :1], prev[:, :, :1])
    assert one["control"].tolist() == [[-1, -1], [-1, -1]]



def test_head_changes_subtract_before_from_after_at_the_selected_heads():
    before = {"induction": np.zeros((1, 2, 2)), "prev_token": np.full((1, 2, 2), 0.5)}
    after = {"induction": np.array([[[0.0, 0.0], [0.6, 0.1]]]), "prev_token": np.array([[[0.45, 0.0], [0.0, 0.0]]])}
    heads = {"top": np.array([[1, 0]]), "control": np.array([[1, 1]]), "prev": np.array([[0, 0]])}
    d = tr.head_changes(heads, after, before)
    assert d["induction_change_top"][0] == pytest.approx(0.6)
    assert d["induction_change_control"][0] == pytest.approx(0.1)
    assert d["induction_change_top_minus_control"][0] == pytest.approx(0.5)
    assert d["prev_token_change"][0] == pytest.approx(-0.05)
    none = tr.head_changes({**heads, "control": np.array([[-1, -1]])}, after, before)
    assert np.isnan(none["induction_change_top_minus_control"][0])



def test_change_se_sums_the_per_sequence_sds_of_the_terms_over_root_n():
    """Hand-made per-sequence values with known sd: one head's change (a − b on the same sequences)
    has se ≤ (sd_a + sd_b)/√n, attained when the two arms' deviations are exactly opposed; top minus
    control sums four sd's."""
    n = 100
    base = np.array([1.0, -1.0] * (n // 2))                    # mean 0, sample sd √(n/(n−1))
    sd1 = math.sqrt(n / (n - 1))
    a, b = 0.3 * base, -0.1 * base                              # sd 0.3·sd1 and 0.1·sd1, exactly opposed
    heads = {"top": np.array([[0, 0]]), "control": np.array([[0, 1]]), "prev": np.array([[1, 0]])}
    sd_a = {"induction": np.array([[[0.3 * sd1, 0.2], [0, 0]]]), "prev_token": np.array([[[0, 0], [0.3 * sd1, 0]]])}
    sd_b = {"induction": np.array([[[0.1 * sd1, 0.05], [0, 0]]]), "prev_token": np.array([[[0, 0], [0.1 * sd1, 0]]])}
    se = tr.change_se(heads, sd_a, sd_b, n)
    assert se["prev_token_change"][0] == pytest.approx(0.4 * sd1 / math.sqrt(n))
    assert se["prev_token_change"][0] == pytest.approx((a - b).std(ddof=1) / math.sqrt(n))    # attained
    assert se["induction_change_top_minus_control"][0] == pytest.approx((0.4 * sd1 + 0.25) / math.sqrt(n))
    # any pairing of values with these sd's stays within the bound
    rng = np.random.default_rng(0)
    for _ in range(200):
        x, y = rng.normal(size=n), rng.normal(size=n) + rng.normal() * rng.normal(size=1) * rng.normal(size=n)
        assert (x - y).std(ddof=1) <= x.std(ddof=1) + y.std(ddof=1) + 1e-12
    with pytest.raises(ValueError):
        tr.change_se(heads, {**sd_a, "induction": -sd_a["induction"]}, sd_b, n)



@pytest.mark.train
def test_head_score_spread_is_the_sd_of_the_per_sequence_values_behind_the_scores(toy, tmp_path):
    """Claim 9's stage-2 runs record, per head, the mean and sample sd of the per-sequence values; the
    means are the scores the run's own evaluation reports (so the sd's are those values' spread)."""
    from mmicl.numerics.testbed.multimodal_experiments import run_fusion
    from mmicl.numerics.testbed.multimodal_metrics import (head_score_spread, head_scores_multimodal,
                                                           head_scores_per_sequence)
    from mmicl.numerics.runs.runner import stored_arm_results

    tr.claim9(RunConfig(quick=True, out=tmp_path, seed=1))
    saved = json.loads((tmp_path / "testbed" / "claim9.json").read_text())
    assert saved["head_sd"]["n"] == 16 and set(saved["head_sd"]) >= {"frozen_A", "unfrozen_B"}
    record = json.loads((tmp_path / "testbed" / "runs" / "runs" / f"{saved['run_keys']['stage2']['unfrozen_A']}.json")
                        .read_text())
    spread = record["result"]["analysis"]
    final = stored_arm_results(record).run.history
    for m in ("induction", "prev_token"):
        assert np.allclose(spread[m], final.final(m).double().numpy(), atol=1e-5)
        sd = np.asarray(spread[f"{m}_sd"])
        assert sd.shape == (2, 2, 2) and np.all(sd > 0) and np.all(sd <= 2 * math.sqrt(16 / 15))
    # on a system and sets of its own: the sd is the per-sequence values' sample sd, their mean the score
    model = replace(TOY.model, heads=2, ape_slots=3 * TOY.m1.N + 2)
    r = run_fusion(model, TOY.m1, [tr._arm(TOY, TOY.m1.L)], [5], replace(_TRAIN, steps=1, eval_every=1))
    system, sets = r.run.model, r.run.eval_sets
    per = head_scores_per_sequence(system, sets)
    scores = head_scores_multimodal(system, sets)
    got = head_score_spread(system, sets)
    for m in ("induction", "prev_token"):
        assert per[m].shape[1] == got["n"]
        assert np.allclose(per[m].double().mean(1).numpy(), scores[m].numpy(), atol=1e-6)
        assert np.allclose(got[f"{m}_sd"], per[m].double().std(1).numpy())


# ---- version 4 of claim 9: a non-induction control, changes paired by sequence ----------------------
def test_the_v4_control_is_a_non_induction_head_of_the_top_layer_else_of_the_decoder_else_none():
    ind = np.array([
        [[0.9, 0.2], [0.1, 0.8]],     # top (0, 0); its layer's other head 0.2 ≤ 0.5: (0, 1)
        [[0.9, 0.7], [0.1, 0.8]],     # top (0, 0); layer 0 is all induction: the decoder's least, (1, 0)
        [[0.9, 0.7], [0.6, 0.8]],     # every head an induction head: none
    ])
    top = tr.select_heads(ind, np.zeros_like(ind))["top"]
    got = tr.non_induction_control(ind, top, 0.5)
    assert got.tolist() == [[0, 1], [1, 0], [-1, -1]]
    assert tr.non_induction_control(ind, top, 0.75).tolist() == [[0, 1], [0, 1], [0, 1]]
    with pytest.raises(ValueError, match="scores"):
        tr.non_induction_control(ind[0], top, 0.5)


def test_paired_changes_are_means_of_per_sequence_differences_with_their_paired_se():
    """Built so that the pairing matters: both runs share a large per-sequence spread s_i, which the
    paired difference cancels (its se is the spread of the small differences only); a head at
    [−1, −1] gives nan."""
    rng = np.random.default_rng(0)
    E, n, layers, H = 2, 400, 2, 2
    shared = rng.normal(0, 1.0, (E, n, 1, 1))
    before = {"induction": shared + rng.normal(0, 0.01, (E, n, layers, H)),
              "prev_token": shared + rng.normal(0, 0.01, (E, n, layers, H))}
    step = np.array([[0.2, 0.0], [0.0, -0.1]])                               # per head
    after = {"induction": before["induction"] + step + rng.normal(0, 0.01, (E, n, layers, H)),
             "prev_token": before["prev_token"] - 0.05}
    heads = {"top": np.array([[0, 0], [0, 0]]), "control": np.array([[1, 1], [-1, -1]]),
             "prev": np.array([[1, 0], [0, 1]])}
    got = tr.paired_head_changes(heads, after, before)
    d_top = after["induction"][:, :, 0, 0] - before["induction"][:, :, 0, 0]
    assert got["induction_change_top"] == pytest.approx(d_top.mean(1))
    assert got["induction_change_top_se"] == pytest.approx(d_top.std(1, ddof=1) / math.sqrt(n))
    assert got["induction_change_top"] == pytest.approx([0.2, 0.2], abs=0.005)
    assert got["induction_change_top_minus_control"][0] == pytest.approx(0.3, abs=0.005)
    assert math.isnan(got["induction_change_top_minus_control"][1])
    assert got["prev_token_change"] == pytest.approx([-0.05, -0.05])
    # the paired se sees the 0.01 noise, not the shared spread of 1 (the unpaired bound would be ~0.1)
    assert np.all(got["induction_change_top_se"] < 0.002)
    with pytest.raises(ValueError, match="shape"):
        tr.paired_head_changes(heads, {"induction": after["induction"][:, :5], "prev_token": after["prev_token"]},
                               before)


def test_head_score_sequences_are_the_per_sequence_values_rounded(toy):
    from mmicl.numerics.runs.kinds.multimodal import SEQUENCE_DIGITS, head_score_sequences
    from mmicl.numerics.testbed.multimodal_experiments import run_fusion
    from mmicl.numerics.testbed.multimodal_metrics import head_scores_per_sequence

    model = replace(TOY.model, heads=2, ape_slots=3 * TOY.m1.N + 2)
    r = run_fusion(model, TOY.m1, [tr._arm(TOY, TOY.m1.L)], [5], replace(_TRAIN, steps=1, eval_every=1))
    got = head_score_sequences(r)
    per = head_scores_per_sequence(r.run.model, r.run.eval_sets)
    for m in ("induction", "prev_token"):
        arr = np.asarray(got[f"{m}_per_sequence"])
        assert arr.shape == tuple(per[m].shape) and got["n"] == arr.shape[1]
        assert np.abs(arr - per[m].double().numpy()).max() <= 0.5 * 10 ** -SEQUENCE_DIGITS + 1e-12
    from mmicl.numerics.runs.kinds.multimodal import analysis_setting
    assert analysis_setting({"name": "head_score_sequences"}) == {"name": "head_score_sequences"}
