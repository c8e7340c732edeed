"""Two verify runs side by side: which verdicts changed and which numbers moved.

``compare(old, new, rtol)`` takes two ``verdicts.json`` documents (any schema version mmicl has
written) and lists, per claim, matched by id:

- a **verdict change** (``holds`` → ``inconclusive``, …), and a claim that is gone;
- a **check whose outcome changed** (pass, FAIL, undecided), matched by the check's name;
- a **number that moved**: every number under a check's ``numbers`` and the claim's ``summary``
  (nested dicts and lists flattened to ``a.b[2]``), compared as |new − old| ≤ atol + rtol·|old|.
  The tolerance is the one the old run states for that number (``Check.atol`` / ``Check.rtol``,
  one for all the check's numbers or one per top-level key, beside ``numbers_tolerance``, the
  sentence saying where it comes from; ``Summary.atol`` / ``Summary.rtol`` for the summary), else
  ``rtol`` (the caller's ``--rtol``; ``DEFAULT_RTOL`` unless given), with ``atol`` 0.  A number that became ``null``
  (or stopped being one) moved; booleans must be equal; strings (a law's text, a reason) are not
  compared, nor are timings (a key ``seconds`` or ``*_seconds``: how long a run took is not one of
  its results, and differs between any two runs).

Numbers compare exactly (as rationals, so a 400-digit integer or a tolerance at the edge of
float64 is no error); a NaN on both sides is "both NaN", not a move, and an infinity (in a file
that was edited by hand: mmicl writes them as ``null``) matches only the same infinity.

Everything listed is a *regression*: a baseline says what the results were, and any move away from
it is reported (``mmicl compare`` exits 1).  A claim, check or number that only the new run has is
listed as new, not as a regression.

**Runs that differ in their settings** (``differences``: seed, size, law, variant, device,
platform, mmicl's version or its software) are said so first, and judged as what they are:

- **another seed**: a number its check declares sampled (``Check.sampled``, ``Summary.sampled``)
  is not a rerun.  Where the check states its standard error (``Check.se``) the two values are two
  independent estimates and agree when |new − old| ≤ ``MOVE_Z``·√(se_old² + se_new²); where it
  states none the number is left uncompared (counted, not listed: its check's outcome is still
  compared).  Numbers not declared sampled do not depend on the seed and keep their tolerances.
- **another size, law, variant or case**: the claims computed other numbers, so only verdicts
  (and claims gone) are compared.
- **another platform, device or software**: exactly what the tolerances are for; said, and
  compared as usual.

``render(comparison)`` writes the result for a reader: the differences, the verdicts that changed,
the checks whose outcome changed, then the numbers that moved most beyond their tolerance (each
tolerance's reason once, as a numbered note), a line each; ``every=True`` lists every change.

What cannot be compared is refused with one line (``CompareError``) before anything is compared:
a path that is not a regular file (a FIFO, a device), a file that is not a verify summary (no
list of claims, a claim without a text id or with an unknown verdict, an ``evidence`` that is not
a dict, checks that are not a list of named dicts, a summary that is not a dict, nesting deeper
than ``MAX_DEPTH``), a ``schema_version`` newer than this mmicl knows, two claims with one id or
two checks of a claim with one name (one would hide the other), and an old run with no claims
(it would pass anything).
"""
from __future__ import annotations

import json
import math
import os
import stat
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from mmicl.theory.errors import InputError
from mmicl.proofs.claim import MOVE_Z, VERDICTS, tolerance_of
from mmicl.numerics.strict_json import SCHEMA_VERSION, to_strict

__all__ = ["DEFAULT_RTOL", "MAX_DEPTH", "MAX_BYTES", "MOVE_Z", "SHOWN", "SETTINGS", "CompareError", "Change",
           "Comparison", "load_summary", "check_summary", "differences", "compare", "render", "number_keys"]

SETTINGS = ("seed", "size", "law", "variant", "case", "device")
"""The run settings a verify summary records at its top level, compared first."""
SHOWN = 10
"""How many moved numbers ``render`` lists by default, largest move beyond tolerance first."""

MAX_DEPTH = 64
"""The deepest nesting of dicts and lists a summary may have (mmicl's own go to about 8)."""
MAX_BYTES = 256 * 2**20
"""The largest summary file read (a full-size run's is about 2 MiB)."""


DEFAULT_RTOL = 1e-9
"""The relative change allowed for a number whose check states no numeric tolerance: a rerun of the
same code on the same platform reproduces mmicl's numbers to the last digit or close to it
(every random choice is seeded), while a real change moves them far more."""


