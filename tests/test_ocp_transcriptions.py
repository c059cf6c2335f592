"""Transcriptions solve problems with known optima: double integrator, sliding mass, pendulum swing-up."""

import numpy as np
import pytest
import sympy as sp

from ocp_problems import double_integrator, pendulum_swing_up, sliding_mass
from trajopt.core.ocp import HermiteSimpson, Ipopt, Radau, Trapezoidal

SOLVER = Ipopt(tol=1e-10)


def test_double_integrator_optimum_derived_by_sympy_is_trajopts():
    # Pontryagin: u = -lambda_v / 2 is linear in t; fit x(t) = a t^2/2 + b t^3/6 to x(1)=1, v(1)=0.
    t, a, b = sp.symbols("t a b")
    x = a * t**2 / 2 + b * t**3 / 6
    coefficients = sp.solve([x.subs(t, 1) - 1, sp.diff(x, t).subs(t, 1)], [a, b])
    u_star = sp.diff(x, t, 2).subs(coefficients)
    x_star = x.subs(coefficients)
    objective = sp.integrate(u_star**2, (t, 0, 1))
    # trajopt's Hermite-Simpson solve of the same problem (cubic states are exact for it) against the derivation
    ocp, x_symbol, _, u_symbol = double_integrator()
    solution = ocp.solve(HermiteSimpson(intervals=10), SOLVER)
    assert solution.success, solution
    assert solution.objective == pytest.approx(float(objective), abs=1e-8)
    np.testing.assert_allclose(solution.value(u_symbol), sp.lambdify(t, u_star, "numpy")(solution.time), atol=1e-7)
    np.testing.assert_allclose(solution.value(x_symbol), sp.lambdify(t, x_star, "numpy")(solution.time), atol=1e-9)


@pytest.mark.parametrize("transcription", [HermiteSimpson(intervals=10)] +
                         [Radau(degree=d, intervals=5) for d in range(2, 10)], ids=repr)
def test_double_integrator_exact_for_cubic_states(transcription):
    ocp, x, v, u = double_integrator()
    solution = ocp.solve(transcription, SOLVER)
    assert solution.success, solution
    assert abs(solution.objective - 12.0) < 1e-8
    assert np.max(np.abs(solution.value(u) - (6.0 - 12.0 * solution.time))) < 1e-7
    t = solution.time
    state_error = np.abs(solution.value(x) - (3 * t**2 - 2 * t**3))
    if isinstance(transcription, Radau) and transcription.degree == 2:
        # A quadratic state polynomial cannot hold the cubic x(t) between mesh points; at them it is exact.
        assert np.max(state_error[::2]) < 1e-9 and np.max(state_error) > 1e-3
    else:
        assert np.max(state_error) < 1e-9


def _trapezoidal_discrete_optimum(n):
    """Exact optimum of the trapezoidal discretization, written independently, via its KKT system."""
    h = sp.Rational(1, n)
    xs, vs, us = sp.symbols(f"x0:{n + 1}"), sp.symbols(f"v0:{n + 1}"), sp.symbols(f"u0:{n + 1}")
    cost = sum(h / 2 * (us[k] ** 2 + us[k + 1] ** 2) for k in range(n))
    constraints = [xs[0], vs[0], xs[n] - 1, vs[n]]
    constraints += [xs[k + 1] - xs[k] - h / 2 * (vs[k] + vs[k + 1]) for k in range(n)]
    constraints += [vs[k + 1] - vs[k] - h / 2 * (us[k] + us[k + 1]) for k in range(n)]
    return _equality_qp_minimum(cost, constraints, list(xs + vs + us))


def _backward_euler_discrete_optimum(n):
    """Exact optimum of Radau degree 1 (backward Euler, controls at interval ends, rectangle rule)."""
    h = sp.Rational(1, n)
    xs, vs, us = sp.symbols(f"x0:{n + 1}"), sp.symbols(f"v0:{n + 1}"), sp.symbols(f"u1:{n + 1}")
    cost = sum(h * us[k] ** 2 for k in range(n))
    constraints = [xs[0], vs[0], xs[n] - 1, vs[n]]
    constraints += [xs[k + 1] - xs[k] - h * vs[k + 1] for k in range(n)]
    constraints += [vs[k + 1] - vs[k] - h * us[k] for k in range(n)]
    return _equality_qp_minimum(cost, constraints, list(xs + vs + us))


def _equality_qp_minimum(cost, constraints, unknowns):
    multipliers = sp.symbols(f"l0:{len(constraints)}")
    lagrangian = cost + sum(m * c for m, c in zip(multipliers, constraints))
    equations = [sp.diff(lagrangian, w) for w in unknowns] + constraints
    (solution,) = sp.linsolve(equations, unknowns + list(multipliers))
    return cost.subs(dict(zip(unknowns, solution[:len(unknowns)])))


