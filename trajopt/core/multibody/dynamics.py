"""Dynamics of a Model: inverse dynamics (recursive Newton-Euler) with joint reaction loads, mass
matrix (composite-rigid-body algorithm), bias forces, forward dynamics, energies and applied loads.

Equations of motion: M(q) udot + C(q, u) = tau + J^T(q) w, with tau the generalized forces and
w the applied body wrenches. Applied wrenches are a 6 x nb matrix: column k (k =
model.body_index(name)) is [moment about body k's origin; force], both in ground axes; build it
with `point_force` and `body_torque` and add them up.
Each public function evaluates a named casadi.Function built once in SX and cached on the model.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import spatial
from trajopt.core.multibody.bodies import GROUND
from trajopt.core.multibody.joints import WeldJoint
from trajopt.core.multibody.kinematics import FUNCTION_OPTIONS, body_pose, cached_function, symbols, tree_pass


class ReactionAxes(enum.Enum):
    """The axes joint reaction loads are expressed in: ground's, each joint's child frame's or its parent frame's
    (``BodyAxes(name)`` for one body's axes)."""

    GROUND = GROUND
    CHILD = "child"
    PARENT = "parent"

    @property
    def label(self) -> str:
        return self.value


@dataclass(frozen=True)
class BodyAxes:
    """Joint reaction loads expressed in the axes of the body named ``body``."""

    body: str

    @property
    def label(self) -> str:
        return self.body


def _gravity_acceleration(model):
    # Gravity trick: accelerate ground by -g so that every body feels its weight.
    return ca.DM(np.concatenate([np.zeros(3), -model.gravity]))


@dataclass(frozen=True)
class _RigidGroups:
    """Bodies welded to their parent with only welded descendants ride on their nearest moving
    ancestor (the carrier, -1 for ground): their inertia is added to it once, at build time."""

    absorbed: tuple  # per body: folded into its carrier
    carrier: tuple  # per body: index of the carrier (itself when not absorbed)
    to_carrier: tuple  # per absorbed body: constant motion transform from carrier to body
    inertia: tuple  # per body: spatial inertia including absorbed bodies (DM 6x6)


def _rigid_groups(model, merge_welds=True):
    if not merge_welds:
        n = len(model.bodies)
        return _RigidGroups((False,) * n, tuple(range(n)), (None,) * n,
                            tuple(ca.DM(b.spatial_inertia()) for b in model.bodies))
    return cached_function(model, "rigid_groups", _build_rigid_groups)


def _build_rigid_groups(model):
    n = len(model.bodies)
    states = tree_pass(model, ca.DM(model.default_q()), subspaces=False)  # weld transforms are constant
    children = [[] for _ in range(n)]
    for k in range(n):
        if model.parent_index(k) >= 0:
            children[model.parent_index(k)].append(k)
    absorbed = [False] * n
    for k in range(n - 1, -1, -1):  # children before parents
        absorbed[k] = isinstance(model.joints[k], WeldJoint) and all(absorbed[c] for c in children[k])
    own = [ca.DM(b.spatial_inertia()) for b in model.bodies]
    inertia, carrier, to_carrier = list(own), list(range(n)), [None] * n
    for k in range(n):  # parents before children
        if not absorbed[k]:
            continue
        parent = model.parent_index(k)
        x = spatial.motion_transform_matrix(states[k].e, states[k].r)
        if parent >= 0 and absorbed[parent]:
            carrier[k], to_carrier[k] = carrier[parent], ca.mtimes(x, to_carrier[parent])
        else:
            carrier[k], to_carrier[k] = parent, x
        if carrier[k] >= 0:
            inertia[carrier[k]] = inertia[carrier[k]] + ca.mtimes(ca.mtimes(to_carrier[k].T, own[k]), to_carrier[k])
    return _RigidGroups(tuple(absorbed), tuple(carrier), tuple(to_carrier), tuple(inertia))


def _external_forces(states, wrenches, groups):
    """Applied wrenches in body axes about body origins; absorbed bodies' go to their carriers."""
    external = [ca.DM.zeros(6, 1) for _ in states]
    if isinstance(wrenches, ca.DM) and wrenches.nnz() == 0:
        return external
    for k, s in enumerate(states):
        force = ca.vertcat(ca.mtimes(s.rotation.T, wrenches[0:3, k]), ca.mtimes(s.rotation.T, wrenches[3:6, k]))
        c = groups.carrier[k]
        if not groups.absorbed[k]:
            external[k] = external[k] + force
        elif c >= 0:
            external[c] = external[c] + ca.mtimes(groups.to_carrier[k].T, force)
    return external


def _recursive_newton_euler(model, q, u, udot, wrenches, merge_welds=True):
    """Returns (tau, per-body states, transmitted joint forces f_i in body axes at body origin;
    None for bodies folded into their carrier when merge_welds)."""
    states = tree_pass(model, q, u, udot, base_acceleration=_gravity_acceleration(model))
    groups = _rigid_groups(model, merge_welds)
    external = _external_forces(states, wrenches, groups)
    kept = [k for k in range(len(states)) if not groups.absorbed[k]]
    forces = [None] * len(states)
    for k in kept:
        s, inertia = states[k], groups.inertia[k]
        momentum = ca.mtimes(inertia, s.velocity)
        forces[k] = ca.mtimes(inertia, s.acceleration) + spatial.cross_force(s.velocity, momentum) - external[k]
    taus = [ca.DM.zeros(0, 1)] * len(states)
    for k in reversed(kept):
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
        if option == ReactionAxes.GROUND:
            rotations.append(ca.DM.eye(3))
        elif option == ReactionAxes.CHILD:
            rotations.append(ca.mtimes(states[k].rotation, ca.DM(joint.child.rotation)).T)
        elif option == ReactionAxes.PARENT:
            p = model.body_index(joint.parent.body)
            r_parent = states[p].rotation if p >= 0 else ca.DM.eye(3)
            rotations.append(ca.mtimes(r_parent, ca.DM(joint.parent.rotation)).T)
        else:
            b = model.body_index(option.body)
            rotations.append(states[b].rotation.T if b >= 0 else ca.DM.eye(3))
    return rotations


def _inputs(model, names, with_wrenches):
    """SX inputs for a Function: symbols for `names`, plus the wrench matrix when requested
    (otherwise wrenches are a constant zero, which keeps the graph small)."""
    q, u, udot = symbols(model)
    table = {"q": q, "u": u, "udot": udot, "tau": ca.SX.sym("tau", model.nv)}
    symbols_in = [table[n] for n in names]
    wrenches = _wrench_symbol(model) if with_wrenches else ca.DM.zeros(6, len(model.bodies))
    if with_wrenches:
        return symbols_in + [wrenches], list(names) + ["wrenches"], wrenches
    return symbols_in, list(names), wrenches


def _name(base, with_wrenches):
    return f"{base}_with_wrenches" if with_wrenches else base


def _build_inverse_dynamics(model, with_wrenches):
    inputs, names, wrenches = _inputs(model, ("q", "u", "udot"), with_wrenches)
    tau, _, _ = _recursive_newton_euler(model, *inputs[:3], wrenches)
    return ca.Function(_name("inverse_dynamics", with_wrenches), inputs, [tau], names, ["tau"], FUNCTION_OPTIONS)


def _build_joint_reaction_loads(model, option):
    inputs, names, wrenches = _inputs(model, ("q", "u", "udot"), True)
    _, states, forces = _recursive_newton_euler(model, *inputs[:3], wrenches, merge_welds=False)
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
        "joint_reaction_loads" if option == ReactionAxes.GROUND else f"joint_reaction_loads_in_{_safe(option.label)}",
        inputs,
        [ca.horzcat(*reaction_forces) if reaction_forces else empty,
         ca.horzcat(*reaction_moments) if reaction_moments else empty],
        names,
        ["forces", "moments"],
        FUNCTION_OPTIONS,
    )


