"""mmicl's pytest plugin: the size of claim runs, Hypothesis profiles, and baselines of verdicts and
numbers (``mmicl_baseline``), for a repository of property tests over mmicl's claims.

pytest loads it wherever mmicl is installed (entry point ``mmicl`` in the group ``pytest11``); it
does nothing unless used: it adds its options, two fixtures and a line to the summary when it
wrote a baseline, and its import costs nothing (no Hypothesis, numpy or torch until a fixture or
an option needs them).  ``-p no:mmicl`` turns it off.

Deadlines
---------
Hypothesis fails a test whose example takes longer than its ``deadline`` (200 ms by default); a
claim at the smoke size takes longer.  So the plugin drops the deadline of every Hypothesis test
that uses mmicl, at collection: a test that requests one of the plugin's fixtures or names something
of mmicl in its body (``check_claim``, ``mmicl.alpha_T``, ``mt.assert_verdict``; drawing from
``mmicl.testing``'s strategies alone does not count, since Hypothesis leaves the time spent drawing
out of the deadline).  A test that sets its own deadline (``@settings(deadline=...)``, any value other
than the loaded profile's) keeps it, and Hypothesis tests that do not use mmicl are left alone.
The line after collection says how many tests lost their deadline.

Options
-------
``--mmicl-size smoke|quick|full``
    The size that the fixture ``mmicl_size`` gives (default ``smoke``), for
    ``mmicl.testing.check_claim(..., size=mmicl_size)``.
``--mmicl-profile ci|thorough``
    Registers the Hypothesis profiles ``ci`` (25 examples, derandomized: the same examples on
    every run) and ``thorough`` (300 examples), both with ``deadline=None`` (a claim at the smoke
    size takes seconds, beyond Hypothesis's 200 ms default), and loads the one given.  Without the
    option no profile is registered or loaded.  A test's own ``@settings(max_examples=...)``
    still wins over a profile.
``--mmicl-update-baseline``
    Rewrite every baseline that ``mmicl_baseline.check`` reaches and that moved (or is missing).
``--mmicl-require-baseline``
    A missing baseline fails the test instead of being written (for CI, where the baselines are
    committed).

Baselines
---------
``mmicl_baseline.check(value, rtol=None, name=None)`` compares ``value`` (a ``ClaimResult``, a list
of them, or a mapping of numbers, nested mappings and lists allowed) with the baseline stored
beside the test file, ``<test dir>/baselines/<test file stem>/<name or test name>.json``:

- **no baseline yet** (or ``--mmicl-update-baseline`` and something moved): the baseline is
  written and the test **passes**, with a note in the summary listing every baseline written
  (pytest-regressions fails a test whose file it had to create; syrupy, with
  ``--snapshot-update``, passes it and lists what it wrote, which is the convention here: a test
  with several checks writes them all in one run, and ``--mmicl-require-baseline`` makes a missing
  baseline fail in CI);
- **afterwards** the test fails on any regression that ``mmicl compare`` reports
  (``mmicl.compare``): a verdict that changed, a claim or check that is gone, a check whose
  outcome changed, a number that moved beyond its check's own tolerance (``Check.atol``,
  ``Check.rtol``) or, for a number whose check states none (and for a mapping's numbers), beyond
  ``rtol`` (default ``DEFAULT_RTOL`` = 1e-9); the message names each key, its old and new value
  and the tolerance.  It fails too where the baseline does not cover what the test checks (a
  claim, check or number that the baseline lacks, as in a baseline whose summary was emptied), and
  where the baseline cannot be compared at all (no claims, a malformed or newer file, a folder in
  its place, a folder that cannot be written): one line each, so that a baseline can never pass a
  test just by saying nothing.

The file name is the test's name (or ``name``) where that is letters, digits, ``.``, ``-`` and
``_`` only; any other name has those characters replaced by ``_`` and ``~`` with 8 hex digits of
its SHA-256 appended, so that two test ids never share a file (``test_x[s=point(2)]`` and
``test_x[s_point_2]``).

A baseline is a verify summary (``{"schema_version", "claims": [...]}``, strict JSON written by
``mmicl.numerics.atomic.write_json``), so ``mmicl compare`` reads it too; it leaves out each
result's run time and figure paths, which change on every run.  A mapping is stored as one entry
whose ``evidence.summary`` holds the numbers.  A baseline is for a fixed law: inside a
Hypothesis test each example would compare against the same file.
"""
from __future__ import annotations

import json
import hashlib
import re
import sys
from pathlib import Path

import pytest

