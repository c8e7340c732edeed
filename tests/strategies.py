"""The test suite's strategies are mmicl's public ones (``mmicl.testing``): this module re-exports
them, under the names the tests import.

Three names differ from the public ones, which draw laws together with their facts
(``mmicl.testing.DrawnLaw``): here ``scalar_laws`` is ``mmicl.testing.plain_scalar_laws`` (a
strategy of plain ``ScalarLaw``s), ``task_laws`` is ``mmicl.testing.task_laws_from`` (plain
``TaskLaw``s from a strategy of scalar laws) and ``zeta_laws`` is ``mmicl.testing.zeta_laws()``.
"""
from __future__ import annotations

from mmicl.testing import *  # noqa: F401,F403
from mmicl.testing import __all__ as _public
from mmicl.testing import plain_scalar_laws as scalar_laws  # noqa: F401
from mmicl.testing import task_laws_from as task_laws  # noqa: F401
from mmicl.testing import zeta_laws as _zeta_laws

zeta_laws = _zeta_laws()

__all__ = [name for name in _public if name not in ("scalar_laws", "task_laws", "zeta_laws")] + [
    "scalar_laws", "task_laws", "zeta_laws"]
