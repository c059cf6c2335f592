"""Wrapping over an ellipsoid as OpenSim 4.6 computes it (WrapEllipsoid::wrapLine).

The ellipsoid has semi-axes `radii` along the wrap frame's axes, centred at its origin. OpenSim scales
all coordinates by 3 / sum(radii) and then:
1. a point inside the ellipsoid: no wrap (INSIDE_RADIUS); the two points in line with the centre, or a
   segment that does not cross the ellipsoid: NO_WRAP; otherwise the wrap is MANDATORY_WRAP;
2. a point c1 on the surface fixes the wrap plane (through both points and c1). 'hybrid' blends two
   estimates by how parallel the segment is to a coordinate axis: Frans' (the closest surface point to
   where the segment crosses that axis' coordinate plane) and the fan (the mean direction from 298
   points of the chord inside the ellipsoid to their closest surface points); 'axial' uses Frans',
   'midpoint' the closest point to the chord's midpoint. A quadrant mirrors c1 onto the active side
   (pulled back toward the mirror plane by the fan's weight);
3. the tangent points are where lines from each point in the plane touch the plane's ellipse, found by
   OpenSim's Levenberg-Marquardt from c1 to a squared residual of 1e-8 (reproduced step for step: which of
   the two tangent points it reaches, and its residual, change the length by up to 9 cm and 1e-7 m);
4. the wrap length is the polyline of floor(chord / 1 mm) segments (at most 499) between the tangent
   points, through the surface points at equal angles about the point where the plane meets the
   coordinate axis most normal to it. With a quadrant, a first or last piece that turns back toward
   its end point means the wrap goes the long way round the plane's ellipse instead.

The closest-point problems are OpenSim's Newton iterations on Eberly's polynomials (Graphics Gems IV),
unrolled to a fixed count, stopping where OpenSim stops (|f| < 1e-9, which near the medial axis is well
before convergence and moves the fan's direction by 1e-2); OpenSim's iterations take at most 17 steps at
99.9 % of random points. A solve OpenSim gives up on (64 steps) keeps the previous sample's point there;
here it keeps its last iterate.
"""

from __future__ import annotations

import math
from functools import lru_cache

import casadi as ca

from trajopt.model.paths.wrapping.implicit import Solves, WrapDerivatives
from trajopt.model.paths.wrapping.vectors import (
    INSIDE_RADIUS, MANDATORY_WRAP, NO_WRAP, ROUNDOFF_ERROR, dsign, normalize_or_zero, safe_acos, safe_sqrt, select,
    unit,
)

TOLERANCE_1 = 1e-4  # ELLIPSOID_TOLERANCE_1
MU_BLEND_MIN = 0.7073  # 100 % fan
MU_BLEND_MAX = 0.9  # 100 % Frans
FAN_SAMPLES = 300
SV_BOUNDARY_BLEND = 0.3
SEGMENT = 0.001  # m, CalcDistanceOnEllipsoid's desired segment length
MAX_SEGMENTS = 499
LM_TINY = 1e-8  # ELLIPSOID_TINY: calcTangentPoint's squared residual
LM_ITERATIONS, LM_DAMPING, LM_SEARCH = 20, 3, 10  # OpenSim: up to 50, 1000, 1000; measured at most 10, 1, 6
NEWTON = 30  # iterations of the closest-point Newton solves (OpenSim: up to 64; measured: <= 17 in 99.9 %)
NEWTON_STOP = 1e-9  # OpenSim stops at |f| < 1e-9, far from converged near the medial axis: kept, the fan depends on it


def _guard(x):
    """x, or 1 where x is 0 (a denominator whose other branch is selected)."""
    return ca.if_else(x == 0, 1, x)


def _near_zero(x):
    return ca.fabs(x) <= ROUNDOFF_ERROR


def _ellipse_quartic(a, b, u, v, t):
    """(f, f'): closestPointToEllipse's quartic in t and its derivative."""
    a2, b2 = a * a, b * b
    a2u2, b2v2 = a2 * u * u, b2 * v * v
    p, q = t + a2, t + b2
    return p * p * q * q - a2u2 * q * q - b2v2 * p * p, 2 * (p * q * (p + q) - a2u2 * q - b2v2 * p)


