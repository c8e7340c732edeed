"""Write the table of docs/papers.md from the example plugins' committed quick-size results.

    python tools/papers_table.py [--check]

For every ``examples/mmicl-*`` with a ``paper.json`` (paper, arXiv id, one line per claim) and a
``results/quick/verdicts.json`` (what ``mmicl verify --quick --claim '<ns>.*'`` wrote), one row per
claim: the paper, the result, the claim id, its verdict at the quick size, its seconds, and the command
that reproduces it.  The table replaces the block between ``<!-- papers:begin -->`` and
``<!-- papers:end -->``.  ``--check`` exits 1 (and writes nothing) when the page is not up to date.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "papers.md"
BEGIN, END = "<!-- papers:begin -->", "<!-- papers:end -->"


def rows() -> list[str]:
    out = ["| paper | result | claim | verdict (quick) | seconds | reproduce |", "|---|---|---|---|---|---|"]
    for example in sorted((ROOT / "examples").glob("mmicl-*")):
        meta_file, results_file = example / "paper.json", example / "results" / "quick" / "verdicts.json"
        if not meta_file.is_file():
            continue
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
        results = json.loads(results_file.read_text(encoding="utf-8"))
        if not results.get("quick"):
            raise SystemExit(f"{results_file} is not a quick-size run")
        verdicts = {c["id"]: c for c in results["claims"]}
        ns = next(iter(meta["claims"])).split(".")[0]
        command = f"`pip install examples/{example.name}` then `mmicl verify --quick --claim '{ns}.*'`"
        for cid, result in meta["claims"].items():
            if cid not in verdicts:
                raise SystemExit(f"{results_file} has no verdict for {cid}: rerun the quick size")
            c = verdicts[cid]
            paper = f"{meta['paper']} (arXiv:{meta['arxiv']})"
            out.append(f"| {paper} | {result} | `{cid}` | {c['verdict']} | {c['evidence']['seconds']:.0f} | {command} |")
    return out


def render(page: str) -> str:
    head, _, rest = page.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return head + BEGIN + "\n" + "\n".join(rows()) + "\n" + END + tail


def main(argv=None) -> int:
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    page = PAGE.read_text(encoding="utf-8")
    if BEGIN not in page or END not in page:
        raise SystemExit(f"{PAGE} needs the markers {BEGIN} and {END}")
    new = render(page)
    if check:
        if new != page:
            print(f"{PAGE.relative_to(ROOT)} is not the table of the committed results: run python tools/papers_table.py")
            return 1
        return 0
    tmp = PAGE.with_suffix(".md.tmp")
    tmp.write_text(new, encoding="utf-8")
    tmp.replace(PAGE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
