"""OpenSim's cross-check of trajopt's 3D walking model at given states (``trajopt_opensim.walk3d_solution_check``).

OpenSim 4.6 builds the recipe's model with its own operators and components
(``trajopt.examples.walk3d.opensim_request``: Moco's example's or PredSim's). trajopt's quaternion pelvis state is
handed over as the .osim's pelvis angles and angle rates (``trajopt.studies.gait.guess.free_joint_angle_motion``: the
same angular velocity of the pelvis, not the same numbers); OpenSim's angle accelerations come back as the FreeJoint's
u̇ (``free_joint_speeds``: pelvis angular acceleration in the pelvis frame, translation accelerations in ground), so
accelerations are compared in trajopt's speeds. Generalized forces are compared both ways: trajopt's implicit-dynamics
residual ID(q, u, u̇) - τ at OpenSim's accelerations (trajopt's generalized forces: N·m about the pelvis axes, N along
ground axes) and OpenSim's InverseDynamicsSolver residual at trajopt's accelerations (the .osim's coordinates).
Compliant tendons (PredSim's recipe): OpenSim's DeGrooteFregly2016Muscle gets trajopt's normalized tendon force states
(so tendon forces and dynamics are compared at the same states) and their derivatives, and its implicit residual of
the tendon dynamics is compared with trajopt's fiber-tendon equilibrium residual; the muscles' tendon strain, passive
fiber strain, fiber damping and curve settings OpenSim ends up with are compared with trajopt's.
"""

from __future__ import annotations

from functools import lru_cache

import casadi as ca
import numpy as np

from trajopt.model.contact import contact_record_values
from trajopt.studies.gait.guess import free_joint_angle_motion, free_joint_speeds
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.core.multibody import inverse_dynamics

from trajopt.examples.walk3d.opensim_request import opensim_request, recipe_of
from trajopt.examples.walk3d.prediction import MOCO_RECIPE, PELVIS, build_problem

TASK = "walk3d_solution_check"


# Muscle settings OpenSim's DeGrooteFregly2016Muscle reports (task result ``muscle_<key>``) and trajopt's parameter.
MUSCLE_SETTINGS = (("passive_fiber_strain", "passive_fiber_strain_at_one_norm_force"),
                   ("fiber_damping", "fiber_damping"), ("active_force_width_scale", "active_force_width_scale"),
                   ("ignore_passive_fiber_force", "ignore_passive_fiber_force"))
ELASTIC_TENDON_SETTINGS = (("tendon_strain", "tendon_strain_at_one_norm_force"),)


@lru_cache(maxsize=None)
def trajopt_functions(quaternion_pelvis: bool = True, recipe=MOCO_RECIPE):
    """(walk, forces, residual, equilibrium): casadi Functions of trajopt's walk3d model as ``recipe`` builds it
    (quaternion or, False, Euler-angle pelvis). ``forces(q, u, a, c, f)`` -> (tendon forces, contact records
    12 x contacts, forward-dynamics u̇); ``residual(q, u, udot, a, c, f)`` -> the implicit dynamics'
    ID(q, u, u̇, contact loads) - τ (τ: muscles, actuators, passive moments), as the problem constrains it;
    ``equilibrium(q, u, a, f, fdot)`` -> the fiber-tendon equilibrium residuals f̃T - f̃M cos α / ... of compliant
    tendons. ``f``, ``fdot``: normalized tendon forces and their derivatives (compliant tendons; none with rigid
    tendons: 0 rows)."""
    walk = build_problem(2, quaternion_pelvis=quaternion_pelvis, recipe=recipe, effort=False)
    built, model = walk.muscle_driven, walk.model
    q, u, a, c = built.q, built.u, built.activations, built.actuator_controls
    elastic = built.normalized_tendon_forces is not None
    f, fdot = ((built.normalized_tendon_forces, built.normalized_tendon_force_derivatives) if elastic
               else (ca.SX.sym("f", 0), ca.SX.sym("fdot", 0)))
    mb = model.musculoskeletal.multibody
    records = contact_record_values(mb, q, u, model.contacts)
    forces = ca.Function("walk3d_forces", [q, u, a, c, f],
                         [built.tendon_forces, records, built.explicit_accelerations],
                         ["q", "u", "a", "c", "f"], ["tendon_forces", "contact_records", "udot"])
    udot = ca.SX.sym("udot", mb.nv)
    residual = inverse_dynamics(mb, q, u, udot, model.contact_loads(q, u)[0]) - built.generalized_forces
    equilibrium = built.muscle_quantity("equilibrium_residual") if elastic else ca.SX(0, 1)
    return (walk, forces,
            ca.Function("walk3d_dynamics_residual", [q, u, udot, a, c, f], [residual],
                        ["q", "u", "udot", "a", "c", "f"], ["residual"]),
            ca.Function("walk3d_equilibrium_residual", [q, u, a, f, fdot], [equilibrium],
                        ["q", "u", "a", "f", "fdot"], ["equilibrium_residual"]))


