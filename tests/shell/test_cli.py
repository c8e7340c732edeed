"""The command-line contract: JSON keys, exit statuses, files written."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from mmicl.cli import main
from mmicl.proofs.claim import Check, Claim, Hypothesis, VERDICTS
from mmicl.proofs.registry import REGISTRY, register


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_alpha_json_contract():
    r = run("alpha", "--law", "s=uniform(0.5,4)", "--T", "1", "10", "--json")
    assert r.exit_code == 0
    out = json.loads(r.output)
    assert set(out) >= {"alpha_star", "rows"}
    assert [row["T"] for row in out["rows"]] == [1, 10]
    assert set(out["rows"][0]) >= {"T", "alpha", "excess", "flow_alpha"}


def test_flow2_json_contract():
    r = run("flow2", "--law", "s=uniform(0.5,4)", "--T", "3", "--json")
    assert r.exit_code == 0
    assert set(json.loads(r.output)) >= {"alpha", "beta", "converged", "t_end"}


@pytest.mark.parametrize("args", [
    ("alpha", "--law", "s=uniform(0.5,"),
    ("alpha", "--law", "s=exponential(1)"),
    ("alpha", "--law", "s=uniform(1,2)", "--T", "0"),
    ("flow2", "--law", "s=uniform(1,2)", "--T", "3", "--alpha0", "nan"),
])
def test_bad_input_is_a_usage_error(args):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 2 and "Error" in r.output


@pytest.fixture
def failing_claim():
    claim = register(Claim("test.fails", "a claim that fails", "1 = 2",
                           lambda cfg: ([Hypothesis("none", True)], [Check("1 = 2", "arithmetic", False)], {}, []),
                           default=False))
    yield claim
    del REGISTRY[claim.id]


def test_verify_exits_1_when_a_claim_fails_and_writes_its_files(failing_claim, tmp_path):
    r = CliRunner().invoke(main, ["verify", "--quick", "--claim", "test.fails", "--out", str(tmp_path)])
    assert r.exit_code == 1
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())
    (entry,) = verdicts["claims"]
    assert entry["id"] == "test.fails" and entry["verdict"] == "fails" and entry["verdict"] in VERDICTS
    assert "checks" in entry["evidence"]
    assert "test.fails" in (tmp_path / "report.md").read_text()


def test_unknown_claim_is_a_usage_error(tmp_path):
    r = CliRunner().invoke(main, ["verify", "--claim", "nope", "--out", str(tmp_path)])
    assert r.exit_code == 2 and "no claim matches" in r.output


@pytest.fixture
def claim_with_figure():
    """A claim that draws one figure into OUT/figures, as the real claims do."""
    def evaluate(cfg):
        path = cfg.figures / "test_plot.png"
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
        return [Hypothesis("none", True)], [Check("1 = 1", "arithmetic", True)], {}, [path]

    claim = register(Claim("test.figure", "a claim with a figure", "1 = 1", evaluate, default=False))
    yield claim
    del REGISTRY[claim.id]


@pytest.mark.parametrize("relative_out", [True, False])
def test_a_results_folder_can_be_moved(claim_with_figure, tmp_path, monkeypatch, relative_out):
    """Figure paths in verdicts.json and the links of report.md are relative to OUT, and report.html
    carries its figures inline: after moving the folder every path still resolves."""
    import re
    import shutil

    monkeypatch.chdir(tmp_path)
    out = "results" if relative_out else str(tmp_path / "results")
    r = CliRunner().invoke(main, ["verify", "--claim", "test.figure", "--out", out])
    assert r.exit_code == 0, r.output
    moved = tmp_path / "elsewhere" / "moved"
    moved.parent.mkdir()
    shutil.move(str(tmp_path / "results"), str(moved))
    monkeypatch.chdir(moved.parent)  # and read it from another working folder
    (entry,) = json.loads((moved / "verdicts.json").read_text())["claims"]
    figures = entry["evidence"]["figures"]
    assert figures == ["figures/test_plot.png"]
    assert all((moved / f).is_file() for f in figures)
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", (moved / "report.md").read_text())
    assert links == ["figures/test_plot.png"] and all((moved / link).is_file() for link in links)
    html = (moved / "report.html").read_text()
    assert "data:image/png;base64," in html and str(tmp_path) not in html


def test_verify_writes_figure_paths_that_do_not_name_the_working_folder(claim_with_figure, tmp_path):
    r = CliRunner().invoke(main, ["verify", "--claim", "test.figure", "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "a" / "verdicts.json").read_text()
    assert str(tmp_path) not in text