__all__ = ["SIZES", "PROFILES", "pytest_addoption", "pytest_plugin_registered", "pytest_configure",
           "pytest_report_header", "pytest_terminal_summary", "pytest_collection_modifyitems",
           "pytest_report_collectionfinish", "uses_mmicl",
           "mmicl_size", "mmicl_baseline", "Baseline"]


SIZES = ("smoke", "quick", "full")
"""The sizes of ``mmicl.proofs.claim.SIZES`` (repeated here, not imported: the plugin's import
stays cheap; a test checks that they agree)."""

PROFILES: dict[str, dict] = {
    "ci": {"deadline": None, "max_examples": 25, "derandomize": True, "print_blob": True},
    "thorough": {"deadline": None, "max_examples": 300},
}
"""The Hypothesis profiles of ``--mmicl-profile``."""

_WRITTEN = pytest.StashKey[list]()
_UNDEADLINED = pytest.StashKey[list]()
FIXTURES = ("mmicl_size", "mmicl_baseline")
"""The plugin's fixtures."""


def pytest_addoption(parser):
    group = parser.getgroup("mmicl", "mmicl: property-based regression testing of claims")
    group.addoption("--mmicl-size", choices=SIZES, default="smoke", dest="mmicl_size",
                    help="size of claim runs for the mmicl_size fixture (default: smoke)")
    group.addoption("--mmicl-profile", choices=sorted(PROFILES), default=None, dest="mmicl_profile",
                    help="register and load the Hypothesis profile ci (25 examples, derandomized) or thorough "
                         "(300 examples), both without a deadline")
    group.addoption("--mmicl-update-baseline", action="store_true", default=False, dest="mmicl_update_baseline",
                    help="rewrite the mmicl_baseline files that moved (or are missing)")
    group.addoption("--mmicl-require-baseline", action="store_true", default=False, dest="mmicl_require_baseline",
                    help="a missing mmicl_baseline file fails the test instead of being written (CI)")


class _Name:
    """A placeholder holding the plugin name ``mmicl`` (it has no hooks)."""


def pytest_plugin_registered(plugin, plugin_name, manager):
    """``-p mmicl.pytest_plugin`` where mmicl is installed: the entry point would then register this
    module a second time, as ``mmicl``, which pluggy refuses ("already registered under a different
    name"); a placeholder holding the name ``mmicl`` makes pytest skip the entry point, so both ways
    of loading the plugin work."""
    if plugin is sys.modules[__name__] and plugin_name != "mmicl" and manager.get_plugin("mmicl") is None \
            and not manager.is_blocked("mmicl"):
        manager.register(_Name(), name="mmicl")


def pytest_configure(config):
    config.stash[_WRITTEN] = []
    config.stash[_UNDEADLINED] = []
    profile = config.getoption("mmicl_profile", None)
    if profile:
        from hypothesis import settings

        for name, kwargs in PROFILES.items():
            settings.register_profile(name, **kwargs)
        settings.load_profile(profile)


def pytest_report_header(config):
    profile = config.getoption("mmicl_profile", None)
    if profile:
        return f"mmicl: Hypothesis profile {profile!r} (--mmicl-profile)"
    return None


def pytest_report_collectionfinish(config, start_path, items):
    undeadlined = config.stash.get(_UNDEADLINED, [])
    if undeadlined:
        return f"mmicl: {len(undeadlined)} Hypothesis test(s) that use mmicl run without a deadline"
    return None


def pytest_collection_modifyitems(session, config, items):
    """Drop the Hypothesis deadline of the collected tests that use mmicl (see Deadlines in the
    module docstring).  Hypothesis is imported only where a Hypothesis test was collected."""
    seen: set[int] = set()
    for item in items:
        fn = getattr(getattr(item, "obj", None), "__func__", getattr(item, "obj", None))
        if not getattr(fn, "is_hypothesis_test", False) or id(fn) in seen:
            continue
        seen.add(id(fn))
        if not (set(FIXTURES) & set(getattr(item, "fixturenames", ()))) and not uses_mmicl(fn):
            continue
        from hypothesis import settings

        own = getattr(fn, "_hypothesis_internal_use_settings", None) or settings.default
        if own.deadline is None or own.deadline != settings.default.deadline:
            continue  # no deadline, or the test's own
        fn._hypothesis_internal_use_settings = settings(own, deadline=None)
        config.stash.setdefault(_UNDEADLINED, []).append(item.nodeid)