def _safe(name):
    return "".join(ch if ch.isalnum() else "_" for ch in name)


def zero_wrenches(model):
    """No applied body loads: a 6 x nb zero matrix."""
    return ca.DM.zeros(6, len(model.bodies))


def _call(model, base, build, args, wrenches):
    """Evaluate the cached Function `base`, the variant with a wrench input when wrenches are given."""
    with_wrenches = wrenches is not None
    f = cached_function(model, (base, with_wrenches), lambda m: build(m, with_wrenches))
    return f(*args, wrenches) if with_wrenches else f(*args)


def inverse_dynamics(model, q, u, udot, wrenches=None):
    """Generalized forces tau with M udot + C = tau + J^T w (recursive Newton-Euler algorithm)."""
    return _call(model, "inverse_dynamics", _build_inverse_dynamics, (q, u, udot), wrenches)


def joint_reaction_loads(model, q, u, udot, wrenches=None,
                         expressed_in: ReactionAxes | BodyAxes = ReactionAxes.GROUND):
    """(forces 3 x nj, moments 3 x nj): for joint k (model.joints order), the load the parent
    applies to the child body through the joint, moment about the joint's child-frame origin
    (OpenSim's JointReaction convention, on the child). The load includes the generalized force
    the joint transmits along its free directions. `expressed_in`: a ``ReactionAxes`` (ground's, the default;
    each joint's child or parent frame) or ``BodyAxes(name)``."""
    option = expressed_in
    if type(option) is BodyAxes:
        model.body_index(option.body)  # raises for an unknown body
    elif type(option) is not ReactionAxes:
        raise TrajoptInputError(f"expressed_in must be a ReactionAxes or BodyAxes, got {option!r}")
    f = cached_function(model, ("joint_reaction_loads", option), lambda m: _build_joint_reaction_loads(m, option))
    return f(q, u, udot, zero_wrenches(model) if wrenches is None else wrenches)


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
    return ca.Function("mass_matrix", [q], [mass], ["q"], ["M"], FUNCTION_OPTIONS)


