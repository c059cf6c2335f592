"""The generalized forces of a model's own non-muscle force elements, as OpenSim 4.6 computes them.

- ``CoordinateLimitForce`` (``coordinate_limit_force``): OpenSim's passive joint limit. Past the upper limit the
  stiffness rises from 0 to ``upper_stiffness`` over ``transition`` through Simbody's quintic step
  (``SimTK::Function::Step``), and likewise below the lower limit; the force is -K_up (q - q_up) + K_low (q_low - q)
  minus a damping that follows the same transition. Limits, transition, stiffness and damping of a rotational
  coordinate are given per degree and converted to radians as OpenSim's ``extendConnectToModel`` does.
- ``PathSpring``: tension k max(0, l - l0) (1 + c l̇) along its path, applied as -T ∂l/∂q (generalized force).
- ``PathActuator``: tension optimal_force * control along its path; its generalized force per unit control is
  ``-optimal_force ∂l/∂q`` (``path_actuator_moment_arms``), so problems give it a control like a CoordinateActuator.
- ``ExpressionBasedCoordinateForce`` (``trajopt.model.osim.expression_forces``);
- ``HuntCrossleyForce`` between spheres and half spaces (``trajopt.model.contact.hunt_crossley``): body wrenches.

``passive_forces_function(osim)`` is the named Function (q, u) -> generalized forces (nv) of the limit forces,
path springs and expression forces; ``ModelForces`` applies them and the Hunt-Crossley contacts where external
loads apply (inverse dynamics, static optimization, the muscle-driven inverse), as OpenSim's InverseDynamicsTool
applies every force but the muscles. Hunt-Crossley contact is not smooth: an optimal-control problem uses OpenSim's
``SmoothSphereHalfSpaceForce`` (``trajopt.model.contact``) instead: ``trajopt.model.contact.osim_contacts`` refuses a
model with a HuntCrossleyForce in one line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.model.contact.hunt_crossley import hunt_crossley_function, hunt_crossley_pairs
from trajopt.errors import ModelFileError
from trajopt.core.multibody import coordinate_rates_matrix
from trajopt.model.osim import spec
from trajopt.model.osim.expression_forces import (
    generalized_forces_function as expression_forces_function,
)
from trajopt.model.paths.geometric import element_geometric_path


def step_up(t):
    """Simbody's ``stepUp``: 0 for t <= 0, 1 for t >= 1, t³(10 - 15t + 6t²) between (C² continuous)."""
    t = ca.fmin(ca.fmax(t, 0), 1)
    return t ** 3 * (10 + t * (6 * t - 15))


def coordinate_limit_force(force: spec.CoordinateLimitForce, q, qdot, rotational: bool):
    """OpenSim's ``CoordinateLimitForce::calcLimitForce`` on coordinate value ``q`` and speed ``qdot`` (SI units)."""
    w = math.pi / 180 if rotational else 1.0
    upper, lower, width = w * force.upper_limit, w * force.lower_limit, w * force.transition
    k_upper, k_lower, damping = force.upper_stiffness / w, force.lower_stiffness / w, force.damping / w
    stiffness_upper = k_upper * step_up((q - upper) / width)
    stiffness_lower = k_lower * (1 - step_up((q - (lower - width)) / width))
    damping_force = -damping * (stiffness_upper / k_upper + stiffness_lower / k_lower) * qdot
    return -stiffness_upper * (q - upper) + stiffness_lower * (lower - q) + damping_force


def path_spring_tension(force: spec.PathSpring, length, lengthening_speed):
    """OpenSim's ``PathSpring::getTension``: stiffness * stretch * (1 + dissipation * lengthening speed), with the
    stretch max(0, length - resting_length)."""
    return force.stiffness * ca.fmax(length - force.resting_length, 0) * (1 + force.dissipation * lengthening_speed)


def _where(force) -> str:
    return f"{force.source}: {type(force).__name__} '{force.name}'" if force.source else \
        f"{type(force).__name__} '{force.name}'"


def _path_gradient(osim, force, q):
    """(length, ∂l/∂q N(q)) of a path element: the length's gradient with respect to the speeds."""
    length = element_geometric_path(osim, force).length(q)
    return length, ca.mtimes(ca.jacobian(length, q), coordinate_rates_matrix(osim.multibody, q))


