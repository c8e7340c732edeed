"""The page "Property-based regression testing" (docs/property_testing.md) runs as written: its code
blocks, in order, in a fresh folder.

A ``python`` block whose first line is ``# NAME.py`` is that file's content and is written there;
any other ``python`` block runs (in one namespace shared by the page's blocks); each line of a
``bash`` block is a ``pytest`` command, run in a subprocess in that folder (mmicl's plugin loaded by
its entry point, as for a user), and must exit 0; ``text`` blocks are shown, not run, except the
baseline failure the page shows, which is reproduced: the page's baseline with one number moved.
"""
from __future__ import annotations

import pytest

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parents[2] / "docs" / "property_testing.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.M | re.S)


def _pytest(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.subprocess
def test_the_page_runs_as_written(tmp_path, monkeypatch):
    blocks = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    langs = [lang for lang, _ in blocks]
    assert langs.count("python") >= 3 and "bash" in langs
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    texts = []
    for lang, code in blocks:
        first = code.splitlines()[0]
        if lang == "python" and re.fullmatch(r"# [\w.]+\.py", first):
            (tmp_path / first[2:]).write_text(code, encoding="utf-8")
        elif lang == "python":
            exec(compile(code, f"{PAGE} (block {len(texts)}, {first[:40]!r})", "exec"), namespace)
        elif lang == "bash":
            for line in filter(None, map(str.strip, code.splitlines())):
                args = shlex.split(line)
                assert args[0] == "pytest", line
                p = _pytest(args[1:], tmp_path)
                assert p.returncode == 0, f"{line}:\n{p.stdout[-3000:]}\n{p.stderr[-2000:]}"
        else:
            assert lang == "text", lang
            texts.append(code)

    # what the page says about the first run: the baseline beside the test file, strict JSON
    baseline = tmp_path / "baselines" / "test_my_theory" / "test_thm62_baseline.json"
    doc = json.loads(baseline.read_text(encoding="utf-8"), parse_constant=lambda c: 1 / 0)
    (entry,) = doc["claims"]
    assert entry["id"] == "thm6.2" and entry["verdict"] == "holds" and "seconds" not in entry["evidence"]

    # the failure the page shows: its baseline with alpha_star moved to 0.3
    (shown,) = [t for t in texts if t.startswith("mmicl baseline ")]
    assert entry["evidence"]["summary"]["alpha_star"] == 1 / 3
    entry["evidence"]["summary"]["alpha_star"] = 0.3
    baseline.write_text(json.dumps(doc), encoding="utf-8")
    p = _pytest(["-q", "test_my_theory.py", "-k", "baseline"], tmp_path)
    assert p.returncode == 1, p.stdout[-3000:]
    for line in shown.strip().splitlines():
        assert line in p.stdout, f"{line!r} not in\n{p.stdout[-3000:]}"
