"""The one root of the exceptions mmicl raises on purpose.

- ``MmiclError``: every exception class mmicl defines derives from it, so ``except
  mmicl.MmiclError`` catches whatever mmicl raised deliberately; anything else is a bug and keeps
  its traceback.
- ``InputError(MmiclError, ValueError)``: a value given by the caller that cannot be used (a law, a
  depth, a variant, a claim, a plugin, a sweep file, a testbed setting, a results folder, ...).  Its
  message names the value, what is allowed and how to fix it.  Every caller-mistake class
  (``LawError``, ``VariantError``, ``ClaimError``, ``PluginError``, ``SweepSpecError``,
  ``TestbedConfigError``, ...) derives from it, so the command line catches this one type and
  prints one line; it is a ``ValueError`` too, as those classes always were.

This module sits at the bottom of the package (``mmicl.theory``) because the symbolic layer raises
``VariantError``; it imports nothing.
"""
from __future__ import annotations

__all__ = ["MmiclError", "InputError"]


class MmiclError(Exception):
    """The root of every exception class mmicl defines."""


class InputError(MmiclError, ValueError):
    """A value given by the caller that cannot be used; the message says which and what is allowed."""
