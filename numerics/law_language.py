"""The LAW language: a task law written as text, for the command line and reports.

    LAW   := ITEM (';' ITEM)*
    ITEM  := 's=' DIST | 'sv=' DIST | 'sr=' DIST | 'zeta=' ZETA | 'd1=' INT | 'd2=' INT
    DIST  := point(c) | uniform(a,b) | twopoint(a,b,p) | beta(p,q,a,b)
           | discrete(v1:p1,v2:p2,...) | mix(w1*DIST,w2*DIST,...) | exponential(rate)
    ZETA  := normal | rademacher | const(c)

``s`` is the law of the squared norm ``‖m‖²`` (direction uniform on the sphere of R^{d1+d2});
``sv``/``sr`` are the laws of ``‖v‖²`` and ``‖r‖²`` (independent, isotropic in each modality).
``twopoint(a,b,p)`` is a with probability p, b otherwise. Defaults: ``zeta=normal; d1=1; d2=1``.
Examples: ``s=uniform(0.5,4)``, ``sv=point(1); sr=beta(2,2,0,3); zeta=rademacher; d1=3; d2=2``.
"""
from __future__ import annotations

import functools
import math
import inspect
import re

from .scalar_laws import Beta, Discrete, Exponential, LawError, Mixture, Point, ScalarLaw, TwoPoint, Uniform
from .task_law import TaskLaw, ZetaLaw
from .validate import MAX_LAW_SCALE, MAX_ZETA2, InputError, abbreviate, shorten_message

__all__ = ["GRAMMAR", "LawSyntaxError", "parse_law", "parse_scalar_law", "parse_zeta", "as_law", "takes_law", "check_law_scale"]

GRAMMAR = __doc__.split("\n\n")[1]


class LawSyntaxError(LawError):
    """A LAW string that does not parse; the message shows the grammar."""

    def __init__(self, text: str, why: str):
        super().__init__(shorten_message(f"cannot read the law {abbreviate(repr(text))}: {why}\nThe LAW grammar:\n{GRAMMAR}"))


_CALL = re.compile(r"^\s*([a-z]+)\s*\((.*)\)\s*$", re.S)


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise ValueError("unbalanced ')'")
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if depth != 0:
        raise ValueError("unbalanced '('")
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def _numbers(args: list[str], k: int, name: str) -> list[float]:
    if len(args) != k:
        raise ValueError(f"{name} takes {k} number(s), got {len(args)}")
    try:
        return [float(a) for a in args]
    except ValueError:
        raise ValueError(f"{name}: arguments must be numbers, got {args}") from None


