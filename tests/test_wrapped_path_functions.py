"""Wrapped paths as compact casadi Functions (each OpenSim wrapping pass one call, skipped once the length has
converged): arm26's lengths and computeMomentArm values against OpenSim 4.6's held-out samples committed with the
model (trajopt/examples/arm26/path_samples_heldout.csv.gz), and the same Functions called on MX symbols, as an
optimal-control problem calls them, against their values on numbers. No OpenSim needed."""

import casadi as ca
import numpy as np

from conftest import ROOT
from trajopt.model.paths.geometric import GeometricPaths, geometric_path
from trajopt.model.paths.samples import PathSamples

HELDOUT = ROOT / "trajopt" / "examples" / "arm26" / "path_samples_heldout.csv.gz"
TOLERANCE = 1e-12  # m
SAMPLES_TOLERANCE = 2e-10  # m: the samples file keeps 10 significant digits of q, lengths and moment arms


def test_arm26_wrapped_lengths_and_moment_arms_equal_opensims_samples(arm26):
    samples = PathSamples.from_csv(HELDOUT)
    rows = np.random.default_rng(3201).choice(samples.size, 40, replace=False)
    model = arm26.multibody
    paths = GeometricPaths(arm26, generalized_force_moment_arms=True)
    function = paths.lengths_and_moment_arms_function(model.coordinate_names)
    q = samples.q[rows][:, samples.columns(model.coordinate_names)]
    lengths, arms = function.map(len(rows))(q.T)
    lengths = np.asarray(lengths).T
    arms = np.asarray(arms).reshape(len(paths.muscles), len(rows), model.nq).transpose(1, 0, 2)
    for k, muscle in enumerate(paths.muscles):
        m = samples.muscles.index(muscle)
        assert np.abs(lengths[:, k] - samples.lengths[rows, m]).max() <= SAMPLES_TOLERANCE, muscle
        for c, coordinate in enumerate(model.coordinate_names):
            j = samples.coordinates.index(coordinate)
            difference = np.abs(arms[:, k, c] - samples.moment_arms[rows, m, j]).max()
            assert difference <= SAMPLES_TOLERANCE, (muscle, coordinate)


def test_wrapped_length_called_on_mx_equals_its_numbers(arm26):
    """TRIlong (a cylinder and two ellipsoids, several passes): the length and −∂l/∂q through MX calls of the
    path's Function equal the Function's values on numbers, at random configurations over the coordinate ranges."""
    model = arm26.multibody
    path = geometric_path(arm26, "TRIlong")
    low = np.array([c.range[0] for c in model.coordinates])
    high = np.array([c.range[1] for c in model.coordinates])
    q = low + (high - low) * np.random.default_rng(3202).random((12, model.nq))
    symbol = ca.MX.sym("q", model.nq)
    length = path.wrapped_length_function(symbol)
    nested = ca.Function("nested", [symbol], [length, ca.jacobian(length, symbol)])
    for row in q:
        value, gradient = (np.asarray(v).ravel() for v in nested(row))
        assert abs(value[0] - float(path.wrapped_length_function(row))) <= TOLERANCE
        steps = np.eye(model.nq) * 1e-7
        central = [(float(path.wrapped_length_function(row + s)) - float(path.wrapped_length_function(row - s))) / 2e-7
                   for s in steps]
        # A configuration right at one of OpenSim's switches would differ; these seeds sit away from them.
        assert np.abs(gradient - central).max() <= 1e-6


def test_generalized_force_paths_derivatives_by_the_implicit_function_theorem(arm26):
    """With OpenSim's computeMomentArm the paths differentiate the wrap solves by the implicit function theorem at
    their results (trajopt.model.paths.wrapping.implicit): the Jacobian of the lengths and moment arms through MX
    calls against central differences of the same Function (whose values are OpenSim's, test above), at random
    configurations, where the one-sided differences agree (away from OpenSim's switches)."""
    model = arm26.multibody
    paths = GeometricPaths(arm26, generalized_force_moment_arms=True)
    function = paths.lengths_and_moment_arms_function(model.coordinate_names)
    symbol = ca.MX.sym("q", model.nq)
    lengths, arms = function(symbol)
    values = ca.vertcat(lengths, ca.vec(arms))
    jacobian = ca.Function("jacobian", [symbol], [ca.jacobian(values, symbol)])
    evaluate = ca.Function("values", [symbol], [values])
    low = np.array([c.range[0] for c in model.coordinates])
    high = np.array([c.range[1] for c in model.coordinates])
    q = low + (high - low) * np.random.default_rng(3203).random((30, model.nq))
    step, kept, worst = 1e-7, 0, 0.0
    for row in q:
        exact = np.asarray(jacobian(row))
        base = np.asarray(evaluate(row)).ravel()
        for i, s in enumerate(np.eye(model.nq) * step):
            plus, minus = np.asarray(evaluate(row + s)).ravel(), np.asarray(evaluate(row - s)).ravel()
            smooth = np.abs((plus - base) - (base - minus)) / step <= 1e-5
            kept += smooth.sum()
            worst = max(worst, np.abs(exact[:, i] - (plus - minus) / (2 * step))[smooth].max(initial=0.0))
    assert kept > 0.9 * q.size * len(base)
    # The solves stop at OpenSim's tolerances, not at their roots: measured 1.3e-4 (median 3e-8), m and m/rad.
    assert worst <= 5e-4
