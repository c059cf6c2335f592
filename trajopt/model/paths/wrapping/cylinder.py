"""Wrapping over a cylinder as OpenSim 4.6 computes it (WrapCylinder::wrapLine and _make_spiral_path).

The cylinder's axis is the wrap frame's z axis, centred at its origin; `quadrant` restricts wrapping to
one side (axis and sign). OpenSim's steps, reproduced with their tolerances:
1. a point inside the radius: no wrap ("inside radius");
2. unconstrained: wrap only when the straight line passes within the radius between the points
   (mandatory); constrained: the quadrant rules decide (mandatory, wrapped or no wrap) and which pair
   of tangent points, and whether the path goes the long way around;
3. the tangent points are moved onto the plane through both points and the apex of the cylinder,
   and the wrap is dropped when both lie beyond the cylinder's ends;
4. the wrap is a helix between the tangent points; when the path has several wrap objects OpenSim
   slides the tangent points along the axis until the straight parts are tangent to the helix to
   within 0.1 degree (up to 100 passes) - reproduced here pass for pass (unrolled inside the
   cylinder's Function, which paths call as one node).
"""

from __future__ import annotations

import math
from functools import lru_cache

import casadi as ca

from trajopt.model.paths.wrapping.vectors import (
    INSIDE_RADIUS, MANDATORY_WRAP, NO_WRAP, WRAPPED, closest_point_on_line, distance_squared, dsign,
    intersect_lines, intersect_segment_plane, normalize_or_zero, rotation_about_z, safe_acos, safe_sqrt, select,
    unit,
)

AXIS = ca.DM([0.0, 0.0, 1.0])  # dn
AXIS_POINT = ca.DM([0.0, 0.0, -1.0])  # p0
TANGENCY_THRESHOLD = 0.1 * math.pi / 180
MAX_ITERATIONS = 100
SEGMENT = 0.002  # OpenSim draws the helix in pieces of 2 mm; the first piece sets the tangency check


def _tangent_points(point, radius):
    """The two points where lines from `point` touch the cylinder in the plane normal to the axis."""
    on_axis, _ = closest_point_on_line(point, AXIS_POINT, AXIS)
    radial, distance = normalize_or_zero(point - on_axis)
    sin_theta = radius / ca.if_else(distance > 0, distance, 1)
    d = radius * sin_theta
    foot = on_axis + d * radial
    half = safe_sqrt(radius ** 2 - d * d)
    across = ca.cross(AXIS, radial)
    return on_axis, distance, foot + half * across, foot - half * across


def _constrained_choice(p1, p2, r1a, r1b, r2a, r2b, p11, p22, axis, sign):
    """OpenSim's quadrant table: (r1, r2, far_side_wrap)."""
    r1am, r1bm, r2am, r2bm = r1a - p11, r1b - p11, r2a - p22, r2b - p22

    def angle(u, v):
        return safe_acos(ca.dot(u, v) / (ca.norm_2(u) * ca.norm_2(v)))

    alpha, beta = angle(r1am, r2bm), angle(r1bm, r2am)
    a_gt_b = alpha > beta
    s1a, s1b = dsign(r1a[axis]) == sign, dsign(r1b[axis]) == sign
    s2a, s2b = dsign(r2a[axis]) == sign, dsign(r2b[axis]) == sign
    # (use_b_a: r1 = r1b, r2 = r2a; else r1 = r1a, r2 = r2b), far side
    both = ca.logic_and(s1a, s1b)
    only_a = ca.logic_and(s1a, ca.logic_not(s1b))
    only_b = ca.logic_and(ca.logic_not(s1a), s1b)
    use_ba = select(both, s2a, select(only_a, 0, select(only_b, 1, select(s2a, 1, select(s2b, 0,
                                                                                        ca.logic_not(a_gt_b))))))
    far = select(ca.logic_or(ca.logic_or(both, only_a), only_b),
                 select(use_ba, ca.logic_not(a_gt_b), a_gt_b),
                 select(s2a, ca.logic_not(a_gt_b), select(s2b, a_gt_b, 1)))
    return select(use_ba, r1b, r1a), select(use_ba, r2a, r2b), far


