"""The Markdown report of a ``verify`` run: one section per claim with its evidence and figures."""
from __future__ import annotations

import json
import os
from pathlib import Path

from .registry import ClaimResult, RunConfig


def render_report(results: list[ClaimResult], config: RunConfig) -> str:
    lines = [
        "# mmicl verification report",
        "",
        f"Size: {'quick' if config.quick else 'full'}; seed {config.seed}; device {config.device}"
        + (f"; law `{config.law}`" if config.law else ""),
        "",
        "| claim | verdict | key numbers | seconds |",
        "|---|---|---|---|",
    ]
    for r in results:
        nums = ", ".join(f"{k} = {_fmt(v)}" for k, v in r.summary.items())
        lines.append(f"| {r.id} | **{r.verdict}** | {nums} | {r.seconds:.1f} |")
    for r in results:
        lines += ["", f"## {r.id}: {r.verdict}", "", r.statement, "", "### Hypotheses", ""]
        lines += [f"- [{'x' if h.met else ' '}] {h.text}" + (f" ({h.detail})" if h.detail else "") for h in r.hypotheses]
        lines += ["", "### Checks", ""]
        for c in r.checks:
            mark = {True: "pass", False: "FAIL", None: "undecided"}[c.passed]
            lines.append(f"- **{c.name}** [{c.method}]: {mark}. {c.detail}")
            if c.tolerance:
                lines.append(f"  - tolerance: {c.tolerance}")
            if c.numbers:
                lines.append(f"  - numbers: `{json.dumps(c.numbers, default=_fmt, ensure_ascii=False)}`")
        for fig in r.figures:
            rel = os.path.relpath(fig, Path(config.out))
            lines += ["", f"![{Path(fig).stem}]({rel})"]
    return "\n".join(lines) + "\n"


def _fmt(v):
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)