def _ellipse_t(a, b, u, v):
    """closestPointToEllipse's Newton on the quartic in t, OpenSim's start and stopping test."""
    t = ca.if_else((u / a) ** 2 + (v / b) ** 2 < 1, 0, max(a, b) * ca.sqrt(u * u + v * v))
    done = ca.SX(0)
    for _ in range(NEWTON):
        f, fp = _ellipse_quartic(a, b, u, v, t)
        done = ca.logic_or(done, ca.fabs(f) < NEWTON_STOP)
        t = select(done, t, t - f / _guard(fp))
    return t


@lru_cache(maxsize=None)
def _ellipse_residual(a: float, b: float) -> ca.Function:
    """(t, u, v) -> closestPointToEllipse's quartic, for implicit derivatives."""
    t, u, v = ca.SX.sym("t"), ca.SX.sym("u"), ca.SX.sym("v")
    return ca.Function("ellipse_quartic", [t, u, v], [_ellipse_quartic(a, b, u, v, t)[0]], ["t", "u", "v"], ["f"])


def _ellipse_newton(a, b, u, v, solves):
    """WrapEllipsoid::closestPointToEllipse away from the axes: (x, y)."""
    a2, b2 = a * a, b * b
    t = solves.root(lambda: _ellipse_t(a, b, u, v), _ellipse_residual(a, b), u, v)
    return a2 * u / _guard(t + a2), b2 * v / _guard(t + b2)


def _closest_to_ellipse(a, b, u, v, solves):
    """Closest point (x, y) on the ellipse (x/a)^2 + (y/b)^2 = 1 to (u, v), with OpenSim's cases near
    the axes."""
    near_u, near_v = _near_zero(u), _near_zero(v)
    # both near the origin
    both = (select(u < 0, -a, a), v) if a < b else (u, select(v < 0, -b, b))
    # u == 0
    if a >= b:
        on_u = (u, select(v >= 0, b, -b))
    else:
        y = b * b * v / (b * b - a * a)
        inner = (a * ca.sqrt(ca.fabs(1 - (y / b) ** 2)), y)
        far = ca.fabs(v) >= b - a * a / b
        on_u = (select(far, u, inner[0]), select(far, select(v >= 0, b, -b), inner[1]))
    # v == 0
    if b >= a:
        on_v = (select(u >= 0, a, -a), v)
    else:
        x = a * a * u / (a * a - b * b)
        inner = (x, b * ca.sqrt(ca.fabs(1 - (x / a) ** 2)))
        far = ca.fabs(u) >= a - b * b / a
        on_v = (select(far, select(u >= 0, a, -a), inner[0]), select(far, v, inner[1]))
    general = _ellipse_newton(a, b, u, v, solves)
    return tuple(select(ca.logic_and(near_u, near_v), both[k], select(near_u, on_u[k], select(near_v, on_v[k],
                                                                                              general[k])))
                 for k in range(2))


def _closest_in_plane(radii, point, axis, solves):
    """findClosestPoint with specialCaseAxis `axis`: the point keeps its `axis` coordinate, the other two
    are the closest point of the cross-section ellipse (OpenSim's orders: yz, zx, xy)."""
    j, k = {0: (1, 2), 1: (2, 0), 2: (0, 1)}[axis]
    x_j, x_k = _closest_to_ellipse(radii[j], radii[k], point[j], point[k], solves)
    out = [None, None, None]
    out[axis], out[j], out[k] = point[axis], x_j, x_k
    return ca.vertcat(*out)


def _newton_start(radii, u):
    """The closest-point Newton's start: t = 0 inside the ellipsoid, else max(radii) |u|; not done."""
    return ca.if_else(sum((u[i] / radii[i]) ** 2 for i in range(3)) < 1, 0, max(radii) * ca.norm_2(u)), ca.SX(0)


