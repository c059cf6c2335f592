"""Kinematics of the example models: velocities and accelerations against finite differences of
positions along q(t) = integrate(q, ...), Jacobians, integrate/difference, custom joints."""

import casadi as ca
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import (
    Body,
    Coordinate,
    CustomJoint,
    EulerBallJoint,
    Linear,
    Model,
    OffsetFrame,
    TransformAxis,
    body_pose,
    coordinate_rates,
    difference,
    frame_jacobian,
    integrate,
    inverse_dynamics,
    point_acceleration,
    point_position,
    point_velocity,
)
from trajopt.core.multibody.example_models import double_pendulum_3d, planar_chain, random_state, spatial_chain
from trajopt.core.multibody.rotations import vee

MODELS = {
    "planar_chain": planar_chain,
    "spatial_chain": spatial_chain,
    "spatial_chain_euler": lambda: spatial_chain(with_quaternions=False),
    "double_pendulum_3d": double_pendulum_3d,
}
POINT = (0.03, -0.12, 0.05)


def _v(x):
    return np.asarray(x, dtype=float).ravel()


@pytest.fixture(scope="module", params=list(MODELS))
def model(request):
    return MODELS[request.param]()


def _path(model, q, u, udot, t):
    """A motion through (q, u, udot) at t = 0 with qdot = N(q) u exactly."""
    return _v(integrate(model, q, u * t + 0.5 * udot * t**2, 1.0)), u + udot * t


def test_velocities_and_accelerations_match_finite_differences(model):
    rng = np.random.default_rng(11)
    h = 1e-5
    for _ in range(3):
        q, u, udot = random_state(model, rng)
        (qp, up), (qm, um) = _path(model, q, u, udot, h), _path(model, q, u, udot, -h)
        for body in model.bodies:
            velocity = _v(point_velocity(model, q, u, body.name, POINT))
            fd_velocity = (_v(point_position(model, qp, body.name, POINT))
                           - _v(point_position(model, qm, body.name, POINT))) / (2 * h)
            assert np.abs(velocity - fd_velocity).max() < 1e-7 * (1 + np.abs(velocity).max()), body.name
            acceleration = _v(point_acceleration(model, q, u, udot, body.name, POINT))
            fd_acceleration = (_v(point_velocity(model, qp, up, body.name, POINT))
                               - _v(point_velocity(model, qm, um, body.name, POINT))) / (2 * h)
            assert np.abs(acceleration - fd_acceleration).max() < 1e-6 * (1 + np.abs(acceleration).max()), body.name
            # Angular part of the frame Jacobian against R^T dR/dt.
            jacobian = np.asarray(frame_jacobian(model, q, body.name, POINT))
            rotation = np.asarray(body_pose(model, q, body.name)[0])
            rotation_rate = (np.asarray(body_pose(model, qp, body.name)[0])
                             - np.asarray(body_pose(model, qm, body.name)[0])) / (2 * h)
            omega_fd = rotation @ _v(vee(ca.DM(rotation.T @ rotation_rate)))
            assert np.abs(jacobian[:3] @ u - omega_fd).max() < 1e-7 * (1 + np.abs(omega_fd).max())
            assert np.abs(jacobian[3:] @ u - velocity).max() < 1e-12 * (1 + np.abs(velocity).max())


def test_coordinate_rates_integrate_and_difference(model):
    rng = np.random.default_rng(12)
    q, u, _ = random_state(model, rng)
    h = 1e-6
    qdot_fd = (_v(integrate(model, q, u, h)) - _v(integrate(model, q, u, -h))) / (2 * h)
    assert np.abs(_v(coordinate_rates(model, q, u)) - qdot_fd).max() < 1e-8
    q1 = _v(integrate(model, q, u, 0.3))
    assert np.abs(_v(difference(model, q, q1)) - 0.3 * u).max() < 1e-12
    for joint in model.joints:
        if joint.nq == 4 or joint.nq == 7:  # quaternions stay unit
            s = model.q_slice(joint.name)
            assert abs(np.linalg.norm(q1[s.start:s.start + 4]) - 1) < 1e-15


