"""The theorem registry: every claim by id, where each comes from, and the ids they may take.

``register(claim)`` adds a ``Claim`` (``proofs.claim``) to ``REGISTRY``; ``@claim(id, ...)`` registers a
function as a claim's ``evaluate``.  A claim registered without an origin gets the one in force where
it is registered (``current_origin()``): ``"user"`` by default, the plugin being loaded inside
``registering_as(origin)`` (``proofs.plugins``), ``"built-in"`` while mmicl loads its own claims
(``proofs.claims``).  Ids are ``namespace.name``; the namespaces of the built-in claims are reserved
(``RESERVED_NAMESPACES``).  Listing and running claims (which loads the built-in ones and the
plugins first) is ``proofs.verify``.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Iterator

from .claim import BUILTIN, Claim, ClaimError

__all__ = ["RESERVED_NAMESPACES", "REGISTRY", "check_claim_id", "register", "current_origin", "registering_as",
           "claim"]

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
    here = current_origin()
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


_ORIGIN: ContextVar[str] = ContextVar("mmicl_claim_origin", default="user")
"""The origin given to claims registered now: ``"user"``, or the plugin being loaded (``plugins``)."""


def current_origin() -> str:
    """The origin a claim registered now gets: ``"user"``, or what ``registering_as`` set."""
    return _ORIGIN.get()


@contextmanager
def registering_as(origin: str) -> Iterator[None]:
    """Claims registered inside the block get ``origin`` (a plugin's, or ``"built-in"``)."""
    token = _ORIGIN.set(origin)
    try:
        yield
    finally:
        _ORIGIN.reset(token)


def claim(id: str, *, title: str, statement: str, default: bool = False, replace: bool = False):
    """Register the decorated function as the ``evaluate`` of a claim, and return the ``Claim``::

        @mmicl.claim("mine.alpha_below_half", title="α* < 1/2 when s_lo + s_hi > 2",
                     statement="For s=uniform(1,3), α* = 2/(2 + s_lo + s_hi) < 1/2.")
        def evaluate(config):
            a = mmicl.alpha_star("s=uniform(1,3)")
            return [], [mmicl.Check("α* < 1/2", "closed form", a < 0.5, {"alpha_star": a})]

    ``default``: run by a plain ``mmicl verify`` (off by default for claims of plugins: they run when
    asked for, ``--claim 'mine.*'``).  ``replace``: see ``register``."""
    def wrap(evaluate: Callable) -> Claim:
        return register(Claim(id, title, statement, evaluate, default=default, origin=current_origin()), replace=replace)
    return wrap
