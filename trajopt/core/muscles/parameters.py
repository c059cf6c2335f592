"""Parameters of one DeGroote 2016 musculotendon unit, named 1:1 after OpenSim's DeGrooteFregly2016Muscle."""

from __future__ import annotations

import math
from dataclasses import dataclass

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles.activation import FirstOrderActivationDeGroote2016


@dataclass(frozen=True)
class MuscleParameters:
    """One muscle's properties (SI units; angles in radians).

    ``max_contraction_velocity`` is in optimal fiber lengths per second, as in OpenSim.
    ``ignore_tendon_compliance`` and ``ignore_activation_dynamics`` record OpenSim's flags so a
    model loader can pick ``RigidTendonMuscle`` or ``ElasticTendonMuscle``; the classes
    themselves do not read them.
    """

    max_isometric_force: float
    optimal_fiber_length: float
    tendon_slack_length: float
    optimal_pennation_angle: float = 0.0
    max_contraction_velocity: float = 10.0
    tendon_strain_at_one_norm_force: float = 0.049
    passive_fiber_strain_at_one_norm_force: float = 0.6
    active_force_width_scale: float = 1.0
    fiber_damping: float = 0.0
    ignore_passive_fiber_force: bool = False
    activation_time_constant: float = 0.015
    deactivation_time_constant: float = 0.060
    ignore_tendon_compliance: bool = False
    ignore_activation_dynamics: bool = False
    name: str = "muscle"

    def __post_init__(self):
        positive = (
            "max_isometric_force",
            "optimal_fiber_length",
            "tendon_slack_length",
            "max_contraction_velocity",
            "tendon_strain_at_one_norm_force",
            "passive_fiber_strain_at_one_norm_force",
            "activation_time_constant",
            "deactivation_time_constant",
        )
        for field in positive:
            value = getattr(self, field)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise TrajoptInputError(f"muscle '{self.name}': {field} must be a finite number > 0, got {value!r}")
        if not 0.0 <= self.optimal_pennation_angle < math.pi / 2:
            raise TrajoptInputError(
                f"muscle '{self.name}': optimal_pennation_angle must be in [0, pi/2) rad, "
                f"got {self.optimal_pennation_angle!r}"
            )
        if not self.active_force_width_scale >= 1.0:
            raise TrajoptInputError(
                f"muscle '{self.name}': active_force_width_scale must be >= 1, got {self.active_force_width_scale!r}"
            )
        if not self.fiber_damping >= 0.0:
            raise TrajoptInputError(f"muscle '{self.name}': fiber_damping must be >= 0, got {self.fiber_damping!r}")

    @property
    def fiber_width(self) -> float:
        """Constant fiber thickness l_opt sin(α_opt) of the constant-thickness pennation model (m)."""
        return self.optimal_fiber_length * math.sin(self.optimal_pennation_angle)

    @property
    def max_fiber_velocity(self) -> float:
        """Maximum contraction velocity in m/s (max_contraction_velocity · optimal_fiber_length)."""
        return self.max_contraction_velocity * self.optimal_fiber_length

    def activation_dynamics(self, smoothing: float = 10.0) -> FirstOrderActivationDeGroote2016:
        """First-order activation dynamics with this muscle's time constants."""
        return FirstOrderActivationDeGroote2016(self.activation_time_constant, self.deactivation_time_constant,
                                                smoothing)
