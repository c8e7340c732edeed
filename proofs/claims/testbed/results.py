"""The testbed claims' committed verdict runs as Markdown, from their result folders.

Each verdict run of a claim's per-seed design leaves a folder ``<root>/<claim>_v<version>/`` holding the
``verdicts.json`` of ``mmicl verify`` and the claim's own result file (``<claim>.json``: tables,
curves, the wall seconds of each run).  ``results_markdown(root)`` turns every such folder into one
table: per claim and version the verdict, the verdict of each seed family alone
(``family_verdicts``), the premises (met or not, with the failing seeds), each check's role, the
pooled counts of seeds above (+), below (−) and unresolved (0), the one-sided p-values, each
family's sign-test decision, the magnitude (``magnitude``: the mean per-seed A − B over both
families with its se over seeds, beside the margin), and the time the claim's runs took (the sum of their wall times, one torch thread each).
docs/testbed.md carries the table between ``<!-- results:start -->`` and ``<!-- results:end -->``;
``python -m mmicl.proofs.claims.testbed docs --docs docs/testbed.md`` rewrites it (and the design
block, ``design.design_markdown``), and a test keeps it equal to what the folders give.  Every
version's folder stays where its run put it after its code is retired: ``studies/results/v3_quick/``
for the version-3 designs, ``studies/results/v4_quick/`` for version 4's (``RESULT_ROOTS``; each
function takes one root or several).

``holm_rows(root)`` reads the decisive checks of each claim's *latest* version together: every such
check is two one-sided sign tests (+ and −, each at ``ALPHA``), and Holm's procedure
(``multiplicity.holm``) over all of them keeps the chance of any wrongly decided direction, across
the claims, at ``ALPHA``.  A check stays decided after the correction when the direction it was
decided in is still rejected; the block ``holm`` of docs/testbed.md carries that table.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from ...claim import Check, Hypothesis, decide
from .common import family_sign_test
from .design import ALPHA, PREMISE_FAILURES, design_markdown, outcome_word
from mmicl.numerics.atomic import write_text
from mmicl.numerics.testbed.multiplicity import holm

__all__ = ["FOLDER", "RESULT_ROOTS", "results_root", "result_folders", "family_decision", "family_verdicts", "magnitude", "results_markdown", "reported_markdown", "holm_rows",
           "holm_markdown", "replace_block", "block", "main"]

FOLDER = re.compile(r"^(claim\d+)_v(\d+(?:\.\d+)?)$")


RESULT_ROOTS = ("studies/results/v3_quick", "studies/results/v4_quick")
"""Where the committed verdict runs are, relative to the repository: version 3's designs, version 4's."""


def results_root(version) -> str:
    """The folder (``RESULT_ROOTS``) that keeps the verdict runs of a design ``version``."""
    return RESULT_ROOTS[1] if float(version) >= 4 else RESULT_ROOTS[0]


def result_folders(root) -> list[tuple[str, str, Path]]:
    """(claim, version, folder) of every verdict-run folder under ``root`` (a folder, or a sequence of
    them), in claim then version order."""
    roots = [Path(root)] if isinstance(root, (str, Path)) else [Path(r) for r in root]
    found = []
    for base in roots:
        for p in sorted(base.iterdir()) if base.is_dir() else []:
            m = FOLDER.match(p.name)
            if m and (p / "verdicts.json").is_file():
                found.append((m.group(1), m.group(2), p))
    return sorted(found, key=lambda t: (int(t[0][5:]), float(t[1])))


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _p(x) -> str:
    return "–" if x is None else f"{x:.2g}"


def _total(seconds) -> float:
    """The sum of a result file's ``seconds``: a number, or a dict of them (per run), possibly
    nested (per stage, then per run)."""
    if isinstance(seconds, dict):
        return sum(_total(v) for v in seconds.values())
    return float(seconds or 0.0)


PREMISE_COUNT = re.compile(r"family (\w+): (\d+) of (\d+) seeds")


def family_decision(outcomes) -> bool | None:
    """A family's decision of one check, as ``common.decide_check`` decides it (``family_sign_test``)."""
    return family_sign_test(outcomes).decision


def family_verdicts(result: dict) -> dict[str, str]:
    """The verdict each seed family gives alone, by the registry's rule (``decide``), from a claim's
    entry in ``verdicts.json``: each check decided by the exact sign test on that family's per-seed
    outcomes (its numbers ``outcomes_<family>``; a check without them keeps its pooled decision),
    each per-seed premise met when at most ``PREMISE_FAILURES`` of that family's seeds fail it (the
    counts its detail states), the other hypotheses as they are."""
    ev = result["evidence"]
    families = sorted({k.split("_", 1)[1] for c in ev["checks"] for k in c["numbers"] if k.startswith("outcomes_")})
    out = {}
    for f in families:
        hyps = []
        for h in ev["hypotheses"]:
            counts = {m.group(1): (int(m.group(2)), int(m.group(3)))
                      for m in PREMISE_COUNT.finditer(h.get("detail", ""))}
            met = h["met"] if f not in counts else counts[f][1] - counts[f][0] <= PREMISE_FAILURES
            hyps.append(Hypothesis(h["text"], bool(met), h.get("detail", "")))
        checks = []
        for c in ev["checks"]:
            o = c["numbers"].get(f"outcomes_{f}")
            passed = c["passed"] if o is None else family_decision(o)
            checks.append(Check(c["name"], c["method"], passed, numbers=c["numbers"], tolerance=c.get("tolerance", ""),
                                role=c["role"], atol=c.get("atol"), rtol=c.get("rtol"),
                                numbers_tolerance=c.get("numbers_tolerance", "")))  # the stored check, re-decided
        out[f] = decide(hyps, checks)[0]
    return out