def _sextic(radii, u, t):
    """(f, f'): findClosestPoint's sextic in t and its derivative."""
    a2 = [r * r for r in radii]
    c = [a2[i] * u[i] ** 2 for i in range(3)]
    p, q, r = t + a2[0], t + a2[1], t + a2[2]
    f = (p * q * r) ** 2 - c[0] * (q * r) ** 2 - c[1] * (p * r) ** 2 - c[2] * (p * q) ** 2
    fp = 2 * (p * q * r * (q * r + p * r + p * q) - c[0] * q * r * (q + r) - c[1] * p * r * (p + r)
              - c[2] * p * q * (p + q))
    return f, fp


@lru_cache(maxsize=None)
def _sextic_residual(radii: tuple) -> ca.Function:
    """(t, u) -> findClosestPoint's sextic, for implicit derivatives."""
    t, u = ca.SX.sym("t"), ca.SX.sym("u", 3)
    return ca.Function("sextic", [t, u], [_sextic(radii, u, t)[0]], ["t", "u"], ["f"])


def _newton_steps(radii, u, t, done, steps):
    """`steps` steps of findClosestPoint's Newton on the sextic in t, each taken only while |f| >= NEWTON_STOP."""
    for _ in range(steps):
        f, fp = _sextic(radii, u, t)
        done = ca.logic_or(done, ca.fabs(f) < NEWTON_STOP)
        t = select(done, t, t - f / _guard(fp))
    return t, done


def _newton_point(radii, u, t):
    return ca.vertcat(*[(radii[i] * radii[i]) * u[i] / _guard(t + radii[i] * radii[i]) for i in range(3)])


@lru_cache(maxsize=None)
def _closest_t(radii: tuple) -> ca.Function:
    """findClosestPoint's general case: u -> t of Newton on the sextic (the closest point is `_newton_point`)."""
    u = ca.SX.sym("u", 3)
    t, done = _newton_start(radii, u)
    t, _ = _newton_steps(radii, u, t, done, NEWTON)
    return ca.Function("ellipsoid_closest_t", [u], [t])


FAN_CHUNKS = (8, 4, 4, 4, 4, 4, 2)  # the fan's Newton steps (NEWTON in all), later chunks run while a point needs them


@lru_cache(maxsize=None)
def _fan_finish(radii: tuple, count: int) -> ca.Function:
    """(u 3 x count, t 1 x count) -> the closest points `_newton_point`."""
    u, t = ca.SX.sym("u", 3), ca.SX.sym("t")
    return ca.Function("fan_finish", [u, t], [_newton_point(radii, u, t)]).map(count)


@lru_cache(maxsize=None)
def _closest_fan(radii: tuple, count: int) -> ca.Function:
    """The t of `_closest_t` for `count` points (3 x count) at once, its Newton steps in FAN_CHUNKS: a chunk after
    the first runs only while some point has not met the stopping test (an MX switch; when all have, the steps left
    would change nothing), so the fan costs the steps its slowest point needs, not NEWTON."""
    u, t, done = ca.SX.sym("u", 3), ca.SX.sym("t"), ca.SX.sym("done")
    start = ca.Function("fan_start", [u], list(_newton_start(radii, u))).map(count)
    points = ca.MX.sym("u", 3, count)
    t_all, done_all = start(points)
    for k, steps in enumerate(FAN_CHUNKS):
        chunk = ca.Function(f"fan_newton_{k}", [u, t, done], list(_newton_steps(radii, u, t, done, steps))).map(count)
        if k == 0:
            t_all, done_all = chunk(points, t_all, done_all)
            continue
        m_points, m_t, m_done = ca.MX.sym("u", 3, count), ca.MX.sym("t", 1, count), ca.MX.sym("done", 1, count)
        keep = ca.Function(f"fan_keep_{k}", [m_points, m_t, m_done], [m_t, m_done])
        switch = ca.Function.if_else(f"fan_switch_{k}", chunk, keep)
        t_all, done_all = switch(ca.sum2(done_all) < count, points, t_all, done_all)
    return ca.Function("ellipsoid_closest_fan", [points], [t_all], {"never_inline": True})


