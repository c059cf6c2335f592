"""DeGroote 2016 musculotendon unit with a rigid tendon, and the fiber model shared with the elastic one.

A muscle object is built once from ``MuscleParameters`` and a constants set; its model
quantities are named ``casadi.Function``s built in SX, callable on SX, MX, DM or numpy::

    muscle = RigidTendonMuscle(MuscleParameters(max_isometric_force=600, optimal_fiber_length=0.1,
                                                tendon_slack_length=0.2))
    force = muscle.tendon_force(activation, musculotendon_length, musculotendon_velocity)
    passive, per_activation = muscle.tendon_force_affine(musculotendon_length, musculotendon_velocity)

Geometry follows OpenSim's DeGrooteFregly2016Muscle: constant fiber thickness
``w = l_opt sin(α_opt)``, fiber length ``sqrt((l_MT - l_T)² + w²)``, fiber velocity
``(v_MT - v_T) cos α``, normalized fiber velocity ``v_M / (max_contraction_velocity · l_opt)``.
Fiber force ``F_max (a f̃L f̃V + f̃PE + β ṽM)`` with fiber damping β; tendon force is the fiber
force along the tendon ``F_M cos α`` (rigid tendon) or ``F_max f̃T`` (elastic tendon).
``musculotendon_velocity`` is the lengthening speed (positive when the unit lengthens).
"""

from __future__ import annotations

import casadi

from trajopt.core.muscles.constants import DEFAULT_CONSTANTS, DeGroote2016Constants
from trajopt.core.muscles.curves import (
    fiber_force_length_active_degroote2016,
    fiber_force_length_passive_degroote2016,
    fiber_force_velocity_degroote2016,
    fiber_force_velocity_inverse_degroote2016,
    tendon_force_length_degroote2016,
    tendon_force_length_inverse_degroote2016,
)
from trajopt.core.muscles.parameters import MuscleParameters

ACTIVATION = "activation"
MUSCULOTENDON_LENGTH = "musculotendon_length"
MUSCULOTENDON_VELOCITY = "musculotendon_velocity"


def named_function(name: str, inputs: dict, outputs: dict) -> casadi.Function:
    """A ``casadi.Function`` from ordered dicts of named SX inputs and outputs."""
    return casadi.Function(name, list(inputs.values()), list(outputs.values()), list(inputs), list(outputs))


class MuscleModel:
    """Curves and fiber force of one muscle: the part rigid and elastic tendon units share."""

    def __init__(self, parameters: MuscleParameters, constants: DeGroote2016Constants = DEFAULT_CONSTANTS):
        self.parameters = parameters
        self.constants = constants

    @property
    def name(self) -> str:
        return self.parameters.name

    # Curves with this muscle's properties applied.
    def tendon_force_multiplier(self, normalized_tendon_length):
        return tendon_force_length_degroote2016(
            normalized_tendon_length, self.parameters.tendon_strain_at_one_norm_force, self.constants
        )

    def normalized_tendon_length_at(self, normalized_tendon_force):
        return tendon_force_length_inverse_degroote2016(
            normalized_tendon_force, self.parameters.tendon_strain_at_one_norm_force, self.constants
        )

    def tendon_stiffness_multiplier(self, normalized_tendon_force):
        """d f̃T / d l̃T written in the force: kT (f̃T + shift) for the exponential tendon curve."""
        k = self.constants.tendon_stiffness(self.parameters.tendon_strain_at_one_norm_force)
        return k * (normalized_tendon_force + self.constants.tendon_shift)

    def passive_force_multiplier(self, normalized_fiber_length):
        if self.parameters.ignore_passive_fiber_force:
            return 0.0 * normalized_fiber_length
        return fiber_force_length_passive_degroote2016(
            normalized_fiber_length, self.parameters.passive_fiber_strain_at_one_norm_force, self.constants
        )

    def active_force_length_multiplier(self, normalized_fiber_length):
        return fiber_force_length_active_degroote2016(
            normalized_fiber_length, self.parameters.active_force_width_scale, self.constants
        )

    def force_velocity_multiplier(self, normalized_fiber_velocity):
        return fiber_force_velocity_degroote2016(normalized_fiber_velocity, self.constants)

    def normalized_fiber_velocity_at(self, force_velocity_multiplier):
        return fiber_force_velocity_inverse_degroote2016(force_velocity_multiplier, self.constants)

    # Geometry and force.
    def fiber_geometry(self, fiber_length_along_tendon):
        """Fiber length, cos and angle of pennation from the fiber length projected on the tendon."""
        w = self.parameters.fiber_width
        fiber_length = casadi.sqrt(fiber_length_along_tendon**2 + w**2)
        return fiber_length, fiber_length_along_tendon / fiber_length, casadi.atan2(w, fiber_length_along_tendon)

    def fiber_outputs(self, activation, fiber_length, cos_pennation, pennation_angle, fiber_velocity) -> dict:
        """Named fiber quantities (forces along the fiber, in N) from fiber length and velocity."""
        p = self.parameters
        normalized_length = fiber_length / p.optimal_fiber_length
        normalized_velocity = fiber_velocity / p.max_fiber_velocity
        active_fl = self.active_force_length_multiplier(normalized_length)
        passive_fl = self.passive_force_multiplier(normalized_length)
        fv = self.force_velocity_multiplier(normalized_velocity)
        active = p.max_isometric_force * activation * active_fl * fv
        passive = p.max_isometric_force * passive_fl
        damping = p.max_isometric_force * p.fiber_damping * normalized_velocity
        fiber_force = active + passive + damping
        return {
            "fiber_force": fiber_force,
            "active_fiber_force": active,
            "passive_fiber_force": passive,
            "fiber_damping_force": damping,
            "fiber_force_along_tendon": fiber_force * cos_pennation,
            "fiber_length": fiber_length,
            "normalized_fiber_length": normalized_length,
            "fiber_velocity": fiber_velocity,
            "normalized_fiber_velocity": normalized_velocity,
            "pennation_angle": pennation_angle,
            "cos_pennation_angle": cos_pennation,
            "active_force_length_multiplier": active_fl,
            "passive_force_multiplier": passive_fl,
            "force_velocity_multiplier": fv,
        }


