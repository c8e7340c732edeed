"""The reports of ``verify`` (HTML and Markdown) on small fake results, and the figure modules'
promise to leave matplotlib's global state alone."""
from __future__ import annotations

import ast
import base64
import math
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from mmicl.proofs.claim import Check, ClaimResult, Hypothesis, RunConfig
from mmicl.report import render_html, render_report

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_SOURCES = sorted(p for folder in ("mmicl", "theory", "numerics", "proofs") for p in (ROOT / folder).rglob("*.py"))

# a 1×1 PNG (raw bytes: no matplotlib needed to make it)
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


# ---------------------------------------------------------------------------------------------
# fake results
# ---------------------------------------------------------------------------------------------


@pytest.fixture()
def results(tmp_path):
    figs = tmp_path / "figures"
    figs.mkdir()
    (figs / "a_plot.png").write_bytes(PNG)
    (figs / "b_plot.png").write_bytes(PNG[:-4] + b"\x00\x00\x00\x01")  # other bytes: the test can tell them apart
    long_list = [i / 7 for i in range(500)]
    numbers = {
        "none": None, "nan": float("nan"), "inf": float("inf"), "minus_inf": float("-inf"),
        "pi": math.pi, "count": 42, "flag": True, "text": "a < b & c",
        "long": long_list,
        "nested": {"inner": {"deep": [1.0, None, float("nan")], "empty": {}}, "list": []},
        "rows": [{"T": 1, "alpha": 0.27}, {"T": 10, "alpha": 0.3, "extra": "only here"}],
        "mixed": [1, [2, 3], {"k": "v"}],
    }
    r1 = ClaimResult(
        id="thm6.2", verdict="holds", statement="α_T → α* as T → ∞",
        hypotheses=[Hypothesis("s is bounded", True, "s ∈ [0.5, 4]"), Hypothesis("ζ independent of m", True)],
        checks=[
            Check("closed form = matrix recurrence", "symbolic", True, numbers, "1e-9 relative: float64 rounding",
                  "detail with <script>alert(1)</script> inside"),
            Check("flow limit = root", "ode", None, {"x": 1.5}, "", ""),
        ],
        summary={"alpha_star": 0.307692307692, "basin": "21/25", "nan": float("nan")},
        figures=[str(figs / "a_plot.png"), str(figs / "b_plot.png")], seconds=1.234)
    r2 = ClaimResult(
        id="testbed.claim1", verdict="fails", statement="ICL emerges & fades",
        hypotheses=[], checks=[Check("ICL rises", "empirical", False, {}, "t-interval", "")],
        summary={}, figures=[], seconds=0.5)
    r3 = ClaimResult(
        id="thm4.1", verdict="hypothesis-not-met", statement="LSA is not Bayes-optimal",
        hypotheses=[Hypothesis("s bounded under s=exponential(1)", False, "s_hi = inf")], checks=[],
        summary={}, figures=[str(figs / "missing.png")], seconds=0.0)
    return [r1, r2, r3], RunConfig(quick=True, out=tmp_path, seed=7, device="cpu", law="s=uniform(0.5,4)")


class _Structure(HTMLParser):
    """Checks that structural elements open and close in order; collects img src and href values."""

    STRUCTURAL = frozenset({"html", "head", "body", "header", "main", "section", "table", "thead", "tbody", "tr", "th", "td",
                  "ul", "ol", "li", "figure", "figcaption", "h1", "h2", "h3", "p", "dl", "dt", "dd", "div", "span",
                  "a", "b", "style", "title", "details", "summary", "pre"})
    VOID = frozenset({"meta", "img", "br", "hr", "link"})

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.srcs: list[str] = []
        self.hrefs: list[str] = []
        self.ids: list[str] = []
        self.text: list[str] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.append(a["id"])
        if tag == "img":
            self.srcs.append(a.get("src", ""))
        if "href" in a:
            self.hrefs.append(a["href"])
        if tag in self.VOID:
            return
        if tag not in self.STRUCTURAL:
            self.errors.append(f"unexpected tag <{tag}>")
        self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID and self.stack and self.stack[-1] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag in self.VOID:
            self.errors.append(f"end tag of void <{tag}>")
        elif not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def _parse(page: str) -> _Structure:
    p = _Structure()
    p.feed(page)
    p.close()
    return p


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


def test_html_is_well_formed(results):
    page = render_html(*results)
    assert page.startswith("<!DOCTYPE html>")
    p = _parse(page)
    assert p.errors == []
    assert p.stack == []
    assert len(p.ids) == len(set(p.ids))


