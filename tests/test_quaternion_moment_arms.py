"""Quaternion length Jacobians (Zoufaly et al.): R_S, R_Q, R_Q*, R_E and their maps, against finite differences
of one straight-line muscle length written in Euler angles, in the quaternion and in the constrained quaternion."""

import casadi
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.quaternion import (
    QuaternionSingularityError,
    angular_velocity_matrix,
    constrained_angular_velocity_matrix,
    constrained_from_spatial_jacobian,
    constrained_quaternion,
    constrained_quaternion_to_euler,
    constrained_rate_matrix,
    euler_angular_velocity_matrix,
    euler_from_spatial_jacobian,
    euler_to_constrained_quaternion,
    full_quaternion,
    quaternion_from_euler,
    quaternion_from_spatial_jacobian,
    rotation_matrix_from_quaternion,
    spatial_from_constrained_jacobian,
    spatial_from_euler_jacobian,
    spatial_from_quaternion_jacobian,
)

SEQUENCE = "YZX"
ORIGIN = np.array([0.12, -0.25, 0.05])  # on the parent, joint centre at 0
INSERTION = np.array([-0.03, 0.18, 0.09])  # on the child


def _axis_rotation(axis, angle):
    c, s = np.cos(angle), np.sin(angle)
    return {
        "X": np.array([[1, 0, 0], [0, c, -s], [0, s, c]]),
        "Y": np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
        "Z": np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]),
    }[axis]


def _euler_rotation(angles):
    return _axis_rotation("Y", angles[0]) @ _axis_rotation("Z", angles[1]) @ _axis_rotation("X", angles[2])


def _rotation_vector(v):
    angle = np.linalg.norm(v)
    if angle == 0:
        return np.eye(3)
    k = v / angle
    skew = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * skew + (1 - np.cos(angle)) * skew @ skew


def _length_of_rotation(rotation):
    return np.linalg.norm(ORIGIN - rotation @ INSERTION)


def _spatial_jacobian(rotation, h=1e-6):
    """R_S: dl/dδ for a body-frame rotation R exp(δ^), by central differences."""
    out = np.zeros(3)
    for k in range(3):
        e = np.zeros(3)
        e[k] = h
        out[k] = (_length_of_rotation(rotation @ _rotation_vector(e))
                  - _length_of_rotation(rotation @ _rotation_vector(-e))) / (2 * h)
    return out


def _symbolic_lengths():
    angles = casadi.SX.sym("angles", 3)
    quaternion = casadi.SX.sym("Q", 4)
    constrained = casadi.SX.sym("Qs", 3)

    def rotate(axis, angle):
        c, s = casadi.cos(angle), casadi.sin(angle)
        return {"X": casadi.blockcat([[1, 0, 0], [0, c, -s], [0, s, c]]),
                "Y": casadi.blockcat([[c, 0, s], [0, 1, 0], [-s, 0, c]]),
                "Z": casadi.blockcat([[c, -s, 0], [s, c, 0], [0, 0, 1]])}[axis]

    def length(rotation):
        return casadi.norm_2(casadi.DM(ORIGIN) - casadi.mtimes(rotation, casadi.DM(INSERTION)))

    euler_length = length(casadi.mtimes([rotate("Y", angles[0]), rotate("Z", angles[1]), rotate("X", angles[2])]))
    quaternion_length = length(rotation_matrix_from_quaternion(quaternion))
    q0 = casadi.sqrt(1 - casadi.sumsqr(constrained))
    constrained_length = length(rotation_matrix_from_quaternion(casadi.vertcat(q0, constrained)))
    return (
        casadi.Function("R_E", [angles], [casadi.gradient(euler_length, angles)]),
        casadi.Function("R_Q", [quaternion], [casadi.gradient(quaternion_length, quaternion)]),
        casadi.Function("R_Qs", [constrained], [casadi.gradient(constrained_length, constrained)]),
    )


CONFIGURATIONS = [np.array([0.3, -0.5, 1.1]), np.array([-1.2, 0.4, -0.7]), np.array([0.05, 0.02, -0.03])]


