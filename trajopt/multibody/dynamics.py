"""Dynamics of a Model: inverse dynamics (recursive Newton-Euler) with joint reaction loads, mass
matrix (composite-rigid-body algorithm), bias forces, forward dynamics, energies and applied loads.

Equations of motion: M(q) udot + C(q, u) = tau + J^T(q) w, with tau the generalized forces and
w the applied body wrenches. Applied wrenches are a 6 x nb matrix: column k (k =
model.body_index(name)) is [moment about body k's origin; force], both in ground axes; build it
with `point_force` and `body_torque` and add them up.
Each public function evaluates a named casadi.Function built once in SX and cached on the model.
"""

from __future__ import annotations

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.multibody import spatial
from trajopt.multibody.bodies import GROUND
from trajopt.multibody.kinematics import body_pose, cached_function, symbols, tree_pass


def _gravity_acceleration(model):
    # Gravity trick: accelerate ground by -g so that every body feels its weight.
    return ca.DM(np.concatenate([np.zeros(3), -model.gravity]))


def _recursive_newton_euler(model, q, u, udot, wrenches):
    """Returns (tau, per-body states, transmitted joint forces f_i in body axes at body origin)."""
    states = tree_pass(model, q, u, udot, base_acceleration=_gravity_acceleration(model))
    forces = []
    for k, (body, s) in enumerate(zip(model.bodies, states)):
        inertia = ca.DM(body.spatial_inertia())
        momentum = ca.mtimes(inertia, s.velocity)
        external = ca.vertcat(ca.mtimes(s.rotation.T, wrenches[0:3, k]), ca.mtimes(s.rotation.T, wrenches[3:6, k]))
        forces.append(ca.mtimes(inertia, s.acceleration) + spatial.cross_force(s.velocity, momentum) - external)
    taus = [None] * len(states)
    for k in range(len(states) - 1, -1, -1):
        s = states[k]
        taus[k] = ca.mtimes(s.subspace.T, forces[k])
        parent = model.parent_index(k)
        if parent >= 0:
            forces[parent] = forces[parent] + spatial.transform_force_back(s.e, s.r, forces[k])
    tau = ca.vertcat(*taus) if taus else ca.SX.zeros(0, 1)
    return tau, states, forces


def _wrench_symbol(model):
    return ca.SX.sym("wrenches", 6, len(model.bodies))


def _reaction_axes(model, option, states):
    """Rotation from ground axes into the axes reactions are expressed in, per joint."""
    rotations = []
    for k, joint in enumerate(model.joints):
        if option == GROUND:
            rotations.append(ca.DM.eye(3))
        elif option == "child":
            rotations.append(ca.mtimes(states[k].rotation, ca.DM(joint.child.rotation)).T)
        elif option == "parent":
            p = model.body_index(joint.parent.body)
            r_parent = states[p].rotation if p >= 0 else ca.DM.eye(3)
            rotations.append(ca.mtimes(r_parent, ca.DM(joint.parent.rotation)).T)
        else:
            b = model.body_index(option)
            rotations.append(states[b].rotation.T if b >= 0 else ca.DM.eye(3))
    return rotations


def _build_inverse_dynamics(model, option):
    q, u, udot = symbols(model)
    wrenches = _wrench_symbol(model)
    tau, states, forces = _recursive_newton_euler(model, q, u, udot, wrenches)
    axes = _reaction_axes(model, option, states)
    reaction_forces, reaction_moments = [], []
    for k, joint in enumerate(model.joints):
        s = states[k]
        p_bm = ca.DM(joint.child.translation)
        moment_body, force_body = forces[k][0:3], forces[k][3:6]
        # Shift the moment from the body origin to the joint's child-frame origin.
        moment_at_joint = moment_body - ca.cross(p_bm, force_body)
        reaction_forces.append(ca.mtimes(axes[k], ca.mtimes(s.rotation, force_body)))
        reaction_moments.append(ca.mtimes(axes[k], ca.mtimes(s.rotation, moment_at_joint)))
    empty = ca.SX.zeros(3, 0)
    return ca.Function(
        "inverse_dynamics" if option == GROUND else f"inverse_dynamics_in_{_safe(option)}",
        [q, u, udot, wrenches],
        [tau, ca.horzcat(*reaction_forces) if reaction_forces else empty,
         ca.horzcat(*reaction_moments) if reaction_moments else empty],
        ["q", "u", "udot", "wrenches"],
        ["tau", "reaction_forces", "reaction_moments"],
    )