class CompareError(InputError):
    """A folder or file that is not a verify summary mmicl can read."""


@dataclass
class Change:
    claim: str
    kind: str  # "verdict" | "missing claim" | "check outcome" | "missing check" | "number" | "new claim" | "new check"
    # | "new number"
    key: str  # what moved: the check's name and the number's path
    old: Any
    new: Any
    tolerance: str = ""
    allowed: float | None = None
    """For a number: how far it was allowed to move (atol + rtol·|old|, or the seed rule's bound)."""

    @property
    def excess(self) -> float:
        """|new − old| / allowed for a number (inf where it was allowed no move, or is not a
        number on one side); inf for every other change, which is listed before the numbers."""
        if self.kind != "number" or self.allowed is None:
            return math.inf
        d = _distance(self.old, self.new)
        if d is None or math.isnan(d):
            return math.inf
        return d / self.allowed if self.allowed > 0 else math.inf

    @property
    def regression(self) -> bool:
        return not self.kind.startswith("new ")

    def to_json(self) -> dict:
        return {"claim": self.claim, "kind": self.kind, "key": self.key, "old": self.old, "new": self.new,
                "tolerance": self.tolerance, "regression": self.regression}


@dataclass
class Comparison:
    old: str
    new: str
    changes: list[Change] = field(default_factory=list)
    compared_numbers: int = 0
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)
    """The settings the two runs differ in: ``(name, old, new)`` (``differences``)."""
    seed_dependent: int = 0
    """Numbers left uncompared: they depend on the seed, the seeds differ and no se is stated."""
    independent_estimates: int = 0
    """Numbers compared as two independent estimates (the seeds differ)."""
    numbers_compared: bool = True
    """False where the runs differ in size, law, variant or case: only verdicts were compared."""
    claims: int = 0

    @property
    def regressions(self) -> list[Change]:
        return [c for c in self.changes if c.regression]

    def to_json(self) -> dict:
        return {"old": self.old, "new": self.new, "compared_numbers": self.compared_numbers,
                "differences": [{"setting": k, "old": o, "new": n} for k, o, n in self.differences],
                "numbers_compared": self.numbers_compared, "independent_estimates": self.independent_estimates,
                "seed_dependent_not_compared": self.seed_dependent,
                "regressions": len(self.regressions), "changes": [c.to_json() for c in self.changes]}


def load_summary(path: str | Path, *, baseline: bool = False) -> dict:
    """The ``verdicts.json`` at ``path`` (a file, or a folder holding one), checked to be one
    (``check_summary``); ``CompareError`` in one line otherwise.  ``baseline``: it will be the old
    side of a comparison, so a summary with no claims (which would pass anything) is refused too."""
    p = Path(path)
    if p.is_dir():
        p = p / "verdicts.json"
    try:
        st = os.stat(p)
    except FileNotFoundError:
        raise CompareError(f"{path}: no verdicts.json there (give an output folder of mmicl verify, or its "
                           "verdicts.json)") from None
    except OSError as e:
        raise CompareError(f"{p}: cannot be read ({e.strerror or type(e).__name__})") from None
    if not stat.S_ISREG(st.st_mode):  # a FIFO would be read forever
        raise CompareError(f"{p}: not a regular file; give a verdicts.json file or the folder holding one")
    if st.st_size > MAX_BYTES:
        raise CompareError(f"{p}: {st.st_size} bytes, more than a verify summary ever holds ({MAX_BYTES})")
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CompareError(f"{p}: not readable as JSON ({type(e).__name__})") from None
    check_summary(doc, str(p))
    if baseline:
        _has_claims(doc, str(p))
    return doc


def _has_claims(doc: dict, name: str) -> None:
    if not doc["claims"]:
        raise CompareError(f"{name}: lists no claims, so any run would match it; compare with a run that has claims")


