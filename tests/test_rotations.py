"""Rotations, quaternions and Euler sequences against SciPy and finite differences."""

import casadi as ca
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import rotations as rot

SEQUENCES = ["XYZ", "YZY", "ZXY", "ZYX", "XZX"]


def _np(x):
    return np.array(ca.DM(x))


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_euler_rotation_matches_scipy_intrinsic(sequence):
    rng = np.random.default_rng(1)
    for _ in range(5):
        angles = rng.uniform(-3, 3, 3)
        expected = Rotation.from_euler(sequence.upper(), angles).as_matrix()  # uppercase = intrinsic
        assert np.abs(_np(rot.euler_to_rotation(sequence, angles)) - expected).max() < 1e-14
        back = rot.rotation_to_euler(sequence, expected)
        assert np.abs(_np(rot.euler_to_rotation(sequence, back)) - expected).max() < 1e-13


def test_quaternion_rotation_and_product_match_scipy():
    rng = np.random.default_rng(2)
    for _ in range(5):
        a, b = rng.normal(size=4), rng.normal(size=4)
        a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
        ra = Rotation.from_quat(np.r_[a[1:], a[0]])
        rb = Rotation.from_quat(np.r_[b[1:], b[0]])
        assert np.abs(_np(rot.quaternion_to_rotation(a)) - ra.as_matrix()).max() < 1e-14
        product = _np(rot.quaternion_to_rotation(rot.quaternion_multiply(a, b)))
        assert np.abs(product - (ra * rb).as_matrix()).max() < 1e-14
        assert np.abs(rot.rotation_to_quaternion(ra.as_matrix()) - a * np.sign(a[0])).max() < 1e-14


def test_quaternion_rate_matrix_gives_body_angular_velocity():
    # omega_body = 2 G(Q) Qdot (Zoufaly et al. eq. 1) against R^T dR/dt by central differences.
    rng = np.random.default_rng(3)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    omega = rng.normal(size=3)
    qdot = 0.5 * _np(rot.quaternion_rate_matrix(quat)).T @ omega
    h = 1e-6
    r_plus = _np(rot.quaternion_to_rotation(quat + h * qdot))
    r_minus = _np(rot.quaternion_to_rotation(quat - h * qdot))
    r = _np(rot.quaternion_to_rotation(quat))
    omega_fd = _np(rot.vee(r.T @ (r_plus - r_minus) / (2 * h))).ravel()
    assert np.abs(omega_fd - omega).max() < 1e-9
    assert abs(quat @ qdot) < 1e-15  # unit norm is preserved
    assert np.abs(2 * _np(rot.quaternion_rate_matrix(quat)) @ qdot - omega).max() < 1e-14


@pytest.mark.parametrize("sequence", SEQUENCES)
def test_euler_rate_matrix_gives_body_angular_velocity(sequence):
    rng = np.random.default_rng(4)
    angles, rates = rng.uniform(-1.2, 1.2, 3) + np.array([0.0, 0.5, 0.0]), rng.normal(size=3)
    h = 1e-6
    r = _np(rot.euler_to_rotation(sequence, angles))
    dr = (_np(rot.euler_to_rotation(sequence, angles + h * rates))
          - _np(rot.euler_to_rotation(sequence, angles - h * rates))) / (2 * h)
    omega_fd = _np(rot.vee(r.T @ dr)).ravel()
    assert np.abs(_np(rot.euler_rate_matrix(sequence, angles)) @ rates - omega_fd).max() < 1e-9


def test_exp_and_log_are_inverse_and_smooth_at_zero():
    rng = np.random.default_rng(5)
    for v in [rng.normal(size=3), 1e-9 * rng.normal(size=3), np.zeros(3), np.array([3.0, 0.0, 0.0])]:
        quat = _np(rot.quaternion_exp(v)).ravel()
        assert abs(np.linalg.norm(quat) - 1) < 1e-15
        assert np.abs(Rotation.from_quat(np.r_[quat[1:], quat[0]]).as_rotvec() - v).max() < 1e-12
        assert np.abs(_np(rot.quaternion_log(quat)).ravel() - v).max() < 1e-12
    x = ca.SX.sym("x", 3)
    jac = ca.Function("j", [x], [ca.jacobian(rot.quaternion_exp(x), x)])
    assert np.abs(np.array(jac([0, 0, 0]))[1:, :] - 0.5 * np.eye(3)).max() < 1e-15


@pytest.mark.parametrize("sequence", ["YZY", "XYZ"])
def test_motion_conversion_round_trip(sequence):
    rng = np.random.default_rng(6)
    angles = np.cumsum(rng.uniform(-0.05, 0.05, (20, 3)), axis=0) + np.array([0.3, 1.0, -0.4])
    rates = rng.normal(size=(20, 3))
    quats, omegas = rot.euler_motion_to_quaternion(sequence, angles, rates)
    assert np.abs(np.linalg.norm(quats, axis=1) - 1).max() < 1e-14
    angles_back, rates_back = rot.quaternion_motion_to_euler(sequence, quats, omegas)
    assert np.abs(angles_back - angles).max() < 1e-12
    assert np.abs(rates_back - rates).max() < 1e-10


def test_bad_sequence_is_rejected():
    with pytest.raises(TrajoptInputError, match="XXY"):
        rot.euler_to_rotation("XXY", [0, 0, 0])


@pytest.mark.filterwarnings("ignore:Gimbal lock detected")
def test_conversion_at_gimbal_lock_is_reported():
    # YZY is singular when the middle angle is 0 (the identity rotation).
    with pytest.raises(TrajoptInputError, match="gimbal lock"):
        rot.quaternion_motion_to_euler("YZY", [[1.0, 0.0, 0.0, 0.0]], [[0.1, 0.2, 0.3]])
