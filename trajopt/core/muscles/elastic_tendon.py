"""DeGroote 2016 musculotendon unit with an elastic tendon, in implicit and explicit form.

Implicit form (De Groote et al. 2016 formulation 3; OpenSim's ``implicit`` mode): the state is
the normalized tendon force f̃T, its time derivative is an input, and the equilibrium
``f̃T - f̃M cos α = 0`` is a residual the optimizer enforces. Tendon length comes from the
inverse tendon curve, tendon velocity from ``d f̃T/dt / (d f̃T / d l̃T)``, and fiber velocity
from ``(v_MT - v_T) cos α``; fiber damping enters the fiber force directly.

Explicit form (fiber-length state, as SymPy's ``FIBER_LENGTH_EXPLICIT``): the state is the
normalized fiber length; the tendon force follows from the tendon curve and the fiber velocity
from the inverse force-velocity curve, ``(f̃T / cos α - f̃PE) / (a f̃L)``. That inversion has no
closed form with fiber damping, so the explicit form requires ``fiber_damping == 0``, and it
divides by activation (keep a > 0).
"""

from __future__ import annotations

from functools import cached_property

import casadi
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles.constants import DEFAULT_CONSTANTS, DeGroote2016Constants
from trajopt.core.muscles.musculotendon import (
    ACTIVATION,
    MUSCULOTENDON_LENGTH,
    MUSCULOTENDON_VELOCITY,
    MuscleModel,
    named_function,
)
from trajopt.core.muscles.parameters import MuscleParameters

NORMALIZED_TENDON_FORCE = "normalized_tendon_force"
NORMALIZED_TENDON_FORCE_DERIVATIVE = "normalized_tendon_force_derivative"
NORMALIZED_FIBER_LENGTH = "normalized_fiber_length"

# OpenSim's bounds on the normalized tendon force state.
MIN_NORMALIZED_TENDON_FORCE = 0.0
MAX_NORMALIZED_TENDON_FORCE = 5.0


