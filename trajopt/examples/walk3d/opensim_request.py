"""What OpenSim 4.6 builds for the cross-check of a walk3d prediction (``trajopt_opensim.walk3d_solution_check``):
the recipe's model described with OpenSim's own operators and components, and the states handed over.

Both recipes: subject_walk_scaled.osim with its pelvis CustomJoint, the recipe's welds (patellofemoral; PredSim's
also the radioulnar joints, whose CoordinateActuators go with them), DeGrooteFregly2016Muscles (Moco's
ModOpReplaceMusclesWithDeGrooteFregly2016) with the recipe's passive fiber force and active force-length width,
OpenSim's FunctionBasedPaths, the contact spheres raised 2 cm with their SmoothSphereHalfSpaceForces, the .osim's
CoordinateActuators and the recipe's toe actuators.

Moco's recipe: rigid tendons (ModOpIgnoreTendonCompliance), the ExpressionBasedCoordinateForceSet and PredSim's
lumbar torques (``LUMBAR_PASSIVE``).

PredSim's recipe: compliant tendons in OpenSim's implicit mode (ModOpUseImplicitTendonComplianceDynamicsDGF: the
normalized tendon force is a state, its derivative a discrete variable), each muscle's tendon strain the .osim's
unless the recipe's ``tendon_stiffness`` names it (then OpenSim's strain for that kT with OpenSim's tendon curve);
PredSim's passive joint torques (``trajopt.studies.gait.passive_joint_torques``: exponential limit torques, linear
springs and damping, the mtp spring of the passive toes) as one ExpressionBasedCoordinateForce per coordinate, f(q,
qdot) written with OpenSim's expression syntax from the coefficients trajopt uses.
"""

from __future__ import annotations

import numpy as np

from trajopt.studies.gait.guess import free_joint_angle_motion
from trajopt.studies.gait.passive_joint_torques import floating_base_speeds
from trajopt.model.musculoskeletal.operators import (AddContactGeometry, AddCoordinateActuators, DeGrooteMuscles,
                                                     WeldJoints)

from trajopt.examples.walk3d.prediction import (LUMBAR_PASSIVE, MODEL, MOCO_RECIPE, PASSIVE, PATHS, PELVIS,
                                                predsim_passive_torques)


def recipe_of(walk):
    """The recipe ``walk`` was built with (Moco's when it does not say)."""
    return walk.recipe or MOCO_RECIPE


def operator_of(walk, kind):
    """The operator of type ``kind`` of ``walk``'s recipe (OpenSim gets the same settings), or None."""
    found = [operator for operator in recipe_of(walk).model.operators() if type(operator) is kind]
    assert len(found) <= 1, (kind, found)
    return found[0] if found else None


def _number(value: float) -> str:
    return f"({float(value)!r})"


def passive_torque_expression(limit, spring) -> str:
    """OpenSim's ExpressionBasedCoordinateForce expression (variables q, qdot) of one coordinate's PredSim passive
    torque: limit torque (or None) + spring + damping."""
    terms = []
    if limit is not None:
        terms += [f"{_number(limit.k1)}*exp({_number(limit.k2)}*(q-{_number(limit.theta_upper)}))",
                  f"{_number(limit.k3)}*exp({_number(limit.k4)}*(q-{_number(limit.theta_lower)}))"]
    if spring.stiffness:
        terms.append(f"{_number(-spring.stiffness)}*(q-{_number(spring.offset)})")
    terms.append(f"{_number(-spring.damping)}*qdot")
    return "+".join(terms)


def predsim_passive_expressions(walk) -> list[tuple[str, str, str]]:
    """(name, coordinate, expression) of PredSim's passive torque on each coordinate that has one (every coordinate
    with its own speed outside the floating base, as ``passive_joint_torques`` chooses them)."""
    mb = walk.model.musculoskeletal.multibody
    torques = predsim_passive_torques(recipe_of(walk).model)
    floating = set(floating_base_speeds(mb))
    return [(f"{name}_predsim_passive", name, passive_torque_expression(torques.limit(name), torques.spring(name)))
            for name in mb.speed_names if name in mb.coordinate_names and name not in floating]


def opensim_request(walk, q, u, activations, excitations, controls, udot=None, tendon=None) -> dict:
    """The task's request for states of ``walk``'s model (rows are frames); with ``udot`` (trajopt's
    accelerations) OpenSim's inverse dynamics runs at them; ``tendon``: (normalized tendon forces, their
    derivatives), frames x muscles, of compliant tendons."""
    model, recipe = walk.model, recipe_of(walk)
    mb, original = model.musculoskeletal.multibody, model.original
    angles, rates, angle_accelerations = free_joint_angle_motion(original, mb, PELVIS, q, u, udot) \
        if walk.quaternion_pelvis else (q, u, udot)
    actuators = [s.name for s in model.musculoskeletal.coordinate_actuators]
    muscles = list(model.musculoskeletal.muscle_names)
    welds, muscles_operator, toes, contact = (operator_of(walk, kind) for kind in (
        WeldJoints, DeGrooteMuscles, AddCoordinateActuators, AddContactGeometry))
    if recipe.model.predsim_passive_torques:
        passive = {"expression_forces": "", "extra_expression_forces": np.array(predsim_passive_expressions(walk))}
    else:
        passive = {"expression_forces": str(PASSIVE),
                   "extra_expression_forces": np.array([(f.name, f.coordinate, f.expression) for f in LUMBAR_PASSIVE])}
    stiffness = dict(recipe.tendon_stiffness)
    request = {"model": str(MODEL), "weld_joints": np.array(welds.joints),
               "ignore_passive_fiber_force": muscles_operator.ignore_passive_fiber_force,
               "active_force_width_scale": muscles_operator.active_force_width_scale,
               "tendon_compliance": recipe.elastic_tendons,
               "tendon_stiffness_muscles": np.array(list(stiffness), dtype=str),
               "tendon_stiffness": np.array(list(stiffness.values()), dtype=float),
               "function_based_paths": str(PATHS), **passive,
               "contact_geometry": str(contact.geometry_file), "contact_forces": str(contact.forces_file),
               "sphere_offset": np.array(contact.sphere_offset, dtype=float),
               "actuated_coordinates": np.array(toes.coordinates if toes else [], dtype=str),
               "actuator_optimal_force": toes.optimal_force if toes else 1.0,
               "actuator_bound": toes.bound if toes else 1.0,
               "coordinate_names": np.array(original.coordinate_names), "q": angles, "u": rates,
               "muscle_names": np.array(muscles), "activations": np.atleast_2d(activations),
               "actuator_names": np.array(muscles + actuators),
               "controls": np.hstack([np.atleast_2d(excitations), np.atleast_2d(controls)])}
    if udot is not None:
        request["udot"] = angle_accelerations
    if tendon is not None:
        request["normalized_tendon_forces"], request["normalized_tendon_force_derivatives"] = \
            (np.atleast_2d(x) for x in tendon)
    return request
