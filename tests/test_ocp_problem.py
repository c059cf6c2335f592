"""Problem features against analytic optima: free time, parameters, periodic swap, implicit form, goals."""

import casadi as ca
import numpy as np
import pytest

from ocp_problems import double_integrator, pendulum_swing_up
from trajopt.errors import TrajoptInputError
from trajopt.core.ocp import (Effort, Endpoint, FinalTime, Free, HermiteSimpson, Integral, Ipopt, LinearInterpolation,
                              PiecewisePolynomial, Problem, Radau, Tracking, Trapezoidal)

SOLVER = Ipopt(tol=1e-10)


def _rest_to_rest(duration, final_position=1.0, mass=None):
    ocp = Problem(duration=duration)
    x = ocp.state("x", initial=0.0, final=final_position)
    v = ocp.state("v", initial=0.0, final=0.0)
    u = ocp.control("u", bounds=(-100.0, 100.0))
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, u if mass is None else u / mass)
    return ocp, x, v, u


@pytest.mark.parametrize("weight", [1.0, 2.0])
def test_free_final_time_balances_effort_and_time(weight):
    # Rest-to-rest over distance 1 in time T costs 12 / T^3; min w*12/T^3 + T gives T = (36 w)^(1/4).
    ocp, x, v, u = _rest_to_rest(Free(0.5, 5.0))
    ocp.minimize(weight * Effort(u) + FinalTime())
    solution = ocp.solve(HermiteSimpson(intervals=10), SOLVER)
    duration = (36.0 * weight) ** 0.25
    assert abs(solution.duration - duration) < 1e-7
    assert abs(solution.objective - (12.0 * weight / duration**3 + duration)) < 1e-9
    assert abs(solution.time[-1] - duration) < 1e-7


def test_free_initial_time_shifts_the_phase():
    ocp = Problem(duration=1.0, initial_time=Free(-2.0, 2.0, guess=0.3))
    x = ocp.state("x", initial=0.0, final=1.0)
    v = ocp.state("v", initial=0.0, final=0.0)
    u = ocp.control("u")
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, u)
    # Minimizing (t0 - 1.5)^2 on top of the effort puts the phase at [1.5, 2.5] with effort 12.
    ocp.minimize(Effort(u) + Endpoint((ocp.initial(ocp.time) - 1.5) ** 2))
    solution = ocp.solve(Radau(degree=3, intervals=4), SOLVER)
    assert abs(solution.initial_time - 1.5) < 1e-7 and abs(solution.objective - 12.0) < 1e-8


def test_parameter_optimum_at_its_bound():
    # x'' = u / m: effort 12 m^2, so the optimal mass is the lower bound 0.5 with effort 3.
    ocp = Problem(duration=1.0)
    mass = ocp.parameter("mass", bounds=(0.5, 2.0))
    x = ocp.state("x", initial=0.0, final=1.0)
    v = ocp.state("v", initial=0.0, final=0.0)
    u = ocp.control("u")
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, u / mass)
    ocp.minimize(Effort(u))
    solution = ocp.solve(HermiteSimpson(intervals=8), SOLVER)
    # IPOPT relaxes bounds by bound_relax_factor = 1e-8 (scaled units, range 1.5): |m - 0.5| <~ 1.5e-8.
    assert abs(solution.parameters[0] - 0.5) < 3e-8
    assert abs(solution.objective - 3.0) < 12.0 * 3e-8
    assert abs(solution.value(mass)[0] - 0.5) < 3e-8