def _unconstrained_choice(r1a, r1b, r2a, r2b, p11, p22):
    r1am, r1bm = unit(r1a - p11), unit(r1b - p11)
    r2am, r2bm = unit(r2a - p22), unit(r2b - p22)
    dot1, dot2, dot3, dot4 = ca.dot(r1am, r2am), ca.dot(r1am, r2bm), ca.dot(r1bm, r2am), ca.dot(r1bm, r2bm)
    c1 = ca.logic_and(ca.logic_and(dot1 > dot2, dot1 > dot3), dot1 > dot4)
    c2 = ca.logic_and(dot2 > dot3, dot2 > dot4)
    c3 = dot3 > dot4
    r1 = select(ca.logic_or(c1, c2), r1a, r1b)
    r2 = select(c1, r2a, select(c2, r2b, select(c3, r2a, r2b)))
    return r1, r2


def _helix(r1, r2, radius, far_side):
    """(theta, axial distance, length) of OpenSim's helix from r1 to r2."""
    axial = r2[2] - r1[2]
    theta = ca.atan2(r1[0] * r2[1] - r1[1] * r2[0], r1[0] * r2[0] + r1[1] * r2[1])
    theta = select(far_side, 2 * math.pi - theta, theta)
    return theta, axial, ca.sqrt((radius * theta) ** 2 + axial ** 2)


def _adjust_tangent_point(point, r1, w1):
    """WrapCylinder::_adjust_tangent_point: (adjusted?, new r1)."""
    pr, _ = normalize_or_zero(r1 - point)
    rw, _ = normalize_or_zero(w1 - r1)
    alpha, omega = safe_acos(pr[2]), safe_acos(rw[2])
    adjust = ca.fabs(alpha - omega) > TANGENCY_THRESHOLD
    p1a, _ = closest_point_on_line(point, r1, AXIS)
    w1a, _ = closest_point_on_line(w1, r1, AXIS)
    _, _, on2, _ = intersect_lines(point, w1, p1a, w1a)
    return adjust, select(adjust, r1 + 1.5 * (on2 - r1), r1)


@lru_cache(maxsize=None)
def _spiral_pass(radius: float) -> ca.Function:
    """One pass of _make_spiral_path's tangency loop: (p1, p2, r1, r2, far, iterations, done) -> same."""
    p1, p2, r1, r2 = (ca.SX.sym(n, 3) for n in ("p1", "p2", "r1", "r2"))
    far, iterations, done = ca.SX.sym("far"), ca.SX.sym("iterations"), ca.SX.sym("done")
    theta, axial, length = _helix(r1, r2, radius, far)
    pieces = ca.fmax(ca.floor(length / SEGMENT), 1)
    t = 1 / pieces
    sense = select(far, -1, 1)

    def spiral(r1_now, tt):
        return ca.mtimes(rotation_about_z(sense * tt * theta), r1_now) + AXIS * (tt * axial)

    check = ca.logic_and(ca.logic_not(done), ca.logic_and(pieces >= 2, iterations < MAX_ITERATIONS))
    adjusted1, r1_new = _adjust_tangent_point(p1, r1, spiral(r1, t))
    adjusted2, r2_new = _adjust_tangent_point(p2, r2, spiral(r1_new, 1 - t))
    again = ca.logic_and(check, ca.logic_or(adjusted1, adjusted2))
    return ca.Function("cylinder_spiral_pass", [p1, p2, r1, r2, far, iterations, done],
                       [select(again, r1_new, r1), select(again, r2_new, r2), iterations + again,
                        ca.logic_or(done, ca.logic_not(again))])


SPIRAL_CHUNK = 4  # tangency passes per chunk; MAX_ITERATIONS is a multiple


