"""Kinematics of a Model: body poses, point positions/velocities/accelerations, frame Jacobians,
qdot = N(q) u, and the configuration-space `integrate` / `difference`.

Each public function evaluates a named casadi.Function built once in SX and cached on the model;
inputs may be SX, MX, DM or numpy arrays.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import spatial
from trajopt.core.multibody.bodies import GROUND


# Common-subexpression elimination when the Functions are built (casadi >= 3.6).
FUNCTION_OPTIONS = {"cse": True}


@dataclass
class BodyState:
    """Per-body results of the forward tree pass (SX). Spatial vectors in body axes at the body origin."""

    rotation: object  # body axes -> ground axes
    position: object  # body origin in ground
    e: object  # parent axes -> body axes
    r: object  # body origin relative to parent origin, parent axes
    subspace: object  # motion subspace S (6 x nv_joint) in body axes
    velocity: object = None
    velocity_product: object = None  # acceleration at zero udot and parent acceleration: v x Su + (dS/dt) u
    acceleration: object = None


def tree_pass(model, q, u=None, udot=None, base_acceleration=None, subspaces: bool = True):
    """Forward pass over the tree (shared by all algorithms): poses, and velocities/accelerations
    when u (and udot) are given. `base_acceleration` (6) is ground's spatial acceleration (the
    gravity trick of recursive Newton-Euler uses [0, -g]). `subspaces=False` (poses only, without u) leaves
    the motion subspaces out (None), whose joint-function derivatives cost most of a pose pass's build."""
    states = []
    for k, joint in enumerate(model.joints):
        qj = q[model.q_slice(joint.name)]
        r_fm, p_fm = joint.transform(qj)
        parent = model.body_index(joint.parent.body)
        r_pf, p_pf = ca.DM(joint.parent.rotation), ca.DM(joint.parent.translation)
        r_bm, p_bm = ca.DM(joint.child.rotation), ca.DM(joint.child.translation)
        r_pb = ca.mtimes(ca.mtimes(r_pf, r_fm), r_bm.T)
        p_pb = p_pf + ca.mtimes(r_pf, p_fm - ca.mtimes(r_fm, ca.mtimes(r_bm.T, p_bm)))
        if parent < 0:
            rotation, position = r_pb, p_pb
        else:
            rotation = ca.mtimes(states[parent].rotation, r_pb)
            position = states[parent].position + ca.mtimes(states[parent].rotation, p_pb)
        # Motion subspace moved from the joint's child frame M to the body frame B.
        p_mb = -ca.mtimes(r_bm.T, p_bm)
        s_m, subspace = None, None
        if subspaces or u is not None:
            s_m = joint.motion_subspace(qj)
            subspace = spatial.transform_motion(r_bm, p_mb, s_m) if joint.nv else ca.DM.zeros(6, 0)
        state = BodyState(rotation, position, r_pb.T, p_pb, subspace)
        if u is not None:
            uj = u[model.v_slice(joint.name)]
            v_parent = states[parent].velocity if parent >= 0 else ca.DM.zeros(6, 1)
            v_joint = ca.mtimes(subspace, uj) if joint.nv else ca.DM.zeros(6, 1)
            state.velocity = spatial.transform_motion(state.e, p_pb, v_parent) + v_joint
            state.velocity_product = spatial.cross_motion(state.velocity, v_joint)
            if joint.nv and not isinstance(s_m, ca.DM):  # S depends on q: add (dS/dt) u
                qdot = ca.mtimes(joint.coordinate_rates_matrix(qj), uj)
                sdot_u = ca.jtimes(ca.mtimes(s_m, uj), qj, qdot)
                state.velocity_product = state.velocity_product + spatial.transform_motion(r_bm, p_mb, sdot_u)
            if udot is not None:
                if parent >= 0:
                    a_parent = states[parent].acceleration
                else:
                    a_parent = ca.DM.zeros(6, 1) if base_acceleration is None else base_acceleration
                a = spatial.transform_motion(state.e, p_pb, a_parent) + state.velocity_product
                if joint.nv:
                    a = a + ca.mtimes(subspace, udot[model.v_slice(joint.name)])
                state.acceleration = a
        states.append(state)
    return states


def cached_function(model, key, build):
    """The casadi Function `key` of `model`, built by `build(model)` on first use."""
    model.finalize()
    if key not in model._functions:
        model._functions[key] = build(model)
    return model._functions[key]


def symbols(model):
    """Fresh SX symbols q (nq), u (nv), udot (nv)."""
    return ca.SX.sym("q", model.nq), ca.SX.sym("u", model.nv), ca.SX.sym("udot", model.nv)


def _build_body_poses(model):
    q, _, _ = symbols(model)
    states = tree_pass(model, q, subspaces=False)
    rotations = ca.horzcat(*[s.rotation for s in states]) if states else ca.SX.zeros(3, 0)
    positions = ca.horzcat(*[s.position for s in states]) if states else ca.SX.zeros(3, 0)
    return ca.Function("body_poses", [q], [rotations, positions], ["q"], ["rotations", "positions"], FUNCTION_OPTIONS)


def body_poses(model, q):
    """(rotations 3 x 3nb, positions 3 x nb): body k's axes in ground are rotations[:, 3k:3k+3]
    and its origin is positions[:, k] (k = model.body_index(name))."""
    return cached_function(model, "body_poses", _build_body_poses)(q)


