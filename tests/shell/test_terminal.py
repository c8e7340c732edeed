"""Any terminal: where stdout cannot encode mmicl's text, the commands write readable ASCII instead
of ending in a ``UnicodeEncodeError`` (mmicl/terminal.py)."""
from __future__ import annotations

import io
import textwrap
import os
import subprocess
import sys

import pytest

from mmicl.terminal import ascii_fallback, to_ascii


def test_to_ascii_keeps_ascii_and_names_the_rest():
    assert to_ascii("plain text 1.5e-3") == "plain text 1.5e-3"
    assert to_ascii("flow → α_T, β ≤ 2, s²") == "flow -> alpha_T, beta <= 2, s2"
    assert to_ascii("┏━┳┓│└") == "+-++|+"
    assert to_ascii("\u4e00").isascii()


def test_a_stream_that_cannot_encode_is_made_to_write_ascii_and_a_utf8_one_is_left_alone():
    raw = io.BytesIO()
    ascii_stream = io.TextIOWrapper(raw, encoding="ascii")
    utf8 = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    ascii_fallback([ascii_stream, utf8])
    ascii_stream.write("α_T → α*\n")
    ascii_stream.flush()
    assert raw.getvalue() == b"alpha_T -> alpha*\n" and utf8.errors == "strict"


@pytest.mark.subprocess
@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"},
                                 {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
                                  "PYTHONIOENCODING": ""}], ids=["ascii", "C-locale"])
def test_commands_on_an_ascii_terminal_print_ascii_not_a_traceback(env):
    for args in (["claims"], ["alpha", "--law", "s=uniform(0.5,4)", "--T", "3"]):
        p = subprocess.run([sys.executable, "-m", "mmicl", *args], capture_output=True, timeout=120,
                           env={**os.environ, **env})
        assert p.returncode == 0, p.stderr.decode(errors="replace")[-2000:]
        assert b"Traceback" not in p.stderr and p.stdout.isascii() and b"alpha" in p.stdout


def test_long_claim_ids_are_folded_not_cut_at_80_columns(tmp_path, clean_registry):
    """`mmicl claims` on an 80-column terminal: every id appears whole (folded onto a second line
    where it must be), never with an ellipsis."""
    from click.testing import CliRunner

    from mmicl.cli import main

    long_id = "mine.an_unusually_long_claim_identifier_that_will_not_fit_in_its_column"
    (tmp_path / "mine.py").write_text(textwrap.dedent(f"""
        import mmicl

        @mmicl.claim({long_id!r}, title="t", statement="s")
        def long(config):
            return [], [mmicl.Check("c", "x", True)]
        """))
    r = CliRunner().invoke(main, ["claims", "--plugin", str(tmp_path / "mine.py")], env={"COLUMNS": "80"})
    assert r.exit_code == 0 and "…" not in r.output
    cells = "".join(line.split("│")[1].strip() for line in r.output.splitlines() if line.count("│") >= 4)
    assert long_id in cells
