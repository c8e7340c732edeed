"""Commands for the symbolic and numeric theory: ``alpha``, ``flow2``, ``laws``."""
import click

COMMANDS: list[click.Command] = []
