"""The reports of a ``verify`` run: Markdown (``render_report``) and one self-contained HTML page
(``render_html``), each with one section per claim with its evidence and figures.

Both print a claim's verdict with its reason (``ClaimResult.verdict_reason``) and each check's
role (decisive or corroborating).  Booleans are written ``true`` / ``false`` in both, as in the
JSON files; numpy values are shown as the plain ones."""
from __future__ import annotations

import html
import json
import math
import os
from pathlib import Path

from .registry import ClaimResult, RunConfig


def render_report(results: list[ClaimResult], config: RunConfig, run=None) -> str:
    """The report in Markdown; ``run`` (a ``results_folder.RunState``) adds the run's state."""
    pending = set(run.pending_figures) if run is not None else set()
    lines = [
        "# mmicl verification report",
        "",
        f"Size: {config.size}; seed {config.seed}; device {config.device}"
        + (f"; law `{config.law}`" if config.law else ""),
        "",
        *([f"Run: {run.line(len(results))}; wall time {run.wall_seconds:.1f} s", ""] if run is not None else []),
        "| claim | verdict | key numbers | seconds | origin |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        nums = ", ".join(f"{k} = {_fmt(v)}" for k, v in r.summary.items())
        lines.append(f"| {r.id} | **{r.verdict}** | {nums} | {r.seconds:.1f} | {r.origin} |")
    for r in results:
        lines += ["", f"## {r.id}: {r.verdict}", ""]
        if r.verdict_reason:
            lines += [f"Why: {r.verdict_reason}", ""]
        lines += [f"Origin: {r.origin}", ""]
        if r.error:
            lines += ["```text", r.error.rstrip(), "```", ""]
        lines += [r.statement, "", "### Hypotheses", ""]
        lines += [f"- [{'x' if h.met else ' '}] {h.text}" + (f" ({h.detail})" if h.detail else "") for h in r.hypotheses]
        lines += ["", "### Checks", ""]
        for c in r.checks:
            mark = CHECK_MARK[_outcome(c.passed)][0]
            lines.append(f"- **{c.name}** [{c.method}; {c.role}]: {mark}. {c.detail}")
            if c.tolerance:
                lines.append(f"  - tolerance: {c.tolerance}")
            if c.numbers:
                lines.append(f"  - numbers: `{_json_text(c.numbers)}`")
        for fig in r.figures:
            rel = os.path.relpath(fig, Path(config.out))
            lines += ["", f"![{Path(fig).stem}]({rel})" + (" (being written)" if fig in pending else "")]
    return "\n".join(lines) + "\n"


def _fmt(v):
    """A summary value in Markdown: floats to 6 digits, booleans ``true``/``false``, numpy as plain."""
    v = _plain(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, (dict, list)):
        return _json_text(v)
    return str(v)


def _outcome(passed) -> bool | None:
    """A check's ``passed`` as True, False or None (a numpy boolean counts as the plain one)."""
    return None if passed is None else bool(passed)


def _json_text(obj) -> str:
    """``obj`` as strict JSON text, as mmicl writes its files (``numerics.strict_json``: plain types,
    ``true``/``false``, a NaN or infinity null with its reason beside it); an object JSON cannot
    hold is shown as its text rather than stopping the report."""
    from mmicl.numerics.strict_json import to_strict

    try:
        return json.dumps(to_strict(obj), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(_loose(obj), ensure_ascii=False, allow_nan=False)


def _loose(v):
    """Like ``to_strict`` but never refusing: odd objects become their text."""
    from mmicl.numerics.strict_json import to_strict

    v = _plain(v)
    if isinstance(v, dict):
        return {str(k): _loose(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [_loose(x) for x in (sorted(v, key=str) if isinstance(v, (set, frozenset)) else v)]
    try:
        return to_strict(v)
    except (TypeError, ValueError):
        return str(v)


# ---------------------------------------------------------------------------------------------
# the HTML report: one self-contained file (figures inlined as data: URIs, inline CSS, no script)
# ---------------------------------------------------------------------------------------------

LIST_SHOWN = 12  # a longer list shows its first LIST_HEAD and last LIST_TAIL items and a count
LIST_HEAD, LIST_TAIL = 8, 2
ROWS_SHOWN = 20  # a list of records (dicts) shows at most this many rows
MAX_DEPTH = 6  # deeper nesting is shown as text
MIME = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
        ".svg": "image/svg+xml", ".webp": "image/webp"}
VERDICT_CLASS = {"holds": "holds", "fails": "fails", "hypothesis-not-met": "notmet", "inconclusive": "inconclusive",
                 "error": "error"}
CHECK_MARK = {True: ("pass", "pass"), False: ("FAIL", "fail"), None: ("undecided", "undecided")}

CSS = """
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: #1b1f24;
       margin: 0; background: #f6f7f9; }
main { max-width: 1280px; margin: 0 auto; padding: 0 24px 48px; }
header { background: #1f2937; color: #f9fafb; padding: 18px 24px; }
header h1 { margin: 0 0 6px; font-size: 24px; }
header .meta { display: flex; flex-wrap: wrap; gap: 6px 22px; margin: 0; }
header .meta div { display: flex; gap: 6px; }
header dt { color: #9ca3af; }
header dd { margin: 0; font-weight: 600; }
h2 { font-size: 20px; margin: 28px 0 8px; }
h3 { font-size: 16px; margin: 18px 0 6px; }
section.claim { background: #fff; border: 1px solid #d8dde3; border-radius: 8px; padding: 4px 20px 16px;
                margin: 24px 0; }
section.claim > h2 { display: flex; align-items: center; gap: 12px; }
.top { font-size: 13px; font-weight: normal; margin-left: auto; }
.statement { font-size: 15.5px; background: #f3f4f6; border-left: 4px solid #9ca3af; padding: 8px 12px; margin: 6px 0; }
.muted { color: #6b7280; }
table { border-collapse: collapse; }
table.main { width: 100%; background: #fff; }
table.main > thead > tr > th, table.main > tbody > tr > td { border: 1px solid #d8dde3; padding: 5px 8px;
                                                              vertical-align: top; text-align: left; }
table.main > thead > tr > th { background: #eef1f4; position: sticky; top: 0; }
table.main > tbody > tr:nth-child(even) > td { background: #fafbfc; }
table.main td { overflow-wrap: break-word; }
table.verdicts td:first-child { white-space: nowrap; }
tr.numbers > td { background: #fcfcfd !important; padding-left: 28px !important; }
.badge { display: inline-block; padding: 1px 9px; border-radius: 10px; font-weight: 700; font-size: 13px;
         white-space: nowrap; }
.v-holds, .c-pass { background: #d1fae5; color: #065f46; }
.v-fails, .c-fail { background: #fee2e2; color: #991b1b; }
.v-notmet { background: #ffedd5; color: #9a3412; }
.v-error { background: #fce7f3; color: #9d174d; }
.v-inconclusive, .c-undecided { background: #fef3c7; color: #854d0e; }
ul.hyps { list-style: none; padding-left: 4px; margin: 4px 0; }
ul.hyps li { margin: 3px 0; }
.mark { display: inline-block; width: 1.3em; font-weight: 700; }
.met .mark { color: #047857; }
.notmet .mark { color: #b91c1c; }
.detail { color: #4b5563; }
table.kv { font-size: 13px; margin: 2px 0; }
table.kv th, table.kv td { border: 1px solid #e3e7eb; padding: 2px 6px; vertical-align: top; text-align: left; }
table.kv th { background: #f3f5f7; font-weight: 600; white-space: nowrap; }
table.kv table.kv { font-size: 12.5px; }
.n { font-family: ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12.5px; }
.special { font-style: italic; color: #7c3aed; }
.more { color: #6b7280; font-style: italic; }
table.main td.num, table.main th.num { text-align: right; white-space: nowrap; }
.keynums { font-size: 13px; }
.keynums span { display: inline-block; margin-right: 14px; }
figure { margin: 16px 0; }
figure img { max-width: 100%; height: auto; border: 1px solid #e3e7eb; background: #fff; }
figcaption { font-size: 13px; color: #4b5563; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.missing { color: #991b1b; }
a { color: #1d4ed8; }
"""


def render_html(results: list[ClaimResult], config: RunConfig, run=None) -> str:
    """The report as one self-contained HTML page: a header with the run's settings, the verdict table
    (each claim linked to its section), and per claim its statement, hypotheses, checks (with their
    numbers as nested tables) and figures, inlined as base64 ``data:`` URIs.  No external resource and
    no script; every piece of text is escaped.  Never raises on odd numbers (None, NaN, inf, nesting).
    ``run`` (a ``results_folder.RunState``) adds the run's state and wall time to the header."""
    from mmicl._version import __version__

    ids = _anchors([r.id for r in results])
    counts = {v: sum(r.verdict == v for r in results) for v in VERDICT_CLASS}
    meta = [("mmicl", __version__), ("size", config.size), ("seed", config.seed),
            ("device", config.device)]
    if config.law:
        meta.append(("law", config.law))
    meta.append(("claims", ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "none"))
    meta.append(("seconds", f"{sum(r.seconds for r in results):.1f}"))
    if run is not None:
        meta += [("run", run.line(len(results))), ("wall time", f"{run.wall_seconds:.1f} s")]
    pending = set(run.pending_figures) if run is not None else set()
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>mmicl verification report</title>",
        f"<style>{CSS}</style>",
        "</head>",
        '<body id="top">',
        "<header>",
        "<h1>mmicl verification report</h1>",
        '<dl class="meta">' + "".join(f"<div><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>" for k, v in meta) + "</dl>",
        "</header>",
        "<main>",
        '<section id="verdicts">',
        "<h2>Verdicts</h2>",
    ]
    if results:
        out.append('<table class="main verdicts"><thead><tr><th>claim</th><th>verdict</th><th>key numbers</th>'
                   '<th class="num">seconds</th><th>origin</th></tr></thead><tbody>')
        for r, a in zip(results, ids):
            nums = "".join(f"<span><b>{_e(k)}</b> = {_value(v, inline=True)}</span>" for k, v in r.summary.items())
            out.append(f'<tr><td><a href="#{a}">{_e(r.id)}</a></td><td>{_badge(r.verdict)}</td>'
                       f'<td class="keynums">{nums or _muted("none")}</td>'
                       f'<td class="num">{_e(_seconds(r.seconds))}</td><td>{_e(r.origin)}</td></tr>')
        out.append("</tbody></table>")
    else:
        out.append(f"<p>{_muted('No claim was run.')}</p>")
    out.append("</section>")
    for r, a in zip(results, ids):
        out += _claim_html(r, a, config, pending)
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


def _claim_html(r: ClaimResult, anchor: str, config: RunConfig, pending: set = frozenset()) -> list[str]:
    out = [f'<section class="claim" id="{anchor}">',
           f'<h2>{_e(r.id)} {_badge(r.verdict)}<a class="top" href="#top">↑ verdicts</a></h2>',
           f'<p class="statement">{_e(r.statement)}</p>']
    if r.verdict_reason:
        out.append(f'<p class="reason"><b>Why:</b> {_e(r.verdict_reason)}</p>')
    out.append(f'<p class="origin"><b>Origin:</b> {_e(r.origin)}</p>')
    if r.error:
        out.append(f"<pre>{_e(r.error.rstrip())}</pre>")
    out.append("<h3>Hypotheses</h3>")
    if r.hypotheses:
        out.append('<ul class="hyps">')
        for h in r.hypotheses:
            cls, mark, word = ("met", "✓", "met") if h.met else ("notmet", "✗", "NOT MET")
            detail = f' <span class="detail">({_e(h.detail)})</span>' if h.detail else ""
            out.append(f'<li class="{cls}"><span class="mark" title="{word}">{mark}</span>'
                       f'<b>{word}</b>: {_e(h.text)}{detail}</li>')
        out.append("</ul>")
    else:
        out.append(f"<p>{_muted('none stated')}</p>")
    tally = {m: sum(CHECK_MARK[_outcome(c.passed)][0] == m for c in r.checks) for m in ("pass", "FAIL", "undecided")}
    out.append(f"<h3>Checks <span class=\"muted\">({len(r.checks)}: "
               + ", ".join(f"{n} {m}" for m, n in tally.items() if n) + ")</span></h3>" if r.checks
               else "<h3>Checks</h3>")
    if r.checks:
        out.append('<table class="main checks"><thead><tr><th>#</th><th>check</th><th>method</th><th>role</th>'
                   "<th>result</th><th>detail</th><th>tolerance (and where it comes from)</th></tr></thead><tbody>")
        for i, c in enumerate(r.checks, 1):
            word, cls = CHECK_MARK[_outcome(c.passed)]
            out.append(f'<tr><td class="num">{i}</td><td>{_e(c.name)}</td><td>{_e(c.method)}</td>'
                       f'<td>{_e(c.role)}</td>'
                       f'<td><span class="badge c-{cls}">{word}</span></td><td>{_e(c.detail)}</td>'
                       f"<td>{_e(c.tolerance) or _muted('—')}</td></tr>")
            if c.numbers:
                out.append(f'<tr class="numbers"><td></td><td colspan="6"><span class="muted">numbers</span>'
                           f"{_value(c.numbers)}</td></tr>")
        out.append("</tbody></table>")
    else:
        out.append(f"<p>{_muted('no check was run' + (' (a hypothesis is not met)' if r.verdict == 'hypothesis-not-met' else ''))}</p>")
    if r.figures:
        out.append("<h3>Figures</h3>")
        for f in r.figures:
            out.append(_figure_html(f, config, f in pending))
    out.append("</section>")
    return out


def _figure_html(fig: str, config: RunConfig, pending: bool = False) -> str:
    import base64

    path = Path(fig)
    try:
        caption = os.path.relpath(path, Path(config.out))
        if caption.startswith(".."):
            caption = path.name
    except ValueError:  # another drive (Windows)
        caption = path.name
    if pending:  # not read: a file of that name may still be an earlier run's
        return f'<p class="missing">figure {_e(caption)}: being written</p>'
    mime = MIME.get(path.suffix.lower())
    try:
        data = path.read_bytes()
    except OSError as e:
        return f'<p class="missing">figure {_e(caption)} could not be read: {_e(e.strerror or e)}</p>'
    if mime is None:
        return f'<p class="missing">figure {_e(caption)}: not an image type a browser shows inline</p>'
    uri = f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
    return (f'<figure><img src="{uri}" alt="{_e(path.stem)}">'
            f"<figcaption>{_e(caption)}</figcaption></figure>")


def _anchors(ids: list[str]) -> list[str]:
    """One unique, URL-safe anchor per claim id (``claim-thm6-2``)."""
    import re

    seen: dict[str, int] = {}
    out = []
    for i in ids:
        a = "claim-" + (re.sub(r"[^A-Za-z0-9_-]+", "-", str(i)).strip("-") or "x")
        seen[a] = seen.get(a, 0) + 1
        out.append(a if seen[a] == 1 else f"{a}-{seen[a]}")
    return out


def _e(x) -> str:
    return html.escape(str(x), quote=True)


def _muted(text: str) -> str:
    return f'<span class="muted">{_e(text)}</span>'


def _badge(verdict: str) -> str:
    return f'<span class="badge v-{VERDICT_CLASS.get(verdict, "inconclusive")}">{_e(verdict)}</span>'


def _seconds(s) -> str:
    try:
        return f"{float(s):.1f}"
    except (TypeError, ValueError):
        return str(s)


def _plain(v):
    """numpy scalars and arrays, and other array-likes, as plain Python values."""
    if hasattr(v, "tolist") and not isinstance(v, (str, bytes)):
        try:
            return v.tolist()
        except Exception:  # noqa: BLE001 (an odd object: shown as its text)
            return str(v)
    return v


def _scalar(v) -> str | None:
    """The HTML of a scalar (None for a container)."""
    v = _plain(v)
    if v is None:
        return '<span class="special">None</span>'
    if isinstance(v, bool):
        return f'<span class="n">{"true" if v else "false"}</span>'
    if isinstance(v, int):
        return f'<span class="n">{v}</span>'
    if isinstance(v, float):
        if math.isnan(v):
            return '<span class="special">NaN</span>'
        if math.isinf(v):
            return f'<span class="special">{"inf" if v > 0 else "−inf"}</span>'
        return f'<span class="n">{v:.6g}</span>'
    if isinstance(v, complex):
        return f'<span class="n">{_e(f"{v:.6g}")}</span>'
    if isinstance(v, (str, bytes)):
        return _e(v if isinstance(v, str) else repr(v))
    if isinstance(v, (dict, list, tuple, set, frozenset)):
        return None
    return _e(v)


def _value(v, depth: int = 0, inline: bool = False) -> str:
    """A value as HTML: scalars formatted, lists compact (long ones truncated with a count), dicts as
    key/value tables, lists of dicts as tables with a column per key."""
    v = _plain(v)
    s = _scalar(v)
    if s is not None:
        return s
    if depth >= MAX_DEPTH:
        text = repr(v)
        return _e(text[:200] + ("…" if len(text) > 200 else ""))
    if isinstance(v, (set, frozenset)):
        v = sorted(v, key=str)
    if isinstance(v, dict):
        if not v:
            return _muted("{} (empty)")
        if inline:
            return "{" + ", ".join(f"{_e(k)}: {_value(x, depth + 1, True)}" for k, x in v.items()) + "}"
        rows = "".join(f"<tr><th>{_e(k)}</th><td>{_value(x, depth + 1)}</td></tr>" for k, x in v.items())
        return f'<table class="kv"><tbody>{rows}</tbody></table>'
    v = list(v)
    if not v:
        return _muted("[] (empty)")
    if not inline and all(isinstance(_plain(x), dict) for x in v) and len(v) > 1:
        return _records(v, depth)
    if inline or all(_scalar(x) is not None for x in v):
        items = _truncated(v)
        parts = [_more(x) if isinstance(x, _Gap) else _value(x, depth + 1, inline=True) for x in items]
        return "[" + ", ".join(parts) + "]" + (f' <span class="more">({len(v)} items)</span>' if len(v) > LIST_SHOWN else "")
    items = _truncated(v)
    lis = "".join(f"<li>{_more(x) if isinstance(x, _Gap) else _value(x, depth + 1)}</li>" for x in items)
    return f'<ol class="kv" start="0">{lis}</ol>'


class _Gap:
    def __init__(self, n: int):
        self.n = n


def _more(g: _Gap) -> str:
    return f'<span class="more">… {g.n} more …</span>'


def _truncated(v: list) -> list:
    if len(v) <= LIST_SHOWN:
        return v
    return [*v[:LIST_HEAD], _Gap(len(v) - LIST_HEAD - LIST_TAIL), *v[-LIST_TAIL:]]


def _records(rows: list, depth: int) -> str:
    """A list of dicts as one table: a column per key (in order of first appearance), one row each."""
    rows = [_plain(r) for r in rows]
    keys: list = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    head = "<tr><th>#</th>" + "".join(f"<th>{_e(k)}</th>" for k in keys) + "</tr>"
    shown = rows if len(rows) <= ROWS_SHOWN else rows[:ROWS_SHOWN]
    body = "".join(
        f"<tr><th>{i}</th>" + "".join(f"<td>{_value(r[k], depth + 1, inline=True) if k in r else ''}</td>"
                                      for k in keys) + "</tr>"
        for i, r in enumerate(shown))
    if len(rows) > len(shown):
        body += (f'<tr><td colspan="{len(keys) + 1}"><span class="more">… {len(rows) - len(shown)} more rows '
                 f"({len(rows)} in all)</span></td></tr>")
    return f'<table class="kv"><thead>{head}</thead><tbody>{body}</tbody></table>'
