"""Spatial (6D) vector algebra in Featherstone's convention, angular part first.

A motion transform from frame A to frame B is given by E (rotates A components into B) and r
(B's origin relative to A's origin, in A): X = [E 0; -E skew(r) E]. Functions apply transforms
without forming 6x6 matrices, which keeps SX graphs small.
"""

from __future__ import annotations

import casadi as ca

from trajopt.core.multibody.rotations import skew


def transform_motion(e, r, motion):
    """X v for a motion vector v (6 x k) given in A; result in B."""
    w, v = motion[0:3, :], motion[3:6, :]
    return ca.vertcat(ca.mtimes(e, w), ca.mtimes(e, v - _cross_columns(r, w)))


def transform_force_back(e, r, force):
    """X^T f for a force vector f (6 x k) given in B; result in A (moment about A's origin)."""
    n, f = force[0:3, :], force[3:6, :]
    f_a = ca.mtimes(e.T, f)
    return ca.vertcat(ca.mtimes(e.T, n) + _cross_columns(r, f_a), f_a)


def motion_transform_matrix(e, r):
    """The 6x6 matrix X (used by the composite-rigid-body algorithm)."""
    return ca.vertcat(ca.horzcat(e, ca.DM.zeros(3, 3)), ca.horzcat(-ca.mtimes(e, skew(r)), e))


def cross_motion(velocity, motion):
    """velocity x motion (Featherstone's crm)."""
    w, v = velocity[0:3], velocity[3:6]
    mw, mv = motion[0:3, :], motion[3:6, :]
    return ca.vertcat(_cross_columns(w, mw), _cross_columns(v, mw) + _cross_columns(w, mv))


def cross_force(velocity, force):
    """velocity x* force (Featherstone's crf)."""
    w, v = velocity[0:3], velocity[3:6]
    n, f = force[0:3], force[3:6]
    return ca.vertcat(ca.cross(w, n) + ca.cross(v, f), ca.cross(w, f))


def _cross_columns(a, b):
    """a x b for each column of b."""
    if b.size2() == 1:
        return ca.cross(a, b)
    return ca.horzcat(*[ca.cross(a, b[:, k]) for k in range(b.size2())]) if b.size2() else b
