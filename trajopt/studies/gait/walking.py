"""Walking at a given average speed: the displacement of the walking direction's coordinate over the motion.

Moco's ``MocoAverageSpeedGoal`` asks for (x_com(tf) - x_com(t0)) / (tf - t0) = speed; between mirrored end
states of a left/right-symmetric model the centre of mass moves like the pelvis, so the pelvis translation
stands in for it (as Moco's example2DWalking and PredSim do).
"""

from __future__ import annotations

import casadi as ca

from trajopt.errors import TrajoptInputError


def displacement(built, coordinate: str) -> ca.SX:
    """coordinate(tf) - coordinate(t0), an endpoint expression of a ``MuscleDrivenProblem``."""
    names = tuple(built.model.coordinate_names)
    if coordinate not in names:
        raise TrajoptInputError(f"displacement: no coordinate '{coordinate}' (coordinates: {', '.join(names)})")
    x = built.q[names.index(coordinate)]
    return built.problem.final(x) - built.problem.initial(x)


def require_average_speed(built, coordinate: str, speed: float) -> ca.SX:
    """displacement / duration = ``speed`` (written displacement - speed * duration = 0); returns the displacement."""
    if not speed > 0:
        raise TrajoptInputError(f"average speed must be > 0 m/s, got {speed}")
    problem = built.problem
    distance = displacement(built, coordinate)
    problem.require(distance - speed * problem.final(problem.time), equals=0.0, name="average speed")
    return distance
