"""The results store of sweeps: a folder with one JSON file per run and an index.

``runs/<key>.json`` is the record of run ``key`` (``runs.execute``): its configuration, status,
result or error, and provenance.  ``index.json`` lists, per key, the kind, status and the file.
Both are written atomically (``numerics.atomic``), the run file first: a killed sweep leaves every
finished run whole and no half-written file.  The run files are the truth: opening a store rebuilds
the index from them (it may lag behind after a kill between the two writes), and each write then
updates it.
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from mmicl.numerics.atomic import write_json, write_text


BULKY = ("history", "analysis")
"""Result entries left out of the table and the CSV (curves and per-head arrays; they stay in the run file)."""


class Store:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.runs.mkdir(parents=True, exist_ok=True)
        self._index = {r["key"]: self._entry(r) for r in self.records()}   # rebuilt from the run files

    @staticmethod
    def _entry(record: dict) -> dict:
        return {"kind": record["kind"], "status": record["status"], "file": f"runs/{record['key']}.json"}

    def record(self, key: str) -> dict | None:
        path = self.runs / f"{key}.json"
        if not path.is_file():
            return None
        return json.loads(path.read_text())

    def records(self) -> list[dict]:
        """Every run record, ordered by key."""
        return [json.loads(p.read_text()) for p in sorted(self.runs.glob("*.json"))]

    def status(self, key: str) -> str | None:
        entry = self._index.get(key)
        return None if entry is None else entry["status"]

    def write(self, record: dict) -> None:
        """Store one run's record (atomically), then the index (one writer: the sweep's driver)."""
        write_json(self.runs / f"{record['key']}.json", record)
        self._index[record["key"]] = self._entry(record)
        write_json(self.root / "index.json", {"runs": dict(sorted(self._index.items()))})

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
