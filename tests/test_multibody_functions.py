"""Coordinate functions of custom joints: values and slopes against analytic cases, SciPy and OpenSim."""

import casadi as ca
import numpy as np
import pytest
from scipy.interpolate import CubicSpline

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.functions import Constant, Linear, Multiplier, NaturalCubicSpline, Polynomial, SimmSpline

KNOTS_X = np.array([-1.5, -0.7, 0.0, 0.4, 1.1, 2.0, 2.2])
KNOTS_Y = np.array([0.3, -0.2, 0.05, 0.4, 0.1, -0.3, -0.25])


def _values(function, points):
    x = ca.SX.sym("x")
    f = ca.Function("f", [x], [function(x), function.derivative(x)])
    out = [f(p) for p in points]
    return np.array([float(v) for v, _ in out]), np.array([float(d) for _, d in out])


def _finite_difference(function, points, h=1e-6):
    return (_values(function, points + h)[0] - _values(function, points - h)[0]) / (2 * h)


def test_simple_functions():
    points = np.linspace(-2, 2, 9)
    assert np.allclose(_values(Constant(0.7), points)[0], 0.7) and np.allclose(_values(Constant(0.7), points)[1], 0)
    assert np.allclose(_values(Linear(2.5, -0.1), points)[0], 2.5 * points - 0.1)
    poly = Polynomial((0.3, -1.0, 0.5, 2.0))  # highest power first, as OpenSim
    assert np.abs(_values(poly, points)[0] - np.polyval([0.3, -1.0, 0.5, 2.0], points)).max() < 1e-14
    assert np.abs(_values(poly, points)[1] - np.polyval(np.polyder([0.3, -1.0, 0.5, 2.0]), points)).max() < 1e-13
    scaled = Multiplier(poly, -1.7)
    assert np.abs(_values(scaled, points)[0] + 1.7 * np.polyval([0.3, -1.0, 0.5, 2.0], points)).max() < 1e-13
    assert float(Linear(3.0, 1.0)(2.0)) == 7.0  # numbers in, numbers out


def test_simm_spline_reproduces_cubics_and_interpolates():
    # Its end conditions match third derivatives to divided differences: exact for any cubic.
    cubic = [0.4, -0.3, 1.2, -0.5]
    spline = SimmSpline(KNOTS_X, np.polyval(cubic, KNOTS_X))
    inside = np.linspace(KNOTS_X[0], KNOTS_X[-1], 41)
    values, slopes = _values(spline, inside)
    assert np.abs(values - np.polyval(cubic, inside)).max() < 1e-12
    assert np.abs(slopes - np.polyval(np.polyder(cubic), inside)).max() < 1e-11
    spline = SimmSpline(KNOTS_X, KNOTS_Y)
    assert np.abs(_values(spline, KNOTS_X)[0] - KNOTS_Y).max() < 1e-14


def test_simm_spline_is_c2_and_extrapolates_linearly():
    spline = SimmSpline(KNOTS_X, KNOTS_Y)
    h = 1e-7
    for knot in KNOTS_X[1:-1]:
        left, right = _values(spline, np.array([knot - h, knot + h]))[1]
        assert abs(left - right) < 1e-5  # slope continuous (second derivative finite)
    outside = np.array([-3.0, -2.0, 2.5, 4.0])
    values, slopes = _values(spline, outside)
    end_slopes = _values(spline, np.array([KNOTS_X[0], KNOTS_X[-1]]))[1]
    expected = np.where(outside < 0, KNOTS_Y[0] + (outside - KNOTS_X[0]) * end_slopes[0],
                        KNOTS_Y[-1] + (outside - KNOTS_X[-1]) * end_slopes[1])
    assert np.abs(values - expected).max() < 1e-14
    points = np.linspace(-2.9, 3.1, 37)
    assert np.abs(_values(spline, points)[1] - _finite_difference(spline, points)).max() < 1e-7


def test_natural_spline_matches_scipy():
    spline = NaturalCubicSpline(KNOTS_X, KNOTS_Y)
    reference = CubicSpline(KNOTS_X, KNOTS_Y, bc_type="natural")
    inside = np.linspace(KNOTS_X[0], KNOTS_X[-1], 57)
    values, slopes = _values(spline, inside)
    assert np.abs(values - reference(inside)).max() < 1e-14
    assert np.abs(slopes - reference(inside, 1)).max() < 1e-13


def test_bad_knots_are_rejected():
    with pytest.raises(TrajoptInputError, match="increasing"):
        SimmSpline([0.0, 0.0, 1.0], [1.0, 2.0, 3.0])


@pytest.mark.opensim
def test_simm_spline_matches_opensim(opensim_task):
    points = np.linspace(-2.5, 3.0, 45)
    for n in (2, 3, 4, len(KNOTS_X)):
        reference = opensim_task("simm_spline", {"x": KNOTS_X[:n], "y": KNOTS_Y[:n], "points": points})
        values, slopes = _values(SimmSpline(KNOTS_X[:n], KNOTS_Y[:n]), points)
        assert np.abs(values - reference["values"]).max() < 1e-13, n
        assert np.abs(slopes - reference["slopes"]).max() < 1e-12, n
