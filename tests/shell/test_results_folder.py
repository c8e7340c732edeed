"""The folder ``mmicl verify --out`` writes agrees with itself after a kill, a second run and a full
disk (mmicl/results_folder.py).

Each test makes the damage itself: SIGKILL at a random moment of a run, a second run started into
the same folder, a filesystem too small for the figures (a tmpfs, where the test may mount one) or
a write that fails with ``ENOSPC``.  The runs use three quick stand-in claims (tests/support/folder_run.py)
so that the timing, not the numerics, is what is tested; the 20-try versions are in the slow set.
"""
from __future__ import annotations

import errno
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mmicl.numerics import atomic
from mmicl.results_folder import LOCK_NAME, holding

RUNNER = Path(__file__).resolve().parents[1] / "support" / "folder_run.py"
ROOT = Path(__file__).resolve().parents[2]
PNG_END = b"IEND\xaeB`\x82"


def _start(out: Path, seed: int, sleep: float = 0.3, kib: float = 20) -> subprocess.Popen:
    env = {**os.environ, "FAKE_SLEEP": str(sleep), "FAKE_FIGURE_KIB": str(kib)}
    return subprocess.Popen([sys.executable, str(RUNNER), "verify", "--claim", "fake.*", "--out", str(out),
                             "--seed", str(seed)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def _ids_md(text: str) -> list[str]:
    return re.findall(r"^\| (fake\.\w) \| \*\*", text, flags=re.M)


def _ids_html(text: str) -> list[str]:
    return re.findall(r'<tr><td><a href="#[^"]+">(fake\.\w)</a></td>', text)


def consistent(out: Path) -> dict:
    """Assert that the summary agrees with itself and with the files it lists; return verdicts.json.

    - the three summary files exist together or not at all;
    - verdicts.json, report.md and report.html list the same claims in the same order, with the
      same run state;
    - every figure listed and not pending is a whole PNG; every claim's evidence file records the
      summary's seed (no other run's file);
    - no temporary file of the writer is visible under a target's name."""
    names = [out / n for n in ("verdicts.json", "report.md", "report.html")]
    present = [p.is_file() for p in names]
    assert all(present) or not any(present), f"summary files present: {present}"
    if not any(present):
        return {}
    doc = json.loads(names[0].read_text())
    md, page = names[1].read_text(), names[2].read_text()
    ids = [c["id"] for c in doc["claims"]]
    assert _ids_md(md) == ids, (ids, _ids_md(md))
    assert _ids_html(page) == ids, (ids, _ids_html(page))
    state = doc["run"]["state"]
    assert f"Run: {state}" in md and f"<dd>{state}" in page
    pending = set(doc["run"]["pending_figures"])
    for c in doc["claims"]:
        for f in c["evidence"]["figures"]:
            if f not in pending:
                data = (out / f).read_bytes()
                assert data.startswith(b"\x89PNG") and data.endswith(PNG_END), f"{f} is not a whole PNG"
        evidence = json.loads((out / "fake" / f"{c['id'][-1]}.json").read_text())
        assert evidence["seed"] == doc["seed"], f"{c['id']}: evidence of seed {evidence['seed']} in a seed {doc['seed']} run"
    return doc


def _complete_run(out: Path, seed: int = 1) -> dict:
    p = _start(out, seed, sleep=0.05)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 0, err.decode()
    doc = consistent(out)
    assert doc["run"]["state"] == "complete" and len(doc["claims"]) == 3 and doc["run"]["pending_figures"] == []
    return doc


def _kill_after_first_claim(out: Path, seed: int, jitter: float) -> dict:
    """Start a run, wait until its summary lists one claim, wait ``jitter`` s more, SIGKILL it."""
    p = _start(out, seed, sleep=0.3)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and p.poll() is None:
        try:
            doc = json.loads((out / "verdicts.json").read_text())
            if doc.get("seed") == seed and len(doc["claims"]) >= 1:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.005)
    time.sleep(jitter)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    return consistent(out)


def _killed_rerun(tmp_path: Path, tries: int) -> None:
    rng = random.Random(19)
    for i in range(tries):
        out = tmp_path / f"kill{i}"
        _complete_run(out, seed=1)
        doc = _kill_after_first_claim(out, seed=2, jitter=rng.uniform(0, 0.4))
        # the earlier run's summary is replaced, not merged: only this run's claims, and not complete
        assert doc["seed"] == 2 and 1 <= len(doc["claims"]) <= 3
        assert doc["run"]["state"] in ("running", "complete")
        assert doc["run"]["state"] == "complete" or len(doc["claims"]) < 3 or doc["run"]["pending_figures"] == []


def _concurrent(tmp_path: Path, tries: int) -> None:
    for i in range(tries):
        out = tmp_path / f"both{i}"
        first, second = _start(out, 1, sleep=0.4), _start(out, 2, sleep=0.4)
        outs = [p.communicate(timeout=120) for p in (first, second)]
        codes = [first.returncode, second.returncode]
        doc = consistent(out)
        if sorted(codes) == [0, 2]:  # one held the folder, the other was refused in one line
            loser = codes.index(2)
            err = outs[loser][1].decode()
            assert "is in use by another mmicl verify (pid" in err and "Traceback" not in err, err
            assert doc["seed"] == (1, 2)[1 - loser] and doc["run"]["state"] == "complete"
        else:  # one finished before the other started: both complete, the folder is the second's
            assert codes == [0, 0], (codes, [o[1].decode()[-300:] for o in outs])
            assert doc["run"]["state"] == "complete"


@pytest.mark.subprocess
def test_a_run_killed_after_its_first_claim_leaves_a_consistent_folder(tmp_path):
    """Killed at a random moment after its first claim, a rerun into a folder holding a complete
    earlier run leaves one summary, of this run's finished claims only, marked as not complete."""
    _killed_rerun(tmp_path, tries=2)


@pytest.mark.subprocess
def test_two_runs_into_one_folder_never_mix(tmp_path):
    """Two runs started together into one folder: one is refused in one line, or they ran one after
    the other; the folder holds one run's summary, evidence and figures."""
    _concurrent(tmp_path, tries=1)


@pytest.mark.subprocess
@pytest.mark.slow
def test_killed_reruns_20_of_20(tmp_path):
    _killed_rerun(tmp_path, tries=20)


@pytest.mark.subprocess
@pytest.mark.slow
def test_concurrent_runs_20_of_20(tmp_path):
    _concurrent(tmp_path, tries=20)


def _cli(args, env=None):
    sys.path.insert(0, str(RUNNER.parent))
    try:
        import folder_run  # noqa: F401  (registers the stand-in claims)
    finally:
        sys.path.pop(0)
    from mmicl.cli import main

    return CliRunner().invoke(main, args, env=env)


def test_a_folder_held_by_a_live_run_is_refused_in_one_line(tmp_path):
    out = tmp_path / "held"
    with holding(out):
        r = _cli(["verify", "--claim", "fake.*", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2, r.output
    assert f"is in use by another mmicl verify (pid {os.getpid()})" in r.output
    assert "Traceback" not in r.output and not (out / "verdicts.json").exists()
    # released: the same folder is now free
    r = _cli(["verify", "--claim", "fake.*", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 0, r.output
    assert consistent(out)["run"]["state"] == "complete"
    assert (out / LOCK_NAME).is_file()


def test_too_little_space_is_refused_before_any_claim_runs(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "free_bytes", lambda folder: 1000)
    out = tmp_path / "small"
    r = _cli(["verify", "--claim", "fake.*", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2, r.output
    assert "no space left in" in r.output and "1000 bytes free" in r.output and "Traceback" not in r.output
    assert not (out / "verdicts.json").exists() and not (out / "fake").exists()


def test_a_disk_that_fills_during_a_figure_keeps_the_finished_claims(tmp_path, monkeypatch):
    """The second claim's figure meets ENOSPC: exit 2 with one line; the summary keeps both verdicts
    (the second's figure pending), says the run stopped and why; no partial PNG."""
    real = atomic.tempfile.mkstemp

    def mkstemp(prefix="", dir=None, **kw):
        if prefix.startswith(".fake_b.png"):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(prefix=prefix, dir=dir, **kw)

    monkeypatch.setattr(atomic.tempfile, "mkstemp", mkstemp)
    out = tmp_path / "full"
    r = _cli(["verify", "--claim", "fake.*", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2, r.output
    assert "no space left in" in r.output and "fake_b.png" in r.output and "Traceback" not in r.output
    doc = consistent(out)
    assert [c["id"] for c in doc["claims"]] == ["fake.a", "fake.b"]
    assert doc["run"]["state"] == "stopped" and "no space left" in doc["run"]["reason"]
    assert doc["run"]["pending_figures"] == ["figures/fake_b.png"]
    assert not (out / "figures" / "fake_b.png").exists()
    assert not [p for p in (out / "figures").iterdir() if p.name.startswith(".")]


def test_each_claims_verdict_is_on_disk_before_its_figures_are_written(tmp_path, monkeypatch):
    """While a figure is being written, the summary already lists its claim, with the figure pending."""
    seen = []
    real = atomic.write_bytes

    def write_bytes(path, data):
        if Path(path).name.startswith("fake_"):
            doc = json.loads((tmp_path / "order" / "verdicts.json").read_text())
            seen.append((Path(path).name, [c["id"] for c in doc["claims"]], doc["run"]["pending_figures"]))
        return real(path, data)

    monkeypatch.setattr(atomic, "write_bytes", write_bytes)
    r = _cli(["verify", "--claim", "fake.*", "--out", str(tmp_path / "order")], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 0, r.output
    assert seen == [(f"fake_{n}.png", ["fake.a", "fake.b", "fake.c"][:i + 1], [f"figures/fake_{n}.png"])
                    for i, n in enumerate("abc")]


def test_a_write_that_meets_a_full_disk_is_one_error_and_changes_nothing(tmp_path, monkeypatch):
    """ENOSPC while the data is flushed: ``DiskFullError`` naming the folder and the bytes the write
    needed; the target keeps its earlier content and no temporary file is left."""
    target = tmp_path / "kept.json"
    target.write_text("earlier\n")

    def fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", fsync)
    for write in (lambda: atomic.write_text(target, "x" * 3000), lambda: atomic.write_bytes(target, b"x" * 3000)):
        with pytest.raises(atomic.DiskFullError) as e:
            write()
        assert str(e.value).startswith(f"no space left in {tmp_path}: writing kept.json needs 2.93 KiB")
        assert target.read_text() == "earlier\n" and sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]
    with pytest.raises(atomic.DiskFullError, match="writing a.md, b.html needs"):
        atomic.write_together({tmp_path / "a.md": b"1", tmp_path / "b.html": b"2"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.json"]


def _tmpfs(path: Path, kib: int) -> bool:
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    path.mkdir(parents=True, exist_ok=True)
    return subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={kib}k", "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@pytest.mark.subprocess
def test_a_real_full_disk_is_one_line_and_keeps_what_fit(tmp_path):
    """On a 200 KiB filesystem: the preflight refuses three claims (4 MiB each) before any work;
    let through, figures of ~60 KiB (and a summary that inlines them) fill it partway: one line,
    exit 2, and the summary that is there agrees with itself."""
    disk = tmp_path / "disk"
    if not _tmpfs(disk, 200):
        pytest.skip("cannot mount a tmpfs here (needs root on Linux); the ENOSPC tests cover the logic")
    try:
        def run(**env):
            return subprocess.run([sys.executable, str(RUNNER), "verify", "--claim", "fake.*", "--out",
                                   str(disk / "r")], capture_output=True, timeout=120,
                                  env={**os.environ, "FAKE_SLEEP": "0", "FAKE_FIGURE_KIB": "60", **env})

        p = run()
        err = p.stderr.decode()
        assert p.returncode == 2 and "no space left in" in err and "Traceback" not in err, err[-800:]
        assert not (disk / "r" / "fake").exists()
        p = run(FAKE_SPACE_PER_CLAIM="1")
        err = p.stderr.decode()
        assert p.returncode == 2, err[-800:]
        assert len([ln for ln in err.splitlines() if "no space left in" in ln]) == 1 and "Traceback" not in err
        doc = consistent(disk / "r")
        assert doc == {} or doc["run"]["state"] in ("running", "stopped")
    finally:
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_leftover_temporary_files_of_a_killed_run_are_removed_by_the_next(tmp_path):
    """Only the writer's own temporary names go; the user's dot-files that merely look like them stay,
    and so do a link with the writer's name and the file it points to."""
    out = tmp_path / "left"
    (out / "figures").mkdir(parents=True)
    left = [out / ".verdicts.json.ab12cd34.mmicl-tmp", out / "figures" / ".fake_a.png.zz99yy_8.mmicl-tmp"]
    for p in left:
        p.write_bytes(b"half")
    own = [out / ".gitignore", out / ".notes.txt.backup1", out / ".env.local.secret", out / ".report.md.k3j_x9ab",
           out / "figures" / ".draft.png.v2-old", out / ".x.abcdefgh.mmicl-tmp.keep"]
    for p in own:
        p.write_text("mine\n")
    target = tmp_path / "elsewhere.txt"
    target.write_text("mine\n")
    link = out / ".report.html.abcdefgh.mmicl-tmp"
    link.symlink_to(target)
    r = _cli(["verify", "--claim", "fake.a", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 0, r.output
    assert not any(p.exists() for p in left)
    assert all(p.read_text() == "mine\n" for p in own) and link.is_symlink() and target.read_text() == "mine\n"


def test_a_lock_that_is_a_link_is_refused_and_its_target_untouched(tmp_path):
    out = tmp_path / "linked"
    out.mkdir()
    target = tmp_path / "precious.txt"
    target.write_text("precious\n")
    (out / LOCK_NAME).symlink_to(target)
    r = _cli(["verify", "--claim", "fake.a", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2 and "it exists as a symbolic link" in r.output and "Traceback" not in r.output
    assert target.read_text() == "precious\n" and not (out / "verdicts.json").exists()


def test_a_lock_that_is_a_hard_link_is_refused_and_the_other_file_untouched(tmp_path):
    out = tmp_path / "hard"
    out.mkdir()
    other = tmp_path / "precious.txt"
    other.write_text("precious\n")
    os.link(other, out / LOCK_NAME)
    r = _cli(["verify", "--claim", "fake.a", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2 and "hard link" in r.output and "Traceback" not in r.output
    assert other.read_text() == "precious\n" and not (out / "verdicts.json").exists()


@pytest.mark.parametrize("name", ["verdicts.json", "report.md", "report.html", LOCK_NAME])
def test_a_summary_name_that_is_a_folder_is_refused_before_anything_is_replaced(tmp_path, name):
    out = tmp_path / "named"
    r = _cli(["verify", "--claim", "fake.a", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 0, r.output
    before = {n: (out / n).read_bytes() for n in ("verdicts.json", "report.md", "report.html") if n != name}
    (out / name).unlink()
    (out / name).mkdir()
    r = _cli(["verify", "--claim", "fake.*", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2 and "it exists as a folder" in r.output and "Traceback" not in r.output, r.output
    assert {n: (out / n).read_bytes() for n in before} == before and (out / name).is_dir()


def test_a_figure_name_that_is_a_folder_is_one_line_and_the_folder_says_stopped(tmp_path):
    out = tmp_path / "fig"
    (out / "figures" / "fake_b.png").mkdir(parents=True)
    r = _cli(["verify", "--claim", "fake.*", "--out", str(out)], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2 and "fake_b.png: it exists as a folder" in r.output and "Traceback" not in r.output
    doc = json.loads((out / "verdicts.json").read_text())
    assert doc["run"]["state"] == "stopped" and [c["id"] for c in doc["claims"]] == ["fake.a", "fake.b"]
    assert (out / "figures" / "fake_b.png").is_dir()


def test_an_out_that_is_a_file_is_one_line(tmp_path):
    import mmicl

    (tmp_path / "f").write_text("mine\n")
    r = _cli(["verify", "--claim", "fake.a", "--out", str(tmp_path / "f")], env={"FAKE_SLEEP": "0"})
    assert r.exit_code == 2 and "it is a file, not a folder" in r.output
    with pytest.raises(mmicl.InputError, match="exists and is not a folder"):
        with holding(tmp_path / "f"):
            pass
    assert (tmp_path / "f").read_text() == "mine\n"


@pytest.mark.subprocess
def test_ctrl_c_stops_the_run_within_two_seconds_and_the_folder_says_stopped(tmp_path):
    out = tmp_path / "ctrlc"
    p = _start(out, 3, sleep=30)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the run has begun its first claim
        try:
            if json.loads((out / "verdicts.json").read_text())["run"]["state"] == "running":
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    took = time.monotonic() - t0
    assert p.returncode == 130 and "stopped by Ctrl-C after 0 of 3 claims" in err.decode() and "Traceback" not in err.decode(), err.decode()
    assert took < 10.0, took  # the claim sleeps 30 s: a run that waited for it would take 30 s
    doc = consistent(out)
    assert doc["run"]["state"] == "stopped" and "Ctrl-C" in doc["run"]["reason"] and doc["claims"] == []


def test_every_figure_goes_through_the_atomic_writer():
    """No module of the package calls ``savefig`` itself: figures are written by
    ``numerics.atomic.save_figure`` (whole or not at all, and held until the verdict is saved)."""
    offenders = [str(p.relative_to(ROOT)) for folder in ("theory", "numerics", "proofs")
                 for p in (ROOT / folder).rglob("*.py")
                 if ".savefig(" in p.read_text() and p.name != "atomic.py"]
    assert offenders == []
