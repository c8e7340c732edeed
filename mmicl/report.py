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
import re
from pathlib import Path

from mmicl.proofs.claim import BUILTIN, ClaimResult, RunConfig
from mmicl.numerics.strict_json import to_strict
from mmicl.numerics.provenance import __version__

__all__ = ["render_report", "LIST_SHOWN", "ROWS_SHOWN", "MAX_DEPTH", "MIME", "VERDICT_CLASS", "CHECK_MARK", "CSS",
           "render_html", "OPEN_NOTE", "LAW_TAG", "LAW_SPEC", "hypothesis_groups", "CAPTION_KEY", "CAPTIONS",
           "figure_caption", "png_text", "CONVENTIONS", "CONVENTIONS_SOURCE"]



def render_report(results: list[ClaimResult], config: RunConfig, run=None) -> str:
    """The report in Markdown; ``run`` (a ``results_folder.RunState``) adds the run's state."""
    pending = set(run.pending_figures) if run is not None else set()
    lines = [
        "# mmicl verification report",
        "",
        f"Size: {config.size}; seed {config.seed}; device {config.device}"
        + (f"; law `{config.law}`" if config.law else "") + (f"; case `{config.case}`" if config.case else ""),
        "",
        *([f"Run: {run.line(len(results))}; wall time {_wall(run)}", ""] if run is not None else []),
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

    try:
        return json.dumps(to_strict(obj), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        return json.dumps(_loose(obj), ensure_ascii=False, allow_nan=False)


def _loose(v):
    """Like ``to_strict`` but never refusing: odd objects become their text."""

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
details.claim { background: #fff; border: 1px solid #d8dde3; border-radius: 8px; padding: 0 20px; margin: 16px 0; }
details.claim[open] { padding-bottom: 16px; }
details.claim > summary { font-size: 19px; font-weight: 700; padding: 10px 0; cursor: pointer; }
details.claim > summary .muted { font-size: 13px; font-weight: normal; }
details.claim > summary .badge { vertical-align: 2px; }
details.group { margin: 4px 0 8px; }
details.group > summary { cursor: pointer; font-weight: 600; font-size: 14px; }
details.group > ul.hyps { padding-left: 22px; }
details.check { border: 1px solid #e3e7eb; border-radius: 6px; margin: 5px 0; background: #fff; }
details.check > summary { padding: 5px 8px; cursor: pointer; }
details.check > summary .num { display: inline-block; min-width: 1.8em; color: #6b7280; text-align: right; }
details.check[open] > summary { border-bottom: 1px solid #e3e7eb; background: #f9fafb; }
details.check > table.kv { margin: 6px 10px 8px 34px; }
details.c-fail-row { border-color: #fca5a5; }
details.c-undecided-row { border-color: #fcd34d; }
.top { font-size: 13px; font-weight: normal; float: right; margin-left: 12px; }
table.conventions { font-size: 13.5px; }
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
figcaption { font-size: 14px; color: #374151; max-width: 1100px; margin-top: 4px; }
.missing { color: #991b1b; }
a { color: #1d4ed8; }
"""


def render_html(results: list[ClaimResult], config: RunConfig, run=None) -> str:
    """The report as one self-contained HTML page: a header with the run's settings and times, the
    verdict table (each claim linked to its section), then per claim a collapsible section (its
    summary line: the id, the verdict and the checks' tally; open where the verdict is not
    ``holds``) with its statement, hypotheses (grouped by law where the claim states them for
    several), checks (each collapsible, open where it failed or could not decide, with its numbers
    as nested tables) and figures (inlined as base64 ``data:`` URIs, each with a caption that says
    what it shows), and the conventions the captions link to.  No external resource and no script;
    every piece of text is escaped.  Never raises on odd numbers (None, NaN, inf, nesting).
    ``run`` (a ``results_folder.RunState``) adds the run's state and its wall time to the header."""

    ids = _anchors([r.id for r in results])
    counts = {v: sum(r.verdict == v for r in results) for v in VERDICT_CLASS}
    meta = [("mmicl", __version__), ("size", config.size), ("seed", config.seed),
            ("device", config.device)]
    if config.law:
        meta.append(("law", config.law))
    if config.case:
        meta.append(("case", config.case))
    meta.append(("claims", ", ".join(f"{n} {v}" for v, n in counts.items() if n) or "none"))
    if run is not None:
        meta += [("run", run.line(len(results))), ("wall time", _wall(run))]
    # the claims' own times add up to less than the wall time (setup, the reports) or, for a run
    # that sends work elsewhere, to more: both are shown, each under its name
    meta.append(("claims' time (sum)", f"{sum(_float(r.seconds) for r in results):.1f} s"))
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
        out.append(f"<p>{_muted(OPEN_NOTE)}</p>")
    else:
        out.append(f"<p>{_muted('No claim was run.')}</p>")
    out.append("</section>")
    figure_no = [0]
    for r, a in zip(results, ids):
        out += _claim_html(r, a, config, pending, figure_no)
    if _uses_conventions(results):
        out += _conventions_html()
    out += ["</main>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


OPEN_NOTE = ("Each claim below is a section that opens and closes on its summary line; the claims that do not "
             "hold, and every check that failed or could not decide, start open.")


def _tally(checks) -> str:
    """``12 checks: 11 pass, 1 undecided``."""
    if not checks:
        return "no checks"
    tally = {m: sum(CHECK_MARK[_outcome(c.passed)][0] == m for c in checks) for m in ("pass", "FAIL", "undecided")}
    return f"{len(checks)} check{'s' if len(checks) != 1 else ''}: " + ", ".join(f"{n} {m}" for m, n in tally.items() if n)


def _claim_html(r: ClaimResult, anchor: str, config: RunConfig, pending: set = frozenset(),
                figure_no: list | None = None) -> list[str]:
    figure_no = [0] if figure_no is None else figure_no
    opened = " open" if r.verdict != "holds" else ""
    out = [f'<details class="claim" id="{anchor}"{opened}>',
           f'<summary><span class="cid">{_e(r.id)}</span> {_badge(r.verdict)} '
           f'<span class="muted">{_e(_tally(r.checks))}</span></summary>',
           '<div class="body">',
           f'<p class="statement">{_e(r.statement)}<a class="top" href="#top">↑ verdicts</a></p>']
    if r.verdict_reason:
        out.append(f'<p class="reason"><b>Why:</b> {_e(r.verdict_reason)}</p>')
    out.append(f'<p class="origin"><b>Origin:</b> {_e(r.origin)}</p>')
    if r.error:
        out.append(f"<pre>{_e(r.error.rstrip())}</pre>")
    out.append("<h3>Hypotheses</h3>")
    if r.hypotheses:
        groups = hypothesis_groups(r.hypotheses)
        if len(groups) == 1 and groups[0][0] is None:
            out += _hypotheses_list(groups[0][1])
        else:
            for law, hs in groups:
                met = sum(bool(h.met) for h in hs)
                opened = "" if met == len(hs) else " open"
                out.append(f'<details class="group"{opened}><summary>on <span class="n">{_e(law)}</span> '
                           f'<span class="muted">({met} of {len(hs)} met)</span></summary>')
                out += _hypotheses_list(hs)
                out.append("</details>")
    else:
        out.append(f"<p>{_muted('none stated')}</p>")
    out.append(f'<h3>Checks <span class="muted">({_e(_tally(r.checks))})</span></h3>' if r.checks else "<h3>Checks</h3>")
    if r.checks:
        for i, c in enumerate(r.checks, 1):
            out += _check_html(i, c)
    else:
        out.append(f"<p>{_muted('no check was run' + (' (a hypothesis is not met)' if r.verdict == 'hypothesis-not-met' else ''))}</p>")
    if r.figures:
        out.append("<h3>Figures</h3>")
        for f in r.figures:
            figure_no[0] += 1
            out.append(_figure_html(f, config, f in pending, figure_no[0], conventions=r.origin == BUILTIN))
    out += ["</div>", "</details>"]
    return out


def _hypotheses_list(hs) -> list[str]:
    out = ['<ul class="hyps">']
    for h in hs:
        cls, mark, word = ("met", "✓", "met") if h.met else ("notmet", "✗", "NOT MET")
        detail = f' <span class="detail">({_e(h.detail)})</span>' if h.detail else ""
        out.append(f'<li class="{cls}"><span class="mark" title="{word}">{mark}</span>'
                   f'<b>{word}</b>: {_e(h.text)}{detail}</li>')
    out.append("</ul>")
    return out


def _check_html(i: int, c) -> list[str]:
    """One check as a collapsible block: the summary line has its number, name, method and role and
    its outcome; a check that failed or could not decide starts open."""
    word, cls = CHECK_MARK[_outcome(c.passed)]
    opened = "" if _outcome(c.passed) is True else " open"
    out = [f'<details class="check c-{cls}-row"{opened}>',
           f'<summary><span class="num">{i}</span> <span class="badge c-{cls}">{word}</span> {_e(c.name)} '
           f'<span class="muted">[{_e(c.method)}; {_e(c.role)}]</span></summary>',
           '<table class="kv check"><tbody>',
           f"<tr><th>detail</th><td>{_e(c.detail) or _muted('—')}</td></tr>",
           f"<tr><th>tolerance (and where it comes from)</th><td>{_e(c.tolerance) or _muted('—')}</td></tr>"]
    if c.numbers:
        out.append(f"<tr><th>numbers</th><td>{_value(c.numbers)}</td></tr>")
    out += ["</tbody></table>", "</details>"]
    return out


LAW_TAG = re.compile(r"^\[([^\]]+)\]\s+(.*)$", re.S)
LAW_SPEC = re.compile(r"((?:s|sv)=\S.*?; d1=\d+; d2=\d+)")


def hypothesis_groups(hypotheses) -> list[tuple[str | None, list]]:
    """The hypotheses by the law they are about, in order: ``[(law, [Hypothesis, …]), …]``, each
    hypothesis's text without its law.  A claim that checks several laws states the same
    hypotheses once per law: either tagged ``"[LAW] text"`` (the tag is the group), or as the same
    texts again (a text seen before starts the next group, named by the law written in one of its
    details, else "law k").  ``[(None, hypotheses)]`` where there is one law and no tag."""
    from dataclasses import replace

    tagged = [LAW_TAG.match(h.text) for h in hypotheses]
    if hypotheses and all(tagged):
        groups: dict[str, list] = {}
        for h, m in zip(hypotheses, tagged):
            groups.setdefault(m.group(1), []).append(replace(h, text=m.group(2)))
        return list(groups.items())
    blocks: list[list] = [[]]
    for h in hypotheses:
        if any(x.text == h.text for x in blocks[-1]):
            blocks.append([])
        blocks[-1].append(h)
    if len(blocks) == 1:
        return [(None, list(hypotheses))]
    named = []
    for k, hs in enumerate(blocks, 1):
        found = [m.group(1) for h in hs for m in [LAW_SPEC.search(f"{h.text} {h.detail}")] if m]
        named.append((found[0] if found else f"law {k}", hs))
    return named


def _figure_html(fig: str, config: RunConfig, pending: bool = False, number: int | None = None,
                 conventions: bool = True) -> str:
    import base64

    path = Path(fig)
    try:
        name = os.path.relpath(path, Path(config.out))
        if name.startswith(".."):
            name = path.name
    except ValueError:  # another drive (Windows)
        name = path.name
    if pending:  # not read: a file of that name may still be an earlier run's
        return f'<p class="missing">figure {_e(name)}: being written</p>'
    mime = MIME.get(path.suffix.lower())
    try:
        data = path.read_bytes()
    except OSError as e:
        return f'<p class="missing">figure {_e(name)} could not be read: {_e(e.strerror or e)}</p>'
    if mime is None:
        return f'<p class="missing">figure {_e(name)}: not an image type a browser shows inline</p>'
    uri = f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
    label = f"<b>Figure {number}.</b> " if number else ""
    return (f'<figure><img src="{uri}" alt="{_e(path.stem)}" title="{_e(name)}">'
            f"<figcaption>{label}{_e(figure_caption(path, data))}"
            + (' <a href="#conventions">Conventions</a>' if conventions else "") + "</figcaption></figure>")


CAPTION_KEY = "Description"
"""The PNG text field (matplotlib: ``savefig(..., metadata={"Description": ...})``) that carries a
figure's caption; the figures of thm4.1, appF and ``mmicl limits`` write theirs there."""

CAPTIONS = [  # the built-in figures that carry no caption of their own, by file name
    (r"thm6\.2_alpha_sweep", "Theorem 6.2, one-parameter LCA, one line per law: left, the minimiser α_T against the "
                             "depth T (dotted: its limit α* = 2/(2 + s_lo + s_hi)); middle, the distance |α_T − α*| "
                             "(log–log); right, log₁₀ of the excess risk over Bayes at α_T."),
    (r"thm6\.3_plane_T(\d+)", "Theorem 6.3, two-parameter LCA at depth T = {0}: log₁₀ excess risk over the (α, β) "
                              "plane, gradient-flow paths, and each start of the grid coloured by where its flow "
                              "ends; the star is the minimiser (α_T, β_T), the dashed line β = −α."),
    (r"depth_excess", "Claim depth: the trained one-parameter LCA's excess risk over Bayes against the depth T "
                      "(log–log, ± standard errors), with the theory's excess at α_T and at the trained α."),
    (r"ext\.untied_rates", "Claim ext.untied: the excess risk's decay with the depth T, tied α_T against the optimal "
                           "untied schedule, with the predicted rates per layer."),
]


def figure_caption(path, data: bytes | None = None) -> str:
    """What a figure shows, in a sentence or two: the caption the figure carries in its PNG text
    (``CAPTION_KEY``), else the one ``CAPTIONS`` gives its file name, else a sentence naming the file
    (a plugin's figure without a caption)."""
    path = Path(path)
    if data is None:
        try:
            data = path.read_bytes()
        except OSError:
            data = b""
    own = png_text(data).get(CAPTION_KEY)
    if own:
        return own
    for pattern, text in CAPTIONS:
        m = re.fullmatch(pattern, path.stem)
        if m:
            return text.format(*m.groups())
    return f"{path.stem.replace('_', ' ')} (the claim gave this figure no caption)"


def png_text(data: bytes) -> dict[str, str]:
    """The text fields (tEXt, zTXt, iTXt) of a PNG file's bytes; ``{}`` for anything else or a
    damaged file (the report never stops on a figure)."""
    import struct
    import zlib

    out: dict[str, str] = {}
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return out
    i = 8
    try:
        while i + 8 <= len(data):
            n, kind = struct.unpack(">I4s", data[i:i + 8])
            body = data[i + 8:i + 8 + n]
            i += 12 + n
            if kind == b"tEXt":
                key, _, text = body.partition(b"\0")
                out[key.decode("latin-1")] = text.decode("latin-1")
            elif kind == b"zTXt":
                key, _, rest = body.partition(b"\0")
                out[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
            elif kind == b"iTXt":
                key, _, rest = body.partition(b"\0")
                compressed, rest = rest[0], rest[2:]
                _lang, _, rest = rest.partition(b"\0")
                _translated, _, text = rest.partition(b"\0")
                out[key.decode("latin-1")] = (zlib.decompress(text) if compressed else text).decode("utf-8")
            elif kind == b"IEND":
                break
    except (struct.error, zlib.error, UnicodeDecodeError, IndexError):
        return out
    return out


CONVENTIONS = [  # (the point, mmicl's choice): the ones the figures and numbers above depend on
    ("the norm of m", "s = ‖m‖², the squared norm: α* = 2/(2 + s_lo + s_hi) with s_lo, s_hi the ends of the law of s "
                      "(per modality: ‖v‖² and ‖r‖², LAW text sv=…; sr=…)"),
    ("s_lo", "the essential infimum of s over the prompts with m ≠ 0 (an atom at s = 0 cannot move α_T)"),
    ("risk", "the population loss E[(ŷ − y_q)²], with no ½; excess risk is the loss minus the Bayes risk, in units "
             "of E[ζ²] where a panel says so"),
    ("F⁰ and the skip", "F⁰ = 0, so without the skip (W^S = 0) F stays 0 and the model predicts ŷ ≡ 0, whose risk is "
                        "E[ζ²]"),
    ("the sample-mean predictor (Appendix F)", "ȳ = (1/n) Σ y_i, with risk E[ζ²](1 + 1/n)"),
    ("order of limits", "n → ∞ (the large-context limit), then training time → ∞, then T → ∞"),
    ("LCA readout", "ŷ = (1/n) Σ y_i x_iᵀ F^T_q: raw keys, evolved query, W^R = I"),
]
CONVENTIONS_SOURCE = "docs/model.md, section “Conventions” (docs/model.md#conventions; the README's “Conventions” points there)"


def _uses_conventions(results) -> bool:
    """The conventions section (the LCA model's notation: s, λ, α, T, …) is for the built-in
    claims' numbers and figures; a report of other claims only (a plugin's) leaves it out."""
    return any(r.origin == BUILTIN for r in results)


def _conventions_html() -> list[str]:
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in CONVENTIONS)
    return ['<section id="conventions">', "<h2>Conventions</h2>",
            f"<p>The choices the figures and numbers above rest on. The full list, with where each lives in "
            f"the code: {_e(CONVENTIONS_SOURCE)}.</p>",
            f'<table class="kv conventions"><tbody>{rows}</tbody></table>', "</section>"]


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


def _float(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


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


def _wall(run) -> str:
    """The run's wall time with its start-up (``RunState.startup_seconds``: included in it)."""
    return f"{run.wall_seconds:.1f} s (start-up {run.startup_seconds:.1f} s of it, before the first claim)"
