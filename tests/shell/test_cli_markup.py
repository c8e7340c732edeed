"""Rich markup in computed text is printed as written by ``mmicl verify`` (issue 18)."""
from __future__ import annotations

import io

import pytest
from click.testing import CliRunner
from rich.console import Console

from mmicl.cli import add_result, main, verdict_table
from mmicl.proofs.claim import Check, Claim, ClaimResult, Hypothesis
from mmicl.proofs.registry import REGISTRY, register

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


def test_the_verdict_table_keeps_key_numbers_compact():
    """A matrix is its shape and extreme values, numbers have 4 significant digits, and a value that
    repeats the run's law (shown in the title) is left out; verdicts.json keeps the full values."""
    gamma = [[0.0] * 5 for _ in range(5)]
    for i in range(5):
        gamma[i][i] = 0.18925714285714262 if i < 2 else 0.23923809523809514
    law = "sv=uniform(0.5,4); sr=uniform(0.5,2); zeta=normal; d1=2; d2=3"
    res = ClaimResult("thm4.1", "holds", "gap > 0", [], [], seconds=1.0,
                      summary={"k_se": 3.584690123456789, "law": law, "gap": 0.037622812345678, "gamma": gamma,
                               "curve": [0.1 * i for i in range(10)], "pair": [1, 2], "n": 3, "flag": True,
                               "rows": [[1, "a"], [2]], "bad": float("nan")})
    table = verdict_table(f"mmicl verify (quick, seed 0, law {law})")
    add_result(table, res, law)
    out = " ".join(_render(table).split())
    for text in ("k_se=3.585", "gap=0.03762", "gamma=5×5 matrix in [0, 0.2392]", "curve=10 values in [0, 0.9]",
                 "pair=[1, 2]", "n=3", "flag=true", "bad=nan", "rows=[[1, a], [2]]"):
        assert text in out, (text, out)
    assert "0.1892571428" not in out and "0.189257" not in out  # no long floats
    assert out.count("sv=uniform(0.5,4)") == 1  # the law once, in the title
    from mmicl.cli import _key_numbers

    assert "law=" in _key_numbers({"law": law})  # without a run's law it is shown