def test_periodicity_with_left_right_swap_and_sign_flip():
    """Two double integrators swap roles (left <-> right) and a lateral one flips sign over the phase.

    Rest-to-rest effort from (x0, v0) to (x1, v1) in T = 1 is 4(v0^2 + v0 v1 + v1^2) - 12 d (v0 + v1)
    + 12 d^2 with d = x1 - x0. With q_l(0) = 0, q_r(0) = 1, v_l(0) = 1 and the swap, left goes
    (0, 1) -> (1, b) and right (1, b) -> (0, 1): total 8(1 + b + b^2) + 24, minimal at b = -1/2: 30.
    The lateral y(0) = 1 with y(1) = -y(0), vy(1) = -vy(0) costs 4c^2 + 48, minimal at c = 0: 48.
    """
    ocp = Problem(duration=1.0)
    q = ocp.state("q", size=2, initial=[0.0, 1.0], labels=["q_left", "q_right"])
    v = ocp.state("v", size=2, initial=([1.0, -np.inf], [1.0, np.inf]), labels=["v_left", "v_right"])
    y = ocp.state("y", initial=1.0)
    vy = ocp.state("vy")
    u = ocp.control("u", size=3)
    ocp.set_derivative(q, v)
    ocp.set_derivative(v, u[:2])
    ocp.set_derivative(y, vy)
    ocp.set_derivative(vy, u[2])
    swap = ca.DM([[0, 1], [1, 0]])
    ocp.periodic([(q, ca.mtimes(swap, q)), (v, ca.mtimes(swap, v)), (y, -y), (vy, -vy)])
    ocp.minimize(Effort(u))
    solution = ocp.solve(HermiteSimpson(intervals=6), SOLVER)
    assert abs(solution.objective - 78.0) < 1e-7
    velocities = solution.value(v)
    assert np.allclose(velocities[:, 0], [1.0, -0.5], atol=1e-7)
    assert np.allclose(velocities[:, -1], [-0.5, 1.0], atol=1e-7)
    assert abs(solution.value(ocp.final(y)) + 1.0) < 1e-9


@pytest.mark.parametrize("transcription", [Trapezoidal(intervals=10), HermiteSimpson(intervals=10),
                                           Radau(degree=3, intervals=5)], ids=repr)
def test_implicit_form_with_algebraic_acceleration_matches_explicit(transcription):
    """Acceleration as an algebraic variable with m a - F = 0 as a path equality (as the implicit
    multibody form will do) gives the explicit formulation's discrete optimum exactly."""
    explicit, *_ = double_integrator()
    expected = explicit.solve(transcription, SOLVER).objective
    ocp = Problem(duration=1.0)
    x = ocp.state("x", initial=0.0, final=1.0)
    v = ocp.state("v", initial=0.0, final=0.0)
    force = ocp.control("force")
    acceleration = ocp.algebraic("acceleration", bounds=(-50.0, 50.0))
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, acceleration)
    ocp.require(2.0 * acceleration - force, equals=0.0, name="inverse dynamics")
    ocp.minimize(0.25 * Effort(force))
    solution = ocp.solve(transcription, SOLVER)
    assert abs(solution.objective - expected) < 1e-8
    assert np.max(np.abs(solution.value(2.0 * acceleration - force))) < 1e-9


def test_the_default_transcription_is_mocos():
    """Without a transcription, MocoCasADiSolver's default: Hermite-Simpson on 100 mesh intervals (a point every
    T/200 with the midpoints), each midpoint control the mean of its mesh neighbours; the swing-up's controls are
    not linear in time, so free midpoint controls would differ from that mean. The double integrator's optimum is
    the analytic 12."""
    ocp, q, w, tau = pendulum_swing_up()
    solution = ocp.solve(solver=SOLVER)
    assert solution.success
    np.testing.assert_allclose(solution.time, np.linspace(0.0, 1.0, 201), rtol=0, atol=1e-12)
    torque = solution.value(tau)
    np.testing.assert_allclose(torque[1::2], 0.5 * (torque[:-1:2] + torque[2::2]), rtol=0, atol=1e-9)
    assert np.ptp(np.diff(torque[::2], 2)) > 1e-3  # not a straight line
    assert solution.value(q)[-1] == pytest.approx(np.pi, abs=1e-9)
    ocp, *_ = double_integrator()
    assert ocp.solve(solver=SOLVER).objective == pytest.approx(12.0, abs=1e-7)