def _safe(name):
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def _inverse_dynamics_function(model, expressed_in=GROUND):
    option = expressed_in if isinstance(expressed_in, str) else expressed_in.name
    if option not in (GROUND, "child", "parent"):
        model.body_index(option)  # raises for an unknown body
    return cached_function(model, ("inverse_dynamics", option), lambda m: _build_inverse_dynamics(m, option))


def zero_wrenches(model):
    """No applied body loads: a 6 x nb zero matrix."""
    return ca.DM.zeros(6, len(model.bodies))


def _wrenches_or_zero(model, wrenches):
    return zero_wrenches(model) if wrenches is None else wrenches


def inverse_dynamics(model, q, u, udot, wrenches=None):
    """Generalized forces tau with M udot + C = tau + J^T w (recursive Newton-Euler algorithm)."""
    return _inverse_dynamics_function(model)(q, u, udot, _wrenches_or_zero(model, wrenches))[0]


def joint_reaction_loads(model, q, u, udot, wrenches=None, expressed_in=GROUND):
    """(forces 3 x nj, moments 3 x nj): for joint k (model.joints order), the load the parent
    applies to the child body through the joint, moment about the joint's child-frame origin
    (OpenSim's JointReaction convention, on the child). The load includes the generalized force
    the joint transmits along its free directions. `expressed_in`: 'ground' (default), 'child'
    (each joint's child frame), 'parent' (each joint's parent frame) or a body name."""
    result = _inverse_dynamics_function(model, expressed_in)(q, u, udot, _wrenches_or_zero(model, wrenches))
    return result[1], result[2]


def _build_mass_matrix(model):
    q, _, _ = symbols(model)
    states = tree_pass(model, q)
    n = len(states)
    x_parent = [spatial.motion_transform_matrix(s.e, s.r) for s in states]
    composite = [ca.DM(b.spatial_inertia()) for b in model.bodies]
    for k in range(n - 1, -1, -1):  # composite-rigid-body inertias, leaves first
        parent = model.parent_index(k)
        if parent >= 0:
            composite[parent] = composite[parent] + ca.mtimes(ca.mtimes(x_parent[k].T, composite[k]), x_parent[k])
    mass = ca.SX.zeros(model.nv, model.nv)
    for k in range(n):
        joint = model.joints[k]
        if joint.nv == 0:
            continue
        vk = model.v_slice(joint.name)
        force = ca.mtimes(composite[k], states[k].subspace)
        mass[vk, vk] = ca.mtimes(states[k].subspace.T, force)
        j = k
        while model.parent_index(j) >= 0:
            force = ca.mtimes(x_parent[j].T, force)
            j = model.parent_index(j)
            if model.joints[j].nv == 0:
                continue
            vj = model.v_slice(model.joints[j].name)
            block = ca.mtimes(states[j].subspace.T, force)
            mass[vj, vk] = block
            mass[vk, vj] = block.T
    return ca.Function("mass_matrix", [q], [mass], ["q"], ["M"])


def mass_matrix(model, q):
    """Joint-space inertia matrix M(q), nv x nv (composite-rigid-body algorithm)."""
    return cached_function(model, "mass_matrix", _build_mass_matrix)(q)


def _build_bias_forces(model):
    q, u, _ = symbols(model)
    wrenches = _wrench_symbol(model)
    tau, _, _ = _recursive_newton_euler(model, q, u, ca.DM.zeros(model.nv), wrenches)
    return ca.Function("bias_forces", [q, u, wrenches], [tau], ["q", "u", "wrenches"], ["C"])


