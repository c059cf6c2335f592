"""Convert a motion between two models that differ only in how spherical joints are parametrized:
quaternion `BallJoint` <-> `EulerBallJoint` (any sequence). Joints are matched by name.
`joint_speeds_between`: speeds and accelerations of any joint giving another joint's relative motion (e.g. a
pelvis CustomJoint's angle rates <-> a FreeJoint's angular velocity)."""

from __future__ import annotations

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.joints import BallJoint, EulerBallJoint
from trajopt.core.multibody.rotations import euler_motion_to_quaternion, quaternion_motion_to_euler


def convert_ball_joint_motion(source, target, q, u):
    """Map a motion (q: N x source.nq, u: N x source.nv) of `source` to `target`'s coordinates.

    Joints of the same name and type are copied; a BallJoint becomes an EulerBallJoint
    (angles, angle rates) and back (unit quaternions, angular velocities). Fails near gimbal lock."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    u = np.atleast_2d(np.asarray(u, dtype=float))
    if q.shape[1] != source.nq or u.shape[1] != source.nv:
        raise TrajoptInputError(
            f"convert_ball_joint_motion: q has {q.shape[1]} columns and u {u.shape[1]}; "
            f"model '{source.name}' has nq={source.nq}, nv={source.nv}"
        )
    q_out = np.zeros((q.shape[0], target.nq))
    u_out = np.zeros((u.shape[0], target.nv))
    for joint in target.joints:
        other = source.joint(joint.name)
        qs, vs = source.q_slice(other.name), source.v_slice(other.name)
        qt, vt = target.q_slice(joint.name), target.v_slice(joint.name)
        if isinstance(joint, EulerBallJoint) and isinstance(other, BallJoint):
            q_out[:, qt], u_out[:, vt] = quaternion_motion_to_euler(joint.sequence, q[:, qs], u[:, vs])
        elif isinstance(joint, BallJoint) and isinstance(other, EulerBallJoint):
            q_out[:, qt], u_out[:, vt] = euler_motion_to_quaternion(other.sequence, q[:, qs], u[:, vs])
        elif (isinstance(joint, EulerBallJoint) and isinstance(other, EulerBallJoint)
              and joint.sequence != other.sequence):
            quats, omegas = euler_motion_to_quaternion(other.sequence, q[:, qs], u[:, vs])
            q_out[:, qt], u_out[:, vt] = quaternion_motion_to_euler(joint.sequence, quats, omegas)
        elif type(joint) is type(other) and joint.nq == other.nq:
            q_out[:, qt], u_out[:, vt] = q[:, qs], u[:, vs]
        else:
            raise TrajoptInputError(
                f"convert_ball_joint_motion: joint '{joint.name}' is a {type(other).__name__} in "
                f"'{source.name}' and a {type(joint).__name__} in '{target.name}'"
            )
    return q_out, u_out


def _motion_subspace_rate(joint):
    """casadi Function (q, u) -> (S(q), Ṡ(q, u)) of ``joint`` (Ṡ = ∂S/∂q · N(q) u)."""
    q = ca.SX.sym("q", joint.nq)
    u = ca.SX.sym("u", joint.nv)
    s = joint.motion_subspace(q)
    qdot = ca.mtimes(joint.coordinate_rates_matrix(q), u)
    rate = ca.reshape(ca.jtimes(ca.vec(s), q, qdot), s.shape[0], s.shape[1])
    return ca.Function(f"{joint.name}_motion_subspace", [q, u], [s, rate])


def joint_speeds_between(source, target, q_source, u_source, q_target, udot_source=None):
    """Speeds (and accelerations) of joint ``target`` at ``q_target`` that give the same motion of the child frame in
    the parent frame as joint ``source`` at (q, u, udot)_source: both joints relate the same frames, parametrized
    differently (e.g. a pelvis CustomJoint's angles and a FreeJoint's quaternion).

    The relative spatial velocity V = S(q) u (in the child frame) is equal for both, and so is its rate
    S(q) u̇ + Ṡ(q, u) u: u_target = S_t⁺ S_s u_s, u̇_target = S_t⁺ (S_s u̇_s + Ṡ_s u_s - Ṡ_t u_target). Rows are
    frames (N x nq, N x nv); returns (u_target, udot_target or None). ``target`` must have a full-column-rank S."""
    q_source, u_source, q_target = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q_source, u_source, q_target))
    if q_source.shape[1] != source.nq or u_source.shape[1] != source.nv or q_target.shape[1] != target.nq:
        raise TrajoptInputError(f"joint_speeds_between: q, u of '{source.name}' need {source.nq}, {source.nv} columns "
                                f"and q of '{target.name}' {target.nq}; got {q_source.shape[1]}, {u_source.shape[1]}, "
                                f"{q_target.shape[1]}")
    from_source, from_target = _motion_subspace_rate(source), _motion_subspace_rate(target)
    u_out = np.zeros((q_source.shape[0], target.nv))
    udot_out = None if udot_source is None else np.zeros_like(u_out)
    for k in range(q_source.shape[0]):
        s_source, rate_source = (np.asarray(x) for x in from_source(q_source[k], u_source[k]))
        s_target = np.asarray(from_target(q_target[k], np.zeros(target.nv))[0])
        if np.linalg.matrix_rank(s_target) < target.nv:
            raise TrajoptInputError(f"joint_speeds_between: joint '{target.name}' is singular at q = "
                                    f"{q_target[k].tolist()} (row {k})")
        u_out[k] = np.linalg.lstsq(s_target, s_source @ u_source[k], rcond=None)[0]
        if udot_source is not None:
            rate_target = np.asarray(from_target(q_target[k], u_out[k])[1])
            acceleration = s_source @ np.asarray(udot_source[k], dtype=float) + rate_source @ u_source[k] - \
                rate_target @ u_out[k]
            udot_out[k] = np.linalg.lstsq(s_target, acceleration, rcond=None)[0]
    return u_out, udot_out
