"""Claims 6 and 7 of the testbed (proofs/claims/testbed/modalities.py): the pure pieces on hand-made
inputs with known answers (the se of a follow-rate difference, of an AUC and of a slope), and both
claims end to end at a toy size through the results store, on the CPU and, where there is one, a CUDA
device (structure only: names, tolerances, verdict, JSON with its device, resuming; no trajectory is
asserted)."""

from __future__ import annotations
import json
import math
from pathlib import Path
import numpy as np
import pytest
import torch
from mmicl.proofs.claims.testbed import modalities as mod
from mmicl.proofs.claims.testbed import design as designs
from mmicl.numerics.testbed.config import TestbedConfigError
from mmicl.numerics.testbed.experiments import area_under
from mmicl.numerics.testbed.train import History
from mmicl.compare import number_keys
from mmicl.proofs.claim import RunConfig, VERDICTS, decide, tolerance_of
from claim_checks import assert_checks_follow_the_design
from toy_testbed import TOY_PILOTED_MODALITIES, toy_modalities


torch.set_num_threads(1)



STUDIES = Path(__file__).resolve().parents[3] / "studies" / "results"



# ---- standard errors -------------------------------------------------------------------------------
def test_follow_difference_se_is_the_multinomial_one():
    n = 1000
    assert mod.follow_difference_se(0.5, 0.5, 1.0, 0.0, n) == pytest.approx(math.sqrt(1 / n))   # ±1 coin; a sure arm
    assert mod.follow_difference_se(0.3, 0.2, 0.3, 0.2, n) == pytest.approx(math.sqrt(2 * (0.5 - 0.01) / n))
    rng = np.random.default_rng(0)          # Monte Carlo: X = 1[adjacent] − 1[other], p = (0.3, 0.2, 0.5)
    x = rng.choice([1, -1, 0], p=[0.3, 0.2, 0.5], size=(4000, n)).mean(1)
    assert x.std() == pytest.approx(mod.follow_difference_se(0.3, 0.2, 0, 0, n), rel=0.05)



def test_auc_is_the_area_under_and_its_se_bound_lies_between_the_independent_and_the_per_item_bounds():
    steps = [0, 25, 50, 100, 200]
    curve = np.array([[0.1, 0.5], [0.3, 0.5], [0.6, 0.5], [0.8, 0.5], [0.9, 0.5]])
    h = History(steps=steps, metrics={"acc": [torch.tensor(r, dtype=torch.float64) for r in curve]})
    auc, se = mod.auc_and_se(steps, curve, 400)
    np.testing.assert_allclose(auc, area_under(h, "acc"), rtol=1e-12)
    assert auc[1] == pytest.approx(0.5) and se[1] == pytest.approx(math.sqrt(0.25 / 400))  # constant curve
    w = np.array([12.5, 25, 37.5, 75, 50]) / 200                                          # trapezoid weights
    assert se[0] == pytest.approx(w @ np.sqrt(curve[:, 0] * (1 - curve[:, 0]) / 400))
    assert math.sqrt(w ** 2 @ (curve[:, 0] * (1 - curve[:, 0])) / 400) < se[0] <= math.sqrt(auc[0] * (1 - auc[0]) / 400)
    with pytest.raises(ValueError):
        mod.auc_and_se(steps, curve[:3], 400)



# ---- the claims end to end at a toy size -------------------------------------------------------------
@pytest.fixture
def toy(monkeypatch):
    toy_modalities(monkeypatch)


def _uncovered(numbers, atol, rtol):
    return {k for k in number_keys(numbers) if tolerance_of(atol, rtol, k) is None}



