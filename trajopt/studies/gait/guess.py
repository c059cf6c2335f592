"""A first guess for a muscle-driven problem from a coordinates trajectory (e.g. a motion file's).

Speeds are u = N(q)⁺ q̇ with q̇ by finite differences (u = q̇ when q has no quaternions), accelerations the
finite differences of u; activations and excitations are a constant, actuator controls and residuals 0; elastic
tendons' normalized forces are in equilibrium with those activations at the guess's musculotendon lengths and speeds
(``ElasticTendonMuscle.equilibrium_normalized_tendon_force``), their derivatives the finite differences.
Read the file with ``trajopt.model.io.read_motion(file, coordinates=model.coordinate_names)`` (angles in radians).
"""

from __future__ import annotations

import casadi as ca
import numpy as np
from scipy.spatial.transform import Rotation

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import coordinate_rates_matrix
from trajopt.core.multibody.motion_conversion import joint_speeds_between
from trajopt.core.multibody.rotations import rotation_to_quaternion
from trajopt.core.ocp import Guess


def speeds_from_coordinates(multibody, time, q) -> np.ndarray:
    """u (frames x nv) from q (frames x nq) by finite differences (np.gradient) of q."""
    qdot = np.gradient(q, time, axis=0)
    if multibody.nq == multibody.nv:
        return qdot
    return np.vstack([np.linalg.pinv(np.asarray(coordinate_rates_matrix(multibody, ca.DM(q[k])))) @ qdot[k]
                      for k in range(len(time))])


def guess_from_coordinates(built, time, q, muscle_level=0.05) -> Guess:
    """A ``Guess`` for a ``MuscleDrivenProblem`` from q (frames x nq, model coordinate order) on ``time``;
    ``muscle_level``: the activations and excitations, one value or frames x muscles."""
    time, q = np.asarray(time, dtype=float), np.atleast_2d(np.asarray(q, dtype=float))
    multibody = built.model.multibody
    if q.shape != (time.size, multibody.nq):
        raise TrajoptInputError(f"guess: q has shape {q.shape}, expected ({time.size}, {multibody.nq})")
    u = speeds_from_coordinates(multibody, time, q)
    guess = Guess(time)
    guess.set(built.q, q).set(built.u, u)
    if built.accelerations is not None and built.accelerations.is_symbolic():
        guess.set(built.accelerations, np.gradient(u, time, axis=0))
    muscles = np.broadcast_to(np.asarray(muscle_level, dtype=float), (time.size, len(built.model.muscle_names)))
    guess.set(built.activations, muscles)
    if built.excitations is not None:
        guess.set(built.excitations, muscles)
    for symbol in (built.actuator_controls, built.residuals):
        if symbol is not None:
            guess.set(symbol, np.zeros((time.size, symbol.numel())))
    if built.normalized_tendon_forces is not None:
        forces = equilibrium_tendon_forces(built, q, u, muscles)
        guess.set(built.normalized_tendon_forces, forces)
        guess.set(built.normalized_tendon_force_derivatives, np.gradient(forces, time, axis=0))
    return guess


def equilibrium_tendon_forces(built, q, u, activations) -> np.ndarray:
    """Normalized tendon forces (frames x muscles) in fiber-tendon equilibrium with ``activations`` (frames x
    muscles) at the musculotendon lengths and speeds of q, u (frames x nq, nv), with df̃T/dt = 0."""
    kinematics = built.model.musculotendon_kinematics.map(len(q))
    lengths, speeds, _ = (np.asarray(x) for x in kinematics(np.asarray(q).T, np.asarray(u).T))
    return np.column_stack([unit.equilibrium_normalized_tendon_force(np.asarray(activations)[:, k], lengths[k],
                                                                     speeds[k])
                            for k, unit in enumerate(built.tendons.units)])


def free_joint_motion(original, multibody, joint: str, names, data, fill_missing: bool = False) -> np.ndarray:
    """q of ``multibody`` (whose ``joint`` is a quaternion FreeJoint,
    ``trajopt.model.musculoskeletal.operators.FreeJointInQuaternions``)
    from a motion of the ``original`` model (same joint with angles): data (frames x ``names``, radians, metres).

    The joint's rotation R_FM(angles) of the original becomes the quaternion (sign kept continuous from frame to
    frame, w >= 0 at the first); every other coordinate is copied by name.
    """
    names = tuple(names)
    data = np.atleast_2d(np.asarray(data, dtype=float))
    source = original.joint(joint)
    result = np.zeros((data.shape[0], multibody.nq))
    target = multibody.q_slice(joint)
    previous = None
    for k, row in enumerate(data):
        angles = np.array([row[names.index(n)] for n in source.coordinate_names])
        rotation, translation = (np.asarray(x) for x in source.transform(ca.DM(angles)))
        quaternion = np.asarray(rotation_to_quaternion(rotation), dtype=float).ravel()
        if (previous is None and quaternion[0] < 0) or (previous is not None and quaternion @ previous < 0):
            quaternion = -quaternion
        previous = quaternion
        result[k, target.start:target.start + 4] = quaternion
        result[k, target.start + 4:target.stop] = translation.ravel()
    joint_names = set(multibody.joint(joint).coordinate_names)
    for i, name in enumerate(multibody.coordinate_names):
        if name in joint_names:
            continue
        if name in names:
            result[:, i] = data[:, names.index(name)]
        elif fill_missing:
            result[:, i] = multibody.default_q()[i]
        else:
            raise TrajoptInputError(f"free-joint motion: the motion has no coordinate '{name}'")
    return result