def _closest(radii, point, solves):
    """findClosestPoint(..., specialCaseAxis=-1): points within 2e-13 of a coordinate plane use the
    narrowest such cross-section."""
    radii = tuple(radii)
    result = _newton_point(radii, point, solves.root(lambda: _closest_t(radii)(point), _sextic_residual(radii), point))
    sums = [sum(radii) - radii[i] for i in range(3)]
    for i in sorted(range(3), key=lambda i: -sums[i]):  # narrowest last, so it wins
        result = select(_near_zero(point[i]), _closest_in_plane(radii, point, i, solves), result)
    return result


def _residuals(r, d, point, a, vs, vs4):
    """calcTangentPoint's conditions: in the plane, on the surface, tangent plane (offset d) through r and `point`."""
    n = 2 * r / a ** 2
    return ca.vertcat(ca.dot(vs, r) + vs4, ca.sumsqr(r / a) - 1, ca.dot(n, r) + d, ca.dot(n, point) + d)


def _tangent_point(point, e, start, radii, vs, vs4, solves):
    """WrapEllipsoid::calcTangentPoint: the point of the plane vs . x + vs4 = 0 on the surface whose tangent line
    passes through `point`, by OpenSim's Levenberg-Marquardt from `start` to a squared residual of 1e-8 (its
    steps and line search unrolled: LM_ITERATIONS outer, LM_DAMPING and LM_SEARCH inner); `point` itself when
    it is on the surface (|e| < 1e-4). Which of the two tangent points it reaches depends on `start`."""
    z = solves.root(lambda: ca.vertcat(*_levenberg_marquardt(point, start, radii, vs, vs4)),
                    _tangent_residuals(tuple(radii)), point, vs, vs4)
    return select(ca.fabs(e) < TOLERANCE_1, point, z[:3])


@lru_cache(maxsize=None)
def _tangent_residuals(radii: tuple) -> ca.Function:
    """((r, d), point, vs, vs4) -> calcTangentPoint's four residuals in its four unknowns, for implicit
    derivatives."""
    z, point, vs, vs4 = ca.SX.sym("z", 4), ca.SX.sym("point", 3), ca.SX.sym("vs", 3), ca.SX.sym("vs4")
    return ca.Function("tangent_point", [z, point, vs, vs4], [_residuals(z[:3], z[3], point, ca.DM(radii), vs, vs4)],
                       ["z", "point", "vs", "vs4"], ["f"])


def _levenberg_marquardt(point, start, radii, vs, vs4):
    """calcTangentPoint's Levenberg-Marquardt iterations: (r, d)."""
    a = ca.DM(radii)
    r = start
    d = -ca.dot(2 * r / a ** 2, r)
    ee = _residuals(r, d, point, a, vs, vs4)
    ssq = ca.sumsqr(ee)
    ssqo, alpha = ssq, ca.SX(0.01)
    for _ in range(LM_ITERATIONS):
        active = ssq > LM_TINY
        jacobian = ca.horzcat(ca.vertcat(vs, 0), ca.vertcat(2 * r / a ** 2, 0), ca.vertcat(2 * (2 * r) / a ** 2, 1),
                              ca.vertcat(2 * point / a ** 2, 1))
        pcos = ca.dot(unit(point - r), unit(point))
        dd = select(pcos > 0.1, 1 - pcos ** 100, 1)
        v = -ca.mtimes(jacobian, ee)
        normal = ca.mtimes(jacobian, jacobian.T)
        diagonal = ca.diag(ca.diag(normal))
        vt = ca.SX.zeros(4)
        for _ in range(LM_DAMPING):
            go = ca.logic_and(active, ssq >= ssqo)
            step = dd * ca.solve(normal + alpha * diagonal, v) / 16
            vt = select(go, step, vt)
            r, d = select(go, r + step[:3], r), select(go, d + step[3], d)
            ee = _residuals(r, d, point, a, vs, vs4)
            ssqo, ssq = select(go, ssq, ssqo), select(go, ca.sumsqr(ee), ssq)
            alpha = select(go, 4 * alpha, alpha)
        alpha = select(active, alpha / 8, alpha)
        fakt = ca.SX(0.5)
        for _ in range(LM_SEARCH):
            go = ca.logic_and(active, ssq <= ssqo)
            fakt = select(go, 2 * fakt, fakt)
            r, d = select(go, r + vt[:3] * fakt, r), select(go, d + vt[3] * fakt, d)
            ee = _residuals(r, d, point, a, vs, vs4)
            ssqo, ssq = select(go, ssq, ssqo), select(go, ca.sumsqr(ee), ssq)
        r, d = select(active, r - vt[:3] * fakt, r), select(active, d - vt[3] * fakt, d)
        ee = _residuals(r, d, point, a, vs, vs4)
        ssq = select(active, ca.sumsqr(ee), ssq)
        ssqo = select(active, ssq, ssqo)
    return r, d


