"""Declared optimal-control variables (states, controls, algebraics, parameters) and time bounds."""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError


@dataclass(frozen=True)
class Free:
    """A free time quantity (duration or initial time) within [lower, upper], with an optional guess."""

    lower: float
    upper: float
    guess: float | None = None

    def __post_init__(self):
        if not (np.isfinite(self.lower) and np.isfinite(self.upper)) or self.lower > self.upper:
            raise TrajoptInputError(f"Free time bounds must be finite with lower <= upper, got "
                                    f"lower={self.lower}, upper={self.upper}")
        if self.guess is not None and not (self.lower <= self.guess <= self.upper):
            raise TrajoptInputError(f"Free time guess {self.guess} lies outside [{self.lower}, {self.upper}]")

    @property
    def initial_guess(self) -> float:
        return float(self.guess) if self.guess is not None else 0.5 * (self.lower + self.upper)


def time_bounds(value, what: str) -> tuple[float, float, float]:
    """(lower, upper, guess) of a fixed number or a Free(...)."""
    if isinstance(value, Free):
        return float(value.lower), float(value.upper), value.initial_guess
    number = float(value)
    if not np.isfinite(number):
        raise TrajoptInputError(f"{what} must be finite, got {value}")
    return number, number, number


@dataclass(frozen=True)
class Variable:
    """One declared variable: a CasADi SX column symbol with per-element bounds, labels and guess."""

    name: str
    symbol: ca.SX
    labels: tuple[str, ...]
    lower: np.ndarray
    upper: np.ndarray
    initial_lower: np.ndarray
    initial_upper: np.ndarray
    final_lower: np.ndarray
    final_upper: np.ndarray
    guess_start: np.ndarray
    guess_end: np.ndarray
    scale: np.ndarray | None

    @property
    def size(self) -> int:
        return self.symbol.numel()


def _pair(value, size: int, name: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Bounds given as None, a number (fixed) or a (lower, upper) pair, each scalar or per element."""
    if value is None:
        lower, upper = -np.inf, np.inf
    elif isinstance(value, tuple) and len(value) == 2:
        lower, upper = value
    else:
        lower = upper = value
    lower = _vector(lower, size, name, what + " lower")
    upper = _vector(upper, size, name, what + " upper")
    bad = lower > upper
    if np.any(bad):
        i = int(np.argmax(bad))
        raise TrajoptInputError(f"variable '{name}': {what} lower {lower[i]} > upper {upper[i]} "
                                f"(element {i})")
    return lower, upper


def _vector(value, size: int, name: str, what: str) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float).flatten()
    except (TypeError, ValueError) as error:
        raise TrajoptInputError(f"variable '{name}': {what} must be numeric, got {value!r}") from error
    if array.size == 1:
        array = np.full(size, array[0])
    if array.size != size:
        raise TrajoptInputError(f"variable '{name}': {what} has {array.size} values, expected {size}")
    if np.any(np.isnan(array)):
        raise TrajoptInputError(f"variable '{name}': {what} contains NaN: {array.tolist()}")
    return array


def _intersect(lower, upper, sub_lower, sub_upper, name: str, what: str):
    """Initial/final bounds must lie inside the path bounds; return the intersection."""
    new_lower, new_upper = np.maximum(lower, sub_lower), np.minimum(upper, sub_upper)
    bad = new_lower > new_upper
    if np.any(bad):
        i = int(np.argmax(bad))
        raise TrajoptInputError(
            f"variable '{name}': {what} bounds [{sub_lower[i]}, {sub_upper[i]}] do not intersect its "
            f"bounds [{lower[i]}, {upper[i]}] (element {i})")
    return new_lower, new_upper


def _default_guess(lower, upper, at_lower, at_upper) -> np.ndarray:
    """Midpoint of the tightest finite interval; 0 (clipped into bounds) where unbounded."""
    finite = np.isfinite(at_lower) & np.isfinite(at_upper)
    guess = np.zeros_like(at_lower)
    guess[finite] = 0.5 * (at_lower[finite] + at_upper[finite])
    return np.clip(guess, lower, upper)


def make_variable(name: str, size: int, bounds=None, initial=None, final=None, guess=None,
                  scale=None, labels=None) -> Variable:
    """Validate user bounds and build a Variable with a fresh SX symbol."""
    if not isinstance(name, str) or not name:
        raise TrajoptInputError(f"variable name must be a non-empty string, got {name!r}")
    if int(size) != size or size < 1:
        raise TrajoptInputError(f"variable '{name}': size must be a positive integer, got {size}")
    size = int(size)
    lower, upper = _pair(bounds, size, name, "bounds")
    initial_lower, initial_upper = _intersect(lower, upper, *_pair(initial, size, name, "initial"),
                                              name, "initial")
    final_lower, final_upper = _intersect(lower, upper, *_pair(final, size, name, "final"),
                                          name, "final")
    if guess is None:
        guess_start = _default_guess(lower, upper, initial_lower, initial_upper)
        guess_end = _default_guess(lower, upper, final_lower, final_upper)
        middle = _default_guess(lower, upper, lower, upper)
        # Unconstrained ends fall back to the middle of the bounds.
        guess_start = np.where(np.isfinite(initial_lower) & np.isfinite(initial_upper), guess_start, middle)
        guess_end = np.where(np.isfinite(final_lower) & np.isfinite(final_upper), guess_end, middle)
    else:
        guess_start = guess_end = _vector(guess, size, name, "guess")
    if scale is not None:
        scale = _vector(scale, size, name, "scale")
        if np.any(scale <= 0):
            raise TrajoptInputError(f"variable '{name}': scale must be positive, got {scale.tolist()}")
    if labels is None:
        labels = (name,) if size == 1 else tuple(f"{name}_{i}" for i in range(size))
    labels = tuple(str(label) for label in labels)
    if len(labels) != size:
        raise TrajoptInputError(f"variable '{name}': {len(labels)} labels given for size {size}")
    return Variable(name, ca.SX.sym(name, size), labels, lower, upper, initial_lower, initial_upper,
                    final_lower, final_upper, guess_start, guess_end, scale)


def stack(variables: list[Variable], name: str) -> ca.SX:
    """Column of all symbols of a kind (an empty SX symbol when there are none)."""
    if not variables:
        return ca.SX.sym(name, 0)
    return ca.vertcat(*[variable.symbol for variable in variables])


def concatenate(variables: list[Variable], attribute: str) -> np.ndarray:
    if not variables:
        return np.zeros(0)
    return np.concatenate([getattr(variable, attribute) for variable in variables])


def labels_of(variables: list[Variable]) -> list[str]:
    return [label for variable in variables for label in variable.labels]
