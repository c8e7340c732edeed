"""The theorem registry: each claim (docs/model.md, "The claims") as an object with its checks.

A ``Claim`` has an id, a statement, its hypotheses and a ``run(config) -> ClaimResult``.  A run
collects ``Check`` results (each with its method, its numbers, where its tolerance comes from and
its role) and turns them into a verdict by one rule, ``decide`` (``verdict_of`` is its verdict):

- ``hypothesis-not-met`` if a hypothesis of the theorem fails for the task law given (the checks
  are then reported but decide nothing);
- otherwise each check is ``decisive`` (the claim's statement depends on it) or ``corroborating``
  (a second route to the same numbers, a control, a side fact), and
  - a decisive check that fails → ``fails``;
  - a decisive check that is undecided → ``inconclusive``;
  - no decisive check at all → ``inconclusive``;
  - every decisive check passes and a corroborating one fails → ``inconclusive``;
  - every decisive check passes and no corroborating one fails → ``holds``: a corroborating check
    that is undecided is reported with its reason and changes nothing.

A ``Check`` is decisive unless its claim declares it corroborating: the cautious default, since a
check of undeclared role then weighs fully (its failure fails the claim, its indecision leaves
the claim inconclusive).
"""
from __future__ import annotations

import fnmatch
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

Verdict = Literal["holds", "fails", "hypothesis-not-met", "inconclusive"]
VERDICTS: tuple[str, ...] = ("holds", "fails", "hypothesis-not-met", "inconclusive")
Role = Literal["decisive", "corroborating"]
ROLES: tuple[str, ...] = ("decisive", "corroborating")
DECISIVE, CORROBORATING = ROLES


@dataclass
class Check:
    """One piece of evidence: ``passed`` is True, False, or None (could not decide).

    ``role``: ``"decisive"`` (the default) when the claim's statement depends on the check,
    ``"corroborating"`` when it is a second route to numbers a decisive check already uses, a
    control or a side fact.  How the roles combine into a verdict: ``decide``."""

    name: str
    method: str  # "symbolic" | "quadrature" | "root-finding" | "ode" | "monte-carlo" | "empirical" | ...
    passed: bool | None
    numbers: dict[str, Any] = field(default_factory=dict)
    tolerance: str = ""  # where the tolerance comes from
    detail: str = ""
    role: Role = DECISIVE

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"a check's role is one of {ROLES}, got {self.role!r} (check {self.name!r})")


def corroborating(check: Check) -> Check:
    """``check`` with its role set to corroborating (returned, for use inside a list of checks)."""
    check.role = CORROBORATING
    return check


@dataclass
class Hypothesis:
    text: str
    met: bool
    detail: str = ""


@dataclass
class RunConfig:
    """What a claim run may use: the size (quick or full), where to write figures, the seed,
    the torch device for Monte Carlo, and optionally a task law (LAW text) to check the claim on."""

    quick: bool = True
    out: Path = Path("results")
    seed: int = 0
    device: str = "cpu"
    law: str | None = None
    smoke: bool = False
    """The reduced size of the random-law property test (tests/test_claims_property.py): short
    depth sweeps, no Monte Carlo training and no basin maps; implies ``quick``."""
    scheduler: str | None = None
    """The address of a Dask scheduler that the testbed claims send their training runs to (None:
    they train in this process)."""
    testbed_threads: int | None = None
    """torch CPU threads while a testbed claim trains (None: torch's setting is left alone)."""

    def __post_init__(self):
        """A bad seed, device, folder or law is refused here, before any claim runs (``InputError``,
        a ``ValueError``), not by numpy or torch halfway through a run."""
        from mmicl.numerics.validate import InputError, check_seed

        self.seed = check_seed(self.seed)
        if self.device not in ("cpu", "cuda"):
            raise InputError(f"device must be 'cpu' or 'cuda', got {self.device!r}")
        if isinstance(self.out, str) and not self.out.strip():
            raise InputError("out must be a folder path, got an empty string")
        self.out = Path(self.out)
        if self.law is not None and not isinstance(self.law, str):
            raise InputError(f"law must be LAW text (a str) or None, got {type(self.law).__name__}")
        if self.scheduler is not None and (not isinstance(self.scheduler, str) or not self.scheduler.strip()):
            raise InputError(f"scheduler must be a Dask scheduler address such as 'tcp://host:8786', got {self.scheduler!r}")
        if self.testbed_threads is not None and (isinstance(self.testbed_threads, bool) or
                                                 not isinstance(self.testbed_threads, int) or self.testbed_threads < 1):
            raise InputError(f"testbed_threads must be a positive whole number or None, got {self.testbed_threads!r}")

    @property
    def figures(self) -> Path:
        p = Path(self.out) / "figures"
        p.mkdir(parents=True, exist_ok=True)
        return p


