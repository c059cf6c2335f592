"""Ground reactions per foot from sphere contacts: force, torque about the ground origin, centre of pressure and
free moment, and their continuation over the mirrored half cycle.

``foot_ground_reactions(multibody, contacts)`` is the named Function
``ground_reactions(q, u) -> (right_force, left_force, right_torque, left_torque)``: each foot's sphere forces
summed (ground axes), torques about the ground origin (the spheres' torques about their body origins moved to
the ground origin), as OpenSim's ``createExternalLoadsTableForGait`` reports them. A contact belongs to the
side named in its sphere body (``calcn_r`` -> right).

``center_of_pressure(force, torque)``: the point p on the ground plane y = 0 and the free moment T (about the
vertical) with torque = p x force + T e_y; where the vertical force is below ``threshold`` the foot is in the air
and both are 0 (as OpenSim's tools write them).
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from trajopt.model.contact import contact_loads_function
from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.symmetry import REFLECTION, SIDES
from trajopt.core.multibody import body_pose


def side_of(name: str, sides: tuple[str, str] = SIDES) -> str | None:
    """The side token of a name (``calcn_r`` -> ``r``), None when it has none."""
    tokens = name.split("_")[1:]
    found = [t for t in tokens if t in sides]
    return found[0] if len(found) == 1 else None


def foot_ground_reactions(multibody, contacts, sides: tuple[str, str] = SIDES) -> ca.Function:
    """``ground_reactions(q, u) -> (right_force, left_force, right_torque, left_torque)`` (see the module docstring)."""
    contacts = tuple(contacts)
    left, right = sides
    groups = {right: [], left: []}
    for k, contact in enumerate(contacts):
        side = side_of(contact.sphere_body, sides)
        if side is None:
            raise TrajoptInputError(f"ground reactions: contact '{contact.name}' is on body '{contact.sphere_body}', "
                                    f"which names no side ({'/'.join(sides)})")
        groups[side].append(k)
    q, u = ca.SX.sym("q", multibody.nq), ca.SX.sym("u", multibody.nv)
    loads = contact_loads_function(multibody, contacts)(q, u)
    sphere_forces, sphere_torques = loads[1], loads[2]
    origins = {}
    forces, torques = {}, {}
    for side, indices in groups.items():
        force, torque = ca.SX.zeros(3), ca.SX.zeros(3)
        by_body = {}
        for k in indices:
            force = force + sphere_forces[:, k]
            torque = torque + sphere_torques[:, k]
            body = contacts[k].sphere_body
            by_body[body] = by_body.get(body, ca.SX.zeros(3)) + sphere_forces[:, k]
        for body, body_force in by_body.items():
            if body not in origins:
                origins[body] = body_pose(multibody, q, body)[1]
            torque = torque + ca.cross(origins[body], body_force)
        forces[side], torques[side] = force, torque
    return ca.Function("ground_reactions", [q, u], [forces[right], forces[left], torques[right], torques[left]],
                       ["q", "u"], ["right_force", "left_force", "right_torque", "left_torque"])


def center_of_pressure(force, torque, threshold: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """(points (N, 3) on y = 0, free moments (N,)) from forces and torques about the ground origin (N, 3) each."""
    force, torque = np.atleast_2d(force), np.atleast_2d(torque)
    loaded = force[:, 1] > threshold
    vertical = np.where(loaded, force[:, 1], 1.0)
    x = np.where(loaded, torque[:, 2] / vertical, 0.0)
    z = np.where(loaded, -torque[:, 0] / vertical, 0.0)
    points = np.column_stack([x, np.zeros_like(x), z])
    free = np.where(loaded, torque[:, 1] - z * force[:, 0] + x * force[:, 2], 0.0)
    return points, free


def mirror_ground_reactions(right_force, left_force, right_torque, left_torque, shift) -> tuple[np.ndarray, ...]:
    """The mirror image of per-foot reactions (N, 3 each): feet swap, forces reflect (z changes sign), torques
    about the ground origin reflect as pseudo-vectors and move with the walking displacement ``shift`` (3,)."""
    shift = np.asarray(shift, dtype=float)
    flip = np.diag(REFLECTION)

    def image(force, torque):
        mirrored_force = force * flip
        return mirrored_force, torque * -flip + np.cross(shift, mirrored_force)

    new_right_force, new_right_torque = image(left_force, left_torque)
    new_left_force, new_left_torque = image(right_force, right_torque)
    return new_right_force, new_left_force, new_right_torque, new_left_torque