def _muscle_settings(walk, result) -> dict:
    """{setting: max abs difference over the muscles} of OpenSim's muscles' settings against trajopt's."""
    units = walk.muscle_driven.tendons.units
    elastic = walk.muscle_driven.normalized_tendon_forces is not None
    settings = MUSCLE_SETTINGS + (ELASTIC_TENDON_SETTINGS if elastic else ())
    differences = {key: float(np.abs(np.array([float(getattr(unit.parameters, field)) for unit in units])
                                     - result[f"muscle_{key}"]).max()) for key, field in settings}
    differences["tendon_compliance"] = float(np.abs((1.0 - result["muscle_ignore_tendon_compliance"])
                                                    - float(elastic)).max())
    return differences


def compare(walk, q, u, activations, controls, result, udot=None, tendon=None) -> dict:
    """(max abs differences, arrays): trajopt's values at the states against OpenSim's ``result`` (rows are
    frames); with ``udot`` (trajopt's accelerations) also those against OpenSim's forward and inverse dynamics;
    ``tendon``: (normalized tendon forces, derivatives) of compliant tendons, frames x muscles."""
    _, forces, residual, equilibrium = trajopt_functions(walk.quaternion_pelvis, recipe_of(walk))
    model = walk.model
    mb, original = model.musculoskeletal.multibody, model.original
    frames = q.shape[0]
    f, fdot = (np.zeros((0, frames)), np.zeros((0, frames))) if tendon is None else (x.T for x in tendon)
    tendon_forces, records, forward = (np.asarray(x) for x in forces.map(frames)(q.T, u.T, activations.T,
                                                                                 controls.T, f))
    records = records.reshape(12, len(model.contacts), frames, order="F").transpose(2, 0, 1)
    names = [str(n) for n in result["contact_names"]]
    theirs = result["contact_records"][:, :, [names.index(c.name) for c in model.contacts]]
    # OpenSim's .osim-coordinate accelerations as trajopt's u̇ (same pelvis angular acceleration).
    if walk.quaternion_pelvis:
        angles, rates, _ = free_joint_angle_motion(original, mb, PELVIS, q, u)
        _, opensim_udot = free_joint_speeds(original, mb, PELVIS, angles, rates, q, result["accelerations"])
    else:
        opensim_udot = result["accelerations"]
    at_opensim = np.asarray(residual.map(frames)(q.T, u.T, opensim_udot.T, activations.T, controls.T, f)).T
    contact = np.abs(records - theirs)
    tendon_difference = np.abs(tendon_forces.T - result["tendon_forces"])
    speeds = mb.speed_names
    muscles = model.musculoskeletal.muscle_names
    pelvis = mb.q_slice(PELVIS)
    check = {"frames": frames,
             "model": "PredSim's recipe" if recipe_of(walk).predsim_cost else "Moco's example3DWalking",
             "excluded_from_comparison": [],
             "pelvis_quaternion_max_norm_error": float(np.abs(np.linalg.norm(q[:, pelvis][:, :4], axis=1) - 1).max())
             if walk.quaternion_pelvis else None,
             "contact_force_max_abs_difference_N": float(contact[:, 0:3].max()),
             "contact_record_max_abs_difference": float(contact.max()),
             "contact_force_max_N": float(np.abs(theirs[:, 0:3]).max()),
             "tendon_force_max_abs_difference_N": float(tendon_difference.max()),
             "tendon_force_max_N": float(np.abs(result["tendon_forces"]).max()),
             "tendon_force_worst_muscle": muscles[int(np.argmax(tendon_difference.max(0)))],
             "muscle_settings_max_abs_difference": _muscle_settings(walk, result),
             "forward_acceleration_max_abs_difference": float(np.abs(forward.T - opensim_udot).max()),
             "forward_acceleration_worst_speed": speeds[int(np.argmax(np.abs(forward.T - opensim_udot).max(0)))],
             "implicit_residual_at_opensim_accelerations_max_abs": float(np.abs(at_opensim).max()),
             "implicit_residual_at_opensim_accelerations_worst_speed":
                 speeds[int(np.argmax(np.abs(at_opensim).max(0)))]}
    arrays = {"opensim_udot": opensim_udot, "trajopt_forward_udot": forward.T, "at_opensim": at_opensim,
              "tendon": tendon_forces.T, "records": records, "opensim_records": theirs,
              "opensim_inverse_dynamics_residual": result["inverse_dynamics_residual"]}
    if tendon is not None:
        ours = np.asarray(equilibrium.map(frames)(q.T, u.T, activations.T, f, fdot)).T
        difference = np.abs(ours - result["equilibrium_residual"])
        check.update({"equilibrium_residual_max_abs_difference": float(difference.max()),
                      "equilibrium_residual_worst_muscle": muscles[int(np.argmax(difference.max(0)))],
                      "equilibrium_residual_max_abs": float(np.abs(ours).max()),
                      "opensim_equilibrium_residual_max_abs": float(np.abs(result["equilibrium_residual"]).max())})
        arrays.update(equilibrium=ours, opensim_equilibrium=result["equilibrium_residual"])
    if udot is not None:
        difference = np.abs(np.atleast_2d(udot) - opensim_udot)
        inverse = np.abs(result["inverse_dynamics_residual"])
        check.update({
            "acceleration_max_abs_difference": float(difference.max()),
            "acceleration_worst_speed": speeds[int(np.argmax(difference.max(0)))],
            "opensim_inverse_dynamics_residual_max_abs": float(inverse.max()),
            "opensim_inverse_dynamics_residual_worst_coordinate":
                original.coordinate_names[int(np.argmax(inverse.max(0)))]})
    return check, arrays