def test_goal_objects_integral_endpoint_and_per_distance():
    # Effort per distance: rest-to-rest over 2 m costs 48; divided by the distance 2 -> 24.
    ocp, x, v, u = _rest_to_rest(1.0, final_position=2.0)
    ocp.minimize(Effort(u, per_distance=ocp.final(x) - ocp.initial(x)))
    assert abs(ocp.solve(HermiteSimpson(intervals=5), SOLVER).objective - 24.0) < 1e-8
    # Integral(u^2) is the effort; an Endpoint goal on a fixed final value adds exactly its value.
    ocp, x, v, u = _rest_to_rest(1.0)
    ocp.minimize(Integral(u**2) + 3.0 * Endpoint(ocp.final(x) + 1.0))
    assert abs(ocp.solve(Radau(degree=3, intervals=3), SOLVER).objective - 18.0) < 1e-8
    # Power 4: u = 6 - 12t (the L2 optimum) gives 1296/5 = 259.2, an upper bound; by Cauchy-Schwarz
    # int u^4 >= (int u^2)^2 >= 12^2 = 144 for any feasible u.
    ocp, x, v, u = _rest_to_rest(1.0)
    ocp.minimize(Effort(u, power=4))
    assert 144.0 < ocp.solve(HermiteSimpson(intervals=20), SOLVER).objective < 259.2


def test_tracking_table_reproduces_reference():
    """x' = u tracking sin(t) from a table (101 rows) with a tiny effort: x follows sin(t)."""
    ocp = Problem(duration=2.0)
    x = ocp.state("x")
    u = ocp.control("u")
    ocp.set_derivative(x, u)
    times = np.linspace(0.0, 2.0, 101)
    ocp.minimize(Tracking(x, LinearInterpolation(times, np.sin(times))) + 1e-8 * Effort(u))
    solution = ocp.solve(HermiteSimpson(intervals=20), SOLVER)
    # Table interpolation error (h^2/8 |x''| <= 5e-5) dominates.
    assert np.max(np.abs(solution.value(x) - np.sin(solution.time))) < 1e-4
    assert solution.objective < 1e-7


def test_spline_tracking_follows_the_pieces_exactly():
    """x' = u tracking r(t) = t^3 - t given as two cubic pieces (Taylor coefficients at 0 and at 1, the second also
    beyond 2): Hermite-Simpson's cubic states follow it, so only the tiny effort moves x off r."""
    ocp = Problem(duration=2.0)
    x = ocp.state("x")
    u = ocp.control("u")
    ocp.set_derivative(x, u)
    breaks = np.array([0.0, 1.0, 2.0])
    coefficients = np.array([[1.0, 1.0], [3 * b for b in breaks[:2]], [3 * b * b - 1 for b in breaks[:2]],
                             [b ** 3 - b for b in breaks[:2]]])[:, :, None]
    ocp.minimize(Tracking(x, PiecewisePolynomial(breaks, coefficients)) + 1e-10 * Effort(u))
    solution = ocp.solve(HermiteSimpson(intervals=8), SOLVER)
    assert np.max(np.abs(solution.value(x) - (solution.time ** 3 - solution.time))) < 1e-6
    assert solution.objective < 1e-8


def test_a_table_is_the_linear_pieces_through_its_rows():
    """LinearInterpolation of a table and the PiecewisePolynomial of its chords (slope, start value per piece) are
    the same reference inside the table; a Tracking given a table's arrays instead of a reference is refused."""
    rng = np.random.default_rng(7)
    times = np.cumsum(rng.uniform(0.1, 0.5, 6))
    values = rng.normal(size=(6, 2))
    slopes = np.diff(values, axis=0) / np.diff(times)[:, None]
    t = ca.SX.sym("t")
    table = ca.Function("table", [t], [LinearInterpolation(times, values).at(t)])
    pieces = ca.Function("pieces", [t], [PiecewisePolynomial(times, np.stack([slopes, values[:-1]])).at(t)])
    for time in rng.uniform(times[0], times[-1], 20):
        assert np.allclose(np.asarray(table(time)), np.asarray(pieces(time)), rtol=0, atol=1e-12)
    with pytest.raises(TrajoptInputError, match="Tracking reference must be LinearInterpolation"):
        Tracking(t, times, values[:, 0])


