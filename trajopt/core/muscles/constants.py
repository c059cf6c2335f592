"""Curve constants of the DeGroote et al. (2016) musculotendon model: two published sets.

``DEGROOTE2016_PUBLISHED`` holds the constants of De Groote et al. (2016) as SymPy's
``sympy.physics.biomechanics`` uses them. ``DEGROOTE2016_OPENSIM`` holds those of OpenSim's
``DeGrooteFregly2016Muscle`` (4.x), which differ so the curves pass through their key points:

- tendon: ``0.2 exp(kT (l - 1)) - 0.2`` is exactly zero at slack length (published: 0.995 and
  0.25, giving -0.0127 at slack length);
- passive fiber: offset so the force is zero at l̃M = 0.2 (published: zero at l̃M = 1 and
  negative below it);
- active fiber: more digits, b11 chosen so fl(1) = 1;
- force-velocity: d1 and d4 solved so fv(-1) = 0 and fv(0) = 1.

Default: ``DEGROOTE2016_OPENSIM``. Users compare trajopt with OpenSim models and results, the
curves meet their key points exactly, and neither fiber nor tendon pushes inside the allowed
range. Pick ``DEGROOTE2016_PUBLISHED`` to reproduce the paper or SymPy.

In both sets the tendon stiffness kT follows from the muscle's tendon strain at one
normalized force ε (``kT = ln((1 + shift) / scale) / (1 + ε - offset)``); for ε = 0.049 the
published set gives SymPy's 33.93669377311689 and the OpenSim set 36.5665.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

GaussianTerm = tuple[float, float, float, float]


@dataclass(frozen=True)
class DeGroote2016Constants:
    """Shape constants of the four DeGroote 2016 curves (muscle-specific values live in ``MuscleParameters``).

    Tendon: ``tendon_scale * exp(kT (l̃T - tendon_offset)) - tendon_shift``.
    Passive fiber: ``(exp(kPE (l̃M - 1) / e0) - z) / (exp(kPE) - z)`` with
    ``z = exp(kPE (passive_zero_force_fiber_length - 1) / e0)``.
    Active fiber: sum over ``active_terms`` of ``b1 exp(-((l̃M - b2) / (b3 + b4 l̃M))² / 2)``.
    Force-velocity: ``d1 asinh(d2 ṽM + d3) + d4``.
    """

    name: str
    tendon_scale: float
    tendon_offset: float
    tendon_shift: float
    passive_exponent: float
    passive_zero_force_fiber_length: float
    active_terms: tuple[GaussianTerm, GaussianTerm, GaussianTerm]
    velocity_d1: float
    velocity_d2: float
    velocity_d3: float
    velocity_d4: float
    min_normalized_fiber_length: float = 0.2
    max_normalized_fiber_length: float = 1.8

    def tendon_stiffness(self, tendon_strain_at_one_norm_force):
        """kT such that the tendon force is 1 at normalized tendon length 1 + strain."""
        return math.log((1.0 + self.tendon_shift) / self.tendon_scale) / (
            1.0 + tendon_strain_at_one_norm_force - self.tendon_offset
        )


DEGROOTE2016_PUBLISHED = DeGroote2016Constants(
    name="published",
    tendon_scale=0.2,
    tendon_offset=0.995,
    tendon_shift=0.25,
    passive_exponent=4.0,
    passive_zero_force_fiber_length=1.0,
    active_terms=(
        (0.814, 1.06, 0.162, 0.0633),
        (0.433, 0.717, -0.0299, 0.2),
        (0.1, 1.0, 0.354, 0.0),
    ),
    velocity_d1=-0.318,
    velocity_d2=-8.149,
    velocity_d3=-0.374,
    velocity_d4=0.886,
)

DEGROOTE2016_OPENSIM = DeGroote2016Constants(
    name="opensim",
    tendon_scale=0.2,
    tendon_offset=1.0,
    tendon_shift=0.2,
    passive_exponent=4.0,
    passive_zero_force_fiber_length=0.2,
    active_terms=(
        (0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465),
        (0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188),
        (0.1, 1.0, 0.353553390593274, 0.0),
    ),
    velocity_d1=-0.3211346127989808,
    velocity_d2=-8.149,
    velocity_d3=-0.374,
    velocity_d4=0.8825327733249912,
)

DEFAULT_CONSTANTS = DEGROOTE2016_OPENSIM
