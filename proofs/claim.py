"""A claim (docs/model.md, "The claims") as an object with its checks, and the one verdict rule.

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

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

from mmicl.theory.errors import InputError
from mmicl.numerics.strict_json import to_strict
from mmicl.numerics.atomic import DiskFullError
from mmicl.proofs.cases import CaseError, CaseType

__all__ = ["Verdict", "VERDICTS", "Role", "ROLES", "DECISIVE", "CORROBORATING", "BUILTIN", "MOVE_Z", "Check",
           "check_number_tolerance", "check_sampled", "tolerance_of", "corroborating", "Summary", "Hypothesis", "SIZES", "RunConfig",
           "ClaimResult", "relative_path", "decide", "judged_outcome", "judged_met", "verdict_of", "check_verdict",
           "ClaimError", "Claim", "ModuleFunction", "CaseType", "CaseError"]

Verdict = Literal["holds", "fails", "hypothesis-not-met", "inconclusive", "error"]
VERDICTS: tuple[str, ...] = ("holds", "fails", "hypothesis-not-met", "inconclusive", "error")
"""Every verdict a claim can get: the four of ``decide``, and ``"error"`` for a claim whose
``evaluate`` raised (``Claim.run``): that says nothing about the statement, only about its code."""
Role = Literal["decisive", "corroborating"]
ROLES: tuple[str, ...] = ("decisive", "corroborating")
DECISIVE, CORROBORATING = ROLES
BUILTIN = "built-in"
"""The origin of the claims that ship with mmicl."""
MOVE_Z = 4.0
"""Standard errors of a difference that a sampled number may move by between two runs and still be
the same result (two-sided, for two independent estimates: a false alarm on about 6 numbers in
100 000).  Used by ``mmicl compare`` across seeds and by the built-in checks' ``atol``s."""


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
    atol: float | dict[str, float] | None = None
    rtol: float | dict[str, float] | None = None
    """How far this check's ``numbers`` may move between two runs and still be the same result,
    |new − old| ≤ atol + rtol·|old| (``mmicl compare``, the ``mmicl_baseline`` fixture).  A number
    applies to every entry of ``numbers``; a dict gives each top-level key its own (a list or dict
    under a key shares the key's).  A key that neither states: the caller's ``--rtol``.
    ``numbers_tolerance`` says, in words, where they come from."""
    numbers_tolerance: str = ""
    """Where ``atol`` and ``rtol`` come from (the decision's tolerance is ``tolerance``): the
    accuracy of the computation behind each number, or its sampling error."""
    sampled: bool | tuple[str, ...] = ()
    """The top-level keys of ``numbers`` whose values depend on the run's seed (``True``: all of
    them): Monte Carlo estimates, trained parameters, which restart won.  Two runs with different
    seeds are not reruns of each other: ``mmicl compare`` judges a sampled number that has an
    ``se`` as two independent estimates, and leaves one without an ``se`` uncompared (its check's
    outcome still is).  The other keys are the same whatever the seed, and keep ``atol``/``rtol``."""
    se: dict[str, float | str] | None = None
    """Standard errors of sampled keys that are estimates: per key, a number (the se of every number
    under the key) or the name of another key of ``numbers`` holding the se's, element by element
    (``{"alpha_inf": "alpha_inf_se"}``).  Two runs with different seeds agree on such a number when
    |new − old| ≤ ``MOVE_Z``·√(se_old² + se_new²) (``mmicl.compare``)."""

    def __post_init__(self):
        self.sampled, self.se = check_sampled(self.sampled, self.se, f"check {self.name!r}")
        for name in ("atol", "rtol"):
            check_number_tolerance(getattr(self, name), f"a check's {name}", f"check {self.name!r}")
            value = getattr(self, name)  # plain floats (a numpy scalar prints as np.float64(…))
            if isinstance(value, dict):
                setattr(self, name, {k: float(v) for k, v in value.items()})
            elif value is not None:
                setattr(self, name, float(value))
        if self.role not in ROLES:
            raise ValueError(f"a check's role is one of {ROLES}, got {self.role!r} (check {self.name!r})")


