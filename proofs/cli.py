"""The ``mmicl`` command line.

``mmicl verify`` runs the theorem registry; the other commands expose the computations behind
it.  Each family of commands lives in its own module under ``proofs/commands`` and is listed in
``COMMAND_MODULES``; a module exposes ``COMMANDS``, a list of click commands or groups.
"""
from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from mmicl.numerics.atomic import write_json, write_text
from mmicl.numerics.laws import LawError

COMMAND_MODULES = [
    "mmicl.proofs.commands.theory",
    "mmicl.proofs.commands.testbed",
    "mmicl.proofs.commands.train",
    "mmicl.proofs.commands.lsa",
]

console = Console(stderr=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main():
    """mmicl: verify theorems about multi-modal in-context learning, numerically and symbolically."""


@main.command()
@click.option("--quick", is_flag=True, help="Small sizes: the whole registry in about a minute on 2 CPU cores.")
@click.option("--claim", "claims", multiple=True, help="Claim id or glob (repeatable), e.g. thm6.2 or 'testbed.*'.")
@click.option("--all", "everything", is_flag=True, help="Also the claims not run by default (the testbed).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("results"), show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice (recorded).")
@click.option("--device", type=click.Choice(["auto", "cpu", "cuda"]), default="auto", show_default=True)
@click.option("--law", default=None, help="LAW to check the claims on (default: each claim's own laws).")
def verify(quick, claims, everything, out, seed, device, law):
    """Run the registry: print a verdict table, write OUT/verdicts.json and OUT/report.md.

    Exit status 1 if any claim fails."""
    from .registry import RunConfig, select
    from .report import render_report

    try:
        chosen = select(list(claims), everything)
    except KeyError as e:
        raise click.UsageError(str(e.args[0]))
    config = RunConfig(quick=quick, out=out, seed=seed, device=_device(device), law=law)
    results = []
    table = Table(title=f"mmicl verify ({'quick' if quick else 'full'}, seed {seed})")
    for col in ("claim", "verdict", "key numbers", "s"):
        table.add_column(col)
    for claim in chosen:
        console.print(f"[bold]{claim.id}[/]: {claim.title} …")
        try:
            res = claim.run(config)
        except LawError as e:
            raise click.UsageError(str(e))
        results.append(res)
        # write after every claim: a killed run keeps what it had finished
        write_json(out / "verdicts.json", {"seed": seed, "quick": quick, "claims": [r.to_json() for r in results]})
        table.add_row(res.id, _colour(res.verdict), _key_numbers(res.summary), f"{res.seconds:.1f}")
    write_text(out / "report.md", render_report(results, config))
    Console().print(table)
    console.print(f"wrote {out / 'verdicts.json'} and {out / 'report.md'}")
    sys.exit(1 if any(r.verdict == "fails" for r in results) else 0)


def _device(choice: str) -> str:
    if choice != "auto":
        return choice
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _colour(verdict: str) -> str:
    return {"holds": "[green]holds[/]", "fails": "[red]fails[/]"}.get(verdict, f"[yellow]{verdict}[/]")


def _key_numbers(summary: dict) -> str:
    parts = []
    for k, v in summary.items():
        parts.append(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}")
    return ", ".join(parts)


for _name in COMMAND_MODULES:
    for _cmd in import_module(_name).COMMANDS:
        main.add_command(_cmd)


if __name__ == "__main__":
    main()