def check_states(walk, q, u, activations, excitations, controls, udot=None, run_task=None, tendon=None):
    """Run OpenSim at the states (rows are frames; ``udot``: trajopt's accelerations, optional; ``tendon``:
    (normalized tendon forces, their derivatives) of compliant tendons) and compare: (summary dict of max abs
    differences, arrays)."""
    q, u, activations, excitations, controls = (np.atleast_2d(np.asarray(x, dtype=float))
                                                for x in (q, u, activations, excitations, controls))
    if tendon is not None:
        tendon = tuple(np.atleast_2d(np.asarray(x, dtype=float)) for x in tendon)
    request = opensim_request(walk, q, u, activations, excitations, controls, udot, tendon)
    result = (run_task or run_opensim_task)(TASK, request)
    return compare(walk, q, u, activations, controls, result, udot, tendon)


def solution_check(walk, solution) -> dict | None:
    """OpenSim's check at every grid point of a solution (``check_states`` with its accelerations and, compliant
    tendons, its normalized tendon forces and their derivatives); None without opensim."""
    if not opensim_available():
        return None
    built = walk.muscle_driven
    values = [np.atleast_2d(solution.value(x)).T for x in (built.q, built.u, built.activations, built.excitations,
                                                            built.actuator_controls, built.accelerations)]
    tendon = None if built.normalized_tendon_forces is None else tuple(
        np.atleast_2d(solution.value(x)).T for x in (built.normalized_tendon_forces,
                                                     built.normalized_tendon_force_derivatives))
    return check_states(walk, *values[:5], udot=values[5], tendon=tendon)[0]


