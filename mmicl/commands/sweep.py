"""``mmicl sweep SPEC.toml``: run a grid of runs on Dask into a results store; ``--status`` and
``--export`` read a store.

SPEC is a TOML file::

    kind = "theory"              # or "testbed", "ensemble", "montecarlo"
    [base]                       # settings shared by every run
    law = "s=uniform(0.5,4)"
    [grid]                       # every combination of these values is one run
    T = [10, 100, 1000]

Kinds: ``theory`` (α*, α_T, the excess risk), ``testbed`` (one testbed model trained),
``ensemble`` (testbed models trained as one ensemble), ``montecarlo`` (one ``mmicl train`` run on
the CPU: model, law, T, n, steps, lr, batch, optimizer, seed, samples); docs/sweeps.md lists their
settings.  The multimodal testbed's kinds ``stage1``, ``stage2`` and ``fusion`` have nested settings
(arms, a stage-1 run's settings) that a TOML grid does not express: the claims run them
(``numerics.runs``).

Each run is keyed by a hash of its full configuration; a rerun skips the runs already done in the
store and retries the failed ones.  ``--scheduler tcp://HOST:8786`` uses a running Dask cluster
instead of a local one (docs/sweeps.md shows how to start one on SLURM).

Every run file is checked when it is read back (``numerics/runs/store.py``: a checksum, the key
recomputed from the configuration, the file name).  A run opens the store writable: a damaged,
relabelled, duplicate or earlier-version file is renamed to ``*.corrupt`` and its run redone.
``--status`` and ``--export`` only read: they open the store read-only (a read-only folder is
fine; nothing in it is created, renamed or rewritten), skip such files and name them in one
warning line on stderr.  Only a run needs a writable ``--store``; a query of a store that does not
exist is one error line (exit 2).
"""
from __future__ import annotations

import time
from pathlib import Path

import click

from mmicl.commands.common import Command, IntIn, WritablePath, emit_json
from mmicl.numerics.runs import Store, run_sweep
from mmicl.numerics.runs.artifacts import in_training
from mmicl.numerics.runs.store import StoreError
from mmicl.numerics.runs.spec import SweepSpecError, load_spec

__all__ = ["StorePath", "NoStore", "sweep_command"]



class StorePath(click.ParamType):
    """The folder of a results store.  Only checked here to be a path: a run also needs it writable
    (``WritablePath`` is applied when there is a SPEC to run), a query needs it to exist."""

    name = "path"

    def convert(self, value, param, ctx):
        value = str(value)
        if not value.strip() or "\0" in value:
            self.fail(f"must be a folder path, got {value!r}", param, ctx)
        return Path(value)


class NoStore(click.ClickException):
    """A query of a folder that is not a results store: one line, exit status 2 (like bad input)."""

    exit_code = 2


@click.command("sweep", cls=Command)
@click.argument("spec", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--store", "store_dir", type=StorePath(), default="sweep_results", show_default=True,
              help="Folder of the results store (one JSON file per run, and an index).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Address of a running Dask scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster).")
@click.option("--workers", type=IntIn(1, 4096), default=None,
              help="Worker processes of the local cluster (default: one per CPU core).")
@click.option("--status", is_flag=True, help="Print what the store holds (done / failed per kind, and the runs in training: the step of "
                   "their last snapshot) and stop.")
@click.option("--export", "export", type=WritablePath("file"), default=None, metavar="CSV",
              help="Write the store as a table (one row per run) to this CSV file.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def sweep_command(spec, store_dir, scheduler, workers, status, export, as_json):
    """Run the grid of SPEC on Dask into --store; or --status / --export a store."""

    if spec is None and not (status or export):
        raise click.UsageError("give a SPEC.toml to run, or --status / --export to read a store")
    if spec is not None:                         # refused before the store is opened (and tidied)
        try:
            runs = load_spec(spec)
        except (SweepSpecError, ValueError, TypeError) as e:
            raise click.BadParameter(str(e).splitlines()[0], param_hint="SPEC") from None
    ctx = click.get_current_context()
    param = next(p for p in ctx.command.params if p.name == "store_dir")
    warnings: list[str] = []
    if spec is not None:                         # a run writes the store: it must be writable
        store_dir = WritablePath("folder").convert(str(store_dir), param, ctx)
        store = Store(store_dir, warn=warnings.append)
    else:                                        # a query only reads it
        try:
            store = Store(store_dir, writable=False, warn=warnings.append)
        except StoreError as e:
            raise NoStore(f"--store: {e}") from None
    for line in warnings:
        click.echo(line, err=True)
    out: dict = {"store": str(store_dir)}
    if store.set_aside:
        out["set_aside" if store.writable else "would_set_aside"] = store.set_aside
    if spec is not None:

        s = run_sweep(runs, store, scheduler=scheduler, workers=workers, progress=not as_json)
        out["sweep"] = {"runs": s.total, "skipped (already done)": s.skipped, "done": s.done, "failed": s.failed}
    out["status"] = store.summary()
    training = [t for t in in_training(store.root) if store.status(t["key"]) != "done"]
    if training:
        out["in_training"] = training
    if export is not None:
        out["export"] = str(store.export_csv(export))
    if as_json:
        emit_json(out)
        return
    if "sweep" in out:
        click.echo(", ".join(f"{k} {v}" for k, v in out["sweep"].items()))
    click.echo(f"store {store_dir}: " + (", ".join(f"{k} {v}" for k, v in out["status"].items()) or "empty"))
    for r in store.records():
        if r["status"] == "failed":
            click.echo(f"  failed {r['key']} ({r['kind']}): {r['error']}")
    for t in training:
        at = time.strftime("%Y-%m-%d %H:%M", time.localtime(t["saved"]))
        click.echo(f"  in training {t['key']} ({t['kind'] or 'run'}): " + (
            f"step {t['step']} of {t['steps']}, {t['seconds'] / 60:.0f} min of training, snapshot of {at}"
            if t["step"] is not None else f"a snapshot that cannot be read, of {at}"))
    if export is not None:
        click.echo(f"wrote {export}")
