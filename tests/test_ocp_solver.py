"""Solver settings, warm starts, failed solves, writers and verification of trajopt.core.ocp solutions."""

import re

import casadi as ca
import numpy as np
import pytest

from ocp_problems import double_integrator, pendulum_swing_up, sliding_mass
from trajopt.errors import TrajoptInputError
from trajopt.model.io import Table, read_table, write_csv, write_sto
from trajopt.core.ocp.verification import SimulationUndefined, simulate
from trajopt.core.ocp import Effort, Guess, HermiteSimpson, Hessian, Ipopt, Problem, Radau, Trapezoidal


def test_warm_start_from_solution_reduces_iterations():
    ocp, *_ = pendulum_swing_up()
    cold = ocp.solve(HermiteSimpson(intervals=30), Ipopt(tol=1e-8))
    warm = ocp.solve(HermiteSimpson(intervals=30), Ipopt(tol=1e-8), guess=cold)
    assert warm.success and warm.iterations < cold.iterations
    assert abs(warm.objective - cold.objective) < 1e-8
    # Across meshes (primal values interpolated onto the finer grid) the sliding mass needs fewer too.
    ocp, *_ = sliding_mass()
    coarse = ocp.solve(HermiteSimpson(intervals=10))
    fine_cold = ocp.solve(HermiteSimpson(intervals=40))
    fine_warm = ocp.solve(HermiteSimpson(intervals=40), guess=coarse)
    assert fine_warm.iterations < fine_cold.iterations
    assert abs(fine_warm.duration - fine_cold.duration) < 1e-8


def test_guess_from_table_is_interpolated_onto_the_grid():
    ocp, q, w, tau = pendulum_swing_up()
    times = np.linspace(0.0, 1.0, 11)
    guess = Guess(times).set(q, np.pi * times).set(w, np.full(times.size, np.pi))
    solution = ocp.solve(HermiteSimpson(intervals=20), Ipopt(max_iterations=0), guess=guess)
    # With zero iterations the returned point is the guess itself (bounds permitting).
    assert np.allclose(solution.value(q)[1:-1], np.pi * solution.time[1:-1], atol=1e-7)
    with pytest.raises(TrajoptInputError, match="NaN"):
        Guess(times).set(q, np.full(times.size, np.nan))
    # The same guess from a table (as read from a motion file).
    table = Table(times, ("pendulum_angle",), (np.pi * times)[:, None])
    solution = ocp.solve(HermiteSimpson(intervals=20), Ipopt(max_iterations=0),
                         guess=Guess.from_table(table, [(q, ["pendulum_angle"])]))
    assert np.allclose(solution.value(q)[1:-1], np.pi * solution.time[1:-1], atol=1e-7)


def test_failed_solve_reports_status_worst_constraint_and_still_writes(tmp_path):
    ocp, q, w, tau = pendulum_swing_up()
    solution = ocp.solve(HermiteSimpson(intervals=30), Ipopt(max_iterations=2))
    assert not solution.success
    assert solution.status == "Maximum_Iterations_Exceeded" and solution.iterations == 2
    assert re.fullmatch(r"dynamics defect \((Simpson|Hermite midpoint)\) of state '(q|w)' at t=[0-9.]+ s: "
                        r"[0-9.e+-]+", solution.worst_constraint), solution.worst_constraint
    table = read_table(write_sto(tmp_path / "failed.sto", solution.table()))
    assert table.labels == ("q", "w", "tau") and not table.in_degrees
    assert np.allclose(table.column("q"), solution.value(q), rtol=0, atol=1e-15)
    csv = read_table(write_csv(tmp_path / "failed.csv", solution.table()))
    assert np.allclose(csv.column("tau"), solution.value(tau), atol=1e-15)
    assert solution.plot(tmp_path / "failed.png").stat().st_size > 1000


def test_infeasible_problem_is_reported_with_its_worst_constraint():
    # |F| <= 1 cannot move 1 m rest to rest in 1 s (needs |F| >= 4 for bang-bang).
    ocp = Problem(duration=1.0)
    x = ocp.state("x", initial=0.0, final=1.0)
    v = ocp.state("v", initial=0.0, final=0.0)
    force = ocp.control("F", bounds=(-1.0, 1.0))
    ocp.set_derivative(x, v)
    ocp.set_derivative(v, force)
    ocp.minimize(Effort(force))
    solution = ocp.solve(Trapezoidal(intervals=20))
    assert not solution.success and "Infeasible" in solution.status
    assert solution.constraint_violation > 1e-3
    assert "dynamics defect (trapezoidal) of state" in solution.worst_constraint