def opensim_check_rows(check: dict | None) -> list[str]:
    """summary.md's OpenSim cross-check section (``check`` of ``solution_check``); nothing without opensim."""
    if check is None:
        return []
    excluded = check["excluded_from_comparison"]
    compliant = "equilibrium_residual_max_abs_difference" in check
    settings = check["muscle_settings_max_abs_difference"]
    return ["## OpenSim 4.6 cross-check at the solution's states", "",
            f"{check['model']} built by OpenSim's operators and components (trajopt/examples/walk3d/opensim_request.py;"
            " .osim pelvis CustomJoint: a quaternion pelvis is handed over as its angles and angle rates), at every "
            "grid point with the solution's activations and controls"
            f"{' and normalized tendon forces (and their derivatives)' if compliant else ''}. Accelerations in "
            "trajopt's speeds (a quaternion pelvis: its angular acceleration in the pelvis frame). Excluded from the "
            f"comparison: {'; '.join(excluded) or 'nothing (every ingredient has an OpenSim 4.6 component)'}.",
            "", "| quantity | max abs difference | largest value |", "|---|---|---|",
            *([f"| pelvis quaternion norm - 1 (trajopt's poses use it as it is, OpenSim gets angles) | "
               f"{check['pelvis_quaternion_max_norm_error']:.2g} | |"]
              if check["pelvis_quaternion_max_norm_error"] is not None else []),
            f"| contact sphere forces (N) | {check['contact_force_max_abs_difference_N']:.3g} | "
            f"{check['contact_force_max_N']:.4g} |",
            f"| tendon forces (N{'; compliant: the same tendon-force states' if compliant else ''}) | "
            f"{check['tendon_force_max_abs_difference_N']:.3g} | "
            f"{check['tendon_force_max_N']:.4g} |",
            f"| muscle settings OpenSim's muscles end up with vs trajopt's ({', '.join(settings)}) | "
            f"{max(settings.values()):.3g} | |",
            *([f"| OpenSim's implicit tendon-dynamics residual vs trajopt's fiber-tendon equilibrium residual | "
               f"{check['equilibrium_residual_max_abs_difference']:.3g} ({check['equilibrium_residual_worst_muscle']})"
               f" | {check['opensim_equilibrium_residual_max_abs']:.3g} |"] if compliant else []),
            f"| OpenSim's forward-dynamics accelerations vs the solution's (rad/s², m/s²) | "
            f"{check['acceleration_max_abs_difference']:.3g} ({check['acceleration_worst_speed']}) | |",
            f"| OpenSim's forward dynamics vs trajopt's at the same states | "
            f"{check['forward_acceleration_max_abs_difference']:.3g} ({check['forward_acceleration_worst_speed']}) | |",
            f"| trajopt's dynamics residual at OpenSim's accelerations (N·m, N) | "
            f"{check['implicit_residual_at_opensim_accelerations_max_abs']:.3g} "
            f"({check['implicit_residual_at_opensim_accelerations_worst_speed']}) | |",
            f"| OpenSim's inverse-dynamics residual at the solution's accelerations (N·m, N) | "
            f"{check['opensim_inverse_dynamics_residual_max_abs']:.3g} "
            f"({check['opensim_inverse_dynamics_residual_worst_coordinate']}) | |", "",
            "The rows against the solution's accelerations also hold the solve's own dynamics violation"
            f"{' (and the tendon residual row its fiber-tendon equilibrium violation)' if compliant else ''}. At the "
            "same states the dynamics differ by the walker knee's velocity-dependent forces: OpenSim's disagree with "
            "Lagrange's equations of its own mass matrix (with the knees still both agree to ~1e-10; "
            "tests/test_tools.py, tests/test_walk3d_opensim_check.py). Contact forces differ through the "
            "quaternion's norm error only (to ~1e-11 N with it normalized).", ""]