def check_number_tolerance(value, what: str, where: str) -> None:
    """``value`` is None, a finite number ≥ 0, or a dict from number keys to such numbers."""
    def bad(v):
        return isinstance(v, bool) or not isinstance(v, (int, float)) or not (v >= 0 and v < float("inf"))

    if value is None:
        return
    if isinstance(value, dict):
        wrong = {k: v for k, v in value.items() if not isinstance(k, str) or bad(v)}
        if wrong:
            raise ValueError(f"{what} maps number keys (str) to finite numbers ≥ 0, got {wrong!r} ({where})")
    elif bad(value):
        raise ValueError(f"{what} is a finite number ≥ 0, a dict of them per number key, or None, got {value!r} ({where})")


def check_sampled(sampled, se, where: str) -> tuple[bool | tuple[str, ...], dict | None]:
    """``sampled`` and ``se`` as ``Check`` states them (``True``, or a tuple of key names; a dict
    from key names to an se ≥ 0 or the name of the key holding the se's), or ``ValueError``."""
    if isinstance(sampled, bool):
        keys = sampled
    elif isinstance(sampled, (list, tuple, set, frozenset)) and all(isinstance(k, str) for k in sampled):
        keys = tuple(sorted(set(sampled)))
    else:
        raise ValueError(f"sampled is True, False or a tuple of number keys, got {sampled!r} ({where})")
    if se is None:
        return keys, None
    if not isinstance(se, dict) or not all(isinstance(k, str) for k in se):
        raise ValueError(f"se maps number keys to standard errors, got {se!r} ({where})")
    out = {}
    for k, v in se.items():
        if isinstance(v, str):
            out[k] = v
        elif isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < float("inf")):
            raise ValueError(f"se[{k!r}] is a finite number ≥ 0 or the name of a key holding the se's, got {v!r} "
                             f"({where})")
        else:
            out[k] = float(v)
    if keys is not True and not set(out) <= set(keys):
        raise ValueError(f"se names keys that sampled does not list: {sorted(set(out) - set(keys))} ({where}); "
                         "an estimate with a standard error depends on the seed")
    return keys, out


def tolerance_of(atol, rtol, key: str) -> tuple[float, float] | None:
    """The ``(atol, rtol)`` that ``atol`` and ``rtol`` (each None, a number or a dict per key, as
    in ``Check``) give the number under the top-level ``key``; None when neither states one."""
    a = atol.get(key) if isinstance(atol, dict) else atol
    r = rtol.get(key) if isinstance(rtol, dict) else rtol
    if a is None and r is None:
        return None
    return float(a or 0.0), float(r or 0.0)


def corroborating(check: Check) -> Check:
    """``check`` with its role set to corroborating (returned, for use inside a list of checks)."""
    check.role = CORROBORATING
    return check


class Summary(dict):
    """A claim's key numbers (a dict) with how far they may move between two runs: ``atol`` and
    ``rtol`` as in ``Check`` (a number, or a dict per key), ``why`` where they come from;
    ``sampled`` and ``se`` as in ``Check``.  Return
    it from ``evaluate`` in place of a plain dict; a plain dict states no numeric tolerance."""

    def __init__(self, numbers=(), *, atol=None, rtol=None, why: str = "", sampled=(), se=None):
        super().__init__(numbers)
        for name, v in (("atol", atol), ("rtol", rtol)):
            check_number_tolerance(v, f"a summary's {name}", "Summary")
        self.atol, self.rtol, self.why = atol, rtol, why
        self.sampled, self.se = check_sampled(sampled, se, "Summary")


