"""Task laws, by their old address: this module only re-exports names from their homes.

- ``numerics.quadrature``: quadrature rules (``Rule``, Gauss–Jacobi and Gauss–Legendre pieces, graded
  break points, ``compress_rule``, Lanczos and the Gauss rule of a discrete measure);
- ``numerics.scalar_laws``: laws of one squared norm (``ScalarLaw``, ``Point``, ``Beta``,
  ``Uniform``, ``Discrete``, ``TwoPoint``, ``Mixture``, ``SumLaw``, ``Exponential``) and the errors
  (``LawError``, ``UnboundedSupportError``);
- ``numerics.task_law``: the law of a prompt's task (``ZetaLaw``, ``TaskLaw``).

``from mmicl.numerics.laws import X`` keeps working for every name it gave before; new code imports
from the modules above.
"""
from __future__ import annotations

from . import quadrature as _quadrature
from . import scalar_laws as _scalar_laws
from . import task_law as _task_law
from .quadrature import Rule, compress_rule  # noqa: F401  (was defined here)
from .quadrature import gauss_jacobi as _gauss_jacobi  # noqa: F401  (old private names)
from .quadrature import gauss_legendre as _gauss_legendre  # noqa: F401
from .quadrature import graded_breaks as _graded_breaks  # noqa: F401
from .quadrature import lanczos as _lanczos
from .scalar_laws import (Beta, Discrete, Exponential, LawError, Mixture, Point, ScalarLaw,  # noqa: F401
                          SumLaw, TwoPoint, UnboundedSupportError, Uniform)  # (re-exported: __all__)
from .scalar_laws import _sum_rule  # noqa: F401  (benchmarks clear its cache)
from .task_law import TaskLaw, ZetaLaw  # noqa: F401  (re-exported: __all__)
# every public name of the two modules, including the ones added there later (task_law's
# FLOAT64_EPS and RESOLUTION_TOLERANCE): __all__ below is built from theirs, so it must hold them all
from .scalar_laws import *  # noqa: E402,F401,F403
from .task_law import *  # noqa: E402,F401,F403

__all__ = [*_scalar_laws.__all__, *_task_law.__all__, "Rule"]


def _discrete_gauss(x, w, n):
    """``quadrature.discrete_gauss`` with the Lanczos routine read from this module at call time,
    so that a test which replaces ``laws._lanczos`` sees the calls (tests/test_laws.py)."""
    return _quadrature.discrete_gauss(x, w, n, lanczos_fn=_lanczos)
