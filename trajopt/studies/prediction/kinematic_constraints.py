"""Kinematic constraints in direct collocation: φ(q) = 0 held by multipliers, never dropped.

Two formulations, as Moco's ``enforce_constraint_derivatives``:

- ``derivatives=False`` (Moco's Trapezoidal): φ(q) = 0 at every grid point, λ at every grid point;
- ``derivatives=True`` (Moco's Hermite-Simpson; Posa, Kuindersma, Tedrake 2016): φ = 0, φ̇ = G u = 0 and
  φ̈ = G u̇ + Ġu = 0 at the mesh points, λ at every point, and a velocity correction γ (algebraic, zero at
  the mesh points) that moves the coordinates' rates at the midpoints onto the constraint manifold:
  q̇ = N(q)(u + Gᵀγ). Use it with HermiteSimpson (elsewhere the count of equations does not balance).

``constrained_accelerations(problem, multibody, constraints, q, u, tau)`` declares the multipliers λ
(algebraic variables, one per constraint equation, labelled by ``constraint_names``), requires φ(q) = 0
at every grid point, and returns the accelerations of

    M u̇ + C + Gᵀλ = τ + Jᵀw

(explicit: u̇ = forward_dynamics(q, u, τ − Gᵀλ); implicit: u̇ algebraic with inverse dynamics + Gᵀλ = τ
as a path equality). This is the formulation Moco uses without constraint derivatives (its
Trapezoidal scheme; Posa et al. 2016 eq. with the position-level constraint only): the equation count
balances on every grid (λ at each point against φ at each point), the position error is zero to the
solver's tolerance at the grid points, and the velocity constraint G u = 0 holds to the discretization
error (reported by ``velocity_errors``). With Radau the start of the first interval is not a
collocation point: give an initial q that satisfies the constraints (or constrain it with
``problem.initial``).

    built = constrained_accelerations(problem, mb, constraints, q, u, tau)
    problem.set_derivative(q, built.coordinate_rates)
    problem.set_derivative(u, built.accelerations)
    ... solution.value(built.multipliers)
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import coordinate_rates, forward_dynamics, inverse_dynamics
from trajopt.core.multibody.constraints import (
    constraint_bias,
    constraint_count,
    constraint_errors,
    constraint_jacobian,
    constraint_names,
)


@dataclass(frozen=True, eq=False)
class ConstrainedAccelerations:
    """The symbols of a constrained multibody motion in a Problem."""

    accelerations: ca.SX  # u̇ (expression, or the algebraic symbol when implicit)
    multipliers: ca.SX  # λ (algebraic), OpenSim's sign and order
    errors: ca.SX  # φ(q)
    velocity_errors: ca.SX  # G(q) u
    constraint_forces: ca.SX  # −Gᵀλ, the generalized forces the constraints apply
    coordinate_rates: ca.SX  # q̇ to give problem.set_derivative(q, ...): N(q) u, corrected with derivatives
    velocity_correction: ca.SX | None  # γ (derivatives=True)


def constrained_accelerations(problem, multibody, constraints, q, u, tau, wrenches=None, implicit: bool = False,
                              multiplier_bounds=None, multiplier_scale=None, max_acceleration: float = 1000.0,
                              name: str = "multipliers", derivatives: bool = False) -> ConstrainedAccelerations:
    """Declare λ, hold φ(q) = 0 at every grid point and return u̇ (see the module docstring).
    ``multiplier_bounds``: (lower, upper) of λ (default free); ``implicit``: u̇ as algebraic variables
    within ±max_acceleration."""
    constraints = tuple(constraints)
    m = constraint_count(constraints)
    if m == 0:
        raise TrajoptInputError("constrained_accelerations: no constraints given")
    if m >= multibody.nv:
        raise TrajoptInputError(f"constrained_accelerations: {m} constraint equations leave no freedom to "
                                f"{multibody.nv} speeds")
    labels = constraint_names(constraints)
    lam = problem.algebraic(name, m, bounds=multiplier_bounds, guess=0.0, scale=multiplier_scale, labels=labels)
    phi = constraint_errors(multibody, constraints, q)
    g = constraint_jacobian(multibody, constraints, q)
    forces = -ca.mtimes(g.T, lam)
    gamma = None
    rates = u
    if derivatives:
        gamma = problem.algebraic(f"{name}_velocity_correction", m, guess=0.0,
                                  labels=tuple(f"{n}_velocity_correction" for n in labels))
        rates = u + ca.mtimes(g.T, gamma)
        problem.require_at_mesh_points(ca.vertcat(phi, ca.mtimes(g, u), gamma), equals=0.0,
                                       name="kinematic constraints",
                                       labels=tuple(f"{kind} {n}" for kind in ("φ", "φ̇", "γ") for n in labels))
    else:
        problem.require(phi, equals=0.0, name="kinematic constraints", labels=tuple(f"φ {n}" for n in labels))
    if multibody.nq != multibody.nv:
        rates = coordinate_rates(multibody, q, rates)
    if implicit:
        names = multibody.speed_names
        udot = problem.algebraic("accelerations", multibody.nv, bounds=(-max_acceleration, max_acceleration),
                                 guess=0.0, labels=tuple(f"{n}_acceleration" for n in names))
        problem.require(inverse_dynamics(multibody, q, u, udot, wrenches) - forces - tau, equals=0.0,
                        name="multibody dynamics", labels=tuple(f"dynamics {n}" for n in names))
    else:
        udot = forward_dynamics(multibody, q, u, tau + forces, wrenches)
    if derivatives:
        problem.require_at_mesh_points(ca.mtimes(g, udot) + constraint_bias(multibody, constraints, q, u),
                                       equals=0.0, name="kinematic constraint accelerations",
                                       labels=tuple(f"φ̈ {n}" for n in labels))
    return ConstrainedAccelerations(udot, lam, phi, ca.mtimes(g, u), forces, rates, gamma)
