# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A property test and a baseline
#
# A theorem checked on one law is checked on that law only. A **property test** checks it on many
# laws at once: Hypothesis draws random task laws, mmicl runs the claim on each, and the property
# says which verdict each must get. A **baseline** records the verdicts and numbers of a few fixed
# cases, so that a later change (to your code, to mmicl, to a dependency) that moves them is
# caught, while moves within each number's stated tolerance are not.
#
# The theorem here is Theorem 6.2 of Barnfield, Sur and Sen, *Multi-layer Cross-Attention is
# Provably Optimal for Multi-modal In-context Learning* (arXiv:2602.04872): it needs the squared
# norm s bounded and not almost surely 0, and then it holds.
#
# `mmicl.testing` needs Hypothesis (`pip install hypothesis`); `import mmicl` never imports it.

# %%
import json
import os
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings

import mmicl
import mmicl.testing as mt

# %% [markdown]
# ## Claims as assertions
#
# `mt.check_claim(claim_id, law)` runs a claim at the smoke size and returns its result;
# `mt.assert_verdict(claim_id, law, expected)` raises an `AssertionError` that explains itself
# when the verdict is not the one expected (or not in the set expected).

# %%
print(mt.check_claim("thm6.2", "s=uniform(0.5,2)").verdict)
mt.assert_verdict("thm6.2", "s=point(2)")  # expected="holds" by default
mt.assert_verdict("thm6.2", "s=exponential(1)", expected={"hypothesis-not-met", "inconclusive"})

try:
    mt.assert_verdict("thm6.2", "s=exponential(1)", expected="holds")
except AssertionError as error:
    print(error)

# %% [markdown]
# ## Laws that carry their facts
#
# `mt.task_laws()` draws a `DrawnLaw`: a `TaskLaw` itself, carrying its LAW text (`.text`) and its
# facts (`.facts`), worked out from how the law was built rather than by the code under test: whether s
# is bounded, how many values it takes over prompts with signal, its ends `s_lo` and `s_hi`.
# A property can then say what the verdict must be from the facts alone.

# %%
drawn = mt.task_laws().example()
print(drawn.text)
print("bounded:", drawn.facts.bounded, "| has signal:", drawn.facts.has_signal,
      "| s_lo, s_hi:", drawn.facts.s_lo, drawn.facts.s_hi)

# %% [markdown]
# ## A property test, run here
#
# The property: where s is bounded and carries signal, Theorem 6.2 never fails (it holds, or is
# inconclusive where float64 cannot resolve the law); elsewhere its hypothesis is not met. A
# `@given` function can be called directly, outside pytest, and runs its examples: here five,
# derandomised (the same five on every run, as the `ci` profile does) and with `database=None`,
# so that nothing is written to disk. Each example takes well under a second at the smoke size.

# %%
seen = []


@settings(max_examples=5, deadline=None, database=None, derandomize=True)
@given(drawn=mt.task_laws(bounded=False, max_dim=2))
def test_thm62_names_its_hypotheses(drawn):
    if drawn.facts.bounded and drawn.facts.has_signal:
        result = mt.assert_verdict("thm6.2", drawn, expected={"holds", "inconclusive"})
    else:
        result = mt.assert_verdict("thm6.2", drawn, expected="hypothesis-not-met")
    seen.append((result.verdict, drawn.text))


test_thm62_names_its_hypotheses()
for verdict, text in seen:
    print(f"{verdict:<20} {text[:100]}")

# %% [markdown]
# In a test file the same function runs under pytest; there mmicl's pytest plugin adds the fixture
# `mmicl_size` (the `--mmicl-size` given, `smoke` by default) and the option `--mmicl-profile`
# (`ci`: 25 derandomised examples; `thorough`: 300).
#
# ## A baseline, recorded and then compared
#
# The fixture `mmicl_baseline` records a value the first time a test runs and compares with it
# on every later run. Its file, `baselines/<test file>/<test>.json` beside the test, has the shape
# of a `verdicts.json`, so the command `mmicl compare` reads it too. Here is such a test file, in
# a fresh folder, with a `pytest.ini` of its own:

# %%
project = Path(tempfile.mkdtemp(prefix="mmicl-tutorial-"))
(project / "pytest.ini").write_text("[pytest]\n")
(project / "test_my_theory.py").write_text('''\
import mmicl.testing as mt


def test_thm62_baseline(mmicl_baseline):
    result = mt.assert_verdict("thm6.2", "s=point(2)")
    mmicl_baseline.check(result)
''')


def run_pytest(*args):
    """`pytest -q test_my_theory.py ARGS` in the project folder, run in this process (faster than
    a new one); returns its exit status (0: all passed). pytest's warnings that it cannot rewrite
    the asserts of modules this notebook imported already are silenced: a shell run has none."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = pytest.main(["-q", "-p", "no:cacheprovider", "-p", "no:warnings", "--rootdir", str(project),
                              str(project / "test_my_theory.py"), *args])
    print("exit status:", int(status))
    return int(status)


# %% [markdown]
# The first run writes the baseline and passes; its summary lists the file to commit.

# %%
assert run_pytest() == 0
baseline = project / "baselines" / "test_my_theory" / "test_thm62_baseline.json"
recorded = json.loads(baseline.read_text())
claim = recorded["claims"][0]
print(claim["id"], claim["verdict"], claim["evidence"]["summary"])

# %% [markdown]
# The second run compares with it. Nothing moved beyond its tolerance, so the test passes.
# `--mmicl-require-baseline` (for CI, where baselines are committed) turns a missing baseline into
# a failure.

# %%
assert run_pytest("--mmicl-require-baseline") == 0

# %% [markdown]
# ## A regression
#
# To see what a regression looks like, edit the recorded baseline as if an earlier version had
# computed another α\*. The test now fails, and its message names the number that moved, both
# values, and the tolerance it was judged by, with the reason that tolerance was stated.

# %%
claim["evidence"]["summary"]["alpha_star"] = 0.3
tampered = project / "baselines" / "tampered.json"
tampered.write_text(json.dumps(recorded))
baseline.write_text(json.dumps(recorded))
assert run_pytest() == 1

# %% [markdown]
# `mmicl compare OLD NEW` says the same between two files (two `verdicts.json` written by
# `mmicl verify`, or baselines), and exits with status 1 where anything moved. Here it compares
# the tampered baseline with a fresh one, recorded by running the test again with
# `--mmicl-update-baseline` (which rewrites the baselines that moved: review the diff, then
# commit it).

# %%
assert run_pytest("--mmicl-update-baseline") == 0
compared = subprocess.run([sys.executable, "-m", "mmicl", "compare", str(tampered), str(baseline)],
                          capture_output=True, text=True, env={**os.environ, "COLUMNS": "100"})
print(compared.stdout, compared.stderr)
print("exit status:", compared.returncode)

# %% [markdown]
# [Property-based regression testing](../property_testing.md) lists every strategy, option and
# fixture; `examples/regression-example/` in the repository is a complete project with committed
# baselines.