def _surface_points(r1, r2, radii, vs, vs4, factor, far_side, count):
    """CalcDistanceOnEllipsoid: (length, first interior point, last interior point, segments)."""
    a = ca.DM(radii)
    chord = ca.norm_2(r1 - r2) / factor
    segments = ca.fmin(ca.floor(chord / SEGMENT), MAX_SEGMENTS)
    short = chord < SEGMENT
    axis_weights = [ca.fabs(vs[i]) for i in range(3)]
    imax = select(axis_weights[1] > axis_weights[0], 1, 0)
    imax = select(axis_weights[2] > select(imax == 1, axis_weights[1], axis_weights[0]), 2, imax)
    u = ca.vertcat(*[imax == i for i in range(3)])
    mu = -vs4 / _guard(ca.dot(vs, u))
    a0 = mu * u
    ar1, _ = normalize_or_zero(r1 - a0)
    ar2, _ = normalize_or_zero(r2 - a0)
    phi0 = safe_acos(ca.dot(ar1, ar2))
    n = ca.fmax(segments, 1)
    dphi = select(far_side, -(2 * math.pi - phi0) / n, phi0 / n)
    vsz, _ = normalize_or_zero(ca.cross(ar1, ar2))
    vsy = ca.cross(vsz, ar1)
    f2 = a0 / a
    previous, length = r1, 0
    first, last = r1, r1
    for k in range(1, count + 1):
        phi = k * dphi
        r = ca.cos(phi) * ar1 + ca.sin(phi) * vsy
        f1 = r / a
        aa, bb, cc = ca.dot(f1, f1), 2 * ca.dot(f1, f2), ca.dot(f2, f2) - 1
        mu3 = (-bb + safe_sqrt(bb * bb - 4 * aa * cc)) / (2 * aa)
        here = select(k < segments, a0 + mu3 * r, r2)
        length = length + select(k <= segments, ca.norm_2(here - previous), 0)
        first = select(k == 1, here, first)
        last = select(k == segments - 1, here, last)
        previous = here
    return select(short, ca.norm_2(r1 - r2), length), first, last, select(short, 1, segments)