def test_html_holds_every_claim_verdict_and_check(results):
    res, config = results
    page = render_html(res, config)
    p = _parse(page)
    text = " ".join(p.text)
    for r in res:
        assert r.id in text
        assert r.verdict in text
        for c in r.checks:
            assert c.name in text
    from mmicl.numerics.provenance import __version__

    for item in (__version__, "quick", "seed", "7", "cpu", "s=uniform(0.5,4)"):
        assert item in text
    # the verdict table links to every claim's section
    for href in p.hrefs:
        if href != "#top":
            assert href.startswith("#") and href[1:] in p.ids
    assert len([h for h in p.hrefs if h not in ("#top", "#conventions")]) == len(res)


def test_html_inlines_every_figure_as_base64_png(results):
    res, config = results
    p = _parse(render_html(res, config))
    pngs = [s for s in p.srcs if s.startswith("data:image/png;base64,")]
    assert len(pngs) == len(p.srcs) == 2  # the missing file is reported, not linked
    found = [Path(f) for r in res for f in r.figures if Path(f).exists()]
    assert [base64.b64decode(s.split(",", 1)[1]) for s in pngs] == [f.read_bytes() for f in found]
    text = " ".join(p.text)
    assert "missing.png" in text and "could not be read" in text


def test_html_has_no_external_resource_or_script(results):
    page = render_html(*results)
    p = _parse(page)
    assert not any(re.match(r"\s*(https?:)?//", u) for u in p.srcs + p.hrefs)
    assert "<script" not in page and "<link" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", page)
    assert "url(" not in page  # no CSS import or remote font either


def test_html_escapes_text(results):
    page = render_html(*results)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "a &lt; b &amp; c" in page
    assert "ICL emerges &amp; fades" in page


def test_html_numbers_are_tables_with_readable_values(results):
    page = render_html(*results)
    p = _parse(page)
    text = " ".join(p.text)
    for word in ("None", "NaN", "inf", "−inf", "3.14159", "42"):
        assert word in text
    assert "3.141592653" not in text  # 6 significant digits
    assert "(500 items)" in text and "490 more" in text  # the long list, truncated with a count
    assert "0.142857" in text and "71.2857" in text  # the head and the tail of it
    assert "deep" in text and "(empty)" in text  # nested dicts
    assert "only here" in text  # a list of records as a table
    assert "null" not in text and '"none":' not in page  # not a JSON blob
    assert p.tags.count("table") >= 5  # verdicts, each check's, numbers, nested, records


def test_html_never_crashes_on_odd_values(tmp_path):
    import numpy as np

    class Odd:
        def __repr__(self):
            return "<Odd>"

    deep: dict = {}
    cur = deep
    for _ in range(20):
        cur["next"] = {}
        cur = cur["next"]
    numbers = {"array": np.arange(30.0), "np_float": np.float64("nan"), "np_int": np.int64(3), "np_bool": np.bool_(True),
               "odd": Odd(), "deep": deep, "tuple": (1, 2), "set": {3, 1}, "bytes": b"\x00<", "complex": 1 + 2j,
               "path": tmp_path, 3: "int key", "big": [[i] * 3 for i in range(100)]}
    r = ClaimResult("x", "inconclusive", "s", [], [Check("odd", "m", None, numbers)], {"arr": np.ones(3)}, [], 0.0)
    page = render_html([r], RunConfig(out=tmp_path))
    p = _parse(page)
    assert p.errors == [] and p.stack == []
    assert "&lt;Odd&gt;" in page and "<Odd>" not in page


def test_html_with_no_results(tmp_path):
    p = _parse(render_html([], RunConfig(out=tmp_path)))
    assert p.errors == [] and p.stack == []


def _details(page: str) -> list[tuple[str, bool, str]]:
    """``(class, open, summary text)`` of every ``<details>`` in the page, in order."""
    out = []
    for m in re.finditer(r'<details class="([^"]*)"[^>]*?( open)?>\s*<summary>(.*?)</summary>', page, re.S):
        out.append((m.group(1), bool(m.group(2)), re.sub(r"<[^>]+>", "", m.group(3))))
    return out


def test_html_has_a_collapsible_section_per_claim_and_per_check(results):
    res, config = results
    page = render_html(res, config)
    found = _details(page)
    claims = [d for d in found if d[0] == "claim"]
    checks = [d for d in found if d[0].startswith("check")]
    assert [c[2].split()[0] for c in claims] == [r.id for r in res]
    for (_, opened, line), r in zip(claims, res):
        assert r.verdict in line  # the summary line shows the verdict
        assert opened == (r.verdict != "holds")  # what does not hold starts open
    assert len(checks) == sum(len(r.checks) for r in res)
    # pass: closed; undecided and FAIL: open, and the summary line says which
    assert [(opened, line.split()[1]) for _, opened, line in checks] == [(False, "pass"), (True, "undecided"),
                                                                          (True, "FAIL")]
    # each claim's id is the anchor the verdict table links to
    p = _parse(page)
    assert all(f"claim-{r.id}".replace(".", "-") in p.ids for r in res)


