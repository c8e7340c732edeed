"""The results store of sweeps: a folder with one JSON file per run and an index.

``runs/<key>.json`` is the record of run ``key`` (``runs.execute``): its configuration, status,
result or error, and provenance.  ``index.json`` lists, per key, the kind, status and the file.
Both are written atomically (``numerics.atomic``), the run file first: a killed sweep leaves every
finished run whole and no half-written file.  The run files are the truth; the index is rebuilt
from them when it lags behind (after a kill between the two writes).
"""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from mmicl.numerics.atomic import write_json, write_text


class Store:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.runs = self.root / "runs"
        self.runs.mkdir(parents=True, exist_ok=True)

    def record(self, key: str) -> dict | None:
        path = self.runs / f"{key}.json"
        if not path.is_file():
            return None
        return json.loads(path.read_text())

    def records(self) -> list[dict]:
        """Every run record, ordered by key."""
        return [json.loads(p.read_text()) for p in sorted(self.runs.glob("*.json"))]

    def status(self, key: str) -> str | None:
        rec = self.record(key)
        return None if rec is None else rec["status"]

    def write(self, record: dict) -> None:
        """Store one run's record (atomically), then the index."""
        write_json(self.runs / f"{record['key']}.json", record)
        self.write_index()

    def write_index(self) -> None:
        index = {r["key"]: {"kind": r["kind"], "status": r["status"], "file": f"runs/{r['key']}.json"}
                 for r in self.records()}
        write_json(self.root / "index.json", {"runs": index})

    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.records():
            out[r["status"]] = out.get(r["status"], 0) + 1
        return out

    def table(self) -> list[dict]:
        """One flat row per run: key, kind, status, the configuration, the result's numbers (nested
        keys joined by dots), the error and the seconds it took."""
        rows = []
        for r in self.records():
            row = {"key": r["key"], "kind": r["kind"], "status": r["status"]}
            row |= {f"config.{k}": v for k, v in r["config"].items()}
            row |= {f"result.{k}": v for k, v in _flat(r.get("result") or {}).items()}
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
