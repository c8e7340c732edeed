"""The user documentation stands alone: no tracked file points to the private working material outside the repository, and every relative link in the README
and in ``docs/*.md`` reaches a file that exists (and, for a link into a markdown file with a
``#fragment``, one of its headings)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# built by concatenation so that this file does not match itself
FORBIDDEN = ("../" + "shared", "SP" + "EC §")

LINK = re.compile(r"\[[^\]]*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def _tracked() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [p for p in out.stdout.decode().split("\0") if p]


def _user_docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    """Markdown without fenced code blocks and inline code (their brackets are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for h in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = _slug(h)
        k = seen.get(base, 0)
        seen[base] = k + 1
        out.add(base if k == 0 else f"{base}-{k}")
    return out


def test_no_tracked_file_points_to_private_material():
    bad = []
    for rel in _tracked():
        path = ROOT / rel
        if not path.is_file():  # deleted in the working tree
            continue
        data = path.read_bytes()
        bad += [f"{rel}: {s!r}" for s in FORBIDDEN if s.encode() in data]
    assert not bad, "user-facing files must not point outside the repository:\n" + "\n".join(bad)


@pytest.mark.parametrize("doc", _user_docs(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_relative_links_resolve(doc: Path):
    broken = []
    for target in LINK.findall(_prose(doc.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        file_part, _, fragment = target.partition("#")
        dest = (doc.parent / file_part).resolve() if file_part else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            broken.append(f"{target}: no heading with anchor #{fragment} in {dest.name}")
    assert not broken, f"{doc.relative_to(ROOT)}:\n" + "\n".join(broken)