def test_html_groups_the_hypotheses_by_law(tmp_path):
    from mmicl.report import hypothesis_groups

    tagged = [Hypothesis(f"[{law}] {text}", met) for law, met in (("s=uniform(0.5,4)", True), ("s=point(2)", False))
              for text in ("s bounded", "E[ζ²] > 0")]
    groups = hypothesis_groups(tagged)
    assert [(law, [h.text for h in hs]) for law, hs in groups] == [
        ("s=uniform(0.5,4)", ["s bounded", "E[ζ²] > 0"]), ("s=point(2)", ["s bounded", "E[ζ²] > 0"])]
    # the same texts again, untagged (thm6.2): a text seen before starts the next law, named from a detail
    repeated = [Hypothesis("s bounded", True, f"s ∈ [0, 1] for {law}") for law in
                ("s=uniform(0,1); zeta=normal; d1=1; d2=1", "s=point(1); zeta=normal; d1=2; d2=3")]
    repeated = [repeated[0], Hypothesis("signal", True), repeated[1], Hypothesis("signal", True)]
    assert [(law, len(hs)) for law, hs in hypothesis_groups(repeated)] == [
        ("s=uniform(0,1); zeta=normal; d1=1; d2=1", 2), ("s=point(1); zeta=normal; d1=2; d2=3", 2)]
    assert hypothesis_groups(repeated[:2]) == [(None, repeated[:2])]  # one law: one flat list
    r = ClaimResult("thm4.1", "hypothesis-not-met", "s", tagged, [], {}, [], 0.0)
    page = render_html([r], RunConfig(out=tmp_path))
    groups = [d for d in _details(page) if d[0] == "group"]
    assert [(opened, line) for _, opened, line in groups] == [(False, "on s=uniform(0.5,4) (2 of 2 met)"),
                                                              (True, "on s=point(2) (0 of 2 met)")]
    assert page.count("[s=point(2)]") == 0  # the tag is the group's name, not repeated on each line


def test_html_header_shows_the_wall_time_and_the_claims_sum_labelled(results):
    from mmicl.results_folder import RunState

    res, config = results
    run = RunState(state="complete", planned=[r.id for r in res], pid=1, started=0.0, wall_seconds=12.34)
    p = _parse(render_html(res, config, run))
    header = " ".join(p.text)
    assert "wall time 12.3 s" in " ".join(header.split())
    assert f"claims' time (sum) {sum(r.seconds for r in res):.1f} s" in " ".join(header.split())
    assert "seconds 1.7" not in header  # the old unlabelled sum
    text = " ".join(_parse(render_html(res, config)).text)  # without a run: the sum only, under its name
    assert "wall time" not in text and "claims' time (sum)" in text


def test_html_figure_captions_say_what_the_figure_shows(tmp_path):
    """A caption is the figure's own (its PNG text), else the built-in one for its file name, else a
    sentence; never the file's path.  Each links to the conventions section in the page."""
    from matplotlib.figure import Figure

    from mmicl.numerics.atomic import save_figure
    from mmicl.report import figure_caption, png_text

    figs = tmp_path / "figures"
    fig = Figure(figsize=(1, 1))
    fig.subplots().plot([0, 1])
    own = save_figure(fig, figs / "mine.png", metadata={"Description": "T·(α* − α_T) against log T <here>"})
    assert png_text(own.read_bytes())["Description"] == "T·(α* − α_T) against log T <here>"
    (figs / "thm6.3_plane_T5.png").write_bytes(PNG)
    (figs / "plugin_plot.png").write_bytes(PNG)
    assert "T = 5" in figure_caption(figs / "thm6.3_plane_T5.png")
    assert figure_caption(figs / "plugin_plot.png") == "plugin plot (the claim gave this figure no caption)"
    assert png_text(b"not a png") == {} and png_text(PNG[:20]) == {}
    r = ClaimResult("x", "holds", "s", [], [], {}, [str(figs / n) for n in ("mine.png", "thm6.3_plane_T5.png")], 0.0)
    page = render_html([r], RunConfig(out=tmp_path))
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)
    assert len(captions) == 2
    assert "Figure 1." in captions[0] and "T·(α* − α_T) against log T &lt;here&gt;" in captions[0]
    assert all("figures/" not in c and ".png" not in c for c in captions)
    assert all('<a href="#conventions">' in c for c in captions)
    p = _parse(page)
    assert "conventions" in p.ids and "docs/model.md#conventions" in " ".join(p.text)


