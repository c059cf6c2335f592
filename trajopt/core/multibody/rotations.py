"""Rotations: matrices, unit quaternions (scalar first) and body-fixed Euler sequences.

Every function that builds an expression works on casadi SX/MX/DM and numpy inputs alike.
Quaternions are ``(w, x, y, z)``; angular velocities are expressed in the rotated (body) frame,
as in Zoufaly et al.: omega = 2 G(Q) Qdot. Euler sequences such as ``"YZY"`` or ``"XYZ"`` are
body-fixed (intrinsic): R = R_a1(angle1) R_a2(angle2) R_a3(angle3).
"""

from __future__ import annotations

import casadi as ca
import numpy as np
from scipy.spatial.transform import Rotation as _ScipyRotation

from trajopt.errors import TrajoptInputError

UNIT_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
# Below this rotation angle (rad) the exponential/log maps use their Taylor series.
_SMALL_ANGLE = 1e-6


def _column(v):
    """A casadi column (SX/MX stay symbolic, numbers become DM)."""
    if isinstance(v, (ca.SX, ca.MX, ca.DM)):
        return v if v.size2() == 1 else ca.vec(v)
    return ca.DM(np.asarray(v, dtype=float).reshape(-1))


def skew(v):
    """Cross-product matrix: skew(a) @ b = a x b."""
    v = _column(v)
    return ca.vertcat(
        ca.horzcat(0, -v[2], v[1]),
        ca.horzcat(v[2], 0, -v[0]),
        ca.horzcat(-v[1], v[0], 0),
    )


def vee(matrix):
    """Inverse of `skew` (antisymmetric part of a 3x3 matrix as a vector)."""
    m = matrix
    return 0.5 * ca.vertcat(m[2, 1] - m[1, 2], m[0, 2] - m[2, 0], m[1, 0] - m[0, 1])


def check_sequence(sequence: str) -> str:
    """Validate an Euler sequence such as 'YZY' or 'XYZ' (no equal consecutive axes)."""
    seq = str(sequence).upper()
    if len(seq) != 3 or any(a not in UNIT_AXES for a in seq) or seq[0] == seq[1] or seq[1] == seq[2]:
        raise TrajoptInputError(f"Euler sequence '{sequence}' is invalid: use three of X, Y, Z, no repeats in a row")
    return seq


def rotation_about_axis(axis, angle):
    """Rotation by `angle` about the unit vector `axis` (Rodrigues). `axis` must be numeric."""
    a = np.asarray(axis, dtype=float).reshape(3)
    norm = np.linalg.norm(a)
    if norm == 0.0:
        raise TrajoptInputError(f"rotation axis {tuple(a)} has zero length")
    a = a / norm
    # Exact zeros in the axis keep SX expressions short (casadi drops 0*x terms).
    a = np.where(np.abs(a) < 1e-15, 0.0, a)
    k = ca.DM(np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]]))
    kk = ca.DM(np.outer(a, a) - np.eye(3))
    return ca.DM.eye(3) + ca.sin(angle) * k + (1 - ca.cos(angle)) * kk


def euler_to_rotation(sequence: str, angles):
    """Rotation matrix of body-fixed Euler angles: R = R_a1(angles[0]) R_a2(angles[1]) R_a3(angles[2])."""
    seq = check_sequence(sequence)
    angles = _column(angles)
    r = rotation_about_axis(UNIT_AXES[seq[0]], angles[0])
    r = ca.mtimes(r, rotation_about_axis(UNIT_AXES[seq[1]], angles[1]))
    return ca.mtimes(r, rotation_about_axis(UNIT_AXES[seq[2]], angles[2]))


def euler_rate_matrix(sequence: str, angles):
    """E(angles) with omega_body = E @ angle_rates for body-fixed Euler angles."""
    seq = check_sequence(sequence)
    angles = _column(angles)
    r2 = rotation_about_axis(UNIT_AXES[seq[1]], angles[1])
    r3 = rotation_about_axis(UNIT_AXES[seq[2]], angles[2])
    e1 = ca.DM(UNIT_AXES[seq[0]])
    e2 = ca.DM(UNIT_AXES[seq[1]])
    e3 = ca.DM(UNIT_AXES[seq[2]])
    col1 = ca.mtimes(r3.T, ca.mtimes(r2.T, e1))
    col2 = ca.mtimes(r3.T, e2)
    return ca.horzcat(col1, col2, e3)


def quaternion_to_rotation(quaternion):
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    q = _column(quaternion)
    w, x, y, z = q[0], q[1], q[2], q[3]
    return ca.vertcat(
        ca.horzcat(1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)),
        ca.horzcat(2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)),
        ca.horzcat(2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)),
    )


def quaternion_multiply(a, b):
    """Hamilton product a * b (rotation b applied in the frame rotated by a)."""
    a = _column(a)
    b = _column(b)
    aw, av = a[0], a[1:4]
    bw, bv = b[0], b[1:4]
    return ca.vertcat(aw * bw - ca.dot(av, bv), aw * bv + bw * av + ca.cross(av, bv))


