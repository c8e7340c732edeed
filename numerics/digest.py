"""A canonical SHA-256 of a nested state: the content hash that mmicl's checkpoints carry.

``digest(state)`` is the hex SHA-256 of a canonical encoding of ``state``.  Both checkpoint formats
store it beside what they save and recompute it when they read the file back (the stage-1 file of
the testbed, ``numerics/testbed/checkpoint.py``; the ``mmicl train --checkpoint`` file,
``numerics/training.py``): a file changed after mmicl wrote it (weights zeroed, a metric edited, a
tensor cut) no longer matches.  It is a check against damage and edits, not a signature: whoever
can rewrite the file can recompute the hash.

What it covers (each value tagged with its type and length-prefixed, so that no two different
states share an encoding):

* ``dict``: its items in sorted key order (insertion order does not count); keys are ``str`` or
  ``int`` (an optimiser's state is keyed by parameter index), ints sorted before strs;
* ``list`` and ``tuple``: their items in order, the two alike (a saved tuple may come back a list);
* ``str`` (UTF-8), ``int`` (any size), ``bool`` (not the same as 0/1), ``None``;
* ``float``: its IEEE-754 double bits (so -0.0 and 0.0 differ, and a NaN equals itself);
* ``torch.Tensor``: dtype, shape and the bytes of its contiguous CPU copy; not its device, strides
  or ``requires_grad``.

Anything else (a numpy array, a sparse tensor, an object) is a ``TypeError``: a state it cannot
cover is not hashed half.
"""
from __future__ import annotations

import hashlib
import struct
from typing import Any

import torch

__all__ = ["digest"]


def digest(state: Any) -> str:
    """The hex SHA-256 of the canonical encoding of ``state`` (see the module docstring)."""
    h = hashlib.sha256(b"mmicl.digest/1\0")
    _feed(h, state)
    return h.hexdigest()


def _put(h, tag: bytes, data: bytes | memoryview = b"") -> None:
    h.update(tag + len(data).to_bytes(8, "little"))
    h.update(data)


def _feed(h, x: Any) -> None:
    if x is None:
        _put(h, b"N")
    elif isinstance(x, bool):
        _put(h, b"B", b"\1" if x else b"\0")
    elif isinstance(x, int):
        _put(h, b"I", str(int(x)).encode())
    elif isinstance(x, float):
        _put(h, b"F", struct.pack("<d", x))
    elif isinstance(x, str):
        _put(h, b"S", x.encode("utf-8", "surrogatepass"))
    elif isinstance(x, torch.Tensor):
        _tensor(h, x)
    elif isinstance(x, dict):
        keys = list(x)
        for k in keys:
            if isinstance(k, bool) or not isinstance(k, (str, int)):
                raise TypeError(f"digest: dict keys must be str or int, found {type(k).__name__} {k!r}")
        _put(h, b"D", str(len(keys)).encode())
        for k in sorted(keys, key=lambda k: (isinstance(k, str), k)):
            _feed(h, k)
            _feed(h, x[k])
    elif isinstance(x, (list, tuple)):
        _put(h, b"L", str(len(x)).encode())
        for v in x:
            _feed(h, v)
    else:
        raise TypeError(f"digest: cannot hash a {type(x).__name__} (only dicts, lists, tuples, str, int, float, "
                        "bool, None and dense torch tensors)")


def _tensor(h, t: torch.Tensor) -> None:
    if t.layout != torch.strided or t.is_quantized:
        raise TypeError(f"digest: cannot hash a {t.layout} tensor (only dense ones)")
    _put(h, b"T", f"{t.dtype}|{','.join(map(str, t.shape))}".encode())
    flat = t.detach().resolve_conj().resolve_neg().to("cpu").contiguous().reshape(-1)
    raw = flat if flat.dtype == torch.uint8 else flat.view(torch.uint8)
    _put(h, b"d", memoryview(raw.numpy()) if raw.numel() else b"")
