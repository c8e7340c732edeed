"""Options and helpers shared by the command modules."""
from __future__ import annotations

import functools

import click

from mmicl.numerics.law_language import parse_law
from mmicl.numerics.laws import LawError, TaskLaw


def law_options(f):
    """Add ``--law LAW --zeta Z --d1 N --d2 N`` and pass a parsed ``law: TaskLaw`` instead."""

    @click.option("--law", "law_text", required=True, metavar="LAW",
                  help="Task law, e.g. 's=uniform(0.5,4)' (see 'mmicl laws').")
    @click.option("--zeta", default=None, help="Law of ζ: normal | rademacher | const(c). Overrides LAW.")
    @click.option("--d1", type=int, default=None, help="Dimension of modality 1. Overrides LAW.")
    @click.option("--d2", type=int, default=None, help="Dimension of modality 2. Overrides LAW.")
    @functools.wraps(f)
    def wrapper(*args, law_text, zeta, d1, d2, **kwargs):
        return f(*args, law=load_law(law_text, zeta=zeta, d1=d1, d2=d2), **kwargs)

    return wrapper


def load_law(text: str, **overrides) -> TaskLaw:
    try:
        return parse_law(text, **overrides)
    except LawError as e:
        raise click.BadParameter(str(e), param_hint="--law") from None


def emit_json(obj) -> None:
    """Print a strict JSON document on stdout (for ``--json`` options; see ``strict_json``)."""
    from mmicl.numerics.strict_json import dumps

    click.echo(dumps(obj))
