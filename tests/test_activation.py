"""Activation dynamics: SymPy's FirstOrderActivationDeGroote2016, OpenSim's rate, activation-rate bounds."""

import casadi
import numpy as np
import pytest
import sympy as sp
from sympy.physics import biomechanics as bm

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles import ActivationRateControl, FirstOrderActivationDeGroote2016

GRID = np.array([(e, a) for e in np.linspace(0.0, 1.0, 21) for a in np.linspace(0.01, 1.0, 20)])


def _sympy_rate(activation_time_constant, deactivation_time_constant, smoothing):
    model = bm.FirstOrderActivationDeGroote2016(
        "m",
        activation_time_constant=sp.Float(activation_time_constant),
        deactivation_time_constant=sp.Float(deactivation_time_constant),
        smoothing_rate=sp.Float(smoothing),
    )
    return sp.lambdify((model.e, model.a), model.rhs()[0], "numpy")


@pytest.mark.parametrize("constants", [(0.015, 0.060, 10.0), (0.01, 0.04, 0.1), (0.02, 0.08, 25.0)])
def test_rate_equals_sympy(constants):
    expected = _sympy_rate(*constants)(GRID[:, 0], GRID[:, 1])
    rate = FirstOrderActivationDeGroote2016(*constants).activation_rate
    actual = np.asarray(rate.map(len(GRID))(GRID[:, 0], GRID[:, 1])).ravel()
    assert np.max(np.abs(actual - expected)) <= 1e-12 * np.max(np.abs(expected))


def test_defaults_are_published_values():
    defaults = FirstOrderActivationDeGroote2016()
    reference = bm.FirstOrderActivationDeGroote2016.with_defaults("m")
    assert (defaults.activation_time_constant, defaults.deactivation_time_constant, defaults.smoothing) == (
        float(reference.tau_a),
        float(reference.tau_d),
        float(reference.b),
    )


def test_rate_function_is_named_and_takes_mx():
    rate = FirstOrderActivationDeGroote2016().activation_rate
    assert rate.name_in() == ["excitation", "activation"] and rate.name_out() == ["activation_rate"]
    e, a = casadi.MX.sym("e"), casadi.MX.sym("a")
    f = casadi.Function("f", [e, a], [rate(e, a)])
    assert float(f(1.0, 1.0)) == 0.0 and float(f(1.0, 0.0)) > 0.0 > float(f(0.0, 1.0))


def test_bad_time_constant_names_the_value():
    with pytest.raises(TrajoptInputError, match="deactivation_time_constant.*-0.06"):
        FirstOrderActivationDeGroote2016(deactivation_time_constant=-0.06)


def test_rate_bounds_are_the_linear_first_order_extremes():
    # A linear first-order model da/dt = (e - a)/tau with e in {0, 1} reaches exactly these bounds.
    control = ActivationRateControl(0.015, 0.060)
    a = np.linspace(0.0, 1.0, 11)
    assert np.allclose(control.max_activation_rate(a), (1.0 - a) / 0.015, rtol=0, atol=1e-12)
    assert np.allclose(control.min_activation_rate(a), (0.0 - a) / 0.060, rtol=0, atol=1e-12)
    lower, upper = control.path_constraints(0.5, control.max_activation_rate(0.5))
    assert float(upper) == 0.0 and float(lower) > 0.0
    lower, upper = control.path_constraints(0.5, control.min_activation_rate(0.5) - 1.0)
    assert float(lower) < 0.0 < float(upper)


def test_opensim_activation_rate_uses_smoothing_0_1(opensim_task):
    # OpenSim 4.6 hard codes tanh steepness 0.1; our model with smoothing=0.1 reproduces its rate.
    points = GRID[::7]
    reference = opensim_task(
        "degroote_muscle",
        dict(
            max_isometric_force=100.0,
            optimal_fiber_length=0.1,
            tendon_slack_length=0.2,
            rate_excitations=points[:, 0],
            rate_activations=points[:, 1],
        ),
    )
    rate = FirstOrderActivationDeGroote2016(smoothing=0.1).activation_rate
    actual = np.asarray(rate.map(len(points))(points[:, 0], points[:, 1])).ravel()
    assert len(points) >= 20
    assert np.max(np.abs(actual - reference["activation_rate"])) <= 1e-10
