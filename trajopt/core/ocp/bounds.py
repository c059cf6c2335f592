"""Which bounds a solution sits on: a bound that is active decided part of the answer.

``active_bounds(solution)`` lists the variables (per label) and the initial time / duration whose solution
reaches a lower or upper path bound on some grid point. Fixed values (lower == upper, and a state pinned at the
start or the end) are not bounds in this sense and are left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ActiveBound:
    name: str  # a variable's label, or "initial_time" / "duration"
    side: str  # "lower" or "upper"
    bound: float
    points: int  # grid points on the bound (1 for the times)
    worst: float  # the value nearest the bound

    def __str__(self) -> str:
        where = f" at {self.points} grid point(s)" if self.name not in ("initial_time", "duration") else ""
        return f"{self.name} at its {self.side} bound {self.bound:g}{where} (value {self.worst:.6g})"


def _near(values: np.ndarray, bound: float, span: float, relative: float) -> np.ndarray:
    tolerance = relative * (span if np.isfinite(span) and span > 0 else max(1.0, abs(bound)))
    return np.abs(values - bound) <= tolerance


def _check(name: str, values: np.ndarray, lower: float, upper: float, relative: float) -> list[ActiveBound]:
    if not lower < upper:
        return []
    span = upper - lower
    found = []
    for side, bound in (("lower", lower), ("upper", upper)):
        if not np.isfinite(bound):
            continue
        on = _near(values, bound, span, relative)
        if on.any():
            worst = values[int(np.argmin(np.abs(values - bound)))]
            found.append(ActiveBound(name, side, float(bound), int(on.sum()), float(worst)))
    return found


def _pinned(lower, upper, size: int) -> np.ndarray:
    lower = np.broadcast_to(np.asarray(lower, dtype=float).flatten(), (size,))
    upper = np.broadcast_to(np.asarray(upper, dtype=float).flatten(), (size,))
    return lower == upper


def active_bounds(solution, relative: float = 1e-3, kinds=("states", "controls", "algebraics"),
                  times: bool = True) -> list[ActiveBound]:
    """Bounds reached within ``relative`` of the bound range (of max(1, |bound|) for a one-sided bound)."""
    discrete = solution.discrete
    found = []
    if times:
        blocks = discrete.layout.blocks
        for name, value in (("initial_time", solution.initial_time), ("duration", solution.duration)):
            lower, upper = float(blocks[name].lower[0, 0]), float(blocks[name].upper[0, 0])
            found += _check(name, np.array([value]), lower, upper, relative)
    problem = discrete.problem
    for kind in kinds:
        for variable in getattr(problem, kind):
            values = np.atleast_2d(solution.value(variable.symbol))
            lower = np.broadcast_to(np.asarray(variable.lower, dtype=float).flatten(), (variable.size,))
            upper = np.broadcast_to(np.asarray(variable.upper, dtype=float).flatten(), (variable.size,))
            pinned_start = _pinned(variable.initial_lower, variable.initial_upper, variable.size)
            pinned_end = _pinned(variable.final_lower, variable.final_upper, variable.size)
            for row, label in enumerate(variable.labels):
                keep = np.ones(values.shape[1], dtype=bool)
                keep[0] &= not pinned_start[row]
                keep[-1] &= not pinned_end[row]
                found += _check(label, values[row][keep], lower[row], upper[row], relative)
    return found
