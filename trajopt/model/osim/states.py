"""Convert states and generalized forces between OpenSim's coordinates and trajopt's q, u.

OpenSim lists coordinates in CoordinateSet order (joint file order); trajopt orders joints parents
first, so the orders may differ. For ball and free joints OpenSim's three rotational coordinates are
body-fixed X-Y-Z angles and its speeds are the angular velocity of the child joint frame M in the
parent joint frame F expressed in F (Simbody's convention); trajopt uses a unit quaternion
(w, x, y, z) and the same angular velocity expressed in M. Translations agree (in F).
Inputs are numbers: one state as 1-D arrays or N states as N x n arrays.
"""

from __future__ import annotations

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.rotations import euler_to_rotation, rotation_to_quaternion
from trajopt.model.osim import spec


def _rows(values, width, what):
    array = np.atleast_2d(np.asarray(values, dtype=float))
    if array.shape[1] != width:
        raise TrajoptInputError(f"{what}: expected {width} columns (OpenSim coordinates), got {array.shape[1]}")
    return array


def opensim_coordinate_names(model) -> tuple[str, ...]:
    """Names of OpenSim's coordinates in CoordinateSet order (the columns these functions take)."""
    return tuple(c.name for c in model.spec.coordinates)


def _rotation_joints(model):
    """(trajopt joint, OpenSim names of its 3 rotation angles) for each ball/free joint."""
    by_name = {j.name: j for j in model.spec.joints}
    result = []
    for joint in model.multibody.joints:
        source = by_name[joint.name]
        if isinstance(source, (spec.BallJoint, spec.FreeJoint)):
            result.append((joint, tuple(c.name for c in source.coordinates[:3])))
    return result


def from_opensim_state(model, q, u=None, udot=None):
    """(q, u, udot) of trajopt from OpenSim's coordinate values, speeds and accelerations.

    ``model`` is an `OsimModel`; columns follow `opensim_coordinate_names`. Omitted u/udot are
    returned as None. One state in, 1-D arrays out; N states in, N x nq / N x nv out.
    """
    names = opensim_coordinate_names(model)
    single = np.ndim(q) == 1
    q_in = _rows(q, len(names), "q")
    u_in = None if u is None else _rows(u, len(names), "u")
    udot_in = None if udot is None else _rows(udot, len(names), "udot")
    multibody = model.multibody
    column = {name: k for k, name in enumerate(names)}
    q_out = np.zeros((len(q_in), multibody.nq))
    u_out = None if u_in is None else np.zeros((len(q_in), multibody.nv))
    udot_out = None if udot_in is None else np.zeros((len(q_in), multibody.nv))
    rotations = {joint.name: angles for joint, angles in _rotation_joints(model)}
    for joint in multibody.joints:
        qs, vs = multibody.q_slice(joint.name), multibody.v_slice(joint.name)
        scalar_names = [c.name for c in joint.coordinates]
        if joint.name in rotations:
            angles = [column[n] for n in rotations[joint.name]]
            for k in range(len(q_in)):
                rotation = np.array(euler_to_rotation("XYZ", q_in[k, angles]))
                q_out[k, qs.start:qs.start + 4] = rotation_to_quaternion(rotation)
                if u_in is not None:
                    u_out[k, vs.start:vs.start + 3] = rotation.T @ u_in[k, angles]
                if udot_in is not None:  # d/dt (R^T w_F) = R^T dw_F/dt, as w_F x w_F = 0
                    udot_out[k, vs.start:vs.start + 3] = rotation.T @ udot_in[k, angles]
            q_offset, v_offset = qs.start + 4, vs.start + 3
        else:
            q_offset, v_offset = qs.start, vs.start
        columns = [column[n] for n in scalar_names]
        q_out[:, q_offset:q_offset + len(columns)] = q_in[:, columns]
        if u_in is not None:
            u_out[:, v_offset:v_offset + len(columns)] = u_in[:, columns]
        if udot_in is not None:
            udot_out[:, v_offset:v_offset + len(columns)] = udot_in[:, columns]
    if single:
        return q_out[0], None if u_out is None else u_out[0], None if udot_out is None else udot_out[0]
    return q_out, u_out, udot_out


def to_opensim_generalized_forces(model, q, tau):
    """trajopt's generalized forces (nv, at trajopt's q) as OpenSim's, in CoordinateSet order:
    ball/free joint torques are re-expressed from M into F (tau_F = R_FM tau_M)."""
    multibody = model.multibody
    names = opensim_coordinate_names(model)
    single = np.ndim(tau) == 1
    q_rows = np.atleast_2d(np.asarray(q, dtype=float))
    tau_rows = np.atleast_2d(np.asarray(tau, dtype=float))
    column = {name: k for k, name in enumerate(names)}
    out = np.zeros((len(tau_rows), len(names)))
    rotations = {joint.name: angles for joint, angles in _rotation_joints(model)}
    for joint in multibody.joints:
        qs, vs = multibody.q_slice(joint.name), multibody.v_slice(joint.name)
        offset = vs.start
        if joint.name in rotations:
            angles = [column[n] for n in rotations[joint.name]]
            for k in range(len(tau_rows)):
                rotation = np.array(joint.transform(q_rows[k, qs])[0], dtype=float)
                out[k, angles] = rotation @ tau_rows[k, vs.start:vs.start + 3]
            offset += 3
        for j, coordinate in enumerate(joint.coordinates):
            out[:, column[coordinate.name]] = tau_rows[:, offset + j]
    return out[0] if single else out