def mass_matrix(model, q):
    """Joint-space inertia matrix M(q), nv x nv (composite-rigid-body algorithm)."""
    return cached_function(model, "mass_matrix", _build_mass_matrix)(q)


def _build_bias_forces(model, with_wrenches):
    inputs, names, wrenches = _inputs(model, ("q", "u"), with_wrenches)
    tau, _, _ = _recursive_newton_euler(model, inputs[0], inputs[1], ca.DM.zeros(model.nv), wrenches)
    return ca.Function(_name("bias_forces", with_wrenches), inputs, [tau], names, ["C"], FUNCTION_OPTIONS)


def bias_forces(model, q, u, wrenches=None):
    """C(q, u) - J^T w: Coriolis, centrifugal and gravity forces minus applied wrenches, so that
    M udot + bias_forces = tau."""
    return _call(model, "bias_forces", _build_bias_forces, (q, u), wrenches)


def _articulated_body_algorithm(model, q, u, tau, wrenches):
    """udot by Featherstone's articulated-body algorithm (O(n), no matrix solve over the tree)."""
    states = tree_pass(model, q, u)
    n = len(states)
    groups = _rigid_groups(model)
    kept = [k for k in range(n) if not groups.absorbed[k]]
    x_parent = [spatial.motion_transform_matrix(s.e, s.r) if not groups.absorbed[k] else None
                for k, s in enumerate(states)]
    external = _external_forces(states, wrenches, groups)
    velocity_product = [s.velocity_product for s in states]
    inertia_a, bias_a = list(groups.inertia), [None] * n
    for k in kept:
        s = states[k]
        bias_a[k] = spatial.cross_force(s.velocity, ca.mtimes(inertia_a[k], s.velocity)) - external[k]
    u_cache, d_inv_cache, big_u_cache = [None] * n, [None] * n, [None] * n
    for k in reversed(kept):
        joint, s = model.joints[k], states[k]
        parent = model.parent_index(k)
        if joint.nv:
            big_u = ca.mtimes(inertia_a[k], s.subspace)
            d_inv = _inverse(ca.mtimes(s.subspace.T, big_u))
            u_k = tau[model.v_slice(joint.name)] - ca.mtimes(s.subspace.T, bias_a[k])
            u_cache[k], d_inv_cache[k], big_u_cache[k] = u_k, d_inv, big_u
        if parent < 0:
            continue
        if joint.nv:
            ia = inertia_a[k] - ca.mtimes(ca.mtimes(big_u, d_inv), big_u.T)
            pa = bias_a[k] + ca.mtimes(ia, velocity_product[k]) + ca.mtimes(big_u, ca.mtimes(d_inv, u_k))
        else:
            ia = inertia_a[k]
            pa = bias_a[k] + ca.mtimes(ia, velocity_product[k])
        inertia_a[parent] = inertia_a[parent] + ca.mtimes(ca.mtimes(x_parent[k].T, ia), x_parent[k])
        bias_a[parent] = bias_a[parent] + ca.mtimes(x_parent[k].T, pa)
    accelerations, udot = [None] * n, []
    for k in kept:
        joint, s = model.joints[k], states[k]
        parent = model.parent_index(k)
        a_parent = accelerations[parent] if parent >= 0 else _gravity_acceleration(model)
        a = ca.mtimes(x_parent[k], a_parent) + velocity_product[k]
        if joint.nv:
            udot_k = ca.mtimes(d_inv_cache[k], u_cache[k] - ca.mtimes(big_u_cache[k].T, a))
            a = a + ca.mtimes(s.subspace, udot_k)
            udot.append(udot_k)
        accelerations[k] = a
    return ca.vertcat(*udot) if udot else ca.SX.zeros(0, 1)


