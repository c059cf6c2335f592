"""Muscle metabolic energy rate of Umberger (2010), term by term as OpenSim's ``Umberger2010MuscleMetabolicsProbe``
(not smoothed: its switches are ``if_else``), as CasADi expressions of the same ``MetabolicInputs`` as Bhargava's.

Per unit muscle mass (W/kg), with A = e when e > a, else (e + a) / 2, f̃L the active force-length multiplier,
r the slow-twitch ratio (by default recruited as Bhargava 2004: r = S / (S + F), 1 at e = 0) and S_aer the
aerobic factor: activation-maintenance ``S_aer A^0.6 (128 (1 - r) + 25)`` (times 0.4 + 0.6 f̃L beyond optimal
length); shortening heat with ṽ = v_M / l_opt, α_slow = 100 / (v_max / 2.5), α_fast = 153 / v_max:
``S_aer A² (r min(-α_slow ṽ, 100) - α_fast ṽ (1 - r))`` when shortening, ``S_aer A (4 or 0.3) α_slow ṽ`` when
lengthening (0.3 when negative work is excluded), times f̃L beyond optimal length; work rate ``-F_active v_M /
m`` (F_active clamped at 0; lengthening excluded optionally). The shortening heat is raised so the sum is not
negative, the heat rates' sum is at least 1 W/kg, and every rate is returned in W (times the muscle mass m).

Umberger (2010), J. R. Soc. Interface 7(50), doi:10.1098/rsif.2009.0520; Umberger et al. (2003), Comput.
Methods Biomech. Biomed. Eng. 6(2), doi:10.1080/1025584031000091678.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import casadi

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles.metabolics_bhargava2004 import (
    MetabolicInputs,
    check_muscle_constants,
    muscle_mass_of,
)
from trajopt.core.muscles.parameters import MuscleParameters

# Cap (W/kg) of the slow-twitch shortening heat rate.
MAX_SLOW_TWITCH_SHORTENING_RATE = 100.0


@dataclass(frozen=True)
class Umberger2010Constants:
    """Model-wide options, OpenSim's property names and defaults (the rates' on/off switches are not offered)."""

    aerobic_factor: float = 1.5
    use_Bhargava_recruitment_model: bool = True
    include_negative_mechanical_work: bool = True
    forbid_negative_total_power: bool = True
    enforce_minimum_heat_rate_per_muscle: bool = True
    basal_rate_on: bool = True
    basal_coefficient: float = 1.2
    basal_exponent: float = 1.0
    muscle_effort_scaling_factor: float = 1.0

    def __post_init__(self):
        for name in ("aerobic_factor", "muscle_effort_scaling_factor"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise TrajoptInputError(f"Umberger2010Constants: {name} must be a finite number > 0, got {value!r}")


DEFAULT_UMBERGER2010 = Umberger2010Constants()


@dataclass(frozen=True)
class Umberger2010MuscleConstants:
    """One muscle's metabolic parameters: slow-twitch ratio and mass (given, or from specific tension and density)."""

    ratio_slow_twitch_fibers: float = 0.5
    specific_tension: float = 0.25e6
    density: float = 1059.7
    muscle_mass: float | None = None

    def __post_init__(self):
        check_muscle_constants(self)

    def mass(self, parameters: MuscleParameters) -> float:
        return muscle_mass_of(self, parameters)


DEFAULT_MUSCLE_UMBERGER2010 = Umberger2010MuscleConstants()


@dataclass(frozen=True)
class Umberger2010Rates:
    """Per-muscle rates (W); ``total_rate`` = (heat rates' sum, at least 1 W/kg when enforced) + work rate."""

    activation_maintenance_heat_rate: object
    shortening_heat_rate: object
    mechanical_work_rate: object
    total_rate: object