def passive_forces_function(osim) -> ca.Function:
    """(q, u) -> generalized forces (nv) of the model's CoordinateLimitForces, PathSprings and
    ExpressionBasedCoordinateForces (zero for a model without them)."""
    multibody, model_spec = osim.multibody, osim.spec
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    tau = ca.SX.zeros(multibody.nv)
    kinds = {c.name: c.motion_type for c in model_spec.coordinates}
    for force in model_spec.coordinate_limit_forces:
        if force.coordinate not in multibody.speed_names or force.coordinate not in multibody.coordinate_names:
            raise ModelFileError(f"{_where(force)}: coordinate '{force.coordinate}' is not a coordinate of model "
                                 f"'{multibody.name}' with its own speed")
        k = multibody.speed_index(force.coordinate)
        tau[k] += coordinate_limit_force(force, q[multibody.coordinate_index(force.coordinate)], u[k],
                                         kinds.get(force.coordinate) != "translational")
    for force in model_spec.path_springs:
        length, gradient = _path_gradient(osim, force, q)
        tension = path_spring_tension(force, length, ca.mtimes(gradient, u))
        tau -= tension * gradient.T
    if model_spec.expression_forces:
        tau += expression_forces_function(multibody, model_spec.expression_forces)(q, u)
    return ca.Function("model_passive_forces", [q, u], [tau], ["q", "u"], ["generalized_forces"])


def path_actuator_moment_arms(osim) -> ca.Function:
    """q -> (nv x actuators): each PathActuator's generalized force per unit control, -optimal_force ∂l/∂q N(q)
    (OpenSim applies tension optimal_force * control along the path)."""
    multibody = osim.multibody
    q = ca.SX.sym("q", multibody.nq)
    columns = [-force.optimal_force * _path_gradient(osim, force, q)[1].T for force in osim.spec.path_actuators]
    arms = ca.horzcat(*columns) if columns else ca.SX.zeros(multibody.nv, 0)
    return ca.Function("path_actuator_generalized_forces", [q], [arms], ["q"], ["per_control"])


@dataclass(frozen=True)
class ModelForces:
    """The model's passive force elements and Hunt-Crossley contacts as ``AppliedForces`` (generalized forces and
    body wrenches along a motion). PathActuators apply nothing here: with no controller their control is zero, as in
    OpenSim's inverse dynamics."""

    osim: object

    def generalized_forces(self, kinematics) -> np.ndarray:
        n = kinematics.times.size
        tau = np.asarray(passive_forces_function(self.osim).map(n)(kinematics.q.T, kinematics.u.T)).T
        pairs = hunt_crossley_pairs(self.osim)
        if pairs:
            _, contact = hunt_crossley_function(self.osim.multibody, pairs).map(n)(kinematics.q.T, kinematics.u.T)
            tau = tau + np.asarray(contact).T
        return tau

    def wrenches(self, kinematics) -> np.ndarray:
        n, nb = kinematics.times.size, len(self.osim.multibody.bodies)
        pairs = hunt_crossley_pairs(self.osim)
        if not pairs:
            return np.zeros((n, 6, nb))
        wrenches, _ = hunt_crossley_function(self.osim.multibody, pairs).map(n)(kinematics.q.T, kinematics.u.T)
        return np.asarray(wrenches).reshape(6, nb, n, order="F").transpose(2, 0, 1)  # [W(t0) | W(t1) | ...]


def model_applied_forces(osim) -> ModelForces | None:
    """The model's passive force elements and Hunt-Crossley contacts as ``AppliedForces`` (None when it has none)."""
    model_spec = osim.spec
    if (model_spec.coordinate_limit_forces or model_spec.path_springs or model_spec.expression_forces
            or model_spec.hunt_crossley_forces):
        return ModelForces(osim)
    return None


@dataclass(frozen=True)
class PathActuators:
    """A model's PathActuators as controls of a problem: ``per_control(q)`` (nv x actuators) times the controls is
    their generalized force (``path_actuator_moment_arms``)."""

    names: tuple[str, ...]
    min_controls: np.ndarray
    max_controls: np.ndarray
    per_control: ca.Function


def path_actuators(osim) -> PathActuators | None:
    """The model's PathActuators (None when it has none), for ``muscle_driven_problem(path_actuators=...)``."""
    actuators = osim.spec.path_actuators
    if not actuators:
        return None
    return PathActuators(tuple(a.name for a in actuators), np.array([a.min_control for a in actuators]),
                         np.array([a.max_control for a in actuators]), path_actuator_moment_arms(osim))
