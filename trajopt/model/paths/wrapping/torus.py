"""Wrapping over a torus as OpenSim 4.6 computes it (WrapTorus::wrapLine).

The torus lies about the wrap frame's z axis: its tube (radius `inner_radius`) follows the circle of radius
`outer_radius` in the xy plane. OpenSim wraps the path on the inside of the tube (it passes through the hole):
1. findClosestPoint: the point of the circle closest to the straight segment, by a search along the line from
   each end point in turn - MINPACK's Levenberg-Marquardt (lmdif, OpenSim's C translation with its changes:
   forward differences with a fixed step of 1e-5, an initial step bound of 0.2) on the residual
   calcCircleResids, with ftol = xtol = 1e-4 - reproduced step for step, so the point is OpenSim's to
   round-off (its last steps are Newton-fast: at 99 % of ring-like segments it stops within 2e-10 m of the
   residual's root, but which root it reaches, and where it stops, are its own). Of the two searches the one
   nearer the circle wins (with a quadrant: the one on the active side; neither: no wrap). The residual is
   not the derivative of the squared distance (its circle term is doubled): it is OpenSim's;
2. a cylinder of the tube radius, 10 km long, tangent to the circle at that point (its x axis toward the
   torus' axis, quadrant +x, its y axis the torus' -z) wraps the segment as WrapCylinder does.

OpenSim's WrapTorus returns 'wrapped' whenever step 1 finds a point, even when the cylinder does not wrap;
then the wrap result holds the previous wrap's tangent points times a NaN factor, so the segment is no
candidate (its length change is NaN) but the result is not 'no wrap' (code WRAPPED_EMPTY here).
"""

from __future__ import annotations

from functools import lru_cache

import casadi as ca

from trajopt.model.paths.wrapping.cylinder import cylinder_wrap
from trajopt.model.paths.wrapping.vectors import (
    NO_WRAP, WRAPPED, WRAPPED_EMPTY, dsign, is_placeholder, normalize_or_zero, select,
)

CYLINDER_LENGTH = 10000.0  # CYL_LENGTH of WrapTorus.cpp
FTOL = XTOL = 1e-4
STEP_FACTOR = 0.2
DIFFERENCE = 1e-5  # fdjac2's fixed step (OpenSim's change to MINPACK)
MACHEP, DWARF = 1.2e-16, 1.0e-38  # Lmdif.cpp
MAX_EVALUATIONS = 500
LMPAR_ITERATIONS = 10
# Unrolled lmdif trial steps (each a Jacobian if the last step succeeded, then a trial point). Measured on 60000
# random segments (points within 0.3 m of circles of 3-5 cm): at most 20, 99.9 % within 15; OpenSim allows 500
# function evaluations. A search still running after LM_STEPS keeps its last iterate.
LM_STEPS = 24


def _guard(x):
    return ca.if_else(x == 0, 1, x)


def _residual(p1, p2, radius, u):
    """WrapTorus::calcCircleResids at u (distance from p1 along the unit direction to p2)."""
    n = (p2 - p1) / _guard(ca.norm_2(p2 - p1))
    c2 = 2 * ca.dot(p1, n)
    c3 = p1[0] * n[0] + p1[1] * n[1]
    c4 = n[0] * n[0] + n[1] * n[1]
    c5 = p1[0] * p1[0] + p1[1] * p1[1]
    root = u * u * c4 + 2 * c3 * u + c5
    root = ca.sqrt(ca.if_else(root > 0, root, 1))  # 0 only when the line meets the z axis
    return c2 + 2 * u - 2 * radius * (2 * c4 * u + 2 * c3) / root


