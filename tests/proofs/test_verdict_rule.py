"""The verdict rule (``claim.decide``): decisive and corroborating checks, one function, and the
roles the built-in claims declare."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import mmicl.proofs.claims  # noqa: F401  (registers every built-in claim)
from mmicl.proofs.claim import CORROBORATING, Check, Claim, ClaimResult, DECISIVE, Hypothesis, ROLES, RunConfig, check_verdict, decide, verdict_of
from mmicl.proofs.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
MET, NOT_MET = Hypothesis("h", True), Hypothesis("h", False)


def _c(passed, role=DECISIVE, name="c"):
    return Check(name, "arithmetic", passed, role=role)


# ---------------------------------------------------------------------------------------------
# the rule
# ---------------------------------------------------------------------------------------------

D, C = DECISIVE, CORROBORATING
RULE = [
    # (checks as (passed, role), verdict)
    ([(True, D)], "holds"),
    ([(False, D)], "fails"),
    ([(None, D)], "inconclusive"),
    ([(True, D), (None, D), (False, D)], "fails"),  # a failed decisive check wins over an undecided one
    ([(True, D), (None, D)], "inconclusive"),
    ([(True, D), (False, C)], "inconclusive"),  # every decisive passes, a corroborating one fails
    ([(True, D), (None, C)], "holds"),  # an undecided corroborating check changes nothing
    ([(True, D), (None, C), (True, C)], "holds"),
    ([(True, D), (None, C), (False, C)], "inconclusive"),
    ([(False, D), (False, C)], "fails"),
    ([(None, D), (False, C)], "inconclusive"),
    ([(True, C)], "inconclusive"),  # no decisive check
    ([(True, C), (None, C)], "inconclusive"),
    ([], "inconclusive"),
]


@pytest.mark.parametrize("spec, verdict", RULE)
def test_the_rule(spec, verdict):
    checks = [_c(p, r, f"c{i}") for i, (p, r) in enumerate(spec)]
    assert verdict_of([MET], checks) == verdict
    assert decide([MET], checks)[0] == verdict


@pytest.mark.parametrize("spec", [s for s, _ in RULE])
def test_a_hypothesis_not_met_wins_over_every_check(spec):
    checks = [_c(p, r) for p, r in spec]
    v, why = decide([MET, NOT_MET], checks)
    assert v == "hypothesis-not-met" and "hypothesis not met" in why


def test_numpy_booleans_count_as_plain_ones():
    assert verdict_of([], [_c(np.bool_(False))]) == "fails"
    assert verdict_of([], [_c(np.bool_(True)), _c(np.bool_(False), C)]) == "inconclusive"
    assert verdict_of([], [_c(np.bool_(True))]) == "holds"


def test_the_reason_names_what_decided():
    stat = _c(None, C, "stationarity")
    v, why = decide([MET], [_c(True, D, "gap > 0"), stat])
    assert v == "holds" and "stationarity" in why and "changing nothing" in why
    v, why = decide([MET], [_c(True, D, "gap > 0"), _c(False, C, "mpmath")])
    assert v == "inconclusive" and "corroborating check failed: mpmath" in why
    v, why = decide([MET], [_c(None, D, "training")])
    assert v == "inconclusive" and "decisive check undecided: training" in why
    v, why = decide([MET], [_c(False, D, "gap > 0")])
    assert v == "fails" and "gap > 0" in why
    assert decide([MET], [_c(True, C)])[1].startswith("no decisive check")


def test_a_check_is_decisive_by_default_and_an_unknown_role_is_refused():
    assert Check("x", "m", True).role == DECISIVE and ROLES == ("decisive", "corroborating")
    assert Check("x", "m", True, {}, "", "", "corroborating").role == CORROBORATING
    with pytest.raises(ValueError, match="role"):
        Check("x", "m", True, role="side")
    c = Check("x", "m", True)
    c.role = "decisve"  # a typo set after construction is refused by the rule, not read as corroborating
    with pytest.raises(ValueError, match="role"):
        decide([], [c])


def test_claim_run_uses_the_rule_and_json_carries_roles_and_the_reason(tmp_path):
    claim = Claim("test.roles", "roles", "x", lambda cfg: (
        [MET], [_c(True, D, "main"), _c(None, C, "side")], {}, []), default=False)
    r = claim.run(RunConfig(out=tmp_path))
    assert r.verdict == "holds" and "side" in r.verdict_reason
    doc = r.to_json()
    assert [c["role"] for c in doc["evidence"]["checks"]] == ["decisive", "corroborating"]
    assert doc["verdict_reason"] == r.verdict_reason


def test_a_reported_side_check_gets_its_verdict_from_the_rule():
    for passed, word in ((True, "holds"), (False, "fails"), (None, "inconclusive")):
        for role in ROLES:  # reported alone, a check is judged as a decisive one
            c = _c(passed, role)
            assert check_verdict(c) == word
            assert c.role == role  # not changed by being judged


def test_no_other_module_decides_a_verdict():
    """Only ``claim.decide`` turns checks into a verdict: no other module of proofs/ calls a
    verdict of its own from a check's ``passed`` (``claim`` and the command that prints a
    check's status aside, which maps one check, never a claim)."""
    words = {"holds", "fails", "inconclusive", "hypothesis-not-met"}
    offenders = []
    for path in sorted((ROOT / "proofs").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in ("proofs/claim.py", "mmicl/commands/limits.py", "mmicl/cli.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in (True, False, None)
                                                  for k in node.keys if k is not None):
                if any(isinstance(v, ast.Constant) and v.value in words for v in node.values):
                    offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []


# ---------------------------------------------------------------------------------------------
# the built-in claims' roles
# ---------------------------------------------------------------------------------------------


def _roles(result: ClaimResult) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {r: [] for r in ROLES}
    for c in result.checks:
        out[c.role].append(c.name)
    return out


@pytest.fixture(scope="module")
def thm41_beta(tmp_path_factory):
    """thm4.1 at the quick size on s=beta(0.5,1,1,2): one Monte Carlo side check cannot resolve the
    gap there (~8 s)."""
    import torch

    out = tmp_path_factory.mktemp("thm41")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `mmicl verify` runs it: many small models, one thread each
    try:
        return REGISTRY["thm4.1"].run(RunConfig(quick=True, law="s=beta(0.5,1,1,2)", out=out))
    finally:
        torch.set_num_threads(threads)


@pytest.mark.train
def test_thm41_holds_on_the_beta_law_with_its_side_check_undecided(thm41_beta):
    r = thm41_beta
    assert r.verdict == "holds", r.verdict_reason
    undecided = [c for c in r.checks if c.passed is None]
    assert undecided, "the case this test is about: a corroborating check is undecided"
    assert all(c.role == CORROBORATING for c in undecided)
    assert any("stationary point" in c.name and "n=∞" in c.name for c in undecided)
    assert "stationary point" in r.verdict_reason
    gap = next(c for c in r.checks if c.name.startswith("the best LSA is not Bayes-optimal"))
    assert gap.passed is True and gap.numbers["gap"] > gap.numbers["gap_tolerance"] > 0


def test_thm41_roles(thm41_beta):
    roles = _roles(thm41_beta)
    decisive = roles[DECISIVE]
    assert len(decisive) == 3
    assert any(n.startswith("the full LSA collapses") for n in decisive)
    assert any(n.startswith("the best LSA is not Bayes-optimal") for n in decisive)
    # the statement says training reaches the exact optimum and does not beat it: decisive
    assert "the trained full LSA reaches the exact best LSA and does not beat it" in decisive
    side = roles[CORROBORATING]
    for part in ("block closed form", "Monte Carlo of the real layer", "stationary point", "LCA at T=1"):
        assert any(part in n for n in side), part


def test_thm62_roles(tmp_path):
    r = REGISTRY["thm6.2"].run(RunConfig(quick=True, smoke=True, out=tmp_path, law="s=uniform(0.5,4)"))
    roles = _roles(r)
    for part in ("the flow's limit is the minimiser", "strictly convex", "α_T → α*", "the excess risk at α_T → 0"):
        assert any(part in n for n in roles[DECISIVE]), part
    for part in ("SymPy closed form = d×d matrix", "lies in [1/(1+s_hi)", "30-digit mpmath", "convention:"):
        assert any(part in n for n in roles[CORROBORATING]), part
    assert len(roles[DECISIVE]) == 4


def test_untied_roles(tmp_path):
    r = REGISTRY["ext.untied"].run(RunConfig(quick=True, smoke=True, out=tmp_path, law="s=twopoint(1,3,0.3)"))
    roles = _roles(r)
    assert any("mpmath" in n for n in roles[CORROBORATING])
    for part in ("SymPy closed form", "never above the tied", "exactly 0 from T = 2"):
        assert any(part in n for n in roles[DECISIVE]), part
    assert r.verdict == "holds"


def test_the_readme_states_the_rule():
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### How a verdict is decided"):text.index("### Where each figure comes from")]
    for phrase in ("decisive", "corroborating", "A decisive check fails → **`fails`**",
                   "a decisive check is undecided → **`inconclusive`**",
                   "a corroborating check fails → **`inconclusive`**", "changes nothing",
                   "There is no decisive check", "`hypothesis-not-met`"):
        assert phrase in section, phrase
    assert "issue" not in section.lower()
