"""Passive 3D double pendulum of Zoufaly et al. (two rods 1 m long, radius 0.1 m, 1 kg, spherical
joints), written with quaternion ball joints and with YZY Euler joints.

The paper gives no initial state, so one is chosen here: both rods tilted ~35-45 deg and spinning,
with the joint frames turned so that the YZY parametrization stays away from gimbal lock.
Integration: scipy DOP853, rtol 1e-10, atol 1e-12; quaternions are normalized where the
right-hand side uses them (the projected ODE), and the stored quaternions are checked for drift.
"""

import casadi as ca
import numpy as np
import pytest
from scipy.integrate import solve_ivp

from trajopt.core.multibody import (
    BallJoint,
    convert_ball_joint_motion,
    coordinate_rates,
    forward_dynamics,
    kinetic_energy,
    point_position,
    potential_energy,
)
from trajopt.core.multibody.example_models import double_pendulum_3d
from trajopt.core.multibody.rotations import quaternion_exp, quaternion_multiply

DURATION = 5.0
TIMES = np.linspace(0.0, DURATION, 501)


def _rhs_function(model):
    """Passive dynamics xdot = (N(q) u, FD(q, u, 0)) as one casadi Function (quaternions normalized)."""
    x = ca.SX.sym("x", model.nq + model.nv)
    q, u = x[: model.nq], x[model.nq :]
    parts = []
    for joint in model.joints:
        s = model.q_slice(joint.name)
        qj = q[s]
        parts.append(qj / ca.norm_2(qj) if isinstance(joint, BallJoint) else qj)
    q_projected = ca.vertcat(*parts)
    udot = forward_dynamics(model, q_projected, u, ca.DM.zeros(model.nv))
    return ca.Function("pendulum_rhs", [x], [ca.vertcat(coordinate_rates(model, q_projected, u), udot)])


def _simulate(model, q0, u0):
    rhs = _rhs_function(model)
    solution = solve_ivp(lambda t, x: np.asarray(rhs(x)).ravel(), (0.0, DURATION), np.r_[q0, u0],
                         method="DOP853", rtol=1e-10, atol=1e-12, t_eval=TIMES)
    assert solution.success
    return solution.y[: model.nq].T, solution.y[model.nq :].T


def _initial_state(model):
    """Rods tilted from the hanging pose about oblique axes, with angular velocities."""
    rest = np.array([np.cos(np.pi / 4), 0.0, 0.0, np.sin(np.pi / 4)])  # R_FM = Rz(90 deg) hangs straight
    tilt1 = np.asarray(quaternion_exp([0.5, 0.0, 0.35])).ravel()
    tilt2 = np.asarray(quaternion_exp([-0.3, 0.1, 0.6])).ravel()
    q0 = np.r_[np.asarray(quaternion_multiply(rest, tilt1)).ravel(),
               np.asarray(quaternion_multiply(rest, tilt2)).ravel()]
    u0 = np.array([0.8, 1.5, -0.4, -0.6, 2.0, 0.5])
    return q0, u0


@pytest.fixture(scope="module")
def quaternion_run():
    model = double_pendulum_3d()
    q0, u0 = _initial_state(model)
    q, u = _simulate(model, q0, u0)
    return model, q0, u0, q, u


def _energies(model, q, u):
    kinetic = np.array([float(kinetic_energy(model, qk, uk)) for qk, uk in zip(q, u)])
    potential = np.array([float(potential_energy(model, qk)) for qk in q])
    return kinetic, potential


def test_quaternion_pendulum_conserves_energy_and_unit_norm(quaternion_run):
    model, _, _, q, u = quaternion_run
    kinetic, potential = _energies(model, q, u)
    total = kinetic + potential
    drift = np.abs(total - total[0]).max()
    # Relative to |E(0)| (potential zero at the top pivot) and, more strictly, to the largest kinetic energy.
    assert drift / abs(total[0]) <= 1e-6, f"energy drift {drift:.3e} J of |E0| = {abs(total[0]):.3f} J"
    assert drift / kinetic.max() <= 1e-6, f"energy drift {drift:.3e} J of max KE = {kinetic.max():.3f} J"
    norms = np.linalg.norm(q.reshape(-1, 2, 4), axis=2)
    assert np.abs(norms - 1).max() <= 1e-8
    assert kinetic.max() - kinetic.min() > 1.0  # the pendulum really moves: energy is exchanged


def test_yzy_euler_pendulum_follows_the_same_trajectory(quaternion_run):
    quaternion_model, q0, u0, q_quat, u_quat = quaternion_run
    euler_model = double_pendulum_3d("YZY")
    angles0, rates0 = convert_ball_joint_motion(quaternion_model, euler_model, q0, u0)
    angles, rates = _simulate(euler_model, angles0[0], rates0[0])
    # Away from gimbal lock: the middle YZY angle stays far from 0 and pi for both joints.
    assert np.abs(np.sin(angles[:, [1, 4]])).min() > 0.3
    tip = (0.0, -1.0, 0.0)
    for body in ("rod1", "rod2"):
        quaternion_tips = np.array([np.asarray(point_position(quaternion_model, qk, body, tip)).ravel()
                                    for qk in q_quat])
        euler_tips = np.array([np.asarray(point_position(euler_model, qk, body, tip)).ravel() for qk in angles])
        assert np.abs(quaternion_tips - euler_tips).max() <= 1e-6, body
    # The converted Euler motion equals the quaternion motion converted afterwards.
    angles_from_quaternions, _ = convert_ball_joint_motion(quaternion_model, euler_model, q_quat, u_quat)
    assert np.abs(np.unwrap(angles_from_quaternions, axis=0) - np.unwrap(angles, axis=0)).max() <= 1e-6
