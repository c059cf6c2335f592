"""Point-by-point NLP derivatives (trajopt.core.ocp.derivatives) equal CasADi's derivatives of the expanded graph."""

import casadi as ca
import numpy as np
import pytest

from ocp_problems import pendulum_swing_up
from trajopt.core.ocp import (Effort, Endpoint, FinalTime, Free, HermiteSimpson, Integral, Ipopt, Problem, Radau,
                              Trapezoidal)
from trajopt.core.ocp.nlp import transcribe


def coupled_problem():
    """Nonlinear in everything the transcription couples: free time, a parameter, an algebraic, path and
    endpoint constraints, an integral divided by an endpoint distance and a nonlinear endpoint goal."""
    ocp = Problem(duration=Free(0.5, 2.0))
    q = ocp.state("q", 2, bounds=(-3.0, 3.0), initial=(0.0, 0.5))
    w = ocp.state("w", 2, bounds=(-10.0, 10.0))
    tau = ocp.control("tau", 2, bounds=(-5.0, 5.0))
    z = ocp.algebraic("z", bounds=(-4.0, 4.0))
    mass = ocp.parameter("mass", bounds=(0.5, 2.0))
    ocp.set_derivative(q, w)
    ocp.set_derivative(w, ca.vertcat(tau[0] / mass - ca.sin(q[0]) * z, tau[1] * ca.cos(q[1]) + q[0] * w[1] * ocp.time))
    ocp.require(z - ca.sin(q[0]) * w[1] ** 2, equals=0.0, name="algebraic")
    ocp.require(q[0] * q[1] + mass * tau[0] ** 2, upper=3.0, name="path")
    ocp.require(ocp.final(q[0] * q[1]) - ocp.initial(w[0]) ** 2, equals=0.2, name="endpoint")
    distance = ocp.final(q[0]) - ocp.initial(q[0]) + 3.0
    ocp.minimize(Effort(tau, power=3, per_distance=distance) + 0.1 * FinalTime()
                 + Integral(mass * ca.sumsqr(w) * z) + Endpoint(ocp.final(q[1]) ** 2 * mass))
    return ocp


def expanded_reference(discrete):
    """Jacobian of g and upper-triangular Hessian of the Lagrangian from the expanded SX graph."""
    nlp = discrete.nlp
    graph = ca.Function("nlp", [nlp["x"]], [nlp["f"], nlp["g"]]).expand()
    x = ca.SX.sym("x", nlp["x"].numel())
    f, g = graph(x)
    lam_f, lam_g = ca.SX.sym("lam_f"), ca.SX.sym("lam_g", g.numel())
    hessian = ca.triu(ca.hessian(lam_f * f + ca.dot(lam_g, g), x)[0])
    return (ca.Function("jacobian_g", [x], [g, ca.jacobian(g, x)]),
            ca.Function("hessian_lagrangian", [x, lam_f, lam_g], [hessian]))


def assert_derivatives_equal_expanded(discrete, rng, samples: int = 1):
    """At `samples` random points and multipliers: g, its Jacobian and the Lagrangian's Hessian equal the expanded
    graph's to rounding. Returns the largest expected Jacobian and Hessian entries (that the check is not vacuous)."""
    functions = discrete.derivative_functions()
    jacobian, hessian = expanded_reference(discrete)
    largest = (0.0, 0.0)
    for _ in range(samples):
        x = rng.uniform(-0.4, 0.4, discrete.layout.size)
        lam_f, lam_g = rng.uniform(0.5, 2.0), rng.normal(size=discrete.lower_g.size)
        expected_g, expected_jacobian = (np.array(value) for value in jacobian(x))
        actual_g, actual_jacobian = (np.array(value) for value in functions["jac_g"](x, np.zeros(0)))
        assert np.allclose(actual_g, expected_g, rtol=1e-13, atol=1e-13 * np.abs(expected_g).max())
        expected_hessian = np.array(hessian(x, lam_f, lam_g))
        actual_hessian = np.array(functions["hess_lag"](x, np.zeros(0), lam_f, lam_g))
        assert np.allclose(actual_jacobian, expected_jacobian, rtol=1e-12, atol=1e-12 * np.abs(expected_jacobian).max())
        assert np.allclose(actual_hessian, expected_hessian, rtol=1e-12, atol=1e-12 * np.abs(expected_hessian).max())
        largest = (max(largest[0], np.abs(expected_jacobian).max()), max(largest[1], np.abs(expected_hessian).max()))
    return largest