@dataclass
class Hypothesis:
    """One hypothesis of a claim, decided for the law at hand: ``text`` states it, ``met`` says
    whether the law meets it, ``detail`` gives the law's numbers behind that.  A hypothesis not met
    makes the claim's verdict ``hypothesis-not-met`` (``decide``); ``mmicl.hypotheses`` builds the
    shared ones."""

    text: str
    met: bool
    detail: str = ""


SIZES: tuple[str, ...] = ("smoke", "quick", "full")
"""The sizes a claim runs at: ``smoke`` (property tests over many laws: the least work that can
decide; a check that cannot decide there says undecided), ``quick`` (the whole registry in about
a minute on 2 cores), ``full`` (the sizes of the verdicts mmicl reports)."""


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
    """The smallest size, for property tests over many laws: short depth sweeps, short Monte Carlo
    training and no basin maps; implies ``quick``.  ``RunConfig.sized("smoke")`` sets it."""
    scheduler: str | None = None
    """The address of a Dask scheduler that the testbed claims send their training runs to (None:
    they train in this process)."""
    testbed_threads: int | None = None
    """torch CPU threads while a testbed claim trains (None: torch's setting is left alone)."""
    variant: str | None = None
    """The LCA variant to check (``numerics.variants.parse_variant`` text, e.g.
    ``"readout=evolved-keys-and-query"``); None or the default's text: mmicl's default LCA.  Stored
    as the variant's full text, or None for the default.  The built-in claims about the paper's
    theorems say ``hypothesis-not-met`` on another variant; the claims ``variant.*`` check it."""
    case: str | None = None
    """The case to check a claim with its own kind of case on (``Claim.case``, a ``CaseType``), as
    text; None: the claim's own cases."""
    case_value: Any = field(default=None, repr=False, compare=False)
    """``case`` as the running claim's ``CaseType`` read it (set by ``Claim.run``; None without a case)."""

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
        if self.case is not None and (not isinstance(self.case, str) or not self.case.strip()):
            raise InputError(f"case must be text (a str) or None, got {self.case!r}")
        if self.scheduler is not None and (not isinstance(self.scheduler, str) or not self.scheduler.strip()):
            raise InputError(f"scheduler must be a Dask scheduler address such as 'tcp://host:8786', got {self.scheduler!r}")
        if self.variant is not None:
            from mmicl.numerics.variants import parse_variant

            v = parse_variant(self.variant)  # an InputError names the bad key or value
            self.variant = None if v.is_default else v.text
        if self.testbed_threads is not None and (isinstance(self.testbed_threads, bool) or
                                                 not isinstance(self.testbed_threads, int) or self.testbed_threads < 1):
            raise InputError(f"testbed_threads must be a positive whole number or None, got {self.testbed_threads!r}")

    @classmethod
    def sized(cls, size: str, **kwargs) -> "RunConfig":
        """A config of the named size: ``"smoke"``, ``"quick"`` or ``"full"`` (``SIZES``)."""
        from mmicl.numerics.validate import InputError

        if size not in SIZES:
            raise InputError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
        return cls(quick=size != "full", smoke=size == "smoke", **kwargs)

    def rng(self, *purpose: int | str):
        """A numpy ``Generator`` for one purpose of the run, seeded by ``(seed, *purpose)``: the same
        run gives the same draws for the same purpose, and different purposes independent streams
        (``numpy.random.SeedSequence``).  A text in ``purpose`` enters by its SHA-256."""
        import hashlib

        import numpy as np

        key = [int(self.seed)]
        for p in purpose:
            if isinstance(p, bool) or not isinstance(p, (int, str)) or (isinstance(p, int) and p < 0):
                raise ClaimError(f"RunConfig.rng takes whole numbers ≥ 0 or texts, got {p!r}")
            key.append(p if isinstance(p, int) else int.from_bytes(hashlib.sha256(p.encode()).digest()[:8], "little"))
        return np.random.default_rng(np.random.SeedSequence(key))

    @property
    def size(self) -> str:
        """``"smoke"``, ``"quick"`` or ``"full"``."""
        return "smoke" if self.smoke else "quick" if self.quick else "full"

    @property
    def figures(self) -> Path:
        p = Path(self.out) / "figures"
        p.mkdir(parents=True, exist_ok=True)
        return p


