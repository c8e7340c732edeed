"""Run a sweep on Dask: every run not yet finished in the store, one task each.

``run_sweep(runs, store)`` starts a ``LocalCluster`` (one single-threaded worker process per CPU
core, or ``workers``), or connects to ``scheduler`` (the address of an existing cluster, e.g. one
started on SLURM with dask-jobqueue).  Finished runs (status "done") are skipped; failed ones are
run again.  Each result is written to the store as it arrives, so a sweep killed midway keeps every
run it had finished, and the next call runs only the others.  A run whose file the store set aside
when it was opened (damaged, edited, relabelled, a duplicate, or from an earlier mmicl: see
``store``) has no record there and is run again.  A testbed run in training keeps a snapshot in
the store (``artifacts.snapshot_for``, every ``SNAPSHOT_EVERY_S`` seconds), so a run killed while
it trains resumes from its last snapshot; the snapshot goes once the run's record is stored (a run
sent to a cluster on other machines keeps none unless its workers set ``STORE_ENV`` to the same
store on a shared file system).  ``run_here`` does the same in this
process, one run after the other, with each run's own progress bar (what the testbed claims use when
no cluster is given).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .artifacts import ARTIFACTS, StoredArtifactError, discard_snapshot, load_stage1, using_store
from .key import RunSpec
from .kinds import KINDS
from .record import execute
from .store import Store
from mmicl.numerics.progress import progress_bar

__all__ = ["SweepSummary", "pending", "run_sweep", "torch_friendly_environ", "run_here", "run_pending",
           "finished_records", "recheck_stage1", "stored_stage1", "stored_arm_results"]



@dataclass
class SweepSummary:
    total: int
    skipped: int
    done: int
    failed: int


def pending(runs: list[RunSpec], store: Store) -> list[RunSpec]:
    """The runs of the sweep, each key once, whose store record is missing or failed."""
    seen, out = set(), []
    for r in runs:
        if r.key in seen:
            continue
        seen.add(r.key)
        if store.status(r.key) != "done":
            out.append(r)
    return out


def _plan(runs: list[RunSpec], store: Store) -> tuple[list[RunSpec], SweepSummary]:
    """The pending runs, and the summary that counts the others as skipped."""
    todo = pending(runs, store)
    unique = len({r.key for r in runs})
    return todo, SweepSummary(total=unique, skipped=unique - len(todo), done=0, failed=0)


def _keep(record: dict, store: Store, summary: SweepSummary) -> None:
    """Store one finished run's record and count it (a finished run's training snapshot goes)."""
    store.write(record)
    if record["status"] == "done":
        discard_snapshot(store.root, record["key"])
        summary.done += 1
    else:
        summary.failed += 1


def run_sweep(runs: list[RunSpec], store: Store, scheduler: str | None = None, workers: int | None = None,
              progress: bool = False) -> SweepSummary:
    import dask
    from dask.distributed import Client, LocalCluster, as_completed

    todo, summary = _plan(runs, store)
    if not todo:
        return summary
    cluster = None
    if scheduler is None:
        n = workers or os.cpu_count() or 1
        with dask.config.set({"distributed.nanny.pre-spawn-environ": torch_friendly_environ(),
                              "distributed.worker.profile.enabled": False}), using_store(store):
            # the workers start with STORE_ENV set: stage 2 finds its stage-1 checkpoint, a long run
            # keeps its snapshot, in this store
            cluster = LocalCluster(n_workers=min(n, len(todo)), threads_per_worker=1, processes=True,
                                   dashboard_address=":0")
        client = Client(cluster)
    else:
        client = Client(scheduler)
    bar = _progress(progress, len(todo))
    try:
        futures = [client.submit(_execute_on_worker, r.kind, r.config, r.key, key=f"mmicl-run-{r.key}", pure=False)
                   for r in todo]
        for fut in as_completed(futures):
            _keep(fut.result(), store, summary)
            if bar is not None:
                bar[0].update(bar[1], advance=1)
    finally:
        if bar is not None:
            bar[0].stop()
        client.close()
        if cluster is not None:
            cluster.close()
    return summary


def torch_friendly_environ() -> dict:
    """Dask's environment for new worker processes without ``MALLOC_TRIM_THRESHOLD_``.

    Dask sets it (65536) to return memory to the system sooner; fixing that threshold also fixes
    glibc's mmap threshold, so every large tensor a training step allocates is mmapped and unmapped
    afresh.  Measured on this package's testbed (8 models, 100 steps, one thread): 18–21 s in a
    worker process with it, 11.6 s without, 8.4 s in a plain process.  (``run_sweep`` also turns off
    the workers' statistical profiler, which samples every task's stack every few milliseconds.)"""
    import dask

    env = dict(dask.config.get("distributed.nanny.pre-spawn-environ", default={}) or {})
    env.pop("MALLOC_TRIM_THRESHOLD_", None)
    return env


def run_here(runs: list[RunSpec], store: Store, progress: bool = False) -> SweepSummary:
    """``run_sweep`` without a cluster: the pending runs one after the other in this process (torch
    keeps its own thread count), each stored as it finishes."""
    todo, summary = _plan(runs, store)
    with using_store(store):  # stage 2 finds its stage-1 checkpoint, a long run keeps its snapshot, there
        for i, r in enumerate(todo):
            _keep(execute(r.kind, r.config, r.key, progress=progress,
                          description=f"{r.kind} run {i + 1}/{len(todo)} ({r.key})"), store, summary)
    return summary


def run_pending(runs: list[RunSpec], store: Store, scheduler: str | None = None) -> SweepSummary:
    """Each run not yet done in ``store`` (each key once), on the Dask ``scheduler`` when one is
    given, else here (``run_here``), with progress bars."""
    unique = list({r.key: r for r in runs}.values())
    if scheduler:
        return run_sweep(unique, store, scheduler=scheduler, progress=True)
    return run_here(unique, store, progress=True)


def finished_records(specs: dict[str, RunSpec], store: Store, what: str = "run") -> dict[str, dict]:
    """The finished record of each named run in ``store``; a RuntimeError naming the run (``what``
    and name), why it did not finish and the file of its record, for the first that did not."""
    out = {}
    for name, spec in specs.items():
        record = store.record(spec.key)
        if record is None or record["status"] != "done":
            why = "no record" if record is None else record.get("error")
            raise RuntimeError(f"the {what} {name} of this claim did not finish ({why}); its record is "
                               f"{store.runs / (spec.key + '.json')}")
        out[name] = record
    return out


def _execute_on_worker(kind: str, config: dict, key: str) -> dict:
    """``execute`` on a Dask worker, with torch using the worker's threads (not every core of the
    node, which each worker process would otherwise claim)."""
    try:
        from dask.distributed import get_worker

        threads = get_worker().state.nthreads
    except (ImportError, ValueError, AttributeError):
        threads = None
    if threads:
        import torch

        torch.set_num_threads(int(threads))
    return execute(kind, config, key)


def _progress(enabled: bool, total: int):
    if not enabled:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, TimeRemainingColumn


    p = progress_bar("sweep", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    p.start()
    return p, p.add_task("sweep", total=total)


def recheck_stage1(runs: list[RunSpec], store: Store) -> list[str]:
    """Verify the checkpoint of every finished ``stage1`` run among ``runs`` (``load_stage1``); one
    that fails is set aside with its record (``<name>.corrupt``, one warning line each), so that
    ``run_pending`` trains that stage 1 again.  The keys set aside."""
    import warnings

    redo = []
    with using_store(store) as root:
        for spec in {r.key: r for r in runs if r.kind == "stage1"}.values():
            record = store.record(spec.key)
            if record is None or record["status"] != "done":
                continue
            try:
                load_stage1(root, record)
            except StoredArtifactError as e:
                path = root / ARTIFACTS / f"{spec.key}.pt"
                moved = ""
                if path.exists():
                    os.replace(path, path.with_name(path.name + ".corrupt"))
                    moved = f" (moved to {path.name}.corrupt, its record to {spec.key}.json.corrupt)"
                store.discard(spec.key, e.problem)
                warnings.warn(f"mmicl: {e.problem}{moved}; training stage 1 again", RuntimeWarning, stacklevel=2)
                redo.append(spec.key)
    return redo


def stored_stage1(store, settings: dict, progress: bool = False):
    """The ``Stage1`` of these ``stage1`` settings, from the results store ``store`` (a writable
    ``Store``): read back and verified (``load_stage1``) when a finished run is there, else trained
    as a ``stage1`` run and stored (its record, and its checkpoint in ``artifacts/``).  A stored
    checkpoint that fails verification is set aside (``recheck_stage1``: one warning line) and stage 1
    is trained again; a run that fails raises ``RuntimeError`` (one line, with its error)."""
    spec = RunSpec("stage1", KINDS["stage1"].normalise(settings))
    recheck_stage1([spec], store)
    with using_store(store) as root:
        record = store.record(spec.key)
        if record is None or record["status"] != "done":
            record = execute("stage1", spec.config, spec.key, progress=progress,
                             description=f"stage1 run ({spec.key})")
            store.write(record)
        if record["status"] != "done":
            raise RuntimeError(f"the stage1 run {spec.key} failed ({record['error']}); its record is "
                               f"{store.runs / (spec.key + '.json')}")
        return load_stage1(root, record)


def stored_arm_results(record: dict):
    """The ``ArmResults`` (curves; no models) of a finished ``stage2`` or ``fusion`` record, as
    ``run_stage2`` / ``run_fusion`` would return them: its arms, its seeds (the stage-1 seeds of a
    stage-2 run) and its history, timed by the record's provenance."""
    from mmicl.numerics.testbed.experiments import ArmResults, StoredRun
    from mmicl.numerics.testbed.multimodal_experiments import arms_from_json
    from mmicl.numerics.testbed.train import History

    config = record["config"]
    history = History.from_json(record["result"]["history"])
    history.seconds = float(record["provenance"].get("seconds") or 0.0)
    seeds = config["stage1"]["seeds"] if record["kind"] == "stage2" else config["seeds"]
    return ArmResults(arms_from_json(config["arms"]), list(seeds), StoredRun(history))
