"""Vector helpers for wrapping, written in CasADi SX with OpenSim's WrapMath conventions.

Branches are `casadi.if_else` (both sides evaluated), so every helper keeps its unused side
finite: a NaN there would leak into derivatives (0 * NaN) even where the value is right.
"""

from __future__ import annotations

import casadi as ca

# OpenSim's wrap results (WrapObject::WrapAction).
NO_WRAP, INSIDE_RADIUS, WRAPPED, MANDATORY_WRAP = 0, 1, 2, 3
# OpenSim's 'wrapped' without a wrap (WrapTorus when its cylinder does not wrap): no candidate segment, but not
# NO_WRAP in GeometryPath's rule that swaps the first two wrap objects.
WRAPPED_EMPTY = -1
# The placeholder segment the path gives a wrap for slots outside its range (far away, so every branch stays
# finite); an expensive wrap can skip it (`is_placeholder`).
FAR_1, FAR_2 = ca.DM([10.0, 10.0, 3.0]), ca.DM([10.0, -10.0, -3.0])
EPS = 2.220446049250313e-16  # SimTK::Eps
LINE_EPSILON = 1e-5  # WrapMath.cpp
ROUNDOFF_ERROR = 2e-13  # SimmMacros.h


def select(condition, a, b):
    return ca.if_else(condition, a, b)


def dsign(x):
    """OpenSim's DSIGN: 1 for x >= 0, else -1."""
    return ca.if_else(x >= 0, 1, -1)


def norm(v):
    return ca.sqrt(ca.dot(v, v))


def safe_norm(v):
    """|v|, with a finite derivative at v = 0 (where it is 0)."""
    squared = ca.dot(v, v)
    return ca.if_else(squared > 0, ca.sqrt(ca.if_else(squared > 0, squared, 1)), 0)


def normalize_or_zero(v):
    """(v / |v|, |v|), the zero vector when |v| < Eps (WrapMath::NormalizeOrZero)."""
    magnitude = safe_norm(v)
    ok = magnitude >= EPS
    return ca.if_else(ok, v / ca.if_else(ok, magnitude, 1), ca.DM.zeros(3)), magnitude


def unit(v):
    """SimTK::UnitVec3(v): v / |v| (kept finite at 0)."""
    return normalize_or_zero(v)[0]


def safe_sqrt(x):
    """sqrt(max(x, 0)) whose derivative stays finite (0 where x <= 0)."""
    positive = x > 0
    return ca.if_else(positive, ca.sqrt(ca.if_else(positive, x, 1)), 0)


def safe_acos(x):
    """acos of x clipped to [-1, 1], with finite derivatives (0 outside (-1, 1))."""
    inside = ca.fabs(x) < 1
    return ca.if_else(inside, ca.acos(ca.if_else(inside, x, 0)), ca.if_else(x >= 1, 0, ca.pi))


def distance_squared(a, b):
    d = a - b
    return ca.dot(d, d)


def closest_point_on_line(point, line_point, line):
    """(closest point, t) on the line through `line_point` along `line` (WrapMath::GetClosestPointOnLineToPoint:
    t is measured in units of |line|)."""
    v1, magnitude = normalize_or_zero(point - line_point)
    v2, magnitude2 = normalize_or_zero(line)
    t = ca.dot(v1, v2) * magnitude
    closest = line_point + t * v2
    return closest, t / ca.if_else(magnitude2 > 0, magnitude2, 1)


def intersect_lines(p1, p2, p3, p4):
    """Closest points of lines p1-p2 and p3-p4 (WrapMath::IntersectLines): (on 1, s, on 2, t), s and t in
    units of the segment lengths (0 at p1/p3, 1 at p2/p4)."""
    vec1, mag1 = normalize_or_zero(p2 - p1)
    vec2, mag2 = normalize_or_zero(p4 - p3)
    cross = ca.cross(vec1, vec2)
    denom = ca.dot(cross, cross)
    denom = ca.if_else(denom > ROUNDOFF_ERROR, denom, 1)  # parallel lines: OpenSim returns NaNs
    row0 = p3 - p1
    t = ca.det(ca.horzcat(row0, vec1, cross).T) / denom
    on2 = p3 + t * vec2
    s = ca.det(ca.horzcat(row0, vec2, cross).T) / denom
    on1 = p1 + s * vec1
    return on1, s / ca.if_else(mag1 > 0, mag1, 1), on2, t / ca.if_else(mag2 > 0, mag2, 1)


def intersect_segment_plane(pt1, pt2, normal, d):
    """(hit, point) where segment pt1-pt2 meets the plane normal . x + d = 0 (WrapMath::IntersectLineSegPlane,
    with its 1e-5 tolerances)."""
    vec = pt2 - pt1
    dot = ca.dot(vec, normal)
    ok = ca.fabs(dot) >= LINE_EPSILON
    t = (-d - ca.dot(normal, pt1)) / ca.if_else(ok, dot, 1)
    hit = ca.logic_and(ok, ca.logic_and(t >= -LINE_EPSILON, t <= 1 + LINE_EPSILON))
    return hit, pt1 + t * vec


def rotation_about_z(angle):
    c, s = ca.cos(angle), ca.sin(angle)
    return ca.vertcat(ca.horzcat(c, -s, 0), ca.horzcat(s, c, 0), ca.horzcat(0, 0, 1))


def is_placeholder(p1, p2):
    """Whether p1-p2 is the path's placeholder segment FAR_1-FAR_2."""
    same = [p1[k] == FAR_1[k] for k in range(3)] + [p2[k] == FAR_2[k] for k in range(3)]
    result = same[0]
    for flag in same[1:]:
        result = ca.logic_and(result, flag)
    return result