def _plane_point(p1, p2, r1, r2, radii, method, solves):
    """(c1, sv-independent start points, mu after blending, fan weight or -inf): the wrap plane's point."""
    p1p2 = p1 - p2
    r1r2 = r2 - r1
    mu_all = [ca.fabs(v) for v in ca.vertsplit(unit(p1p2))]
    t = [-r1[i] / _guard(r1r2[i]) for i in range(3)]
    frans = [_closest_in_plane(radii, r1 + t[i] * r1r2, i, solves) for i in range(3)]
    best = select(mu_all[1] > mu_all[0], 1, 0)
    best = select(mu_all[2] > select(best == 1, mu_all[1], mu_all[0]), 2, best)
    mu = sum((best == i) * mu_all[i] for i in range(3))
    t_best = sum((best == i) * t[i] for i in range(3))
    c1_frans = sum((best == i) * frans[i] for i in range(3))
    if method == "midpoint":
        c1 = _closest(radii, r1 + 0.5 * r1r2, solves)
        return c1, c1, c1, mu, -ca.inf
    if method == "axial":
        inside = ca.logic_and(t_best > 0, t_best < 1)
        return c1_frans, select(inside, c1_frans, r1), select(inside, c1_frans, r2), mu, -ca.inf
    s = select(ca.logic_or(t_best < 0, t_best > 1), 0,
               select(t_best < SV_BOUNDARY_BLEND, t_best / SV_BOUNDARY_BLEND,
                      select(t_best > 1 - SV_BOUNDARY_BLEND, (1 - t_best) / SV_BOUNDARY_BLEND, 1)))
    mu = select(ca.logic_and(mu > MU_BLEND_MIN, s < 1), MU_BLEND_MIN + s * (mu - MU_BLEND_MIN), mu)
    samples = ca.horzcat(*[r1 + (i / FAN_SAMPLES) * r1r2 for i in range(1, FAN_SAMPLES - 1)])
    count = FAN_SAMPLES - 2
    closest = _fan_finish(tuple(radii), count)(samples, solves.root(
        lambda: _closest_fan(tuple(radii), count)(samples), _sextic_residual(tuple(radii)), samples, count=count))
    blades = closest - samples
    blades = blades / ca.repmat(ca.if_else(ca.sum1(blades ** 2) > 0, ca.sqrt(ca.sum1(blades ** 2)), 1), 3, 1)
    direction = unit(ca.sum2(blades))
    fan_c1 = _closest(radii, r1 + 0.5 * r1r2 + direction, solves)
    tt = (mu - MU_BLEND_MIN) / (MU_BLEND_MAX - MU_BLEND_MIN)
    blended = _closest(radii, tt * c1_frans + (1 - tt) * fan_c1, solves)
    c1 = select(mu <= MU_BLEND_MIN, fan_c1, select(mu < MU_BLEND_MAX, blended, c1_frans))
    fan_weight = select(mu <= MU_BLEND_MIN, 1, select(mu < MU_BLEND_MAX, 1 - tt, -ca.inf))
    return c1, c1, c1, mu, fan_weight


def _code(p1, p2, radii):
    """(code, p1e, p2e, intersection points) in scaled coordinates: INSIDE_RADIUS, NO_WRAP or MANDATORY_WRAP."""
    a = ca.DM(radii)
    p1e, p2e = ca.sumsqr(p1 / a) - 1, ca.sumsqr(p2 / a) - 1
    inside = ca.logic_or(p1e < -TOLERANCE_1, p2e < -TOLERANCE_1)
    collinear = ca.fabs(ca.dot(unit(p1), unit(p2)) - 1) < TOLERANCE_1
    p1p2 = p1 - p2
    f1, f2 = p1p2 / a, p2 / a
    aa, bb, cc = ca.dot(f1, f1), 2 * ca.dot(f1, f2), ca.dot(f2, f2) - 1
    disc = bb * bb - 4 * aa * cc
    l1 = (-bb + safe_sqrt(disc)) / (2 * _guard(aa))
    l2 = (-bb - safe_sqrt(disc)) / (2 * _guard(aa))
    crosses = ca.logic_and(disc >= 0, ca.logic_and(ca.logic_and(l1 > 0, l1 < 1), ca.logic_and(l2 > 0, l2 < 1)))
    code = select(inside, INSIDE_RADIUS, select(ca.logic_or(collinear, ca.logic_not(crosses)), NO_WRAP,
                                                MANDATORY_WRAP))
    # Off the crossing case the intersection points are made up so that every branch stays finite.
    r1 = select(crosses, p2 + l1 * p1p2, ca.DM([radii[0], 0, 0]))
    r2 = select(crosses, p2 + l2 * p1p2, ca.DM([0, radii[1], 0]))
    return code, p1e, p2e, r1, r2


