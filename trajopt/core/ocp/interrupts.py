"""Ctrl-C during an IPOPT solve: stop at once and say so, instead of a "solver failure" and the writing of results.

casadi turns the interrupt into an exception inside IPOPT: the solve returns with ``NonIpopt_Exception_Thrown`` or
``User_Requested_Stop``, or raises ``KeyboardInterrupt``, depending on where IPOPT was. ``call_solver`` watches for
SIGINT while the solver runs and raises ``SolveInterrupted`` in every case, with the status and iteration IPOPT
reached; the command line turns it into one line and exit code 130. ``interrupted_during`` does the same for a
phase that is not a solve (``Interrupted``: the phase and the results finished before it).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from dataclasses import dataclass


class SolveInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped IPOPT: its return status, the iteration reached, the constraint violation when known."""

    def __init__(self, status: str, iterations: int, violation: float | None = None):
        super().__init__(status, iterations)
        self.status = status
        self.iterations = iterations
        self.violation = violation  # IPOPT's primal infeasibility (largest scaled constraint violation) at the stop
        self.context = ""  # what was being solved, when the caller says

    def __str__(self) -> str:
        context = f" ({self.context})" if self.context else ""
        worst = "" if self.violation is None else f"; worst constraint violation {self.violation:.3g} (IPOPT's inf_pr)"
        return f"IPOPT stopped ({self.status}) at iteration {self.iterations}{context}{worst}"


class Interrupted(KeyboardInterrupt):
    """Ctrl-C outside a solve (a check, an analysis): the phase it stopped and what had finished before it, which the
    command line prints after "interrupted"."""

    def __init__(self, phase: str, finished: str = ""):
        super().__init__(phase, finished)
        self.phase = phase
        self.finished = finished

    def __str__(self) -> str:
        return f"during {self.phase}" + (f"; finished before it: {self.finished}" if self.finished else "")


@contextlib.contextmanager
def interrupted_during(phase: str, finished: str = ""):
    """A Ctrl-C inside becomes ``Interrupted(phase, finished)``, also one that a CasADi or SciPy call swallowed (it
    was remembered); a ``SolveInterrupted`` or ``Interrupted`` raised deeper keeps its own, more precise account."""
    try:
        yield
        raise_if_interrupted()
    except (SolveInterrupted, Interrupted):
        raise
    except KeyboardInterrupt:
        raise Interrupted(phase, finished) from None


_requested = threading.Event()


def remember_interrupts() -> None:
    """From now on a Ctrl-C raises ``KeyboardInterrupt`` as usual and is also remembered, so one that a CasADi call
    swallows (it checks for signals in its own loops) still stops the run at the next ``raise_if_interrupted``."""
    _requested.clear()

    def handler(signum, frame):
        _requested.set()
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, handler)


def raise_if_interrupted() -> None:
    """``KeyboardInterrupt`` if a remembered Ctrl-C came (a phase boundary calls it)."""
    if _requested.is_set():
        raise KeyboardInterrupt


@dataclass
class _Watch:
    requested: bool = False


@contextlib.contextmanager
def sigint_watch():
    """Record a SIGINT while inside (and still raise ``KeyboardInterrupt``, so casadi stops IPOPT); only in the main
    thread and only where SIGINT is not ignored (a worker process keeps its own handling)."""
    watch = _Watch()
    if threading.current_thread() is not threading.main_thread():
        yield watch
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):
        yield watch
        return

    def handler(signum, frame):
        watch.requested = True
        if callable(previous) and previous is not signal.default_int_handler:
            previous(signum, frame)
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)
    try:
        yield watch
    finally:
        signal.signal(signal.SIGINT, previous)


def call_solver(nlpsol, **arguments):
    """``nlpsol(**arguments)`` and its stats; a Ctrl-C during the call raises ``SolveInterrupted``."""
    result = None
    with sigint_watch() as watch:
        try:
            result = nlpsol(**arguments)
        except KeyboardInterrupt:
            watch.requested = True
    stats = nlpsol.stats()
    status = str(stats.get("return_status", "interrupted"))
    if watch.requested or status == "User_Requested_Stop":
        violations = stats.get("iterations", {}).get("inf_pr", [])
        raise SolveInterrupted(status, int(stats.get("iter_count", -1)), float(violations[-1]) if violations else None)
    return result, stats
