"""Listing and running claims: the built-in ones, the installed plugins' and the caller's.

``registered()`` loads the built-in claims (``proofs.claims``) and the installed plugins
(``proofs.plugins``) on first use and returns the registry; ``claims()`` lists them, ``select()`` picks
them by glob, and ``verify()`` runs them (``Claim.run``), as ``mmicl.verify`` does.
"""
from __future__ import annotations

import fnmatch
from pathlib import Path

from .claim import Claim, ClaimResult, RunConfig
from .registry import REGISTRY, RESERVED_NAMESPACES
from mmicl.proofs.plugins import load_installed, load_plugins
from mmicl.numerics.validate import MAX_DIM_VERIFY, check_device

__all__ = ["registered", "built_in_only", "claims", "select", "verify", "case_text"]


def registered() -> dict[str, Claim]:
    """Every claim: the built-in ones and those of the installed plugins (entry-point group
    ``mmicl.claims``), loaded on the first call; a plugin that cannot be loaded is a
    ``plugins.PluginError``."""
    reg = _builtin()  # mmicl's own claims first, then the installed plugins', as the registry lists them
    load_installed()
    return reg


def _builtin() -> dict[str, Claim]:
    """The registry with the built-in claims in it (from their table: no claim module is imported)."""
    from . import claims as _claims  # noqa: F401  (importing registers every built-in claim)

    return REGISTRY


def built_in_only(pattern: str) -> bool:
    """Whether the glob ``pattern`` can match only built-in claims: its namespace (the part before
    the first dot, or all of it) is written out, with no glob character, and is reserved for
    mmicl's own claims (``RESERVED_NAMESPACES``), which no plugin may register.  Selecting by such
    patterns imports no installed plugin."""
    namespace = pattern.split(".", 1)[0]
    return not any(ch in namespace for ch in "*?[") and namespace in RESERVED_NAMESPACES


def claims(everything: bool = True, plugins: str | list[str] | tuple[str, ...] = ()) -> dict[str, str]:
    """``{id: title}`` of the registered claims (only the default ones with ``everything=False``),
    after loading ``plugins`` (files or module names, as ``verify`` takes them)."""
    load_plugins(plugins)
    return {c.id: c.title for c in registered().values() if c.default or everything}


def select(patterns: list[str] | tuple[str, ...], everything: bool = False) -> list[Claim]:
    """The claims whose ids match any of the glob patterns; with no pattern, the default claims
    (or all of them with ``everything``).  Installed plugins are imported unless every pattern can
    match only built-in claims (``built_in_only``)."""
    reg = _builtin() if patterns and all(built_in_only(p) for p in patterns) else registered()
    if not patterns:
        return [c for c in reg.values() if c.default or everything]
    chosen = [c for c in reg.values() if any(fnmatch.fnmatchcase(c.id, p) for p in patterns)]
    unknown = [p for p in patterns if not any(fnmatch.fnmatchcase(c.id, p) for c in reg.values())]
    if unknown:
        raise KeyError(f"no claim matches {unknown}; known claims: {sorted(reg)}")
    return chosen


def verify(claims: str | list[str] | tuple[str, ...] = (), *, quick: bool = True, law=None, seed: int = 0,
           device: str = "cpu", out: str | Path = "results", everything: bool = False,
           plugins: str | list[str] | tuple[str, ...] = (), size: str | None = None,
           variant: str | None = None, case=None) -> list[ClaimResult]:
    """Run claims and return their results (``ClaimResult``: ``.verdict``, ``.hypotheses``,
    ``.checks``, ``.summary``, ``.figures``, ``.origin``, ``.to_json()``).

    ``claims``: ids or glob patterns (``"thm6.2"``, ``"testbed.*"``, ``"mine.*"``); none means the
    default claims (all of them with ``everything=True``).  ``law``: a ``TaskLaw`` or LAW text to
    check the claims on instead of each claim's own laws.  ``plugins``: files (``claims.py``) or
    module names to load claims from, beside the installed plugins.  Figures go to
    ``out/figures``.  ``variant``: an LCA variant (``"readout=evolved-keys-and-query"``, …): the
    paper's theorems then say ``hypothesis-not-met`` and the claims ``variant.*`` check it.
    ``case``: for claims with their own kind of case (``Claim.case``), the case to check them on,
    as text or as an object their ``CaseType`` writes as text (``case_text``).
    Unlike the ``mmicl verify`` command this writes no ``verdicts.json`` or report
    and leaves torch's thread count alone.

    Refused before any claim runs, each with a one-line ``InputError``/``LawError``/``PluginError``:
    ``device="cuda"`` where torch sees no CUDA GPU, a law that the command line refuses
    (``numerics.validate``: ``d1 + d2 ≤ MAX_DIM_VERIFY``, squared norms ≤ ``MAX_LAW_SCALE``,
    ``E[ζ²]`` in ``[MIN_ZETA2, MAX_ZETA2]``), a plugin that cannot be loaded, a case that a chosen
    claim cannot read or a case given to a claim that takes none (``CaseError``)."""
    from mmicl.numerics.laws.language import check_law_limits

    check_device(device)  # a bad device or law is refused here, before any claim runs
    law = None if law is None else check_law_limits(law, "verify", MAX_DIM_VERIFY).spec()  # LAW text
    load_plugins(plugins)
    patterns = [claims] if isinstance(claims, str) else list(claims)
    chosen = select(patterns, everything)
    if law is not None and not isinstance(law, str):
        law = law.spec()  # a TaskLaw: its LAW text
    if law is not None:
        from mmicl.numerics.laws.language import parse_law

        parse_law(law)  # a bad law fails here, before any claim runs
    if size is None:
        size = "quick" if quick else "full"
    case = case_text(chosen, case)
    config = RunConfig.sized(size, out=Path(out), seed=seed, device=device, law=law,
                             variant=variant, case=case)  # checks size, seed, device, variant
    return [claim.run(config) for claim in chosen]


def case_text(chosen: list[Claim], case) -> str | None:
    """``case`` as text every claim in ``chosen`` reads (``Claim.read_case``), checked before any of
    them runs: text as it is; an object written by the first claim's ``CaseType`` (``as_text``).
    None stays None.  A ``CaseError`` names the claim that cannot read it, or that takes no case."""
    if case is None:
        return None
    from .cases import CaseError

    if not chosen:
        raise CaseError("a case was given but no claim was chosen")
    first = chosen[0]
    text = case if isinstance(case, str) else first.case_type().as_text(case, first.id)
    for c in chosen:
        c.read_case(text)
    return text