def _lmpar(r, qtb, d, delta, par):
    """MINPACK lmpar for one unknown: r the R factor (nonzero), qtb = Q^T f, d the scale. Returns (x, par):
    the step is -x."""
    x = qtb / r
    dxnorm = ca.fabs(d * x)
    fp = dxnorm - delta
    gauss_newton = fp <= 0.1 * delta
    t = ca.fabs(d * (d * x / _guard(dxnorm)) / r)
    parl = ((fp / delta) / _guard(t)) / _guard(t)
    gnorm = ca.fabs(r * qtb / d)
    paru = gnorm / delta
    paru = select(paru == 0, DWARF / ca.fmin(delta, 0.1), paru)
    par = ca.fmin(ca.fmax(par, parl), paru)
    par = select(par == 0, gnorm / _guard(dxnorm), par)
    stop = gauss_newton
    for k in range(1, LMPAR_ITERATIONS + 1):
        par_k = select(par == 0, ca.fmax(DWARF, 0.001 * paru), par)
        s = ca.sqrt(par_k) * d
        small = ca.fabs(r) < ca.fabs(s)
        cotan = r / _guard(s)
        sin_a = 0.5 / ca.sqrt(0.25 + 0.25 * cotan * cotan)
        tan = s / r
        cos_b = 0.5 / ca.sqrt(0.25 + 0.25 * tan * tan)
        cos, sin = select(small, sin_a * cotan, cos_b), select(small, sin_a, cos_b * tan)
        sdiag = select(s == 0, r, cos * r + sin * s)
        x_k = select(sdiag == 0, 0, select(s == 0, qtb, cos * qtb) / _guard(sdiag))
        dxnorm_k = ca.fabs(d * x_k)
        fp_old, fp_k = fp, dxnorm_k - delta
        accept = ca.logic_or(ca.fabs(fp_k) <= 0.1 * delta,
                             ca.logic_and(parl == 0, ca.logic_and(fp_k <= fp_old, fp_old < 0)))
        if k == LMPAR_ITERATIONS:
            accept = ca.SX(1)
        wa1 = ca.fabs(d * (d * x_k / _guard(dxnorm_k)) / _guard(sdiag))
        parc = ((fp_k / delta) / _guard(wa1)) / _guard(wa1)
        parl_new = select(fp_k > 0, ca.fmax(parl, par_k), parl)
        paru_new = select(fp_k < 0, ca.fmin(paru, par_k), paru)
        par_new = ca.fmax(parl_new, par_k + parc)
        running = ca.logic_not(stop)
        x = select(running, x_k, x)
        fp = select(running, fp_k, fp)
        finish = ca.logic_and(running, accept)
        par = select(running, select(accept, par_k, par_new), par)
        parl = select(ca.logic_and(running, ca.logic_not(accept)), parl_new, parl)
        paru = select(ca.logic_and(running, ca.logic_not(accept)), paru_new, paru)
        stop = ca.logic_or(stop, finish)
    return x, select(gauss_newton, 0, par)