@dataclass
class ClaimResult:
    """What running one claim gives (``verify``, ``Claim.run``): its ``id``, ``verdict`` (one of
    ``VERDICTS``) and ``statement``; the ``hypotheses`` and ``checks`` behind the verdict; the key
    numbers (``summary``), the figures written, the run time in ``seconds``, and the fields below.
    ``to_json()`` gives it as written to ``verdicts.json``."""

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
    origin: str = BUILTIN
    """The claim's origin (``Claim.origin``)."""
    error: str = ""
    """For the verdict ``"error"``: the last frames of the traceback of ``evaluate``."""
    summary_atol: float | dict[str, float] | None = None
    summary_rtol: float | dict[str, float] | None = None
    summary_tolerance: str = ""
    """How far the ``summary``'s numbers may move between two runs, as ``Check.atol`` and
    ``Check.rtol`` for a check's numbers, and where that comes from."""
    summary_sampled: bool | tuple[str, ...] = ()
    summary_se: dict[str, float | str] | None = None
    """The ``summary``'s numbers that depend on the seed, and their se's, as ``Check.sampled`` and
    ``Check.se``."""

    def __post_init__(self):
        for name in ("summary_atol", "summary_rtol"):
            check_number_tolerance(getattr(self, name), name, f"claim {self.id!r}")
        self.summary_sampled, self.summary_se = check_sampled(self.summary_sampled, self.summary_se,
                                                              f"claim {self.id!r}")

    def to_json(self, relative_to: str | Path | None = None) -> dict:
        """The result as JSON of plain Python types only (dict, list, str, int, float, bool, None),
        as mmicl writes its files (``numerics.strict_json``): numpy scalars and arrays become
        numbers, booleans and lists; a NaN or infinity becomes null with its reason under
        ``"<key>_null_reason"``; ``json.dumps(..., allow_nan=False)`` accepts it.  With
        ``relative_to`` (the output folder), figure paths are written relative to it, so that the
        folder can be moved or copied with its figures."""

        return _plain_types(to_strict({
            "id": self.id,
            "origin": self.origin,
            "verdict": self.verdict,
            "verdict_reason": self.verdict_reason,
            **({"error": self.error} if self.error else {}),
            "evidence": {
                "statement": self.statement,
                "summary": self.summary,
                **{k: getattr(self, k) for k in ("summary_atol", "summary_rtol") if getattr(self, k) is not None},
                **({"summary_tolerance": self.summary_tolerance} if self.summary_tolerance else {}),
                **({"summary_sampled": self.summary_sampled} if self.summary_sampled else {}),
                **({"summary_se": self.summary_se} if self.summary_se else {}),
                "hypotheses": [asdict(h) for h in self.hypotheses],
                "checks": [_check_json(c) for c in self.checks],
                "figures": [relative_path(f, relative_to) for f in self.figures],
                "seconds": round(float(self.seconds), 3),
            },
        }))


def _check_json(c: Check) -> dict:
    """A check as JSON; ``atol``, ``rtol``, ``numbers_tolerance``, ``sampled`` and ``se`` only where
    the check states them."""
    d = asdict(c)
    for k in ("atol", "rtol", "numbers_tolerance", "sampled", "se"):
        if d[k] is None or d[k] == "" or d[k] == () or d[k] is False:
            del d[k]
    return d


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


def relative_path(path: str, root: str | Path | None) -> str:
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
    unmet = [h.text for h in hypotheses if not judged_met(h)]
    if unmet:
        return "hypothesis-not-met", "hypothesis not met: " + "; ".join(unmet)
    for c in checks:
        if c.role not in ROLES:
            raise ValueError(f"a check's role is one of {ROLES}, got {c.role!r} (check {c.name!r})")

    outcome = judged_outcome

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


