"""Muscle-length Jacobians of a ball joint in Euler, spatial and quaternion coordinates (Zoufaly et al.).

Quaternions are Q = (Q0, Q1, Q2, Q3), scalar first, Hamilton product, rotating child into parent; ω is the
angular velocity in the child (body) frame. With ω = 2 G(Q) Q̇ and, for the constrained quaternion
Q* = (Q1, Q2, Q3) with Q0 = sqrt(1 - |Q*|²) >= 0, Q̇ = T(Q) Q̇* and ω = E Q̇* (E = 2 G T), the length
Jacobians map as

    R_S = ½ G R_Q,   R_Q* = Eᵀ R_S,   R_S = (Eᵀ)⁻¹ R_Q*,   R_E = Jᵀ R_S,   R_S = (Jᵀ)⁻¹ R_E,

where J(θ) maps Euler-angle rates to ω (ω = J θ̇). R_Q = 2 Gᵀ R_S is one of many preimages (a 3 -> 4 map),
so only the constrained form is used to carry OpenSim moment arms into quaternion space. The maps are
linear, so they apply equally to lengths' gradients and to moment arms (-gradients).

Euler sequences are body-fixed (intrinsic), as OpenSim CustomJoint rotation axes: "YZX" means
R = R_y(θ1) R_z(θ2) R_x(θ3). A private Euler/quaternion helper lives here until trajopt.core.multibody.rotations
provides one.
"""

from __future__ import annotations

import casadi
import numpy as np

from trajopt.errors import TrajoptInputError

_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}


class QuaternionSingularityError(TrajoptInputError):
    """The constrained quaternion is singular at Q0 = 0 (a rotation of exactly 180 degrees)."""


def _symbolic(*values) -> bool:
    return any(isinstance(v, (casadi.SX, casadi.MX)) for v in values)


def _out(matrix, *inputs):
    """numpy for numeric inputs, CasADi for symbolic ones."""
    return matrix if _symbolic(*inputs) else casadi.DM(matrix).full()


def _sequence(sequence: str) -> str:
    sequence = sequence.upper()
    if len(sequence) != 3 or any(axis not in _AXES for axis in sequence):
        raise TrajoptInputError(f"Euler sequence '{sequence}': expected three axes from X, Y, Z (e.g. 'YZX')")
    return sequence


def angular_velocity_matrix(quaternion):
    """G(Q) (3 x 4) with body-frame ω = 2 G Q̇."""
    q0, q1, q2, q3 = (quaternion[i] for i in range(4))
    matrix = casadi.blockcat([[-q1, q0, q3, -q2], [-q2, -q3, q0, q1], [-q3, q2, -q1, q0]])
    return _out(matrix, quaternion)


def _check_scalar_part(quaternion):
    if not _symbolic(quaternion):
        q0 = float(casadi.DM(quaternion).full().ravel()[0])
        if abs(q0) < 1e-12:
            raise QuaternionSingularityError(
                f"constrained quaternion is singular at Q0 = {q0:g} (a 180-degree rotation): "
                "T(Q) divides by Q0; use the full quaternion here or another reference orientation"
            )


