"""Sweep stores are verified when read back: each test damages a tiny store itself (six theory runs,
run in this process) and checks what ``--status``, ``--export`` and a rerun then do.

A damaged, edited, relabelled, duplicate or earlier-version run file is never trusted: ``--status``
and ``--export`` (read-only) skip it and name it in one warning line; a rerun moves it to
``*.corrupt``, redoes exactly the runs left without a valid file, and the store is whole again.
Reruns go through the command with ``run_sweep`` replaced by ``run_here`` (no Dask cluster)."""
from __future__ import annotations

import csv
import json
import os
import stat

import pytest
from click.testing import CliRunner

import mmicl.commands.sweep as sweep_command
from mmicl.cli import main
from mmicl.numerics.runs import Store, StoreError, StoreWarning, expand
from mmicl.numerics.runs.runner import run_here
from mmicl.numerics.runs.store import checksum

SPEC_TOML = 'kind = "theory"\n[base]\nlaw = "s=uniform(0.5,4)"\n[grid]\nT = [2, 3, 4, 5, 6, 7]\n'
RUNS = expand({"kind": "theory", "base": {"law": "s=uniform(0.5,4)"}, "grid": {"T": [2, 3, 4, 5, 6, 7]}})
KEYS = [r.key for r in RUNS]                       # KEYS[i]: the run at T = i + 2
ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A whole store of the six runs at tmp_path/st (and the sweep file at tmp_path/s.toml); the
    command's ``run_sweep`` runs here, one run after the other."""
    monkeypatch.setattr(sweep_command, "run_sweep", lambda runs, st, **kw: run_here(runs, st))
    (tmp_path / "s.toml").write_text(SPEC_TOML)
    s = run_here(RUNS, Store(tmp_path / "st"))
    assert s.done == 6
    return tmp_path / "st"


def _file(store, i):
    return store / "runs" / f"{KEYS[i]}.json"


def _cli(*args):
    r = CliRunner().invoke(main, ["sweep", *map(str, args)])
    assert "Traceback" not in r.output and (r.exception is None or isinstance(r.exception, SystemExit)), r.output
    return r


def _status(store):
    """(the status counts, the warning lines on stderr) of ``--status --json``."""
    r = _cli("--status", "--store", store, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)["status"], [line for line in r.stderr.splitlines() if line]


def _export_rows(store, csv_path):
    r = _cli("--export", csv_path, "--store", store)
    assert r.exit_code == 0, r.output
    with open(csv_path, newline="") as f:
        return list(csv.DictReader(f))


