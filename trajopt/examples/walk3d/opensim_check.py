"""OpenSim's cross-check of trajopt's 3D walking model at given states (``trajopt_opensim.walk3d_solution_check``).

OpenSim 4.6 builds the same model with its own operators (the .osim's pelvis CustomJoint, patellofemoral welds,
DeGroote rigid-tendon muscles without passive fiber force and width x1.5, OpenSim's FunctionBasedPaths, the
ExpressionBasedCoordinateForces, the contact spheres raised 2 cm as Moco's example3DWalking adds them, toe
CoordinateActuators). trajopt's quaternion pelvis state is handed over as the .osim's pelvis angles and angle
rates (``trajopt.gait.guess.free_joint_angle_motion``: the same angular velocity of the pelvis, not the same
numbers); OpenSim's angle accelerations come back as the FreeJoint's u̇ (``free_joint_speeds``: pelvis angular
acceleration in the pelvis frame, translation accelerations in ground), so accelerations are compared in trajopt's
speeds. Generalized forces are compared both ways: trajopt's implicit-dynamics residual ID(q, u, u̇) - τ at
OpenSim's accelerations (trajopt's generalized forces: N·m about the pelvis axes, N along ground axes) and
OpenSim's InverseDynamicsSolver residual at trajopt's accelerations (the .osim's coordinates).
"""

from __future__ import annotations

from functools import lru_cache

import casadi as ca
import numpy as np

from trajopt.contact import contact_record_values
from trajopt.gait.guess import free_joint_angle_motion, free_joint_speeds
from trajopt.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.multibody import inverse_dynamics

from trajopt.musculoskeletal.operators import AddContactGeometry, AddCoordinateActuators, DeGrooteMuscles, WeldJoints

from trajopt.examples.walk3d.prediction import LUMBAR_PASSIVE, MODEL, OPERATORS, PASSIVE, PATHS, PELVIS, build_problem

TASK = "walk3d_solution_check"


@lru_cache(maxsize=None)
def trajopt_functions(quaternion_pelvis: bool = True):
    """casadi Functions of trajopt's walk3d model (quaternion or, False, Euler-angle pelvis):
    ``forces(q, u, a, c)`` -> (tendon forces,
    contact records 12 x contacts, forward-dynamics u̇) and ``residual(q, u, udot, a, c)`` -> the implicit dynamics'
    ID(q, u, u̇, contact loads) - τ (τ: muscles, actuators, passive moments), as the problem constrains it."""
    walk = build_problem(2, quaternion_pelvis=quaternion_pelvis)
    built, model = walk.muscle_driven, walk.model
    q, u, a, c = built.q, built.u, built.activations, built.actuator_controls
    mb = model.musculoskeletal.multibody
    records = contact_record_values(mb, q, u, model.contacts)
    forces = ca.Function("walk3d_forces", [q, u, a, c], [built.tendon_forces, records, built.explicit_accelerations],
                         ["q", "u", "a", "c"], ["tendon_forces", "contact_records", "udot"])
    udot = ca.SX.sym("udot", mb.nv)
    residual = inverse_dynamics(mb, q, u, udot, model.contact_loads(q, u)[0]) - built.generalized_forces
    return walk, forces, ca.Function("walk3d_dynamics_residual", [q, u, udot, a, c], [residual],
                                     ["q", "u", "udot", "a", "c"], ["residual"])


def _operator(kind):
    """The prediction's operator of this type (OpenSim gets the same settings)."""
    found = [operator for operator in OPERATORS if type(operator) is kind]
    assert len(found) == 1, (kind, OPERATORS)
    return found[0]


def opensim_request(walk, q, u, activations, excitations, controls, udot=None) -> dict:
    """The task's request for states of ``walk``'s model (rows are frames); with ``udot`` (trajopt's
    accelerations) OpenSim's inverse dynamics runs at them."""
    model = walk.model
    mb, original = model.musculoskeletal.multibody, model.original
    angles, rates, angle_accelerations = free_joint_angle_motion(original, mb, PELVIS, q, u, udot) \
        if walk.quaternion_pelvis else (q, u, udot)
    actuators = [s.name for s in model.musculoskeletal.coordinate_actuators]
    muscles = list(model.musculoskeletal.muscle_names)
    welds, muscles_operator, actuator_operator, contact = (_operator(kind) for kind in (
        WeldJoints, DeGrooteMuscles, AddCoordinateActuators, AddContactGeometry))
    request = {"model": str(MODEL), "weld_joints": np.array(welds.joints),
               "ignore_passive_fiber_force": muscles_operator.ignore_passive_fiber_force,
               "active_force_width_scale": muscles_operator.active_force_width_scale,
               "function_based_paths": str(PATHS), "expression_forces": str(PASSIVE),
               "extra_expression_forces": np.array([(f.name, f.coordinate, f.expression) for f in LUMBAR_PASSIVE]),
               "contact_geometry": str(contact.geometry_file), "contact_forces": str(contact.forces_file),
               "sphere_offset": np.array(contact.sphere_offset, dtype=float),
               "actuated_coordinates": np.array(actuator_operator.coordinates),
               "actuator_optimal_force": actuator_operator.optimal_force, "actuator_bound": actuator_operator.bound,
               "coordinate_names": np.array(original.coordinate_names), "q": angles, "u": rates,
               "muscle_names": np.array(muscles), "activations": np.atleast_2d(activations),
               "actuator_names": np.array(muscles + actuators),
               "controls": np.hstack([np.atleast_2d(excitations), np.atleast_2d(controls)])}
    if udot is not None:
        request["udot"] = angle_accelerations
    return request