@pytest.mark.train
@pytest.mark.parametrize("claim", ["claim6", "claim7"])
def test_each_claim_runs_at_toy_size_states_every_tolerance_and_resumes_from_its_store(claim, device, toy,
                                                                                       tmp_path, monkeypatch):
    fn = getattr(mod, claim)
    seen = []
    if claim == "claim7":   # a toy encoder's doses span little accuracy: let every seed into the checks
        monkeypatch.setattr(mod, "SPAN", -1.0)
        real = mod.area_headroom
        monkeypatch.setattr(mod, "area_headroom", lambda a, *r: seen.append(np.asarray(a).tolist()) or real(a, *r))
    cfg = RunConfig(quick=True, out=tmp_path, seed=1, device=device)
    hyps, checks, summary, figs = fn(cfg)
    design = designs.DESIGNS[claim]
    assert_checks_follow_the_design(checks, design)
    assert any(design.premises[0] in h.text for h in hyps)
    for c in checks:
        assert c.numbers_tolerance and not _uncovered(c.numbers, c.atol, c.rtol), c.name
    assert summary.why and not _uncovered(dict(summary), summary.atol, summary.rtol)
    verdict, _ = decide(hyps, checks)
    assert verdict in VERDICTS
    doc = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())
    assert doc["version"] == designs.DESIGNS[claim].version and doc["families"] == {"A": [5000, 5001], "B": [6000, 6001]}
    assert doc["piloted"] == json.loads(json.dumps(TOY_PILOTED_MODALITIES[f"v4_{claim}"]))
    eps2 = {"claim6": 0.1, "claim7": 1}[claim]                      # claim 7's own M2 in its scope
    assert doc["scope"].startswith("quick size: N = 4 context pairs") and f"ε2 = {eps2:g}" in doc["scope"]
    # the staged decoder is version 4's diverse stage 1, the run claims 4, 5 and 9 read
    from mmicl.numerics.runs.key import RunSpec
    from mmicl.numerics.runs.kinds import KINDS
    from mmicl.proofs.claims.testbed import transfer

    diverse = transfer.v4_stage1_settings(cfg, mod.v4_size(cfg, claim), ("diverse",))
    for f in "AB":
        assert doc["run_keys"][f"stage1_{f}"] == RunSpec("stage1", KINDS["stage1"].normalise(diverse[f"diverse_{f}"])).key
    assert doc["device"] == device
    if claim == "claim7":   # the decided gain is slope × the seed's span; the ceiling premise reads the lowest dose
        gain = next(c for c in checks if c.name == design.checks[0].name)
        for f in "AB":
            slope, span = np.asarray(doc["slope"][f], float), np.asarray(doc["span"][f], float)
            auc, se = np.asarray(doc["auc_icl_m2known"][f][0]), np.asarray(doc["auc_se_bound"][f][0])
            room = auc + design.checks[0].margin + 2 * se < 1
            assert doc["premise"]["headroom"][f] == room.tolist()
            keep = np.asarray(doc["premise"]["span"][f]) & np.asarray(doc["stage1_premise"][f]) & room & np.isfinite(slope)
            assert keep.any() and gain.numbers[f"diff_{f}"] == pytest.approx((slope * span)[keep].tolist())
        assert seen[:2] == [doc["auc_icl_m2known"][f][0] for f in "AB"]      # the ceiling check reads the lowest dose
    # a second run reads every run back from OUT/testbed/runs: nothing trains
    import mmicl.numerics.runs.runner as runner

    monkeypatch.setattr(runner, "execute", lambda *a, **k: pytest.fail("a stored run was trained again"))
    again = fn(cfg)
    assert again[1][0].numbers == checks[0].numbers



@pytest.mark.train
def test_a_damaged_stored_stage1_checkpoint_is_set_aside_and_trained_again(toy, tmp_path, monkeypatch):
    """One byte changed in a stored stage-1 checkpoint: the next run warns once, moves it and its
    record to *.corrupt, trains that stage 1 (and only it) again, and finishes the claim."""
    import mmicl.numerics.runs.runner as runner

    cfg = RunConfig(quick=True, out=tmp_path, seed=1)
    mod.claim6(cfg)
    artifacts = sorted((tmp_path / "testbed" / "runs" / "artifacts").glob("*.pt"))
    assert artifacts
    damaged = artifacts[0]
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    real, trained = runner.execute, []

    def counting(kind, config, key, **kw):
        trained.append((kind, key))
        return real(kind, config, key, **kw)

    monkeypatch.setattr(runner, "execute", counting)
    with pytest.warns(RuntimeWarning, match="training stage 1 again") as seen:
        hyps, checks, summary, _ = mod.claim6(cfg)
    assert len([w for w in seen if "training stage 1 again" in str(w.message)]) == 1
    assert trained == [("stage1", damaged.stem)]
    assert damaged.is_file() and damaged.with_name(damaged.name + ".corrupt").is_file()
    assert (damaged.parents[1] / "runs" / f"{damaged.stem}.json.corrupt").is_file()
    assert decide(hyps, checks)[0] in VERDICTS


