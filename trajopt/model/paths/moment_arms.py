"""Muscle moment arms of a geometric path, two ways (Sherman, Seth, Delp 2010, 2013).

Generalized-force method: a unit tension s = 1 applies loads to the bodies; their generalized
forces are f = Jᵀ T s (plus the work of moving path points), and the moment arm about an angle of
interest θ is r = Cᵀ f / s, where the coupling matrix C = ∂u/∂θ̇ says how every generalized speed
moves when θ moves (1 for θ itself; scale * df/dθ for a coordinate coupled to θ by an OpenSim
CoordinateCouplerConstraint; 0 for every other coordinate, held still). A CustomJoint whose axes
are several functions of one coordinate needs nothing extra: its motion subspace already carries them.

Length method: r = -dl/dθ along the coupled motion = -(∂l/∂q) N(q) C, with q̇ = N(q) u.
The two agree when all constraints are workless (the papers' eq. 18). The sign is OpenSim's:
positive when tension pulls θ to increase (the path shortens as θ increases).

For a ball (quaternion) joint the generalized forces over its three speeds (angular velocity of
the child in child axes) are the spatial moment arm: `spatial_moment_arm` = -R_S of Zoufaly et al.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import casadi as ca

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.functions import CoordinateFunction
from trajopt.core.multibody.joints import BallJoint, FreeJoint
from trajopt.core.multibody.kinematics import coordinate_rates_matrix, frame_jacobian
from trajopt.model.osim.build import FrameResolver, build_multibody, contact_geometry, coordinate_function
from trajopt.model.osim.load import OsimModel
from trajopt.model.osim.parser import parse_osim


@dataclass(frozen=True)
class CoordinateCoupling:
    """dependent = scale * function(independent), as an OpenSim CoordinateCouplerConstraint with one
    independent coordinate. The multibody model keeps `dependent` as a coordinate; the coupling
    only enters moment arms through C (and the caller keeps q consistent with it)."""

    dependent: str
    independent: str
    function: CoordinateFunction
    scale: float = 1.0

    def value(self, q_independent):
        """The dependent coordinate's value for a value of the independent one."""
        return self.scale * self.function(q_independent)


def couplings_from_osim(osim_model) -> tuple[CoordinateCoupling, ...]:
    """The enforced CoordinateCouplerConstraints of a loaded .osim model (or its spec) as couplings."""
    model_spec = getattr(osim_model, "spec", osim_model)
    couplings = []
    for constraint in model_spec.constraints:
        if not constraint.enforced:
            continue
        if len(constraint.independent_coordinates) != 1:
            raise TrajoptInputError(
                f"{model_spec.file}: CoordinateCouplerConstraint '{constraint.name}' has independent coordinates "
                f"{list(constraint.independent_coordinates)}; moment arms support exactly one")
        couplings.append(CoordinateCoupling(constraint.dependent_coordinate, constraint.independent_coordinates[0],
                                            coordinate_function(constraint.function), constraint.scale_factor))
    return tuple(couplings)


def load_osim_with_couplings(path):
    """(OsimModel, couplings) of a .osim file whose CoordinateCouplerConstraints are enforced.

    Adapter until `trajopt.model.osim` supports kinematic constraints (its builder refuses enforced
    couplers): the multibody model keeps every coordinate free, and the couplings carry the
    constraints into moment arms (keep q consistent with them, e.g. with `CoordinateCoupling.value`).
    """
    model_spec = parse_osim(path)
    couplings = couplings_from_osim(model_spec)
    free_spec = replace(model_spec, constraints=tuple(replace(c, enforced=False) for c in model_spec.constraints))
    frames = FrameResolver(free_spec)
    spheres, half_spaces = contact_geometry(free_spec, frames)
    osim_model = OsimModel(spec=free_spec, multibody=build_multibody(free_spec), frames=frames,
                           markers={m.name: frames.point(m.frame, m.location) for m in free_spec.markers},
                           contact_spheres=spheres, contact_half_spaces=half_spaces)
    return osim_model, couplings


def _speed_index(model, name, what):
    if name not in model.speed_names:
        raise TrajoptInputError(f"{what}: '{name}' is not a scalar coordinate of model '{model.name}' "
                                f"(coordinates: {[n for n in model.speed_names if n in model.coordinate_names]})")
    return model.speed_index(name)


