"""What the figures of ``mmicl limits``, thm4.1 and appF draw (the functions that compute it), and
that they carry their captions."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mmicl.numerics import asymptotics as asy
from mmicl.numerics.laws.language import parse_law
from mmicl.report import figure_caption, png_text


def _limits_res(law, Ts=(100, 1000, 10_000)):
    """The parts of ``mmicl limits --model one``'s JSON that the figure reads."""
    from mmicl.numerics import untied

    alpha = asy.check_alpha(law, list(Ts))
    excess = asy.check_excess(law, [10, *Ts], alphas={r["T"]: r["alpha_T"] for r in alpha["rows"]})
    return {"law": law.spec(), "rows": alpha["rows"], "excess_rows": excess["rows"],
            "excess_decay_per_layer": untied.predicted_rates(law)}


@pytest.mark.parametrize("text, form", [("s=uniform(0.5,4)", "c/T"), ("s=beta(2,1,0.5,4)", "(a log T + c)/T")])
def test_the_limits_figure_draws_T_times_the_gap_with_the_derived_line(text, form):
    from mmicl.numerics.lca import alpha_T
    from mmicl.proofs.figures import limits_series

    law = parse_law(text)
    ex = asy.alpha_expansion(law)
    assert ex.form == form
    res = _limits_res(law)
    s = limits_series(res, ex)
    # the points: T·(α* − α_T) with α_T computed, not |α* − α_T|
    for T, y in zip(s["T"], s["T_gap"]):
        assert y == pytest.approx(T * (ex.alpha_star - alpha_T(law, int(T))), rel=1e-9)
    # the derived leading line: a·log T + c (a = 0 for c/T), a straight line in log T
    assert s["leading"] == pytest.approx(ex.log_coefficient * np.log(s["grid"]) + ex.coefficient)
    assert (ex.log_coefficient == 0) == (form == "c/T")
    assert s["expansion"][-1] == pytest.approx(s["grid"][-1] * ex.gap(int(s["grid"][-1])), rel=1e-9)
    # the computed points approach the derived line
    assert abs(s["T_gap"][-1] - (ex.log_coefficient * math.log(s["T"][-1]) + ex.coefficient)) < 0.01 * abs(s["T_gap"][-1])
    assert ("a·log T + c" in s["labels"]["leading"]) == (form != "c/T")
    # each level is labelled as what it is drawn at: log₁₀ of the rate, not the rate
    (level, label), *_ = s["levels"]
    rho2 = res["excess_decay_per_layer"]["tied"]
    assert level == math.log10(rho2) and label.startswith(f"log₁₀ ρ² = {math.log10(rho2):.4g}")


def test_the_limits_figure_carries_its_caption(tmp_path):
    from mmicl.proofs.figures import limits_one

    law = parse_law("s=uniform(0.5,4)")
    path = limits_one(tmp_path / "limits_one.png", _limits_res(law), asy.alpha_expansion(law), title=law.spec())
    caption = figure_caption(path)
    assert "T·(α* − α_T) against the depth T" in caption and law.spec() in caption and "c/T" in caption


def _captured_figure(monkeypatch, module):
    """Replace ``module.save_figure`` by one that keeps the Figure (and still writes the file)."""
    from mmicl.numerics.atomic import save_figure

    seen = {}

    def keep(fig, path, **kw):
        seen["fig"], seen["kw"] = fig, kw
        return save_figure(fig, path, **kw)

    monkeypatch.setattr(module, "save_figure", keep)
    return seen


def test_thm41_draws_an_empty_left_panel_as_a_note(tmp_path, monkeypatch):
    from mmicl.proofs.claims import lsa

    seen = _captured_figure(monkeypatch, lsa)
    path = lsa._figure([parse_law("sv=point(1); sr=point(2); d1=1; d2=1")], tmp_path)
    left, right = seen["fig"].axes[:2]
    assert not left.axison and not left.lines  # no axes: a note
    note = " ".join(t.get_text() for t in left.texts)
    assert "not drawn" in note and "‖v‖², ‖r‖²" in note
    assert right.axison and right.lines
    assert "per-modality" in figure_caption(path) or "not drawn" in figure_caption(path)
    # a law with one s draws the panel as before
    lsa._figure([parse_law("s=uniform(0.5,4)")], tmp_path)
    left = seen["fig"].axes[0]
    assert left.axison and left.lines and not left.texts
    assert "excess risk of the best single LSA layer" in figure_caption(path)


@pytest.mark.train
def test_appF_writes_its_figure_with_a_caption(tmp_path):
    """A quick appF run (about 2 s) writes figures/appF_noskip.png next to montecarlo/appF.json; the
    figure draws the JSON's rows with the checks' band and the values they are compared with."""
    import json

    import mmicl
    from mmicl.proofs.claims.montecarlo import Z, appF_series
    from mmicl.proofs.verify import registered
    from mmicl.report import render_html

    import torch

    config = mmicl.RunConfig.sized("quick", out=tmp_path)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `mmicl verify` trains (cli._one_torch_thread)
    try:
        result = registered()["appF"].run(config)
    finally:
        torch.set_num_threads(threads)
    assert result.verdict != "error", result.error
    assert [str(f) for f in result.figures] == [str(config.figures / "appF_noskip.png")]
    path = config.figures / "appF_noskip.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    caption = png_text(path.read_bytes())["Description"]
    assert caption.startswith("Appendix F, no-skip ablation") and "−E[ζ²]/n" in caption
    doc = json.loads((tmp_path / "montecarlo" / "appF.json").read_text())
    s = appF_series(doc["rows"], doc["baselines"], 1.0, doc["n"])
    assert list(s["T"]) == [r["T"] for r in doc["rows"]]
    assert list(s["difference_band"]) == pytest.approx([Z * r["minus_label_mean_se"] for r in doc["rows"]])
    assert s["bias"] == -1.0 / doc["n"] and s["sample_mean_risk"] == 1.0 + 1.0 / doc["n"]
    page = render_html([result], config)
    assert "Figure 1.</b> Appendix F, no-skip ablation" in page