def test_limited_memory_hessian_and_option_pass_through_reach_the_same_optimum():
    ocp, *_ = pendulum_swing_up()
    exact = ocp.solve(HermiteSimpson(intervals=20), Ipopt(tol=1e-9))
    quasi_newton = ocp.solve(HermiteSimpson(intervals=20), Ipopt(tol=1e-9, hessian=Hessian.LIMITED_MEMORY))
    adaptive = ocp.solve(HermiteSimpson(intervals=20), Ipopt(tol=1e-9, options={"mu_strategy": "adaptive"}))
    assert quasi_newton.success and adaptive.success
    assert abs(quasi_newton.objective - exact.objective) < 1e-6
    assert abs(adaptive.objective - exact.objective) < 1e-8


@pytest.mark.parametrize("transcription", [HermiteSimpson(intervals=10), Radau(degree=3, intervals=5)],
                         ids=repr)
def test_verification_is_exact_when_the_discretization_is(transcription):
    # u = 6 - 12t is represented exactly, so re-simulation reproduces the cubic states.
    ocp, *_ = double_integrator()
    assert ocp.solve(transcription).verify().max_drift < 1e-9


def test_verification_drift_shrinks_at_fourth_order_for_hermite_simpson():
    ocp, *_ = pendulum_swing_up()
    coarse = ocp.solve(HermiteSimpson(intervals=40)).verify()
    fine = ocp.solve(HermiteSimpson(intervals=80)).verify()
    assert fine.max_drift < 1e-6
    assert 3.5 < np.log2(coarse.max_drift / fine.max_drift) < 4.5
    assert set(fine.max_drift_by_state()) == {"q", "w"}


def test_a_solution_of_another_shape_is_refused_as_a_guess_in_one_line():
    """A solution whose same-named variable has another size (e.g. a quaternion pelvis's q for an Euler-pelvis
    problem) is a TrajoptInputError naming the variable, not a reshape error from deep inside."""
    ocp, *_ = double_integrator()
    solution = ocp.solve(HermiteSimpson(intervals=4))
    other = Problem(duration=1.0)
    x = other.state("x", size=2, initial=0.0, final=1.0)
    u = other.control("u", size=2, bounds=(-100.0, 100.0))
    other.set_derivative(x, u)
    other.minimize(Effort(u))
    with pytest.raises(TrajoptInputError, match=r"guess: the solution's 'x' has 1 entries, this problem's 2"):
        other.solve(HermiteSimpson(intervals=4), guess=solution)


def test_resimulation_with_undefined_forward_dynamics_names_the_interval_and_states():
    """Dynamics that are NaN where the solution starts (sqrt of a negative number): SimulationUndefined names the
    first interval and the state whose derivative is not finite, instead of scipy's error from inside Radau."""
    ocp, *_ = double_integrator()
    solution = ocp.solve(HermiteSimpson(intervals=4))
    problem = solution.discrete.problem
    t, x, u = ca.SX.sym("t"), ca.SX.sym("x", 2), ca.SX.sym("u", problem.symbols["u"].numel())
    p, z = ca.SX.sym("p", problem.symbols["p"].numel()), ca.SX.sym("z", problem.symbols["z"].numel())
    undefined = ca.Function("f", [t, x, u, p, z], [ca.vertcat(ca.sqrt(x[0] - 1.0), u[0])])
    labels = [label for variable in problem.states for label in variable.labels]
    with pytest.raises(SimulationUndefined, match=rf"interval 0 \(0-0.25 s\): derivatives of {labels[0]} at"):
        simulate(solution, undefined, method="Radau")


def test_resimulation_that_the_integrator_cannot_finish_says_where_it_stopped():
    """ẋ = (x + 1)² from x(0) = 0 blows up at t = 1 (x = t/(1-t)): on a solution over [0, 2] (four intervals) the
    integrator cannot go past it, and SimulationUndefined names the interval it stopped in, the one ending at 1 s or
    (when the step lands on the pole) the next."""
    ocp, *_ = double_integrator(duration=2.0)
    solution = ocp.solve(HermiteSimpson(intervals=4))
    problem = solution.discrete.problem
    t, x, u = ca.SX.sym("t"), ca.SX.sym("x", 2), ca.SX.sym("u", problem.symbols["u"].numel())
    p, z = ca.SX.sym("p", problem.symbols["p"].numel()), ca.SX.sym("z", problem.symbols["z"].numel())
    blow_up = ca.Function("f", [t, x, u, p, z], [ca.vertcat((x[0] + 1.0) ** 2, 0.0)])
    with pytest.raises(SimulationUndefined, match=r"the integrator stopped in interval (1 \(0.5-1 s\)|2 \(1-1.5 s\))"):
        simulate(solution, blow_up, method="Radau")