def compare(walk, q, u, activations, controls, result, udot=None) -> dict:
    """(max abs differences, arrays): trajopt's values at the states against OpenSim's ``result`` (rows are
    frames); with ``udot`` (trajopt's accelerations) also those against OpenSim's forward and inverse dynamics."""
    _, forces, residual = trajopt_functions(walk.quaternion_pelvis)
    model = walk.model
    mb, original = model.musculoskeletal.multibody, model.original
    frames = q.shape[0]
    tendon, records, forward = (np.asarray(x) for x in forces.map(frames)(q.T, u.T, activations.T, controls.T))
    records = records.reshape(12, len(model.contacts), frames, order="F").transpose(2, 0, 1)
    names = [str(n) for n in result["contact_names"]]
    theirs = result["contact_records"][:, :, [names.index(c.name) for c in model.contacts]]
    # OpenSim's .osim-coordinate accelerations as trajopt's u̇ (same pelvis angular acceleration).
    if walk.quaternion_pelvis:
        angles, rates, _ = free_joint_angle_motion(original, mb, PELVIS, q, u)
        _, opensim_udot = free_joint_speeds(original, mb, PELVIS, angles, rates, q, result["accelerations"])
    else:
        opensim_udot = result["accelerations"]
    at_opensim = np.asarray(residual.map(frames)(q.T, u.T, opensim_udot.T, activations.T, controls.T)).T
    contact = np.abs(records - theirs)
    tendon_difference = np.abs(tendon.T - result["tendon_forces"])
    speeds = mb.speed_names
    pelvis = mb.q_slice(PELVIS)
    check = {"frames": frames,
             "pelvis_quaternion_max_norm_error": float(np.abs(np.linalg.norm(q[:, pelvis][:, :4], axis=1) - 1).max())
             if walk.quaternion_pelvis else None,
             "contact_force_max_abs_difference_N": float(contact[:, 0:3].max()),
             "contact_record_max_abs_difference": float(contact.max()),
             "contact_force_max_N": float(np.abs(theirs[:, 0:3]).max()),
             "tendon_force_max_abs_difference_N": float(tendon_difference.max()),
             "tendon_force_max_N": float(np.abs(result["tendon_forces"]).max()),
             "tendon_force_worst_muscle": model.musculoskeletal.muscle_names[int(np.argmax(tendon_difference.max(0)))],
             "forward_acceleration_max_abs_difference": float(np.abs(forward.T - opensim_udot).max()),
             "forward_acceleration_worst_speed": speeds[int(np.argmax(np.abs(forward.T - opensim_udot).max(0)))],
             "implicit_residual_at_opensim_accelerations_max_abs": float(np.abs(at_opensim).max()),
             "implicit_residual_at_opensim_accelerations_worst_speed":
                 speeds[int(np.argmax(np.abs(at_opensim).max(0)))]}
    if udot is not None:
        difference = np.abs(np.atleast_2d(udot) - opensim_udot)
        inverse = np.abs(result["inverse_dynamics_residual"])
        check.update({
            "acceleration_max_abs_difference": float(difference.max()),
            "acceleration_worst_speed": speeds[int(np.argmax(difference.max(0)))],
            "opensim_inverse_dynamics_residual_max_abs": float(inverse.max()),
            "opensim_inverse_dynamics_residual_worst_coordinate":
                original.coordinate_names[int(np.argmax(inverse.max(0)))]})
    return check, {"opensim_udot": opensim_udot, "trajopt_forward_udot": forward.T, "at_opensim": at_opensim,
                   "tendon": tendon.T, "records": records, "opensim_records": theirs,
                   "opensim_inverse_dynamics_residual": result["inverse_dynamics_residual"]}


def check_states(walk, q, u, activations, excitations, controls, udot=None, run_task=None):
    """Run OpenSim at the states (rows are frames; ``udot``: trajopt's accelerations, optional) and compare:
    (summary dict of max abs differences, arrays)."""
    q, u, activations, excitations, controls = (np.atleast_2d(np.asarray(x, dtype=float))
                                                for x in (q, u, activations, excitations, controls))
    result = (run_task or run_opensim_task)(TASK, opensim_request(walk, q, u, activations, excitations, controls, udot))
    return compare(walk, q, u, activations, controls, result, udot)


def solution_check(walk, solution) -> dict | None:
    """OpenSim's check at every grid point of a solution (``check_states`` with its accelerations); None without
    opensim."""
    if not opensim_available():
        return None
    built = walk.muscle_driven
    values = [np.atleast_2d(solution.value(x)).T for x in (built.q, built.u, built.activations, built.excitations,
                                                            built.actuator_controls, built.accelerations)]
    return check_states(walk, *values[:5], udot=values[5])[0]