@dataclass
class ClaimResult:
    id: str
    verdict: Verdict
    statement: str
    hypotheses: list[Hypothesis]
    checks: list[Check]
    summary: dict[str, Any] = field(default_factory=dict)  # the key numbers for the table
    figures: list[str] = field(default_factory=list)
    seconds: float = 0.0
    verdict_reason: str = ""
    """Why the verdict is what it is (``decide``): the checks that made it, and the corroborating
    checks left undecided, which change nothing."""

    def to_json(self, relative_to: str | Path | None = None) -> dict:
        """The result as JSON of plain Python types only (dict, list, str, int, float, bool, None),
        as mmicl writes its files (``numerics.strict_json``): numpy scalars and arrays become
        numbers, booleans and lists; a NaN or infinity becomes null with its reason under
        ``"<key>_null_reason"``; ``json.dumps(..., allow_nan=False)`` accepts it.  With
        ``relative_to`` (the output folder), figure paths are written relative to it, so that the
        folder can be moved or copied with its figures."""
        from mmicl.numerics.strict_json import to_strict

        return _plain_types(to_strict({
            "id": self.id,
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason,
            "evidence": {
                "statement": self.statement,
                "summary": self.summary,
                "hypotheses": [asdict(h) for h in self.hypotheses],
                "checks": [asdict(c) for c in self.checks],
                "figures": [_relative(f, relative_to) for f in self.figures],
                "seconds": round(float(self.seconds), 3),
            },
        }))


