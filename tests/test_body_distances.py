"""Distances between body origins (PredSim's distance constraints) against hand-computed geometry."""

import casadi as ca
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.body_distances import BodyDistance, body_distance
from trajopt.core.multibody.example_models import double_pendulum_3d


def _rotation(quaternion):
    w, x, y, z = quaternion / np.linalg.norm(quaternion)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def test_projected_distance_of_the_second_rod_is_the_first_rods_tip_in_the_plane():
    # rod1 hangs from the ground origin; rod2's origin is rod1's tip, 1 m along rod1's -y axis, and rod1's
    # orientation is the joint frame's turn (-90 deg about z) times the joint's quaternion.
    rng = np.random.default_rng(20261128)
    model = double_pendulum_3d()
    q = ca.SX.sym("q", model.nq)
    turn = _rotation(np.array([np.cos(-np.pi / 4), 0.0, 0.0, np.sin(-np.pi / 4)]))
    for axes in ((0, 2), (0, 1, 2), (1,)):
        distance = ca.Function("d", [q], [body_distance(model, q, BodyDistance("rod1", "rod2", 0.1, axes=axes))])
        for _ in range(5):
            quaternions = rng.normal(size=(2, 4))
            values = np.concatenate([quaternions[0] / np.linalg.norm(quaternions[0]),
                                     quaternions[1] / np.linalg.norm(quaternions[1])])
            tip = turn @ _rotation(values[:4]) @ np.array([0.0, -1.0, 0.0])
            assert float(distance(values)) == pytest.approx(np.linalg.norm(tip[list(axes)]), abs=1e-12)


def test_a_body_the_model_lacks_and_impossible_bounds_are_refused():
    model = double_pendulum_3d()
    with pytest.raises(TrajoptInputError, match="hand_r"):
        body_distance(model, ca.SX.sym("q", model.nq), BodyDistance("hand_r", "rod1", 0.1))
    with pytest.raises(TrajoptInputError, match="lower"):
        BodyDistance("rod1", "rod2", 0.5, 0.2)
