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
def test_each_claim_runs_end_to_end_at_a_toy_size(claim, device, toy, tmp_path, monkeypatch):
    fn = getattr(tr, claim)
    seen = []                                  # what the headroom premises were computed on
    for name in ("headroom", "area_headroom"):
        real = getattr(tr, name)
        monkeypatch.setattr(tr, name, lambda *a, real=real, **k: seen.append(np.asarray(a[0]).tolist()) or real(*a, **k))
    cfg = RunConfig(quick=True, out=tmp_path, seed=1, device=device)
    hyps, checks, summary, figs = fn(cfg)
    design = DESIGNS[claim]
    assert_checks_follow_the_design(checks, design)
    assert all(len(c.numbers[f"diff_{f}"]) == len(c.numbers[f"outcomes_{f}"]) == 2 for c in checks for f in "AB")
    assert all(c.numbers["plus"] + c.numbers["minus"] + c.numbers["unresolved"] == 4 for c in checks)
    premises = [h for h in hyps if "seeds of a family may fail" in h.text]
    assert all(any(p in h.text for h in premises) for p in design.premises)      # every design premise is there
    assert len(premises) == {"claim4": 3, "claim5": 5, "claim9": 2}[claim]
    assert uncovered_numbers(checks, summary) == []
    verdict, _ = decide(hyps, checks)
    assert verdict in VERDICTS
    saved = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())
    assert saved["version"] == DESIGNS[claim].version and saved["families"] == {"A": [5000, 5001], "B": [6000, 6001]}
    assert saved["family_data_seeds"] == {"A": 101, "B": 102}          # each family its own data stream
    assert saved["scope"].startswith("quick size: N = 4 context pairs, B = 1")    # the size, for the docs' table
    assert saved["eval_size"] == 16 and saved["data_seed"] == 1 and saved["run_keys"]
    stage1 = [json.loads((tmp_path / "testbed" / "runs" / "runs" / f"{k}.json").read_text())
              for k in saved["run_keys"]["stage1"].values()]
    assert {r["config"]["data_seed"] for r in stage1} == {101, 102}
    # each headroom premise is read on the arm the design names, from the numbers the result file keeps
    if claim == "claim4":                      # on the low-K1 arm's final M2-necessary ICL
        lows = [saved["tables"][f"lowK1_L_{f}"]["K2=4"]["acc_icl_m2only"]["seeds"] for f in "AB"]
        assert [np.round(v, 4).tolist() for v in seen] == lows
    if claim == "claim5":                      # on the base's areas
        assert [np.round(v, 5).tolist() for v in seen] == [saved["auc"][f"base_{f}"] for f in "AB"]
    assert saved["device"] == device
    assert not [p for p in (tmp_path / "testbed").iterdir() if p.name.startswith(".")]   # no temp files left
    json.dumps(summary)
    assert figs == []



@pytest.mark.train
def test_the_claims_share_their_runs_through_the_store(toy, tmp_path, monkeypatch):
    """Claim 4's diverse stage 1 is claim 9's decoder and claim 5's base, and its K2 = L stage 2 is
    claim 5's base run and claim 9's frozen arm (trained once); a second claim-5 run reads every run
    back and trains nothing."""
    cfg = RunConfig(quick=True, out=tmp_path, seed=1)
    keys = {}
    for claim in ("claim4", "claim9", "claim5"):
        getattr(tr, claim)(cfg)
        keys[claim] = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())["run_keys"]
    for f in "AB":
        assert len({keys[c]["stage1"][f"diverse_{f}"] for c in keys}) == 1
        assert len({keys[c]["stage2"][f"diverse_L_{f}"] for c in keys}) == 1
    assert keys["claim9"]["stage2"]["unfrozen_L_A"] != keys["claim9"]["stage2"]["diverse_L_A"]
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
    premise = next(h for h in hyps if "may fail" in h.text and "stage-1 decoder" in h.text)
    assert "failing: [5000, 5001]" in premise.detail and premise.met   # 2 failing seeds: at most PREMISE_FAILURES
    assert all(c.numbers["diff_A"] == c.numbers["diff_B"] == [] and c.passed is None for c in checks)
    assert summary["premise_stage1_seeds_A"] == summary["premise_stage1_seeds_B"] == 0



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
def test_claim9_pairs_the_two_arms_sequence_by_sequence_from_their_stored_values(toy, tmp_path):
    """Claim 9's decided changes are the means of the per-sequence differences that the two stored
    stage-2 runs record (unfrozen minus frozen at the chosen heads), with their paired se; the frozen
    arm's means are the scores its own evaluation reports (so the stored values are that evaluation's)."""
    from mmicl.numerics.runs.runner import stored_arm_results

    hyps, checks, summary, _ = tr.claim9(RunConfig(quick=True, out=tmp_path, seed=1))
    saved = json.loads((tmp_path / "testbed" / "claim9.json").read_text())

    def record(name):
        return json.loads((tmp_path / "testbed" / "runs" / "runs" / f"{saved['run_keys']['stage2'][name]}.json")
                          .read_text())

    for f in "AB":
        after, before = (np.asarray(record(f"{r}_{f}")["result"]["analysis"]["induction_per_sequence"])
                         for r in ("unfrozen_L", "diverse_L"))
        assert after.shape == before.shape == (2, 16, 2, 2)
        top = np.asarray(saved["selected"][f]["top"])
        d = np.stack([after[e, :, l, h] - before[e, :, l, h] for e, (l, h) in enumerate(top)])
        got = saved["paired_changes"][f]
        assert got["induction_change_top"] == pytest.approx(d.mean(1).tolist(), abs=1e-5)
        assert got["induction_change_top_se"] == pytest.approx((d.std(1, ddof=1) / 4).tolist(), abs=1e-5)
        frozen = stored_arm_results(record(f"diverse_L_{f}")).run.history.final("induction").double().numpy()
        assert np.allclose(before.mean(1), frozen, atol=1e-4)
    (first,) = [c for c in checks if c.name == DESIGNS["claim9"].checks[0].name]
    kept = [x for f in "AB" for x in first.numbers[f"diff_{f}"]]
    assert kept == pytest.approx([x for f in "AB" for x in saved["paired_changes"][f]["induction_change_top"]], abs=1e-5)


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