def test_casadi_jacobian_of_positions_matches_finite_differences():
    model = spatial_chain()
    rng = np.random.default_rng(13)
    q, _, _ = random_state(model, rng)
    q_sym = ca.MX.sym("q", model.nq)  # the cached SX Functions are callable on MX
    tip = point_position(model, q_sym, "nail", POINT)
    jacobian = np.asarray(ca.Function("j", [q_sym], [ca.jacobian(tip, q_sym)])(q))
    h = 1e-6
    for k in range(model.nq):
        dq = np.zeros(model.nq)
        dq[k] = h
        fd = (_v(point_position(model, q + dq, "nail", POINT))
              - _v(point_position(model, q - dq, "nail", POINT))) / (2 * h)
        assert np.abs(jacobian[:, k] - fd).max() < 1e-8


def _custom_versus_euler(sequence):
    """The same body on a CustomJoint with rotation axes of `sequence` and on an EulerBallJoint."""
    models = []
    for use_custom in (True, False):
        model = Model("custom" if use_custom else "euler")
        model.add_body(Body("b", 2.0, (0.1, -0.3, 0.05), (0.1, 0.05, 0.08, 0.01, 0.0, -0.01)))
        coords = tuple(Coordinate(f"c{k}") for k in range(3))
        parent = OffsetFrame("ground", (0.1, 0.2, 0.3), (0.3, -0.2, 0.1))
        child = OffsetFrame("b", (0.0, 0.1, 0.0), (0.0, 0.4, 0.0))
        if use_custom:
            unit = {"X": (1, 0, 0), "Y": (0, 1, 0), "Z": (0, 0, 1)}
            axes = tuple(TransformAxis(unit[a], (f"c{k}",), Linear(1.0, 0.0)) for k, a in enumerate(sequence))
            axes += tuple(TransformAxis(unit[a], (), Linear(0.0, 0.0)) for a in "XYZ")
            model.add_joint(CustomJoint("j", parent, child, coords, axes))
        else:
            model.add_joint(EulerBallJoint("j", parent, child, coords, sequence))
        models.append(model)
    return models


@pytest.mark.parametrize("sequence", ["ZXY", "XYZ", "YZY"])
def test_custom_joint_with_three_rotations_equals_euler_joint(sequence):
    custom, euler = _custom_versus_euler(sequence)
    rng = np.random.default_rng(14)
    for _ in range(3):
        q, u, udot = rng.uniform(-1, 1, 3), rng.normal(size=3), rng.normal(size=3)
        assert np.abs(_v(point_position(custom, q, "b", POINT))
                      - _v(point_position(euler, q, "b", POINT))).max() < 1e-14
        assert np.abs(_v(inverse_dynamics(custom, q, u, udot)) - _v(inverse_dynamics(euler, q, u, udot))).max() < 1e-12


def test_custom_joint_translation_is_along_parent_axes():
    # Simbody's FunctionBased mobilizer: p_FM = sum f_k t_k with t_k fixed in F, whatever the rotation.
    model = Model("translating")
    model.add_body(Body("b", 1.0))
    axes = (
        TransformAxis((0, 0, 1), ("angle",), Linear(1.0, 0.0)),
        TransformAxis((1, 0, 0)),
        TransformAxis((0, 1, 0)),
        TransformAxis((1, 0, 0), ("angle",), Linear(0.5, 0.0)),
        TransformAxis((0, 1, 0), ("slide",), Linear(2.0, 0.1)),
        TransformAxis((0, 0, 1)),
    )
    model.add_joint(CustomJoint("j", OffsetFrame("ground"), OffsetFrame("b"),
                                (Coordinate("angle"), Coordinate("slide")), axes))
    q = np.array([0.7, 0.2])
    assert np.abs(_v(point_position(model, q, "b", (0, 0, 0))) - [0.35, 0.5, 0.0]).max() < 1e-15
    assert np.abs(_v(point_position(model, q, "b", (1, 0, 0)))
                  - [0.35 + np.cos(0.7), 0.5 + np.sin(0.7), 0.0]).max() < 1e-15


def test_model_errors_name_the_element():
    model = Model("broken")
    model.add_body(Body("a", 1.0))
    with pytest.raises(TrajoptInputError, match="'missing'"):
        model.add_joint(EulerBallJoint("j", OffsetFrame("missing"), OffsetFrame("a"),
                                       tuple(Coordinate(f"c{k}") for k in range(3))))
    with pytest.raises(TrajoptInputError, match="'a'"):
        model.finalize()  # body 'a' has no joint
    with pytest.raises(TrajoptInputError, match="nail"):
        point_position(spatial_chain(), np.zeros(18), "nail_typo")