def test_euler_quaternion_conversion_and_sign():
    for angles in CONFIGURATIONS:
        quaternion = quaternion_from_euler(angles, SEQUENCE)
        assert quaternion[0] >= 0 and np.linalg.norm(quaternion) == pytest.approx(1.0)
        np.testing.assert_allclose(rotation_matrix_from_quaternion(quaternion), _euler_rotation(angles), atol=1e-14)
    # a rotation whose natural quaternion has Q0 < 0 is flipped
    angles = np.array([3.5, 0.2, 0.1])
    quaternion = quaternion_from_euler(angles, SEQUENCE)
    assert quaternion[0] > 0
    np.testing.assert_allclose(rotation_matrix_from_quaternion(quaternion), _euler_rotation(angles), atol=1e-14)
    np.testing.assert_allclose(constrained_quaternion(-quaternion), quaternion[1:])
    np.testing.assert_allclose(full_quaternion(quaternion[1:]), quaternion, atol=1e-15)


def test_g_maps_quaternion_rate_to_body_angular_velocity():
    quaternion = quaternion_from_euler(CONFIGURATIONS[0], SEQUENCE)
    rate = np.array([0.3, -0.2, 0.5, 0.1])
    rate -= quaternion * (quaternion @ rate)  # tangent to the unit sphere
    h = 1e-6
    rotation = rotation_matrix_from_quaternion(quaternion)
    derivative = (rotation_matrix_from_quaternion(quaternion + h * rate)
                  - rotation_matrix_from_quaternion(quaternion - h * rate)) / (2 * h)
    skew = rotation.T @ derivative
    omega = np.array([skew[2, 1], skew[0, 2], skew[1, 0]])
    g = angular_velocity_matrix(quaternion)
    np.testing.assert_allclose(2 * g @ rate, omega, atol=1e-8)
    np.testing.assert_allclose(g @ g.T, np.eye(3), atol=1e-14)
    np.testing.assert_allclose(g @ quaternion, 0, atol=1e-15)


def test_e_is_2gt_and_maps_constrained_rate_to_angular_velocity():
    quaternion = quaternion_from_euler(CONFIGURATIONS[1], SEQUENCE)
    e = constrained_angular_velocity_matrix(quaternion)
    np.testing.assert_allclose(e, 2 * angular_velocity_matrix(quaternion) @ constrained_rate_matrix(quaternion))
    rate = np.array([0.2, -0.4, 0.3])
    h = 1e-6
    plus = rotation_matrix_from_quaternion(full_quaternion(quaternion[1:] + h * rate))
    minus = rotation_matrix_from_quaternion(full_quaternion(quaternion[1:] - h * rate))
    skew = rotation_matrix_from_quaternion(quaternion).T @ (plus - minus) / (2 * h)
    np.testing.assert_allclose(e @ rate, [skew[2, 1], skew[0, 2], skew[1, 0]], atol=1e-8)


def test_euler_rate_matrix_maps_angle_rates_to_body_angular_velocity():
    angles = CONFIGURATIONS[0]
    rate = np.array([0.7, -0.3, 0.4])
    h = 1e-6
    derivative = (_euler_rotation(angles + h * rate) - _euler_rotation(angles - h * rate)) / (2 * h)
    skew = _euler_rotation(angles).T @ derivative
    np.testing.assert_allclose(euler_angular_velocity_matrix(angles, SEQUENCE) @ rate,
                               [skew[2, 1], skew[0, 2], skew[1, 0]], atol=1e-8)


