"""Activation dynamics of De Groote et al. (2016): excitation-driven, or activation rate as control.

``FirstOrderActivationDeGroote2016`` is the smoothed first-order model (as in
``sympy.physics.biomechanics.FirstOrderActivationDeGroote2016``)::

    f = tanh(b (e - a)) / 2
    da/dt = [(f + 1/2) / (τa (1/2 + 3a/2)) + (1/2 + 3a/2)(1/2 - f) / τd] (e - a)

Smoothing b = 10 is the published/SymPy value; note OpenSim 4.x's DeGrooteFregly2016Muscle hard
codes b = 0.1, which blends activation and deactivation time constants far more.

``ActivationRateControl`` is the alternative of De Groote et al. (2016) in which da/dt is the
control: the path constraints ``da/dt + a/τd >= 0`` and ``(1 - a)/τa - da/dt >= 0`` keep it
within what a first-order model driven by an excitation in [0, 1] can produce.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import casadi

from trajopt.errors import TrajoptInputError


def _check_positive(owner: str, **values):
    for name, value in values.items():
        if not value > 0:
            raise TrajoptInputError(f"{owner}: {name} must be > 0, got {value!r}")


@dataclass(frozen=True)
class FirstOrderActivationDeGroote2016:
    """Smoothed first-order activation dynamics; time constants in seconds."""

    activation_time_constant: float = 0.015
    deactivation_time_constant: float = 0.060
    smoothing: float = 10.0

    def __post_init__(self):
        _check_positive(
            "FirstOrderActivationDeGroote2016",
            activation_time_constant=self.activation_time_constant,
            deactivation_time_constant=self.deactivation_time_constant,
            smoothing=self.smoothing,
        )

    def activation_rate_expression(self, excitation, activation):
        """da/dt for SX/MX/float excitation and activation."""
        e, a = excitation, activation
        f = 0.5 * casadi.tanh(self.smoothing * (e - a))
        z = 0.5 + 1.5 * a
        return ((f + 0.5) / (self.activation_time_constant * z) + z * (0.5 - f) / self.deactivation_time_constant) * (
            e - a
        )

    @cached_property
    def activation_rate(self) -> casadi.Function:
        """``activation_rate(excitation, activation) -> activation_rate`` (built once in SX)."""
        e, a = casadi.SX.sym("excitation"), casadi.SX.sym("activation")
        return casadi.Function(
            "activation_rate",
            [e, a],
            [self.activation_rate_expression(e, a)],
            ["excitation", "activation"],
            ["activation_rate"],
        )


@dataclass(frozen=True)
class ActivationRateControl:
    """Activation rate da/dt as the control, bounded so activation stays physiological."""

    activation_time_constant: float = 0.015
    deactivation_time_constant: float = 0.060

    def __post_init__(self):
        _check_positive(
            "ActivationRateControl",
            activation_time_constant=self.activation_time_constant,
            deactivation_time_constant=self.deactivation_time_constant,
        )

    def min_activation_rate(self, activation):
        """Fastest allowed deactivation, -a/τd (excitation 0)."""
        return -activation / self.deactivation_time_constant

    def max_activation_rate(self, activation):
        """Fastest allowed activation, (1 - a)/τa (excitation 1)."""
        return (1.0 - activation) / self.activation_time_constant

    def path_constraints_expression(self, activation, activation_rate):
        """Two expressions that must both be >= 0."""
        return (
            activation_rate - self.min_activation_rate(activation),
            self.max_activation_rate(activation) - activation_rate,
        )

    @cached_property
    def path_constraints(self) -> casadi.Function:
        """``path_constraints(activation, activation_rate) -> (deactivation_margin, activation_margin)``, both >= 0."""
        a, da = casadi.SX.sym("activation"), casadi.SX.sym("activation_rate")
        lower, upper = self.path_constraints_expression(a, da)
        return casadi.Function(
            "activation_rate_constraints",
            [a, da],
            [lower, upper],
            ["activation", "activation_rate"],
            ["deactivation_margin", "activation_margin"],
        )
