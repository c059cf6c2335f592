"""Residual actuators: one description for every study (static optimization, tracking, muscle-driven problems).

A residual is a generalized force ``optimal_force * control`` on a coordinate, with ``|control| <= max_control``
and ``weight * Σ control²`` in the objective (integrated over time in the optimal-control studies, per frame in
static optimization), as Moco's ModOpAddResiduals / ModOpAddReserves with a MocoControlGoal weight.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Callable

from trajopt.errors import TrajoptInputError


class ResidualCoordinates(enum.Enum):
    """Which coordinates carry residuals."""

    ALL = "every coordinate"
    GROUND = "the coordinates of the joints attached to ground"


@dataclass(frozen=True)
class Residuals:
    """Residual actuators on ``coordinates`` (every one by default).

    ``weight``: of ``Σ control²`` in the objective of studies that write it (static optimization, tracking); in a
    ``muscle_driven_problem`` the objective is the caller's: add ``weight * ResidualPenalty(built.residuals)``.
    ``generalized_forces(q, forces) -> nv``, when given, maps ``optimal_force * control`` to generalized forces
    (e.g. torques about body axes of an Euler-angle joint, Jᵀ r); default: the identity.
    ``warn_above``: static optimization reports the frames whose residual force exceeds it (N·m or N).
    """

    optimal_force: float = 1.0
    max_control: float = math.inf
    weight: float = 1.0
    coordinates: ResidualCoordinates = ResidualCoordinates.ALL
    generalized_forces: Callable | None = None
    warn_above: float = 1.0

    def __post_init__(self):
        for name in ("optimal_force", "warn_above"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise TrajoptInputError(f"Residuals.{name} must be a finite number > 0, got {value!r}")
        if not self.max_control > 0:
            raise TrajoptInputError(f"Residuals.max_control must be > 0, got {self.max_control!r}")
        if not (math.isfinite(self.weight) and self.weight >= 0):
            raise TrajoptInputError(f"Residuals.weight must be a finite number >= 0, got {self.weight!r}")
        if type(self.coordinates) is not ResidualCoordinates:
            raise TrajoptInputError(f"Residuals.coordinates must be a ResidualCoordinates, got {self.coordinates!r}")

    def require(self, study: str, coordinates=(ResidualCoordinates.ALL, ResidualCoordinates.GROUND),
                bounded: bool = True, mapped: bool = True) -> None:
        """Refuse in one line the settings ``study`` does not implement."""
        if self.coordinates not in coordinates:
            raise TrajoptInputError(f"{study}: residuals on {self.coordinates.value} are not available (only on "
                                    f"{' or '.join(c.value for c in coordinates)})")
        if not bounded and math.isfinite(self.max_control):
            raise TrajoptInputError(f"{study}: residual controls are unbounded; got max_control={self.max_control}")
        if not mapped and self.generalized_forces is not None:
            raise TrajoptInputError(f"{study}: residuals act on the coordinates directly; generalized_forces is not "
                                    f"available")
