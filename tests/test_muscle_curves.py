"""DeGroote 2016 curves: SymPy values and derivatives, inverses, CasADi Jacobians, OpenSim's own curve methods."""

import casadi
import numpy as np
import pytest
import sympy as sp
from sympy.physics import biomechanics as bm

from trajopt.core.muscles import (
    DEGROOTE2016_OPENSIM,
    DEGROOTE2016_PUBLISHED,
    fiber_force_length_active_degroote2016,
    fiber_force_length_passive_degroote2016,
    fiber_force_length_passive_inverse_degroote2016,
    fiber_force_velocity_degroote2016,
    fiber_force_velocity_inverse_degroote2016,
    tendon_force_length_degroote2016,
    tendon_force_length_inverse_degroote2016,
)

N = 201
TENDON_LENGTHS = np.linspace(0.9, 1.09, N)
TENDON_FORCES = np.linspace(-0.19, 5.0, N)
FIBER_LENGTHS = np.linspace(0.2, 1.8, N)
FIBER_VELOCITIES = np.linspace(-1.0, 1.0, N)
PASSIVE_FORCES = np.linspace(-0.018, 3.8, N)
FORCE_VELOCITY_MULTIPLIERS = np.linspace(0.0, 1.79, N)

# (trajopt curve, SymPy class, points); for the published set, with SymPy's defaults.
PUBLISHED_CURVES = [
    (tendon_force_length_degroote2016, bm.TendonForceLengthDeGroote2016, TENDON_LENGTHS),
    (tendon_force_length_inverse_degroote2016, bm.TendonForceLengthInverseDeGroote2016, TENDON_FORCES),
    (fiber_force_length_passive_degroote2016, bm.FiberForceLengthPassiveDeGroote2016, FIBER_LENGTHS),
    (fiber_force_length_passive_inverse_degroote2016, bm.FiberForceLengthPassiveInverseDeGroote2016, PASSIVE_FORCES),
    (fiber_force_length_active_degroote2016, bm.FiberForceLengthActiveDeGroote2016, FIBER_LENGTHS),
    (fiber_force_velocity_degroote2016, bm.FiberForceVelocityDeGroote2016, FIBER_VELOCITIES),
    (fiber_force_velocity_inverse_degroote2016, bm.FiberForceVelocityInverseDeGroote2016, FORCE_VELOCITY_MULTIPLIERS),
]


def _sympy_value_and_derivative(curve):
    x = sp.Symbol("x")
    expression = curve(x)
    value = sp.lambdify(x, expression.doit(), "mpmath")
    derivative = sp.lambdify(x, sp.diff(expression, x).doit(), "mpmath")
    import mpmath

    mpmath.mp.dps = 30

    def evaluate(points):
        return (
            np.array([float(value(mpmath.mpf(float(p)))) for p in points]),
            np.array([float(derivative(mpmath.mpf(float(p)))) for p in points]),
        )

    return evaluate


def _casadi_value_and_derivative(function, points, **kwargs):
    x = casadi.SX.sym("x")
    expression = function(x, **kwargs)
    f = casadi.Function("f", [x], [expression, casadi.jacobian(expression, x)])
    value, derivative = f.map(len(points))(points.reshape(1, -1))
    return np.asarray(value).ravel(), np.asarray(derivative).ravel()


def _opensim_sympy_curves():
    """OpenSim-set curves expressed with SymPy's classes and OpenSim's constants (passive has no SymPy form)."""
    c = DEGROOTE2016_OPENSIM
    k = c.tendon_stiffness(0.049)
    active = [value for term in c.active_terms for value in term]
    velocity = (c.velocity_d1, c.velocity_d2, c.velocity_d3, c.velocity_d4)
    return [
        (tendon_force_length_degroote2016, lambda x: bm.TendonForceLengthDeGroote2016(x, 0.2, 1.0, 0.2, k),
         TENDON_LENGTHS),
        (
            tendon_force_length_inverse_degroote2016,
            lambda x: bm.TendonForceLengthInverseDeGroote2016(x, 0.2, 1.0, 0.2, k),
            TENDON_FORCES,
        ),
        (fiber_force_length_active_degroote2016, lambda x: bm.FiberForceLengthActiveDeGroote2016(x, *active),
         FIBER_LENGTHS),
        (fiber_force_velocity_degroote2016, lambda x: bm.FiberForceVelocityDeGroote2016(x, *velocity),
         FIBER_VELOCITIES),
        (
            fiber_force_velocity_inverse_degroote2016,
            lambda x: bm.FiberForceVelocityInverseDeGroote2016(x, *velocity),
            FORCE_VELOCITY_MULTIPLIERS,
        ),
    ]