def magnitude(numbers: dict) -> str:
    """A check's effect size as the results table shows it: the mean of the per-seed differences of
    both families (``diff_A``, ``diff_B``: the seeds its premises kept) ± its se over seeds (sample sd
    over √n), and the margin; "–" without differences."""
    d = np.concatenate([np.asarray(numbers.get(k, []), float) for k in ("diff_A", "diff_B")]) \
        if any(k in numbers for k in ("diff_A", "diff_B")) else np.zeros(0)
    d = d[np.isfinite(d)]
    if d.size == 0:
        return "–"
    se = float(d.std(ddof=1) / np.sqrt(d.size)) if d.size > 1 else float("nan")
    margin = numbers.get("margin")
    return f"{d.mean():+.3g} ± {se:.2g} (n = {d.size}{f', margin {margin:g}' if margin is not None else ''})"


def results_markdown(root) -> str:
    """The table of every verdict-run folder under ``root`` (module docstring); a line saying that
    there is none yet when there is none."""
    rows = ["| claim | version | verdict | per family (A; B) | premises (per seed) | check (role) | + / − / 0 "
            "| p(+), p(−) | per family (A; B) | mean A − B ± se | run time |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    folders = result_folders(root)
    if not folders:
        return "No verdict run has been committed yet."
    for claim, version, folder in folders:
        doc = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
        (result,) = [c for c in doc["claims"] if c["id"] == f"testbed.{claim}"]
        ev = result["evidence"]
        own = folder / f"{claim}.json"
        own_doc = json.loads(own.read_text(encoding="utf-8")) if own.is_file() else {}
        seconds = _total(own_doc.get("seconds", {})) if own.is_file() else None
        scope = f" ({own_doc['scope']})" if own_doc.get("scope") else ""
        premises = "; ".join(f"{'met' if h['met'] else 'NOT met'}: {h['text']} ({h['detail']})"
                             for h in ev["hypotheses"] if h.get("detail"))
        per_family = "; ".join(family_verdicts(result).values())
        for i, c in enumerate(ev["checks"]):
            n = c["numbers"]
            decision = outcome_word(c["passed"])
            by_family = "; ".join(outcome_word(family_decision(n[k])) if k in n else "–"
                                  for k in ("outcomes_A", "outcomes_B"))
            first = i == 0
            rows.append(
                f"| {claim if first else ''} | {version if first else ''} | "
                f"{'**' + result['verdict'] + '**' + _cell(scope) if first else ''} | {per_family if first else ''} | "
                f"{_cell(premises) if first else ''} | {_cell(c['name'])} ({c['role']}, {decision}) | "
                f"{n.get('plus', '–')} / {n.get('minus', '–')} / {n.get('unresolved', '–')} | "
                f"{_p(n.get('p_above'))}, {_p(n.get('p_below'))} | {by_family} | {magnitude(n)} | "
                f"{(f'{seconds / 60:.0f} min' if seconds is not None else '–') if first else ''} |")
    return "\n".join(rows)


def holm_rows(root, alpha: float = ALPHA) -> list[dict]:
    """One row per decisive check of each claim's latest version under ``root`` (module docstring):
    ``claim``, ``version``, ``check``, ``verdict`` (the claim's), ``decision`` (the check's alone:
    True, False or None), ``p_above``, ``p_below``, their Holm-adjusted values over the whole family
    (``holm_above``, ``holm_below``) and ``holm_decision``: the check's decision where Holm still
    rejects its direction, else None.  A check without pooled p-values (none was formed) is not a
    test of the family and is not listed."""
    rows = []
    for claim, (version, folder) in _latest(root).items():
        doc = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
        (result,) = [c for c in doc["claims"] if c["id"] == f"testbed.{claim}"]
        for c in result["evidence"]["checks"]:
            n = c["numbers"]
            if c["role"] != "decisive" or n.get("p_above") is None or n.get("p_below") is None:
                continue
            rows.append({"claim": claim, "version": version, "check": c["name"], "verdict": result["verdict"],
                         "decision": c["passed"], "p_above": float(n["p_above"]), "p_below": float(n["p_below"])})
    if not rows:
        return []
    p = {f"{i}+": r["p_above"] for i, r in enumerate(rows)} | {f"{i}-": r["p_below"] for i, r in enumerate(rows)}
    h = holm(p, alpha)
    for i, r in enumerate(rows):
        r["holm_above"], r["holm_below"] = h.adjusted[f"{i}+"], h.adjusted[f"{i}-"]
        kept = (r["decision"] is True and h.rejected[f"{i}+"]) or (r["decision"] is False and h.rejected[f"{i}-"])
        r["holm_decision"] = r["decision"] if kept else None
    return rows


def holm_markdown(root, alpha: float = ALPHA) -> str:
    """``holm_rows`` as a Markdown table, with the size of the family in a line above it."""
    rows = holm_rows(root, alpha)
    if not rows:
        return "No verdict run has been committed yet."
    lines = [f"Holm's correction over the {len(rows)} decisive checks of the claims' latest versions, two "
             f"one-sided tests each ({2 * len(rows)} in all), family-wise level {alpha:g}.", "",
             "| claim | version | verdict | check | alone | p(+), p(−) | Holm p(+), p(−) | after Holm |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['claim']} | {r['version']} | {r['verdict']} | {_cell(r['check'])} | "
                     f"{outcome_word(r['decision'])} | {_p(r['p_above'])}, {_p(r['p_below'])} | "
                     f"{_p(r['holm_above'])}, {_p(r['holm_below'])} | {outcome_word(r['holm_decision'])} |")
    return "\n".join(lines)


def _latest(root) -> dict[str, tuple[str, Path]]:
    latest = {}
    for claim, version, folder in result_folders(root):
        latest[claim] = (version, folder)
    return latest


def _number(value, atol) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    tol = f" ± {atol:.2g}" if isinstance(atol, (int, float)) and not isinstance(atol, bool) and atol > 0 else ""
    return f"{value:.4g}{tol}"


def reported_markdown(root) -> str:
    """One row per claim's latest version under ``root``: every number its summary reports (the
    no-stage-2 baselines, final accuracies, premise counts, settings; not the check outcomes, which the
    results table holds), each with the tolerance the claim states for it (how far a rerun on another
    machine may move it)."""
    latest = _latest(root)
    if not latest:
        return "No verdict run has been committed yet."
    lines = ["| claim | version | reported numbers (± the claim's stated tolerance) |", "|---|---|---|"]
    for claim, (version, folder) in latest.items():
        doc = json.loads((folder / "verdicts.json").read_text(encoding="utf-8"))
        (result,) = [c for c in doc["claims"] if c["id"] == f"testbed.{claim}"]
        summary, atol = result["evidence"].get("summary") or {}, result["evidence"].get("summary_atol")
        def tol(k):
            return atol.get(k) if isinstance(atol, dict) else atol
        cells = [f"{k} = {_number(v, tol(k))}" for k, v in summary.items() if not str(k).startswith("verdict: ")]
        lines.append(f"| {claim} | {version} | {_cell('; '.join(cells)) if cells else '–'} |")
    return "\n".join(lines)


def _markers(text: str, name: str) -> tuple[str, str]:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in text or end not in text.split(start, 1)[1]:
        raise ValueError(f"the file has no block {start} … {end}; add the two markers, each on a line of its own, "
                         "where the block goes")
    return start, end


def replace_block(text: str, name: str, content: str) -> str:
    """``text`` with the lines between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` replaced by
    ``content``; a ValueError naming the markers when they are missing."""
    start, end = _markers(text, name)
    head, rest = text.split(start, 1)
    return f"{head}{start}\n{content}\n{end}{rest.split(end, 1)[1]}"


def block(text: str, name: str) -> str:
    """The content of the block ``name`` of ``text`` (``replace_block``'s markers)."""
    start, end = _markers(text, name)
    inner = text.split(start, 1)[1].split(end, 1)[0]
    return inner[1:-1] if inner.startswith("\n") and inner.endswith("\n") else inner.strip("\n")


def main(argv=None) -> None:
    """``python -m mmicl.proofs.claims.testbed docs``: print the designs' Markdown; with ``--docs
    FILE``, rewrite the design and results blocks of FILE (results from ``--results DIR``)."""
    import argparse


    ap = argparse.ArgumentParser(prog="python -m mmicl.proofs.claims.testbed docs")
    ap.add_argument("--docs", help="rewrite the design and results blocks of this Markdown file (docs/testbed.md)")
    ap.add_argument("--results", nargs="+", default=list(RESULT_ROOTS),
                    help="the folders of the committed verdict runs (<claim>_v<version>/) that --docs reads")
    a = ap.parse_args(argv)
    if not a.docs:
        print(design_markdown())
        return
    doc = Path(a.docs)
    text = replace_block(doc.read_text(encoding="utf-8"), "design", design_markdown())
    text = replace_block(text, "results", results_markdown(a.results))
    text = replace_block(text, "holm", holm_markdown(a.results))
    write_text(doc, replace_block(text, "reported", reported_markdown(a.results)))
    print(f"rewrote the design, results, holm and reported blocks of {doc}")

