"""A claim's own kind of case: what it is checked on when that is not a task law.

Most claims are checked on a task law, given as LAW text (``--law``).  A claim about another model
(a fixed covariance Λ and a context length N, a noise level, a matrix) declares its own
``CaseType``: a name, a parser from text, the inverse that writes a case as text, and optionally a
Hypothesis strategy of cases and an example text::

    CASE = mmicl.CaseType("Λ and N", parse=parse_case, text=case_text,
                          strategy=lambda: st.builds(...), example="Lambda=diag(1,2,4); N=5")

    @mmicl.claim("mine.minimiser", title=..., statement=..., case=CASE)
    def evaluate(config):
        Lam, N = config.case_value if config.case_value is not None else DEFAULT
        ...

``mmicl verify --claim 'mine.*' --case 'Lambda=diag(1,3); N=2'``, ``mmicl.verify(..., case=...)`` and
``mmicl.testing.check_claim(..., case=...)`` then run the claim on that case: its text is read by
the claim's ``CaseType`` before any claim runs (a text it cannot read is one ``CaseError`` line,
with the example), recorded in ``verdicts.json`` as ``case``, and the claim gets the parsed case as
``config.case_value`` (``config.case`` keeps the text).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from mmicl.theory.errors import InputError

__all__ = ["CaseType", "CaseError", "case_items", "matrix_from_text", "matrix_text"]


class CaseError(InputError):
    """A case text that a claim's ``CaseType`` cannot read, or a case given to a claim that takes none."""


@dataclass(frozen=True)
class CaseType:
    """A claim's kind of case.

    ``name``: what a case is, in words (``"Λ and N"``).  ``parse(text)``: the case that ``text``
    describes; it raises ``ValueError`` (or ``InputError``) with the reason for a text it cannot
    read.  ``text(case)``: the text that ``parse`` reads back as ``case`` (a case drawn by a
    strategy travels as text, so every run records a case it can be rerun on).  ``strategy()``: a
    Hypothesis strategy of cases, for property tests (``mmicl.testing.cases``).  ``example``: a text
    that parses, shown when one does not."""

    name: str
    parse: Callable[[str], Any]
    text: Callable[[Any], str] = str
    strategy: Callable[[], Any] | None = None
    example: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise TypeError(f"a CaseType's name is a non-empty text, got {self.name!r}")
        for field in ("parse", "text"):
            if not callable(getattr(self, field)):
                raise TypeError(f"a CaseType's {field} is a function, got {getattr(self, field)!r}")
        if self.strategy is not None and not callable(self.strategy):
            raise TypeError(f"a CaseType's strategy is a function returning a Hypothesis strategy, got {self.strategy!r}")

    def read(self, text: str, claim_id: str = "") -> Any:
        """The case ``text`` describes (``parse``), or a one-line ``CaseError`` with the reason and
        the example."""
        where = f" (claim {claim_id})" if claim_id else ""
        if not isinstance(text, str) or not text.strip():
            raise CaseError(f"a case is text describing {self.name}, got {text!r}{where}" + self._hint())
        try:
            return self.parse(text)
        except (ValueError, TypeError, ArithmeticError, InputError) as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise CaseError(f"case {text!r} is not {self.name}: {first}{where}" + self._hint()) from None

    def as_text(self, case: Any, claim_id: str = "") -> str:
        """``case`` as text (``text``), checked to read back: a case object given to a run becomes
        the text the run records."""
        if isinstance(case, str):
            self.read(case, claim_id)
            return case
        try:
            out = self.text(case)
        except Exception as e:  # noqa: BLE001 -- the user's function; one line
            raise CaseError(f"cannot write {case!r} as {self.name}: {type(e).__name__}: {e}") from None
        if not isinstance(out, str):
            raise CaseError(f"{self.name}: text(case) returned {type(out).__name__}, not text")
        self.read(out, claim_id)
        return out

    def _hint(self) -> str:
        return f"; e.g. {self.example!r}" if self.example else ""


# ---------------------------------------------------------------------------------------------
# pieces for a case's text: KEY=VALUE items, matrices
# ---------------------------------------------------------------------------------------------


def case_items(text: str, keys, aliases: dict | None = None) -> dict[str, str]:
    """The ``KEY=VALUE`` items of a case's text, separated by ``;`` (spaces anywhere, any order), as
    ``{key: value text}``.  ``keys``: the keys allowed; ``aliases``: other spellings (``{"Λ": "Lambda"}``).
    ``ValueError`` with the reason for an item without ``=``, an unknown key or a key given twice (a
    ``CaseType``'s ``parse`` lets it through: the case type turns it into a one-line ``CaseError``)."""
    keys, aliases = tuple(keys), dict(aliases or {})
    items: dict[str, str] = {}
    for part in str(text).split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = aliases.get(key.strip(), key.strip())
        if not sep:
            raise ValueError(f"{part.strip()!r} is not KEY=VALUE")
        if key not in keys:
            spelled = ", ".join(k + "".join(f" (or {a})" for a, t in aliases.items() if t == k) for k in keys)
            raise ValueError(f"unknown key {key!r}: the keys are {spelled}")
        if key in items:
            raise ValueError(f"{key} is given twice")
        items[key] = value
    return items


def matrix_from_text(text: str, name: str = "the matrix"):
    """A square matrix of finite floats from ``diag(a,b,...)`` or a list of rows ``[[a,b],[c,d]]``
    (JSON numbers), as a numpy array; ``ValueError`` with the reason otherwise.  Whether it is
    symmetric or positive definite is for a claim's hypotheses (``mmicl.hypotheses.positive_definite``)."""
    import json
    import re

    import numpy as np

    text = str(text).strip()
    diag = re.fullmatch(r"diag\((.*)\)", text, re.S)
    if diag:
        matrix = np.diag([float(v) for v in diag.group(1).split(",")])
    else:
        try:
            rows = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(f"{name} = {text!r}: not diag(a,b,...) nor a list of rows [[a,b],[c,d]]") from None
        if not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows):
            raise ValueError(f"{name}: a matrix is diag(a,b,...) or a list of rows [[a,b],[c,d]]")
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for r in rows for v in r):
            raise ValueError(f"{name}: every entry of the matrix is a number")
        if len({len(r) for r in rows}) != 1:
            raise ValueError(f"{name}: every row of the matrix has the same length")
        matrix = np.array(rows, dtype=float)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"{name} is square, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError(f"every entry of {name} is a finite number")
    return matrix


def matrix_text(matrix) -> str:
    """The text ``matrix_from_text`` reads back as ``matrix``, exactly: ``diag(…)`` for a diagonal
    matrix, else the list of rows; every float as its shortest round-tripping repr."""
    import json

    import numpy as np

    m = np.asarray(matrix, dtype=float)
    if m.ndim == 2 and np.array_equal(m, np.diag(np.diag(m))):
        return "diag(" + ",".join(repr(float(v)) for v in np.diag(m)) + ")"
    return json.dumps(m.tolist())
