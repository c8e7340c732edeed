"""The pytest plugin drops Hypothesis's deadline for the tests that use mmicl, and only for them:
a pytest run in a subprocess over a file of Hypothesis tests that each sleep past the 200 ms
default deadline (``SLEEP``), so that a test keeping the deadline fails with ``DeadlineExceeded``
(the control) and one that lost it passes.

The subprocess loads a profile of its own with the 200 ms deadline (``CONFTEST``): Hypothesis loads
its ``ci`` profile, which has no deadline, whenever it sees a CI environment variable, and the
controls would then pass for the wrong reason."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

SLEEP = 0.3
"""Seconds each example sleeps: 1.5 times Hypothesis's default deadline of 200 ms, beyond the 25 %
grace Hypothesis gives before the final example."""

CONFTEST = textwrap.dedent('''
    from datetime import timedelta
    from hypothesis import settings
    settings.register_profile("deadline-200ms", deadline=timedelta(milliseconds=200))
    settings.load_profile("deadline-200ms")
''')

TESTS = textwrap.dedent(f'''
    import time
    from hypothesis import given, settings, strategies as st
    import mmicl
    import mmicl.testing as mt

    @settings(max_examples=2, database=None)
    @given(st.just(0))
    def test_names_mmicl(x):
        mmicl.__name__
        time.sleep({SLEEP})

    @settings(max_examples=2, database=None)
    @given(st.just(0))
    def test_names_mmicl_testing_in_a_nested_function(x):
        def inner():
            return mt.MANY
        inner()
        time.sleep({SLEEP})

    @settings(max_examples=2, database=None)
    @given(x=st.just(0))
    def test_uses_a_fixture(mmicl_size, x):
        time.sleep({SLEEP})

    @settings(max_examples=2, database=None)
    @given(st.just(0))
    def test_control_no_mmicl(x):
        time.sleep({SLEEP})

    @settings(max_examples=2, database=None, deadline=100)
    @given(x=st.just(0))
    def test_control_own_deadline(mmicl_size, x):
        mmicl.__name__
        time.sleep({SLEEP})

    class TestInAClass:
        @settings(max_examples=2, database=None)
        @given(st.just(0))
        def test_method(self, x):
            mmicl.__name__
            time.sleep({SLEEP})
''')


@pytest.mark.subprocess
def test_hypothesis_tests_that_use_mmicl_lose_the_deadline_and_others_keep_theirs(tmp_path):
    (tmp_path / "test_props.py").write_text(TESTS, encoding="utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    p = subprocess.run([sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "-p", "no:xdist",
                        "test_props.py"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = p.stdout
    for name in ("test_names_mmicl", "test_names_mmicl_testing_in_a_nested_function", "test_uses_a_fixture",
                 "TestInAClass::test_method"):
        assert f"PASSED test_props.py::{name}" in out, out[-4000:]
    for name in ("test_control_no_mmicl", "test_control_own_deadline"):
        assert f"FAILED test_props.py::{name}" in out, out[-4000:]
    assert "DeadlineExceeded" in out
    assert "mmicl: 4 Hypothesis test(s) that use mmicl run without a deadline" in out, out[:2000]