def _lmdif(p1, p2, radius):
    """OpenSim's lmdif_C on calcCircleResids from u = 0: (u, done, trial steps taken)."""
    def f(u):
        return _residual(p1, p2, radius, u)

    x = ca.SX(0)
    fvec = f(x)
    fnorm = ca.fabs(fvec)
    par, delta, xnorm, diag = ca.SX(0), ca.SX(0), ca.SX(0), ca.SX(1)
    r, qtf, gnorm = ca.SX(0), ca.SX(0), ca.SX(0)
    first, jacobian_due, done = ca.SX(1), ca.SX(1), ca.SX(0)
    nfev, steps = ca.SX(1), ca.SX(0)
    for step in range(LM_STEPS):
        # Outer loop: the Jacobian, its QR factors and the gradient test (after a successful step).
        jac = ca.logic_and(ca.logic_not(done), jacobian_due)
        j = (f(x + DIFFERENCE) - fvec) / DIFFERENCE
        acnorm = ca.fabs(j)
        r = select(jac, -j, r)
        qtf = select(jac, select(j != 0, -fvec, fvec), qtf)
        if step == 0:  # lmdif's first outer iteration: scale by the Jacobian, step bound from x = 0
            diag = select(acnorm == 0, 1, acnorm)
            xnorm = ca.fabs(diag * x)
            delta = STEP_FACTOR * xnorm
            delta = select(ca.fabs(delta) <= 1e-4, STEP_FACTOR, delta)
        gnorm_now = select(ca.logic_and(fnorm != 0, acnorm != 0),
                           ca.fabs((-j) * (qtf / _guard(fnorm)) / _guard(acnorm)), 0)
        gnorm = select(jac, gnorm_now, gnorm)
        done = ca.logic_or(done, ca.logic_and(jac, gnorm <= 0))
        diag = select(jac, ca.fmax(diag, acnorm), diag)
        # Inner loop: one trial step.
        trial = ca.logic_not(done)
        lm_x, par_new = _lmpar(_guard(r), qtf, diag, delta, par)
        p = -lm_x
        candidate = x + p
        pnorm = ca.fabs(diag * p)
        delta = select(ca.logic_and(trial, first), ca.fmin(delta, pnorm), delta)
        fvec1 = f(candidate)
        fnorm1 = ca.fabs(fvec1)
        ratio_f = fnorm1 / _guard(fnorm)
        actred = select(0.1 * fnorm1 < fnorm, 1 - ratio_f * ratio_f, -1)
        temp1 = ca.fabs(r * p) / _guard(fnorm)
        temp2 = ca.sqrt(par_new) * pnorm / _guard(fnorm)
        prered = temp1 * temp1 + temp2 * temp2 / 0.5
        dirder = -(temp1 * temp1 + temp2 * temp2)
        ratio = select(prered != 0, actred / _guard(prered), 0)
        shrink = select(actred >= 0, 0.5, 0.5 * dirder / _guard(dirder + 0.5 * actred))
        shrink = select(ca.logic_or(0.1 * fnorm1 >= fnorm, shrink < 0.1), 0.1, shrink)
        grow = ca.logic_or(par_new == 0, ratio >= 0.75)
        delta_new = select(ratio <= 0.25, shrink * ca.fmin(delta, pnorm / 0.1), select(grow, pnorm / 0.5, delta))
        par_next = select(ratio <= 0.25, par_new / shrink, select(grow, 0.5 * par_new, par_new))
        success = ratio >= 1e-4
        x_new = select(success, candidate, x)
        xnorm_new = select(success, ca.fabs(diag * candidate), xnorm)
        converged = ca.logic_and(ca.logic_and(ca.fabs(actred) <= FTOL, prered <= FTOL), 0.5 * ratio <= 1)
        converged = ca.logic_or(converged, delta_new <= XTOL * xnorm_new)
        nfev = nfev + trial
        stringent = ca.logic_and(ca.logic_and(ca.fabs(actred) <= MACHEP, prered <= MACHEP), 0.5 * ratio <= 1)
        stop = ca.logic_or(ca.logic_or(converged, nfev >= MAX_EVALUATIONS),
                           ca.logic_or(stringent, ca.logic_or(delta_new <= MACHEP * xnorm_new, gnorm <= MACHEP)))
        x = select(trial, x_new, x)
        fvec = select(ca.logic_and(trial, success), fvec1, fvec)
        fnorm = select(ca.logic_and(trial, success), fnorm1, fnorm)
        xnorm = select(trial, xnorm_new, xnorm)
        delta = select(trial, delta_new, delta)
        par = select(trial, par_next, par)
        first = select(ca.logic_and(trial, success), 0, first)
        jacobian_due = select(trial, success, jacobian_due)
        steps = steps + trial
        done = ca.logic_or(done, ca.logic_and(trial, stop))
    return x, done, steps


def _circle_distance(a, radius):
    return ca.sqrt(ca.fmax(ca.dot(a, a) + radius * radius - 2 * radius * ca.sqrt(a[0] ** 2 + a[1] ** 2), 0))