def quaternion_conjugate(quaternion):
    """Conjugate (inverse rotation for a unit quaternion)."""
    q = _column(quaternion)
    return ca.vertcat(q[0], -q[1:4])


def quaternion_rate_matrix(quaternion):
    """G(Q) of Zoufaly et al. (eq. 2): omega_body = 2 G Qdot and Qdot = G^T omega_body / 2."""
    q = _column(quaternion)
    w, x, y, z = q[0], q[1], q[2], q[3]
    return ca.vertcat(
        ca.horzcat(-x, w, z, -y),
        ca.horzcat(-y, -z, w, x),
        ca.horzcat(-z, y, -x, w),
    )


def quaternion_exp(rotation_vector):
    """Unit quaternion of the rotation `rotation_vector` (angle * unit axis)."""
    v = _column(rotation_vector)
    angle2 = ca.dot(v, v)
    angle = ca.sqrt(angle2 + 1e-300)
    half_sinc = ca.if_else(angle2 < _SMALL_ANGLE**2, 0.5 - angle2 / 48, ca.sin(angle / 2) / angle)
    return ca.vertcat(ca.cos(angle / 2), half_sinc * v)


def quaternion_log(quaternion):
    """Rotation vector (angle * axis, angle in [0, pi]) of a unit quaternion."""
    q = _column(quaternion)
    sign = ca.if_else(q[0] < 0, -1, 1)  # q and -q are the same rotation; take the short way
    w, v = sign * q[0], sign * q[1:4]
    s = ca.sqrt(ca.dot(v, v) + 1e-300)
    angle = 2 * ca.atan2(s, w)
    scale = ca.if_else(s < _SMALL_ANGLE, 2 / w, angle / s)
    return scale * v


def rotation_to_quaternion(rotation) -> np.ndarray:
    """Unit quaternion (w, x, y, z), w >= 0, of a numeric rotation matrix."""
    x, y, z, w = _ScipyRotation.from_matrix(np.asarray(rotation, dtype=float)).as_quat()
    q = np.array([w, x, y, z])
    return q if w >= 0 else -q


def rotation_to_euler(sequence: str, rotation) -> np.ndarray:
    """Body-fixed Euler angles of a numeric rotation matrix (inverse of `euler_to_rotation`)."""
    seq = check_sequence(sequence)
    return _ScipyRotation.from_matrix(np.asarray(rotation, dtype=float)).as_euler(seq)


def xyz_body_fixed_rotation(orientation):
    """OpenSim's frame orientation convention: body-fixed X-Y-Z angles."""
    return euler_to_rotation("XYZ", orientation)


def quaternion_motion_to_euler(sequence, quaternions, angular_velocities):
    """Convert ball-joint motion (N x 4 quaternions, N x 3 body angular velocities) to Euler form.

    Returns (angles N x 3, angle_rates N x 3); fails near gimbal lock where E is singular.
    """
    seq = check_sequence(sequence)
    quaternions = np.atleast_2d(np.asarray(quaternions, dtype=float))
    angular_velocities = np.atleast_2d(np.asarray(angular_velocities, dtype=float))
    angles = np.zeros((quaternions.shape[0], 3))
    rates = np.zeros_like(angles)
    previous = None
    for k, (quat, omega) in enumerate(zip(quaternions, angular_velocities)):
        rot = np.array(quaternion_to_rotation(quat / np.linalg.norm(quat)))
        a = rotation_to_euler(seq, rot)
        if previous is not None:  # keep angles continuous across +-pi
            a = previous + (a - previous + np.pi) % (2 * np.pi) - np.pi
        previous = a
        angles[k] = a
        rate_matrix = np.array(euler_rate_matrix(seq, a))
        if abs(np.linalg.det(rate_matrix)) < 1e-9:
            raise TrajoptInputError(
                f"quaternion_motion_to_euler: frame {k} is at gimbal lock of sequence {seq} (angles {a})"
            )
        rates[k] = np.linalg.solve(rate_matrix, omega)
    return angles, rates


def euler_motion_to_quaternion(sequence, angles, angle_rates):
    """Convert Euler-angle motion (N x 3 angles, N x 3 rates) to (N x 4 quaternions, N x 3 omegas)."""
    seq = check_sequence(sequence)
    angles = np.atleast_2d(np.asarray(angles, dtype=float))
    angle_rates = np.atleast_2d(np.asarray(angle_rates, dtype=float))
    quaternions = np.zeros((angles.shape[0], 4))
    omegas = np.zeros((angles.shape[0], 3))
    previous = None
    for k, (a, rate) in enumerate(zip(angles, angle_rates)):
        quat = rotation_to_quaternion(np.array(euler_to_rotation(seq, a)))
        if previous is not None and np.dot(quat, previous) < 0:  # continuous sign
            quat = -quat
        previous = quat
        quaternions[k] = quat
        omegas[k] = np.array(ca.mtimes(euler_rate_matrix(seq, a), ca.DM(rate))).ravel()
    return quaternions, omegas