@pytest.mark.parametrize("function, sympy_curve, points", PUBLISHED_CURVES, ids=lambda v: getattr(v, "__name__", ""))
def test_published_set_equals_sympy(function, sympy_curve, points):
    expected_value, expected_derivative = _sympy_value_and_derivative(sympy_curve.with_defaults)(points)
    value, derivative = _casadi_value_and_derivative(function, points, constants=DEGROOTE2016_PUBLISHED)
    assert len(points) >= 200
    assert np.max(np.abs(value - expected_value)) <= 1e-12
    assert np.max(np.abs(derivative - expected_derivative)) <= 1e-12
    # numpy path gives the same numbers as the CasADi path
    numeric = function(points, constants=DEGROOTE2016_PUBLISHED)
    assert np.max(np.abs(numeric - expected_value)) <= 1e-12


@pytest.mark.parametrize("function, sympy_curve, points", _opensim_sympy_curves(),
                         ids=lambda v: getattr(v, "__name__", ""))
def test_opensim_set_equals_sympy_with_opensim_constants(function, sympy_curve, points):
    expected_value, expected_derivative = _sympy_value_and_derivative(sympy_curve)(points)
    value, derivative = _casadi_value_and_derivative(function, points, constants=DEGROOTE2016_OPENSIM)
    assert np.max(np.abs(value - expected_value)) <= 1e-12
    assert np.max(np.abs(derivative - expected_derivative)) <= 1e-12


@pytest.mark.parametrize("constants", [DEGROOTE2016_PUBLISHED, DEGROOTE2016_OPENSIM], ids=lambda c: c.name)
def test_inverses_round_trip(constants):
    pairs = [
        (tendon_force_length_degroote2016, tendon_force_length_inverse_degroote2016, TENDON_LENGTHS),
        (fiber_force_length_passive_degroote2016, fiber_force_length_passive_inverse_degroote2016, FIBER_LENGTHS),
        (fiber_force_velocity_degroote2016, fiber_force_velocity_inverse_degroote2016, FIBER_VELOCITIES),
    ]
    for forward, inverse, points in pairs:
        assert np.max(np.abs(inverse(forward(points, constants=constants), constants=constants) - points)) <= 1e-12
        values = forward(points, constants=constants)
        assert np.max(np.abs(forward(inverse(values, constants=constants), constants=constants) - values)) <= 1e-12


def test_opensim_set_meets_key_points():
    c = DEGROOTE2016_OPENSIM
    assert abs(fiber_force_length_active_degroote2016(1.0, constants=c) - 1.0) < 1e-14
    assert abs(fiber_force_velocity_degroote2016(0.0, constants=c) - 1.0) < 1e-14
    assert abs(fiber_force_velocity_degroote2016(-1.0, constants=c)) < 1e-14
    assert abs(tendon_force_length_degroote2016(1.0, constants=c)) < 1e-15
    assert abs(tendon_force_length_degroote2016(1.049, constants=c) - 1.0) < 1e-14
    assert abs(fiber_force_length_passive_degroote2016(0.2, constants=c)) < 1e-15
    assert abs(fiber_force_length_passive_degroote2016(1.6, constants=c) - 1.0) < 1e-14