# ---- version 4: the shared runs, the no-stage-2 baseline ------------------------------------------------
def test_the_v4_runs_share_the_diverse_decoder_and_name_their_analysis():
    cfg = RunConfig(quick=True)
    sz = tr.v4_size(cfg, "claim4")
    s1, s2 = tr.v4_stage1_settings(cfg, sz), tr.v4_stage2_settings(cfg, sz)
    assert set(s2) == {f"{r}_{f}" for r in tr.V4_STAGE2 for f in "AB"}
    for f, data in (("A", 1), ("B", 2)):           # data seed 100 · 0 + offset
        assert s1[f"diverse_{f}"]["data_seed"] == data
        for run in ("diverse_L", "diverse_16L", "unfrozen_L"):
            assert s2[f"{run}_{f}"]["stage1"] == s1[f"diverse_{f}"]
        assert s2[f"lowK1_L_{f}"]["stage1"] == s1[f"lowK1_{f}"]
        assert s2[f"diverse_L_{f}"]["analysis"] == s2[f"unfrozen_L_{f}"]["analysis"] == tr.V4_ANALYSIS
        assert s2[f"unfrozen_L_{f}"]["trainable"] == "all" and s2[f"diverse_L_{f}"]["trainable"] == "projector+readout"
        assert s2[f"unfrozen_L_{f}"]["train"]["lr"] == pytest.approx(s2[f"diverse_L_{f}"]["train"]["lr"] * tr.UNFROZEN_LR)
    m2 = s2["diverse_L_A"]["arms"][0]["data"]["m2"]
    assert m2["distractor_dims"] > 0 and m2["K"] == sz.m1.L
    assert s2["diverse_16L_A"]["arms"][0]["data"]["m2"]["K"] == tr.K2_WIDE * sz.m1.L
    deep, matched = s1["deep_A"]["model"], s1["deep_matched_A"]["model"]
    assert deep["layers"] == matched["layers"] == sz.deep_layers and matched["width"] < deep["width"]


def test_area_headroom_is_room_for_the_margin_and_two_se_below_one():
    got = tr.area_headroom([0.9, 0.95, 0.5], [0.01, 0.01, 0.3], 0.03)
    assert got.tolist() == [True, False, False]          # 0.95 + 0.03 + 0.02 = 1.0 is no room; 0.5 + 0.03 + 0.6 > 1


def test_the_no_stage2_baseline_is_step_0_and_must_learn_reads_it_against_copy_plus_a_tenth():
    class Run:
        def __init__(self, steps):
            self.steps = steps

        def curve(self, metric, arm):
            return np.array([[0.2, 0.4], [0.9, 0.95]])

    assert tr.no_stage2(Run([0, 50]), "acc_icl_m2only", "K2=16").tolist() == [0.2, 0.4]
    with pytest.raises(RuntimeError, match="step 0"):
        tr.no_stage2(Run([50, 100]), "acc_icl_m2only", "K2=16")
    assert tr.must_learn([0.2, 0.225, 0.23], 0.125).tolist() == [True, True, False]