def _plain_types(obj: Any) -> Any:
    """``obj`` (already JSON-shaped) with every number, string and boolean of exactly its plain type:
    ``to_strict`` keeps subclasses such as numpy's float64 and int64 as they are."""
    if isinstance(obj, dict):
        return {str(k): _plain_types(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain_types(v) for v in obj]
    if isinstance(obj, bool) or obj is None:
        return None if obj is None else bool(obj)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return float(obj)
    if isinstance(obj, str):
        return str(obj)
    return obj


def _relative(path: str, root: str | Path | None) -> str:
    """``path`` relative to ``root`` (POSIX separators), or unchanged where it does not lie under it."""
    if root is None:
        return path
    p, r = Path(path).absolute(), Path(root).absolute()
    try:
        return p.relative_to(r).as_posix()
    except ValueError:
        return path


def decide(hypotheses: list[Hypothesis], checks: list[Check]) -> tuple[Verdict, str]:
    """The verdict of a claim from its hypotheses and checks, and the reason for it: the one place
    where a verdict is decided (the module docstring states the rule)."""
    unmet = [h.text for h in hypotheses if not h.met]
    if unmet:
        return "hypothesis-not-met", "hypothesis not met: " + "; ".join(unmet)
    for c in checks:
        if c.role not in ROLES:
            raise ValueError(f"a check's role is one of {ROLES}, got {c.role!r} (check {c.name!r})")

    def outcome(c: Check) -> bool | None:  # a numpy boolean counts as the plain one
        return None if c.passed is None else bool(c.passed)

    decisive = [c for c in checks if c.role == DECISIVE]
    side = [c for c in checks if c.role == CORROBORATING]
    names = lambda cs: "; ".join(c.name for c in cs)  # noqa: E731
    side_undecided = [c for c in side if outcome(c) is None]
    note = (f" (corroborating, undecided, changing nothing: {names(side_undecided)})" if side_undecided else "")
    failed = [c for c in decisive if outcome(c) is False]
    if failed:
        return "fails", f"decisive check failed: {names(failed)}"
    if not decisive:
        return "inconclusive", "no decisive check" + note
    undecided = [c for c in decisive if outcome(c) is None]
    if undecided:
        return "inconclusive", f"decisive check undecided: {names(undecided)}" + note
    side_failed = [c for c in side if outcome(c) is False]
    if side_failed:
        return "inconclusive", (f"every decisive check passed, but a corroborating check failed: "
                                f"{names(side_failed)}" + note)
    return "holds", f"every decisive check passed ({len(decisive)})" + note


def verdict_of(hypotheses: list[Hypothesis], checks: list[Check]) -> Verdict:
    """The verdict of ``decide``."""
    return decide(hypotheses, checks)[0]


def check_verdict(check: Check) -> Verdict:
    """The verdict ``check`` would give on its own as a claim's one decisive check (for evidence
    that is reported beside a claim, not part of its checks): by ``decide``, never recomputed."""
    from dataclasses import replace

    return verdict_of([], [replace(check, role=DECISIVE)])


@dataclass
class Claim:
    id: str
    title: str
    statement: str
    evaluate: Callable[[RunConfig], tuple[list[Hypothesis], list[Check], dict, list[str]]]
    """Returns (hypotheses, checks, summary numbers, figure paths)."""
    default: bool = True
    """Run by a plain ``mmicl verify``; heavy empirical claims (the testbed) set False and run on
    request (``--claim 'testbed.*'`` or ``--all``)."""

    def run(self, config: RunConfig) -> ClaimResult:
        t0 = time.perf_counter()
        hyps, checks, summary, figs = self.evaluate(config)
        for c in checks:  # numpy booleans become plain ones
            c.passed = None if c.passed is None else bool(c.passed)
        for h in hyps:
            h.met = bool(h.met)
        verdict, reason = decide(hyps, checks)
        return ClaimResult(
            id=self.id,
            verdict=verdict,
            verdict_reason=reason,
            statement=self.statement,
            hypotheses=hyps,
            checks=checks,
            summary=summary,
            figures=[str(f) for f in figs],
            seconds=time.perf_counter() - t0,
        )


REGISTRY: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    if claim.id in REGISTRY:
        raise ValueError(f"claim {claim.id!r} is registered twice")
    REGISTRY[claim.id] = claim
    return claim


def claims(everything: bool = True) -> dict[str, str]:
    """``{id: title}`` of the registered claims (only the default ones with ``everything=False``)."""
    from . import claims as _register  # noqa: F401  (importing registers every claim)

    return {c.id: c.title for c in REGISTRY.values() if c.default or everything}


def select(patterns: list[str] | tuple[str, ...], everything: bool = False) -> list[Claim]:
    """The claims whose ids match any of the glob patterns; with no pattern, the default claims
    (or all of them with ``everything``)."""
    from . import claims  # noqa: F401  (importing registers every claim)

    if not patterns:
        return [c for c in REGISTRY.values() if c.default or everything]
    chosen = [c for c in REGISTRY.values() if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    unknown = [p for p in patterns if not any(fnmatch.fnmatchcase(c.id, p) for c in REGISTRY.values())]
    if unknown:
        raise KeyError(f"no claim matches {unknown}; known claims: {sorted(REGISTRY)}")
    return chosen


def verify(claims: str | list[str] | tuple[str, ...] = (), *, quick: bool = True, law=None, seed: int = 0,
           device: str = "cpu", out: str | Path = "results", everything: bool = False) -> list[ClaimResult]:
    """Run claims and return their results (``ClaimResult``: ``.verdict``, ``.hypotheses``,
    ``.checks``, ``.summary``, ``.figures``, ``.to_json()``).

    ``claims``: ids or glob patterns (``"thm6.2"``, ``"testbed.*"``); none means the default claims
    (all of them with ``everything=True``).  ``law``: a ``TaskLaw`` or LAW text to check the claims
    on instead of each claim's own laws.  Figures go to ``out/figures``.  Unlike the ``mmicl verify``
    command this writes no ``verdicts.json`` or report and leaves torch's thread count alone.

    Refused before any claim runs, each with a one-line ``InputError``/``LawError``: ``device="cuda"``
    where torch sees no CUDA GPU, a law that the command line refuses (``numerics.validate``:
    ``d1 + d2 ≤ MAX_DIM_VERIFY``, squared norms ≤ ``MAX_LAW_SCALE``, ``E[ζ²]`` in ``[MIN_ZETA2, MAX_ZETA2]``)."""
    from mmicl.numerics.validate import check_verify_inputs
    law = check_verify_inputs(law, device)  # LAW text or None; a bad device or law is refused here
    patterns = [claims] if isinstance(claims, str) else list(claims)
    chosen = select(patterns, everything)
    if law is not None and not isinstance(law, str):
        law = law.spec()  # a TaskLaw: its LAW text
    if law is not None:
        from mmicl.numerics.law_language import parse_law

        parse_law(law)  # a bad law fails here, before any claim runs
    config = RunConfig(quick=quick, out=Path(out), seed=seed, device=device, law=law)  # checks seed, device
    return [claim.run(config) for claim in chosen]
