"""The ``mmicl`` command line.

``mmicl verify`` runs the theorem registry; the other commands expose the computations behind
it.  Each family of commands lives in its own module under ``mmicl/commands`` and is listed in
``LAZY_COMMANDS``, which is imported only when one of its commands runs.
"""
from __future__ import annotations

import math
import os
import sys
import time
from importlib import import_module
from pathlib import Path

import click

from mmicl.numerics.provenance import __version__

from mmicl.commands.common import SEED, Command, Device, WritablePath
from mmicl.numerics.validate import InputError, MAX_DIM_VERIFY
from mmicl.numerics import interrupts
from mmicl.numerics.atomic import require_space
from mmicl.proofs.plugins import load_plugins
from mmicl.proofs.claim import RunConfig
from mmicl.proofs.verify import registered, select
from mmicl.results_folder import ResultsFolder, holding
from mmicl.compare import compare, load_summary

__all__ = ["LAZY_COMMANDS", "LazyGroup", "main", "verify", "SPACE_PER_CLAIM", "claims_command", "verdict_table",
           "add_result", "KEY_LIST_SHOWN"]


# name -> (module, attribute, one-line help).  Modules are imported only when their command runs,
# so ``mmicl --help`` and ``mmicl laws`` start without loading torch, SciPy or SymPy.
LAZY_COMMANDS: dict[str, tuple[str, str, str]] = {
    "alpha": ("mmicl.commands.theory", "alpha",
              "α* and, per depth T, α_T, the excess risk and the gradient flow's limit."),
    "certify": ("mmicl.commands.certify", "certify",
                "Certified enclosures of α_T and of Thm 4.1's gap, re-checked independently."),
    "compare": ("mmicl.commands.compare", "compare_command",
                "Two verify runs side by side: verdicts that changed, numbers that moved beyond their tolerance."),
    "flow2": ("mmicl.commands.theory", "flow2", "End point of the two-parameter gradient flow."),
    "laws": ("mmicl.commands.laws", "laws", "Show the LAW language."),
    "limits": ("mmicl.commands.limits", "limits",
               "Depth T → ∞: the derived expansion of α_T, checked; the excess decay per layer, tied and untied."),
    "lsa": ("mmicl.commands.lsa", "lsa", "The best single-layer LSA for a law and its gap to Bayes."),
    "train": ("mmicl.commands.train", "train_command",
              "Train one model on sampled prompts; its risk with standard errors."),
    "train-figures": ("mmicl.commands.train", "train_figures_command",
                      "Monte Carlo figures: finite-n bias, SGD vs flow, full matrix."),
    "sweep": ("mmicl.commands.sweep", "sweep_command",
              "Run a grid of runs on Dask into a results store (skips the runs already done)."),
    # the group of commands/testbed.py, with the multimodal subcommands that the module below adds to it
    "testbed": ("mmicl.commands.testbed_multimodal", "testbed",
                "Synthetic in-context classification in small transformers."),
}


_command_started: float | None = None
"""``time.perf_counter()`` when the command line started (``LazyGroup.main``): a verify run's wall
time counts from it, start-up included (``results_folder.RunState``)."""