def _snapshot(folder):
    """Every file and folder under ``folder``: its bytes (files) and mode."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, folder)] = (st.st_mode, open(p, "rb").read() if stat.S_ISREG(st.st_mode) else None)
    return out


def _started(store):
    return {r["key"]: r["provenance"]["started"] for r in Store(store, writable=False, warn=lambda m: None).records()}


def _reseal(path, edit):
    """Apply ``edit`` to the record in ``path`` and write it back with a correct checksum (a careful forger)."""
    doc = json.loads(path.read_text())
    edit(doc)
    doc["checksum"] = checksum(doc)
    path.write_text(json.dumps(doc, indent=2))


# ---- the damage, what a query says, what a rerun redoes ----------------------------------------
def _truncate(st):
    data = _file(st, 0).read_bytes()
    _file(st, 0).write_bytes(data[: len(data) // 2])


def _empty_object_for_a_run(st):
    _file(st, 1).write_text("{}")


def _stray_empty_object(st):
    (st / "runs" / "stray.json").write_text("{}")


def _garbage(st):
    _file(st, 2).write_bytes(b"\xff\xfe\x00\x9c garbage \x80\x81")


def _edit_alpha_T(st):
    doc = json.loads(_file(st, 3).read_text())
    doc["result"]["alpha_T"] = 0.25
    _file(st, 3).write_text(json.dumps(doc, indent=2))


def _relabel_by_copy(st):                            # run 0's file copied over run 4's
    _file(st, 4).write_bytes(_file(st, 0).read_bytes())


def _change_key_field(st):                           # run 5's record claims to be run 1
    doc = json.loads(_file(st, 5).read_text())
    doc["key"] = KEYS[1]
    _file(st, 5).write_text(json.dumps(doc, indent=2))


def _change_key_field_and_reseal(st):
    _reseal(_file(st, 5), lambda d: d.update(key=KEYS[1]))


def _duplicate(st):
    (st / "runs" / "copy-of-run0.json").write_bytes(_file(st, 0).read_bytes())


def _earlier_version(st):
    doc = json.loads(_file(st, 2).read_text())
    del doc["checksum"]
    _file(st, 2).write_text(json.dumps(doc, indent=2))


# (damage, the file it leaves untrusted, the reason named, the runs a rerun redoes)
CASES = {
    "truncated": (_truncate, lambda: f"{KEYS[0]}.json", "truncated JSON", {0}),
    "{} for a run": (_empty_object_for_a_run, lambda: f"{KEYS[1]}.json", "not a run record: no format, key, kind",
                     {1}),
    "stray {}": (_stray_empty_object, lambda: "stray.json", "not a run record", set()),
    "garbage bytes": (_garbage, lambda: f"{KEYS[2]}.json", "not UTF-8 text", {2}),
    "edited alpha_T": (_edit_alpha_T, lambda: f"{KEYS[3]}.json", "checksum does not match", {3}),
    "relabelled copy": (_relabel_by_copy, lambda: f"{KEYS[4]}.json", f"a duplicate of run {KEYS[0]}", {4}),
    "key field changed": (_change_key_field, lambda: f"{KEYS[5]}.json", "checksum does not match", {5}),
    "key field changed, resealed": (_change_key_field_and_reseal, lambda: f"{KEYS[5]}.json",
                                    "its key does not match its kind and configuration", {5}),
    "duplicate": (_duplicate, lambda: "copy-of-run0.json", f"a duplicate of run {KEYS[0]}", set()),
    "earlier version": (_earlier_version, lambda: f"{KEYS[2]}.json", "written by an earlier mmicl, unverified", {2}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_untrusted_run_file_is_skipped_by_queries_then_set_aside_and_redone(store, tmp_path, case):
    damage, name, reason, redone = CASES[case]
    damage(store)
    name = name()
    before = _snapshot(store)
    started = _started(store)
    assert set(started) == set(KEYS) - {KEYS[i] for i in redone}           # the API reads the same set

    # --status and --export: read-only; the valid keys, each once; one warning line; nothing changed
    counts, warned = _status(store)
    assert counts == {"done": 6 - len(redone)}
    assert len(warned) == 1 and warned[0].startswith("mmicl: 1 run file in ") and "would be set aside" in warned[0]
    assert f"{name} ({reason}" in warned[0]
    rows = _export_rows(store, tmp_path / "t.csv")
    assert len(rows) == 6 - len(redone) and len({row["key"] for row in rows}) == len(rows)
    assert _snapshot(store) == before

    # a rerun sets the file aside, redoes exactly the runs left without a valid file, keeps the others
    r = _cli(tmp_path / "s.toml", "--store", store, "--json")
    assert r.exit_code == 0, r.output
    warned = [line for line in r.stderr.splitlines() if line]
    assert len(warned) == 1 and warned[0].startswith("mmicl: set aside 1 run file in ")
    assert f"(moved to *.corrupt): {name} ({reason}" in warned[0]
    out = json.loads(r.stdout)
    assert out["sweep"] == {"runs": 6, "skipped (already done)": 6 - len(redone), "done": len(redone), "failed": 0}
    assert out["set_aside"] == [{"file": name, "reason": out["set_aside"][0]["reason"], "moved_to": name + ".corrupt"}]
    assert (store / "runs" / (name + ".corrupt")).read_bytes() == before[os.path.join("runs", name)][1]
    after = _started(store)
    assert set(after) == set(KEYS)
    assert {k for k in KEYS if after[k] != started.get(k)} == {KEYS[i] for i in redone}
    assert sorted(p.name for p in (store / "runs").glob("*.json")) == sorted(f"{k}.json" for k in KEYS)

    # then everything is done, with no warning, and the index lists the six valid runs
    counts, warned = _status(store)
    assert counts == {"done": 6} and warned == []
    assert len(_export_rows(store, tmp_path / "t2.csv")) == 6
    index = json.loads((store / "index.json").read_text())["runs"]
    assert set(index) == set(KEYS) and all(v["status"] == "done" for v in index.values())
    r = _cli(tmp_path / "s.toml", "--store", store, "--json")
    assert json.loads(r.stdout)["sweep"]["skipped (already done)"] == 6 and r.stderr == ""


def test_several_damaged_files_are_one_warning_line_per_opening(store, tmp_path):
    _truncate(store)
    _edit_alpha_T(store)
    _duplicate(store)
    seen: list[str] = []
    st = Store(store, warn=seen.append)
    assert len(seen) == 1 and "\n" not in seen[0]
    names = sorted([f"{KEYS[0]}.json", f"{KEYS[3]}.json", "copy-of-run0.json"])
    assert seen[0].startswith(f"mmicl: set aside 3 run files in {store / 'runs'} (moved to *.corrupt): ")
    for n in names:
        assert n in seen[0]
    assert sorted(s["file"] for s in st.set_aside) == names
    assert sorted(p.name for p in (store / "runs").glob("*.corrupt")) == sorted(n + ".corrupt" for n in names)
    assert st.summary() == {"done": 4} and len(st.table()) == 4
    # the index on disk was rebuilt from the valid records only, on opening
    assert set(json.loads((store / "index.json").read_text())["runs"]) == set(KEYS) - {KEYS[0], KEYS[3]}
    # a second opening finds nothing to set aside: no warning at all
    seen.clear()
    Store(store, warn=seen.append)
    assert seen == []
    s = run_here(RUNS, Store(store))
    assert (s.skipped, s.done) == (4, 2) and Store(store).summary() == {"done": 6}


def test_the_default_warning_is_one_store_warning(store):
    _truncate(store)
    with pytest.warns(StoreWarning, match="truncated JSON") as w:
        Store(store, writable=False)
    assert len(w) == 1


def test_a_file_damaged_twice_keeps_both_set_aside_copies(store):
    _truncate(store)
    Store(store, warn=lambda m: None)
    run_here(RUNS, Store(store))
    _truncate(store)
    st = Store(store, warn=lambda m: None)
    assert st.set_aside[0]["moved_to"] == f"{KEYS[0]}.json.2.corrupt"
    assert {p.name for p in (store / "runs").glob("*.corrupt")} == {f"{KEYS[0]}.json.corrupt",
                                                                     f"{KEYS[0]}.json.2.corrupt"}


def test_a_record_whose_key_is_not_its_configurations_is_refused_on_write(tmp_path):
    st = Store(tmp_path)
    record = {"format": 1, "key": "k1", "kind": "theory", "config": {"law": "s=point(2)", "T": 2},
              "status": "done", "result": {}, "provenance": {}}
    with pytest.raises(ValueError, match="key does not match"):
        st.write(record)
    assert list((tmp_path / "runs").iterdir()) == []


# ---- read-only stores --------------------------------------------------------------------------
def _damage_all_kinds(st):
    _truncate(st)
    _stray_empty_object(st)
    _edit_alpha_T(st)
    _duplicate(st)
    _earlier_version(st)


def test_a_read_only_store_changes_nothing_on_disk(store, tmp_path):
    """``writable=False`` (what --status and --export open): no folder made, nothing renamed or
    rewritten, even a stale index.json is left as it is; invalid files skipped and named."""
    _damage_all_kinds(store)
    (store / "index.json").write_text("{not json")
    before = _snapshot(store)
    seen: list[str] = []
    st = Store(store, writable=False, warn=seen.append)
    assert st.summary() == {"done": 3} and len(st.table()) == 3            # runs 1, 4, 5
    assert sorted(r["key"] for r in st.records()) == sorted([KEYS[1], KEYS[4], KEYS[5]])
    assert len(seen) == 1 and seen[0].startswith("mmicl: 5 run files in ") and "would be set aside" in seen[0]
    assert all(s["moved_to"] is None for s in st.set_aside)
    with pytest.raises(StoreError, match="read-only"):
        st.write(Store(store, writable=False, warn=lambda m: None).records()[0])
    assert _snapshot(store) == before
    # the same through the command
    counts, warned = _status(store)
    assert counts == {"done": 3} and len(warned) == 1 and "would be set aside" in warned[0]
    assert len(_export_rows(store, tmp_path / "t.csv")) == 3
    assert _snapshot(store) == before


def test_status_and_export_work_on_a_folder_without_write_permission(store, tmp_path):
    _damage_all_kinds(store)
    before = _snapshot(store)
    os.chmod(store / "runs", 0o555)
    os.chmod(store, 0o555)
    try:
        counts, warned = _status(store)
        assert counts == {"done": 3} and len(warned) == 1
        assert len(_export_rows(store, tmp_path / "t.csv")) == 3
        r = _cli("--status", "--store", store)
        assert r.exit_code == 0 and "done 3" in r.stdout and "not writable" not in r.output
        after = _snapshot(store)
    finally:
        os.chmod(store, 0o755)
        os.chmod(store / "runs", 0o755)
    assert {k: v[1] for k, v in after.items()} == {k: v[1] for k, v in before.items()}


@pytest.mark.skipif(ROOT, reason="root writes into a folder whatever its permissions")
def test_a_run_into_a_folder_without_write_permission_is_one_line(store, tmp_path):
    os.chmod(store, 0o555)
    try:
        r = _cli(tmp_path / "s.toml", "--store", store)
    finally:
        os.chmod(store, 0o755)
    assert r.exit_code == 2 and "not writable" in r.output and len(r.output.strip().splitlines()) <= 3


def test_only_a_run_needs_a_writable_store(store, tmp_path, monkeypatch):
    """The permission check as a non-root user meets it (``os.access`` says no, whoever runs the
    tests): a query reads the store, a run into it is refused up front in one line."""
    real = os.access
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p) == str(store) else real(p, mode, **kw))
    counts, warned = _status(store)
    assert counts == {"done": 6} and warned == []
    assert len(_export_rows(store, tmp_path / "t.csv")) == 6
    r = _cli(tmp_path / "s.toml", "--store", store)
    assert r.exit_code == 2 and "not writable" in r.output and "--store" in r.output


# ---- stores that are not there -----------------------------------------------------------------
@pytest.mark.parametrize("query", [["--status"], ["--export", "t.csv"], ["--status", "--json"]])
def test_a_query_of_a_store_that_does_not_exist_is_one_line(tmp_path, query):
    missing = tmp_path / "nowhere"
    query = [str(tmp_path / q) if q.endswith(".csv") else q for q in query]
    r = _cli(*query, "--store", missing)
    assert r.exit_code == 2 and r.output.strip().splitlines() == [
        f"Error: --store: no results store at {str(missing)!r}: no such folder"]
    assert not missing.exists() and not (tmp_path / "t.csv").exists()
    (tmp_path / "plain").mkdir()
    r = _cli(*query, "--store", tmp_path / "plain")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and "no runs/ folder" in r.output
    assert not (tmp_path / "plain" / "runs").exists()
    with pytest.raises(StoreError, match="no such folder"):
        Store(missing, writable=False)