def _inverse(matrix):
    if matrix.size1() == 1:
        return 1 / matrix
    return ca.inv(matrix)


def _build_forward_dynamics(model, with_wrenches, respect_locks=False):
    inputs, names, wrenches = _inputs(model, ("q", "u", "tau"), with_wrenches)
    q, u, tau = inputs[:3]
    free = model.unlocked_speed_indices() if respect_locks else list(range(model.nv))
    if len(free) == model.nv:
        udot = _articulated_body_algorithm(model, q, u, tau, wrenches)
    else:
        # Locked coordinates: drop their rows and columns from M udot = tau - C.
        mass = mass_matrix(model, q)
        bias = bias_forces(model, q, u, wrenches if with_wrenches else None)
        udot = ca.SX.zeros(model.nv, 1)
        if free:
            udot[free] = ca.solve(mass[free, free], tau[free] - bias[free])
    name = _name("forward_dynamics_locked" if respect_locks else "forward_dynamics", with_wrenches)
    return ca.Function(name, inputs, [udot], names, ["udot"], FUNCTION_OPTIONS)


def forward_dynamics(model, q, u, tau, wrenches=None, respect_locks=False):
    """udot solving M udot + C = tau + J^T w (articulated-body algorithm). With respect_locks,
    locked coordinates do not accelerate (their rows of M udot + C = tau are dropped)."""
    locks = bool(respect_locks)
    base = "forward_dynamics_locked" if locks else "forward_dynamics"
    return _call(model, base, lambda m, w: _build_forward_dynamics(m, w, locks), (q, u, tau), wrenches)


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
        "kinetic": ca.Function("kinetic_energy", [q, u], [kinetic], ["q", "u"], ["kinetic_energy"], FUNCTION_OPTIONS),
        "potential": ca.Function("potential_energy", [q], [potential], ["q"], ["potential_energy"], FUNCTION_OPTIONS),
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
