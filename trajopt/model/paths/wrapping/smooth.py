"""Smooth wrapping for optimization: closed-form shortest paths, blended in over a documented band.

OpenSim's wrapped path (exact mode, `trajopt.model.paths.wrapping.path`) is continuous, but its first derivative has
kinks and its second derivative jumps where wrapping switches on and off, where it changes segment or tangent
pair, and inside its iterations (fixed-count loops, tolerance tests). Gradient-based solvers need a path that is
twice continuously differentiable, and cheap: smooth mode builds each wrap in closed form instead.

- Each active wrap object adds, to the first straight segment of its point range that it wraps (OpenSim's
  mandatory wrap: one segment per wrap object), the excess length Δ ≥ 0 of the shortest path from one end of the
  segment to the other around the object's cross-section curve: tangent, arc, tangent. It wraps when the segment
  passes through the object (OpenSim's test for spheres, ellipsoids and unconstrained cylinders).
  - Cylinder: the geodesic (the planar shortest path, unrolled with the axial distance); with a quadrant it goes
    round the quadrant's side when an end lies off that side; as OpenSim, it is dropped when both tangent points
    lie beyond the cylinder's ends (faded out over `SmoothWrapping.end_width`).
  - Sphere: the great circle through both ends, the short way.
  - Ellipsoid: the sphere's construction after scaling the ellipsoid to the unit sphere, mapped back (tangency is
    preserved: the path leaves and joins the ellipsoid tangentially, and switches on where OpenSim's does), its
    arc length by Gauss-Legendre quadrature; unconstrained in the plane through the centre, with a quadrant in the
    plane through the segment leaning toward the quadrant's side (OpenSim, too, wraps in a plane through a surface
    point on the active side), which stays well defined when the segment passes the centre.
- The switch is blended: a segment adds Δ · s(Δ / band), s the quintic smoothstep (0 below 0, 1 above 1, C2),
  and leaves the later segments of the range the weight 1 - s (they take the wrap only as it leaves this one).
  So a segment's length differs from its unblended wrap by at most max_x x (1 - s(x)) · band = `BLEND_BOUND` ·
  band (0.273 band), and only while 0 < Δ < band; elsewhere it is exact. Δ vanishes quadratically in the tangent
  points' angle where the wrap switches on, so Δ s(Δ / band) joins 0 with vanishing derivatives up to the
  third: the length is C2 in q wherever the segment's geometry is.
- Not reproduced (the user chooses smooth mode; the arm26 reaching's `summary.md` says where it departs by more
  than 0.5 mm): OpenSim's choice among segments a wrap object does not pass through (the one lengthened least),
  its passes with several wrap objects on one segment (smooth mode adds their excesses), its constrained
  cylinders' wraps of segments that do not cross them (the long way round), its iterative ellipsoid path, and the
  direction flip of an unconstrained wrap when the segment passes through the centre. Tori are not modelled (a
  clear error). Measured deviations from exact mode: `trajopt bench smooth-paths` (arm26 and walk3d over their
  full ranges) and tests/test_wrapping_smooth.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import casadi as ca
import numpy as np

from trajopt.model.paths.wrapping.vectors import safe_acos, safe_norm, safe_sqrt

# Gauss-Legendre nodes and weights on [0, 1] for an ellipsoid's arc length.
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(8)
_NODES, _WEIGHTS = 0.5 * (_NODES + 1.0), 0.5 * _WEIGHTS


def smoothstep(x):
    """The quintic smoothstep: 0 for x <= 0, 1 for x >= 1, 6x^5 - 15x^4 + 10x^3 between (C2)."""
    y = ca.fmin(ca.fmax(x, 0), 1)
    return y * y * y * (y * (6 * y - 15) + 10)


def _blend_bound() -> float:
    x = np.linspace(0.0, 1.0, 100001)
    return float(np.max(x * (1.0 - x ** 3 * (x * (6 * x - 15) + 10))))


BLEND_BOUND = _blend_bound()  # max over 0..1 of x (1 - s(x)): the blend's length error per segment, in bands


@dataclass(frozen=True)
class SmoothWrapping:
    """Smooth mode's setting: `band` (m), the excess length over which a wrap blends in. A segment's length is
    within `BLEND_BOUND` * band (0.273 band) of its closed-form wrap."""

    band: float = 1e-4
    end_width: float = 2e-3  # m: a cylinder's wrap fades out as both tangent points pass its ends, over this

    def __post_init__(self):
        if not self.band > 0:
            raise ValueError(f"SmoothWrapping: band must be > 0 m, got {self.band}")
        if not self.end_width > 0:
            raise ValueError(f"SmoothWrapping: end_width must be > 0 m, got {self.end_width}")

    @property
    def length_bound(self) -> float:
        """The blend's largest length error per wrapped segment (m)."""
        return BLEND_BOUND * self.band


