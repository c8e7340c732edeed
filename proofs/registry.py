"""The theorem registry: every claim by id, where each comes from, and the ids they may take.

``register(claim)`` adds a ``Claim`` (``proofs.claim``) to ``REGISTRY``; ``@claim(id, ...)`` registers a
function as a claim's ``evaluate``.  A claim registered without an origin gets the one in force where
it is registered (``current_origin()``): the plugin being loaded inside ``registering_as(origin)``
(``proofs.plugins``), ``"built-in"`` while mmicl loads its own claims (``proofs.claims``), and
otherwise where the claim's ``evaluate`` is defined: the installed plugin whose entry point names its
module (or a package holding it), whatever imported it first (a test that imports the plugin's
module before mmicl loads it records the same origin), else ``"user"``.  Ids are ``namespace.name``; the namespaces of the built-in claims are reserved
(``RESERVED_NAMESPACES``).  Listing and running claims (which loads the built-in ones and the
plugins first) is ``proofs.verify``.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Callable, Iterator

from .claim import BUILTIN, Claim, ClaimError

__all__ = ["GROUP", "RESERVED_NAMESPACES", "REGISTRY", "check_claim_id", "register", "current_origin",
           "registering_as", "claim", "entry_point_origin", "origin_of_module"]

GROUP = "mmicl.claims"
"""The entry-point group of claim plugins."""

RESERVED_NAMESPACES = frozenset({"mmicl", "thm4", "thm6", "appF", "depth", "testbed", "ext", "variant"})
"""Namespaces of the built-in claims (the part of an id before its first dot, or the whole id where
it has none): a claim of another origin may not use them."""

_ID = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)+$")


REGISTRY: dict[str, Claim] = {}
"""The registered claims by id (``registered()`` fills it with the built-in claims and plugins)."""


def check_claim_id(claim_id, origin: str = "user") -> str:
    """``claim_id`` if it is a valid id for a claim of ``origin``: ``namespace.name`` (letters,
    digits, ``_`` and ``-``, dots between), the namespace not one of ``RESERVED_NAMESPACES`` unless
    the claim is built in."""
    if not isinstance(claim_id, str) or (origin != BUILTIN and not _ID.match(claim_id)):
        raise ClaimError(f"claim id {claim_id!r}: an id is 'namespace.name' (e.g. 'mine.lca_variant'): letters, "
                         "digits, '_' and '-', with a dot after the namespace")
    namespace = claim_id.split(".", 1)[0]
    if origin != BUILTIN and namespace in RESERVED_NAMESPACES:
        raise ClaimError(f"claim id {claim_id!r}: the namespace {namespace!r} is reserved for mmicl's built-in claims "
                         f"({', '.join(sorted(RESERVED_NAMESPACES))}); use your package's name")
    return claim_id


def register(claim: Claim, replace: bool = False) -> Claim:
    """Add ``claim`` to the registry and return it.

    An id already registered is refused (``ClaimError`` naming both origins) unless ``replace=True``
    (re-running a notebook cell, reloading a module), which swaps the old claim for the new one; a
    built-in claim is never replaced by another origin's."""
    if not isinstance(claim, Claim):
        raise ClaimError(f"register takes an mmicl.Claim, got {type(claim).__name__}")
    here = current_origin(getattr(claim.evaluate, "__module__", None))
    if claim.origin is None:
        claim.origin = here
    elif claim.origin == BUILTIN and here != BUILTIN:
        raise ClaimError(f"claim {claim.id!r}: the origin 'built-in' is mmicl's own; leave origin unset")
    check_claim_id(claim.id, claim.origin)
    if not callable(claim.evaluate):
        raise ClaimError(f"claim {claim.id!r}: evaluate must be callable, got {type(claim.evaluate).__name__}")
    old = REGISTRY.get(claim.id)
    if old is not None and not (replace and (old.origin == claim.origin or old.origin != BUILTIN)):
        how = "" if replace else "; pass replace=True to swap it (a notebook cell run again)"
        raise ClaimError(f"claim {claim.id!r} is registered twice: by {old.origin} and by {claim.origin}{how}")
    REGISTRY[claim.id] = claim
    return claim


_ORIGIN: ContextVar[str | None] = ContextVar("mmicl_claim_origin", default=None)
"""The origin given to claims registered now: the plugin being loaded (``plugins``) or
``"built-in"``; None outside ``registering_as``."""


def current_origin(module: str | None = None) -> str:
    """The origin a claim registered now gets: what ``registering_as`` set, else that of the module
    that defines its ``evaluate`` (``origin_of_module``)."""
    here = _ORIGIN.get()
    return here if here is not None else origin_of_module(module)


def entry_point_origin(ep) -> str:
    """``"plugin NAME (DIST VERSION)"`` for an entry point of ``GROUP``."""
    dist = getattr(ep, "dist", None)
    return f"plugin {ep.name} ({dist.name} {dist.version})" if dist is not None else f"plugin {ep.name} ({ep.value})"


def origin_of_module(module: str | None) -> str:
    """The origin of claims defined in ``module``: the installed plugin whose entry point names
    that module or a package holding it, else ``"user"`` (a script, a notebook, a test file)."""
    if module:
        import sys

        for ep in _entry_points(tuple(sys.path)):
            target = ep.value.split(":")[0].strip()
            if module == target or module.startswith(target + "."):
                return entry_point_origin(ep)
    return "user"


@lru_cache(maxsize=4)
def _entry_points(path: tuple[str, ...]) -> tuple:
    """The entry points of ``GROUP``, by name, read once per ``sys.path`` (reading the metadata of
    every installed distribution costs tens of milliseconds)."""
    from importlib import metadata

    return tuple(sorted(metadata.entry_points(group=GROUP), key=lambda ep: ep.name))


@contextmanager
def registering_as(origin: str) -> Iterator[None]:
    """Claims registered inside the block get ``origin`` (a plugin's, or ``"built-in"``)."""
    token = _ORIGIN.set(origin)
    try:
        yield
    finally:
        _ORIGIN.reset(token)


def claim(id: str, *, title: str, statement: str, default: bool = False, replace: bool = False, case=None):
    """Register the decorated function as the ``evaluate`` of a claim, and return the ``Claim``::

        @mmicl.claim("mine.alpha_below_half", title="α* < 1/2 when s_lo + s_hi > 2",
                     statement="For s=uniform(1,3), α* = 2/(2 + s_lo + s_hi) < 1/2.")
        def evaluate(config):
            a = mmicl.alpha_star("s=uniform(1,3)")
            return [], [mmicl.Check("α* < 1/2", "closed form", a < 0.5, {"alpha_star": a})]

    ``default``: run by a plain ``mmicl verify`` (off by default for claims of plugins: they run when
    asked for, ``--claim 'mine.*'``).  ``replace``: see ``register``.  ``case``: the claim's own kind
    of case, an ``mmicl.CaseType`` (``Claim.case``), for a claim checked on something other than a
    task law."""
    def wrap(evaluate: Callable) -> Claim:
        return register(Claim(id, title, statement, evaluate, default=default, case=case),
                        replace=replace)  # origin: register
    return wrap