def uses_mmicl(test) -> bool:
    """Whether the body of the Hypothesis test ``test`` names something of mmicl: a global or
    closure variable that is one of mmicl's modules, functions or classes."""
    inner = getattr(getattr(test, "hypothesis", None), "inner_test", test)
    code = getattr(inner, "__code__", None)
    if code is None:
        return False
    names, codes = set(), [code]
    while codes:  # the body's names, and those of functions defined in it
        c = codes.pop()
        names |= set(c.co_names)
        codes += [k for k in c.co_consts if hasattr(k, "co_names")]
    scope = dict(getattr(inner, "__globals__", {}))
    for cell_name, cell in zip(code.co_freevars, getattr(inner, "__closure__", None) or ()):
        try:
            scope[cell_name] = cell.cell_contents
        except ValueError:
            pass
    return any(_from_mmicl(scope.get(n)) for n in names | set(code.co_freevars))


def _from_mmicl(value) -> bool:
    if value is None:
        return False
    module = value.__name__ if isinstance(value, type(sys)) else getattr(value, "__module__", None)
    return isinstance(module, str) and (module == "mmicl" or module.startswith("mmicl."))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    written = config.stash.get(_WRITTEN, [])
    if written:
        terminalreporter.section("mmicl baselines written")
        for nodeid, path, why in written:
            terminalreporter.write_line(f"{path} ({why}; by {nodeid}): commit it")


@pytest.fixture(scope="session")
def mmicl_size(request) -> str:
    """The size given by ``--mmicl-size`` (default ``"smoke"``).  Session-scoped: a Hypothesis test
    may take it (Hypothesis refuses function-scoped fixtures in ``@given`` tests)."""
    return request.config.getoption("mmicl_size")


@pytest.fixture
def mmicl_baseline(request) -> "Baseline":
    """Compare verdicts and numbers with the baseline stored beside the test file (see
    ``mmicl.pytest_plugin``)."""
    return Baseline(request)


def _safe(name: str) -> str:
    """``name`` as a file name, one file per name: a name of letters, digits, ``.``, ``-`` and ``_``
    only is kept as it is; in any other, those other characters become ``_`` and ``~`` with the first
    8 hex digits of the name's SHA-256 is appended (``test_x[s=point(2)]`` →
    ``test_x_s_point_2~<hash>``), so that ``[s=point(2)]`` and ``[s_point_2]`` keep apart."""
    plain = _legacy_safe(name)
    if plain == name:
        return name
    return f"{plain}~{hashlib.sha256(name.encode()).hexdigest()[:8]}"


def _legacy_safe(name: str) -> str:
    """The file name mmicl 0.x before the hashed names gave ``name`` (two names could share it)."""
    return re.sub(r"[^\w.-]+", "_", name).strip("_") or "baseline"