def blended(excess, wraps, band: float, kept=1):
    """(Δ s(Δ / band) kept, s(Δ / band) kept) where `wraps`, else (0, 0): the blended excess and how far the wrap
    is engaged; `kept` (0-1) fades it out (a cylinder's ends)."""
    positive = ca.fmax(excess, 0)
    engaged = ca.if_else(wraps, smoothstep(positive / band), 0) * kept
    return positive * engaged, engaged


def _excess_function(name, p1, p2, excess, wraps, band, kept=1):
    return ca.Function(name, [p1, p2], list(blended(excess, wraps, band, kept)), ["p1", "p2"],
                       ["excess", "engaged"])


def _planar(p1, p2, radius, long_way: bool):
    """Counter-clockwise tangent-arc-tangent from 2D p1 to 2D p2 around the circle of `radius` at the origin:
    (theta, t1, t2, beta1): the arc angle (in [0, 2 pi) with `long_way`, else in (-pi, pi]), the two tangent
    lengths and the first tangent point's polar angle."""
    rho1, rho2 = safe_norm(p1), safe_norm(p2)
    alpha1 = safe_acos(radius / ca.fmax(rho1, radius))
    alpha2 = safe_acos(radius / ca.fmax(rho2, radius))
    beta1 = ca.atan2(p1[1], p1[0]) + alpha1
    difference = ca.atan2(p2[1], p2[0]) - alpha2 - beta1
    if long_way:
        theta = difference - 2 * math.pi * ca.floor(difference / (2 * math.pi))
    else:
        theta = ca.atan2(ca.sin(difference), ca.cos(difference))
    return theta, safe_sqrt(rho1 ** 2 - radius ** 2), safe_sqrt(rho2 ** 2 - radius ** 2), beta1


def _cross2(a, b):
    return a[0] * b[1] - a[1] * b[0]


def _wrap_condition(p1, p2, radius, side):
    """(orientation, wraps) of the 2D segment p1-p2 about the circle of `radius` at the origin: it wraps when both
    ends lie outside the circle and the segment passes through it (as OpenSim's spheres and ellipsoids, and its
    unconstrained cylinders). orientation +1 (counter-clockwise) or -1: the short way round, or, with `side` (a 2D
    direction: OpenSim's quadrant) and an end off that side, the way that bends the path toward `side`."""
    direction = p2 - p1
    length = ca.fmax(safe_norm(direction), 1e-12)
    along = -ca.dot(p1, direction) / length ** 2  # where the line comes closest to the centre (0..1: within)
    outside = ca.logic_and(safe_norm(p1) > radius, safe_norm(p2) > radius)
    distance = ca.fabs(_cross2(direction, p1)) / length
    crosses = ca.logic_and(outside, ca.logic_and(distance < radius, ca.logic_and(along > 0, along < 1)))
    short_way = ca.if_else(_cross2(p1, p2) >= 0, 1, -1)
    if side is None:
        return short_way, crosses
    on_side = ca.logic_and(ca.dot(p1, side) >= 0, ca.dot(p2, side) >= 0)
    return ca.if_else(on_side, short_way, ca.if_else(_cross2(direction, side) <= 0, 1, -1)), crosses


def _flip(p, orientation):
    return ca.vertcat(p[0], orientation * p[1])


@lru_cache(maxsize=None)
def cylinder_excess(radius: float, length: float, axis: int, sign: int, smoothing: SmoothWrapping) -> ca.Function:
    """casadi Function (p1, p2) (wrap frame) -> (excess, engaged): the blended excess length of the segment over the
    cylinder of `radius` about z; `sign` 0: unconstrained, else the path stays on the `sign` side of `axis` (a
    quadrant along the cylinder's axis constrains nothing). As OpenSim, the wrap is dropped when both tangent points
    lie beyond the cylinder's ends (`length`), here faded out over `smoothing.end_width`."""
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    side = None if sign == 0 or axis == 2 else ca.DM([sign if axis == 0 else 0, sign if axis == 1 else 0])
    orientation, wraps = _wrap_condition(p1[:2], p2[:2], radius, side)
    theta, t1, t2, _ = _planar(_flip(p1[:2], orientation), _flip(p2[:2], orientation), radius, side is not None)
    planar = t1 + radius * theta + t2
    rise = p2[2] - p1[2]
    excess = ca.sqrt(planar ** 2 + rise ** 2) - safe_norm(p2 - p1)
    # The unrolled geodesic rises linearly with the planar arc length: the tangent points' heights.
    heights = [p1[2] + rise * arc / ca.fmax(planar, 1e-12) for arc in (t1, t1 + radius * theta)]
    beyond = [smoothstep((ca.fabs(z) - 0.5 * length) / smoothing.end_width) for z in heights]
    return _excess_function("smooth_cylinder_excess", p1, p2, excess, wraps, smoothing.band,
                            1 - beyond[0] * beyond[1])


