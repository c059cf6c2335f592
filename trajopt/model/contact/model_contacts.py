"""Sphere/half-space contacts placed on a trajopt.core.multibody model: body wrenches and the loads
OpenSim reports (``SmoothSphereHalfSpaceForce::getRecordValues``), as functions of (q, u).

`osim_contacts(osim_model)` turns the SmoothSphereHalfSpaceForce elements of an imported .osim
file into `SphereContact`s; `contact_loads_function(model, contacts)` is the named casadi.Function
built once per (model, contacts) and cached on the model.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Sequence

import casadi as ca

from trajopt.model.contact.smooth_sphere_half_space import (
    SmoothSphereHalfSpaceParameters,
    Vec3,
    smooth_sphere_half_space_function,
)
from trajopt.errors import ModelFileError, TrajoptInputError
from trajopt.core.multibody.bodies import GROUND
from trajopt.core.multibody.kinematics import FUNCTION_OPTIONS, body_pose, cached_function, frame_jacobian, symbols


@dataclass(frozen=True)
class SphereContact:
    """A contact sphere (centre ``sphere_center`` in ``sphere_body``'s frame) against a half space
    fixed to ``half_space_body`` ('ground' allowed); the plane and its constants are in ``parameters``."""

    name: str
    sphere_body: str
    sphere_center: Vec3
    half_space_body: str
    parameters: SmoothSphereHalfSpaceParameters


def osim_contacts(osim_model) -> tuple[SphereContact, ...]:
    """The SmoothSphereHalfSpaceForce elements of a `trajopt.model.osim.OsimModel` that apply force, in file order. A
    model with a HuntCrossleyForce is refused in one line: contact in an optimal-control problem must be smooth (the
    analyses of a motion apply it: ``trajopt.model.musculoskeletal.model_forces``)."""
    for force in osim_model.spec.hunt_crossley_forces:
        raise TrajoptInputError(
            f"{force.source}: HuntCrossleyForce '{force.name}': contact in an optimal-control problem must be smooth "
            f"and Hunt-Crossley contact is not; replace it with one SmoothSphereHalfSpaceForce per sphere and half "
            f"space (OpenSim's smooth Hunt-Crossley contact) or switch it off (appliesForce false)")
    spheres = {s.name: s for s in osim_model.contact_spheres}
    half_spaces = {h.name: h for h in osim_model.contact_half_spaces}
    contacts = []
    for force in osim_model.contact_forces:
        if not force.applies_force:
            continue
        sphere = spheres.get(_geometry_name(force.sphere))
        half_space = half_spaces.get(_geometry_name(force.half_space))
        for socket, target, found in (("sphere", force.sphere, sphere), ("half_space", force.half_space, half_space)):
            if found is None:
                raise ModelFileError(f"{osim_model.spec.file}: SmoothSphereHalfSpaceForce '{force.name}' "
                                     f"socket_{socket} '{target}' is not a contact {socket.replace('_', ' ')} "
                                     f"of the model")
        parameters = SmoothSphereHalfSpaceParameters(
            stiffness=force.stiffness, dissipation=force.dissipation, sphere_radius=sphere.radius,
            static_friction=force.static_friction, dynamic_friction=force.dynamic_friction,
            viscous_friction=force.viscous_friction, transition_velocity=force.transition_velocity,
            constant_contact_force=force.constant_contact_force, hertz_smoothing=force.hertz_smoothing,
            hunt_crossley_smoothing=force.hunt_crossley_smoothing,
            half_space_location=half_space.point, half_space_normal=half_space.normal)
        contacts.append(SphereContact(force.name, sphere.body, sphere.center, half_space.body, parameters))
    return tuple(contacts)


def _geometry_name(socket_path: str) -> str:
    return socket_path.rstrip("/").rsplit("/", 1)[-1]


class ContactLoads(NamedTuple):
    """Loads of n contacts (ground axes); torques are about the body origins, as OpenSim's
    getRecordValues reports them (ground's origin for a half space on ground)."""

    wrenches: object  # 6 x nb, all contacts summed, for forward/inverse dynamics
    sphere_forces: object  # 3 x n
    sphere_torques: object  # 3 x n
    half_space_forces: object  # 3 x n
    half_space_torques: object  # 3 x n
    contact_points: object  # 3 x n


def _body_motion(model, q, u, body):
    """(rotation, origin, origin velocity, angular velocity) of ``body`` in ground."""
    if body == GROUND:
        zero = ca.DM.zeros(3, 1)
        return ca.DM.eye(3), zero, zero, zero
    rotation, origin = body_pose(model, q, body)
    twist = ca.mtimes(frame_jacobian(model, q, body), u)
    return rotation, origin, twist[3:6], twist[0:3]


def _check(model, contacts):
    contacts = tuple(contacts)
    for contact in contacts:
        if not isinstance(contact, SphereContact):
            raise TrajoptInputError(f"contact loads: expected SphereContact, got {type(contact).__name__}")
        if contact.sphere_body == GROUND:
            raise TrajoptInputError(f"contact '{contact.name}': the sphere is on 'ground'; put it on a moving body")
        for body in (contact.sphere_body, contact.half_space_body):
            if body != GROUND:
                model.body_index(body)  # raises for an unknown body
    return contacts


def _build(model, contacts):
    q, u, _ = symbols(model)
    nb = len(model.bodies)
    wrenches = ca.SX.zeros(6, nb)
    columns = {key: [] for key in ContactLoads._fields[1:]}
    for contact in contacts:
        rotation_s, origin_s, velocity_s, omega_s = _body_motion(model, q, u, contact.sphere_body)
        rotation_h, origin_h, velocity_h, omega_h = _body_motion(model, q, u, contact.half_space_body)
        center = origin_s + ca.mtimes(rotation_s, ca.DM(contact.sphere_center))
        center_velocity = velocity_s + ca.cross(omega_s, center - origin_s)
        on_sphere, on_half_space, point, _ = smooth_sphere_half_space_function(contact.parameters)(
            center, center_velocity, omega_s, rotation_h, origin_h, velocity_h, omega_h)
        torque_s = ca.cross(point - origin_s, on_sphere)
        torque_h = ca.cross(point - origin_h, on_half_space)
        for body, torque, force in ((contact.sphere_body, torque_s, on_sphere),
                                    (contact.half_space_body, torque_h, on_half_space)):
            k = model.body_index(body) if body != GROUND else -1
            if k >= 0:
                wrenches[:, k] = wrenches[:, k] + ca.vertcat(torque, force)
        for key, value in zip(columns, (on_sphere, torque_s, on_half_space, torque_h, point)):
            columns[key].append(value)
    outputs = [wrenches] + [ca.horzcat(*values) if values else ca.SX.zeros(3, 0) for values in columns.values()]
    return ca.Function("contact_loads", [q, u], outputs, ["q", "u"], list(ContactLoads._fields), FUNCTION_OPTIONS)


def contact_loads_function(model, contacts: Sequence[SphereContact]) -> ca.Function:
    """The named casadi.Function ``contact_loads(q, u)`` -> the fields of `ContactLoads` (cached on the model)."""
    contacts = _check(model, contacts)
    return cached_function(model, ("contact_loads", contacts), lambda m: _build(m, contacts))


def contact_loads(model, q, u, contacts: Sequence[SphereContact]) -> ContactLoads:
    """All loads of ``contacts`` at (q, u); SX, MX or numbers."""
    return ContactLoads(*contact_loads_function(model, contacts)(q, u))


def contact_wrenches(model, q, u, contacts: Sequence[SphereContact]):
    """Body wrenches (6 x nb) of all contacts, for `forward_dynamics` / `inverse_dynamics`."""
    return contact_loads(model, q, u, contacts).wrenches


def contact_record_values(model, q, u, contacts: Sequence[SphereContact]):
    """12 x n: per contact, OpenSim's getRecordValues order: sphere force, sphere torque, half-space
    force, half-space torque (ground axes; torques about the respective body origins)."""
    loads = contact_loads(model, q, u, contacts)
    return ca.vertcat(loads.sphere_forces, loads.sphere_torques, loads.half_space_forces, loads.half_space_torques)


def ground_reaction_loads(model, q, u, contacts: Sequence[SphereContact]):
    """(force 3, torque 3) on one foot: the sphere forces and torques of ``contacts`` summed, as
    OpenSim's createExternalLoadsTableForGait does for the contacts of a foot."""
    contacts = tuple(contacts)
    if not contacts:
        raise TrajoptInputError("ground_reaction_loads: give at least one contact of the foot")
    loads = contact_loads(model, q, u, contacts)
    return ca.sum2(loads.sphere_forces), ca.sum2(loads.sphere_torques)


def contacts_on(contacts: Sequence[SphereContact], body: str) -> tuple[SphereContact, ...]:
    """The contacts whose sphere is on ``body`` (e.g. a foot's calcaneus)."""
    selected = tuple(c for c in contacts if c.sphere_body == body)
    if not selected:
        raise TrajoptInputError(f"no contact sphere on body '{body}' "
                                f"(spheres are on: {sorted({c.sphere_body for c in contacts})})")
    return selected