def judged_outcome(check: Check) -> bool | None:
    """``check.passed`` as the verdict rule reads it: ``True``, ``False`` or ``None`` (undecided); a
    numpy boolean counts as the plain one.  Anything else (a NaN, the string ``"False"``, a number)
    is a ``ClaimError`` naming the check: read as a truth value it would pass silently."""
    return _truth(check.passed, f"check {check.name!r}: passed", allow_none=True)


def judged_met(hypothesis: Hypothesis) -> bool:
    """``hypothesis.met`` as the verdict rule reads it: ``True`` or ``False`` (a numpy boolean counts
    as the plain one); anything else is a ``ClaimError`` naming the hypothesis."""
    return _truth(hypothesis.met, f"hypothesis {hypothesis.text!r}: met", allow_none=False)


def _truth(value, what: str, allow_none: bool) -> bool | None:
    import numpy as np

    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    allowed = "True, False or None (undecided)" if allow_none else "True or False"
    shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
    raise ClaimError(f"{what} must be {allowed}, got {shown} ({type(value).__name__})")


def verdict_of(hypotheses: list[Hypothesis], checks: list[Check]) -> Verdict:
    """The verdict of ``decide``."""
    return decide(hypotheses, checks)[0]


def check_verdict(check: Check) -> Verdict:
    """The verdict ``check`` would give on its own as a claim's one decisive check (for evidence
    that is reported beside a claim, not part of its checks): by ``decide``, never recomputed."""
    from dataclasses import replace

    return verdict_of([], [replace(check, role=DECISIVE)])


