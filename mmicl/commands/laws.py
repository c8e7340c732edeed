"""``mmicl laws``: the LAW language."""
from __future__ import annotations

import click

__all__ = ["laws"]



@click.command()
def laws():
    """Show the LAW language."""
    from mmicl.numerics.laws.language import GRAMMAR

    click.echo(GRAMMAR)
