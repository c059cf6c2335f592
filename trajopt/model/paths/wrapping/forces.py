"""The loads a wrapped path's tension applies, and its moment arms by the generalized-force method.

OpenSim applies a unit tension along each straight part of the current path (between consecutive
points on different bodies), pulling each end toward the other, with the tangent points fixed on
their wrap object's body; the generalized forces of these point forces are the moment arms
(GeometryPath::produceForces, MomentArmSolver). The directions use the ground locations OpenSim
caches for the tangent points (see `trajopt.model.paths.wrapping.path`) and the forces act at the tangent
points' current locations.

Written as E(q) = sum_k d_k . (x_{k+1}(q) - x_k(q)) with the directions d_k and the tangent points'
wrap-frame coordinates held constant, the moment arms are -dE/dq at those constants. Where the path is
length-minimal (each straight part tangent to the surface, the wrap a geodesic) this equals -dl/dq;
OpenSim's cylinder and ellipsoid paths are not exactly so, and the two differ.

`unit_tension_loads` gives the same point forces as body wrenches (what a joint transmits depends on
where along the bodies the muscle pulls, as OpenSim's JointReaction sees it): Σ_b J_bᵀ w_b plus the
moving points' generalized forces equals `generalized_force_moment_arms`.
"""

from __future__ import annotations

import casadi as ca

from trajopt.core.multibody.bodies import GROUND
from trajopt.core.multibody.kinematics import body_pose, coordinate_rates_matrix
from trajopt.model.paths.wrapping.path import _index, _local, _seen, _tag
from trajopt.model.paths.wrapping.vectors import normalize_or_zero


def _body_number(model, body):
    return -1 if body == GROUND else model.body_index(body)


def _slot_locations(path, q, tags, indices, locals_):
    """Ground location and body number (-1: ground) of each slot of `path`'s wrapped path at q, given each slot's
    tag, path point index and tangent point in its wrap frame (numbers, slot values or placeholders)."""
    # here: trajopt.model.paths.geometric imports this
    from trajopt.model.paths.geometric import point_position_in_ground

    model = path.model
    positions = [point_position_in_ground(model, q, p) for p in path.points]
    point_bodies = [_body_number(model, p.body) for p in path.points]
    single = len(path.wraps) == 1
    placed = [w.surface.placed(model, q, single, 0, 0) for w in path.wraps]
    wrap_bodies = [_body_number(model, w.surface.body) for w in path.wraps]
    where, bodies = [], []
    for tag, index, local in zip(tags, indices, locals_):
        x, body = ca.SX.zeros(3), 0
        for i, (p, b) in enumerate(zip(positions, point_bodies)):
            is_i = ca.logic_and(tag == 0, index == i)
            x, body = x + is_i * p, body + is_i * b
        for w, (wrap, b) in enumerate(zip(placed, wrap_bodies)):
            is_w = tag == w + 1
            x, body = x + is_w * wrap.to_ground(local), body + is_w * b
        where.append(x)
        bodies.append(body)
    return where, bodies


def generalized_force_moment_arms(path, q):
    """OpenSim's computeMomentArm for every generalized speed (nv), of a wrapped `GeometricPath`."""
    return length_and_generalized_force_moment_arms(path, q)[1]


def length_and_generalized_force_moment_arms(path, q):
    """(length, OpenSim's computeMomentArm for every generalized speed) of a wrapped `GeometricPath`, both from one
    wrapped path (the wrap computations appear once in the expression)."""
    model = path.model
    slots = path.wrapped_path(q)
    size = len(slots.slots)
    # Everything the path procedure decides is a placeholder while differentiating: the derivative then
    # involves only the bodies' poses, not the wrap computations.
    locals_ = [ca.SX.sym(f"tangent_{k}", 3) for k in range(size)]
    directions = [ca.SX.sym(f"direction_{k}", 3) for k in range(size - 1)]
    tags = [ca.SX.sym(f"tag_{k}") for k in range(size)]
    indices = [ca.SX.sym(f"index_{k}") for k in range(size)]
    count = ca.SX.sym("count")
    where, bodies = _slot_locations(path, q, tags, indices, locals_)
    energy = 0
    actual_directions = []
    for k in range(size - 1):
        on = ca.logic_and(k + 1 < count, bodies[k] != bodies[k + 1])
        energy = energy + on * ca.dot(directions[k], where[k + 1] - where[k])
        actual_directions.append(normalize_or_zero(_seen(slots.slots[k + 1]) - _seen(slots.slots[k]))[0])
    arms = ca.mtimes(_rates_matrix(model, q).T, -ca.jacobian(energy, q).T)
    placeholders = locals_ + directions + tags + indices + [count]
    values = ([_local(s) for s in slots.slots] + actual_directions + [_tag(s) for s in slots.slots]
              + [_index(s) for s in slots.slots] + [slots.count])
    return slots.length(), ca.substitute([arms], placeholders, values)[0]


def unit_tension_loads(path, q):
    """(wrenches 6 x nb, generalized forces nv) a tension of 1 N along a wrapped `GeometricPath` applies:
    along each straight part between points on different bodies, pulling each end toward the other, at
    the path points and at the tangent points (fixed on the wrap object's body). Wrenches as
    `trajopt.core.multibody.dynamics` (moment about the body origin, then force; ground axes); the generalized
    forces are those of moving path points sliding over their bodies."""
    from trajopt.model.paths.geometric import MovingPathPoint  # here: trajopt.model.paths.geometric imports this module

    model = path.model
    slots = path.wrapped_path(q)
    size = len(slots.slots)
    where, bodies = _slot_locations(path, q, [_tag(s) for s in slots.slots], [_index(s) for s in slots.slots],
                                    [_local(s) for s in slots.slots])
    forces = [ca.SX.zeros(3) for _ in range(size)]
    for k in range(size - 1):
        on = ca.logic_and(k + 1 < slots.count, bodies[k] != bodies[k + 1])
        direction = on * normalize_or_zero(_seen(slots.slots[k + 1]) - _seen(slots.slots[k]))[0]
        forces[k] = forces[k] + direction
        forces[k + 1] = forces[k + 1] - direction
    columns = []
    for j, body in enumerate(model.bodies):
        _, origin = body_pose(model, q, body.name)
        wrench = ca.SX.zeros(6)
        for x, b, f in zip(where, bodies, forces):
            wrench = wrench + (b == j) * ca.vertcat(ca.cross(x - origin, f), f)
        columns.append(wrench)
    generalized = ca.SX.zeros(model.nv)
    n_matrix = _rates_matrix(model, q)
    for i, point in enumerate(path.points):
        if not isinstance(point, MovingPathPoint):
            continue
        rotation = ca.DM.eye(3) if point.body == GROUND else body_pose(model, q, point.body)[0]
        rate = ca.jacobian(point.location_in_body(model, q), q)
        for slot, f in zip(slots.slots, forces):
            is_i = ca.logic_and(_tag(slot) == 0, _index(slot) == i)
            generalized = generalized + is_i * ca.mtimes(n_matrix.T, ca.mtimes(rate.T, ca.mtimes(rotation.T, f)))
    return ca.horzcat(*columns), generalized


def _rates_matrix(model, q):
    return coordinate_rates_matrix(model, q)