def test_the_reports_conventions_are_the_documented_ones():
    """Each convention the report lists is one docs/model.md's Conventions section states."""
    from mmicl.report import CONVENTIONS

    doc = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    section = doc[doc.index("## Conventions"):doc.index("## The claims the verifier checks")]
    for phrase in ("s = ‖m‖²", "ess inf of s over the prompts with m ≠ 0", "E[(ŷ − y_q)²], with no ½", "F⁰",
                   "ȳ = (1/n) Σ y_i", "n → ∞, then training time → ∞, then T → ∞", "raw keys, evolved query, W^R = I"):
        assert phrase in section, phrase
    assert len(CONVENTIONS) == 7


def test_html_escapes_text_in_every_new_place(tmp_path):
    """Summary lines, hypothesis groups and captions escape their text like the rest of the page."""
    evil = "<b>x</b> & [bold]"
    r = ClaimResult(evil, evil, evil, [Hypothesis(f"[{evil}] {evil}", True, evil)],
                    [Check(evil, evil, False, {evil: evil}, evil, evil)], {evil: evil}, [], 0.0)
    page = render_html([r], RunConfig(out=tmp_path))
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt; &amp; [bold]" in page
    p = _parse(page)
    assert p.errors == [] and p.stack == []


def test_markdown_report_still_renders(results):
    md = render_report(*results)
    assert md.startswith("# mmicl verification report")
    for r in results[0]:
        assert f"## {r.id}: {r.verdict}" in md


def _numpy_result():
    import numpy as np

    numbers = {"decidable": np.bool_(False), "flag": True, "z": np.float64(1.25), "k": np.int64(3),
               "v": np.array([True, False]), "nan": float("nan")}
    checks = [Check("gap > 0", "quadrature", True, numbers),
              Check("stationary point", "monte-carlo", None, {"decidable": np.bool_(False)}, role="corroborating")]
    return ClaimResult("thm4.1", "holds", "gap > 0", [Hypothesis("s bounded", True)], checks,
                       {"ok": np.bool_(True), "plain": False, "gap": np.float64(0.0092)}, [], 1.0,
                       verdict_reason="every decisive check passed (1) (corroborating, undecided, changing "
                                      "nothing: stationary point)")


def test_markdown_writes_booleans_as_true_and_false_not_numpy_text(tmp_path):
    md = render_report([_numpy_result()], RunConfig(out=tmp_path))
    assert "True" not in md and "False" not in md  # neither numpy's nor Python's spelling
    assert '"decidable": false' in md and '"flag": true' in md and '"v": [true, false]' in md
    assert "ok = true" in md and "plain = false" in md  # the summary row
    assert '"k": 3' in md and '"z": 1.25' in md
    assert '"nan": null' in md and "nan_null_reason" in md  # as the JSON files write it, no bare NaN
    assert "NaN" not in md


def test_reports_give_each_checks_role_and_the_verdict_reason(tmp_path):
    r = _numpy_result()
    md = render_report([r], RunConfig(out=tmp_path))
    assert "[quadrature; decisive]: pass" in md and "[monte-carlo; corroborating]: undecided" in md
    assert f"Why: {r.verdict_reason}" in md
    page = render_html([r], RunConfig(out=tmp_path))
    p = _parse(page)
    assert p.errors == [] and p.stack == []
    text = " ".join(p.text)
    assert "decisive" in text and "corroborating" in text and "changing nothing: stationary point" in text
    assert "false" in text and "True" not in text and "False" not in text  # booleans spelled as in report.md


def test_markdown_report_never_stops_on_an_odd_value(tmp_path):
    class Odd:
        def __repr__(self):
            return "<Odd>"

    r = ClaimResult("x", "inconclusive", "s", [], [Check("odd", "m", None, {"odd": Odd(), "c": 1 + 2j})], {}, [], 0.0)
    md = render_report([r], RunConfig(out=tmp_path))
    assert "<Odd>" in md


# ---------------------------------------------------------------------------------------------
# rich markup in terminal output: text with [...] is printed as it is
# ---------------------------------------------------------------------------------------------

MARKUP = "[bold]not bold[/bold] on [0,1] and [s=uniform(0.5,4)]"


