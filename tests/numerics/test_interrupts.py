"""Telling a real Ctrl-C from a KeyboardInterrupt raised by code (numerics/interrupts.py), and
stopping on a Ctrl-C whose exception was swallowed where it landed."""
from __future__ import annotations

import os
import signal
import threading

import pytest

from mmicl.numerics import interrupts


def _sigint_swallowed() -> None:
    """Deliver SIGINT to this process and swallow the KeyboardInterrupt the handler raises (as an
    exception inside a finaliser, or a library's ``except BaseException``, would)."""
    try:
        os.kill(os.getpid(), signal.SIGINT)
        signal.pthread_kill(threading.get_ident(), 0)  # a point at which the pending signal runs
        for _ in range(1000):
            pass
    except KeyboardInterrupt:
        pass


def test_a_swallowed_ctrl_c_still_stops_the_run_at_its_next_step():
    before = signal.getsignal(signal.SIGINT)
    with interrupts.watching():
        interrupts.stop_if_pressed()  # nothing pressed: no stop
        assert not interrupts.pressed()
        _sigint_swallowed()
        assert interrupts.pressed()
        with pytest.raises(KeyboardInterrupt):
            interrupts.stop_if_pressed()
    assert signal.getsignal(signal.SIGINT) is before  # the run's handler is gone after it


def test_a_keyboard_interrupt_raised_by_code_is_not_a_ctrl_c():
    with interrupts.watching():
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            pass
        assert not interrupts.pressed()
        interrupts.stop_if_pressed()  # no signal arrived: the run goes on
    interrupts.stop_if_pressed()  # outside a run: never raises
