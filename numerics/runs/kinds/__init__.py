"""The kinds of run, as a table (like SciPy's ``METHODS``): name → ``Kind`` (its settings, how a
configuration is normalised, what it computes).

| kind | computes | module |
|---|---|---|
| ``theory`` | α*, α_T and the excess risk at α_T of a law at a depth (``numerics.lca``) | ``theory`` |
| ``testbed`` | one testbed model trained; its final metrics | ``testbed`` |
| ``ensemble`` | arms × seeds of the testbed trained as one ensemble, then an optional analysis | ``ensemble`` |
| ``montecarlo`` | one Monte Carlo training of a torch model, as ``mmicl train`` | ``montecarlo`` |
| ``stage1`` | stage 1 of the multimodal protocol; its checkpoint kept in the store | ``stage1`` |
| ``stage2`` | stage 2 on a stored ``stage1`` run's checkpoint | ``stage2`` |
| ``fusion`` | early fusion from scratch | ``fusion`` |

``KINDS[name]`` imports the kind's module on first use (torch and SciPy load only for the kinds
that need them): this table is one of mmicl's three lazy doors.  Each module defines ``KIND``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from importlib import import_module

__all__ = ["Kind", "KINDS", "KIND_MODULES"]


@dataclass(frozen=True)
class Kind:
    """A kind of run: the names of its settings (what a sweep file may set), ``normalise`` (the full
    configuration, defaults filled in and checked, from given settings) and ``compute`` (the result
    of a normalised configuration; runs of the multimodal kinds also take ``progress`` and
    ``description``)."""

    settings: frozenset[str]
    normalise: Callable[[dict], dict]
    compute: Callable[..., dict]


KIND_MODULES: dict[str, str] = {
    "theory": "mmicl.numerics.runs.kinds.theory",
    "testbed": "mmicl.numerics.runs.kinds.testbed",
    "ensemble": "mmicl.numerics.runs.kinds.ensemble",
    "montecarlo": "mmicl.numerics.runs.kinds.montecarlo",
    "stage1": "mmicl.numerics.runs.kinds.stage1",
    "stage2": "mmicl.numerics.runs.kinds.stage2",
    "fusion": "mmicl.numerics.runs.kinds.fusion",
}
"""Each kind's module (it defines ``KIND``)."""


class _Table(MutableMapping):
    """``KINDS``: a mapping that imports a kind's module the first time the kind is looked up.  A kind
    may be replaced for a while (``KINDS[name] = kind``, as a test's ``monkeypatch.setitem`` does) and
    given back with ``del KINDS[name]``; no new kind can be added this way (a kind lives in a module
    listed in ``KIND_MODULES``)."""

    def __init__(self):
        self._replaced: dict[str, Kind] = {}

    def __getitem__(self, name: str) -> Kind:
        if name not in KIND_MODULES:
            raise KeyError(name)
        if name in self._replaced:
            return self._replaced[name]
        return import_module(KIND_MODULES[name]).KIND

    def __setitem__(self, name: str, kind: Kind) -> None:
        if name not in KIND_MODULES or not isinstance(kind, Kind):
            raise KeyError(f"KINDS[{name!r}] can only be replaced by a Kind, for a kind of KIND_MODULES")
        self._replaced[name] = kind

    def __delitem__(self, name: str) -> None:
        self._replaced.pop(name, None)

    def __contains__(self, name) -> bool:
        return name in KIND_MODULES

    def __iter__(self) -> Iterator[str]:
        return iter(KIND_MODULES)

    def __len__(self) -> int:
        return len(KIND_MODULES)

    def __repr__(self) -> str:
        return f"KINDS({', '.join(KIND_MODULES)})"


KINDS: MutableMapping[str, Kind] = _Table()
"""Every kind of run, by name."""
