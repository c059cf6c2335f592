"""Holonomic kinematic constraints φ(q) = 0 of a Model and the dynamics that enforce them.

A constraint is a small frozen object with ``size`` (its number of equations) and ``errors(model, q)``
(its φ, a casadi expression). Three kinds, each with OpenSim's (Simbody's) equations, so that the
multipliers are OpenSim's:

- ``CoordinateCoupler``: φ = scale f(q_independent) − q_dependent (OpenSim's CoordinateCouplerConstraint);
- ``PointConstraint``: φ = p₂ − p₁ in ground, p_i a point fixed on body i (OpenSim's PointConstraint,
  Simbody's Ball);
- ``WeldConstraint``: frames B (on body 1) and F (on body 2) coincide: φ = [x_F·y_B, y_F·z_B, z_F·x_B,
  p_F − p_B] (axes and origins in ground; OpenSim's WeldConstraint, Simbody's Weld).

From the stacked φ: the Jacobian along the speeds G(q) = ∂φ/∂q N(q) (so φ̇ = G u) and the bias
b(q, u) = Ġ u (so φ̈ = G u̇ + b), both by automatic differentiation of φ. The equations of motion are
Simbody's:

    M(q) u̇ + C(q, u) + Gᵀ λ = τ + Jᵀ w,     G u̇ + b = 0,

so Gᵀλ is the generalized force the constraints need, opposite to the force they apply (Simbody's
``getMultipliers`` sign). ``constrained_forward_dynamics`` solves the saddle-point system for (u̇, λ);
``constrained_inverse_dynamics`` splits the generalized forces of a motion into τ and the constraint
forces −Gᵀλ. Each public function evaluates a named casadi.Function cached on the model per
constraint tuple (φ, G, b in SX; the two dynamics solve their linear system in MX).
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.bodies import OffsetFrame
from trajopt.core.multibody.dynamics import bias_forces, inverse_dynamics, mass_matrix
from trajopt.core.multibody.functions import CoordinateFunction
from trajopt.core.multibody.kinematics import FUNCTION_OPTIONS, body_pose, cached_function, coordinate_rates_matrix

# --- the constraints ----------------------------------------------------------------------------


@dataclass(frozen=True)
class CoordinateCoupler:
    """q_dependent = scale f(q_independent), as φ = scale f(q_independent) − q_dependent (OpenSim's sign)."""

    name: str
    dependent: str
    independent: str
    function: CoordinateFunction
    scale: float = 1.0

    size = 1

    def errors(self, model, q):
        x = q[model.coordinate_index(self.independent)]
        return self.scale * self.function(x) - q[model.coordinate_index(self.dependent)]

    def value(self, q_independent):
        """The dependent coordinate's value for a value of the independent one."""
        return self.scale * self.function(q_independent)


@dataclass(frozen=True)
class PointConstraint:
    """A point of body 1 and a point of body 2 coincide: φ = p₂ − p₁ in ground (3 equations)."""

    name: str
    body1: str
    point1: tuple
    body2: str
    point2: tuple

    size = 3

    def errors(self, model, q):
        return _point(model, q, self.body2, self.point2) - _point(model, q, self.body1, self.point1)


@dataclass(frozen=True)
class WeldConstraint:
    """Frame B (``frame1``, fixed on its body) and frame F (``frame2``) coincide (6 equations): the
    orientation errors x_F·y_B, y_F·z_B, z_F·x_B, then p_F − p_B, all in ground."""

    name: str
    frame1: OffsetFrame
    frame2: OffsetFrame

    size = 6

    def errors(self, model, q):
        rb, pb = _frame(model, q, self.frame1)
        rf, pf = _frame(model, q, self.frame2)
        orientation = ca.vertcat(ca.dot(rf[:, 0], rb[:, 1]), ca.dot(rf[:, 1], rb[:, 2]), ca.dot(rf[:, 2], rb[:, 0]))
        return ca.vertcat(orientation, pf - pb)


def _point(model, q, body, point):
    rotation, origin = body_pose(model, q, body)
    return origin + ca.mtimes(rotation, ca.DM(np.asarray(point, dtype=float).reshape(3)))


def _frame(model, q, frame: OffsetFrame):
    rotation, origin = body_pose(model, q, frame.body)
    return (ca.mtimes(rotation, ca.DM(frame.rotation)),
            origin + ca.mtimes(rotation, ca.DM(np.asarray(frame.translation, dtype=float))))


# --- kinematics of the constraints --------------------------------------------------------------


def constraint_count(constraints) -> int:
    """Number of constraint equations (rows of φ, G and λ)."""
    return sum(c.size for c in constraints)


def constraint_names(constraints) -> tuple[str, ...]:
    """One label per equation: the constraint's name, with _0, _1, ... when it has several."""
    return tuple(c.name if c.size == 1 else f"{c.name}_{k}" for c in constraints for k in range(c.size))


def _check(model, constraints):
    constraints = tuple(constraints)
    names = [c.name for c in constraints]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise TrajoptInputError(f"model '{model.name}': duplicate constraint names {duplicates}")
    return constraints


def _build_kinematics(model, constraints):
    q = ca.SX.sym("q", model.nq)
    u = ca.SX.sym("u", model.nv)
    m = constraint_count(constraints)
    phi = ca.vertcat(*[c.errors(model, q) for c in constraints]) if constraints else ca.SX.zeros(0, 1)
    n = coordinate_rates_matrix(model, q)
    g = ca.mtimes(ca.jacobian(phi, q), n) if m else ca.SX.zeros(0, model.nv)
    bias = ca.jtimes(ca.mtimes(g, u), q, ca.mtimes(n, u)) if m else ca.SX.zeros(0, 1)
    return {
        "errors": ca.Function("constraint_errors", [q], [phi], ["q"], ["phi"], FUNCTION_OPTIONS),
        "jacobian": ca.Function("constraint_jacobian", [q], [g], ["q"], ["G"], FUNCTION_OPTIONS),
        "bias": ca.Function("constraint_bias", [q, u], [bias], ["q", "u"], ["Gdot_u"], FUNCTION_OPTIONS),
    }


def _kinematics(model, constraints, name):
    constraints = _check(model, constraints)
    return cached_function(model, ("constraints", constraints),
                           lambda m: _build_kinematics(m, constraints))[name]


def constraint_errors(model, constraints, q):
    """φ(q): zero when the constraints hold."""
    return _kinematics(model, constraints, "errors")(q)


def constraint_jacobian(model, constraints, q):
    """G(q) = ∂φ/∂q N(q) (constraints x nv): φ̇ = G u."""
    return _kinematics(model, constraints, "jacobian")(q)


def constraint_bias(model, constraints, q, u):
    """Ġ u: φ̈ = G u̇ + Ġ u."""
    return _kinematics(model, constraints, "bias")(q, u)


# --- dynamics ------------------------------------------------------------------------------------


def _build_forward(model, constraints, with_wrenches):
    q, u, tau = ca.MX.sym("q", model.nq), ca.MX.sym("u", model.nv), ca.MX.sym("tau", model.nv)
    wrenches = ca.MX.sym("wrenches", 6, len(model.bodies)) if with_wrenches else None
    m = constraint_count(constraints)
    mass = mass_matrix(model, q)
    bias = bias_forces(model, q, u, wrenches)
    g = constraint_jacobian(model, constraints, q)
    kkt = ca.blockcat([[mass, g.T], [g, ca.MX.zeros(m, m)]])
    solution = ca.solve(kkt, ca.vertcat(tau - bias, -constraint_bias(model, constraints, q, u)))
    inputs, names = [q, u, tau], ["q", "u", "tau"]
    if with_wrenches:
        inputs, names = inputs + [wrenches], names + ["wrenches"]
    return ca.Function("constrained_forward_dynamics", inputs, [solution[:model.nv], solution[model.nv:]],
                       names, ["udot", "multipliers"])


def constrained_forward_dynamics(model, constraints, q, u, tau, wrenches=None):
    """(u̇, λ) with M u̇ + C + Gᵀλ = τ + Jᵀw and G u̇ + Ġu = 0 (the saddle-point system
    [M Gᵀ; G 0]). λ are OpenSim's multipliers (``state.getMultipliers()``) for constraints in the
    order given."""
    constraints = _check(model, constraints)
    with_wrenches = wrenches is not None
    f = cached_function(model, ("constrained_forward_dynamics", constraints, with_wrenches),
                        lambda m: _build_forward(m, constraints, with_wrenches))
    return f(q, u, tau, wrenches) if with_wrenches else f(q, u, tau)


def _build_inverse(model, constraints, passive, with_wrenches):
    q, u, udot = ca.MX.sym("q", model.nq), ca.MX.sym("u", model.nv), ca.MX.sym("udot", model.nv)
    wrenches = ca.MX.sym("wrenches", 6, len(model.bodies)) if with_wrenches else None
    total = inverse_dynamics(model, q, u, udot, wrenches)  # M u̇ + C − Jᵀw = τ − Gᵀλ
    g = constraint_jacobian(model, constraints, q)
    if passive:
        rows = [model.speed_index(n) for n in passive]
        gp = g[:, rows]
        multipliers = -ca.solve(ca.mtimes(gp, gp.T), ca.mtimes(gp, total[rows]))
    else:
        multipliers = -ca.solve(ca.mtimes(g, g.T), ca.mtimes(g, total))
    tau = total + ca.mtimes(g.T, multipliers)
    inputs, names = [q, u, udot], ["q", "u", "udot"]
    if with_wrenches:
        inputs, names = inputs + [wrenches], names + ["wrenches"]
    return ca.Function("constrained_inverse_dynamics", inputs, [tau, multipliers, -ca.mtimes(g.T, multipliers)],
                       names, ["tau", "multipliers", "constraint_forces"])


def constrained_inverse_dynamics(model, constraints, q, u, udot, wrenches=None, passive=None):
    """(τ, λ, constraint forces −Gᵀλ) for a motion that satisfies the constraints, with
    M u̇ + C − Jᵀw = τ − Gᵀλ. ``passive``: names of speeds that carry no generalized force (τ = 0
    there; e.g. the dependent coordinates of couplers), at least as many as constraint equations;
    without it, λ makes τ as small as possible (τ orthogonal to the constraint forces)."""
    constraints = _check(model, constraints)
    passive = tuple(passive or ())
    if passive and len(passive) < constraint_count(constraints):
        raise TrajoptInputError(f"constrained inverse dynamics: {len(passive)} passive speeds {list(passive)} cannot "
                                f"carry {constraint_count(constraints)} constraint equations")
    with_wrenches = wrenches is not None
    f = cached_function(model, ("constrained_inverse_dynamics", constraints, passive, with_wrenches),
                        lambda m: _build_inverse(m, constraints, passive, with_wrenches))
    return f(q, u, udot, wrenches) if with_wrenches else f(q, u, udot)


# --- assembly ------------------------------------------------------------------------------------


def assemble(model, constraints, q, tolerance=1e-12, iterations=50, fixed=()):
    """q moved as little as possible (Gauss-Newton, least-norm steps) onto φ(q) = 0, keeping the
    coordinates named in ``fixed`` where they are. Scalar coordinates only (nq = nv)."""
    if model.nq != model.nv:
        raise TrajoptInputError(f"assemble: model '{model.name}' has quaternion joints (nq != nv); not supported")
    constraints = _check(model, constraints)
    q = np.asarray(q, dtype=float).reshape(model.nq).copy()
    free = [k for k, n in enumerate(model.coordinate_names) if n not in set(fixed)]
    for _ in range(iterations):
        phi = np.asarray(constraint_errors(model, constraints, q)).ravel()
        if np.max(np.abs(phi), initial=0.0) <= tolerance:
            return q
        g = np.asarray(constraint_jacobian(model, constraints, q))[:, free]
        q[free] -= np.linalg.lstsq(g, phi, rcond=None)[0]
    raise TrajoptInputError(f"assemble: the constraints of model '{model.name}' are not satisfied after {iterations} "
                            f"iterations (max |φ| = {np.max(np.abs(phi)):.3g})")


def project_speeds(model, constraints, q, u):
    """The speeds closest to u with G(q) u = 0."""
    g = np.asarray(constraint_jacobian(model, constraints, q))
    u = np.asarray(u, dtype=float).reshape(model.nv)
    return u - g.T @ np.linalg.lstsq(g @ g.T, g @ u, rcond=None)[0]