class Baseline:
    """The ``mmicl_baseline`` fixture's value: ``check(...)``, ``path(name)``."""

    def __init__(self, request):
        self._request = request
        self._used: set[Path] = set()

    @property
    def folder(self) -> Path:
        """``<test dir>/baselines/<test file stem>``."""
        test_file = Path(self._request.node.path)
        return test_file.parent / "baselines" / test_file.stem

    def path(self, name: str | None = None) -> Path:
        """The file of the baseline ``name`` (default: the test's name)."""
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"a baseline's name is a non-empty string, got {name!r}")
        return self.folder / f"{_safe(name or self._request.node.name)}.json"

    def check(self, value, rtol: float | None = None, name: str | None = None):
        """Compare ``value`` with its baseline (write it where there is none yet, or with
        ``--mmicl-update-baseline``).  Returns the ``mmicl.compare.Comparison``, or None
        where the baseline was written."""
        __tracebackhide__ = True
        from mmicl.numerics.atomic import write_json
        from mmicl.numerics.strict_json import dumps
        from mmicl.compare import CompareError, compare, load_summary

        path = self.path(name)
        shown = _shown(path, self._request.config)
        if path.exists() and not path.is_file():
            pytest.fail(f"mmicl baseline {shown}: it is {'a folder' if path.is_dir() else 'not a regular file'}, not a "
                        "baseline file; move it away (the baseline is written there)", pytrace=False)
        if path in self._used:
            raise ValueError(f"{path.name}: this test checks a second value against the same baseline; give each "
                             "check in a test its own name=")
        self._used.add(path)
        label = name or self._request.node.name
        doc = json.loads(dumps(_summary(value, label)))  # exactly what would be written
        config = self._request.config
        if not path.exists():
            legacy = path.with_name(_legacy_safe(name or self._request.node.name) + ".json")
            hint = (f" (an earlier mmicl named it {legacy.name}, a name that other test ids could share: rename it)"
                    if legacy != path and legacy.is_file() else "")
            if config.getoption("mmicl_require_baseline"):
                pytest.fail(f"no mmicl baseline at {shown} (--mmicl-require-baseline): run the tests once without it, "
                            f"or with --mmicl-update-baseline, and commit the file{hint}", pytrace=False)
            return self._write(write_json, path, doc, "new")
        try:
            old = load_summary(path, baseline=True)  # an empty one would pass anything
        except CompareError as e:
            if config.getoption("mmicl_update_baseline"):
                return self._write(write_json, path, doc, "rewritten: it was not a baseline")
            pytest.fail(f"mmicl baseline {shown}: {e}", pytrace=False)
        try:
            comparison = compare(old, doc, rtol, old_name=shown, new_name="this run")
        except CompareError as e:  # a bad rtol
            raise ValueError(str(e)) from None
        regressions = comparison.regressions
        uncovered = [c for c in comparison.changes if not c.regression]  # what the baseline does not hold
        if (regressions or uncovered) and config.getoption("mmicl_update_baseline"):
            return self._write(write_json, path, doc, f"updated: {len(regressions) + len(uncovered)} change(s)")
        if uncovered and not regressions:
            lines = [f"mmicl baseline {shown}: it does not cover {len(uncovered)} thing(s) this test checks, so it "
                     "could not catch them moving"]
            lines += [f"  - {_describe(c, mapping=_is_mapping(old))}" for c in uncovered]
            lines.append("Rerun with --mmicl-update-baseline and commit the file.")
            pytest.fail("\n".join(lines), pytrace=False)
        if regressions:
            lines = [f"mmicl baseline {shown}: {len(regressions)} change(s) from the baseline"]
            lines += [f"  - {_describe(c, mapping=_is_mapping(old))}" for c in regressions]
            lines.append("If the change is intended, rerun with --mmicl-update-baseline and commit the file.")
            pytest.fail("\n".join(lines), pytrace=False)
        return comparison

    def _write(self, write_json, path: Path, doc: dict, why: str):
        try:
            write_json(path, doc)
        except OSError as e:
            pytest.fail(f"mmicl baseline {_shown(path, self._request.config)}: cannot write it "
                        f"({e.strerror or type(e).__name__}); make its folder writable", pytrace=False)
        self._request.config.stash[_WRITTEN].append((self._request.node.nodeid, _shown(path, self._request.config), why))
        self._request.node.user_properties.append(("mmicl_baseline_written", str(path)))
        return None


_MAPPING = "mapping"
"""The ``kind`` of the entry a mapping of numbers is stored as."""


def _summary(value, label: str) -> dict:
    """``value`` as a verify summary (see the module docstring)."""
    from collections.abc import Mapping

    from mmicl.proofs.claim import ClaimResult

    if isinstance(value, ClaimResult):
        results = [value]
    elif isinstance(value, (list, tuple)) and value and all(isinstance(v, ClaimResult) for v in value):
        results = list(value)
    elif isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            raise TypeError("a mapping of numbers for mmicl_baseline.check has string keys")
        return {"claims": [{"id": label, "kind": _MAPPING, "evidence": {"summary": dict(value)}}]}
    else:
        raise TypeError("mmicl_baseline.check takes a ClaimResult, a non-empty list of them, or a mapping of numbers; "
                        f"got {type(value).__name__}")
    claims = []
    for r in results:
        entry = r.to_json()
        for key in ("seconds", "figures"):  # they change on every run
            entry["evidence"].pop(key, None)
        claims.append(entry)
    return {"claims": claims}


def _is_mapping(doc: dict) -> bool:
    return len(doc["claims"]) == 1 and doc["claims"][0].get("kind") == _MAPPING


def _describe(change, mapping: bool) -> str:
    """One line for a regression: what moved (the key), from what to what, and the tolerance."""
    key = change.key
    if mapping and key.startswith("summary: "):
        key = key[len("summary: "):]
    where = key if mapping else f"{change.claim}: {key}" if change.key != change.claim else change.claim
    line = f"{change.kind} {where}: baseline {change.old!r}, this run {change.new!r}"
    if change.kind == "number" and change.tolerance:
        line += f"; allowed: {change.tolerance}"
    return line


def _shown(path: Path, config) -> str:
    """``path`` relative to the rootdir where it lies under it."""
    try:
        return Path(path).resolve().relative_to(Path(config.rootpath).resolve()).as_posix()
    except ValueError:
        return str(path)
