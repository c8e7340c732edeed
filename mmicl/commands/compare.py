"""``mmicl compare OLD NEW``: what changed between two verify runs (``mmicl/compare.py``)."""
from __future__ import annotations

from pathlib import Path

import click

from mmicl.commands.common import Command, emit_json
from mmicl.compare import CompareError, compare, load_summary, render

__all__ = ["read_summary", "report_comparison", "compare_command"]



def read_summary(path: Path, hint: str, baseline: bool = False) -> dict:
    """The verify summary at ``path``, or one usage error line (exit 2); ``baseline``: the old side,
    which must list claims."""

    try:
        return load_summary(path, baseline=baseline)
    except CompareError as e:
        raise click.BadParameter(str(e), param_hint=hint) from None


def report_comparison(result, as_json: bool, every: bool = False) -> int:
    """Print the comparison (``mmicl.compare.render``: a summary, or every change with ``every``;
    or JSON) and return the exit status: 1 on any regression."""
    if as_json:
        emit_json(result.to_json())
    else:
        import shutil

        width = shutil.get_terminal_size((100, 24)).columns
        for line in render(result, every=every, width=width):
            click.echo(line)
    return 1 if result.regressions else 0


@click.command("compare", cls=Command)
@click.argument("old", type=click.Path(exists=True, path_type=Path))
@click.argument("new", type=click.Path(exists=True, path_type=Path))
@click.option("--rtol", type=click.FloatRange(0, None, max_open=True), default=None,
              help="Relative change allowed for a number whose check states no numeric tolerance "
                   "(default 1e-9).")
@click.option("--all", "every", is_flag=True, help="List every change, not only the 10 numbers that moved most "
              "beyond their tolerance.")
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
def compare_command(old, new, rtol, every, as_json):
    """Compare two verify runs (output folders or verdicts.json files).

    Says first what settings the runs differ in (seed, size, law, case, platform, mmicl version), then
    the verdicts that changed, the check outcomes that changed, and the numbers that moved most
    beyond their check's numeric tolerance (or --rtol), a line each, with each tolerance's reason
    once.  Across two seeds a sampled number is judged as two independent estimates where its
    check states an se, and left uncompared where it does not; across sizes, laws or cases only verdicts
    are compared.  Exit status 1 on any regression, 0 when nothing moved beyond its tolerance."""
    import sys

    result = compare(read_summary(old, "OLD", baseline=True), read_summary(new, "NEW"), rtol, str(old), str(new))
    sys.exit(report_comparison(result, as_json, every))
