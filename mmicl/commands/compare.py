"""``mmicl compare OLD NEW``: what changed between two verify runs (``mmicl/compare.py``)."""
from __future__ import annotations

from pathlib import Path

import click

from mmicl.commands.common import Command, emit_json
from mmicl.compare import CompareError, compare, load_summary

__all__ = ["read_summary", "report_comparison", "compare_command"]



def read_summary(path: Path, hint: str, baseline: bool = False) -> dict:
    """The verify summary at ``path``, or one usage error line (exit 2); ``baseline``: the old side,
    which must list claims."""

    try:
        return load_summary(path, baseline=baseline)
    except CompareError as e:
        raise click.BadParameter(str(e), param_hint=hint) from None


def report_comparison(result, as_json: bool) -> int:
    """Print the comparison (a table, or JSON) and return the exit status: 1 on any regression."""
    if as_json:
        emit_json(result.to_json())
    else:
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        console = Console()
        if result.changes:
            table = Table(title=escape(f"mmicl compare {result.old} → {result.new}"))
            for col in ("claim", "what", "key", "old", "new", "tolerance"):
                table.add_column(col)
            for c in result.changes:
                kind = c.kind if c.regression else f"[dim]{c.kind}[/]"
                table.add_row(escape(c.claim), kind, escape(c.key), escape(_short(c.old)), escape(_short(c.new)),
                              escape(c.tolerance))
            console.print(table)
        n = len(result.regressions)
        console.print(escape(f"{n} regression(s) among {result.compared_numbers} numbers compared"
                             + ("" if n else ": nothing moved")))
    return 1 if result.regressions else 0


def _short(v) -> str:
    text = repr(v) if not isinstance(v, str) else v
    return text if len(text) <= 40 else text[:39] + "…"


@click.command("compare", cls=Command)
@click.argument("old", type=click.Path(exists=True, path_type=Path))
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@click.option("--rtol", type=click.FloatRange(0, None, max_open=True), default=None,
              help="Relative change allowed for a number whose check states no numeric tolerance "
                   "(default 1e-9).")
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
def compare_command(old, new, rtol, as_json):
    """Compare two verify runs (output folders or verdicts.json files): verdicts that changed, check
    outcomes that changed, and numbers that moved beyond their check's numeric tolerance (or --rtol).
    Exit status 1 on any regression, 0 when nothing moved."""
    import sys


    result = compare(read_summary(old, "OLD", baseline=True), read_summary(new, "NEW"), rtol, str(old), str(new))
    sys.exit(report_comparison(result, as_json))
