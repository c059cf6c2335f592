"""Generalized coordinates with their names, ranges, defaults and locked flags (as OpenSim's)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trajopt.errors import TrajoptInputError


@dataclass(frozen=True)
class Coordinate:
    """A scalar joint coordinate. `rotational` is False for translations (m) and True for angles (rad).

    `locked` is kept from the model file; `Model.unlocked_speed_indices` and
    `dynamics.forward_dynamics(..., respect_locks=True)` treat locked coordinates as fixed.
    """

    name: str
    default_value: float = 0.0
    range: tuple[float, float] = (-math.inf, math.inf)
    locked: bool = False
    rotational: bool = True

    def __post_init__(self):
        if not self.name:
            raise TrajoptInputError("Coordinate: empty name")
        low, high = self.range
        if not low <= high:
            raise TrajoptInputError(f"Coordinate '{self.name}': range {self.range} has min > max")