@pytest.mark.parametrize("constants", [DEGROOTE2016_PUBLISHED, DEGROOTE2016_OPENSIM], ids=lambda c: c.name)
def test_casadi_jacobians_equal_central_differences(constants):
    curves = [
        (tendon_force_length_degroote2016, TENDON_LENGTHS, {"tendon_strain_at_one_norm_force": 0.06}),
        (tendon_force_length_inverse_degroote2016, TENDON_FORCES, {}),
        (fiber_force_length_passive_degroote2016, FIBER_LENGTHS, {"passive_fiber_strain_at_one_norm_force": 0.5}),
        (fiber_force_length_passive_inverse_degroote2016, PASSIVE_FORCES[1:], {}),
        (fiber_force_length_active_degroote2016, FIBER_LENGTHS, {"active_force_width_scale": 1.4}),
        (fiber_force_velocity_degroote2016, FIBER_VELOCITIES, {}),
        (fiber_force_velocity_inverse_degroote2016, FORCE_VELOCITY_MULTIPLIERS, {}),
    ]
    h = 1e-6
    for function, points, kwargs in curves:
        _, derivative = _casadi_value_and_derivative(function, points, constants=constants, **kwargs)
        up = function(points + h, constants=constants, **kwargs)
        down = function(points - h, constants=constants, **kwargs)
        difference = (up - down) / (2 * h)
        scale = np.maximum(1.0, np.abs(derivative))
        assert np.max(np.abs(derivative - difference) / scale) <= 1e-6, function.__name__


def test_curves_accept_float_numpy_sx_mx():
    x = 1.1
    expected = fiber_force_length_active_degroote2016(x)
    assert isinstance(expected, float)
    assert fiber_force_length_active_degroote2016(np.array([x, x])).shape == (2,)
    for symbol in (casadi.SX.sym("x"), casadi.MX.sym("x")):
        f = casadi.Function("f", [symbol], [fiber_force_length_active_degroote2016(symbol)])
        assert abs(float(f(x)) - expected) < 1e-15


OPENSIM_PARAMETERS = {"tendon_strain_at_one_norm_force": 0.06, "passive_fiber_strain_at_one_norm_force": 0.5,
                      "active_force_width_scale": 1.3}


def test_opensim_set_equals_opensim_curve_methods(opensim_task):
    c = DEGROOTE2016_OPENSIM
    request = dict(
        max_isometric_force=100.0,
        optimal_fiber_length=0.1,
        tendon_slack_length=0.2,
        curve_normalized_tendon_length=TENDON_LENGTHS,
        curve_normalized_tendon_force=TENDON_FORCES,
        curve_normalized_fiber_length=FIBER_LENGTHS,
        curve_normalized_fiber_velocity=FIBER_VELOCITIES,
        curve_force_velocity_multiplier=FORCE_VELOCITY_MULTIPLIERS,
        **OPENSIM_PARAMETERS,
    )
    reference = opensim_task("degroote_muscle", request)
    strain = {"tendon_strain_at_one_norm_force": 0.06}
    passive = {"passive_fiber_strain_at_one_norm_force": 0.5}
    width = {"active_force_width_scale": 1.3}
    checks = [
        ("tendon_force_multiplier", tendon_force_length_degroote2016, TENDON_LENGTHS, strain),
        ("tendon_force_length_inverse", tendon_force_length_inverse_degroote2016, TENDON_FORCES, strain),
        ("passive_force_multiplier", fiber_force_length_passive_degroote2016, FIBER_LENGTHS, passive),
        ("active_force_length_multiplier", fiber_force_length_active_degroote2016, FIBER_LENGTHS, width),
        ("force_velocity_multiplier", fiber_force_velocity_degroote2016, FIBER_VELOCITIES, {}),
        ("force_velocity_inverse", fiber_force_velocity_inverse_degroote2016, FORCE_VELOCITY_MULTIPLIERS, {}),
    ]
    for name, function, points, kwargs in checks:
        assert np.max(np.abs(function(points, constants=c, **kwargs) - reference[name])) <= 1e-12, name
    derivatives = [
        ("tendon_force_multiplier_derivative", tendon_force_length_degroote2016, TENDON_LENGTHS, strain),
        ("passive_force_multiplier_derivative", fiber_force_length_passive_degroote2016, FIBER_LENGTHS, passive),
        ("active_force_length_multiplier_derivative", fiber_force_length_active_degroote2016, FIBER_LENGTHS, width),
    ]
    for name, function, points, kwargs in derivatives:
        _, derivative = _casadi_value_and_derivative(function, points, constants=c, **kwargs)
        assert np.max(np.abs(derivative - reference[name])) <= 1e-12, name
