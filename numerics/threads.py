"""torch's CPU thread count for a block of code, restored afterwards.

Many small models train fastest on one thread each: on a shared 2-core machine two threads made a
small training run 28 times slower than one.  ``mmicl verify`` sets one thread for its whole run;
the library never changes it by itself, so a claim that trains (a plugin's, run through
``mmicl.verify``) says so where it needs it::

    with mmicl.torch_threads(1):
        train(...)
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from .validate import InputError

__all__ = ["torch_threads"]


@contextmanager
def torch_threads(n: int) -> Iterator[None]:
    """Run the block with ``torch.set_num_threads(n)``; the earlier count is restored after it."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InputError(f"torch_threads takes a whole number of threads ≥ 1, got {n!r}")
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)
