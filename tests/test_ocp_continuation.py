"""Mesh continuation (trajopt.core.ocp.continuation) reaches the optimum the direct solve reaches."""

import pytest

from ocp_problems import double_integrator, pendulum_swing_up, sliding_mass
from trajopt.errors import TrajoptInputError
from trajopt.core.ocp import HermiteSimpson, Ipopt, MeshContinuation, Radau


@pytest.mark.parametrize("transcription", [HermiteSimpson(intervals=16), Radau(intervals=16, degree=3)])
def test_double_integrator_reaches_the_analytic_optimum(transcription):
    # min int u^2, x'' = u, rest at 0 -> rest at 1 in 1 s: u* = 6 - 12 t, J* = 12 (both transcriptions exact).
    ocp, *_ = double_integrator()
    direct = ocp.solve(transcription, Ipopt(tol=1e-10))
    continued = ocp.solve(transcription, MeshContinuation(Ipopt(tol=1e-10)))
    assert direct.success and continued.success
    assert continued.objective == pytest.approx(12.0, rel=1e-8)
    assert continued.objective == pytest.approx(direct.objective, rel=1e-8)


def test_sliding_mass_minimum_time_is_bang_bang_two_seconds():
    # 10 kg, |F| <= 10 N: accelerate at 1 m/s^2 for 1 s, brake for 1 s -> t_f = 2 s.
    ocp, *_ = sliding_mass()
    solution = ocp.solve(HermiteSimpson(intervals=20), MeshContinuation(Ipopt(tol=1e-10)))
    assert solution.success
    assert solution.duration == pytest.approx(2.0, abs=1e-6)


def test_nonlinear_swing_up_same_optimum_and_iterations_count_both_solves():
    ocp, *_ = pendulum_swing_up()
    direct = ocp.solve(HermiteSimpson(intervals=40), Ipopt(tol=1e-10))
    coarse = ocp.solve(HermiteSimpson(intervals=20), Ipopt(tol=1e-10))
    continued = ocp.solve(HermiteSimpson(intervals=40), MeshContinuation(Ipopt(tol=1e-10)))
    assert continued.success
    assert continued.objective == pytest.approx(direct.objective, rel=1e-7)
    assert continued.iterations > coarse.iterations  # the coarse solve's iterations are counted


def test_coarsening_below_two_is_refused_in_one_line():
    with pytest.raises(TrajoptInputError, match="coarsening"):
        MeshContinuation(coarsening=1)


def test_gait2d_prediction_route_reaches_the_analytic_optimum_on_a_tiny_problem():
    # The shipped gait2d route (adaptive barrier on the half mesh, then the full mesh) on the double integrator.
    from trajopt.examples.gait2d.main import SolverRoute, prediction_solver

    ocp, *_ = double_integrator()
    for route in SolverRoute:
        solution = ocp.solve(HermiteSimpson(intervals=16), prediction_solver(Ipopt(tol=1e-10), route))
        assert solution.success
        assert solution.objective == pytest.approx(12.0, rel=1e-8)
