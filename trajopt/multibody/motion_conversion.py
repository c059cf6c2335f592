"""Convert a motion between two models that differ only in how spherical joints are parametrized:
quaternion `BallJoint` <-> `EulerBallJoint` (any sequence). Joints are matched by name."""

from __future__ import annotations

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.multibody.joints import BallJoint, EulerBallJoint
from trajopt.multibody.rotations import euler_motion_to_quaternion, quaternion_motion_to_euler


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
        elif isinstance(joint, EulerBallJoint) and isinstance(other, EulerBallJoint) and joint.sequence != other.sequence:
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