@pytest.mark.parametrize("angles", CONFIGURATIONS)
def test_length_jacobians_in_every_coordinate_set_agree(angles):
    euler_gradient, quaternion_gradient, constrained_gradient = _symbolic_lengths()
    quaternion = quaternion_from_euler(angles, SEQUENCE)
    r_s = _spatial_jacobian(_euler_rotation(angles))
    r_e = euler_gradient(angles).full().ravel()
    r_q = quaternion_gradient(quaternion).full().ravel()
    r_qs = constrained_gradient(quaternion[1:]).full().ravel()
    np.testing.assert_allclose(euler_from_spatial_jacobian(r_s, angles, SEQUENCE).ravel(), r_e,
                               atol=1e-8)  # R_E = Jᵀ R_S
    np.testing.assert_allclose(spatial_from_euler_jacobian(r_e, angles, SEQUENCE).ravel(), r_s,
                               atol=1e-8)  # R_S = (Jᵀ)⁻¹ R_E
    np.testing.assert_allclose(spatial_from_quaternion_jacobian(r_q, quaternion).ravel(), r_s,
                               atol=1e-8)  # R_S = ½ G R_Q
    np.testing.assert_allclose(constrained_from_spatial_jacobian(r_s, quaternion).ravel(), r_qs,
                               atol=1e-8)  # R_Q* = Eᵀ R_S
    np.testing.assert_allclose(spatial_from_constrained_jacobian(r_qs, quaternion).ravel(), r_s, atol=1e-8)
    # 2 Gᵀ R_S is a preimage of R_S under ½ G, but not the analytic R_Q (the 3 -> 4 map is ambiguous)
    preimage = quaternion_from_spatial_jacobian(r_s, quaternion).ravel()
    np.testing.assert_allclose(spatial_from_quaternion_jacobian(preimage, quaternion).ravel(), r_s, atol=1e-8)
    assert np.abs(preimage - r_q).max() > 1e-3


def test_batch_maps_moment_arms_between_euler_and_constrained_quaternion():
    euler_gradient, _, constrained_gradient = _symbolic_lengths()
    angles = np.array(CONFIGURATIONS)
    euler_arms = -np.array([euler_gradient(a).full().ravel() for a in angles])
    constrained, quaternion_arms = euler_to_constrained_quaternion(angles, euler_arms, SEQUENCE)
    expected = -np.array([constrained_gradient(c).full().ravel() for c in constrained])
    np.testing.assert_allclose(quaternion_arms, expected, atol=1e-12)
    np.testing.assert_allclose(constrained_quaternion_to_euler(angles, quaternion_arms, SEQUENCE), euler_arms,
                               atol=1e-12)


def test_symbolic_quaternion_matrices():
    quaternion = casadi.SX.sym("Q", 4)
    assert isinstance(constrained_angular_velocity_matrix(quaternion), casadi.SX)
    angles = casadi.MX.sym("a", 3)
    assert isinstance(quaternion_from_euler(angles, SEQUENCE), casadi.MX)


def test_singularity_at_zero_scalar_part_is_a_clear_error():
    half_turn = np.array([0.0, 0.0, 1.0, 0.0])  # 180 degrees about y
    with pytest.raises(QuaternionSingularityError, match="Q0 = 0"):
        constrained_angular_velocity_matrix(half_turn)
    with pytest.raises(TrajoptInputError, match="singular"):
        spatial_from_constrained_jacobian(np.ones(3), half_turn)
    with pytest.raises(QuaternionSingularityError):
        euler_to_constrained_quaternion(np.array([[np.pi, 0.0, 0.0]]), np.ones((1, 3)), SEQUENCE)
    with pytest.raises(TrajoptInputError, match="'YQX'"):
        quaternion_from_euler(np.zeros(3), "YQX")


def test_quaternion_polynomial_maps_back_to_the_euler_gradient_of_its_length():
    """The Euler moment arms reported for a quaternion fit are -∂l/∂θ of l(Q*(θ)) (eq. 15 then eq. 5)."""
    from conftest import ROOT
    from trajopt.examples.das3_serratus.serratus_fit import QUATERNION, SETTINGS, euler_prediction, to_quaternion
    from trajopt.model.paths.fitting import fit_polynomial_path
    from trajopt.model.paths.samples import PathSamples

    samples = PathSamples.from_csv(ROOT / "trajopt" / "examples" / "das3_serratus" / "heldout.csv.gz",
                                   muscles=("serr_ant_5",))
    lengths, arms = samples.muscle("serr_ant_5")
    coordinates, quaternion_arms = to_quaternion(samples.q, arms)
    path = fit_polynomial_path("serr_ant_5", QUATERNION, coordinates, lengths, quaternion_arms, SETTINGS)
    angles = samples.q[:5]
    _, euler_arms = euler_prediction(path, angles, quaternion_form=True)
    h = 1e-6
    for j in range(6):
        step = np.zeros(6)
        step[j] = h
        plus, _ = euler_prediction(path, angles + step, quaternion_form=True)
        minus, _ = euler_prediction(path, angles - step, quaternion_form=True)
        np.testing.assert_allclose(euler_arms[:, j], -(plus - minus) / (2 * h), atol=1e-8)