def _plane_basis(p1, p2):
    """Orthonormal e1 (along p1), e2 (toward p2) of the plane through the origin, p1 and p2."""
    e1 = p1 / ca.fmax(safe_norm(p1), 1e-12)
    normal = p2 - ca.dot(p2, e1) * e1
    e2 = normal / ca.fmax(safe_norm(normal), 1e-12)
    return e1, e2


def _great_circle(p1, p2):
    """The short way round the unit sphere from p1 to p2 in the plane through both and the centre:
    (wraps, theta, beta1, e1, e2), e1 and e2 the plane's basis (the path runs from e1 toward e2)."""
    e1, e2 = _plane_basis(p1, p2)
    q1 = ca.vertcat(ca.dot(p1, e1), 0)
    q2 = ca.vertcat(ca.dot(p2, e1), ca.dot(p2, e2))
    _, wraps = _wrap_condition(q1, q2, 1.0, None)
    theta, _, _, beta1 = _planar(q1, q2, 1.0, False)
    return wraps, theta, beta1, e1, e2


@lru_cache(maxsize=None)
def sphere_excess(radius: float, axis: int, sign: int, band: float) -> ca.Function:
    """casadi Function (p1, p2) (wrap frame) -> the blended excess of the great-circle wrap over the sphere, the
    short way round (a quadrant does not change it: OpenSim's constrained sphere agrees where it takes the short
    way; its long way round has a negative length, not reproduced)."""
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    wraps, theta, _, _, _ = _great_circle(p1 / radius, p2 / radius)
    t1 = safe_sqrt(ca.dot(p1, p1) - radius ** 2)
    t2 = safe_sqrt(ca.dot(p2, p2) - radius ** 2)
    excess = t1 + radius * theta + t2 - safe_norm(p2 - p1)
    return _excess_function("smooth_sphere_excess", p1, p2, excess, wraps, band)


def _side_plane_circle(p1, p2, sign: int, axis: int):
    """The plane through the line p1-p2 (scaled: the unit sphere) that leans toward the quadrant's side: spanned by
    the line and the side's direction square to it. Returns (circle centre, radius, e1, e2): the circle the plane
    cuts from the unit sphere and its in-plane basis (e1 along the line, e2 toward the side)."""
    direction = p2 - p1
    e1 = direction / ca.fmax(safe_norm(direction), 1e-12)
    side = ca.DM.zeros(3)
    side[axis] = sign
    across = side - ca.dot(side, e1) * e1
    e2 = across / ca.fmax(safe_norm(across), 1e-12)
    centre = p1 - ca.dot(p1, e1) * e1 - ca.dot(p1, e2) * e2
    return centre, safe_sqrt(1 - ca.dot(centre, centre)), e1, e2


@lru_cache(maxsize=None)
def ellipsoid_excess(radii: tuple[float, float, float], axis: int, sign: int, band: float) -> ca.Function:
    """casadi Function (p1, p2) (wrap frame) -> the blended excess of the scaled-sphere wrap over the ellipsoid:
    unconstrained in the plane through the centre, with a quadrant in the plane through the segment that leans
    toward the quadrant's side (the path bends toward it)."""
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    scale = ca.DM(radii)
    s1, s2 = p1 / scale, p2 / scale
    if sign == 0:
        wraps, theta, beta1, e1, e2 = _great_circle(s1, s2)
        centre, radius = ca.DM.zeros(3), 1.0
    else:
        centre, radius, e1, e2 = _side_plane_circle(s1, s2, sign, axis)
        q1 = ca.vertcat(ca.dot(s1 - centre, e1), ca.dot(s1 - centre, e2))
        q2 = ca.vertcat(ca.dot(s2 - centre, e1), ca.dot(s2 - centre, e2))
        orientation, wraps = _wrap_condition(q1, q2, radius, ca.DM([0, 1]))
        theta, _, _, beta1 = _planar(_flip(q1, orientation), _flip(q2, orientation), radius, True)
        e2 = orientation * e2

    def surface(beta):
        return scale * (centre + radius * (ca.cos(beta) * e1 + ca.sin(beta) * e2))

    arc = 0
    for node, weight in zip(_NODES, _WEIGHTS):
        beta = beta1 + node * theta
        arc = arc + weight * theta * radius * safe_norm(scale * (-ca.sin(beta) * e1 + ca.cos(beta) * e2))
    excess = safe_norm(surface(beta1) - p1) + arc + safe_norm(p2 - surface(beta1 + theta)) - safe_norm(p2 - p1)
    return _excess_function("smooth_ellipsoid_excess", p1, p2, excess, wraps, band)
