"""Rich markup in computed text is printed as written by ``mmicl verify`` (issue 18)."""
from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from rich.console import Console

from mmicl.proofs.cli import add_result, main, verdict_table
from mmicl.proofs.registry import REGISTRY, Check, Claim, ClaimResult, Hypothesis, register

MARKUP = "[bold]"
INTERVAL = "[0,1]"


def _render(table) -> str:
    buf = io.StringIO()
    Console(file=buf, width=240, color_system=None).print(table)
    return buf.getvalue()


def test_the_verdict_table_prints_brackets_literally():
    res = ClaimResult("test[x].markup", "inconclusive [red]", "1 = 1", [], [],
                      summary={"note": f"{MARKUP}loud{INTERVAL}", "range": INTERVAL, "x": 0.5}, seconds=0.25)
    table = verdict_table(f"mmicl verify on s=[odd] {MARKUP}")
    add_result(table, res)
    out = _render(table)
    for text in (f"note={MARKUP}loud{INTERVAL}", f"range={INTERVAL}", "test[x].markup", "inconclusive [red]",
                 f"s=[odd] {MARKUP}"):
        assert text in out, (text, out)


@pytest.fixture
def bracket_claim():
    def evaluate(cfg):
        return ([Hypothesis("none", True)], [Check(f"{MARKUP} on {INTERVAL}", "arithmetic", True)],
                {"where": f"s in {INTERVAL}", "why": f"{MARKUP}reason"}, [])

    claim = register(Claim("test.markup", f"a claim about {INTERVAL} and {MARKUP}", "1 = 1", evaluate,
                           default=False))
    yield claim
    del REGISTRY[claim.id]


def test_verify_prints_a_claims_brackets_literally(bracket_claim, tmp_path):
    out_dir = tmp_path / "res[1]"
    r = CliRunner().invoke(main, ["verify", "--quick", "--claim", "test.markup", "--out", str(out_dir)],
                           env={"COLUMNS": "240"})
    assert r.exit_code == 0, r.output
    for text in (f"a claim about {INTERVAL} and {MARKUP}", f"where=s in {INTERVAL}", f"why={MARKUP}reason",
                 f"{out_dir / 'verdicts.json'}"):
        assert text in r.output, (text, r.output)