def test_control_endpoint_bounds_and_value_at_times():
    ocp = Problem(duration=1.0)
    x = ocp.state("x", initial=0.0, final=1.0)
    v = ocp.state("v", initial=0.0, final=0.0)
    u = ocp.control("u", initial=0.0)
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, u)
    ocp.minimize(Effort(u))
    for transcription in (HermiteSimpson(intervals=10), Radau(degree=3, intervals=10)):
        solution = ocp.solve(transcription, SOLVER)
        assert abs(solution.value(ocp.initial(u))) < 1e-8
        assert solution.objective > 12.0  # the free optimum starts at u = 6
    times = np.array([0.123, 0.5, 0.77])
    free, x, v, u = double_integrator()
    solution = free.solve(HermiteSimpson(intervals=4), SOLVER)
    assert np.allclose(solution.value(u, at=times), 6 - 12 * times, atol=1e-7)
    # Hermite-Simpson states are interpolated by the quadratic through start/mid/end: O(h^3) off the cubic.
    assert np.allclose(solution.value(x, at=times), 3 * times**2 - 2 * times**3, atol=2e-3)
    # Radau degree 3 interpolates states with its cubic collocation polynomial: exact here.
    solution = free.solve(Radau(degree=3, intervals=4), SOLVER)
    assert np.allclose(solution.value(x, at=times), 3 * times**2 - 2 * times**3, atol=1e-9)
    assert np.allclose(solution.value(u, at=times), 6 - 12 * times, atol=1e-7)


def test_bad_input_names_variable_and_values():
    ocp = Problem(duration=1.0)
    with pytest.raises(TrajoptInputError, match=r"'x'.*lower 2.0 > upper 1.0"):
        ocp.state("x", bounds=(2.0, 1.0))
    with pytest.raises(TrajoptInputError, match=r"'y'.*initial bounds \[5.0, 5.0\].*\[0.0, 1.0\]"):
        ocp.state("y", bounds=(0.0, 1.0), initial=5.0)
    with pytest.raises(TrajoptInputError, match=r"'z'.*guess contains NaN"):
        ocp.state("z", guess=np.nan)
    with pytest.raises(TrajoptInputError, match="lower"):
        ocp.control("u", bounds=(1.0, -1.0))
    with pytest.raises(TrajoptInputError, match="Radau degree"):
        Radau(degree=10)
    with pytest.raises(TrajoptInputError, match="lower <= upper"):
        Free(2.0, 1.0)
    with pytest.raises(TrajoptInputError, match="hessian"):
        Ipopt(hessian="bfgs")
    q = ocp.state("q")
    with pytest.raises(TrajoptInputError, match="already declared"):
        ocp.state("q")
    with pytest.raises(TrajoptInputError, match="derivative of state 'q' has 2"):
        ocp.set_derivative(q, ca.vertcat(q, q))
    with pytest.raises(TrajoptInputError, match=r"no derivative set for state\(s\) \['q'\]"):
        ocp.minimize(FinalTime())
        ocp.solve(Trapezoidal(intervals=3))
    stranger = ca.SX.sym("stranger")
    ocp.set_derivative(q, stranger)
    with pytest.raises(TrajoptInputError, match="symbols the problem does not know"):
        ocp.solve(Trapezoidal(intervals=3))
    with pytest.raises(TrajoptInputError, match="mixes path variables"):
        ocp.require(q - ocp.final(q), equals=0.0)


@pytest.mark.parametrize("transcription", [HermiteSimpson(intervals=30), Radau(degree=3, intervals=18)],
                         ids=repr)
def test_path_constraint_bryson_denham(transcription):
    """Bryson-Denham: x'' = u, x(0) = x(1) = 0, v(0) = 1, v(1) = -1, x <= l as a path constraint.

    For l <= 1/6 the optimum of 1/2 int u^2 is 4 / (9 l) (Bryson & Ho, Applied Optimal Control, 3.11),
    so int u^2 = 8 / (9 l) = 8 at l = 1/9. IPOPT relaxes the constraint by ~1e-8, which lowers the
    objective by |dJ/dl| * 1e-8 = 72e-8.
    """
    limit = 1.0 / 9.0
    ocp = Problem(duration=1.0)
    x = ocp.state("x", initial=0.0, final=0.0)
    v = ocp.state("v", initial=1.0, final=-1.0)
    u = ocp.control("u")
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, u)
    ocp.require(x, upper=limit, name="position limit")
    ocp.minimize(Effort(u))
    solution = ocp.solve(transcription, SOLVER)
    assert abs(solution.objective - 8.0) < 1e-6
    assert solution.value(x).max() < limit + 2e-8
    # On the constrained arc [3l, 1 - 3l] the position sits on the limit.
    t = solution.time
    on_arc = (t > 3 * limit + 0.02) & (t < 1 - 3 * limit - 0.02)
    assert np.all(np.abs(solution.value(x)[on_arc] - limit) < 1e-6)
