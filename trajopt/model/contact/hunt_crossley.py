"""OpenSim's HuntCrossleyForce between contact spheres and half spaces, as Simbody computes it
(``SimTK::HuntCrossleyForce``; its sphere/half-space collision detection): for analyses of a given motion.

Per sphere/half-space pair, with the half space as Simbody's first surface (its outward normal n) and the sphere
(radius r) as the second:

- depth d = r - n·(c - p) (c the sphere's centre, p a point of the plane); no force unless d > 0;
- surface stiffnesses k_h, k_s: each ContactParameters stiffness to the power 2/3 (Simbody keeps them so);
- contact point: midway through the overlap, moved along n by d (1/2 - s1) with s1 = k_s / (k_h + k_s);
- Hertz force f_H = 4/3 k d sqrt(r k d) with k = k_h s1, and Hunt-Crossley f = f_H (1 + 3/2 c v_n), where
  c = c_h s1 + c_s (1 - s1) and v_n = n·(v_h - v_s) (approach speed); no force when f <= 0;
- Stribeck friction along the slip v_t = (v_h - v_s) - v_n n: f (min(v/v_tr, 1) (μ_d + 2 (μ_s - μ_d)/(1 + (v/v_tr)²))
  + μ_v v) with v = |v_t|, each coefficient the harmonic mean 2ab/(a+b) of the two surfaces'.

The force f n + friction v_t / v acts on the sphere at the contact point, its opposite on the half space.

Not smooth (the max in the depth, the kink at f = 0 and |v_t| = 0), so not for optimal control: there a
SmoothSphereHalfSpaceForce (``trajopt.model.contact.smooth_sphere_half_space``) takes its place. Simbody stops computing
a force's remaining contacts at the first one whose f <= 0 (in its sweep order); this module sets that contact's
force to zero and keeps the others, which differs only when several contacts of one force touch and one of them
separates faster than 2/(3c). Two spheres on different bodies in one force also touch each other in Simbody; such
a force is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from trajopt.model.contact.model_contacts import _body_motion
from trajopt.errors import ModelFileError
from trajopt.core.multibody.bodies import GROUND
from trajopt.core.multibody.dynamics import inverse_dynamics

Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class SurfaceMaterial:
    """One surface's ContactParameters: stiffness (Pa), dissipation (s/m), friction coefficients."""

    stiffness: float
    dissipation: float
    static_friction: float
    dynamic_friction: float
    viscous_friction: float


@dataclass(frozen=True)
class HuntCrossleyPair:
    """A sphere (centre in its body's frame, radius) against a half space (plane point and outward normal in its
    body's frame), each with its material, and the force's transition velocity (m/s)."""

    force: str
    sphere_body: str
    sphere_center: Vec3
    radius: float
    sphere_material: SurfaceMaterial
    half_space_body: str
    half_space_point: Vec3
    half_space_normal: Vec3
    half_space_material: SurfaceMaterial
    transition_velocity: float


def _harmonic(a: float, b: float) -> float:
    return 2 * a * b / (a + b) if (a != 0 or b != 0) else 0.0


def hunt_crossley_pair_function(pair: HuntCrossleyPair) -> ca.Function:
    """(kinematics of the sphere's body and the half space's body in ground: rotation, origin, origin velocity,
    angular velocity) -> (force on the sphere's body, contact point), ground axes."""
    names = ("rotation", "origin", "velocity", "angular_velocity")
    sphere = [ca.SX.sym(f"sphere_{n}", 3, 3 if n == "rotation" else 1) for n in names]
    plane = [ca.SX.sym(f"half_space_{n}", 3, 3 if n == "rotation" else 1) for n in names]
    rotation_s, origin_s, velocity_s, omega_s = sphere
    rotation_h, origin_h, velocity_h, omega_h = plane
    h, s = pair.half_space_material, pair.sphere_material
    center = origin_s + ca.mtimes(rotation_s, ca.DM(pair.sphere_center))
    normal = ca.mtimes(rotation_h, ca.DM(pair.half_space_normal))
    plane_point = origin_h + ca.mtimes(rotation_h, ca.DM(pair.half_space_point))
    height = ca.dot(center - plane_point, normal)
    depth = pair.radius - height
    # Simbody keeps each surface's stiffness to the power 2/3 (HuntCrossleyForceImpl.h, Parameters).
    k_h, k_s = h.stiffness ** (2.0 / 3.0), s.stiffness ** (2.0 / 3.0)
    s1 = k_s / (k_h + k_s)
    point = center - (0.5 * depth + height) * normal + depth * (0.5 - s1) * normal
    stiffness = k_h * s1
    dissipation = h.dissipation * s1 + s.dissipation * (1 - s1)
    positive_depth = ca.fmax(depth, 0)
    hertz = 4.0 / 3.0 * stiffness * positive_depth * ca.sqrt(pair.radius * stiffness * positive_depth)
    v = (velocity_h + ca.cross(omega_h, point - origin_h)) - (velocity_s + ca.cross(omega_s, point - origin_s))
    normal_speed = ca.dot(v, normal)
    slip_velocity = v - normal_speed * normal
    force = hertz * (1 + 1.5 * dissipation * normal_speed)
    force = ca.if_else(ca.logic_and(depth > 0, force > 0), force, 0)
    slip = ca.norm_2(slip_velocity)
    static, dynamic = _harmonic(h.static_friction, s.static_friction), _harmonic(h.dynamic_friction, s.dynamic_friction)
    viscous = _harmonic(h.viscous_friction, s.viscous_friction)
    relative = slip / pair.transition_velocity
    stribeck = ca.fmin(relative, 1) * (dynamic + 2 * (static - dynamic) / (1 + relative ** 2))
    friction = force * (stribeck + viscous * slip)
    direction = ca.if_else(slip > 0, slip_velocity / (slip + (slip == 0)), ca.DM.zeros(3, 1))
    on_sphere = force * normal + friction * direction
    return ca.Function("hunt_crossley_force", sphere + plane, [on_sphere, point],
                       [f"sphere_{n}" for n in names] + [f"half_space_{n}" for n in names],
                       ["force_on_sphere", "contact_point"])