def test_flow2_prints_bracketed_text_literally(monkeypatch):
    from click.testing import CliRunner

    from mmicl.numerics import flows, lca
    from mmicl.cli import main

    class End:
        alpha, beta, gamma, converged, t_end, reason = 0.25, -0.25, 0.0, False, 1.0, MARKUP

    def no_minimiser(law, T):
        raise ValueError(MARKUP)

    monkeypatch.setattr(flows, "gradient_flow_two", lambda *a, **k: End())
    monkeypatch.setattr(lca, "minimise_two", no_minimiser)
    r = CliRunner().invoke(main, ["flow2", "--law", "s=uniform(0.5,4)", "--T", "2"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    flat = " ".join(r.output.split())
    assert flat.count(MARKUP) == 2, r.output  # the flow's reason and the minimiser's


def test_alpha_table_title_prints_bracketed_text_literally(monkeypatch):
    from click.testing import CliRunner

    from mmicl.numerics.laws.task import TaskLaw
    from mmicl.cli import main

    monkeypatch.setattr(TaskLaw, "spec", lambda self: MARKUP)  # the law's text, as the title shows it
    r = CliRunner().invoke(main, ["alpha", "--law", "s=uniform(0.5,4)", "--T", "1"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert MARKUP.replace(" ", "") in "".join(r.output.split()), r.output


# ---------------------------------------------------------------------------------------------
# matplotlib's global state
# ---------------------------------------------------------------------------------------------


def _global_matplotlib_uses(source: str) -> list[str]:
    """``"line: what"`` for each ``matplotlib.use(...)`` call and each import of pyplot (or pylab)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names
                      if a.name in ("matplotlib.pyplot", "pylab", "matplotlib.pylab")]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module in ("matplotlib.pyplot", "pylab", "matplotlib.pylab") or (
                    node.module == "matplotlib" and any(a.name in ("pyplot", "pylab") for a in node.names)):
                found.append(f"{node.lineno}: from {node.module} import …")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "use":
            base = node.func.value
            if isinstance(base, ast.Name) and base.id in ("matplotlib", "mpl"):
                found.append(f"{node.lineno}: {base.id}.use(…)")
    return found


def test_package_sources_are_found():
    assert len(PACKAGE_SOURCES) > 30
    assert ROOT / "proofs" / "figures.py" in PACKAGE_SOURCES


@pytest.mark.parametrize("path", PACKAGE_SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_touches_matplotlibs_global_state(path):
    assert _global_matplotlib_uses(path.read_text(encoding="utf-8")) == []


def test_the_detector_sees_each_form():
    source = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
              "from matplotlib import pyplot\nfrom matplotlib.pyplot import subplots\nimport matplotlib as mpl\n"
              "mpl.use('Agg')\nfrom matplotlib.figure import Figure\n")
    assert sorted(int(f.split(":")[0]) for f in _global_matplotlib_uses(source)) == [2, 3, 4, 5, 7]


@pytest.mark.subprocess
def test_importing_and_plotting_keeps_the_backend(tmp_path):
    """In a fresh interpreter whose backend is not Agg: importing the figure modules and making a
    figure leaves ``matplotlib.get_backend()`` as it was, and pyplot unimported."""
    code = f"""
import sys, matplotlib
matplotlib.use("svg")
before = matplotlib.get_backend()
import mmicl.proofs.figures as F, mmicl.numerics.mc_figures, mmicl.numerics.testbed.figures
import numpy as np
from pathlib import Path
F.alpha_sweep(Path({str(tmp_path)!r}) / "s.png", {{"s=point(2)": {{"T": [1, 10], "alpha": [0.3, 0.3],
             "alpha_star": 0.3, "log10_excess": [float("-inf"), float("-inf")]}}}})
assert matplotlib.get_backend() == before, (before, matplotlib.get_backend())
assert "matplotlib.pyplot" not in sys.modules
print("ok", before)
"""
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("ok svg")
    assert (tmp_path / "s.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.subprocess
def test_importing_the_figure_module_does_not_import_matplotlib():
    code = "import sys, mmicl.proofs.figures, mmicl.numerics.testbed.figures; print('matplotlib' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_report_of_plugin_claims_only_leaves_out_the_lca_conventions(tmp_path):
    """The conventions section (the LCA notation) comes with the built-in claims, not with a plugin's."""
    from mmicl.proofs.claim import ClaimResult, RunConfig
    from mmicl.report import render_html

    config = RunConfig(out=tmp_path)
    mine = ClaimResult(id="mine.a", verdict="holds", statement="s", hypotheses=[], checks=[], origin="plugin file x.py")
    builtin = ClaimResult(id="thm4.1", verdict="holds", statement="s", hypotheses=[], checks=[])
    assert 'id="conventions"' not in render_html([mine], config)
    assert 'id="conventions"' in render_html([mine, builtin], config)
