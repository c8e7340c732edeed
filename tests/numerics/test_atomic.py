"""The atomic writer (``numerics.atomic``): a file it writes has the mode its docstring promises, whatever the umask."""
from __future__ import annotations
import os
import stat
import pytest
from mmicl.numerics import atomic


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_atomic_writes_are_readable_by_everyone(tmp_path, umask):
    """The docstring of ``atomic.replacing``: "The file is readable by everyone" (mkstemp's 0600 is
    not kept).  Under the usual umask 022 the mode is the one ``open()`` gives (0644); under any
    umask it is readable by owner, group and others, writable by the owner, executable by nobody;
    the same when it replaces an existing private file."""
    old = os.umask(umask)
    try:
        (tmp_path / "plain").write_text("x")
        plain = stat.S_IMODE((tmp_path / "plain").stat().st_mode)
        (tmp_path / "old.json").write_text("{}")
        os.chmod(tmp_path / "old.json", 0o600)
        paths = [atomic.write_text(tmp_path / "a.txt", "hello"), atomic.write_bytes(tmp_path / "b.bin", b"\x00"),
                 atomic.write_json(tmp_path / "c.json", {"x": 1}), atomic.write_json(tmp_path / "old.json", {"y": 2})]
        with atomic.replacing(tmp_path / "d.txt") as f:
            f.write("d")
        paths.append(tmp_path / "d.txt")
    finally:
        os.umask(old)
    for p in paths:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o444 == 0o444 and mode & 0o200 and not mode & 0o111, (p.name, oct(mode))
        if umask == 0o022:
            assert mode == plain == 0o644, (p.name, oct(mode))
    assert sorted(q.name for q in tmp_path.iterdir()) == ["a.txt", "b.bin", "c.json", "d.txt", "old.json", "plain"]