def hunt_crossley_pairs(osim) -> tuple[HuntCrossleyPair, ...]:
    """The sphere/half-space pairs of a loaded model's HuntCrossleyForces (spheres and half spaces on the same body
    exert nothing on it and are left out); a force with spheres on two bodies is a one-line error."""
    spheres = {s.name: s for s in osim.contact_spheres}
    half_spaces = {h.name: h for h in osim.contact_half_spaces}
    pairs = []
    for force in osim.spec.hunt_crossley_forces:
        materials = {}
        for contact in force.contacts:
            for name in contact.geometry:
                materials[name] = SurfaceMaterial(contact.stiffness, contact.dissipation, contact.static_friction,
                                                  contact.dynamic_friction, contact.viscous_friction)
        where = f"{force.source}: HuntCrossleyForce '{force.name}'"
        on_bodies = {spheres[n].body for n in materials if n in spheres}
        if len(on_bodies) > 1:
            raise ModelFileError(f"{where}: spheres on bodies {sorted(on_bodies)} would also touch each other; "
                                 f"trajopt models sphere/half-space contact only (one force per sphere body)")
        for sphere_name in (n for n in materials if n in spheres):
            for plane_name in (n for n in materials if n in half_spaces):
                sphere, plane = spheres[sphere_name], half_spaces[plane_name]
                if sphere.body == plane.body:
                    continue
                pairs.append(HuntCrossleyPair(force.name, sphere.body, sphere.center, sphere.radius,
                                              materials[sphere_name], plane.body, plane.point, plane.normal,
                                              materials[plane_name], force.transition_velocity))
    return tuple(pairs)


def _wrenches(multibody, pairs, q: ca.SX, u: ca.SX) -> ca.SX:
    """Body wrenches (6 x bodies: torque about the body origin, force; ground axes) of the pairs at (q, u)."""
    wrenches = ca.SX.zeros(6, len(multibody.bodies))
    for pair in pairs:
        sphere = _body_motion(multibody, q, u, pair.sphere_body)
        plane = _body_motion(multibody, q, u, pair.half_space_body)
        on_sphere, point = hunt_crossley_pair_function(pair)(*sphere, *plane)
        for body, origin, force in ((pair.sphere_body, sphere[1], on_sphere), (pair.half_space_body, plane[1],
                                                                                -on_sphere)):
            if body != GROUND:
                k = multibody.body_index(body)
                wrenches[:, k] = wrenches[:, k] + ca.vertcat(ca.cross(point - origin, force), force)
    return wrenches


def hunt_crossley_function(multibody, pairs) -> ca.Function:
    """(q, u) -> (body wrenches 6 x bodies, generalized forces nv) of the pairs; the generalized forces are Jᵀ w."""
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    wrenches = _wrenches(multibody, pairs, q, u)
    zero = ca.SX.zeros(multibody.nv)
    generalized = inverse_dynamics(multibody, q, u, zero) - inverse_dynamics(multibody, q, u, zero, wrenches)
    return ca.Function("hunt_crossley_loads", [q, u], [wrenches, generalized], ["q", "u"],
                       ["wrenches", "generalized_forces"])
