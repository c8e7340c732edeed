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
# # Verify a theorem on your law, and a claim of your own
#
# mmicl checks theorems about in-context learning. Each check ends in one **verdict**: the claim
# `holds`, `fails`, has a `hypothesis-not-met`, or is `inconclusive` (and `error` if its code
# raised). This tutorial runs Theorem 6.2 of Barnfield, Sur and Sen, *Multi-layer Cross-Attention
# is Provably Optimal for Multi-modal In-context Learning* (arXiv:2602.04872), on a law chosen
# here, reads the evidence behind the verdict, and then registers and checks a claim of our own.
#
# Theorem 6.2: for the one-parameter linearised cross-attention model, gradient flow converges to
# a unique minimiser α_T, α_T → α\* = 2/(2 + s_lo + s_hi) as the depth T grows, and the predictor
# tends to the Bayes predictor.

# %%
import tempfile
import textwrap

import mmicl

out = tempfile.mkdtemp(prefix="mmicl-tutorial-")  # where the claims may write figures
# %% [markdown]
# ## Run a claim on your law
#
# `mmicl.verify(claims, law=..., size=..., out=...)` runs the named claims (ids or glob patterns;
# `mmicl.claims()` lists them) on the law given instead of each claim's own laws. `size` sets the
# work: `"smoke"` (the least that can decide: short depth sweeps, no Monte Carlo training; a few
# seconds), `"quick"` (what `mmicl verify --quick` runs) or `"full"`.

# %%
law = "s=uniform(1,3)"
result = mmicl.verify(["thm6.2"], law=law, size="smoke", out=out)[0]
print(result.id, "→", result.verdict)
print("why:", result.verdict_reason)
print("origin:", result.origin, "| seconds:", round(result.seconds, 1))

# %% [markdown]
# ## The hypotheses
#
# Before any evidence counts, the claim computes its hypotheses from the law. Each says what it
# requires, whether this law meets it, and the facts it was decided on.

# %%
for h in result.hypotheses:
    print(f"[{'met' if h.met else 'NOT MET'}] {h.text}\n        {h.detail}")

# %% [markdown]
# ## The checks
#
# Each check is one piece of evidence, computed by a stated `method`. `passed` is `True`,
# `False` or `None` (could not decide, or left out at this size). Its `role` says whether it
# decides the verdict (`decisive`) or only backs it up (`corroborating`). The rule, the same for
# every claim (`mmicl.decide`): a hypothesis not met gives `hypothesis-not-met`; otherwise a
# decisive check that fails gives `fails`, one undecided gives `inconclusive`; if every decisive
# check passes, a corroborating one that fails gives `inconclusive`, and otherwise the claim
# `holds`. A corroborating check left out, like the 30-digit cross-check below at the smoke size,
# decides nothing.

# %%
prefix = f"[{mmicl.parse_law(law)}] "  # a check run on one law names it first; left out below
for c in result.checks:
    outcome = {True: "passed", False: "FAILED", None: "undecided"}[c.passed]
    print(f"{outcome:>9}  {c.role:<13}  {c.method:<18}  {c.name.removeprefix(prefix)}")

# %% [markdown]
# ## One check's numbers and tolerances
#
# A check carries its numbers, and two different tolerances:
#
# - `tolerance` says what the check allowed when it decided, and where that allowance comes from;
# - `atol` and `rtol` (one for all numbers, or one per key) say how far each number may move
#   between two runs and still be the same result, |new − old| ≤ atol + rtol·|old|, and
#   `numbers_tolerance` says why. Comparing two runs (`mmicl compare`, or the `mmicl_baseline`
#   fixture of the next tutorial) judges a move by them.
#
# Here is the check that α_T tends to α\*: the distances α\* − α_T at the depths of the sweep,
# and the slope of the last decade on a log–log scale (−1: the gap falls like 1/T).

# %%
check = next(c for c in result.checks if "α*" in c.name)
print(check.name.removeprefix(prefix))
for key, value in check.numbers.items():
    print(f"  {key:<22} = {value}")