def _wrap_expressions(p1_m, p2_m, radii_m, axis, sign, method, solves):
    """The wrap of a segment that crosses the ellipsoid: [r1, r2, wrap_length], metres, its solves from `solves`."""
    factor = 3.0 / sum(radii_m)
    radii = tuple(r * factor for r in radii_m)
    p1, p2 = p1_m * factor, p2_m * factor
    _, p1e, p2e, r1, r2 = _code(p1, p2, radii)
    c1, start1, start2, mu, fan_weight = _plane_point(p1, p2, r1, r2, radii, method, solves)
    if sign != 0:
        flip = dsign(c1[axis]) != sign
        mirrored = ca.vertcat(*[-c1[i] if i == axis else c1[i] for i in range(3)])
        # OpenSim replaces a fan weight of -inf (no fan) by one from mu, but its test is |w - (-inf)| <= 2e-13,
        # which is NaN <= 2e-13, false: without a fan the mirrored c1 is used as it is.
        weight = ca.fmin(fan_weight, 1)
        pulled = ca.vertcat(*[mirrored[i] * (1 - weight) if i == axis else mirrored[i] for i in range(3)])
        pulled = select(weight > 0, pulled, mirrored)  # finite where unused (no fan: weight -inf)
        mirrored_c1 = select(weight > 0, _closest(radii, pulled, solves), mirrored)
        start1, start2 = select(flip, mirrored, start1), select(flip, mirrored, start2)
        c1 = select(flip, mirrored_c1, c1)
    vs = unit(ca.cross(p1 - p2, p1 - c1))
    vs4 = -ca.dot(vs, c1)
    t1 = _tangent_point(p1, p1e, start1, radii, vs, vs4, solves)
    t2 = _tangent_point(p2, p2e, start2, radii, vs, vs4, solves)
    count = min(MAX_SEGMENTS, int(math.ceil(2 * max(radii_m) / SEGMENT)) + 2)  # chords are at most 2 max(radii)
    length, w1, w2, segments = _surface_points(t1, t2, radii, vs, vs4, factor, 0, count)
    if sign != 0:
        back1 = ca.dot(unit(p1 - t1), unit(w1 - t1)) > 0
        back2 = ca.dot(unit(p2 - t2), unit(w2 - t2)) > 0
        far = ca.logic_and(segments >= 2, ca.logic_or(back1, back2))
        far_length, _, _, _ = _surface_points(t1, t2, radii, vs, vs4, factor, 1, count)
        length = select(far, far_length, length)
    return [t1 / factor, t2 / factor, length / factor]


def _wrapped(radii, axis, sign, method):
    """(p1, p2) -> (r1, r2, wrap_length, solves): the wrap of a segment that crosses the ellipsoid and its solves'
    results (`Solves.record`)."""
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    solves = Solves()
    outputs = _wrap_expressions(p1, p2, radii, axis, sign, method, solves)
    return ca.Function("wrap_ellipsoid_wrapped", [p1, p2], [*outputs, solves.record()], ["p1", "p2"],
                       ["r1", "r2", "wrap_length", "solves"])


def _wrapped_jacobian(radii, axis, sign, method, count):
    """(p1, p2, solves) -> the Jacobian blocks of (r1, r2, wrap_length) by (p1, p2), from the recorded solves
    (`Solves`: the closed-form parts only)."""
    p1, p2, given = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3), ca.SX.sym("solves", count)
    outputs = _wrap_expressions(p1, p2, radii, axis, sign, method, Solves(given))
    return ca.Function("wrap_ellipsoid_wrapped_jacobian", [p1, p2, given],
                       [ca.densify(ca.jacobian(o, p)) for o in outputs for p in (p1, p2)])


