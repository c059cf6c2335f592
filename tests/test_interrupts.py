"""A Ctrl-C that some call swallows (a destructor, a library catching it) still stops the phase it came in."""

import os
import signal
import time

import pytest

from trajopt.core.ocp.interrupts import Interrupted, interrupted_during, remember_interrupts


def _swallowed_sigint():
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)  # the handler runs here
    except KeyboardInterrupt:
        pass  # as "Exception ignored in __del__" would


def test_a_swallowed_ctrl_c_ends_its_phase_as_interrupted():
    previous = signal.getsignal(signal.SIGINT)
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even if the runner ignores it
        remember_interrupts()
        with pytest.raises(Interrupted) as raised:
            with interrupted_during("the checks", "solve A"):
                _swallowed_sigint()
        assert (raised.value.phase, raised.value.finished) == ("the checks", "solve A")
    finally:
        remember_interrupts()  # forgets the Ctrl-C
        signal.signal(signal.SIGINT, previous)


def test_a_phase_without_ctrl_c_ends_normally():
    previous = signal.getsignal(signal.SIGINT)
    try:
        remember_interrupts()
        with interrupted_during("the checks"):
            value = 1 + 1
        assert value == 2
    finally:
        signal.signal(signal.SIGINT, previous)