@lru_cache(maxsize=None)
def closest_circle_point(radius: float, axis: int, sign: int) -> ca.Function:
    """WrapTorus::findClosestPoint: (p1, p2) -> (found, point on the circle, done, steps) - `done` and `steps`
    (lmdif trial steps, the larger of the two searches) tell whether LM_STEPS sufficed."""
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    u1, done1, steps1 = _lmdif(p1, p2, radius)
    u2, done2, steps2 = _lmdif(p2, p1, radius)
    mag = _guard(ca.norm_2(p2 - p1))
    a1 = p1 + u1 * (p2 - p1) / mag
    a2 = p2 + u2 * (p1 - p2) / mag
    second = _circle_distance(a1, radius) >= _circle_distance(a2, radius)
    found = ca.SX(1)
    if sign != 0:
        on1, on2 = dsign(a1[axis]) == sign, dsign(a2[axis]) == sign
        second = select(ca.logic_and(on1, on2), second, ca.logic_not(on1))
        found = ca.logic_or(on1, on2)
    a = select(second, a2, a1)
    planar = ca.sqrt(a[0] ** 2 + a[1] ** 2)
    point = ca.vertcat(a[0], a[1], 0) * radius / _guard(planar)
    return ca.Function("torus_closest_point", [p1, p2], [found, point, ca.logic_and(done1, done2),
                                                          ca.fmax(steps1, steps2)],
                       ["p1", "p2"], ["found", "point", "done", "steps"])


def _torus(inner: float, outer: float, axis: int, sign: int, single_wrap: bool):
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    found, closest, _, _ = closest_circle_point(outer, axis, sign)(p1, p2)
    x_axis, _ = normalize_or_zero(-closest)
    y_axis = ca.DM([0.0, 0.0, -1.0])
    z_axis = ca.cross(x_axis, y_axis)
    rotation = ca.horzcat(x_axis, y_axis, z_axis).T  # rows: the cylinder's axes in the torus frame
    origin = ca.mtimes(rotation, -closest)  # the closest point's image, (outer, 0, 0)

    def to_cylinder(p):
        return ca.mtimes(rotation, p) + origin

    def to_torus(r):
        return ca.mtimes(rotation.T, r - origin)

    code, r1, r2, wrap_length = cylinder_wrap(inner, CYLINDER_LENGTH, 0, 1, single_wrap)(to_cylinder(p1),
                                                                                         to_cylinder(p2))
    applied = ca.logic_and(found, code >= WRAPPED)
    code = select(found, select(applied, WRAPPED, WRAPPED_EMPTY), NO_WRAP)
    return (p1, p2), (code, select(applied, to_torus(r1), p1), select(applied, to_torus(r2), p2),
                      select(applied, wrap_length, 0))


@lru_cache(maxsize=None)
def torus_wrap(inner_radius: float, outer_radius: float, axis: int, sign: int, single_wrap: bool) -> ca.Function:
    """casadi Function (p1, p2) -> (code, r1, r2, wrap_length): OpenSim's wrap of the straight segment p1-p2 (wrap
    frame) through the torus with tube radius `inner_radius` about the circle of radius `outer_radius`; `sign` 0
    is quadrant 'all'; `single_wrap` is OpenSim's flag for a path with one wrap object. code is NO_WRAP,
    WRAPPED or WRAPPED_EMPTY (OpenSim's 'wrapped' without a wrap: no candidate)."""
    inputs, outputs = _torus(float(inner_radius), float(outer_radius), int(axis), int(sign), bool(single_wrap))
    wrapped = ca.Function("wrap_torus_segment", list(inputs), list(outputs))
    p1, p2 = ca.SX.sym("p1", 3), ca.SX.sym("p2", 3)
    placeholder = ca.Function("wrap_torus_placeholder", [p1, p2], [ca.SX(NO_WRAP), p1, p2, ca.SX(0)])
    real = ca.Function("wrap_torus_real", [p1, p2], [ca.logic_not(is_placeholder(p1, p2))])
    # The search (some 1e5 operations) runs only for the path's real segments, not its placeholders.
    switch = ca.Function.conditional("wrap_torus_switch", [placeholder], wrapped)
    m1, m2 = ca.MX.sym("p1", 3), ca.MX.sym("p2", 3)
    code, r1, r2, wrap_length = switch(real(m1, m2), m1, m2)
    return ca.Function("wrap_torus", [m1, m2], [code, r1, r2, wrap_length], ["p1", "p2"],
                       ["code", "r1", "r2", "wrap_length"], {"never_inline": True})