def free_joint_angles(original, multibody, joint: str, q) -> np.ndarray:
    """The inverse of ``free_joint_motion``: q of ``multibody`` (frames x nq) -> the original model's coordinates
    (frames x its nq), the quaternion turned back into the original joint's three body-fixed rotation angles.

    The original joint's rotation axes must be ± unit axes (x, y or z) of distinct directions, as OpenSim's
    pelvis CustomJoints are (tilt about z, list about x, rotation about y); other joints are an error.
    """
    source = original.joint(joint)
    axes = [np.asarray(a, dtype=float) for a in getattr(source, "_axes", [])[:3]]
    letters, signs = "", []
    for axis in axes:
        k = int(np.argmax(np.abs(axis)))
        if not np.isclose(abs(axis[k]), 1.0):
            raise TrajoptInputError(f"free-joint angles: joint '{joint}' rotates about {axis.tolist()}, "
                                    f"not a unit axis")
        letters += "XYZ"[k]
        signs.append(np.sign(axis[k]))
    if len(set(letters)) != 3:
        raise TrajoptInputError(f"free-joint angles: joint '{joint}' needs three distinct rotation axes, got {letters}")
    q = np.atleast_2d(np.asarray(q, dtype=float))
    target = multibody.q_slice(joint)
    quaternion = q[:, target.start:target.start + 4]
    angles = Rotation.from_quat(quaternion[:, [1, 2, 3, 0]]).as_euler(letters) * np.asarray(signs)
    result = np.zeros((q.shape[0], original.nq))
    names = tuple(multibody.coordinate_names)
    rotation_names = [axis.coordinates[0] if axis.coordinates else None for axis in source.transform_axes[:3]]
    for i, name in enumerate(original.coordinate_names):
        if name in rotation_names:
            result[:, i] = angles[:, rotation_names.index(name)]
        else:
            result[:, i] = q[:, names.index(name)]
    return result


def _joint_speeds(source, target, joint, q_source, u_source, q_target, udot_source):
    """(u, udot) of model ``target`` from ``source``'s: speeds copied by name, ``joint``'s converted
    (``trajopt.core.multibody.motion_conversion.joint_speeds_between``)."""
    q_source, u_source, q_target = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q_source, u_source, q_target))
    udot_source = None if udot_source is None else np.atleast_2d(np.asarray(udot_source, dtype=float))
    u, udot = np.zeros((u_source.shape[0], target.nv)), np.zeros((u_source.shape[0], target.nv))
    names = tuple(source.speed_names)
    converted = set(target.joint(joint).speed_names)
    for i, name in enumerate(target.speed_names):
        if name in converted:
            continue
        if name not in names:
            raise TrajoptInputError(f"free-joint speeds: model '{source.name}' has no speed '{name}'")
        u[:, i] = u_source[:, names.index(name)]
        if udot_source is not None:
            udot[:, i] = udot_source[:, names.index(name)]
    vs, vt = source.v_slice(joint), target.v_slice(joint)
    u[:, vt], joint_udot = joint_speeds_between(
        source.joint(joint), target.joint(joint), q_source[:, source.q_slice(joint)], u_source[:, vs],
        q_target[:, target.q_slice(joint)], None if udot_source is None else udot_source[:, vs])
    if udot_source is None:
        return u, None
    udot[:, vt] = joint_udot
    return u, udot


def free_joint_angle_motion(original, multibody, joint: str, q, u, udot=None):
    """(q, u, udot or None) of the ``original`` model (``joint`` with angles) from a motion of ``multibody`` (``joint``
    a quaternion FreeJoint): angles by ``free_joint_angles``, the angle rates and accelerations that give the same
    angular velocity (in the child frame) and its rate; other speeds copied by name. Rows are frames."""
    q_original = free_joint_angles(original, multibody, joint, q)
    return (q_original, *_joint_speeds(multibody, original, joint, q, u, q_original, udot))


def free_joint_speeds(original, multibody, joint: str, q_original, u_original, q, udot_original=None):
    """The inverse of ``free_joint_angle_motion`` for speeds: (u, udot or None) of ``multibody`` at its q (the
    quaternion FreeJoint's angular velocity in the child frame and its rate) from the ``original``'s angle rates and
    accelerations. Rows are frames."""
    return _joint_speeds(original, multibody, joint, q_original, u_original, q, udot_original)
