"""A first guess for a muscle-driven problem from a coordinates trajectory (e.g. a motion file's).

Speeds are u = N(q)⁺ q̇ with q̇ by finite differences (u = q̇ when q has no quaternions), accelerations the
finite differences of u; activations and excitations are a constant, actuator controls and residuals 0.
Read the file with ``trajopt.io.read_motion(file, coordinates=model.coordinate_names)`` (angles in radians).
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.multibody import coordinate_rates_matrix
from trajopt.ocp import Guess


def speeds_from_coordinates(multibody, time, q) -> np.ndarray:
    """u (frames x nv) from q (frames x nq) by finite differences (np.gradient) of q."""
    qdot = np.gradient(q, time, axis=0)
    if multibody.nq == multibody.nv:
        return qdot
    return np.vstack([np.linalg.pinv(np.asarray(coordinate_rates_matrix(multibody, ca.DM(q[k])))) @ qdot[k]
                      for k in range(len(time))])


def guess_from_coordinates(built, time, q, muscle_level: float = 0.05) -> Guess:
    """A ``Guess`` for a ``MuscleDrivenProblem`` from q (frames x nq, model coordinate order) on ``time``."""
    time, q = np.asarray(time, dtype=float), np.atleast_2d(np.asarray(q, dtype=float))
    multibody = built.model.multibody
    if q.shape != (time.size, multibody.nq):
        raise TrajoptInputError(f"guess: q has shape {q.shape}, expected ({time.size}, {multibody.nq})")
    u = speeds_from_coordinates(multibody, time, q)
    guess = Guess(time)
    guess.set(built.q, q).set(built.u, u)
    if built.accelerations is not None and built.accelerations.is_symbolic():
        guess.set(built.accelerations, np.gradient(u, time, axis=0))
    muscles = np.full((time.size, len(built.model.muscle_names)), muscle_level)
    guess.set(built.activations, muscles)
    if built.excitations is not None:
        guess.set(built.excitations, muscles)
    for symbol in (built.actuator_controls, built.residuals):
        if symbol is not None:
            guess.set(symbol, np.zeros((time.size, symbol.numel())))
    return guess
