"""The testbed claims in the registry: registered, not run by a plain ``mmicl verify``, and their runs
sent to a Dask scheduler land in the claim's results store with the same result as when they train in
this process."""
from __future__ import annotations

import pytest

import torch

from mmicl.proofs.claim import RunConfig
from mmicl.proofs.registry import REGISTRY
from mmicl.proofs.verify import select
from toy_testbed import toy_unimodal

torch.set_num_threads(1)


def test_testbed_claims_are_registered_but_not_run_by_default():
    ids = {f"testbed.claim{i}" for i in (1, 2, 3, 4, 5, 6, 7, 8, 9)}
    assert ids <= set(REGISTRY)
    assert not ids & {c.id for c in select([])}
    assert {c.id for c in select(["testbed.*"])} == ids
    assert all(REGISTRY[c].default is False and REGISTRY[c].origin == "built-in" for c in ids)


@pytest.mark.train
def test_a_claim_sends_its_runs_to_a_dask_scheduler_and_stores_them(tmp_path, monkeypatch):
    """With ``scheduler`` set, a claim's ensembles run on that cluster and land in OUT/testbed/runs;
    the claim's result is the same as when it trains in this process."""
    from dask.distributed import LocalCluster

    from mmicl.numerics.runs.store import Store

    toy_unimodal(monkeypatch)
    here = REGISTRY["testbed.claim2"].run(RunConfig(quick=True, out=tmp_path / "here", seed=1))
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as cluster:
        there = REGISTRY["testbed.claim2"].run(RunConfig(quick=True, out=tmp_path / "there", seed=1,
                                                         scheduler=cluster.scheduler_address))
    store = Store(tmp_path / "there" / "testbed" / "runs")
    assert store.summary() == {"done": 4 * 2}  # four shapes, two seed families
    assert [c.numbers for c in there.checks] == [c.numbers for c in here.checks]