def body_pose(model, q, body):
    """(rotation 3x3, origin 3) of one body in ground."""
    k = model.body_index(body if isinstance(body, str) else body.name)
    if k < 0:
        return ca.DM.eye(3), ca.DM.zeros(3, 1)
    rotations, positions = body_poses(model, q)
    return rotations[:, 3 * k : 3 * k + 3], positions[:, k]


def _build_point_kinematics(model, k, quantity):
    """One Function per (body, quantity) so that a position needs no velocity pass."""
    q, u, udot = symbols(model)
    point = ca.SX.sym("point", 3)
    with_speeds = quantity != "position"
    states = tree_pass(model, q, u if with_speeds else None, udot if quantity == "acceleration" else None,
                       subspaces=with_speeds)
    s = states[k]
    if quantity == "position":
        inputs, output = [q, point], s.position + ca.mtimes(s.rotation, point)
    else:
        w, v_origin = s.velocity[0:3], s.velocity[3:6]
        v_point = v_origin + ca.cross(w, point)
        if quantity == "velocity":
            inputs, output = [q, u, point], ca.mtimes(s.rotation, v_point)
        elif quantity == "jacobian":
            twist = ca.vertcat(ca.mtimes(s.rotation, w), ca.mtimes(s.rotation, v_point))
            inputs, output = [q, point], ca.jacobian(twist, u)  # linear in u: no u left
        else:
            alpha, a_spatial = s.acceleration[0:3], s.acceleration[3:6]
            # Classical acceleration of a body-fixed point from the spatial acceleration.
            a_point = a_spatial + ca.cross(alpha, point) + ca.cross(w, v_point)
            inputs, output = [q, u, udot, point], ca.mtimes(s.rotation, a_point)
    names = {id(q): "q", id(u): "u", id(udot): "udot", id(point): "point"}
    return ca.Function(
        f"point_{quantity}_{k}", inputs, [output], [names[id(x)] for x in inputs], [quantity], FUNCTION_OPTIONS
    )


def _point_function(model, body, quantity):
    name = body if isinstance(body, str) else body.name
    if name == GROUND:
        raise TrajoptInputError("point kinematics: 'ground' does not move; give a body of the model")
    k = model.body_index(name)
    return cached_function(model, (f"point_{quantity}", k), lambda m: _build_point_kinematics(m, k, quantity))


def point_position(model, q, body, point=(0.0, 0.0, 0.0)):
    """Position in ground of `point` (body axes) fixed on `body`."""
    return _point_function(model, body, "position")(q, point)


def point_velocity(model, q, u, body, point=(0.0, 0.0, 0.0)):
    """Velocity in ground axes of a point fixed on `body`."""
    return _point_function(model, body, "velocity")(q, u, point)


def point_acceleration(model, q, u, udot, body, point=(0.0, 0.0, 0.0)):
    """Acceleration in ground axes of a point fixed on `body` (gravity not included)."""
    return _point_function(model, body, "acceleration")(q, u, udot, point)


def frame_jacobian(model, q, body, point=(0.0, 0.0, 0.0)):
    """6 x nv Jacobian: [angular velocity of `body`; velocity of `point`] in ground axes = J u."""
    return _point_function(model, body, "jacobian")(q, point)


def _build_configuration_maps(model):
    q, u, _ = symbols(model)
    dt = ca.SX.sym("dt")
    q1 = ca.SX.sym("q1", model.nq)
    blocks_n, rates, stepped, differences = [], [], [], []
    for j in model.joints:
        qj, uj, q1j = q[model.q_slice(j.name)], u[model.v_slice(j.name)], q1[model.q_slice(j.name)]
        n = j.coordinate_rates_matrix(qj)
        blocks_n.append(n)
        rates.append(ca.mtimes(n, uj))
        stepped.append(j.integrate(qj, uj * dt))
        differences.append(j.difference(qj, q1j))
    n_matrix = ca.diagcat(*blocks_n) if blocks_n else ca.SX.zeros(0, 0)
    qdot = ca.vertcat(*rates) if rates else ca.SX.zeros(0, 1)
    return {
        "coordinate_rates": ca.Function(
            "coordinate_rates", [q, u], [qdot, n_matrix], ["q", "u"], ["qdot", "N"], FUNCTION_OPTIONS
        ),
        "integrate": ca.Function(
            "integrate", [q, u, dt], [ca.vertcat(*stepped) if stepped else q], ["q", "u", "dt"], ["q_next"],
            FUNCTION_OPTIONS
        ),
        "difference": ca.Function(
            "difference", [q, q1], [ca.vertcat(*differences) if differences else u], ["q0", "q1"], ["u"],
            FUNCTION_OPTIONS
        ),
    }


def _configuration_function(model, name):
    return cached_function(model, "configuration_maps", _build_configuration_maps)[name]


def coordinate_rates(model, q, u):
    """qdot = N(q) u (quaternion rates from angular velocities; identity elsewhere)."""
    return _configuration_function(model, "coordinate_rates")(q, u)[0]


def coordinate_rates_matrix(model, q):
    """N(q), nq x nv, block diagonal over joints."""
    return _configuration_function(model, "coordinate_rates")(q, ca.DM.zeros(model.nv))[1]


def integrate(model, q, u, dt=1.0):
    """Configuration after moving from q with constant speeds u for time dt (quaternions stay unit:
    q_next = q * exp(omega dt) for ball and free joints)."""
    return _configuration_function(model, "integrate")(q, u, dt)


def difference(model, q0, q1):
    """Speeds u with integrate(model, q0, u, 1) = q1 (the inverse of `integrate`)."""
    return _configuration_function(model, "difference")(q0, q1)
