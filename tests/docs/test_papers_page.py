"""docs/papers.md: its table is the one the example plugins' committed quick-size results give."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_table_is_generated_from_the_committed_results():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "papers_table.py"), "--check"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_every_example_plugin_is_in_the_table_with_every_claim_holding_at_the_quick_size():
    page = (ROOT / "docs" / "papers.md").read_text(encoding="utf-8")
    for example in sorted((ROOT / "examples").glob("mmicl-*")):
        meta = json.loads((example / "paper.json").read_text(encoding="utf-8"))
        results = json.loads((example / "results" / "quick" / "verdicts.json").read_text(encoding="utf-8"))
        assert results["quick"] and {c["id"] for c in results["claims"]} == set(meta["claims"])
        assert all(c["verdict"] == "holds" for c in results["claims"]), example.name
        assert f"arXiv:{meta['arxiv']}" in page and all(f"`{cid}`" in page for cid in meta["claims"])
