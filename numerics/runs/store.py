"""The results store of sweeps: a folder with one JSON file per run and an index, each run file
checked when it is read back.

Layout.  ``runs/<key>.json`` is the record of run ``key`` (``runs.execute``): its format, key,
kind, configuration, status, result or error, provenance, and a ``checksum``.  ``index.json``
lists, per key, the kind, status and the file.  Both are written atomically (``numerics.atomic``),
the run file first: a killed sweep leaves every finished run whole and no half-written file.  The
run files are the truth: opening a store rebuilds the index from the valid ones (it may lag behind
after a kill between the two writes, or hold runs whose files were since set aside), rewrites
``index.json`` when it differs (writable stores only), and each write then updates it.

The checksum.  ``checksum`` is ``"sha256:" + SHA-256(C)``, where C is the canonical JSON of the
record as it is stored (after ``strict_json.to_strict`` and the ``schema_version`` that
``write_json`` adds), without the ``checksum`` entry: keys sorted, no spaces
(``separators=(",", ":")``), ASCII escapes, no NaN.  JSON floats round-trip exactly, so C computed
from the parsed file equals C computed before the write.  ``Store.write`` seals every record.

A record read back is *valid* only if, in this order:

1. the file reads, is UTF-8 text and parses as strict JSON (no NaN/Infinity);
2. it is an object with ``format``, ``key``, ``kind``, ``config``, ``status`` ("done" or "failed"),
   ``provenance``, and ``result`` (done) or ``error`` (failed);
3. it has a ``checksum`` (a record without one was written by an earlier mmicl: *unverified*);
4. the checksum matches (a truncated-then-repaired, edited or garbled record fails here: e.g. an
   α_T changed by hand, or the ``key`` field changed);
5. its ``format`` is this mmicl's ``runs.FORMAT``;
6. its ``key`` equals the key recomputed from its kind and configuration (``spec.run_key``, the
   function that keys the runs of a sweep);
7. its file name is ``<key>.json``.  A valid record of run K under another name (a duplicate, or
   another run's file relabelled by copying it to that run's name) is a *duplicate*: run K is
   counted once, from ``K.json`` when that file is valid, never from the copy.

What happens to a file that is not valid: in a writable store (``Store(root)``, what a sweep opens)
it is *set aside*, i.e. renamed in place to ``<name>.corrupt`` (``<name>.2.corrupt``, … when that
name is taken), kept for inspection and never read again; its run has no record, so the next sweep
redoes it.  This holds for records of an earlier mmicl too: they are a cache of computations that
can be rerun, and without a checksum nothing says they are whole, so they are redone rather than
trusted.  A read-only store (``Store(root, writable=False)``, what ``--status`` and ``--export``
open) creates no folder and renames or rewrites nothing: invalid files are skipped, not counted, and
reported as what a sweep *would* set aside.  Either way each opening of a store gives at most ONE
warning line naming every file set aside and why (``StoreWarning``, or the ``warn`` callback), and
never a traceback.  ``summary``, ``records``, ``table`` and ``export_csv`` all count the same set:
one entry per valid key.

The checksum detects damage, stale and relabelled files, not a deliberate forgery by someone who can
write the folder (they could recompute the checksum too).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import warnings
from pathlib import Path
from typing import Callable

from mmicl.theory.errors import InputError
from mmicl.numerics.atomic import write_json, write_text
from mmicl.numerics.strict_json import SCHEMA_VERSION, to_strict

from .key import FORMAT, run_key

__all__ = ["BULKY", "FIELDS", "UNVERIFIED", "StoreError", "StoreWarning", "canonical", "checksum", "sealed", "verify",
           "read_record", "Store"]



BULKY = ("history", "analysis")
"""Result entries left out of the table and the CSV (curves and per-head arrays; they stay in the run file)."""

FIELDS = ("format", "key", "kind", "config", "status", "provenance")
"""The entries every run record has (and ``result`` when done, ``error`` when failed)."""

UNVERIFIED = "written by an earlier mmicl, unverified"
"""The reason given for a record without a checksum."""


class StoreError(InputError):
    """A folder that cannot be opened as a results store (missing, or written to while read-only);
    the message is one line."""


class StoreWarning(UserWarning):
    """Run files set aside (or that would be) when a store was opened: one line."""


def canonical(doc: dict) -> str:
    """The canonical JSON text of a record without its ``checksum`` (see the module docstring)."""
    body = {k: v for k, v in doc.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def checksum(doc: dict) -> str:
    """``"sha256:"`` and the SHA-256 of ``canonical(doc)``."""
    return "sha256:" + hashlib.sha256(canonical(doc).encode("ascii")).hexdigest()


def sealed(record: dict) -> dict:
    """The record as it is stored (strict JSON values, ``schema_version``), with its checksum."""
    doc = json.loads(json.dumps(to_strict(record), allow_nan=False))
    doc = {"schema_version": SCHEMA_VERSION, **{k: v for k, v in doc.items() if k not in ("schema_version", "checksum")}}
    doc["checksum"] = checksum(doc)
    return doc


def _no_constants(name: str):
    raise ValueError(name)


def _parse(data: bytes) -> tuple[dict | None, str | None]:
    """The record in a run file's bytes, or why there is none (steps 1–2 of the module docstring)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "not UTF-8 text (garbage bytes)"
    if not text.strip():
        return None, "empty file"
    try:
        doc = json.loads(text, parse_constant=_no_constants)
    except json.JSONDecodeError as e:
        return None, "truncated JSON" if e.pos >= len(text.rstrip()) else f"not JSON: {e.msg} at line {e.lineno}"
    except ValueError as e:
        return None, f"not strict JSON: {e}"
    except RecursionError:
        return None, "not JSON: nested too deeply"
    if not isinstance(doc, dict):
        return None, f"not a run record: a JSON {type(doc).__name__}, not an object"
    needed = [*FIELDS, *(("result",) if doc.get("status") == "done" else ("error",) if doc.get("status") == "failed"
                         else ())]
    missing = [f for f in needed if f not in doc]
    if missing:
        return None, f"not a run record: no {', '.join(missing)}"
    types = {"key": str, "kind": str, "config": dict, "provenance": dict}
    wrong = [f for f, t in types.items() if not isinstance(doc[f], t)]
    if wrong or doc["status"] not in ("done", "failed"):
        return None, f"not a run record: bad {', '.join(wrong or ['status'])}"
    return doc, None


