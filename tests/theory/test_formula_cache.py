"""The compiled-formula cache runs only what it can vouch for: a damaged, edited or old file is set
aside with one warning and rebuilt, a folder others can write is not used, an empty MMICL_CACHE
means unset, and a change to the builder's own source is a new key."""
from __future__ import annotations

import os
import stat
import warnings
from pathlib import Path

import pytest
import sympy as sp

from mmicl.theory import compile as C

x = sp.Symbol("x")


def _build():
    return [x + 1], [x]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("MMICL_CACHE", str(folder))
    monkeypatch.setattr(C, "_LOADED", {})
    monkeypatch.setattr(C, "_WARNED", set())
    return folder


def _only_file(folder: Path) -> Path:
    (path,) = [p for p in folder.iterdir() if p.suffix == ".py"]
    return path


def test_a_file_is_written_with_its_hash_and_read_back(cache):
    assert C.compiled("test_cache_plus_one", _build)(2.0) == (3.0,)
    path = _only_file(cache)
    assert path.read_text().startswith(C._HEADER)
    C._LOADED.clear()
    assert C.compiled("test_cache_plus_one", _build)(2.0) == (3.0,)


@pytest.mark.parametrize("damage", ["edit", "append", "truncate", "empty", "garble", "no header"])
def test_a_damaged_file_is_set_aside_with_one_warning_and_rebuilt(cache, damage):
    C.compiled("test_cache_plus_one", _build)
    path = _only_file(cache)
    text = path.read_text()
    body = text.partition("\n")[2]
    path.write_bytes({
        "edit": text.replace("x + 1", "x + 2").encode(),
        "append": (text + "import os; os.environ['MMICL_PWNED'] = '1'\n").encode(),
        "truncate": text[: len(text) // 2].encode(),
        "empty": b"",
        "garble": b"\xff\xfe\x00 not utf-8",
        "no header": body.encode(),
    }[damage])
    C._LOADED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert C.compiled("test_cache_plus_one", _build)(2.0) == (3.0,)
    lines = [str(w.message) for w in caught if "formula cache" in str(w.message)]
    assert len(lines) == 1 and "\n" not in lines[0] and path.name in lines[0]
    assert "MMICL_PWNED" not in os.environ
    assert path.with_name(path.name + ".corrupt").exists()
    assert path.read_text().startswith(C._HEADER)  # rebuilt and sealed


def test_a_folder_others_can_write_is_not_used(cache):
    cache.chmod(0o777)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert C.compiled("test_cache_plus_one", _build)(2.0) == (3.0,)
    assert any("writable by others" in str(w.message) and str(cache) in str(w.message) for w in caught)
    assert not any(cache.iterdir())
    assert stat.S_IMODE(cache.stat().st_mode) == 0o777


def test_a_cache_path_that_is_a_file_is_not_used_and_not_called_damaged(tmp_path, monkeypatch):
    f = tmp_path / "a-file"
    f.write_text("mine\n")
    monkeypatch.setenv("MMICL_CACHE", str(f))
    monkeypatch.setattr(C, "_LOADED", {})
    monkeypatch.setattr(C, "_WARNED", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert C.compiled("test_cache_plus_one", _build)(2.0) == (3.0,)
    said = [str(w.message) for w in caught if "formula cache" in str(w.message)]
    assert len(said) == 1 and "is not a folder" in said[0] and "hash check" not in said[0]
    assert f.read_text() == "mine\n" and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_an_empty_MMICL_CACHE_means_unset(monkeypatch):
    monkeypatch.setenv("MMICL_CACHE", "")
    assert C.cache_dir() == Path.home() / ".cache" / "mmicl"


def test_the_key_covers_the_builders_source_file(cache, tmp_path):
    C.compiled("test_cache_plus_one", _build)
    first = _only_file(cache).name
    namespace: dict = {}
    other = tmp_path / "other_builder.py"
    other.write_text("import sympy as sp\nx = sp.Symbol('x')\ndef build():\n    return [x + 1], [x]\n")
    exec(compile(other.read_text(), str(other), "exec"), namespace)
    C._LOADED.clear()
    C.compiled("test_cache_plus_one", namespace["build"])
    names = {p.name for p in cache.iterdir()}
    assert first in names and len(names) == 2