class ElasticTendonMuscle(MuscleModel):
    """Musculotendon unit with a compliant tendon.

    Implicit-form Functions, inputs ``(activation, musculotendon_length, musculotendon_velocity,
    normalized_tendon_force, normalized_tendon_force_derivative)``: ``equilibrium_residual``
    (f̃T - f̃M cos α), ``tendon_force`` (N) and ``quantities`` (all named outputs).
    Explicit-form Functions, inputs ``(activation, musculotendon_length,
    musculotendon_velocity, normalized_fiber_length)``: ``fiber_length_dynamics``
    (d l̃M/dt) and ``explicit_quantities``.
    """

    def __init__(self, parameters: MuscleParameters, constants: DeGroote2016Constants = DEFAULT_CONSTANTS):
        super().__init__(parameters, constants)
        inputs = {
            ACTIVATION: casadi.SX.sym(ACTIVATION),
            MUSCULOTENDON_LENGTH: casadi.SX.sym(MUSCULOTENDON_LENGTH),
            MUSCULOTENDON_VELOCITY: casadi.SX.sym(MUSCULOTENDON_VELOCITY),
            NORMALIZED_TENDON_FORCE: casadi.SX.sym(NORMALIZED_TENDON_FORCE),
            NORMALIZED_TENDON_FORCE_DERIVATIVE: casadi.SX.sym(NORMALIZED_TENDON_FORCE_DERIVATIVE),
        }
        outputs = self.implicit_outputs(*inputs.values())
        self.quantities = named_function(f"{self.name}_quantities", inputs, outputs)
        self.equilibrium_residual = named_function(
            f"{self.name}_equilibrium_residual", inputs, {"equilibrium_residual": outputs["equilibrium_residual"]}
        )
        self.tendon_force = named_function(
            f"{self.name}_tendon_force", inputs, {"tendon_force": outputs["tendon_force"]}
        )

    def implicit_outputs(
        self,
        activation,
        musculotendon_length,
        musculotendon_velocity,
        normalized_tendon_force,
        normalized_tendon_force_derivative,
    ) -> dict:
        """All named quantities of the implicit tendon-force form as expressions."""
        p = self.parameters
        normalized_tendon_length = self.normalized_tendon_length_at(normalized_tendon_force)
        tendon_length = p.tendon_slack_length * normalized_tendon_length
        fiber_length, cos_pennation, pennation = self.fiber_geometry(musculotendon_length - tendon_length)
        tendon_velocity = (
            p.tendon_slack_length
            * normalized_tendon_force_derivative
            / self.tendon_stiffness_multiplier(normalized_tendon_force)
        )
        fiber_velocity = (musculotendon_velocity - tendon_velocity) * cos_pennation
        outputs = self.fiber_outputs(activation, fiber_length, cos_pennation, pennation, fiber_velocity)
        outputs["tendon_force"] = p.max_isometric_force * normalized_tendon_force
        outputs["tendon_length"] = tendon_length
        outputs["tendon_velocity"] = tendon_velocity
        outputs["equilibrium_residual"] = (
            normalized_tendon_force - outputs["fiber_force_along_tendon"] / p.max_isometric_force
        )
        return outputs

    def normalized_tendon_force_derivative(self, activation, musculotendon_length, musculotendon_velocity,
                                           normalized_tendon_force, iterations: int = 30):
        """d f̃T/dt solving the implicit equilibrium (``equilibrium_residual`` = 0) at the given state: the explicit
        form of the tendon-force dynamics, with fiber damping β too.

        With y = d2 ṽM + d3 the argument of the force-velocity curve f̃V = d1 asinh(y) + d4, the equilibrium is
        ``c1 asinh(y) + c2 y = c0`` (c1 = -a f̃L d1 >= 0, c2 = -β / d2 >= 0), odd and increasing in y: Newton's
        method from the upper bound min(sinh(|c0| / c1), |c0| / c2) of |y| lands in [0, |y*|] in one step and then
        rises monotonically to the root (the curve is concave there). Without damping one step is exact;
        ``iterations`` steps are unrolled into the expression. No root without damping at zero activation.
        """
        p, c = self.parameters, self.constants
        tendon_length = p.tendon_slack_length * self.normalized_tendon_length_at(normalized_tendon_force)
        fiber_length, cos_pennation, _ = self.fiber_geometry(musculotendon_length - tendon_length)
        normalized_length = fiber_length / p.optimal_fiber_length
        target = normalized_tendon_force / cos_pennation - self.passive_force_multiplier(normalized_length)
        active = activation * self.active_force_length_multiplier(normalized_length)
        c1 = -active * c.velocity_d1
        c2 = -p.fiber_damping / c.velocity_d2
        c0 = -(target - active * c.velocity_d4 + p.fiber_damping * c.velocity_d3 / c.velocity_d2)
        size = casadi.fabs(c0)
        # With damping, sinh's argument is capped so that at zero activation (c1 = 0) neither the start nor its
        # derivative is inf or NaN (size / c2 is then the start, and the root).
        y = casadi.fmin(casadi.sinh(casadi.fmin(size / casadi.fmax(c1, 1e-12), 50.0)), size / c2) \
            if p.fiber_damping > 0 else casadi.sinh(size / c1)
        for _ in range(iterations if p.fiber_damping > 0 else 0):
            y = y - (c1 * casadi.asinh(y) + c2 * y - size) / (c1 / casadi.sqrt(1 + y**2) + c2)
        y = casadi.sign(c0) * y
        fiber_velocity = p.max_fiber_velocity * (y - c.velocity_d3) / c.velocity_d2
        tendon_velocity = musculotendon_velocity - fiber_velocity / cos_pennation
        return tendon_velocity * self.tendon_stiffness_multiplier(normalized_tendon_force) / p.tendon_slack_length

    def explicit_outputs(self, activation, musculotendon_length, musculotendon_velocity,
                         normalized_fiber_length) -> dict:
        """All named quantities of the explicit fiber-length form as expressions (except the input l̃M)."""
        p = self.parameters
        if p.fiber_damping != 0.0:
            raise TrajoptInputError(
                f"muscle '{p.name}': the explicit fiber-length form needs fiber_damping = 0 "
                f"(got {p.fiber_damping!r}); use the implicit form (quantities/equilibrium_residual)"
            )
        fiber_length = normalized_fiber_length * p.optimal_fiber_length
        along_tendon = casadi.sqrt(fiber_length**2 - p.fiber_width**2)
        cos_pennation = along_tendon / fiber_length
        tendon_length = musculotendon_length - along_tendon
        normalized_tendon_force = self.tendon_force_multiplier(tendon_length / p.tendon_slack_length)
        normalized_fiber_force = normalized_tendon_force / cos_pennation
        force_velocity = (normalized_fiber_force - self.passive_force_multiplier(normalized_fiber_length)) / (
            activation * self.active_force_length_multiplier(normalized_fiber_length)
        )
        fiber_velocity = p.max_fiber_velocity * self.normalized_fiber_velocity_at(force_velocity)
        outputs = self.fiber_outputs(
            activation, fiber_length, cos_pennation, casadi.atan2(p.fiber_width, along_tendon), fiber_velocity
        )
        outputs["tendon_force"] = p.max_isometric_force * normalized_tendon_force
        outputs["normalized_tendon_force"] = normalized_tendon_force
        outputs["tendon_length"] = tendon_length
        outputs["tendon_velocity"] = musculotendon_velocity - fiber_velocity / cos_pennation
        del outputs[NORMALIZED_FIBER_LENGTH]
        outputs["normalized_fiber_length_derivative"] = fiber_velocity / p.optimal_fiber_length
        return outputs

    @cached_property
    def explicit_quantities(self) -> casadi.Function:
        """Explicit fiber-length form: all named outputs (raises when fiber_damping != 0)."""
        inputs = self._explicit_inputs()
        return named_function(f"{self.name}_explicit_quantities", inputs, self.explicit_outputs(*inputs.values()))

    @cached_property
    def fiber_length_dynamics(self) -> casadi.Function:
        """``(activation, musculotendon_length, normalized_fiber_length) -> normalized_fiber_length_derivative``."""
        inputs = self._explicit_inputs()
        outputs = self.explicit_outputs(*inputs.values())
        del inputs[MUSCULOTENDON_VELOCITY]  # d l̃M/dt does not depend on it
        return named_function(
            f"{self.name}_fiber_length_dynamics",
            inputs,
            {"normalized_fiber_length_derivative": outputs["normalized_fiber_length_derivative"]},
        )

    def _explicit_inputs(self) -> dict:
        return {
            ACTIVATION: casadi.SX.sym(ACTIVATION),
            MUSCULOTENDON_LENGTH: casadi.SX.sym(MUSCULOTENDON_LENGTH),
            MUSCULOTENDON_VELOCITY: casadi.SX.sym(MUSCULOTENDON_VELOCITY),
            NORMALIZED_FIBER_LENGTH: casadi.SX.sym(NORMALIZED_FIBER_LENGTH),
        }

    def equilibrium_normalized_tendon_force(
        self, activation, musculotendon_length, musculotendon_velocity, tolerance: float = 1e-13
    ) -> np.ndarray:
        """Numeric f̃T solving the implicit residual with d f̃T/dt = 0, by bisection on [0, 5] (as OpenSim).

        Inputs are numbers or equal-length arrays; returns an array of their common shape.
        """
        a, length, velocity = np.broadcast_arrays(
            *(np.asarray(x, dtype=float) for x in (activation, musculotendon_length, musculotendon_velocity))
        )
        shape = a.shape
        a, length, velocity = (x.reshape(1, -1) for x in (a, length, velocity))
        residual = self.equilibrium_residual.map(a.shape[1])
        low = np.full(a.shape, MIN_NORMALIZED_TENDON_FORCE)
        high = np.full(a.shape, MAX_NORMALIZED_TENDON_FORCE)
        zero = np.zeros(a.shape)
        while np.max(high - low) > tolerance:
            middle = 0.5 * (low + high)
            positive = np.asarray(residual(a, length, velocity, middle, zero)) > 0.0
            high = np.where(positive, middle, high)
            low = np.where(positive, low, middle)
        return (0.5 * (low + high)).reshape(shape)
