"""The page "Writing your own claim" (docs/own_claims.md) runs as written: its code blocks, in
order, in a fresh folder.

A ``python`` block whose first line is ``# NAME.py`` is that file's content and is written there;
any other ``python`` block runs (in one namespace shared by the page's blocks); each line of a
``bash`` block runs as a command and must exit 0; ``toml`` and ``text`` blocks are shown, not run.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest


PAGE = Path(__file__).resolve().parents[2] / "docs" / "own_claims.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


@pytest.mark.subprocess
def test_the_page_runs_as_written(tmp_path, monkeypatch, clean_registry):
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert [lang for lang, _ in blocks].count("python") >= 4 and any(lang == "bash" for lang, _ in blocks)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exe = Path(sys.executable).with_name("mmicl")
    for lang, code in blocks:
        first = code.splitlines()[0]
        if lang == "python" and re.fullmatch(r"# [\w.]+\.py", first):
            (tmp_path / first[2:]).write_text(code, encoding="utf-8")
        elif lang == "python":
            exec(compile("import mmicl\n" + code, str(PAGE), "exec"), namespace)
        elif lang == "bash":
            for line in filter(None, map(str.strip, code.splitlines())):
                args = shlex.split(line)
                assert args[0] == "mmicl", line
                cmd = [str(exe) if exe.exists() else sys.executable, *([] if exe.exists() else ["-m", "mmicl.cli"]),
                       *args[1:]]
                p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
                assert p.returncode == 0, f"{line}: {p.stderr[-1000:]}"
        else:
            assert lang in ("toml", "text"), lang
    # what the command line wrote agrees with what the page says
    import json

    doc = json.loads((tmp_path / "results" / "verdicts.json").read_text())
    (entry,) = [c for c in doc["claims"] if c["id"] == "mine.alpha_star_closed_form"]
    assert entry["verdict"] == "holds" and entry["origin"] == "plugin file my_claims.py"
