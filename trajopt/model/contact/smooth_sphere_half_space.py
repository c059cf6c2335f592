"""OpenSim's SmoothSphereHalfSpaceForce as a CasADi expression.

The smooth Hunt-Crossley contact of Serrancoli et al. (2019) and Falisse et al. (2019), as Simbody
computes it (``SimTK::SmoothSphereHalfSpaceForceImpl::calcForce``):

- indentation ``d = R - (distance of the sphere centre above the plane)``;
- Hertz force ``fH = 4/3 k sqrt(R k) (d^2 + cf)^(3/4)`` with ``k = E^(2/3) / 2``, switched on by
  ``1/2 + 1/2 tanh(bd d)``;
- Hunt-Crossley force ``fHC = fH (1 + 3/2 c vn)``, switched off for ``vn < -2/(3c)`` by
  ``1/2 + 1/2 tanh(bv (vn + 2/(3c)))``, with ``vn`` the approach speed;
- friction ``fHC (min(vs/vt, 1) (ud + 2 (us - ud) / (1 + (vs/vt)^2)) + uv vs)`` against the slip
  velocity, ``vs = sqrt(|v_t|^2 + cf)``.

The force acts at the sphere's lowest point raised by half the indentation (midway between the
two surfaces); the velocities are those of the sphere's and the half space's material points
there.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError

Vec3 = tuple[float, float, float]

# Common-subexpression elimination when the Function is built (casadi >= 3.6).
_FUNCTION_OPTIONS = {"cse": True}


@dataclass(frozen=True)
class SmoothSphereHalfSpaceParameters:
    """Constants of one sphere/half-space contact (OpenSim's property names; SI units).

    ``half_space_location`` is a point of the plane and ``half_space_normal`` its outward unit
    normal (pointing out of the solid), both in the half-space body's frame. OpenSim's
    ContactHalfSpace occupies x > 0 of its own frame, so its outward normal is that frame's -x axis.
    """

    stiffness: float
    dissipation: float
    sphere_radius: float
    static_friction: float = 0.0
    dynamic_friction: float = 0.0
    viscous_friction: float = 0.0
    transition_velocity: float = 0.01
    constant_contact_force: float = 1e-5
    hertz_smoothing: float = 300.0
    hunt_crossley_smoothing: float = 50.0
    half_space_location: Vec3 = (0.0, 0.0, 0.0)
    half_space_normal: Vec3 = (0.0, 1.0, 0.0)

    def __post_init__(self):
        for name in ("stiffness", "dissipation", "sphere_radius", "static_friction", "dynamic_friction",
                     "viscous_friction", "transition_velocity", "constant_contact_force", "hertz_smoothing",
                     "hunt_crossley_smoothing"):
            value = float(getattr(self, name))
            if not math.isfinite(value) or value < 0:
                raise TrajoptInputError(f"SmoothSphereHalfSpaceParameters: {name} = {value} must be finite and >= 0")
            object.__setattr__(self, name, value)
        for name in ("stiffness", "sphere_radius", "transition_velocity"):
            if getattr(self, name) <= 0:
                raise TrajoptInputError(f"SmoothSphereHalfSpaceParameters: {name} = {getattr(self, name)} must be > 0")
        object.__setattr__(self, "half_space_location", _vector3("half_space_location", self.half_space_location))
        normal = np.asarray(_vector3("half_space_normal", self.half_space_normal))
        length = float(np.linalg.norm(normal))
        if length < 1e-12:
            raise TrajoptInputError(f"SmoothSphereHalfSpaceParameters: half_space_normal = {tuple(normal)} "
                                    f"has no direction")
        object.__setattr__(self, "half_space_normal", tuple(float(v) for v in normal / length))


def _vector3(name, value) -> Vec3:
    try:
        array = np.asarray(value, dtype=float).reshape(3)
    except (TypeError, ValueError):
        raise TrajoptInputError(f"SmoothSphereHalfSpaceParameters: {name} = {value!r} is not a 3-vector") from None
    if not np.all(np.isfinite(array)):
        raise TrajoptInputError(f"SmoothSphereHalfSpaceParameters: {name} = {tuple(array)} is not finite")
    return tuple(float(v) for v in array)


class ContactForce(NamedTuple):
    """Result of `smooth_sphere_half_space_force` (ground axes)."""

    force_on_sphere: object  # 3
    force_on_half_space: object  # 3, equal and opposite
    contact_point: object  # 3, where both act
    indentation: object  # scalar (m), negative when apart


def _build(parameters: SmoothSphereHalfSpaceParameters) -> ca.Function:
    p = parameters
    center = ca.SX.sym("sphere_center", 3)
    velocity = ca.SX.sym("sphere_velocity", 3)
    angular_velocity = ca.SX.sym("sphere_angular_velocity", 3)
    rotation = ca.SX.sym("half_space_rotation", 3, 3)
    origin = ca.SX.sym("half_space_origin", 3)
    plane_velocity = ca.SX.sym("half_space_velocity", 3)
    plane_angular_velocity = ca.SX.sym("half_space_angular_velocity", 3)

    radius = p.sphere_radius
    # Simbody's normal points into the half space (its frame's +x axis).
    normal = -ca.mtimes(rotation, ca.DM(p.half_space_normal))
    plane_point = origin + ca.mtimes(rotation, ca.DM(p.half_space_location))
    indentation = ca.dot(center - plane_point, normal) + radius
    contact_point = center + (radius - 0.5 * indentation) * normal

    # Velocities of the two bodies' material points at the contact point.
    v_sphere = velocity + ca.cross(angular_velocity, contact_point - center)
    v_plane = plane_velocity + ca.cross(plane_angular_velocity, contact_point - origin)
    v = v_sphere - v_plane
    normal_speed = ca.dot(v, normal)
    tangential_velocity = v - normal_speed * normal

    cf = p.constant_contact_force
    k = 0.5 * p.stiffness ** (2.0 / 3.0)
    hertz = (4.0 / 3.0) * k * math.sqrt(radius * k) * ca.sqrt(indentation**2 + cf) ** 1.5
    hertz = hertz * (0.5 + 0.5 * ca.tanh(p.hertz_smoothing * indentation))
    hunt_crossley = hertz * (1.0 + 1.5 * p.dissipation * normal_speed)
    if p.dissipation > 0:
        switch = 0.5 + 0.5 * ca.tanh(p.hunt_crossley_smoothing * (normal_speed + 2.0 / (3.0 * p.dissipation)))
        hunt_crossley = hunt_crossley * switch
    # (No dissipation: Simbody's tanh argument is +inf and the switch is exactly 1.)

    slip_speed = ca.sqrt(ca.sumsqr(tangential_velocity) + cf)
    relative_slip = slip_speed / p.transition_velocity
    friction = hunt_crossley * (
        ca.fmin(relative_slip, 1.0)
        * (p.dynamic_friction + 2.0 * (p.static_friction - p.dynamic_friction) / (1.0 + relative_slip**2))
        + p.viscous_friction * slip_speed
    )
    # Simbody's `force` acts on the half space; the sphere gets its opposite.
    on_half_space = hunt_crossley * normal + friction * tangential_velocity / slip_speed
    return ca.Function(
        "smooth_sphere_half_space_force",
        [center, velocity, angular_velocity, rotation, origin, plane_velocity, plane_angular_velocity],
        [-on_half_space, on_half_space, contact_point, indentation],
        ["sphere_center", "sphere_velocity", "sphere_angular_velocity", "half_space_rotation", "half_space_origin",
         "half_space_velocity", "half_space_angular_velocity"],
        ["force_on_sphere", "force_on_half_space", "contact_point", "indentation"],
        _FUNCTION_OPTIONS,
    )


@functools.lru_cache(maxsize=None)
def smooth_sphere_half_space_function(parameters: SmoothSphereHalfSpaceParameters) -> ca.Function:
    """The named casadi.Function ``smooth_sphere_half_space_force`` for these parameters (built once).

    Inputs (ground axes): sphere_center, sphere_velocity (of the centre), sphere_angular_velocity
    (of the sphere's body), half_space_rotation (3x3, half-space body axes -> ground),
    half_space_origin, half_space_velocity (of that body's origin), half_space_angular_velocity.
    Outputs: force_on_sphere, force_on_half_space, contact_point, indentation.
    """
    if not isinstance(parameters, SmoothSphereHalfSpaceParameters):
        raise TrajoptInputError(f"smooth_sphere_half_space_function: expected SmoothSphereHalfSpaceParameters, "
                                f"got {type(parameters).__name__}")
    return _build(parameters)


_ZERO = (0.0, 0.0, 0.0)


def smooth_sphere_half_space_force(
    parameters: SmoothSphereHalfSpaceParameters,
    sphere_center,
    sphere_velocity,
    sphere_angular_velocity=_ZERO,
    half_space_rotation=None,
    half_space_origin=_ZERO,
    half_space_velocity=_ZERO,
    half_space_angular_velocity=_ZERO,
) -> ContactForce:
    """Contact force of OpenSim's SmoothSphereHalfSpaceForce (SX, MX or numbers in, same out).

    Positions and velocities are in ground; the half space defaults to a plane fixed in ground
    (rotation identity, origin zero, at rest).
    """
    rotation = np.eye(3) if half_space_rotation is None else half_space_rotation
    result = smooth_sphere_half_space_function(parameters)(
        _column(sphere_center), _column(sphere_velocity), _column(sphere_angular_velocity), rotation,
        _column(half_space_origin), _column(half_space_velocity), _column(half_space_angular_velocity))
    return ContactForce(*result)


def _column(value):
    if isinstance(value, (ca.SX, ca.MX, ca.DM)):
        return value
    return np.asarray(value, dtype=float).reshape(3, 1)