@pytest.mark.parametrize("transcription", [Trapezoidal(4), HermiteSimpson(3), Radau(degree=3, intervals=2)])
def test_jacobian_and_hessian_equal_expanded_graph(transcription):
    discrete = transcribe(coupled_problem().compile(), transcription)
    largest_jacobian, largest_hessian = assert_derivatives_equal_expanded(discrete, np.random.default_rng(7), 3)
    assert largest_jacobian > 1.0 and largest_hessian > 1.0


def measured_data_problem():
    """Fixed time window, data of t through a linear interpolant (as measured kinematics enter an inverse problem):
    the time is data, nothing is differentiated along it."""
    ocp = Problem(duration=1.3, initial_time=0.2)
    samples = np.linspace(0.0, 2.0, 21)
    reference = ca.interpolant("reference", "linear", [samples], np.sin(3.0 * samples))
    q = ocp.state("q", bounds=(-3.0, 3.0), initial=0.0)
    w = ocp.state("w", bounds=(-10.0, 10.0))
    tau = ocp.control("tau", bounds=(-5.0, 5.0))
    r = reference(ocp.time)
    ocp.set_derivative(q, w)
    ocp.set_derivative(w, tau * (1.0 + r ** 2) - ca.sin(q) * r)
    ocp.require(q * w + r * tau ** 2, upper=3.0, name="path")
    ocp.minimize(Effort(tau) + Integral((q - r) ** 2 * (1.0 + w ** 2)))
    return ocp


@pytest.mark.parametrize("transcription", [Trapezoidal(5), HermiteSimpson(4), Radau(degree=3, intervals=3)])
def test_fixed_time_derivatives_equal_expanded_graph(transcription):
    discrete = transcribe(measured_data_problem().compile(), transcription)
    assert_derivatives_equal_expanded(discrete, np.random.default_rng(11))


def test_fixed_time_solve_matches_nlpsol_expanded_derivatives():
    """Same optimum and iterations with the time as data (point-by-point) and through nlpsol's expanded graph."""
    point = measured_data_problem().solve(HermiteSimpson(15), Ipopt(tol=1e-10))
    expanded = measured_data_problem().solve(HermiteSimpson(15), Ipopt(tol=1e-10, point_derivatives=False))
    assert point.success and expanded.success
    assert point.objective == pytest.approx(expanded.objective, rel=1e-9)
    assert point.iterations == expanded.iterations


def test_hessian_keeps_the_block_sparsity_of_the_expanded_graph():
    discrete = transcribe(coupled_problem().compile(), HermiteSimpson(5))
    structured = discrete.derivative_functions()["hess_lag"].sparsity_out(0)
    expanded = expanded_reference(discrete)[1].sparsity_out(0)  # upper triangle
    assert structured.nnz() == expanded.nnz() and structured == expanded


def test_solve_matches_nlpsol_expanded_derivatives():
    """Same optimum and iterations whether IPOPT gets point-by-point or expanded-graph derivatives."""
    ocp = pendulum_swing_up()[0]
    point = ocp.solve(HermiteSimpson(20), Ipopt(tol=1e-10))
    expanded = ocp.solve(HermiteSimpson(20), Ipopt(tol=1e-10, point_derivatives=False))
    assert point.success and expanded.success
    assert point.objective == pytest.approx(expanded.objective, rel=1e-9)
    assert point.iterations == expanded.iterations