def bias_forces(model, q, u, wrenches=None):
    """C(q, u) - J^T w: Coriolis, centrifugal and gravity forces minus applied wrenches, so that
    M udot + bias_forces = tau."""
    return cached_function(model, "bias_forces", _build_bias_forces)(q, u, _wrenches_or_zero(model, wrenches))


def _build_forward_dynamics(model, respect_locks):
    q, u, _ = symbols(model)
    tau = ca.SX.sym("tau", model.nv)
    wrenches = _wrench_symbol(model)
    mass = mass_matrix(model, q)
    bias = bias_forces(model, q, u, wrenches)
    free = model.unlocked_speed_indices() if respect_locks else list(range(model.nv))
    udot = ca.SX.zeros(model.nv, 1)
    if free:
        mass_free = mass[free, free]
        rhs = tau[free] - bias[free]
        # Cholesky-free symbolic solve; M is small (nv <= ~40) and SPD.
        udot[free] = ca.solve(mass_free, rhs)
    name = "forward_dynamics_locked" if respect_locks else "forward_dynamics"
    return ca.Function(name, [q, u, tau, wrenches], [udot], ["q", "u", "tau", "wrenches"], ["udot"])


def forward_dynamics(model, q, u, tau, wrenches=None, respect_locks=False):
    """udot solving M udot + C = tau + J^T w. With respect_locks, locked coordinates do not
    accelerate (their rows are dropped)."""
    key = ("forward_dynamics", bool(respect_locks))
    f = cached_function(model, key, lambda m: _build_forward_dynamics(m, bool(respect_locks)))
    return f(q, u, tau, _wrenches_or_zero(model, wrenches))


def _build_energies(model):
    q, u, _ = symbols(model)
    states = tree_pass(model, q, u)
    kinetic = 0
    potential = 0
    g = ca.DM(model.gravity)
    for body, s in zip(model.bodies, states):
        inertia = ca.DM(body.spatial_inertia())
        kinetic = kinetic + 0.5 * ca.dot(s.velocity, ca.mtimes(inertia, s.velocity))
        com = s.position + ca.mtimes(s.rotation, ca.DM(body.center_of_mass))
        potential = potential - body.mass * ca.dot(g, com)
    return {
        "kinetic": ca.Function("kinetic_energy", [q, u], [kinetic], ["q", "u"], ["kinetic_energy"]),
        "potential": ca.Function("potential_energy", [q], [potential], ["q"], ["potential_energy"]),
    }


def kinetic_energy(model, q, u):
    """Sum over bodies of 1/2 v^T I v (J)."""
    return cached_function(model, "energies", _build_energies)["kinetic"](q, u)


def potential_energy(model, q):
    """Gravitational potential energy -sum m g . p_com (J), zero at the ground origin."""
    return cached_function(model, "energies", _build_energies)["potential"](q)


def point_force(model, q, body, point, force):
    """Wrenches (6 x nb) of a force (ground axes) applied at `point` (body axes) fixed on `body`."""
    name = body if isinstance(body, str) else body.name
    if name == GROUND:
        raise TrajoptInputError("point_force: a force on 'ground' does not move the model; give a body")
    k = model.body_index(name)
    rotation, _ = body_pose(model, q, name)
    arm = ca.mtimes(rotation, _column(point))
    wrench = ca.vertcat(ca.cross(arm, _column(force)), _column(force))
    return _single_column(model, k, wrench)


def body_torque(model, body, torque):
    """Wrenches (6 x nb) of a pure torque (ground axes) on `body`."""
    name = body if isinstance(body, str) else body.name
    k = model.body_index(name)
    if k < 0:
        raise TrajoptInputError("body_torque: a torque on 'ground' does not move the model; give a body")
    return _single_column(model, k, ca.vertcat(_column(torque), ca.DM.zeros(3, 1)))


def _column(v):
    return v if isinstance(v, (ca.SX, ca.MX, ca.DM)) else ca.DM(np.asarray(v, dtype=float).reshape(3))


def _single_column(model, k, wrench):
    nb = len(model.bodies)
    columns = [wrench if c == k else ca.DM.zeros(6, 1) for c in range(nb)]
    return ca.horzcat(*columns)