def test_both_claims_refuse_other_sizes_than_quick(toy, tmp_path):
    for fn in (mod.claim6, mod.claim7):
        with pytest.raises(TestbedConfigError, match="--quick"):
            fn(RunConfig(quick=False, out=tmp_path, seed=1))



@pytest.mark.train
def test_claim7_runs_at_another_evaluation_size_when_asked(toy, tmp_path):
    mod.claim7(RunConfig(quick=True, out=tmp_path, seed=1), eval_size=40)  # the toy's own is 24
    doc = json.loads((tmp_path / "testbed" / "claim7.json").read_text())
    assert doc["eval_size"] == 40



def test_claim7s_design_evaluates_on_more_items_than_the_other_claims():
    assert mod.EVAL_SIZE7 == 8192 > designs.EVAL_SIZE and f"{mod.EVAL_SIZE7} items" in designs.DESIGNS["claim7"].arms["dose_k"]



# ---- claim 6, version 4 -------------------------------------------------------------------------------
@pytest.mark.train
def test_claim6_reads_each_arms_preference_in_its_own_layout_and_names_each_premise(toy, tmp_path, monkeypatch):
    """The fusion arms run in their three layouts on the families' own data streams; each decided
    difference is the arm's conflict preference (label-adjacent minus other in that layout's context,
    M1 minus M2 for the staged arm) as the result file records the follow rates."""
    from mmicl.numerics.testbed.multimodal_model import adjacent_modality

    monkeypatch.setattr(mod, "above_copy", lambda icl, *a, **k: np.ones(np.shape(icl), bool))   # every seed in
    hyps, checks, summary, _ = mod.claim6(RunConfig(quick=True, out=tmp_path, seed=1))
    doc = json.loads((tmp_path / "testbed" / "claim6.json").read_text())
    assert doc["layouts"] == {**mod.LAYOUTS6, "staged_readout": "readout_last"}
    assert {adjacent_modality(l) for l in mod.LAYOUTS6.values()} == {"m1", "m2"}
    runs = tmp_path / "testbed" / "runs" / "runs"
    for name in mod.LAYOUTS6:
        for f, data in (("A", 101), ("B", 102)):
            rec = json.loads((runs / f"{doc['run_keys'][f'{name}_{f}']}.json").read_text())
            assert rec["config"]["data_seed"] == data and rec["config"]["arms"][0]["data"]["layout"] == mod.LAYOUTS6[name]
    premises = [h.text for h in hyps if "may fail" in h.text]
    assert len(premises) == 5 and all(any(f"[{n}," in t for t in premises) for n in doc["layouts"])
    for c, planned in zip(checks, designs.DESIGNS["claim6"].checks):
        for f in "AB":
            rates = {m: doc["conflict_follow"][f"{planned.a}_{f}"][m] for m in ("m1", "m2")}
            first = "m1" if planned.metric == "follow_m1_minus_m2" else adjacent_modality(doc["layouts"][planned.a])
            pref = np.subtract(rates[first], rates["m2" if first == "m1" else "m1"])
            if planned.b == "zero":
                assert c.numbers[f"diff_{f}"] == pytest.approx(pref.tolist())


def test_claim6_says_how_to_run_its_pilot_when_it_has_not_chosen(toy, tmp_path, monkeypatch):
    from mmicl.proofs.claims.testbed import pilots as p

    monkeypatch.delitem(p.PILOTED, "v4_claim6")
    with pytest.raises(TestbedConfigError, match="pilot_v4_claim6.py"):
        mod.claim6(RunConfig(quick=True, out=tmp_path, seed=1))
