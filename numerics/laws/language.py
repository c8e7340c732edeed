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

import difflib
import functools
import inspect
import math
import re

from .scalar import Beta, Discrete, Exponential, LawError, Mixture, Point, ScalarLaw, TwoPoint, Uniform
from .task import TaskLaw, ZetaLaw
from ..validate import MAX_DIM, MAX_LAW_SCALE, MAX_ZETA2, MIN_ZETA2, InputError, abbreviate, check_dimension, shorten_message

__all__ = ["GRAMMAR", "LawSyntaxError", "parse_law", "parse_scalar_law", "parse_zeta", "as_law", "takes_law", "check_law_scale",
           "check_law_limits", "read_law", "CALL", "split_top", "split_pairs", "split_items"]

GRAMMAR = __doc__.split("\n\n")[1]
"""The grammar of the LAW language (text, as in this module's docstring), shown with every error of
``parse_law``."""


CALL = re.compile(r"^\s*([a-z]+)\s*\((.*)\)\s*$", re.S)
"""``NAME(ARGS)`` as a whole (the exact reading of ``proofs/certificates/exact_law`` splits with it)."""


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


class LawSyntaxError(LawError):
    """A LAW string that does not parse.

    The message says what was expected; where the place is in the text, the text follows on one
    line with a caret ``^`` under that place on the next; the grammar ends it.  The parts are kept
    as attributes: ``text``, ``why`` and ``position`` (the offset of the place in ``text``, counted
    from 0, or ``None`` where the mistake is not in the text, e.g. a bad keyword argument)."""

    def __init__(self, text: str, why: str, position: int | None = None):
        self.text, self.why, self.position = text, why, position
        lines = [f"cannot read the law {abbreviate(repr(text))}: {why}"]
        if position is not None:
            lines += _pointer(str(text), position)
        lines += ["The LAW grammar:", GRAMMAR]
        super().__init__(shorten_message("\n".join(lines)))


POINTER_WIDTH = 72
"""The most characters of the LAW text shown above the caret; a longer text is cut to a window
around the place (marked "…" where it is cut)."""