def test_double_integrator_trapezoidal_matches_exact_discrete_optimum_and_converges_at_order_two():
    objectives = {}
    for n in (10, 20, 40):
        ocp, *_ = double_integrator()
        objectives[n] = ocp.solve(Trapezoidal(intervals=n), SOLVER).objective
    exact_10 = _trapezoidal_discrete_optimum(10)
    assert exact_10 == sp.Rational(4000, 321)  # = 12 N^3 / (N^3 - 4N + 3) at N = 10
    assert abs(objectives[10] - float(exact_10)) < 1e-9
    errors = [objectives[n] - 12.0 for n in (10, 20, 40)]
    orders = np.log2(np.array(errors[:-1]) / np.array(errors[1:]))
    assert np.all(np.abs(orders - 2.0) < 0.05), orders


def test_double_integrator_radau_degree_one_matches_exact_backward_euler_optimum():
    for n in (5, 10):
        ocp, *_ = double_integrator()
        objective = ocp.solve(Radau(degree=1, intervals=n), SOLVER).objective
        exact = _backward_euler_discrete_optimum(n)
        assert exact == sp.Rational(12 * n * n, n * n - 1)
        assert abs(objective - float(exact)) < 1e-9


@pytest.mark.parametrize("transcription", [Trapezoidal(intervals=19), HermiteSimpson(intervals=19),
                                           Radau(degree=3, intervals=19)], ids=repr)
def test_sliding_mass_minimum_time_is_two_seconds(transcription):
    # Bang-bang with |a| = F/m = 1 m/s^2 over 1 m: t_f = 2 sqrt(d m / F) = 2 s (Moco testMocoInterface).
    ocp, x, v, force = sliding_mass(10.0)
    solution = ocp.solve(transcription, SOLVER)
    assert solution.success, solution
    assert abs(solution.duration - 2.0) < 5e-3
    assert abs(solution.objective - solution.duration) < 1e-12
    # The force saturates: +10 N early, -10 N late.
    force_values = solution.value(force)
    assert force_values[1] > 9.9 and force_values[-2] < -9.9


def test_sliding_mass_heavier_is_slower_as_sqrt_of_mass():
    ocp, *_ = sliding_mass(20.0)
    duration = ocp.solve(HermiteSimpson(intervals=19), SOLVER).duration
    assert abs(duration - 2.0 * np.sqrt(2.0)) < 5e-3


def _pendulum_objective(transcription):
    ocp, *_ = pendulum_swing_up(duration=1.0)
    solution = ocp.solve(transcription, SOLVER)
    assert solution.success, solution
    return solution.objective


@pytest.fixture(scope="module")
def pendulum_reference():
    """Radau degree 9 on 10 intervals; degree 5 on 20 intervals agrees to < 1e-7."""
    reference = _pendulum_objective(Radau(degree=9, intervals=10))
    assert abs(reference - _pendulum_objective(Radau(degree=5, intervals=20))) < 1e-7
    return reference


def _assert_agrees(make, order, n, reference):
    """Error of the 2N solve is about |J_2N - J_N| / (2^p - 1) for order p: allow twice that + 1e-7.

    Where the error is above the IPOPT/reference floor (1e-6) the observed order must be >= p - 0.5.
    """
    coarse, fine = _pendulum_objective(make(n)), _pendulum_objective(make(2 * n))
    estimate = abs(fine - coarse) / (2**order - 1)
    assert abs(fine - reference) < 2.0 * estimate + 1e-7, (make(n), fine, reference, estimate)
    if abs(fine - reference) > 1e-6:
        observed_order = np.log2(abs(coarse - reference) / abs(fine - reference))
        assert observed_order > order - 0.5, (make(n), observed_order)


def test_pendulum_swing_up_trapezoidal_and_hermite_simpson_agree_with_radau(pendulum_reference):
    _assert_agrees(lambda n: Trapezoidal(intervals=n), 2, 20, pendulum_reference)
    _assert_agrees(lambda n: HermiteSimpson(intervals=n), 4, 10, pendulum_reference)


@pytest.mark.parametrize("degree", range(1, 10))
def test_pendulum_swing_up_radau_all_degrees_agree(degree, pendulum_reference):
    # Legendre-Gauss-Radau with d points converges at order 2d - 1 at the mesh points.
    _assert_agrees(lambda n: Radau(degree=degree, intervals=n), 2 * degree - 1, 10, pendulum_reference)


def test_hermite_simpson_with_midpoint_controls_tied_to_the_mesh_points_mean():
    """Moco's default: midpoint controls are the mean of their interval's mesh-point controls. The double
    integrator's optimal control u = 6 - 12 t is linear, so the tied transcription finds it (J* = 12)."""
    ocp, x, v, u = double_integrator()
    tied = HermiteSimpson(10, interpolate_control_midpoints=True)
    grid = tied.grid()
    assert grid.control_points.tolist() == list(range(0, 21, 2))
    solution = ocp.solve(tied, Ipopt(tol=1e-10))
    assert solution.discrete.layout.size == HermiteSimpson(10).grid().tau.size * 2 + 11 + 2
    controls = solution.value(u)
    assert np.allclose(controls[1::2], 0.5 * (controls[0:-1:2] + controls[2::2]), rtol=0, atol=1e-12)
    assert np.allclose(controls, 6.0 - 12.0 * solution.time, atol=1e-6)
    assert solution.objective == pytest.approx(12.0, rel=1e-8)