def verify(doc: dict) -> str | None:
    """Why a parsed run record is not to be trusted (steps 3–6 of the module docstring), or None."""
    if "checksum" not in doc:
        return UNVERIFIED
    try:
        if doc["checksum"] != checksum(doc):
            return "checksum does not match"
    except (ValueError, TypeError):
        return "checksum does not match"
    if doc["format"] != FORMAT:
        return f"record format {doc['format']!r}, this mmicl reads format {FORMAT}"
    try:
        key = run_key(doc["kind"], doc["config"])
    except (ValueError, TypeError):
        key = None
    if doc["key"] != key:
        return "its key does not match its kind and configuration"
    return None


def read_record(path: Path) -> tuple[dict | None, str | None]:
    """The valid record in ``path`` whatever its name (steps 1–6), or None and why not."""
    try:
        data = path.read_bytes()
    except OSError as e:
        return None, f"unreadable: {e.strerror or e}"
    doc, why = _parse(data)
    if doc is None:
        return None, why
    why = verify(doc)
    return (None, why) if why else (doc, None)


class Store:
    """A results store at ``root``; ``writable=False`` opens it for reading only (see the module
    docstring); ``warn`` receives the one warning line (default: a ``StoreWarning``)."""

    def __init__(self, root: str | Path, writable: bool = True, warn: Callable[[str], None] | None = None):
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.writable = writable
        if writable:
            self.runs.mkdir(parents=True, exist_ok=True)
        elif not self.root.is_dir():
            raise StoreError(f"no results store at {str(self.root)!r}: "
                             + ("it is not a folder" if self.root.exists() else "no such folder"))
        elif not self.runs.is_dir():
            raise StoreError(f"{str(self.root)!r} is not a results store (it has no runs/ folder)")
        self.set_aside: list[dict] = []
        """The files not trusted at opening: ``{"file", "reason", "moved_to"}`` (``moved_to`` None
        when read-only or the rename failed)."""
        self._keys = self._scan()
        self._index = {r["key"]: self._entry(r) for r in self.records()}   # rebuilt from the run files
        self.warning = self._warning()
        if self.warning:
            if warn is None:
                warnings.warn(self.warning, StoreWarning, stacklevel=2)
            else:
                warn(self.warning)
        if writable:
            self._write_index_if_stale()

    # ---- opening: verify every run file --------------------------------------------------------
    def _scan(self) -> set[str]:
        """The keys with a valid ``<key>.json``; every other ``*.json`` in runs/ is set aside."""
        valid: set[str] = set()
        misplaced: list[tuple[Path, str]] = []
        bad: list[tuple[Path, str]] = []
        for path in sorted(self.runs.glob("*.json")):
            doc, why = read_record(path)
            if doc is None:
                bad.append((path, why))
            elif path.name != f"{doc['key']}.json":
                misplaced.append((path, doc["key"]))
            else:
                valid.add(doc["key"])
        for path, key in misplaced:
            bad.append((path, f"a duplicate of run {key}, kept as {key}.json" if key in valid
                        else f"holds the record of run {key}, not of {path.stem}"))
        for path, why in sorted(bad):
            self.set_aside.append({"file": path.name, "reason": why,
                                   "moved_to": self._quarantine(path) if self.writable else None})
        return valid

    def _quarantine(self, path: Path) -> str | None:
        """Rename ``path`` to ``<name>.corrupt`` (or ``<name>.N.corrupt``, the first name free);
        the new name, or None if the rename failed."""
        n = 1
        while True:
            target = path.with_name(f"{path.name}.corrupt" if n == 1 else f"{path.name}.{n}.corrupt")
            if not os.path.lexists(target):
                break
            n += 1
        try:
            os.rename(path, target)
        except OSError:
            return None
        return target.name

    def _warning(self) -> str | None:
        if not self.set_aside:
            return None
        files = ", ".join(f"{s['file']} ({s['reason']})" for s in self.set_aside)
        n = len(self.set_aside)
        what = f"{n} run file{'s' if n > 1 else ''}"
        moved = [s for s in self.set_aside if s["moved_to"]]
        if self.writable and len(moved) == n:
            return (f"mmicl: set aside {what} in {self.runs} (moved to *.corrupt): {files}; "
                    f"any run left without a valid file will be redone")
        if self.writable:
            return (f"mmicl: {what} in {self.runs} cannot be trusted and {n - len(moved)} could not be moved "
                    f"to *.corrupt: {files}; they are not counted, and their runs will be redone")
        return (f"mmicl: {what} in {self.runs} would be set aside (left in place: the store is opened read-only): "
                f"{files}; they are not counted, and a sweep into this store would redo their runs")

    def _write_index_if_stale(self) -> None:
        index = self.root / "index.json"
        want = {"runs": dict(sorted(self._index.items()))}
        try:
            have = json.loads(index.read_text(encoding="utf-8"))
            have.pop("schema_version", None)
        except (OSError, ValueError, RecursionError, AttributeError):
            have = None
        if have != want:
            write_json(index, want)

    # ---- reading -------------------------------------------------------------------------------
    @staticmethod
    def _entry(record: dict) -> dict:
        return {"kind": record["kind"], "status": record["status"], "file": f"runs/{record['key']}.json"}

    def record(self, key: str) -> dict | None:
        """The valid record of run ``key``, read back and verified now; None if there is none."""
        path = self.runs / f"{key}.json"
        if not path.is_file():
            return None
        doc, _ = read_record(path)
        return doc if doc is not None and doc["key"] == key else None

    def records(self) -> list[dict]:
        """Every valid run record, ordered by key (one per key)."""
        out = []
        for key in sorted(self._keys):
            r = self.record(key)
            if r is not None:
                out.append(r)
        return out

    def status(self, key: str) -> str | None:
        entry = self._index.get(key)
        return None if entry is None else entry["status"]

    # ---- writing -------------------------------------------------------------------------------
    def write(self, record: dict) -> None:
        """Store one run's record, sealed with its checksum (atomically), then the index (one
        writer: the sweep's driver).  A record that would not read back as valid is refused
        (``ValueError``): its key must be the key of its kind and configuration."""
        if not self.writable:
            raise StoreError(f"the results store {str(self.root)!r} was opened read-only")
        doc = sealed(record)
        _, why = _parse(json.dumps(doc).encode())
        why = why or verify(doc)
        if why:
            raise ValueError(f"not storing the record of run {record.get('key')!r}: {why}")
        write_json(self.runs / f"{doc['key']}.json", doc)
        self._keys.add(doc["key"])
        self._index[doc["key"]] = self._entry(doc)
        write_json(self.root / "index.json", {"runs": dict(sorted(self._index.items()))})

    def discard(self, key: str, reason: str) -> str | None:
        """Set aside run ``key``'s record (renamed to ``<key>.json.corrupt``, as at opening), so that
        the next sweep redoes the run: for a record that verifies but whose run cannot be used (its
        artifact is damaged). The new file name, or None if there was no record or the rename failed."""
        if not self.writable:
            raise StoreError(f"the results store {str(self.root)!r} was opened read-only")
        path = self.runs / f"{key}.json"
        moved = self._quarantine(path) if path.is_file() else None
        self.set_aside.append({"file": path.name, "reason": reason, "moved_to": moved})
        self._keys.discard(key)
        self._index.pop(key, None)
        write_json(self.root / "index.json", {"runs": dict(sorted(self._index.items()))})
        return moved

    # ---- queries -------------------------------------------------------------------------------
    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for entry in self._index.values():
            out[entry["status"]] = out.get(entry["status"], 0) + 1
        return out

    def table(self) -> list[dict]:
        """One flat row per run: key, kind, status, the configuration, the result's numbers (nested
        keys joined by dots; not the ``BULKY`` entries), the error and the seconds it took."""
        rows = []
        for r in self.records():
            row = {"key": r["key"], "kind": r["kind"], "status": r["status"]}
            row |= {f"config.{k}": v for k, v in _flat(r["config"]).items()}
            result = {k: v for k, v in (r.get("result") or {}).items() if k not in BULKY}
            row |= {f"result.{k}": v for k, v in _flat(result).items()}
            row["error"] = r.get("error", "")
            row["seconds"] = r["provenance"].get("seconds")
            rows.append(row)
        return rows

    def export_csv(self, path: str | Path) -> Path:
        rows = self.table()
        columns = list(dict.fromkeys(c for row in rows for c in row))
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)
        return write_text(Path(path), buf.getvalue())


def _flat(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out |= _flat(v, f"{prefix}{k}.")
        else:
            out[f"{prefix}{k}"] = v
    return out
