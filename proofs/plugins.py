"""Claims from outside mmicl: installed plugins (entry points) and files or modules named at run time.

A package declares its claims under the entry-point group ``mmicl.claims``::

    [project.entry-points."mmicl.claims"]
    mine = "mypkg.claims"

and, once it is installed, ``mmicl claims``, ``mmicl verify --claim 'mine.*'`` and
``mmicl.verify("mine.*")`` see them: the first time claims are listed or run, each entry point's
module is imported (once per process; not for a selection that can match only built-in claims,
``verify.built_in_only``), and the claims it registers (``@mmicl.claim`` or
``mmicl.register``) carry its origin, ``"plugin mine (mypkg 0.1.0)"``.  Code that is not installed
is loaded with ``mmicl verify --plugin FILE_OR_MODULE`` or ``mmicl.verify(..., plugins=[...])``:
a ``.py`` file (its origin ``"plugin file claims.py"``) or an importable module name.

A plugin that cannot be imported, or that registers an id already taken, is a ``PluginError``
(one line naming the plugin and the problem; from the command line, exit 2 before any claim runs).
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from importlib import metadata
from pathlib import Path

from mmicl.numerics import interrupts
from mmicl.numerics.validate import InputError

from .claim import ClaimError
from .registry import GROUP, entry_point_origin, registering_as

__all__ = ["GROUP", "PluginError", "load_installed", "load_plugins"]



_installed_loaded = False
_loaded: dict[str, str] = {}  # what was loaded (file path or module name) -> origin


class PluginError(InputError):
    """A plugin that cannot be loaded: it fails to import, or registers an id that is taken."""


def _load(origin: str, what: str, load) -> None:
    try:
        with registering_as(origin):
            load()
    except ClaimError as e:
        raise PluginError(f"{origin}: {e}") from None
    except BaseException as e:  # noqa: BLE001 -- a plugin's import error is reported in one line
        if isinstance(e, KeyboardInterrupt) and interrupts.pressed():
            raise  # the user's Ctrl-C
        if isinstance(e, SystemExit):  # sys.exit() in a plugin's import cannot end the run silently
            raise PluginError(f"{origin}: importing {what} called sys.exit({e.code!r}); a plugin registers "
                              "claims and returns") from None
        first = str(e).splitlines()[0] if str(e) else ""
        raise PluginError(f"{origin}: cannot import {what}: {type(e).__name__}" + (f": {first}" if first else "")) from None


def load_installed() -> None:
    """Import every installed plugin (entry-point group ``mmicl.claims``), once per process."""
    global _installed_loaded
    if _installed_loaded:
        return
    _installed_loaded = True  # set first: a failing plugin is reported once, not retried on every call
    for ep in sorted(metadata.entry_points(group=GROUP), key=lambda ep: ep.name):
        origin = entry_point_origin(ep)
        if ep.value in _loaded:
            continue
        _loaded[ep.value] = origin
        _load(origin, ep.value, ep.load)


def load_plugins(plugins: str | list[str] | tuple[str, ...]) -> list[str]:
    """Load claims from each of ``plugins`` (a ``.py`` file or a module name, or a sequence of
    them), once each; return their origins.  ``PluginError`` for one that does not exist or cannot
    be imported."""
    origins = []
    for spec in [plugins] if isinstance(plugins, str) else list(plugins):
        if not isinstance(spec, str) or not spec.strip():
            raise PluginError(f"a plugin is a .py file or a module name, got {spec!r}")
        path = Path(spec)
        if spec.endswith(".py") or path.exists():
            if path.is_dir():
                raise PluginError(f"plugin file {spec}: is a folder; name the .py file inside it, or the module")
            if not path.is_file():
                raise PluginError(f"plugin file {spec}: no such file")
            key = str(path.resolve())
            origin = f"plugin file {path.name}"
            if key not in _loaded:
                _loaded[key] = origin
                _load(origin, spec, lambda: _import_file(path))
        else:
            key, origin = spec, f"plugin module {spec}"
            if key not in _loaded:
                _loaded[key] = origin
                _load(origin, spec, lambda: importlib.import_module(spec))
        origins.append(_loaded[key])
    return origins


def _import_file(path: Path) -> None:
    """Import ``path`` as a module of its own (a name from its full path, so two files called
    ``claims.py`` do not collide), with its folder on ``sys.path`` for its own imports."""
    full = path.resolve()
    name = f"mmicl_plugin_{full.stem}_{hashlib.sha256(str(full).encode()).hexdigest()[:8]}"
    spec = importlib.util.spec_from_file_location(name, full)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    sys.path.insert(0, str(full.parent))
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    finally:
        sys.path.remove(str(full.parent))