@lru_cache(maxsize=None)
def _spiral_passes(radius: float) -> ca.Function:
    """(p1, p2, r1, r2, far) -> (r1, r2) after MAX_ITERATIONS tangency passes, in chunks of SPIRAL_CHUNK: once a
    pass finds the points tangent (done), the passes left change nothing and are skipped (nested MX switches, called
    as one node), so the loop costs the passes it takes, as OpenSim's."""
    step = _spiral_pass(radius)
    p1, p2, r1, r2 = (ca.SX.sym(n, 3) for n in ("p1", "p2", "r1", "r2"))
    far, iterations, done = ca.SX.sym("far"), ca.SX.sym("iterations"), ca.SX.sym("done")
    state = (r1, r2, iterations, done)
    for _ in range(SPIRAL_CHUNK):
        state = step(p1, p2, *state[:2], far, *state[2:])
    inputs = [p1, p2, r1, r2, far, iterations, done]
    names = ["p1", "p2", "r1", "r2", "far", "iterations", "done"]
    outputs = ["r1_out", "r2_out", "iterations_out", "done_out"]
    chunk = ca.Function("cylinder_spiral_chunk", inputs, list(state), names, outputs)
    rest = None  # the chunks after this one, skipped when done
    for k in range(MAX_ITERATIONS // SPIRAL_CHUNK - 1, -1, -1):
        m = [ca.MX.sym(n, x.sparsity()) for n, x in zip(names, inputs)]
        after = chunk(*m)
        if rest is not None:
            after = rest(m[0], m[1], after[0], after[1], m[4], after[2], after[3])
        run = ca.Function(f"cylinder_spiral_run_{k}", m, after)
        keep = ca.Function(f"cylinder_spiral_keep_{k}", m, [m[2], m[3], m[5], m[6]])
        switch = ca.Function.if_else(f"cylinder_spiral_switch_{k}", keep, run)
        rest = ca.Function(f"cylinder_spiral_rest_{k}", m, switch(m[6], *m), names, outputs,
                           {"never_inline": True})
    p1m, p2m, r1m, r2m, farm = (ca.MX.sym(n, x.sparsity()) for n, x in zip(names[:5], inputs[:5]))
    r1_out, r2_out, _, _ = rest(p1m, p2m, r1m, r2m, farm, 0, 0)
    return ca.Function("cylinder_spiral_passes", [p1m, p2m, r1m, r2m, farm], [r1_out, r2_out],
                       ["p1", "p2", "r1", "r2", "far"], ["r1_out", "r2_out"], {"never_inline": True})


def _cylinder(radius: float, length: float, axis: int, sign: int, single_wrap: bool):
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    r_squared = radius * radius
    inside = ca.logic_or(p1[0] ** 2 + p1[1] ** 2 < r_squared, p2[0] ** 2 + p2[1] ** 2 < r_squared)
    ends = (ca.DM([0, 0, -0.5 * length]), ca.DM([0, 0, 0.5 * length]))
    near12, t12, near00, _ = intersect_lines(p1, p2, *ends)
    crosses = ca.logic_and(distance_squared(near12, near00) < r_squared, ca.logic_and(t12 > 0, t12 < 1))
    p11, p11_dist, r1a, r1b = _tangent_points(p1, radius)
    p22, p22_dist, r2a, r2b = _tangent_points(p2, radius)
    if sign == 0:
        code = select(crosses, MANDATORY_WRAP, NO_WRAP)
        r1, r2 = _unconstrained_choice(r1a, r1b, r2a, r2b, p11, p22)
        far_side, long_wrap = 0, 0
    else:
        on1, on2 = dsign(p1[axis]) == sign, dsign(p2[axis]) == sign
        either = ca.logic_or(on1, on2)
        apart = ca.logic_and(dsign(p1[axis]) != dsign(p2[axis]), dsign(near12[axis]) != sign)
        code = select(either, select(crosses, MANDATORY_WRAP, select(apart, WRAPPED, NO_WRAP)), WRAPPED)
        r1, r2, far_side = _constrained_choice(p1, p2, r1a, r1b, r2a, r2b, p11, p22, axis, sign)
        sum_musc = (r1 - p1) + (r2 - p2)
        sum_r = (r1 - p11) + (r2 - p22)
        long_wrap = ca.dot(sum_r, sum_musc) < 0
    # Tangent points moved to the plane through p1, p2 and the cylinder's apex.
    t = p11_dist / (p11_dist + p22_dist)
    mpt = p1 + t * (p2 - p1)
    axispt, _ = closest_point_on_line(mpt, AXIS_POINT, AXIS)
    l1, _ = normalize_or_zero(p1 - axispt)
    l2, _ = normalize_or_zero(p2 - axispt)
    normal = unit(ca.cross(l1, l2))
    vert1 = unit(ca.cross(AXIS, normal))
    vert2 = unit(ca.cross(normal, AXIS))
    apex1, apex2 = axispt + radius * vert1, axispt + radius * vert2
    first_closer = distance_squared(mpt, apex1) < distance_squared(mpt, apex2)
    apex = select(far_side, select(first_closer, apex2, apex1), select(first_closer, apex1, apex2))
    uu, _ = normalize_or_zero(p1 - apex)
    vv, _ = normalize_or_zero(p2 - apex)
    normal = unit(ca.cross(uu, vv))
    d = -ca.dot(p1, normal)
    hit1, r1p = intersect_segment_plane(r1 - 10 * AXIS, r1 + 10 * AXIS, normal, d)
    hit2, r2p = intersect_segment_plane(r2 - 10 * AXIS, r2 + 10 * AXIS, normal, d)
    r1_axis, _ = closest_point_on_line(r1p, p11, p22)
    r2_axis, _ = closest_point_on_line(r2p, p11, p22)
    r1 = select(ca.logic_and(hit1, distance_squared(r1_axis, p22) < distance_squared(p11, p22)), r1p, r1)
    r2 = select(ca.logic_and(hit2, distance_squared(r2_axis, p11) < distance_squared(p22, p11)), r2p, r2)
    half = length / 2
    beyond = ca.logic_and(ca.logic_or(r1[2] < -half, r1[2] > half), ca.logic_or(r2[2] < -half, r2[2] > half))
    if not single_wrap:
        r1, r2 = _spiral_passes(radius)(p1, p2, r1, r2, long_wrap)
    _, _, wrap_length = _helix(r1, r2, radius, long_wrap)
    if sign == 0:
        code = select(inside, INSIDE_RADIUS, select(crosses, select(beyond, NO_WRAP, code), NO_WRAP))
    else:
        early_no = ca.logic_and(either, ca.logic_and(ca.logic_not(crosses), ca.logic_not(apart)))
        code = select(inside, INSIDE_RADIUS, select(ca.logic_or(early_no, beyond), NO_WRAP, code))
    applied = code >= WRAPPED
    return (p1, p2), (code, select(applied, r1, p1), select(applied, r2, p2), select(applied, wrap_length, 0))


@lru_cache(maxsize=None)
def cylinder_wrap(radius: float, length: float, axis: int, sign: int, single_wrap: bool) -> ca.Function:
    """casadi Function (p1, p2) -> (code, r1, r2, wrap_length): OpenSim's wrap of the straight segment p1-p2
    (wrap frame) over the cylinder; code is NO_WRAP, INSIDE_RADIUS, WRAPPED or MANDATORY_WRAP, r1 and r2 the
    tangent points (p1 and p2 when not wrapped), wrap_length the helix length. `sign` 0 is quadrant 'all';
    `single_wrap` is OpenSim's flag for a path with one wrap object (no tangency iterations)."""
    inputs, outputs = _cylinder(float(radius), float(length), int(axis), int(sign), bool(single_wrap))
    return ca.Function("wrap_cylinder", list(inputs), list(outputs), ["p1", "p2"],
                       ["code", "r1", "r2", "wrap_length"], {"never_inline": True})