print("tolerance:\n" + textwrap.fill(check.tolerance, 96, initial_indent="  ", subsequent_indent="  "))
print("atol:", {key: float(value) for key, value in check.atol.items()})
print("rtol:", {key: float(value) for key, value in check.rtol.items()})
print("numbers_tolerance:\n" + textwrap.fill(check.numbers_tolerance, 96, initial_indent="  ", subsequent_indent="  "))

# %% [markdown]
# ## The key numbers
#
# `summary` holds the few numbers that the verdict tables show; `summary_tolerance` says how far
# they may move between runs.

# %%
print(result.summary)
print(result.summary_tolerance)

# %% [markdown]
# ## A law outside the theorem
#
# Theorem 6.2 needs s bounded. On an exponential law the claim does not fail: its hypothesis is
# not met, and the verdict names it. The checks are still reported, but decide nothing.

# %%
unbounded = mmicl.verify(["thm6.2"], law="s=exponential(1)", size="smoke", out=out)[0]
print(unbounded.verdict, "—", unbounded.verdict_reason)
for h in unbounded.hypotheses:
    if not h.met:
        print("not met:", h.text, "|", h.detail)

# %% [markdown]
# ## A claim of your own
#
# `@mmicl.claim(id, title=..., statement=...)` registers a function `evaluate(config)` that returns
# the claim's hypotheses, its checks and, optionally, its key numbers (`mmicl.Summary`). Ids are
# namespaced (`mine.…`); `replace=True` lets this cell run again. `config.size` is the size asked
# for, so a claim can do less work at `"smoke"`.
#
# The claim: on s=uniform(1,3), α\* is exactly 1/3, and α_T approaches it from below.

# %%
import math

from mmicl import hypotheses as hyp

LAW = "s=uniform(1,3)"


@mmicl.claim("mine.alpha_third", title="α* = 1/3 on s=uniform(1,3)",
             statement="For s=uniform(1,3), α* = 2/(2 + 1 + 3) = 1/3, and α_T < α* at every depth.",
             replace=True)
def evaluate(config: mmicl.RunConfig):
    hypotheses = [hyp.bounded_s(LAW), hyp.has_signal(LAW)]
    a = mmicl.alpha_star(LAW)
    exact = mmicl.Check(
        "α* equals 1/3", "closed form", abs(a - 1 / 3) <= 4 * math.ulp(1 / 3), {"alpha_star": a},
        tolerance="4 ulp of 1/3: α* is one division of float64 sums of the support's ends",
        rtol=1e-15, numbers_tolerance="a few float64 operations: it moves by rounding only")
    depth = 10 if config.size == "smoke" else 1000
    a_T = mmicl.alpha_T(LAW, depth)
    below = mmicl.Check(
        f"α_T < α* at T = {depth}", "root-finding", a_T < a, {"T": depth, "alpha_T": a_T},
        role="corroborating", atol={"T": 0}, rtol={"alpha_T": 1e-12},
        numbers_tolerance="T is a setting; α_T: the root finder's accuracy")
    key_numbers = mmicl.Summary({"alpha_star": a, "alpha_T": a_T}, rtol=1e-12,
                                why="the checks' own numbers, to the accuracy of α_T")
    return hypotheses, [exact, below], key_numbers


mine = mmicl.verify("mine.*", size="smoke", out=out)[0]
print(mine.id, "→", mine.verdict, "| origin:", mine.origin)
for c in mine.checks:
    print(f"  {c.passed!s:<5} {c.role:<13} {c.name}: {c.numbers}")
print("key numbers:", mine.summary)

# %% [markdown]
# ## When a check fails
#
# The same rule decides your claim's verdict. A decisive check that fails makes the claim fail;
# `mmicl.decide` shows the rule on its own.

# %%
print(mmicl.decide([], [mmicl.Check("a decisive check", "arithmetic", False)]))
print(mmicl.decide([], [mmicl.Check("decisive", "arithmetic", True),
                        mmicl.Check("side fact", "arithmetic", False, role="corroborating")]))

# %% [markdown]
# From the command line the same runs are `mmicl verify --size smoke --claim thm6.2 --law
# "s=uniform(1,3)"` and, for a claim in a file, `mmicl verify --plugin my_claims.py --claim
# 'mine.*'`. See [Writing your own claim](../own_claims.md) for everything a claim can return.
