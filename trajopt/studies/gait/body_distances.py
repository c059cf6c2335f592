"""Minimum distances between bodies during gait: PredSim's distance constraints.

A predicted gait may pass one foot through the other, or an arm through the thigh, because nothing in the
multibody model stops it. PredSim bounds the distance between pairs of body origins projected on the ground's
horizontal plane (``S.bounds.distanceConstraints``: the feet, the tibias and the toes apart, each hand away from
its thigh); ``require_body_distances`` adds the same path constraints to any gait study.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.kinematics import point_position

HORIZONTAL = (0, 2)  # the ground's x and z axes: the horizontal plane of a y-up model


@dataclass(frozen=True)
class BodyDistance:
    """lower <= distance between the origins of ``first`` and ``second``, projected on ``axes`` (ground axes
    indices), <= upper (metres)."""

    first: str
    second: str
    lower: float
    upper: float = np.inf
    axes: tuple[int, ...] = HORIZONTAL

    def __post_init__(self):
        if not (0 <= self.lower < self.upper) or any(axis not in (0, 1, 2) for axis in self.axes) or not self.axes:
            raise TrajoptInputError(f"BodyDistance {self.first}-{self.second}: need 0 <= lower < upper and axes "
                                    f"among 0, 1, 2; got lower={self.lower}, upper={self.upper}, axes={self.axes}")


def body_distance(multibody, q, distance: BodyDistance) -> ca.SX:
    """The projected distance between the two bodies' origins at coordinates ``q`` (a body the model lacks is a
    ``TrajoptInputError`` naming it)."""
    difference = point_position(multibody, q, distance.first) - point_position(multibody, q, distance.second)
    return ca.norm_2(ca.vertcat(*[difference[axis] for axis in distance.axes]))


def require_body_distances(built, distances: Sequence[BodyDistance]) -> None:
    """Add each distance's bounds as path constraints of a ``MuscleDrivenProblem`` (on the squared distance, which
    is smooth where the bodies meet)."""
    mb = built.model.multibody
    for distance in distances:
        squared = body_distance(mb, built.q, distance) ** 2
        upper = distance.upper ** 2 if np.isfinite(distance.upper) else None
        built.problem.require(squared, lower=distance.lower ** 2, upper=upper,
                              name=f"distance {distance.first}-{distance.second}")


def predsim_body_distances(side_suffixes: tuple[str, str] = ("_r", "_l")) -> tuple[BodyDistance, ...]:
    """PredSim's default distance constraints (its Falisse et al. 2022 settings): calcanei 0.09 m apart, tibias
    0.11 m, toes 0.10 m, each hand 0.18 m from its femur, all in the horizontal plane, at most 2 m."""
    right, left = side_suffixes
    return (BodyDistance(f"calcn{right}", f"calcn{left}", 0.09, 2.0),
            BodyDistance(f"hand{right}", f"femur{right}", 0.18, 2.0),
            BodyDistance(f"hand{left}", f"femur{left}", 0.18, 2.0),
            BodyDistance(f"tibia{right}", f"tibia{left}", 0.11, 2.0),
            BodyDistance(f"toes{right}", f"toes{left}", 0.10, 2.0))
