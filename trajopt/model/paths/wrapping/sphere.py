"""Wrapping over a sphere as OpenSim 4.6 computes it (WrapSphere::wrapLine).

The sphere is centred at the wrap frame's origin. Unconstrained, the path wraps (code WRAPPED) only
when the straight segment enters the sphere; the tangent points lie in the plane through both points
and the centre, the pair whose directions agree most. A quadrant adds OpenSim's side rules
(mandatory when the segment crosses, the other tangent points when the path would leave the active
side, the long way round when needed). Two of OpenSim's quirks are kept because they are its
result: the long way round has the negative length -radius * (2 pi - angle), and a segment whose
points are collinear with the centre reuses the previous wrap's tangent points - trajopt cannot
know them and returns the short-way tangent points instead (this case has measure zero).
"""

from __future__ import annotations

import math
from functools import lru_cache

import casadi as ca

from trajopt.model.paths.wrapping.vectors import (
    INSIDE_RADIUS, MANDATORY_WRAP, NO_WRAP, WRAPPED, closest_point_on_line, distance_squared, dsign,
    normalize_or_zero, safe_acos, safe_sqrt, select,
)


def _tangents(point, n, radius):
    """The two tangent points from `point` in the plane with normal `n` (through the centre)."""
    distance = ca.norm_2(point)
    y, _ = normalize_or_zero(-point)
    z = ca.cross(n, y)
    a = ca.asin(ca.fmin(radius / distance, 1))
    reach = distance * ca.cos(a)
    # Row 1 of ra * Rx(±a)^T: the direction of y turned by ±a about n.
    plus = y * ca.cos(a) - z * ca.sin(a)
    minus = y * ca.cos(a) + z * ca.sin(a)
    return point + plus * reach, point + minus * reach


def _sphere(radius: float, axis: int, sign: int):
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    inside = ca.logic_or(ca.norm_2(p1) < radius, ca.norm_2(p2) < radius)
    ri = p1 - p2
    mp = -p2
    a = ca.dot(ri, ri)
    b = -2 * ca.dot(mp, ri)
    c = ca.dot(mp, mp) - radius ** 2
    disc = b * b - 4 * a * c
    root = safe_sqrt(disc)
    l1 = (-b + root) / (2 * a)
    l2 = (-b - root) / (2 * a)
    enters = ca.logic_and(disc >= 0, ca.logic_and(ca.logic_and(l1 > 0, l1 < 1), ca.logic_and(l2 > 0, l2 < 1)))
    enters = ca.logic_and(enters, l1 >= l2)
    p1p2, _ = normalize_or_zero(p1 - p2)
    np2, _ = normalize_or_zero(p2)
    n, _ = normalize_or_zero(ca.cross(p1p2, np2))
    r1a, r1b = _tangents(p1, n, radius)
    r2a, r2b = _tangents(p2, n, radius)
    r1am, _ = normalize_or_zero(r1a)
    r1bm, _ = normalize_or_zero(r1b)
    r2am, _ = normalize_or_zero(r2a)
    r2bm, _ = normalize_or_zero(r2b)
    j1, j2, j3, j4 = ca.dot(r1am, r2am), ca.dot(r1am, r2bm), ca.dot(r1bm, r2am), ca.dot(r1bm, r2bm)
    c1 = ca.logic_and(ca.logic_and(j1 > j2, j1 > j3), j1 > j4)
    c2 = ca.logic_and(j2 > j3, j2 > j4)
    c3 = j3 > j4
    first_a = ca.logic_or(c1, c2)
    second_a = select(c1, 1, select(c2, 0, select(c3, 1, 0)))
    r1 = select(first_a, r1a, r1b)
    r2 = select(second_a, r2a, r2b)
    code = WRAPPED
    far_side = 0
    early_no = 0
    if sign != 0:
        s1, s2 = dsign(p1[axis]), dsign(p2[axis])
        either = ca.logic_or(s1 == sign, s2 == sign)
        mm, tt = closest_point_on_line(ca.DM.zeros(3), p1, p1p2)
        tt = -tt
        crosses = ca.logic_and(distance_squared(ca.DM.zeros(3), mm) < radius ** 2,
                               ca.logic_and(tt > 0, tt < 1))
        apart = ca.logic_and(s1 != s2, dsign(mm[axis]) != sign)
        code = select(either, select(crosses, MANDATORY_WRAP, WRAPPED), WRAPPED)
        early_no = ca.logic_and(either, ca.logic_and(ca.logic_not(crosses), ca.logic_not(apart)))
        off = ca.logic_or(s1 != sign, s2 != sign)
        wrapaxis = ca.DM.zeros(3)
        wrapaxis[axis] = sign
        sum_musc, _ = normalize_or_zero(-p1 - p2)
        pick1a = ca.dot(r1am, sum_musc) > ca.dot(r1bm, sum_musc)
        pick2a = ca.dot(r2am, sum_musc) > ca.dot(r2bm, sum_musc)
        q1, q1_other = select(pick1a, r1a, r1b), select(pick1a, r1b, r1a)
        q2, q2_other = select(pick2a, r2a, r2b), select(pick2a, r2b, r2a)
        direction, _ = normalize_or_zero((q1 - p1) + (q2 - p2))
        flip = ca.dot(direction, wrapaxis) < 0
        q1, q2 = select(flip, q1_other, q1), select(flip, q2_other, q2)
        far = ca.dot(q1 + q2, (q1 - p1) + (q2 - p2)) < 0
        r1, r2 = select(off, q1, r1), select(off, q2, r2)
        far_side = ca.logic_and(off, far)
    r1n, _ = normalize_or_zero(r1)
    r2n, _ = normalize_or_zero(r2)
    angle = safe_acos(ca.dot(r1n, r2n))
    angle = select(far_side, -(2 * math.pi - angle), angle)
    wrap_length = radius * angle
    code = select(inside, INSIDE_RADIUS, select(ca.logic_not(enters), NO_WRAP, select(early_no, NO_WRAP, code)))
    applied = code >= WRAPPED
    return (p1, p2), (code, select(applied, r1, p1), select(applied, r2, p2), select(applied, wrap_length, 0))


@lru_cache(maxsize=None)
def sphere_wrap(radius: float, axis: int, sign: int) -> ca.Function:
    """casadi Function (p1, p2) -> (code, r1, r2, wrap_length) of OpenSim's sphere wrap (wrap frame)."""
    inputs, outputs = _sphere(float(radius), int(axis), int(sign))
    return ca.Function("wrap_sphere", list(inputs), list(outputs), ["p1", "p2"],
                       ["code", "r1", "r2", "wrap_length"], {"never_inline": True})