def check_summary(doc, name: str = "summary") -> None:
    """``CompareError`` (one line naming ``name``) unless ``doc`` is a verify summary that can be
    compared (the module docstring lists what is refused)."""
    def bad(why: str):
        raise CompareError(f"{name}: not a verify summary mmicl can compare: {why}")

    if not isinstance(doc, dict) or not isinstance(doc.get("claims"), list):
        bad("no list of claims")
    if _depth(doc) > MAX_DEPTH:
        bad(f"nested more than {MAX_DEPTH} deep")
    version = doc.get("schema_version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        bad(f"schema_version {version!r} is not a version number")
    if version > SCHEMA_VERSION:
        raise CompareError(f"{name}: schema_version {version} is newer than this mmicl reads ({SCHEMA_VERSION}); "
                           "compare it with the mmicl that wrote it, or upgrade mmicl")
    seen: set[str] = set()
    for i, c in enumerate(doc["claims"]):
        if not isinstance(c, dict) or not isinstance(c.get("id"), str):
            bad(f"claim {i} has no text id")
        cid = c["id"]
        if cid in seen:
            bad(f"two claims have the id {cid!r} (one would hide the other)")
        seen.add(cid)
        if "verdict" in c and c["verdict"] not in VERDICTS:
            bad(f"claim {cid!r}: verdict {_shown(c['verdict'])} is none of {', '.join(VERDICTS)}")
        ev = c.get("evidence", {})
        if ev is None:
            continue
        if not isinstance(ev, dict):
            bad(f"claim {cid!r}: evidence is a {type(ev).__name__}, not a dict")
        summary, checks = ev.get("summary"), ev.get("checks")
        if summary is not None and not isinstance(summary, dict):
            bad(f"claim {cid!r}: its summary is a {type(summary).__name__}, not a dict")
        checks = [] if checks is None else checks
        if not isinstance(checks, list):
            bad(f"claim {cid!r}: checks is a {type(checks).__name__}, not a list")
        names: set = set()
        for j, ck in enumerate(checks):
            if not isinstance(ck, dict) or not isinstance(ck.get("name"), str):
                bad(f"claim {cid!r}: check {j} is not a dict with a text name")
            if ck["name"] in names:
                bad(f"claim {cid!r}: two checks are named {ck['name']!r} (one would hide the other)")
            names.add(ck["name"])
            if ck.get("passed") not in (True, False, None):
                bad(f"claim {cid!r}, check {ck['name']!r}: passed is {_shown(ck.get('passed'))}, not true, false or null")
            if ck.get("numbers") is not None and not isinstance(ck["numbers"], dict):
                bad(f"claim {cid!r}, check {ck['name']!r}: numbers is a {type(ck['numbers']).__name__}, not a dict")


def _depth(value, limit: int = MAX_DEPTH + 1) -> int:
    """How deep ``value``'s dicts and lists nest, counted without recursion (stops past ``limit``)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, d = stack.pop()
        if isinstance(v, (dict, list)):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def _shown(v) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:39] + "…"


def compare(old: dict, new: dict, rtol: float | None = None, old_name: str = "old", new_name: str = "new") -> Comparison:
    """The changes from ``old`` to ``new`` (see the module docstring)."""
    if rtol is not None and not (rtol >= 0 and math.isfinite(rtol)):
        raise CompareError(f"rtol must be a finite number ≥ 0, got {rtol!r}")
    rtol = DEFAULT_RTOL if rtol is None else rtol
    check_summary(old, old_name)
    check_summary(new, new_name)
    _has_claims(old, old_name)
    out = Comparison(old_name, new_name, differences=differences(old, new), claims=len(old["claims"]))
    differ = {k for k, _, _ in out.differences}
    out.numbers_compared = not differ & {"size", "law", "variant", "case"}
    other_seed = "seed" in differ
    new_claims = {c["id"]: c for c in new["claims"]}
    old_ids = {c["id"] for c in old["claims"]}
    for oc in old["claims"]:
        cid = oc["id"]
        nc = new_claims.get(cid)
        if nc is None:
            out.changes.append(Change(cid, "missing claim", cid, oc.get("verdict"), None))
            continue
        if oc.get("verdict") != nc.get("verdict"):
            out.changes.append(Change(cid, "verdict", cid, oc.get("verdict"), nc.get("verdict")))
        if not out.numbers_compared:
            continue
        oe, ne = oc.get("evidence") or {}, nc.get("evidence") or {}
        _numbers(out, cid, "summary", oe.get("summary") or {}, ne.get("summary") or {},
                 _tolerances(oe.get("summary_atol"), oe.get("summary_rtol"), oe.get("summary_tolerance"), rtol, "summary"),
                 _seed_rule(other_seed, oe.get("summary_sampled"), oe.get("summary_se"), ne.get("summary_se")))
        new_checks = {c.get("name"): c for c in ne.get("checks") or []}
        old_names = set()
        for ock in oe.get("checks") or []:
            name = ock.get("name")
            old_names.add(name)
            nck = new_checks.get(name)
            if nck is None:
                out.changes.append(Change(cid, "missing check", str(name), ock.get("passed"), None))
                continue
            if ock.get("passed") != nck.get("passed"):
                out.changes.append(Change(cid, "check outcome", str(name), ock.get("passed"), nck.get("passed")))
            _numbers(out, cid, str(name), ock.get("numbers") or {}, nck.get("numbers") or {},
                     _tolerances(ock.get("atol"), ock.get("rtol"), ock.get("numbers_tolerance") or ock.get("tolerance"),
                                 rtol, "check"),
                     _seed_rule(other_seed, ock.get("sampled"), ock.get("se"), nck.get("se")))
        for name in new_checks:
            if name not in old_names:
                out.changes.append(Change(cid, "new check", str(name), None, new_checks[name].get("passed")))
    if not out.numbers_compared:
        return out
    for cid in new_claims:
        if cid not in old_ids:
            out.changes.append(Change(cid, "new claim", cid, None, new_claims[cid].get("verdict")))
    return out


def _tolerances(atol, rtol, why, default_rtol: float, whose: str):
    """A function from a top-level number key to ``(atol, rtol, wording)``: the tolerance the
    check (or summary) states for that key (``registry.tolerance_of``; a stated value that is not
    a number or a dict is ignored, as in a file of an earlier schema), else ``default_rtol``."""

    atol, rtol = _stated(atol), _stated(rtol)

    def of(key: str) -> tuple[float, float, str]:
        stated = tolerance_of(atol, rtol, key)
        if stated is None:
            return 0.0, default_rtol, f"rtol {default_rtol:g} (the {whose} states no numeric tolerance for {key!r})"
        a, r = stated
        return a, r, f"atol {a:g}, rtol {r:g}: {why or 'the ' + whose}"
    return of


def _stated(v):
    """A stated tolerance as read from a file: a number, a dict of the numbers in it, else None."""
    if isinstance(v, dict):
        return {k: x for k, x in v.items() if _is_number(x)}
    return v if _is_number(v) else None


def number_keys(numbers: dict) -> set[str]:
    """The top-level keys of ``numbers`` under which compare finds a number to judge (after the
    strict-JSON conversion mmicl writes: numpy scalars become numbers, NaN becomes null)."""

    return {top for top, v in _flat(to_strict(numbers)).values() if _is_number(v)}


def _flat(value: Any, prefix: str = "", top: str | None = None) -> dict[str, tuple[str, Any]]:
    """Every leaf of ``value`` by its path (``a.b[2]``), with the top-level key it sits under."""
    if isinstance(value, dict):
        out: dict[str, tuple[str, Any]] = {}
        for k, v in value.items():
            if str(k).endswith("_null_reason") or _is_timing(str(k)):
                continue
            out |= _flat(v, f"{prefix}.{k}" if prefix else str(k), str(k) if top is None else top)
        return out
    if isinstance(value, list):
        out = {}
        for i, v in enumerate(value):
            out |= _flat(v, f"{prefix}[{i}]", top)
        return out
    return {prefix: (top if top is not None else prefix, value)}


def _is_timing(key: str) -> bool:
    return key == "seconds" or key.endswith("_seconds")


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _within(old, new, atol: float, rtol: float) -> bool:
    """|new − old| ≤ atol + rtol·|old|, exactly (as rationals); two NaNs agree, and an infinity
    agrees only with the same infinity."""
    if isinstance(old, float) and math.isnan(old) or isinstance(new, float) and math.isnan(new):
        return isinstance(old, float) and isinstance(new, float) and math.isnan(old) and math.isnan(new)
    if isinstance(old, float) and math.isinf(old) or isinstance(new, float) and math.isinf(new):
        return old == new
    o, n = Fraction(old), Fraction(new)
    return abs(n - o) <= Fraction(atol) + Fraction(rtol) * abs(o)


def _distance(old, new) -> float | None:
    """|new − old| as a float, computed exactly first (integers beyond float's range are fine:
    a distance beyond it is inf); None where one side is not a number; NaN where one side is."""
    if not (_is_number(old) and _is_number(new)):
        return None
    if any(isinstance(v, float) and not math.isfinite(v) for v in (old, new)):
        if any(isinstance(v, float) and math.isnan(v) for v in (old, new)):
            return float("nan")
        return 0.0 if old == new else math.inf
    d = abs(Fraction(new) - Fraction(old))
    try:
        return float(d)
    except OverflowError:
        return math.inf


def _allowed(old, atol: float, rtol: float) -> float:
    """atol + rtol·|old| as a float (inf where it overflows; atol where ``old`` is not finite)."""
    if not _is_number(old) or isinstance(old, float) and not math.isfinite(old):
        return atol
    try:
        return float(Fraction(atol) + Fraction(rtol) * abs(Fraction(old)))
    except OverflowError:
        return math.inf


_UNCOMPARED = "uncompared"


def _seed_rule(other_seed: bool, sampled, se_old, se_new):
    """A function from a top-level number key to how a number under it is judged: ``None`` (as a
    rerun, by its tolerance: the seeds agree, or it does not depend on the seed), ``_UNCOMPARED``
    (sampled, no se stated), or ``(se_old, se_new)`` (the se's as the check states them: a number,
    or the name of the key holding them)."""
    keys = sampled if sampled is True else set(sampled) if isinstance(sampled, list) else set()
    se_old = se_old if isinstance(se_old, dict) else {}
    se_new = se_new if isinstance(se_new, dict) else {}

    def of(top: str):
        if not other_seed or not (keys is True or top in keys):
            return None
        if top not in se_old:
            return _UNCOMPARED
        return se_old[top], se_new.get(top, se_old[top])
    return of


def _se_at(stated, flat: dict, key: str, top: str) -> float | None:
    """The se of the number at ``key`` (under ``top``): a stated number, or the number at the same
    place under the key ``stated`` names (``alpha_inf[0]`` → ``alpha_inf_se[0]``), or the one
    number under that key; None where there is none or it is not a finite number ≥ 0."""
    if isinstance(stated, str):
        place = stated + key[len(top):]
        value = flat.get(place, flat.get(stated, (None, None)))[1]
    else:
        value = stated
    if not _is_number(value):
        return None
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else None


def _numbers(out: Comparison, cid: str, where: str, old: dict, new: dict, tolerance, seed_rule) -> None:
    fo, fn = _flat(old), _flat(new)
    for key, (top, ov) in fo.items():
        path = f"{where}: {key}"
        rule = seed_rule(top)
        if rule == _UNCOMPARED:
            out.seed_dependent += 1
            continue
        atol, rtol, said = tolerance(top)
        if rule is not None and key in fn and _is_number(ov) and _is_number(fn[key][1]):
            so, sn = _se_at(rule[0], fo, key, top), _se_at(rule[1], fn, key, top)
            if so is None or sn is None:
                out.seed_dependent += 1
                continue
            atol, rtol = MOVE_Z * math.hypot(so, sn), 0.0
            said = (f"{MOVE_Z:g}·√(se_old² + se_new²): the seeds differ, so the two values are independent "
                    f"estimates (se {so:.3g} and {sn:.3g})")
            out.independent_estimates += 1
        allowed = _allowed(ov, atol, rtol)
        if key not in fn:
            out.changes.append(Change(cid, "number", path, ov, None, said))
            continue
        nv = fn[key][1]
        if _is_number(ov) and _is_number(nv):
            out.compared_numbers += 1
            if not _within(ov, nv, atol, rtol):
                out.changes.append(Change(cid, "number", path, ov, nv, said, allowed))
        elif _is_number(ov) or _is_number(nv):
            out.changes.append(Change(cid, "number", path, ov, nv, said))
        elif ov != nv and not isinstance(ov, str):
            out.changes.append(Change(cid, "number", path, ov, nv, "must be equal (not a number)"))
    for key, (top, nv) in fn.items():
        if key not in fo and _is_number(nv) and seed_rule(top) != _UNCOMPARED:
            out.changes.append(Change(cid, "new number", f"{where}: {key}", None, nv))


def differences(old: dict, new: dict) -> list[tuple[str, Any, Any]]:
    """The settings two verify summaries differ in, ``(name, old, new)``: the run settings
    (``SETTINGS``; a summary written before a setting was recorded says nothing about it), the
    platform, mmicl's version, and the versions of the software under it (one entry,
    ``"software"``, listing each that differs)."""
    out = []
    for k in SETTINGS:
        if k in old and k in new and old[k] != new[k]:
            out.append((k, old[k], new[k]))
    po = old.get("provenance") if isinstance(old.get("provenance"), dict) else {}
    pn = new.get("provenance") if isinstance(new.get("provenance"), dict) else {}
    for k, name in (("platform", "platform"), ("mmicl", "mmicl version")):
        if k in po and k in pn and po[k] != pn[k]:
            out.append((name, po[k], pn[k]))
    soft = [f"{k} {po[k]} → {pn[k]}" for k in ("python", "numpy", "scipy", "sympy", "torch")
            if k in po and k in pn and po[k] != pn[k]]
    if soft:
        out.append(("software", None, "; ".join(soft)))
    return out


_MEANING = {
    "seed": "sampled numbers are judged as two independent estimates where their check states an se, and left "
            "uncompared where it does not",
    "size": "the claims computed other numbers: only verdicts compared",
    "law": "the claims ran on other laws: only verdicts compared",
    "variant": "the claims checked another model: only verdicts compared",
    "case": "the claims ran on another case: only verdicts compared",
}


def render(result: Comparison, every: bool = False, shown: int = SHOWN, width: int = 100) -> list[str]:
    """The comparison for a reader, a line per item (see the module docstring); ``every``: every
    change, not only the ``shown`` numbers that moved most beyond their tolerance; ``width``: a
    check's name is cut to fit it (never with ``every``)."""
    lines = [f"mmicl compare {result.old} → {result.new}"]
    if result.differences:
        lines.append("the runs differ in:")
        for k, o, n in result.differences:
            said = n if k == "software" else f"{_value(o)} → {_value(n)}"
            lines.append(f"  {k}: {said}" + (f" ({_MEANING[k]})" if k in _MEANING else ""))
    verdicts = [c for c in result.changes if c.kind in ("verdict", "missing claim")]
    lines.append(f"verdicts: {result.claims} claim(s); " + (f"{len(verdicts)} changed:" if verdicts else "none changed"))
    lines += [f"  {c.claim}: {c.old} → {c.new if c.kind == 'verdict' else 'gone'}" for c in verdicts]
    if result.numbers_compared:
        outcomes = [c for c in result.changes if c.kind in ("check outcome", "missing check")]
        lines.append("check outcomes: " + (f"{len(outcomes)} changed:" if outcomes else "none changed"))
        lines += [f"  {c.claim} · {_cut(c.key, width, every)}: {_outcome(c.old)} → "
                  f"{_outcome(c.new) if c.kind == 'check outcome' else 'gone'}" for c in outcomes]
        moved = sorted((c for c in result.changes if c.kind == "number"), key=lambda c: -c.excess)
        text = f"numbers: {result.compared_numbers} compared"
        if result.independent_estimates:
            text += f" ({result.independent_estimates} as independent estimates)"
        text += f", {len(moved)} beyond tolerance"
        if result.seed_dependent:
            text += f"; {result.seed_dependent} depend on the seed and state no se: not compared"
        lines.append(text)
        listed = moved if every else moved[:shown]
        notes: dict[str, int] = {}
        if listed:
            lines.append("beyond tolerance" + ("" if every or len(moved) <= shown else
                                               f", the {shown} largest of {len(moved)} (--all for every one)") + ":")
        for c in listed:
            note = notes.setdefault(c.tolerance, len(notes) + 1)
            check, _, key = c.key.partition(": ")
            d = _distance(c.old, c.new)
            move = f" (|Δ| {d:.3g}, allowed {c.allowed:.3g})" if c.allowed is not None and d is not None else ""
            lines.append(f"  {c.claim} · {_cut(check, width, every)}: {key} {_value(c.old)} → {_value(c.new)}{move} [{note}]")
        if notes:
            lines.append("tolerances:")
            lines += [f"  [{i}] {why}" for why, i in notes.items()]
        new = [c for c in result.changes if not c.regression]
        if new:
            kinds = {}
            for c in new:
                kinds[c.kind] = kinds.get(c.kind, 0) + 1
            lines.append("only in the new run (not regressions): " + ", ".join(f"{n} {k[4:]}(s)" for k, n in kinds.items()))
            if every:
                lines += [f"  {c.claim} · {c.key}: {_value(c.new)}" for c in new]
    n = len(result.regressions)
    lines.append(f"{n} regression(s)" + ("" if n else ": nothing moved beyond its tolerance"))
    return lines


def _cut(text: str, width: int, every: bool) -> str:
    limit = max(20, width // 2)
    return text if every or len(text) <= limit else text[:limit - 1] + "…"


def _value(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    text = repr(v) if not isinstance(v, str) else v
    return text if len(text) <= 40 else text[:39] + "…"


def _outcome(passed) -> str:
    return {True: "pass", False: "FAIL", None: "undecided"}.get(passed, repr(passed))
