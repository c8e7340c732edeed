"""Options and helpers shared by the command modules: the checks every command-line input passes
before any work starts.

Each bad value gets one line from click (``Error: Invalid value for '--T': …``) that names the
option, the value and what is allowed, and exit status 2.  The limits are the whole policy; each
comes from ``numerics.validate``, whose docstrings say how it was sized.

Only ``click`` and the standard library are imported at module level: ``mmicl verify`` imports this
module on start-up, and ``mmicl --help`` must stay fast.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
from pathlib import Path

import click

from mmicl.numerics.validate import (MAX_BATCH_FLOATS, MAX_CONTEXT, MAX_DEPTH_FLOW_TWO,  # noqa: F401  light: no numpy
                                     MAX_DEPTH_ONE, MAX_DIM, MAX_MC, MAX_PROFILE, MAX_SAMPLES, MAX_SEED, MAX_STEPS,
                                     MAX_TRAIN_DEPTH, START_BOX)
from mmicl.numerics.validate import check_batch_memory as batch_memory, cuda_driver_present
from mmicl.theory.errors import InputError, MmiclError
from mmicl.numerics.atomic import DiskFullError
from mmicl.numerics.strict_json import dumps

__all__ = ["MAX_DEPTH", "MAX_FLOW2_DEPTH", "IntIn", "INFINITE_CONTEXT", "ContextLength", "context_help", "RealIn",
           "depth_type", "SEED", "Device", "WritablePath", "seed_option", "device_option", "exclusive", "law_options",
           "load_law", "input_errors_as_usage", "DiskFull", "Command", "Group", "check_batch_memory", "emit_json",
           "VariantText", "variant_option", "variant_or_alias", "plain_variant", "variant_names", "named",
           "variant_minimiser", "variant_floor", "MINUS", "number", "signed_sum", "show_excess", "show_named",
           "floor_line"]


# Every limit lives in numerics/validate.py (the API refuses the same values, with the same numbers;
# each is sized there by what its function costs); the options below use them.
MAX_DEPTH = MAX_DEPTH_ONE
"""``alpha``: α_T and the one-parameter flow (``validate.MAX_DEPTH_ONE``)."""
MAX_FLOW2_DEPTH = MAX_DEPTH_FLOW_TWO
"""``flow2``: the two-parameter flow (``validate.MAX_DEPTH_FLOW_TWO``)."""


# ---------------------------------------------------------------------------------------------
# click parameter types
# ---------------------------------------------------------------------------------------------


class IntIn(click.ParamType):
    """An integer in ``[lo, hi]``; the error says the range (and ``why``)."""

    name = "integer"

    def __init__(self, lo: int, hi: int | None = None, why: str = ""):
        self.lo, self.hi, self.why = lo, hi, why

    def allowed(self) -> str:
        rng = f"an integer from {self.lo} to {self.hi}" if self.hi is not None else f"an integer ≥ {self.lo}"
        return rng + (f" ({self.why})" if self.why else "")

    def convert(self, value, param, ctx):
        if isinstance(value, bool):
            self.fail(f"must be {self.allowed()}, got {value!r}", param, ctx)
        if isinstance(value, int):
            v = value
        else:
            try:
                v = int(str(value).strip(), 10)
            except ValueError:
                self.fail(f"must be {self.allowed()}, got {value!r}", param, ctx)
        if v < self.lo or (self.hi is not None and v > self.hi):
            self.fail(f"must be {self.allowed()}, got {v}", param, ctx)
        return v

    def get_metavar(self, param, ctx=None):  # click ≥ 8.2 passes ctx
        return "INTEGER"


INFINITE_CONTEXT = ("inf", "infinity", "∞")
"""How ``--n`` spells the large-context limit n → ∞ in every command that has it (case ignored)."""


class ContextLength(IntIn):
    """``--n``: a context length from 1 to ``MAX_CONTEXT``, or ``inf`` (``INFINITE_CONTEXT``) for the
    large-context limit n → ∞, which the command receives as ``None``.  One spelling in every
    command; each command's old one still works: ``old_zero`` (``train``) reads 0 as ``inf`` too,
    and where the default is ``None`` (``lsa``) leaving ``--n`` out is ``inf``.  ``old`` names the
    old spelling in the error message."""

    name = "context length"

    def __init__(self, old_zero: bool = False, old: str = ""):
        super().__init__(0 if old_zero else 1, MAX_CONTEXT, old)
        self.old_zero = old_zero

    def allowed(self) -> str:
        return (f"an integer from {self.lo} to {self.hi} or inf (the large-context limit n → ∞"
                + (f"; {self.why}" if self.why else "") + ")")

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value.strip().lower() in INFINITE_CONTEXT:
            return None
        v = super().convert(value, param, ctx)
        return None if v == 0 and self.old_zero else v

    def get_metavar(self, param, ctx=None):
        return "N|inf"


def context_help(default: str, old: str) -> str:
    """The ``--help`` text of ``--n``: the one spelling, the default, and the old spelling kept."""
    return (f"Context length n: an integer from 1 to 10^12, or inf for the large-context limit n → ∞ "
            f"(default: {default}). {old}")


class RealIn(click.ParamType):
    """A finite real number in ``[lo, hi]`` (``lo_open``: ``lo`` itself excluded)."""

    name = "number"

    def __init__(self, lo: float | None = None, hi: float | None = None, lo_open: bool = False, why: str = ""):
        self.lo, self.hi, self.lo_open, self.why = lo, hi, lo_open, why

    def allowed(self) -> str:
        if self.lo is not None and self.hi is not None:
            s = f"a finite number in {'(' if self.lo_open else '['}{self.lo:g}, {self.hi:g}]"
        elif self.lo is not None:
            s = f"a finite number {'>' if self.lo_open else '≥'} {self.lo:g}"
        else:
            s = "a finite number"
        return s + (f" ({self.why})" if self.why else "")

    def convert(self, value, param, ctx):
        try:
            v = float(value)
        except (TypeError, ValueError, OverflowError):
            self.fail(f"must be {self.allowed()}, got {value!r}", param, ctx)
        bad = (not math.isfinite(v) or (self.lo is not None and (v < self.lo or (self.lo_open and v == self.lo)))
               or (self.hi is not None and v > self.hi))
        if bad:
            self.fail(f"must be {self.allowed()}, got {value if isinstance(value, str) else v!r}", param, ctx)
        return v

    def get_metavar(self, param, ctx=None):
        return "FLOAT"


def depth_type(hi: int = MAX_DEPTH) -> IntIn:
    return IntIn(1, hi, "the number of layers")


SEED = IntIn(0, MAX_SEED, "2^32 − 1")


class Device(click.Choice):
    """``auto | cpu | cuda``, resolved: ``auto`` is ``cuda`` where torch sees a GPU, else ``cpu``;
    ``cuda`` where torch sees none is refused here, not by a traceback from the first tensor."""

    def __init__(self):
        super().__init__(["auto", "cpu", "cuda"])

    def convert(self, value, param, ctx):
        choice = super().convert(value, param, ctx)
        if choice == "cpu" or choice == "auto" and not cuda_driver_present():
            return "cpu"  # no NVIDIA driver: torch cannot see a GPU, and need not be imported to say so
        import torch

        available = torch.cuda.is_available()
        if choice == "auto":
            return "cuda" if available else "cpu"
        if not available:
            self.fail("cuda needs a CUDA GPU that torch can use, and there is none here "
                      "(torch.cuda.is_available() is False); use --device cpu or auto", param, ctx)
        return choice


class WritablePath(click.ParamType):
    """A path the command will write: a folder (``kind="folder"``, created if missing) or a file.
    Refused up front if it cannot be written, e.g. a path under a regular file, so that a long run
    does not end in a traceback."""

    name = "path"

    def __init__(self, kind: str = "folder"):
        assert kind in ("folder", "file")
        self.kind = kind

    def convert(self, value, param, ctx):
        if isinstance(value, Path):
            value = str(value)
        if not value or not value.strip():
            self.fail(f"must be a {self.kind} path, got an empty string", param, ctx)
        if "\0" in value:
            self.fail(f"must be a {self.kind} path, got {value!r} (a NUL byte)", param, ctx)
        p = Path(value)
        try:
            why = self._problem(p)
        except OSError as e:  # e.g. a name too long
            why = e.strerror or str(e)
        if why:
            self.fail(f"cannot write {self.kind} {value!r}: {why}", param, ctx)
        return p

    def _problem(self, p: Path) -> str | None:
        if p.exists():
            if self.kind == "folder" and not p.is_dir():
                return "it is a file, not a folder; give a folder path"
            if self.kind == "file" and p.is_dir():
                return "it is a folder; give a file name"
            target = p if self.kind == "folder" else p.parent
            if not os.access(target, os.W_OK | os.X_OK):
                return f"{str(target)!r} is not writable"
            return None
        anc = p.parent
        while not anc.exists() and anc != anc.parent:
            anc = anc.parent
        if not anc.is_dir():
            return f"{str(anc)!r} is a file, so nothing can be created under it"
        if not os.access(anc, os.W_OK | os.X_OK):
            return f"{str(anc)!r} is not writable"
        return None

    def get_metavar(self, param, ctx=None):
        return "DIR" if self.kind == "folder" else "FILE"


def seed_option(**kw):
    return click.option("--seed", type=SEED, default=0, show_default=True,
                        **{"help": "Seed of every random choice (0 to 2^32 − 1).", **kw})


def device_option():
    return click.option("--device", type=Device(), default="auto", show_default=True,
                        help="auto (cuda where torch sees a GPU, else cpu), cpu or cuda.")


def exclusive(ctx: click.Context, *names: str) -> None:
    """Refuse flags that cannot go together, naming them."""
    given = [n for n in names if ctx.params.get(n.lstrip("-").replace("-", "_"))]
    if len(given) > 1:
        raise click.UsageError(f"{' and '.join(given)} cannot be given together; choose one")


# ---------------------------------------------------------------------------------------------
# the law
# ---------------------------------------------------------------------------------------------


def law_options(f):
    """Add ``--law LAW --zeta Z --d1 N --d2 N`` and pass a parsed ``law: TaskLaw`` instead."""

    @click.option("--law", "law_text", required=True, metavar="LAW",
                  help="Task law, e.g. 's=uniform(0.5,4)' (see 'mmicl laws').")
    @click.option("--zeta", default=None, help="Law of ζ: normal | rademacher | const(c). Overrides LAW.")
    @click.option("--d1", type=IntIn(1, MAX_DIM), default=None, help="Dimension of modality 1. Overrides LAW.")
    @click.option("--d2", type=IntIn(1, MAX_DIM), default=None, help="Dimension of modality 2. Overrides LAW.")
    @functools.wraps(f)
    def wrapper(*args, law_text, zeta, d1, d2, **kwargs):
        return f(*args, law=load_law(law_text, zeta=zeta, d1=d1, d2=d2), **kwargs)

    return wrapper


def load_law(text: str, hint: str = "--law", **overrides):
    """The ``TaskLaw`` of LAW ``text``, checked (``laws.language.read_law``: it parses, its squared
    norms and labels stay within ``MAX_LAW_SCALE`` and ``d1 + d2 ≤ MAX_DIM``); otherwise a
    ``BadParameter`` naming ``hint`` (``--zeta`` for a bad ``zeta`` override)."""
    from mmicl.numerics.laws.language import read_law
    from mmicl.numerics.laws.scalar import LawError

    try:
        return read_law(text, **overrides)
    except LawError as e:
        raise click.BadParameter(str(e), param_hint="--zeta" if getattr(e, "option", None) == "zeta" else hint) from None


# ---------------------------------------------------------------------------------------------
# the boundary: library errors about the caller's input become usage errors, nothing else does
# ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def input_errors_as_usage(ctx: click.Context | None = None):
    """Turn an input error raised by the library (``InputError``, the one class every caller
    mistake derives from) into a usage error (naming ``--law`` for a ``LawError`` where the command
    has that option), and a full disk (``atomic.DiskFullError``) into one error line with exit
    status 2; any other exception (a bug) goes through untouched."""
    try:
        yield
    except MmiclError as e:

        if isinstance(e, DiskFullError):
            raise DiskFull(str(e)) from None
        if not isinstance(e, InputError):
            raise
        from mmicl.numerics.laws.scalar import LawError

        message = str(e) or type(e).__name__
        if isinstance(e, LawError) and ctx is not None and any("--law" in p.opts for p in ctx.command.params):
            raise click.BadParameter(message, ctx=ctx, param_hint="--law") from None
        raise click.UsageError(message, ctx=ctx) from None


class DiskFull(click.ClickException):
    """A full disk: one line (``atomic.DiskFullError``'s message) and exit status 2, like bad input."""

    exit_code = 2


class Command(click.Command):
    """A command whose library input errors become usage errors and whose full disk is one line
    (see ``input_errors_as_usage``)."""

    def invoke(self, ctx):
        with input_errors_as_usage(ctx):
            return super().invoke(ctx)


class Group(click.Group):
    command_class = Command


def check_batch_memory(prompts: int, d: int, hint: str, fix: str, what: str = "one batch", float_bytes: int = 4,
                       copies: int = 1) -> None:
    """``validate.check_batch_memory``, its refusal a ``BadParameter`` naming ``hint``."""
    try:
        batch_memory(prompts, d, fix, what, float_bytes, copies)
    except InputError as e:
        raise click.BadParameter(str(e), param_hint=hint) from None


def emit_json(obj) -> None:
    """Print a strict JSON document on stdout (for ``--json`` options; see ``strict_json``)."""

    click.echo(dumps(obj))


# ---------------------------------------------------------------------------------------------
# the LCA variant (--variant KEY=VALUE,...)
# ---------------------------------------------------------------------------------------------


class VariantText(click.ParamType):
    """``KEY=VALUE,...`` → a ``Variant`` (``numerics.variants.parse_variant``); a bad text is one line
    naming ``--variant``."""

    name = "variant"

    def convert(self, value, param, ctx):
        from mmicl.numerics.variants import Variant, parse_variant  # SymPy: only when --variant is given

        if isinstance(value, Variant):
            return value
        try:
            return parse_variant(value)
        except InputError as e:
            self.fail(str(e), param, ctx)

    def get_metavar(self, param, ctx=None):
        return "KEY=VALUE,..."


def variant_option(extra: str = ""):
    """``--variant KEY=VALUE,...``: the command gets a ``Variant``, or None where it is not given."""
    return click.option("--variant", type=VariantText(), default=None,
                        help="An LCA variant, e.g. readout=evolved-keys-and-query or f0=tokens,skip=off (keys readout, "
                             "f0, skip, param; see docs/variants.md)." + (" " + extra if extra else ""))


def variant_or_alias(variant, alias: str, value: str | None, param: str | None):
    """The variant meant by ``--variant`` and an option ``alias`` whose ``value`` means
    ``param=<param>``: either alone, or both where the variant's param (one where it does not say)
    is ``param``; both with different params is a usage error naming both.  None where neither is given."""
    from dataclasses import replace

    from mmicl.numerics.variants import DEFAULT_VARIANT

    if value is None:
        return variant
    if variant is None:
        return replace(DEFAULT_VARIANT, param=param)
    if variant.param != param:
        raise click.UsageError(f"{alias} {value} means --variant param={param}, but --variant {variant.short} has "
                               f"param={variant.param}; give one of them")
    return variant


def plain_variant(variant) -> bool:
    """True for no variant, or one that differs from the default in ``param`` alone (the specialised
    code paths of the one-, two-parameter and untied LCA)."""
    from dataclasses import replace

    from mmicl.numerics.variants import DEFAULT_VARIANT

    return variant is None or replace(variant, param=DEFAULT_VARIANT.param) == DEFAULT_VARIANT


def variant_names(variant) -> tuple[str, ...]:
    """The variant's parameters (``theory.variants.derive(v).params``: α and/or β; none where it predicts 0)."""
    from mmicl.theory.variants import derive

    return tuple(map(str, derive(variant).params))


def named(names, values) -> dict[str, float]:
    return {str(k): float(v) for k, v in zip(names, values)}


def variant_minimiser(law, T: int, variant) -> dict:
    """θ_T (``numerics.variants.minimise``) as JSON: ``{"theta": {name: value}, "excess", "unique",
    "resolved", "resolution"}`` (``resolved`` false: the excess is below the iterated layer's
    rounding bound ``resolution``, and neither it nor θ_T is guaranteed; ``note`` says so)."""
    from mmicl.numerics.variants import minimise

    m = minimise(law, T, variant)
    out = {"theta": named(variant_names(variant), m.params), "excess": m.excess, "unique": m.unique,
           "resolved": m.resolved, "resolution": m.resolution}
    if m.note:
        out["note"] = m.note
    return out


def variant_floor(law, variant) -> dict:
    """The floor (``numerics.variants.floor``) as JSON: ``{"value", "zero", "regime", "phi": {name: value},
    "stable", "scaled"}`` (φ: the minimiser in the family of the regime, by that family's names)."""
    from mmicl.numerics.variants import floor

    f = floor(law, variant)
    return {"value": f.value, "zero": f.zero, "regime": f.regime, "phi": named(f.names, f.params), "stable": f.stable,
            "scaled": f.scaled}


MINUS = "\N{MINUS SIGN}"


def number(x: float, digits: int = 4) -> str:
    """``x`` to ``digits`` significant digits (``g`` style: ``0.0621``, ``1.235e+05``) with a true
    minus sign, ``−0.0621``; 0 (also −0.0) is ``0``."""
    if x == 0:
        return "0"
    text = f"{x:.{digits}g}"
    return MINUS + text[1:] if text.startswith("-") else text


def signed_sum(terms, digits: int = 4) -> str:
    """``a·X + b·Y …`` from ``[(a, "·X"), (b, "·Y"), …]`` (each number followed by its text), every
    sign written once, as the operator between the terms: ``[(-0.0621, "·log T"), (-0.0237, "")]``
    is ``−0.0621·log T − 0.0237`` (numbers by ``number``)."""
    out = []
    for i, (x, text) in enumerate(terms):
        magnitude = number(abs(x), digits) + text
        negative = x < 0
        out.append((MINUS if negative else "") + magnitude if i == 0 else
                   f" {MINUS if negative else '+'} {magnitude}")
    return "".join(out)


def show_excess(m: dict, num=None) -> str:
    """The least excess of ``variant_minimiser``, or its bound where it is not resolved; ``num``
    (e.g. ``number``) formats the numbers, else ``.6e`` and ``.1e``."""
    if num is not None:
        return num(m["excess"]) if m["resolved"] else f"< {num(m['resolution'])} (rounding bound)"
    return f"{m['excess']:.6e}" if m["resolved"] else f"< {m['resolution']:.1e} (rounding bound)"


def show_named(values: dict[str, float], digits: int = 12, num=None) -> str:
    """``α = …, β = …`` (``—`` where there are no parameters); ``num`` formats the numbers, else
    ``digits`` significant digits."""
    greek = {"alpha": "α", "beta": "β", "tau": "τ"}
    show = num or (lambda v: f"{v:.{digits}g}")
    return ", ".join(f"{greek.get(k, k)} = {show(v)}" for k, v in values.items()) or "— (no parameters)"


def floor_line(fl: dict, num=None) -> str:
    """The floor of ``variant_floor`` in words; ``num`` formats the numbers, else ``.6e``, ``.1e``
    and 8 digits."""
    if num is not None:
        value = f"0 (to rounding: {num(fl['value'])})" if fl["zero"] else num(fl["value"])
        return (f"floor (T → ∞) {value}, {fl['regime']} regime at {show_named(fl['phi'], num=num)}; "
                f"stable family {num(fl['stable'])}, scaled family {num(fl['scaled'])}")
    value = f"0 (to rounding: {fl['value']:.1e})" if fl["zero"] else f"{fl['value']:.6e}"
    return (f"floor (T → ∞) {value}, {fl['regime']} regime at {show_named(fl['phi'], 8)}; "
            f"stable family {fl['stable']:.6e}, scaled family {fl['scaled']:.6e}")