def _pointer(text: str, at: int, width: int = POINTER_WIDTH) -> list[str]:
    """Two lines: ``text`` (indented by two spaces, a window of it if long, every character one
    column: whitespace and unprintable characters shown as spaces) and a caret under offset ``at``
    (``at == len(text)``: just after the end)."""
    flat = "".join(c if c.isprintable() else " " for c in text)
    at = max(0, min(at, len(flat)))
    lo = 0
    if len(flat) > width:
        lo = max(0, min(at - width // 2, len(flat) - width))
    left = "…" if lo > 0 else ""
    right = "…" if lo + width < len(flat) else ""
    return [f"  {left}{flat[lo:lo + width]}{right}", "  " + " " * (len(left) + at - lo) + "^"]


class _Bad(ValueError):
    """A syntax error at offset ``at`` of the text being read (``None``: not at a place in it)."""

    def __init__(self, why: str, at: int | None = None):
        super().__init__(why)
        self.at = at


class _Piece(str):
    """A piece of the LAW text that remembers its offset ``at`` in the whole text."""

    at: int

    def __new__(cls, text: str, at: int):
        piece = super().__new__(cls, text)
        piece.at = at
        return piece


def _piece(text: str, start: int = 0, end: int | None = None) -> _Piece:
    """``text[start:end]`` stripped, as a ``_Piece`` with its offset in the whole text (``text``'s
    own offset where ``text`` is a ``_Piece``)."""
    end = len(text) if end is None else end
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return _Piece(str(text)[start:end], getattr(text, "at", 0) + start)


def _split_pieces(text: str, sep: str = ",") -> list[_Piece]:
    """Split ``text`` at ``sep`` outside parentheses into stripped ``_Piece``s; an unbalanced
    parenthesis is a ``_Bad`` at its place."""
    parts, depth, start, opened = [], 0, 0, []
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
            opened.append(i)
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise _Bad("unbalanced ')': it closes no '('", getattr(text, "at", 0) + i)
            opened.pop()
        if ch == sep and depth == 0:
            parts.append(_piece(text, start, i))
            start = i + 1
    if depth != 0:
        raise _Bad("unbalanced '(': it is never closed (expected ')')", getattr(text, "at", 0) + opened[0])
    parts.append(_piece(text, start))
    return parts


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside parentheses (stripped pieces; a ``ValueError`` for unbalanced ones)."""
    return [str(p) for p in _split_pieces(text, sep)]


LAWS = {  # name: (its form, what its numbers are, their names); discrete and mix take pairs
    "point": ("point(c)", "the value c", ("c",)),
    "uniform": ("uniform(a,b)", "the ends a and b of the interval", ("a", "b")),
    "twopoint": ("twopoint(a,b,p)", "a, b and the probability p of a", ("a", "b", "p")),
    "beta": ("beta(p,q,a,b)", "the shapes p and q, then the ends a and b of the support", ("p", "q", "a", "b")),
    "discrete": ("discrete(v1:p1,v2:p2,...)", "VALUE:PROB pairs", None),
    "mix": ("mix(w1*DIST,w2*DIST,...)", "WEIGHT*DIST pairs", None),
    "exponential": ("exponential(rate)", "the rate", ("rate",)),
}
ZETAS = ("normal", "rademacher", "const")
_CONST = ("const(c)", "the value c of ζ", ("c",))
KEYS = ("s", "sv", "sr", "zeta", "d1", "d2")
_ZETA_IS = "ζ is normal, rademacher or const(c)"


def _close(word: str, known) -> str:
    """`` (did you mean 'x'?)`` for the known name closest to ``word``, or ``""``."""
    match = difflib.get_close_matches(word, list(known), n=1, cutoff=0.6)
    return f" (did you mean {match[0]!r}?)" if match else ""


def _numbers(args: list[str], k: int, name: str) -> list[float]:
    form, meaning, names = _CONST if name == "const" else LAWS[name]
    if len(args) != k:
        place = args[k] if len(args) > k else getattr(args, "close", None)
        raise _Bad(f"{form} takes {k} number{'s' if k != 1 else ''}: {meaning}; got {len(args)}",
                   getattr(place, "at", place))
    for arg, what in zip(args, names):
        _number(arg, f"{form}: {what}")
    return [float(a) for a in args]


def _number(arg: str, what: str) -> float:
    """``float(arg)``, or a ``_Bad`` at ``arg`` saying that ``what`` must be a number."""
    try:
        return float(arg)
    except ValueError:
        raise _Bad(f"{what} must be a number, got {str(arg)!r}", getattr(arg, "at", None)) from None


class _Args(list):
    """The arguments of a call (``_Piece``s), with ``close``: the offset of its ``)``."""

    close: int | None = None


_NAME = re.compile(r"[A-Za-z_]\w*")


def _call(text: str, known, what: str, follows: str) -> tuple[str, _Args]:
    """``NAME(ARGS)`` read from ``text`` (a ``_Piece`` or a plain string, balanced): the name, one
    of ``known``, and its arguments split at top-level commas; a ``_Bad`` at the first place that
    is not that.  ``what`` names the thing expected, ``follows`` what may come after the call."""
    base = getattr(text, "at", 0)
    i = len(text) - len(text.lstrip())
    if i == len(text):
        raise _Bad(f"expected {what}, got nothing", base + i)
    m = _NAME.match(text, i)
    if not m:
        raise _Bad(f"expected {what}, got {str(text)[i:]!r}", base + i)
    name = m.group(0)
    if name not in known:
        raise _Bad(_unknown(name, known, what), base + i)
    j = m.end()
    while j < len(text) and text[j].isspace():
        j += 1
    form = _CONST[0] if name == "const" else LAWS[name][0]
    if j == len(text) or text[j] != "(":
        raise _Bad(f"expected '(' after {name}: {form}", base + j)
    depth = 0
    for k in range(j, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            break
    else:  # the callers split the whole text first, which refuses unbalanced parentheses
        raise _Bad("unbalanced '(': it is never closed (expected ')')", base + j)
    rest = _piece(text, k + 1)
    if rest:
        raise _Bad(f"expected {follows} after {name}(…), got {str(rest)!r}", rest.at)
    inner = _Piece(str(text)[j + 1:k], base + j + 1)
    args = _Args(_split_pieces(inner) if inner.strip() else [])
    args.close = base + k
    return name, args


def _unknown(name: str, known, what: str) -> str:
    """The message for a name that is not one of ``known``: the close match, the known names, and
    where the name belongs if it is the name of the other kind of law."""
    if set(known) == set(ZETAS):
        other = " (a law of s, sv or sr, not of ζ)" if name in LAWS else _close(name, known)
        return f"unknown ζ law {name!r}{other}; {_ZETA_IS}"
    other = " (a law of ζ: write zeta=" + name + ")" if name in ZETAS else _close(name, known)
    return f"unknown law {name!r}{other}; the laws are {', '.join(known)}"


@_short_errors
def parse_scalar_law(text: str) -> ScalarLaw:
    """Parse a ``DIST``; raise ``LawSyntaxError`` (with the caret and the grammar) or ``LawError``."""
    try:
        _ascii_only(text)
        _split_pieces(text)  # unbalanced parentheses, at their place
        return _parse_dist(text)
    except _Bad as e:
        raise LawSyntaxError(text, str(e), e.at) from None


def _parse_dist(text: str, follows: str = "the end of the law") -> ScalarLaw:
    name, args = _call(text, LAWS, "a law such as uniform(0.5,4)", follows)
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
        pairs = split_pairs(args, ":", "discrete atoms are VALUE:PROB")
        for v, p in pairs:
            _number(v, "discrete(v1:p1,...): the value"), _number(p, "discrete(v1:p1,...): the probability")
        return Discrete(tuple(float(v) for v, _ in pairs), tuple(float(p) for _, p in pairs))
    if name == "mix":
        pairs = split_pairs(args, "*", "mixture parts are WEIGHT*DIST")
        for w, _ in pairs:
            _number(w, "mix(w1*DIST,...): the weight")
        return Mixture(tuple(_parse_dist(d, "',' or ')'") for _, d in pairs), tuple(float(w) for w, _ in pairs))
    raise AssertionError(name)  # _call admits only the names above


def split_pairs(args: list[str], sep: str, form: str) -> list[tuple[str, str]]:
    """Split each argument once at ``sep`` (``1:0.5`` or ``0.3*point(1)``); the halves of a
    ``_Piece`` are ``_Piece``s, stripped."""
    for a in args:
        if sep not in a:
            raise _Bad(f"{form}, got {a!r}" if a else f"{form}, got an empty argument", getattr(a, "at", None))
    if all(isinstance(a, _Piece) for a in args):
        return [(_piece(a, 0, a.index(sep)), _piece(a, a.index(sep) + 1)) for a in args]
    return [tuple(a.split(sep, 1)) for a in args]


@_short_errors
def parse_zeta(text: str) -> ZetaLaw:
    """Parse a ``ZETA``; raise ``LawSyntaxError`` (with the caret and the grammar) or ``LawError``."""
    try:
        _ascii_only(text)
        _split_pieces(text)
        return _zeta(text)
    except _Bad as e:
        raise LawSyntaxError(text, str(e), e.at) from None


def _zeta(text: str) -> ZetaLaw:
    t = _piece(text)
    if t in ("normal", "rademacher"):
        return ZetaLaw(str(t))
    m = _NAME.match(t)
    if m and m.group(0) in ("normal", "rademacher"):
        raise _Bad(f"{m.group(0)} takes no arguments; {_ZETA_IS}", t.at + m.end())
    name, args = _call(t, ZETAS, f"ζ's law: {_ZETA_IS[5:]}", "the end of ζ's law")
    (c,) = _numbers(args, 1, name)
    return ZetaLaw("const", c)


@_short_errors
def parse_law(text: str, *, zeta: str | None = None, d1: int | None = None, d2: int | None = None) -> TaskLaw:
    """Parse a LAW string into a ``TaskLaw``; keyword arguments override items of the string.

    Text that does not parse raises ``LawSyntaxError``, which says what was expected, puts a caret
    under the place and shows the grammar; a law that parses but is not valid raises ``LawError``
    from its constructor."""
    try:
        return _parse_law(text, zeta, d1, d2)
    except _Bad as e:
        raise LawSyntaxError(text, str(e), e.at) from None


def _ascii_only(text) -> None:
    """A ``_Bad`` at the first character of ``text`` (where it is a str; anything else is refused
    by the parser itself) that is not ASCII: Python's ``float`` and ``int`` read full-width and
    other Unicode digits ("１" is 1), which a law must not."""
    for i, ch in enumerate(text if isinstance(text, str) else ""):
        if ord(ch) > 127:
            hint = {"−": "write '-' for minus", "–": "write '-' for minus", "·": "write '*' or 'e' for powers of ten",
                    "×": "write 'e' for powers of ten"}.get(ch, "write numbers with the digits 0-9 and names in ASCII")
            raise _Bad(f"LAW text is ASCII: {ch!r} (U+{ord(ch):04X}) is not; {hint}", i)


def _parse_law(text: str, zeta, d1, d2) -> TaskLaw:
    _ascii_only(text)
    items: dict[str, _Piece] = {}
    for part in _split_pieces(text, ";"):
        if not part:
            continue
        key, val = _item(part)
        if key in items:
            raise _Bad(f"{key} is given twice", part.at)
        items[key] = val
    kw: dict = {}
    for key in ("s", "sv", "sr"):
        if key in items:
            kw[key] = _parse_dist(items[key], "';' or the end of the law")
    kw["zeta"] = parse_zeta(zeta) if zeta is not None else _zeta(items.get("zeta", "normal"))
    for key, override in (("d1", d1), ("d2", d2)):
        raw = override if override is not None else items.get(key, "1")
        try:
            kw[key] = int(raw)
        except ValueError:
            where = "" if override is None else " (the keyword argument)"
            raise _Bad(f"{key}{where} must be a positive integer, got {str(raw)!r}",
                       getattr(raw, "at", None) if override is None else None) from None
    if not any(k in kw for k in ("s", "sv", "sr")):
        raise _Bad("give s=DIST, or sv=DIST and sr=DIST (the law of the squared norms): none is here",
                   len(text.rstrip()))
    return TaskLaw(**kw)


def _item(part: _Piece) -> tuple[str, _Piece]:
    """``KEY=VALUE`` read from one item (a stripped ``_Piece``, not empty): the key (one of
    ``KEYS``) and the value (a ``_Piece``); a ``_Bad`` at the first place that is not that."""
    eq = part.find("=")
    word = _NAME.match(part)
    if eq < 0 or (word and word.group(0) in KEYS and part[word.end():eq].strip()):
        if word and word.group(0) in KEYS:
            raise _Bad(f"expected '=' after the key {word.group(0)!r}", part.at + word.end())
        name = word.group(0) if word else ""
        hint = f" (a law needs its key: s={str(part)})" if name in LAWS else ""
        raise _Bad(f"each item is KEY=VALUE with KEY one of {', '.join(KEYS)}; got {str(part)!r}{hint}", part.at)
    key = str(part[:eq]).strip()
    if not key:
        raise _Bad(f"expected a key ({', '.join(KEYS)}) before '='", part.at)
    if key not in KEYS:
        raise _Bad(f"unknown key {key!r}{_close(key, KEYS)}; the keys are {', '.join(KEYS)}", part.at)
    val = _piece(part, eq + 1)
    _one_item(val)
    if not val:
        raise _Bad(f"expected a value after '{key}='", part.at + eq + 1)
    return key, val


def _one_item(val: _Piece) -> None:
    """A ``_Bad`` where a value holds a second ``KEY=`` outside parentheses: two items with no
    ``;`` between them (``s=uniform(1,2) d1=3``)."""
    depth = 0
    for i, ch in enumerate(val):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "=" and depth == 0:
            j = i
            while j > 0 and val[j - 1].isspace():
                j -= 1
            start = j
            while start > 0 and (val[start - 1].isalnum() or val[start - 1] == "_"):
                start -= 1
            if start == j:
                return  # '=' with no key before it: the value's own parser says what is wrong
            before = start
            while before > 0 and val[before - 1].isspace():
                before -= 1
            if before > 0 and val[before - 1] == ",":
                raise _Bad("expected ';' between two items, not ','", val.at + before - 1)
            raise _Bad("expected ';' between two items", val.at + start)


def split_items(text: str) -> list[str]:
    try:
        parts = split_top(text, ";")
    except _Bad as e:
        raise LawSyntaxError(text, str(e), e.at) from None
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


def check_law_limits(task, what: str = "", dim_limit: int = MAX_DIM) -> TaskLaw:
    """``task`` (a ``TaskLaw`` or LAW text) as a ``TaskLaw`` that the command line would also take:
    it parses (a ``LawError`` otherwise), its squared norms stay ≤ ``MAX_LAW_SCALE``, ``E[ζ²]`` lies in
    ``[MIN_ZETA2, MAX_ZETA2]`` and ``d1 + d2 ≤ dim_limit``."""
    law = as_law(task)
    check_law_scale(law, error=LawError)
    check_dimension(law.d1, law.d2, dim_limit, what)
    return law


def read_law(text: str, **overrides) -> TaskLaw:
    """The ``TaskLaw`` of LAW ``text`` (with ``zeta=``, ``d1=``, ``d2=`` overrides as ``parse_law``
    takes them), as the command line and sweep files take it: it parses, its squared norms and labels
    stay within ``MAX_LAW_SCALE``, ``E[ζ²]`` in ``[MIN_ZETA2, MAX_ZETA2]``, and ``d1 + d2 ≤ MAX_DIM``.
    Otherwise a one-line ``LawError``; its ``option`` is ``"zeta"`` when the ``zeta`` override is what
    is wrong (None otherwise), so that a caller can name the right option."""
    if not isinstance(text, str) or not text.strip():
        raise LawError("give a law, e.g. 's=uniform(0.5,4)' (see 'mmicl laws'); got an empty string"
                       if isinstance(text, str) else f"a law is LAW text such as 's=uniform(0.5,4)', got {text!r}")
    if overrides.get("zeta") is not None:
        try:
            parse_zeta(overrides["zeta"])
        except LawError as e:
            e.option = "zeta"
            raise
        except OverflowError:  # ZetaLaw squares c in Python floats (const(1e200))
            e = LawError(f"{overrides['zeta']}: ζ² overflows float64; E[ζ²] must lie in [{MIN_ZETA2:g}, {MAX_ZETA2:g}]")
            e.option = "zeta"
            raise e from None
    try:
        law = parse_law(text, **overrides)
        check_law_scale(law, error=LawError)
    except OverflowError:  # a number of the law whose square (or sum) leaves float64, e.g. zeta=const(1e200)
        raise LawError(f"a number in {text!r} overflows float64 when squared; squared norms must stay ≤ "
                       f"{MAX_LAW_SCALE:g} and E[ζ²] in [{MIN_ZETA2:g}, {MAX_ZETA2:g}]") from None
    if law.d > MAX_DIM:
        raise LawError(f"d1 + d2 = {law.d}; it must be ≤ {MAX_DIM} (the models hold (d+1)×(d+1) matrices per prompt)")
    return law