def constrained_rate_matrix(quaternion):
    """T(Q) (4 x 3) with Q̇ = T Q̇* under |Q| = 1; raises QuaternionSingularityError at Q0 = 0."""
    _check_scalar_part(quaternion)
    q0, q1, q2, q3 = (quaternion[i] for i in range(4))
    matrix = casadi.blockcat([[-q1 / q0, -q2 / q0, -q3 / q0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    return _out(matrix, quaternion)


def constrained_angular_velocity_matrix(quaternion):
    """E = 2 G T (3 x 3) with ω = E Q̇*."""
    _check_scalar_part(quaternion)
    q = quaternion if _symbolic(quaternion) else casadi.DM(np.asarray(quaternion, dtype=float).ravel())
    matrix = 2 * casadi.mtimes(_as_casadi(angular_velocity_matrix(q)), _as_casadi(constrained_rate_matrix(q)))
    return _out(matrix, quaternion)


def _as_casadi(value):
    return value if _symbolic(value) else casadi.DM(np.asarray(value, dtype=float))


def constrained_quaternion(quaternion):
    """Q* = (Q1, Q2, Q3) after flipping the sign of Q so that Q0 >= 0 (Q and -Q are the same rotation)."""
    if _symbolic(quaternion):
        sign = casadi.if_else(quaternion[0] < 0, -1, 1)
        return sign * quaternion[1:4]
    q = np.asarray(quaternion, dtype=float)
    return np.where(q[..., :1] < 0, -q, q)[..., 1:4]


def full_quaternion(constrained):
    """Q = (sqrt(1 - |Q*|²), Q*) from the constrained quaternion."""
    if _symbolic(constrained):
        return casadi.vertcat(casadi.sqrt(1 - casadi.sumsqr(constrained)), constrained)
    c = np.asarray(constrained, dtype=float)
    return np.concatenate([np.sqrt(np.clip(1 - np.sum(c**2, axis=-1, keepdims=True), 0, None)), c], axis=-1)


def _axis_quaternion(axis: str, angle):
    half = angle / 2
    vector = [casadi.sin(half) * a for a in _AXES[axis]]
    return [casadi.cos(half), *vector]


def _hamilton(p, q):
    p0, p1, p2, p3 = p
    q0, q1, q2, q3 = q
    return [
        p0 * q0 - p1 * q1 - p2 * q2 - p3 * q3,
        p0 * q1 + p1 * q0 + p2 * q3 - p3 * q2,
        p0 * q2 - p1 * q3 + p2 * q0 + p3 * q1,
        p0 * q3 + p1 * q2 - p2 * q1 + p3 * q0,
    ]


def _quaternion_expression(angles, sequence: str):
    q = _axis_quaternion(sequence[0], angles[0])
    for i in (1, 2):
        q = _hamilton(q, _axis_quaternion(sequence[i], angles[i]))
    return casadi.vertcat(*q)


def quaternion_from_euler(angles, sequence: str):
    """Unit quaternion of the intrinsic rotation R_a1(θ1) R_a2(θ2) R_a3(θ3), sign chosen so Q0 >= 0.
    Numeric ``angles`` may be one configuration (3,) or many (n x 3)."""
    sequence = _sequence(sequence)
    if _symbolic(angles):
        q = _quaternion_expression(angles, sequence)
        return casadi.if_else(q[0] < 0, -1, 1) * q
    values = np.asarray(angles, dtype=float)
    rows = np.atleast_2d(values)
    out = _batch(sequence)[0].map(rows.shape[0])(rows.T).full().T
    out = np.where(out[:, :1] < 0, -out, out)
    return out if values.ndim == 2 else out[0]


def rotation_matrix_from_quaternion(quaternion):
    """R(Q) (3 x 3), child-to-parent."""
    q0, q1, q2, q3 = (quaternion[i] for i in range(4))
    matrix = casadi.blockcat(
        [
            [1 - 2 * (q2**2 + q3**2), 2 * (q1 * q2 - q0 * q3), 2 * (q1 * q3 + q0 * q2)],
            [2 * (q1 * q2 + q0 * q3), 1 - 2 * (q1**2 + q3**2), 2 * (q2 * q3 - q0 * q1)],
            [2 * (q1 * q3 - q0 * q2), 2 * (q2 * q3 + q0 * q1), 1 - 2 * (q1**2 + q2**2)],
        ]
    )
    return _out(matrix, quaternion)


def _axis_rotation(axis: str, angle):
    c, s = casadi.cos(angle), casadi.sin(angle)
    if axis == "X":
        return casadi.blockcat([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "Y":
        return casadi.blockcat([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return casadi.blockcat([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def euler_angular_velocity_matrix(angles, sequence: str):
    """J(θ) (3 x 3) with body-frame ω = J θ̇ for the intrinsic sequence."""
    sequence = _sequence(sequence)
    a = angles if _symbolic(angles) else casadi.DM(np.asarray(angles, dtype=float).ravel())
    r2 = _axis_rotation(sequence[1], a[1])
    r3 = _axis_rotation(sequence[2], a[2])
    e = [casadi.DM(_AXES[axis]) for axis in sequence]
    columns = [casadi.mtimes([r3.T, r2.T, e[0]]), casadi.mtimes(r3.T, e[1]), e[2]]
    return _out(casadi.horzcat(*columns), angles)


def spatial_from_quaternion_jacobian(quaternion_jacobian, quaternion):
    """R_S = ½ G R_Q."""
    return _out(0.5 * casadi.mtimes(_as_casadi(angular_velocity_matrix(quaternion)), _as_casadi(quaternion_jacobian)),
                quaternion, quaternion_jacobian)


def quaternion_from_spatial_jacobian(spatial_jacobian, quaternion):
    """R_Q = 2 Gᵀ R_S: one preimage only (the 3 -> 4 map is not unique); prefer the constrained form."""
    return _out(2 * casadi.mtimes(_as_casadi(angular_velocity_matrix(quaternion)).T, _as_casadi(spatial_jacobian)),
                quaternion, spatial_jacobian)


def constrained_from_spatial_jacobian(spatial_jacobian, quaternion):
    """R_Q* = Eᵀ R_S."""
    e = _as_casadi(constrained_angular_velocity_matrix(quaternion))
    return _out(casadi.mtimes(e.T, _as_casadi(spatial_jacobian)), quaternion, spatial_jacobian)


def spatial_from_constrained_jacobian(constrained_jacobian, quaternion):
    """R_S = (Eᵀ)⁻¹ R_Q*."""
    e = _as_casadi(constrained_angular_velocity_matrix(quaternion))
    return _out(casadi.solve(e.T, _as_casadi(constrained_jacobian)), quaternion, constrained_jacobian)


def euler_from_spatial_jacobian(spatial_jacobian, angles, sequence: str):
    """R_E = Jᵀ R_S (moment arms about the Euler angles, up to OpenSim's sign)."""
    j = _as_casadi(euler_angular_velocity_matrix(angles, sequence))
    return _out(casadi.mtimes(j.T, _as_casadi(spatial_jacobian)), angles, spatial_jacobian)


def spatial_from_euler_jacobian(euler_jacobian, angles, sequence: str):
    """R_S = (Jᵀ)⁻¹ R_E (singular at gimbal lock, where J is)."""
    j = _as_casadi(euler_angular_velocity_matrix(angles, sequence))
    return _out(casadi.solve(j.T, _as_casadi(euler_jacobian)), angles, euler_jacobian)


_BATCH: dict = {}


def _batch(sequence: str):
    """Functions built once per sequence: angles -> Q, and (angles, r) -> r about Q* / r about the angles."""
    if sequence not in _BATCH:
        angles = casadi.SX.sym("angles", 3)
        arms = casadi.SX.sym("moment_arms", 3)
        quaternion = _quaternion_expression(angles, sequence)
        quaternion = casadi.if_else(quaternion[0] < 0, -1, 1) * quaternion
        j = euler_angular_velocity_matrix(angles, sequence)
        e = constrained_angular_velocity_matrix(quaternion)
        to_quaternion = casadi.mtimes(e.T, casadi.solve(j.T, arms))
        to_euler = casadi.mtimes(j.T, casadi.solve(e.T, arms))
        _BATCH[sequence] = (
            casadi.Function("quaternion_from_euler", [angles], [quaternion], ["angles"], ["quaternion"]),
            casadi.Function("moment_arms_to_quaternion", [angles, arms], [to_quaternion], ["angles", "euler"],
                            ["constrained"]),
            casadi.Function("moment_arms_to_euler", [angles, arms], [to_euler], ["angles", "constrained"], ["euler"]),
        )
    return _BATCH[sequence]


def euler_to_constrained_quaternion(angles: np.ndarray, euler_moment_arms: np.ndarray, sequence: str):
    """Samples (n x 3 angles, n x 3 moment arms about them) -> (n x 3 Q*, n x 3 moment arms about Q*):
    R_Q* = Eᵀ (Jᵀ)⁻¹ R_E. Raises QuaternionSingularityError if some Q0 = 0."""
    sequence = _sequence(sequence)
    angles = np.atleast_2d(np.asarray(angles, dtype=float))
    arms = np.atleast_2d(np.asarray(euler_moment_arms, dtype=float))
    quaternions = np.atleast_2d(quaternion_from_euler(angles, sequence))
    if np.any(np.abs(quaternions[:, 0]) < 1e-12):
        raise QuaternionSingularityError(f"constrained quaternion singular (Q0 = 0) at angles "
                                         f"{angles[np.argmin(np.abs(quaternions[:, 0]))]}")
    mapped = _batch(sequence)[1].map(len(angles))(angles.T, arms.T).full().T
    return quaternions[:, 1:4], mapped


def constrained_quaternion_to_euler(angles: np.ndarray, quaternion_moment_arms: np.ndarray,
                                    sequence: str) -> np.ndarray:
    """Moment arms about Q* (n x 3) at Euler configurations ``angles`` (n x 3) -> moment arms about the
    angles: R_E = Jᵀ (Eᵀ)⁻¹ R_Q*."""
    sequence = _sequence(sequence)
    angles = np.atleast_2d(np.asarray(angles, dtype=float))
    arms = np.atleast_2d(np.asarray(quaternion_moment_arms, dtype=float))
    return _batch(sequence)[2].map(len(angles))(angles.T, arms.T).full().T