class LazyGroup(click.Group):
    """A click group whose sub-commands are imported on first use, and whose output degrades to
    ASCII on a terminal that cannot encode it (``mmicl.terminal``)."""

    def main(self, *args, **kwargs):
        from mmicl.terminal import ascii_fallback

        global _command_started
        _command_started = time.perf_counter()
        ascii_fallback()
        return super().main(*args, **kwargs)

    def list_commands(self, ctx):
        return sorted([*super().list_commands(ctx), *LAZY_COMMANDS])

    def get_command(self, ctx, name):
        if name in LAZY_COMMANDS:
            module, attr, _ = LAZY_COMMANDS[name]
            return getattr(import_module(module), attr)
        return super().get_command(ctx, name)

    def format_commands(self, ctx, formatter):
        rows = []
        for name in self.list_commands(ctx):
            own = LAZY_COMMANDS[name][2] if name in LAZY_COMMANDS else None
            rows.append((name, own or super().get_command(ctx, name).get_short_help_str(80)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="mmicl")
def main():
    """mmicl: verify theorems about multi-modal in-context learning, numerically and symbolically."""


def _law_text(ctx, param, value):
    """--law is checked (parsed, scale) before any claim runs; the claims get the text."""
    if value is None:
        return None
    from mmicl.commands.common import load_law

    law = load_law(value)
    if law.d > MAX_DIM_VERIFY:
        raise click.BadParameter(f"d1 + d2 = {law.d}; the claims' Monte Carlo and training take d1 + d2 ≤ "
                                 f"{MAX_DIM_VERIFY} (at d = 64 a quick thm4.1 run needed 8.7 GB and over 400 s)",
                                 param_hint="--law")
    return value


@main.command(cls=Command)
@click.option("--quick", is_flag=True, help="Small sizes: the whole registry in about a minute on 2 CPU cores "
                                            "(the same as --size quick).")
@click.option("--size", type=click.Choice(["smoke", "quick", "full"]), default=None,
              help="smoke (property tests over many laws), quick, or full (the default).")
@click.option("--claim", "claims", multiple=True, help="Claim id or glob (repeatable), e.g. thm6.2 or 'testbed.*'.")
@click.option("--all", "everything", is_flag=True, help="Also the claims not run by default (the testbed).")
@click.option("--out", type=WritablePath("folder"), default=Path("results"), show_default=True,
              help="Folder for verdicts.json, the reports and figures/ (paths inside are relative to it).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="Seed of every random choice, 0 to 2^32 − 1 (recorded).")
@click.option("--device", type=Device(), default="auto", show_default=True,
              help="auto (cuda where torch sees a GPU, else cpu), cpu or cuda.")
@click.option("--law", default=None, callback=_law_text,
              help="LAW to check the claims on (default: each claim's own laws).")
@click.option("--threads", type=click.IntRange(1, os.cpu_count() or 1), default=os.cpu_count() or 1,
              show_default=True,
              help="torch CPU threads of the testbed claims' training (the other claims train many small "
                   "models, one thread each).")
@click.option("--scheduler", default=None, metavar="ADDRESS",
              help="Dask scheduler (e.g. tcp://host:8786) to send the testbed claims' training runs to; "
                   "default: train here.")
@click.option("--plugin", "plugins", multiple=True, metavar="FILE_OR_MODULE",
              help="Load claims from a .py file or an importable module (repeatable); installed plugins "
                   "(entry-point group mmicl.claims) load by themselves.")
@click.option("--variant", default=None, metavar="KEY=VALUE,...",
              help="An LCA variant, e.g. readout=evolved-keys-and-query or f0=tokens,skip=off (keys readout, f0, "
                   "skip, param; see docs/variants.md): the paper's theorems then say hypothesis-not-met, and "
                   "variant.floor checks the variant.")
@click.option("--case", default=None, metavar="TEXT",
              help="For claims with their own kind of case (a plugin's, e.g. a covariance and a context length): "
                   "the case to check them on, in the text their case type reads; each chosen claim reads it "
                   "before any runs.")
@click.option("--baseline", type=click.Path(exists=True, path_type=Path), default=None, metavar="OLD",
              help="After the run, compare it with an earlier one (its folder or verdicts.json), as "
                   "`mmicl compare OLD OUT` does; exit 1 on any regression.")
@click.option("--rtol", type=click.FloatRange(0, None, max_open=True), default=None,
              help="With --baseline: the relative change allowed where a check states no numeric tolerance.")
def verify(quick, size, claims, everything, out, seed, device, law, threads, scheduler, plugins, variant, case, baseline,
           rtol):
    """Run the registry: print a verdict table; write OUT/verdicts.json, OUT/report.md, OUT/report.html.

    Figure paths in verdicts.json and report.md are relative to OUT, so the folder can be moved.
    The three files are rewritten together after every claim and say whether the run is running,
    complete or stopped; a second run into an OUT that a live run holds is refused.
    Exit status 1 if any claim fails or errs, 2 for bad input, a plugin that cannot be loaded, a busy
    OUT or a full disk."""
    from rich.console import Console
    from rich.markup import escape

    from mmicl.numerics.laws.language import parse_law


    console = Console(stderr=True)

    if baseline is not None:  # read before any work: an unreadable baseline is one line, exit 2
        from mmicl.commands.compare import read_summary

        old = read_summary(baseline, "--baseline", baseline=True)
    load_plugins(list(plugins))  # a PluginError is one line, exit 2 (Command), before any work
    try:
        chosen = select(list(claims), everything)
    except KeyError as e:
        raise click.BadParameter(str(e.args[0]), param_hint="--claim") from None
    if case is not None:
        from mmicl.proofs.cases import CaseError
        from mmicl.proofs.verify import case_text

        try:
            case_text(chosen, case)
        except CaseError as e:
            raise click.BadParameter(str(e), param_hint="--case") from None
    if quick and size not in (None, "quick"):
        raise click.BadParameter(f"--quick means --size quick; it cannot go with --size {size}", param_hint="--size")
    size = size or ("quick" if quick else "full")
    try:
        config = RunConfig.sized(size, out=out, seed=seed, device=device, law=law, scheduler=scheduler,
                                 testbed_threads=threads, variant=variant, case=case)
    except InputError as e:
        if variant is not None and str(e).startswith("variant"):
            raise click.BadParameter(str(e), param_hint="--variant") from None
        raise
    require_space(out, SPACE_PER_CLAIM * len(chosen), f"a run of {len(chosen)} claim(s)")
    law_spec = None if law is None else parse_law(law).spec()  # shown once, in the title, not in each row
    table = verdict_table(f"mmicl verify ({size}, seed {seed}" + (f", law {law_spec}" if law_spec else "")
                          + (f", case {case}" if case is not None else "") + ")")
    with holding(out):  # a FolderBusyError (another live run) is one line, exit 2 (Command)
        folder = ResultsFolder(config, [c.id for c in chosen], started=_command_started)
        # the folder ends complete or stopped: a Ctrl-C is caught from before it first says "running"
        with interrupts.watching(), folder.stopping_on_exit():
            folder.write()
            for claim in chosen:
                interrupts.stop_if_pressed()  # a Ctrl-C whose KeyboardInterrupt was swallowed still stops
                # text from a claim, a law or a path is escaped: rich would read "[...]" in it as markup
                console.print(f"[bold]{escape(claim.id)}[/]: {escape(claim.title)} …")
                _one_torch_thread(claim)
                res = folder.run_claim(claim)  # a LawError from --law becomes a usage error (Command)
                add_result(table, res, law_spec)
        if folder.run.state == "stopped":  # Ctrl-C: the claims finished are kept
            # a console of its own: a Ctrl-C that lands inside ``console.print`` (between rich's entering
            # and leaving its output buffer) leaves that console holding everything printed after it
            Console(stderr=True).print(escape(f"stopped by Ctrl-C after {len(folder.results)} of {len(chosen)} claims; the finished "
                                 f"ones are in {out / 'verdicts.json'}"))
            sys.exit(130)
        folder.finish()
    Console().print(table)
    console.print(escape(f"wrote {out / 'verdicts.json'}, {out / 'report.md'} and {out / 'report.html'}"))
    for r in folder.results:
        if r.verdict == "error":
            console.print(escape(f"{r.id} ({r.origin}): {r.verdict_reason}"))
    status = 1 if any(r.verdict in ("fails", "error") for r in folder.results) else 0
    if baseline is not None:
        from mmicl.commands.compare import report_comparison

        moved = compare(old, load_summary(out), rtol, str(baseline), str(out))
        status = max(status, report_comparison(moved, as_json=False))
    sys.exit(status)


SPACE_PER_CLAIM = 4 * 2**20
"""Free space ``verify`` asks for per claim before it starts.  A claim writes its figures (PNG,
50–160 KiB each), its evidence JSON and its part of the three summary files, whose HTML inlines
every figure again; while the summary is rewritten its old and new copies are both on disk.  A
quick run of the five default claims wrote 1.4 MiB in all (figures 0.5 MiB, report.html 0.75 MiB),
a full-size run 3.7 MiB (figures 1.4 MiB, report.html 2.0 MiB), so 4 MiB per claim leaves the
summary's second copy and a law with more panels room.  Not a limit
on what a claim may write: a full disk during the run stops it with the claims finished kept."""


@main.command("claims", cls=Command)
@click.option("--plugin", "plugins", multiple=True, metavar="FILE_OR_MODULE",
              help="Also load claims from a .py file or an importable module (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: one entry per claim.")
def claims_command(plugins, as_json):
    """Every claim mmicl knows: its id, title, origin (built-in or its plugin) and whether a plain
    `mmicl verify` runs it."""

    load_plugins(list(plugins))
    rows = [{"id": c.id, "title": c.title, "origin": c.origin, "default": c.default} for c in registered().values()]
    if as_json:
        from mmicl.commands.common import emit_json

        emit_json({"claims": rows})
        return
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="mmicl claims")
    table.add_column("claim", overflow="fold")  # an id is folded onto the next line, never cut short
    for col in ("title", "origin", "default"):
        table.add_column(col)
    for r in rows:
        table.add_row(escape(r["id"]), escape(r["title"]), escape(r["origin"]), "yes" if r["default"] else "no")
    Console().print(table)


def _one_torch_thread(claim) -> None:
    """The Monte Carlo claims train many small models: one torch thread each is fastest on the CPU.
    Set here, by the command line, never on import or by a library call, before each claim runs,
    once torch is imported: a built-in claim's module is imported first (it imports torch), so a run
    of claims that need no torch (a plugin's, say) does not pay for importing it.  A module that
    cannot be imported is left for the claim's run to report (its verdict ``error``)."""
    from mmicl.proofs.claim import ModuleFunction

    if isinstance(claim.evaluate, ModuleFunction):
        try:
            claim.evaluate.function()
        except Exception:  # noqa: BLE001 -- Claim.run reports it, as the claim's error
            pass
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def verdict_table(title: str):
    """The verdict table of ``mmicl verify`` (its title escaped)."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(title=escape(title))
    table.add_column("claim", overflow="fold")  # an id is folded onto the next line, never cut short
    for col in ("verdict", "key numbers", "seconds"):  # "s" is the squared norm ‖m‖² here
        table.add_column(col)
    return table


def add_result(table, res, law: str | None = None) -> None:
    """One claim's row: every text from the claim (its id, verdict, summary) escaped, so "[bold]" or
    "[0,1]" in it prints as written instead of being read as rich markup.  ``law``: the run's law
    (its ``spec()``), which the table's title shows: a key number that only repeats it is left out."""
    from rich.markup import escape

    table.add_row(escape(str(res.id)), _colour(res.verdict), escape(_key_numbers(res.summary, law)),
                  f"{res.seconds:.1f}")


def _colour(verdict: str) -> str:
    from rich.markup import escape

    return {"holds": "[green]holds[/]", "fails": "[red]fails[/]", "error": "[magenta]error[/]"}.get(
        verdict, f"[yellow]{escape(str(verdict))}[/]")


KEY_LIST_SHOWN = 4
"""A list of numbers up to this long is shown whole in the verdict table; a longer one, and every
matrix, as its shape and extreme values (verdicts.json keeps every value)."""


def _key_numbers(summary: dict, law: str | None = None) -> str:
    """The verdict table's key numbers: ``k=v`` with every number to 4 significant digits, a matrix
    as its shape and extreme values (``5×5 in [0, 0.2392]``), and no value that repeats the run's
    ``law`` (it is in the title).  The full values are in verdicts.json."""
    return ", ".join(f"{k}={_compact(v)}" for k, v in summary.items() if law is None or v != law)


def _compact(v, depth: int = 0) -> str:
    """One key number, short: see ``_key_numbers``."""
    from mmicl.commands.common import number

    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):  # numpy scalars and arrays
        v = v.tolist()
    if isinstance(v, bool) or v is None:
        return {True: "true", False: "false", None: "—"}[v]
    if isinstance(v, float):
        return number(v) if math.isfinite(v) else ("nan" if math.isnan(v) else ("inf" if v > 0 else "−inf"))
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_compact(x, depth + 1)}" for k, x in v.items()) + "}" if depth < 2 else "{…}"
    if isinstance(v, (list, tuple)):
        shape, flat = _shape(v)
        if shape is not None and (len(shape) > 1 or len(v) > KEY_LIST_SHOWN):
            finite = [x for x in flat if math.isfinite(x)]
            where = f" in [{_compact(min(finite))}, {_compact(max(finite))}]" if finite else " (no finite value)"
            return "×".join(map(str, shape)) + (" matrix" if len(shape) == 2 else " values" if len(shape) == 1
                                                 else " array") + where
        if depth < 2 and len(v) <= KEY_LIST_SHOWN:
            return "[" + ", ".join(_compact(x, depth + 1) for x in v) + "]"
        return f"[{len(v)} items]"
    return str(v)


def _shape(v) -> tuple[tuple[int, ...] | None, list[float]]:
    """The shape of a rectangular nested list of real numbers, and its values flattened; (None, [])
    for anything else (ragged, text, booleans)."""
    if isinstance(v, (list, tuple)):
        if not v:
            return None, []
        parts = [_shape(x) for x in v]
        if any(s is None for s, _ in parts) or len({s for s, _ in parts}) != 1:
            return None, []
        return (len(v), *parts[0][0]), [x for _, f in parts for x in f]
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (), [float(v)]
    return None, []


if __name__ == "__main__":
    main()
