"""The testbed claims and commands run end to end at a toy size (structure only: verdicts,
evidence, figures, files).  Whether the claims hold is measured by ``mmicl verify --quick --claim
'testbed.*'`` (minutes), not asserted here."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest
import torch
from click.testing import CliRunner

import mmicl.proofs.claims.testbed as tb
from mmicl.numerics.testbed.config import TrainConfig
from mmicl.proofs.claim import RunConfig
from mmicl.proofs.registry import REGISTRY
from mmicl.proofs.verify import select

torch.set_num_threads(1)

TOY = replace(tb.QUICK, model=replace(tb.QUICK.model, width=8), seeds=2, K_grid=(64, 256), K_mid=128, K_hi=256, K_edge=64,
              train=TrainConfig(steps=4, batch=8, lr=1e-3, eval_every=2, eval_size=16),
              heads_grid=(1, 2), layers_grid=(2, 3), claim8_seeds=3)


def test_testbed_claims_are_registered_but_not_run_by_default():
    ids = {f"testbed.claim{i}" for i in (1, 2, 3, 4, 5, 6, 7, 8, 9)}
    assert ids <= set(REGISTRY)
    assert not ids & {c.id for c in select([])}
    assert {c.id for c in select(["testbed.*"])} == ids


@pytest.mark.parametrize("claim", ["testbed.claim1", "testbed.claim2", "testbed.claim8"])
def test_each_version_2_claim_runs_at_toy_size_and_writes_its_evidence(claim, tmp_path, monkeypatch):
    monkeypatch.setattr(tb, "QUICK", TOY)
    fn = getattr(tb, claim.split(".")[1])
    hyps, checks, summary, figures = tb.threaded(fn)(RunConfig(quick=True, out=tmp_path, seed=1))
    assert checks and all(c.tolerance for c in checks)
    assert all(__import__("os").path.exists(p) for p in figures)
    n = claim.rsplit("claim", 1)[1]
    saved = json.loads((tmp_path / "testbed" / f"claim{n}.json").read_text())
    assert saved["sizes"]["seeds"] == 2 and saved["version"] == 2


def _toy_v3(monkeypatch):
    import mmicl.proofs.claims.testbed_v3_claims as v3c

    monkeypatch.setattr(tb, "QUICK", TOY)
    monkeypatch.setattr(v3c, "FAMILIES", {"A": (3000, 3001), "B": (4000, 4001)})
    monkeypatch.setattr(v3c, "EVAL_SIZE", 16)
    monkeypatch.setattr(v3c, "EVAL_EVERY_TRANSITION", 2)
    # claim 3's piloted K_both arms train steps_both steps: the toy size's steps, not the quick size's 3000
    monkeypatch.setitem(v3c.PILOTED, "claim3", v3c.PILOTED["claim3"] | {"steps_both": TOY.train.steps})
    return v3c


@pytest.mark.parametrize("claim", ["claim1", "claim2", "claim3", "claim8"])
def test_each_version_3_claim_runs_at_toy_size_and_writes_its_evidence(claim, tmp_path, monkeypatch):
    """Version 3 at the toy size, with two seeds per family and small evaluation sets (the design's
    8 and 1024 are for the verdict runs): every pre-registered check is there and decided by the
    pooled sign test with a tolerance for every number, and the claim file records the version and
    the families."""
    v3c = _toy_v3(monkeypatch)
    res = REGISTRY[f"testbed.{claim}"].run(RunConfig(quick=True, out=tmp_path, seed=1))
    assert res.verdict in ("holds", "fails", "inconclusive", "hypothesis-not-met"), res.verdict_reason
    assert [c.name for c in res.checks] == [c.name for c in v3c.DESIGNS[claim].checks]
    for c in res.checks:
        assert "sign test" in c.tolerance
        assert isinstance(c.atol, dict) and set(c.numbers) <= set(c.atol), (c.name, set(c.numbers) - set(c.atol))
    saved = json.loads((tmp_path / "testbed" / f"{claim}.json").read_text())
    assert saved["version"] == v3c.VERSIONS[claim] and saved["families"] == {"A": [3000, 3001], "B": [4000, 4001]}
    assert set(saved["seconds"]) == set(saved["tables"])
    if claim in v3c.PILOTED:
        assert saved["piloted"] == v3c.PILOTED[claim]


def test_testbed_train_command_prints_json_curves():
    from mmicl.cli import main

    r = CliRunner().invoke(main, ["testbed", "train", "--quick", "--steps", "3", "--eval-every", "3", "--seeds", "2",
                                  "--width", "8", "--batch", "8", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert out["history"]["steps"] == [0, 3] and len(out["final"]["acc_icl"]["seeds"]) == 2


def test_testbed_rejects_bad_settings_with_a_message():
    from mmicl.cli import main

    r = CliRunner().invoke(main, ["testbed", "train", "--quick", "--K", "100", "--steps", "1"])
    assert r.exit_code != 0 and "multiple of L" in r.output


def test_a_claim_sends_its_runs_to_a_dask_scheduler_and_stores_them(tmp_path, monkeypatch):
    """With ``scheduler`` set, a claim's ensembles run on that cluster and land in OUT/testbed/runs;
    the claim's result is the same as when it trains in this process."""
    from dask.distributed import LocalCluster

    from mmicl.numerics.runs.store import Store

    _toy_v3(monkeypatch)
    here = REGISTRY["testbed.claim2"].run(RunConfig(quick=True, out=tmp_path / "here", seed=1))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        there = REGISTRY["testbed.claim2"].run(RunConfig(quick=True, out=tmp_path / "there", seed=1,
                                                         scheduler=cluster.scheduler_address))
    store = Store(tmp_path / "there" / "testbed" / "runs")
    assert store.summary() == {"done": 4 * 2}  # four shapes, two seed families
    assert [c.numbers for c in there.checks] == [c.numbers for c in here.checks]