def coupling_matrix(model, q, coordinate: str, couplings=()):
    """C (nv x 1) = ∂u/∂θ̇ for the angle of interest `coordinate` (a scalar coordinate), following
    chains of couplings; coordinates not coupled to it get 0."""
    couplings = tuple(couplings)
    if any(c.dependent == coordinate for c in couplings):
        raise TrajoptInputError(f"coupling matrix: '{coordinate}' is a dependent coordinate of a coupling; "
                                f"ask for the moment arm about its independent coordinate")
    index = _speed_index(model, coordinate, "coupling matrix")
    rates = {coordinate: 1.0}
    pending = list(couplings)
    while pending:
        ready = [c for c in pending if c.independent in rates]
        if not ready:
            break  # the rest are not coupled to the angle of interest
        for c in ready:
            x = q[model.coordinate_index(c.independent)]
            rates[c.dependent] = rates.get(c.dependent, 0.0) + c.scale * c.function.derivative(x) * rates[c.independent]
            pending.remove(c)
    column = [0.0] * model.nv
    column[index] = 1.0
    for name, rate in rates.items():
        if name != coordinate:
            column[_speed_index(model, name, "coupling matrix")] = rate
    return ca.vertcat(*column)


def _function(path, key, build):
    cache = path.__dict__.setdefault("_moment_arm_functions", {})
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _unit_tension_generalized_forces(path, q):
    """f = Jᵀ F + (moving-point forces) for s = 1: J stacks each body's Jacobian at its origin
    ([angular velocity; origin velocity] = J u), F its wrench [moment about the origin; force]."""
    model = path.model
    wrenches, moving = path.unit_tension_loads(q)
    f = moving
    for k, body in enumerate(model.bodies):
        f = f + ca.mtimes(frame_jacobian(model, q, body.name).T, wrenches[:, k])
    return f


def generalized_forces(path, q):
    """Generalized forces (nv) of a unit tension along `path`."""

    def build():
        qs = ca.SX.sym("q", path.model.nq)
        return ca.Function(f"{path.function.name()}_generalized_forces", [qs],
                           [_unit_tension_generalized_forces(path, qs)], ["q"], ["f"], {"cse": True})

    return _function(path, "generalized_forces", build)(q)


def _check_coordinates(path, coordinates):
    model = path.model
    if coordinates is None:
        coordinates = [n for n in model.speed_names if n in model.coordinate_names]
    coordinates = tuple(coordinates)
    for name in coordinates:
        _speed_index(model, name, f"moment arms of '{path.name}'")
    return coordinates


def _coupling_columns(model, q, coordinates, couplings):
    return ca.horzcat(*[coupling_matrix(model, q, c, couplings) for c in coordinates])


def moment_arms(path, q, coordinates=None, couplings=()):
    """Moment arms (m) about `coordinates` (default: every scalar coordinate) by the generalized-
    force method, r = Cᵀ f / s with s = 1."""
    coordinates, couplings = _check_coordinates(path, coordinates), tuple(couplings)

    def build():
        qs = ca.SX.sym("q", path.model.nq)
        c = _coupling_columns(path.model, qs, coordinates, couplings)
        r = ca.mtimes(c.T, _unit_tension_generalized_forces(path, qs))
        return ca.Function(f"{path.function.name()}_moment_arms", [qs], [r], ["q"], ["moment_arms"], {"cse": True})

    return _function(path, ("generalized_force", coordinates, couplings), build)(q)


def moment_arms_from_length(path, q, coordinates=None, couplings=()):
    """Moment arms (m) as -dl/dθ along the coupled motion: -(∂l/∂q) N(q) C."""
    coordinates, couplings = _check_coordinates(path, coordinates), tuple(couplings)

    def build():
        model = path.model
        qs = ca.SX.sym("q", model.nq)
        gradient = ca.jacobian(path.length(qs), qs)
        c = _coupling_columns(model, qs, coordinates, couplings)
        r = -ca.mtimes(ca.mtimes(gradient, coordinate_rates_matrix(model, qs)), c).T
        return ca.Function(f"{path.function.name()}_moment_arms_from_length", [qs], [r], ["q"], ["moment_arms"],
                           {"cse": True})

    return _function(path, ("length", coordinates, couplings), build)(q)


def spatial_moment_arm(path, q, joint: str):
    """Spatial moment arm (3, m) of `path` about ball joint `joint`: the torque per unit tension in
    the child frame's axes (its speeds' generalized forces); the length Jacobian R_S = -this."""
    model = path.model
    found = model.joint(joint)
    if not isinstance(found, (BallJoint, FreeJoint)):
        raise TrajoptInputError(f"spatial moment arm of '{path.name}': joint '{joint}' is a "
                                f"{type(found).__name__}, not a ball or free joint")
    rows = model.v_slice(joint)
    return generalized_forces(path, q)[rows.start : rows.start + 3]