def _implicit_wrap(classify, unwrapped, radii, axis, sign, method):
    """(valid, p1, p2) -> (code, r1, r2, wrap_length, solves): `ellipsoid_wrap` where `valid` (else NO_WRAP, p1, p2,
    0 without evaluating it, as `trajopt.model.paths.wrapping.path.when_valid`) and its solves' results, whose first
    derivative is a custom Jacobian evaluated from those (`Solves`: the closed-form parts only; nothing below this
    Function is evaluated again to differentiate it)."""
    wrapped = _wrapped(radii, axis, sign, method)
    count = wrapped.numel_out(3)
    p1, p2, given = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3), ca.SX.sym("solves", count)
    none = ca.Function("wrap_ellipsoid_unwrapped", [p1, p2], [*unwrapped(p1, p2), ca.SX.zeros(count)])
    switch = ca.Function.conditional("wrap_ellipsoid_switch", [none], wrapped)
    skip = ca.Function("wrap_ellipsoid_skipped", [p1, p2], [ca.SX(NO_WRAP), p1, p2, ca.SX(0), ca.SX.zeros(count)])
    m1, m2, valid = ca.MX.sym("p1", 3), ca.MX.sym("p2", 3), ca.MX.sym("valid")
    code = classify(m1, m2)
    run = ca.Function("wrap_ellipsoid_run", [m1, m2], [code, *switch(code == MANDATORY_WRAP, m1, m2)])
    outputs = ca.Function.if_else("wrap_ellipsoid_valid", run, skip)(valid, m1, m2)
    identity, zero = ca.SX.eye(3), ca.SX.zeros(3, 3)
    none_jacobian = ca.Function("wrap_ellipsoid_unwrapped_jacobian", [p1, p2, given],
                                [identity, zero, zero, identity, ca.SX.zeros(1, 3), ca.SX.zeros(1, 3)])
    blocks_of = ca.Function.conditional("wrap_ellipsoid_jacobian_switch", [none_jacobian],
                                        _wrapped_jacobian(radii, axis, sign, method, count))
    names, inputs = ["code", "r1", "r2", "wrap_length", "solves"], ["valid", "p1", "p2"]
    nominal = [ca.MX.sym(n, o.sparsity()) for n, o in zip(names, outputs)]
    blocks = blocks_of(ca.logic_and(valid, nominal[0] == MANDATORY_WRAP), m1, m2, nominal[4])
    by_valid = [ca.MX(o.numel(), 1) for o in nominal]
    jacobian = ca.Function("jac_wrap_ellipsoid", [valid, m1, m2, *nominal],
                           [by_valid[0], ca.MX(1, 3), ca.MX(1, 3),
                            *[b for k in range(3) for b in (by_valid[k + 1], *blocks[2 * k:2 * k + 2])],
                            by_valid[4], ca.MX(count, 3), ca.MX(count, 3)],
                           [*inputs, *[f"out_{n}" for n in names]], [f"jac_{o}_{i}" for o in names for i in inputs])
    return ca.Function("wrap_ellipsoid", [valid, m1, m2], outputs, inputs, names,
                       {"never_inline": True, "custom_jacobian": jacobian, "jac_penalty": 0,
                        "enable_forward": False, "enable_reverse": False, "enable_fd": False})


@lru_cache(maxsize=None)
def ellipsoid_wrap(radii: tuple, axis: int, sign: int, method: str,
                   derivatives: WrapDerivatives = WrapDerivatives.UNROLLED) -> ca.Function:
    """casadi Function (p1, p2) -> (code, r1, r2, wrap_length): OpenSim's wrap of the straight segment p1-p2
    (wrap frame) over the ellipsoid with semi-axes `radii`; `sign` 0 is quadrant 'all'; `method` is the
    PathWrap's 'hybrid', 'midpoint' or 'axial'; `derivatives` how the closest-point and tangent-point solves are
    differentiated (`trajopt.model.paths.wrapping.implicit`; the values are the same).

    The wrap itself (some 4e5 operations, most of them the fan's closest points) is evaluated only for a
    segment that crosses the ellipsoid: the Function is an MX switch, which SX paths call as one node."""
    radii = tuple(float(r) for r in radii)
    factor = 3.0 / sum(radii)
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    code = _code(p1 * factor, p2 * factor, tuple(r * factor for r in radii))[0]
    classify = ca.Function("wrap_ellipsoid_code", [p1, p2], [code])
    unwrapped = ca.Function("wrap_ellipsoid_unwrapped", [p1, p2], [p1, p2, ca.SX(0)])
    arguments = (radii, int(axis), int(sign), str(method).lower())
    if derivatives is WrapDerivatives.IMPLICIT:
        return _implicit_wrap(classify, unwrapped, *arguments)
    wrapped = _wrapped(*arguments)
    wrapped = ca.Function("wrap_ellipsoid_wrapped", [p1, p2], wrapped(p1, p2)[:3])
    switch = ca.Function.conditional("wrap_ellipsoid_switch", [unwrapped], wrapped)
    m1, m2 = ca.MX.sym("p1", 3), ca.MX.sym("p2", 3)
    code = classify(m1, m2)
    r1, r2, wrap_length = switch(code == MANDATORY_WRAP, m1, m2)
    return ca.Function("wrap_ellipsoid", [m1, m2], [code, r1, r2, wrap_length], ["p1", "p2"],
                       ["code", "r1", "r2", "wrap_length"], {"never_inline": True})