class ModuleFunction:
    """A function named by its module and name, imported at its first call: a claim's ``evaluate``
    that listing the claim does not import (the built-in claims', ``proofs.claims.catalog``, whose
    modules import torch, SciPy and SymPy).  Calling it calls the function; ``function()`` imports
    and returns it; it pickles as its two names."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name
        self.__module__ = module  # where the function is defined (registry.current_origin reads it)
        self._function = None

    def function(self) -> Callable:
        """The function, imported on the first call."""
        if self._function is None:
            from importlib import import_module

            self._function = getattr(import_module(self.module), self.name)
        return self._function

    def __call__(self, *args, **kwargs):
        return self.function()(*args, **kwargs)

    def __getstate__(self) -> dict:
        return {"module": self.module, "name": self.name}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["module"], state["name"])

    def __repr__(self) -> str:
        return f"ModuleFunction({self.module!r}, {self.name!r})"


class ClaimError(InputError):
    """A claim that cannot be registered or run as given (its id, its fields, its ``evaluate``'s
    return value); the message says which and what is allowed."""


@dataclass
class Claim:
    """A statement with the function that checks it.

    ``evaluate(config: RunConfig)`` returns ``(hypotheses, checks)``, ``(hypotheses, checks,
    summary)`` or ``(hypotheses, checks, summary, figures)``: lists of ``Hypothesis`` and
    ``Check``, a dict of key numbers for the verdict table, and the paths of the figures it wrote.
    The verdict follows from them by ``decide``."""

    id: str
    title: str
    statement: str
    evaluate: Callable[[RunConfig], tuple]
    default: bool = True
    """Run by a plain ``mmicl verify``; heavy empirical claims (the testbed) set False and run on
    request (``--claim 'testbed.*'`` or ``--all``)."""
    origin: str | None = None
    """Where the claim comes from: ``"built-in"``, the plugin that registered it (its distribution
    and version, or its file or module), or ``"user"`` (a script or notebook).  Left ``None``,
    ``register`` fills it in from where it is called."""
    variants: tuple[str, ...] = ()
    """The LCA variants (``RunConfig.variant`` texts) the statement covers besides mmicl's default;
    ``("*",)``: any.  A built-in claim run with another variant says ``hypothesis-not-met`` without
    computing anything; a claim of another origin gets ``config.variant`` and decides itself."""
    case: CaseType | None = None
    """The claim's own kind of case (``cases.CaseType``), for a claim checked on something other
    than a task law: ``mmicl verify --case TEXT`` runs it on that case (``RunConfig.case``), which
    ``evaluate`` reads as ``config.case_value``.  None: the claim takes no case."""

    def __post_init__(self):
        if self.case is not None and not isinstance(self.case, CaseType):
            raise ClaimError(f"claim {self.id!r}: case is an mmicl.CaseType or None, got {type(self.case).__name__}")

    def case_type(self) -> CaseType:
        """The claim's ``CaseType``, or a one-line ``CaseError`` for a claim that takes no case."""
        if self.case is None:
            raise CaseError(f"claim {self.id!r} takes no case (it has no CaseType); leave --case out, or choose "
                            "claims that declare one")
        return self.case

    def read_case(self, text: str):
        """``text`` read as this claim's case, or a one-line ``CaseError`` (also for a claim that
        takes no case)."""
        return self.case_type().read(text, self.id)

    def run(self, config: RunConfig) -> ClaimResult:
        """Evaluate the claim and decide its verdict.  A full disk propagates, and so does, from a
        built-in claim, a bad input (``InputError``, which ``LawError`` and ``TestbedConfigError`` are: the
        ``--law`` given does not suit it).  Any other exception raised by ``evaluate`` (any at all
        from a claim of another origin), or a return value of the wrong shape, gives the verdict
        ``"error"`` with the exception's type and message (and its traceback in the evidence): one
        claim's bug never stops the others."""
        import traceback

        from dataclasses import replace

        t0 = time.perf_counter()
        if config.case is not None:  # a case it cannot read is the caller's error (CaseError), not the claim's
            config = replace(config, case_value=self.read_case(config.case))
        if config.variant is not None and self.origin == BUILTIN and not {"*", config.variant} & set(self.variants):
            return self._not_this_variant(config, t0)
        try:
            # a copy: a claim that sets config.seed (or anything else) changes neither the run's
            # record nor the claims after it
            returned = self.evaluate(replace(config))
        except BaseException as e:  # noqa: BLE001 -- reported as this claim's verdict, see the docstring
            if _passes_through(e, self.origin):
                raise
            return self._error(e, traceback.format_exc(limit=-8), t0)
        try:
            hyps, checks, summary, figs = _unpack(self.id, returned)
            for c in checks:  # numpy booleans become plain ones; anything else is refused
                c.passed = judged_outcome(c)
            for h in hyps:
                h.met = judged_met(h)
            verdict, reason = decide(hyps, checks)
            result = ClaimResult(
                summary_atol=getattr(summary, "atol", None),
                summary_rtol=getattr(summary, "rtol", None),
                summary_tolerance=getattr(summary, "why", ""),
                summary_sampled=getattr(summary, "sampled", ()),
                summary_se=getattr(summary, "se", None),
                id=self.id,
                verdict=verdict,
                verdict_reason=reason,
                statement=self.statement,
                hypotheses=hyps,
                checks=checks,
                summary=dict(summary),
                figures=[str(f) for f in figs],
                seconds=time.perf_counter() - t0,
                origin=self.origin,
            )
            _json_able(self.id, result)
        except ClaimError as e:
            return self._error(e, "", t0)
        return result

    def _not_this_variant(self, config: RunConfig, t0: float) -> ClaimResult:
        """A built-in claim about the paper's model, asked about another variant: its hypothesis
        that the model is mmicl's default is not met, and nothing is computed."""
        from mmicl.numerics.variants import DEFAULT_VARIANT

        hyp = Hypothesis(f"the model is mmicl's default LCA ({DEFAULT_VARIANT.text}): the statement is about it",
                         False, f"this run's variant is {config.variant}; what is derived for a variant is "
                                "checked by the claims variant.* (mmicl verify --claim 'variant.*')")
        verdict, reason = decide([hyp], [])
        return ClaimResult(id=self.id, verdict=verdict, verdict_reason=reason, statement=self.statement,
                           hypotheses=[hyp], checks=[], summary={}, figures=[],
                           seconds=time.perf_counter() - t0, origin=self.origin)

    def _error(self, e: BaseException, trace: str, t0: float) -> ClaimResult:
        if isinstance(e, SystemExit):
            message = f"SystemExit (code {e.code!r}): a claim cannot end the run"
        elif isinstance(e, KeyboardInterrupt):
            message = "KeyboardInterrupt raised by the claim itself (no Ctrl-C was pressed)"
        else:
            message = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
        return ClaimResult(id=self.id, verdict="error", verdict_reason=f"evaluate raised {message}"
                           if trace else f"evaluate's return value: {message}", statement=self.statement,
                           hypotheses=[], checks=[], summary={}, figures=[], seconds=time.perf_counter() - t0,
                           origin=self.origin, error=trace)