class RigidTendonMuscle(MuscleModel):
    """Musculotendon unit with an inextensible tendon (tendon length = tendon slack length).

    Functions (inputs ``activation``, ``musculotendon_length``, ``musculotendon_velocity``):
    ``tendon_force`` (N), ``quantities`` (all named outputs of ``fiber_outputs`` plus tendon
    force and length), and ``tendon_force_affine(musculotendon_length, musculotendon_velocity)
    -> (force_at_zero_activation, force_per_activation)``: the tendon force is exactly
    ``force_at_zero_activation + activation * force_per_activation``.
    """

    def __init__(self, parameters: MuscleParameters, constants: DeGroote2016Constants = DEFAULT_CONSTANTS):
        super().__init__(parameters, constants)
        a = casadi.SX.sym(ACTIVATION)
        length = casadi.SX.sym(MUSCULOTENDON_LENGTH)
        velocity = casadi.SX.sym(MUSCULOTENDON_VELOCITY)
        outputs = self.outputs(a, length, velocity)
        inputs = {ACTIVATION: a, MUSCULOTENDON_LENGTH: length, MUSCULOTENDON_VELOCITY: velocity}
        self.quantities = named_function(f"{self.name}_quantities", inputs, outputs)
        self.tendon_force = named_function(
            f"{self.name}_tendon_force", inputs, {"tendon_force": outputs["tendon_force"]}
        )
        at_zero = casadi.substitute(outputs["tendon_force"], a, 0.0)
        per_activation = casadi.jacobian(outputs["tendon_force"], a)  # independent of a: force is affine in a
        self.tendon_force_affine = named_function(
            f"{self.name}_tendon_force_affine",
            {MUSCULOTENDON_LENGTH: length, MUSCULOTENDON_VELOCITY: velocity},
            {"force_at_zero_activation": at_zero, "force_per_activation": per_activation},
        )

    def outputs(self, activation, musculotendon_length, musculotendon_velocity) -> dict:
        """All named quantities as expressions of the given (SX/MX/float) inputs."""
        p = self.parameters
        along_tendon = musculotendon_length - p.tendon_slack_length
        fiber_length, cos_pennation, pennation = self.fiber_geometry(along_tendon)
        fiber_velocity = musculotendon_velocity * cos_pennation
        outputs = self.fiber_outputs(activation, fiber_length, cos_pennation, pennation, fiber_velocity)
        outputs["tendon_force"] = outputs["fiber_force_along_tendon"]
        outputs["normalized_tendon_force"] = outputs["tendon_force"] / p.max_isometric_force
        outputs["tendon_length"] = p.tendon_slack_length + 0.0 * musculotendon_length
        return outputs
