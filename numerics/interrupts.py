"""Whether a real Ctrl-C reached the process, as opposed to a ``KeyboardInterrupt`` raised by code.

Python turns SIGINT into ``KeyboardInterrupt``, and any code can also ``raise KeyboardInterrupt``.
A claim from a plugin that raises it itself must not end a run, while the user's Ctrl-C must stop
it at once.  ``watching()`` installs, for the length of a run and in the main thread only, a SIGINT
handler that records the signal and then raises ``KeyboardInterrupt`` as Python's default one does;
``pressed()`` tells whether it fired.  Outside ``watching()`` (the Python API, another thread),
``pressed()`` is True for every ``KeyboardInterrupt``: nothing is known to tell them apart, so the
cautious reading (stop) wins.
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["watching", "pressed", "stop_if_pressed"]

_watching = False
_pressed = False


def pressed() -> bool:
    """True when SIGINT arrived during ``watching()``, or when nothing is watching."""
    return _pressed or not _watching


def _on_sigint(signum, frame):
    global _pressed
    _pressed = True
    raise KeyboardInterrupt


@contextmanager
def watching() -> Iterator[None]:
    """Record SIGINT for the block's length (``pressed``); the previous handler comes back after."""
    global _watching, _pressed
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_sigint)
    _watching, _pressed = True, False
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        _watching = False


def stop_if_pressed() -> None:
    """Raise ``KeyboardInterrupt`` if SIGINT arrived during ``watching()``.  The handler raises it
    where the signal lands, and code there may swallow it (an exception raised inside a finaliser,
    or caught by a library's ``except BaseException``): a run calls this between its steps, so that a
    Ctrl-C whose exception was lost still stops it."""
    if _watching and _pressed:
        raise KeyboardInterrupt