def _short_errors(f):
    """``f`` with the lines of its ``LawError``s shortened (``validate.shorten_message``): a bad
    10 000-atom law is quoted by its first characters and its length, not in full."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except LawError as e:
            short = shorten_message(str(e))
            if short != str(e):
                e.args = (short,)
            raise

    return wrapper


@_short_errors
def parse_scalar_law(text: str) -> ScalarLaw:
    """Parse a ``DIST``; raise ``LawSyntaxError`` (with the grammar) or ``LawError``."""
    try:
        return _parse_dist(text)
    except LawError:
        raise
    except ValueError as e:
        raise LawSyntaxError(text, str(e)) from None


def _parse_dist(text: str) -> ScalarLaw:
    m = _CALL.match(text)
    if not m:
        raise ValueError(f"expected NAME(ARGS), got {text!r}")
    name, inner = m.group(1), m.group(2)
    args = _split_top(inner) if inner.strip() else []
    if name == "point":
        return Point(*_numbers(args, 1, name))
    if name == "uniform":
        return Uniform(*_numbers(args, 2, name))
    if name == "twopoint":
        return TwoPoint(*_numbers(args, 3, name))
    if name == "beta":
        return Beta(*_numbers(args, 4, name))
    if name == "exponential":
        return Exponential(*_numbers(args, 1, name))
    if name == "discrete":
        pairs = _pairs(args, ":", "discrete atoms are VALUE:PROB")
        return Discrete(tuple(float(v) for v, _ in pairs), tuple(float(p) for _, p in pairs))
    if name == "mix":
        pairs = _pairs(args, "*", "mixture parts are WEIGHT*DIST")
        return Mixture(tuple(_parse_dist(d) for _, d in pairs), tuple(float(w) for w, _ in pairs))
    raise ValueError(f"unknown law {name!r}")


def _pairs(args: list[str], sep: str, form: str) -> list[tuple[str, str]]:
    """Split each argument once at ``sep`` (``1:0.5`` or ``0.3*point(1)``)."""
    for a in args:
        if sep not in a:
            raise ValueError(f"{form}, got {a!r}")
    return [tuple(a.split(sep, 1)) for a in args]


@_short_errors
def parse_zeta(text: str) -> ZetaLaw:
    t = text.strip()
    if t in ("normal", "rademacher"):
        return ZetaLaw(t)
    m = _CALL.match(t)
    if m and m.group(1) == "const":
        try:
            c = float(m.group(2))
        except ValueError:
            raise LawSyntaxError(text, "const(c) needs a number c") from None
        return ZetaLaw("const", c)
    raise LawSyntaxError(text, "ζ is normal, rademacher or const(c)")


@_short_errors
def parse_law(text: str, *, zeta: str | None = None, d1: int | None = None, d2: int | None = None) -> TaskLaw:
    """Parse a LAW string into a ``TaskLaw``; keyword arguments override items of the string."""
    items: dict[str, str] = {}
    for part in _split_semicolons(text):
        if "=" not in part:
            raise LawSyntaxError(text, f"each item is KEY=VALUE, got {part!r}")
        key, val = (x.strip() for x in part.split("=", 1))
        if key not in ("s", "sv", "sr", "zeta", "d1", "d2"):
            raise LawSyntaxError(text, f"unknown key {key!r}")
        if key in items:
            raise LawSyntaxError(text, f"{key} is given twice")
        items[key] = val
    kw: dict = {}
    for key in ("s", "sv", "sr"):
        if key in items:
            try:
                kw[key] = _parse_dist(items[key])
            except LawError:
                raise
            except ValueError as e:
                raise LawSyntaxError(text, f"in {key}={items[key]}: {e}") from None
    kw["zeta"] = parse_zeta(zeta if zeta is not None else items.get("zeta", "normal"))
    for key, override in (("d1", d1), ("d2", d2)):
        raw = override if override is not None else items.get(key, "1")
        try:
            kw[key] = int(raw)
        except ValueError:
            raise LawSyntaxError(text, f"{key} must be a positive integer, got {raw!r}") from None
    if not any(k in kw for k in ("s", "sv", "sr")):
        raise LawSyntaxError(text, "give s=DIST, or sv=DIST and sr=DIST")
    return TaskLaw(**kw)


def _split_semicolons(text: str) -> list[str]:
    try:
        parts = _split_top(text, ";")
    except ValueError as e:
        raise LawSyntaxError(text, str(e)) from None
    return [p for p in parts if p]


def as_law(law: TaskLaw | str) -> TaskLaw:
    """``law`` itself, or the ``TaskLaw`` that LAW text describes."""
    if isinstance(law, TaskLaw):
        return law
    if isinstance(law, str):
        return parse_law(law)
    raise LawError(f"a task law must be a TaskLaw or LAW text such as 's=uniform(0.5,4)', got {law!r}")


def takes_law(f):
    """Let ``f`` take LAW text as well as a ``TaskLaw`` for its parameter named ``law``."""
    position = list(inspect.signature(f).parameters).index("law")

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        if len(args) > position:
            args = (*args[:position], as_law(args[position]), *args[position + 1:])
        elif "law" in kwargs:
            kwargs["law"] = as_law(kwargs["law"])
        return f(*args, **kwargs)

    return wrapper


@takes_law
def check_law_scale(law: TaskLaw, limit: float = MAX_LAW_SCALE, error: type[ValueError] = InputError,
                    zeta_limit: float = MAX_ZETA2):
    """``law`` (a ``TaskLaw``) if its squared norms and its labels stay within ``limit``, else an
    ``error`` naming the part that does not.

    A bounded law is judged by the top of its support, an unbounded one (``exponential``, or a
    mixture with one) by its mean; ``E[ζ²]`` is held to ``zeta_limit``."""
    why = "beyond that float64 loses the digits of 1 + s and the numbers mean nothing"
    parts = [("s", law.s)] if law.s is not None else [("sv", law.sv), ("sr", law.sr)]
    for key, dist in parts:
        hi = dist.support()[1]
        if math.isfinite(hi):
            if hi > limit:
                raise error(f"{key} reaches {hi:.6g} (the top of its support); squared norms must stay "
                            f"≤ {limit:g} ({why})")
        else:
            mean = _mean(dist)
            if not (math.isfinite(mean) and mean <= limit):
                raise error(f"{key} has mean {mean:.6g} (an unbounded law); its mean must be ≤ {limit:g} ({why})")
    try:
        z2 = law.zeta.second_moment()
    except OverflowError:  # const(c) with c² beyond float64
        z2 = math.inf
    if not (math.isfinite(z2) and z2 <= zeta_limit):
        raise error(f"zeta has E[ζ²] = {z2:.6g}; it must stay ≤ {zeta_limit:g} (the models train in float32 on "
                    "squared labels; ζ only scales the labels, so every risk scales by E[ζ²]: rescale afterwards)")
    return law


def _mean(dist) -> float:
    """The mean of a scalar law, also for a mixture with an unbounded component (whose own
    ``mean`` would need a quadrature rule on an unbounded support)."""
    if hasattr(dist, "components"):
        return sum(p * _mean(c) for c, p in zip(dist.components, dist.probs) if p > 0)
    return float(dist.mean())