def metabolic_rates_umberger2010(
    inputs: MetabolicInputs,
    parameters: MuscleParameters,
    muscle_mass: float,
    muscle: Umberger2010MuscleConstants = DEFAULT_MUSCLE_UMBERGER2010,
    constants: Umberger2010Constants = DEFAULT_UMBERGER2010,
) -> Umberger2010Rates:
    """One muscle's rates (W) as expressions of ``inputs`` (SX, MX or numbers), term by term as OpenSim's probe.

    ``parameters`` gives the optimal fiber length and max contraction velocity; ``passive_fiber_force`` is unused.
    """
    c = constants
    scaling = c.muscle_effort_scaling_factor
    excitation = scaling * inputs.excitation
    activation = scaling * inputs.activation
    active_force = casadi.fmax(scaling * inputs.active_fiber_force, 0.0)
    velocity = inputs.fiber_velocity
    normalized_velocity = velocity / parameters.optimal_fiber_length
    length = inputs.normalized_fiber_length
    force_length = inputs.active_force_length_multiplier
    a = casadi.if_else(excitation > activation, excitation, (excitation + activation) / 2)
    ratio = muscle.ratio_slow_twitch_fibers
    if c.use_Bhargava_recruitment_model:
        slow = ratio * casadi.sin(0.5 * math.pi * excitation)
        fast = (1 - ratio) * (1 - casadi.cos(0.5 * math.pi * excitation))
        ratio = casadi.if_else(excitation == 0, 1.0, slow / casadi.if_else(excitation == 0, 1.0, slow + fast))

    unscaled = 128 * (1 - ratio) + 25
    beyond_optimal = length > 1.0
    activation_maintenance = c.aerobic_factor * a**0.6 * casadi.if_else(
        beyond_optimal, 0.4 * unscaled + 0.6 * unscaled * force_length, unscaled)

    fast_max = parameters.max_contraction_velocity
    alpha_slow = 100 / (fast_max / 2.5)
    alpha_fast = 153 / fast_max
    slow_rate = casadi.fmin(-alpha_slow * normalized_velocity, MAX_SLOW_TWITCH_SHORTENING_RATE)
    shortening = c.aerobic_factor * a**2 * (slow_rate * ratio - alpha_fast * normalized_velocity * (1 - ratio))
    lengthening = c.aerobic_factor * a * (4.0 if c.include_negative_mechanical_work else 0.3) * alpha_slow \
        * normalized_velocity
    shortening_heat = casadi.if_else(normalized_velocity <= 0, shortening, lengthening)
    shortening_heat = casadi.if_else(beyond_optimal, shortening_heat * force_length, shortening_heat)

    work = -active_force * velocity
    if not c.include_negative_mechanical_work:
        work = casadi.if_else(velocity <= 0, work, 0.0)
    work = work / muscle_mass

    if c.forbid_negative_total_power:
        before_clamp = activation_maintenance + shortening_heat + work
        shortening_heat = shortening_heat - casadi.if_else(before_clamp < 0, before_clamp, 0.0)
    heat = activation_maintenance + shortening_heat
    if c.enforce_minimum_heat_rate_per_muscle:
        heat = casadi.if_else(heat < 1.0, 1.0, heat)
    return Umberger2010Rates(activation_maintenance * muscle_mass, shortening_heat * muscle_mass,
                             work * muscle_mass, (heat + work) * muscle_mass)


def basal_metabolic_rate_umberger2010(body_mass, constants: Umberger2010Constants = DEFAULT_UMBERGER2010):
    """Whole-body basal rate (W): ``basal_coefficient · body_mass ** basal_exponent`` (0 when basal_rate_on is
    False)."""
    if not constants.basal_rate_on:
        return 0.0 * body_mass
    return constants.basal_coefficient * body_mass**constants.basal_exponent


def metabolics_umberger2010_function(
    muscles: Sequence[MuscleParameters],
    metabolic: Sequence[Umberger2010MuscleConstants] | None = None,
    constants: Umberger2010Constants = DEFAULT_UMBERGER2010,
    name: str = "metabolics_umberger2010",
) -> casadi.Function:
    """Named Function of n muscles with the inputs of ``metabolics_bhargava2004_function`` and outputs (n-vectors)
    activation_maintenance_heat_rate, shortening_heat_rate, mechanical_work_rate, total_rate (W)."""
    muscles = tuple(muscles)
    metabolic = tuple(metabolic) if metabolic is not None else (DEFAULT_MUSCLE_UMBERGER2010,) * len(muscles)
    if len(metabolic) != len(muscles):
        raise TrajoptInputError(f"metabolics_umberger2010_function: {len(metabolic)} metabolic parameter sets "
                                f"for {len(muscles)} muscles")
    inputs = {key: casadi.SX.sym(key, len(muscles)) for key in MetabolicInputs.__dataclass_fields__}
    rates = [metabolic_rates_umberger2010(MetabolicInputs(**{key: value[k] for key, value in inputs.items()}),
                                          parameters, own.mass(parameters), own, constants)
             for k, (parameters, own) in enumerate(zip(muscles, metabolic))]
    outputs = {key: casadi.vertcat(*[getattr(r, key) for r in rates]) for key in Umberger2010Rates.__dataclass_fields__}
    return casadi.Function(name, list(inputs.values()), list(outputs.values()), list(inputs), list(outputs))