def _passes_through(e: BaseException, origin: str | None) -> bool:
    """What ``Claim.run`` does not turn into the claim's ``error``: a full disk; a real Ctrl-C
    (``interrupts.pressed()``: the signal arrived, so the run stops); from a built-in claim, the
    errors about the caller's input (``InputError``: the ``--law`` given does not suit it), which the
    command line reports in one line, and any exception that is not an ``Exception`` (a built-in
    claim never exits on its own).  A ``SystemExit`` or a ``KeyboardInterrupt`` that a claim of
    another origin raises itself is that claim's error: it cannot end the run."""
    from mmicl.numerics import interrupts

    if isinstance(e, DiskFullError) or (isinstance(e, KeyboardInterrupt) and interrupts.pressed()):
        return True
    if origin == BUILTIN:
        return isinstance(e, InputError) or not isinstance(e, Exception)
    return False


def _json_able(claim_id: str, result: ClaimResult) -> None:
    """``ClaimError`` when ``result`` cannot be written as strict JSON (a set, an object, a key that
    is not a text in the summary or a check's numbers), naming the claim and what was refused."""
    import json

    try:
        json.dumps(result.to_json(), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as e:
        first = str(e).splitlines()[0][:160] if str(e) else type(e).__name__
        raise ClaimError(f"claim {claim_id!r}: its summary, checks or hypotheses cannot be written as JSON "
                         f"({first}); give numbers, texts, booleans, lists and dicts with text keys") from None


def _unpack(claim_id: str, out) -> tuple[list, list, dict, list]:
    """``evaluate``'s return value as (hypotheses, checks, summary, figures), checked."""
    if not isinstance(out, (tuple, list)) or not 2 <= len(out) <= 4:
        raise ClaimError(f"claim {claim_id!r}: evaluate must return (hypotheses, checks[, summary[, figures]]), "
                         f"got {type(out).__name__}" + (f" of length {len(out)}" if isinstance(out, (tuple, list)) else ""))
    hyps, checks, summary, figs = (*out, None, None)[:4]
    if not isinstance(hyps, (list, tuple)) or not all(isinstance(h, Hypothesis) for h in hyps):
        raise ClaimError(f"claim {claim_id!r}: the hypotheses must be a list of mmicl.Hypothesis")
    if not isinstance(checks, (list, tuple)) or not all(isinstance(c, Check) for c in checks):
        raise ClaimError(f"claim {claim_id!r}: the checks must be a list of mmicl.Check")
    if summary is None:
        summary = {}
    if not isinstance(summary, dict):
        raise ClaimError(f"claim {claim_id!r}: the summary must be a dict of key numbers, got {type(summary).__name__}")
    figs = [] if figs is None else figs
    if isinstance(figs, (str, Path)) or not isinstance(figs, (list, tuple)):
        raise ClaimError(f"claim {claim_id!r}: the figures must be a list of paths")
    return list(hyps), list(checks), summary, list(figs)
