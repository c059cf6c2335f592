"""Muscle metabolic energy rate of Bhargava et al. (2004), term by term as OpenSim's
``Bhargava2004SmoothedMuscleMetabolics``, as CasADi expressions of the muscle states.

Per muscle (W): activation heat rate ``m (A_s S + A_f F)`` and maintenance heat rate ``m g(l̃M) (M_s S + M_f F)``
with slow/fast-twitch recruitment ``S = r sin(π e / 2)``, ``F = (1 - r)(1 - cos(π e / 2))`` (r: slow-twitch
ratio, e: excitation, m: muscle mass, g: a piecewise-linear fiber-length dependence); shortening heat rate
``-α v_M`` with α = 0.25 F_M when shortening, 0 when lengthening (or, force dependent, 0.16 F_iso + 0.18 F_M
and 0.157 F_M), where F_M = F_active + F_passive (passive: elastic + damping), F_iso = a f̃L F_max; mechanical
work rate ``-F_active v_M`` (optionally its positive part only). The shortening heat rate is raised so the sum of
the four is not negative (``forbid_negative_total_power``); the heat rates' sum may not fall below 1 W/kg
(``enforce_minimum_heat_rate_per_muscle``); the total is the (clamped) heat rate plus the work rate. The basal
rate ``c M^p`` uses the body mass M. Fiber velocity is negative when shortening.

Each "if" of the model is a conditional of a smoothing object: ``TanhSmoothing()`` (default; OpenSim's
``use_smoothing`` with ``smoothing_type`` tanh), ``HuberSmoothing()`` (``huber``), ``NoSmoothing()`` (OpenSim's
``use_smoothing = false``, its component default; not differentiable). OpenSim adds 1e-16 to the fiber
velocity in these conditionals; so does this module.

Bhargava, Pandy, Anderson (2004), J. Biomech. 37(1), doi:10.1016/s0021-9290(03)00239-2.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import casadi

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles.musculotendon import RigidTendonMuscle
from trajopt.core.muscles.parameters import MuscleParameters

# OpenSim adds this to the fiber velocity in the velocity conditionals (avoids 0/0 in the Huber form).
VELOCITY_EPSILON = 1e-16
# Abscissae (normalized fiber length) and values of OpenSim's fiber-length dependence of the maintenance rate.
FIBER_LENGTH_DEPENDENCE_POINTS = ((0.0, 0.5), (0.5, 0.5), (1.0, 1.0), (1.5, 0.0), (10.0, 0.0))
# Where OpenSim's Huber loss turns from quadratic to linear.
HUBER_DELTA = 1.0


@dataclass(frozen=True)
class TanhSmoothing:
    """``left`` when condition <= 0, ``right`` otherwise, blended by ``0.5 + 0.5 tanh(smoothing · condition)``.

    Every smoothing object has OpenSim's two conditionals, ``conditional(condition, left, right, smoothing,
    direction, slope=None)`` and ``tanh_conditional`` (the one the force-dependent shortening constant uses);
    ``direction`` and ``slope`` matter to the Huber form only.
    """

    def conditional(self, condition, left, right, smoothing: float, direction: int, slope=None):
        return left + (right - left) * (0.5 + 0.5 * casadi.tanh(smoothing * condition))

    def tanh_conditional(self, condition, left, right, smoothing: float, direction: int):
        return self.conditional(condition, left, right, smoothing, direction)


@dataclass(frozen=True)
class HuberSmoothing:
    """OpenSim's Huber-loss conditional: for the linear switches of the model (``right - left`` proportional to
    ``condition``), a scaled Huber loss of ``direction · condition`` shifted by ``0.5 / smoothing``; the
    force-dependent shortening constant still uses the tanh form (as OpenSim).

    The scale is ``(right - left) / condition``, or ``slope`` when the caller knows it: the two clamps pass their
    constant ratio (-1, +1), so a condition of exactly 0 gives the continuous limit where OpenSim divides 0 by 0
    and reports NaN (zero excitation while lengthening with negative work excluded: total power exactly 0)."""

    def conditional(self, condition, left, right, smoothing: float, direction: int, slope=None):
        offset = left if direction == 1 else right
        scale = (right - left) / condition if slope is None else slope
        y = smoothing * (direction * condition + 0.5 / smoothing)
        loss = casadi.if_else(y < 0, 0.0, casadi.if_else(y <= HUBER_DELTA, 0.5 * y * y,
                                                          HUBER_DELTA * (y - 0.5 * HUBER_DELTA)))
        return scale * (loss / smoothing + offset)

    def tanh_conditional(self, condition, left, right, smoothing: float, direction: int):
        return TanhSmoothing().conditional(condition, left, right, smoothing, direction)


@dataclass(frozen=True)
class NoSmoothing:
    """The model's switches as they are: ``left`` when condition <= 0, ``right`` otherwise."""

    def conditional(self, condition, left, right, smoothing: float, direction: int, slope=None):
        return casadi.if_else(condition <= 0, left, right)

    def tanh_conditional(self, condition, left, right, smoothing: float, direction: int):
        return self.conditional(condition, left, right, smoothing, direction)


@dataclass(frozen=True)
class Bhargava2004Constants:
    """Model-wide options of the metabolic model, OpenSim's property names and defaults except ``smoothing``.

    OpenSim's component defaults to no smoothing; here ``TanhSmoothing()`` is the default, since the rates are
    meant for gradient-based optimal control (as in Moco's and PredSim's use). ``smoothing`` sets each
    conditional; ``velocity_smoothing``, ``power_smoothing`` and ``heat_rate_smoothing`` their steepness (1/(m/s),
    1/W, 1/W). ``use_fiber_length_dependence_on_maintenance_rate`` (not a property of OpenSim's smoothed
    component, which always applies it) set False makes g(l̃M) = 1. ``basal_rate_on`` False makes the basal rate 0.
    ``muscle_effort_scaling_factor`` scales excitation, activation and active fiber force.
    """

    smoothing: TanhSmoothing | HuberSmoothing | NoSmoothing = TanhSmoothing()
    velocity_smoothing: float = 10.0
    power_smoothing: float = 10.0
    heat_rate_smoothing: float = 10.0
    use_fiber_length_dependence_on_maintenance_rate: bool = True
    use_force_dependent_shortening_prop_constant: bool = False
    include_negative_mechanical_work: bool = True
    forbid_negative_total_power: bool = True
    enforce_minimum_heat_rate_per_muscle: bool = True
    basal_rate_on: bool = True
    basal_coefficient: float = 1.2
    basal_exponent: float = 1.0
    muscle_effort_scaling_factor: float = 1.0

    def __post_init__(self):
        for name in ("velocity_smoothing", "power_smoothing", "heat_rate_smoothing", "muscle_effort_scaling_factor"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise TrajoptInputError(f"Bhargava2004Constants: {name} must be a finite number > 0, got {value!r}")


DEFAULT_BHARGAVA2004 = Bhargava2004Constants()


@dataclass(frozen=True)
class Bhargava2004MuscleConstants:
    """One muscle's metabolic parameters (OpenSim's ``Bhargava2004SmoothedMuscleMetabolics_MuscleParameters``).

    Heat-rate constants in W/kg; ``specific_tension`` in Pa, ``density`` in kg/m³. ``muscle_mass`` (kg): given
    mass, or None for ``Fmax / specific_tension · density · optimal_fiber_length``.
    """

    ratio_slow_twitch_fibers: float = 0.5
    specific_tension: float = 0.25e6
    density: float = 1059.7
    activation_constant_slow_twitch: float = 40.0
    activation_constant_fast_twitch: float = 133.0
    maintenance_constant_slow_twitch: float = 74.0
    maintenance_constant_fast_twitch: float = 111.0
    muscle_mass: float | None = None

    def __post_init__(self):
        check_muscle_constants(self)

    def mass(self, parameters: MuscleParameters) -> float:
        """The muscle mass (kg) the rates use for the muscle of ``parameters``."""
        return muscle_mass_of(self, parameters)


def check_muscle_constants(constants) -> None:
    """One muscle's metabolic constants (slow-twitch ratio, specific tension, density, optional mass) are physical;
    shared by the Bhargava and Umberger constants."""
    owner = type(constants).__name__
    if not 0.0 <= constants.ratio_slow_twitch_fibers <= 1.0:
        raise TrajoptInputError(f"{owner}: ratio_slow_twitch_fibers must be in [0, 1], "
                                f"got {constants.ratio_slow_twitch_fibers!r}")
    for name in ("specific_tension", "density"):
        if not getattr(constants, name) > 0:
            raise TrajoptInputError(f"{owner}: {name} must be > 0, got {getattr(constants, name)!r}")
    if constants.muscle_mass is not None and not constants.muscle_mass > 0:
        raise TrajoptInputError(f"{owner}: muscle_mass must be > 0 kg, got {constants.muscle_mass!r}")


def muscle_mass_of(constants, parameters: MuscleParameters) -> float:
    """The given muscle mass (kg), else the one of its cross-section, optimal fiber length and density."""
    if constants.muscle_mass is not None:
        return constants.muscle_mass
    return muscle_mass_bhargava2004(parameters.max_isometric_force, parameters.optimal_fiber_length,
                                    constants.specific_tension, constants.density)


DEFAULT_MUSCLE_BHARGAVA2004 = Bhargava2004MuscleConstants()


@dataclass(frozen=True)
class MetabolicInputs:
    """The muscle quantities the rates use (N, m/s); fiber velocity negative when shortening.

    ``passive_fiber_force`` is the elastic plus the damping force along the fiber (OpenSim's
    ``getPassiveFiberForce``); ``active_fiber_force`` is a f̃L f̃V F_max (``getActiveFiberForce``).
    """

    excitation: object
    activation: object
    normalized_fiber_length: object
    fiber_velocity: object
    active_fiber_force: object
    passive_fiber_force: object
    active_force_length_multiplier: object

    @classmethod
    def from_fiber_outputs(cls, excitation, activation, outputs: dict) -> MetabolicInputs:
        """From the dict of ``MuscleModel.fiber_outputs`` (also ``RigidTendonMuscle.outputs``,
        ``ElasticTendonMuscle.implicit_outputs``)."""
        return cls(excitation, activation, outputs["normalized_fiber_length"], outputs["fiber_velocity"],
                   outputs["active_fiber_force"], outputs["passive_fiber_force"] + outputs["fiber_damping_force"],
                   outputs["active_force_length_multiplier"])

    @classmethod
    def from_rigid_tendon(cls, muscle: RigidTendonMuscle, excitation, activation, musculotendon_length,
                          musculotendon_velocity) -> MetabolicInputs:
        """From a rigid-tendon muscle's state: its fiber geometry gives length and velocity."""
        outputs = muscle.outputs(activation, musculotendon_length, musculotendon_velocity)
        return cls.from_fiber_outputs(excitation, activation, outputs)


@dataclass(frozen=True)
class MetabolicRates:
    """Per-muscle rates (W). ``total_rate`` = (heat rates' sum, clamped at 1 W/kg when enforced) + work rate."""

    activation_heat_rate: object
    maintenance_heat_rate: object
    shortening_heat_rate: object
    mechanical_work_rate: object
    total_rate: object


def muscle_mass_bhargava2004(max_isometric_force, optimal_fiber_length, specific_tension=0.25e6, density=1059.7):
    """Muscle mass (kg): physiological cross-section Fmax / specific tension times optimal fiber length times
    density."""
    return max_isometric_force / specific_tension * density * optimal_fiber_length


def fiber_length_dependence_bhargava2004(normalized_fiber_length):
    """OpenSim's piecewise-linear factor g(l̃M) of the maintenance heat rate: 0.5 up to l̃M = 0.5, 1 at l̃M = 1,
    0 from l̃M = 1.5 on (constant outside [0, 10], as OpenSim's PiecewiseLinearFunction extrapolates)."""
    x = normalized_fiber_length
    (_, y0), *rest = FIBER_LENGTH_DEPENDENCE_POINTS
    value = y0 + 0.0 * x
    for (xa, ya), (xb, yb) in zip(FIBER_LENGTH_DEPENDENCE_POINTS, rest):
        value = casadi.if_else(x > xa, ya + (x - xa) * (yb - ya) / (xb - xa), value)
    return casadi.if_else(x > FIBER_LENGTH_DEPENDENCE_POINTS[-1][0], FIBER_LENGTH_DEPENDENCE_POINTS[-1][1], value)


def basal_metabolic_rate_bhargava2004(body_mass, constants: Bhargava2004Constants = DEFAULT_BHARGAVA2004):
    """Whole-body basal rate (W): ``basal_coefficient · body_mass ** basal_exponent`` (0 when basal_rate_on is
    False)."""
    if not constants.basal_rate_on:
        return 0.0 * body_mass
    return constants.basal_coefficient * body_mass**constants.basal_exponent


def metabolic_rates_bhargava2004(
    inputs: MetabolicInputs,
    max_isometric_force: float,
    muscle_mass: float,
    muscle: Bhargava2004MuscleConstants = DEFAULT_MUSCLE_BHARGAVA2004,
    constants: Bhargava2004Constants = DEFAULT_BHARGAVA2004,
) -> MetabolicRates:
    """One muscle's rates (W) as expressions of ``inputs`` (SX, MX or numbers), term by term as OpenSim."""
    c, smooth = constants, constants.smoothing
    scaling = c.muscle_effort_scaling_factor
    excitation = scaling * inputs.excitation
    activation = scaling * inputs.activation
    active_force = scaling * inputs.active_fiber_force
    total_force = active_force + inputs.passive_fiber_force
    velocity = inputs.fiber_velocity
    slow = muscle.ratio_slow_twitch_fibers * casadi.sin(math.pi / 2 * excitation)
    fast = (1.0 - muscle.ratio_slow_twitch_fibers) * (1.0 - casadi.cos(math.pi / 2 * excitation))
    isometric_active_force = activation * inputs.active_force_length_multiplier * max_isometric_force

    activation_heat = muscle_mass * (muscle.activation_constant_slow_twitch * slow
                                     + muscle.activation_constant_fast_twitch * fast)
    length_factor = (fiber_length_dependence_bhargava2004(inputs.normalized_fiber_length)
                     if c.use_fiber_length_dependence_on_maintenance_rate else 1.0)
    maintenance_heat = muscle_mass * length_factor * (muscle.maintenance_constant_slow_twitch * slow
                                                      + muscle.maintenance_constant_fast_twitch * fast)
    shifted = velocity + VELOCITY_EPSILON
    if c.use_force_dependent_shortening_prop_constant:
        alpha = smooth.tanh_conditional(shifted, 0.16 * isometric_active_force + 0.18 * total_force,
                                        0.157 * total_force, c.velocity_smoothing, -1)
    else:
        alpha = smooth.conditional(shifted, 0.25 * total_force, 0.0, c.velocity_smoothing, -1)
    shortening_heat = -alpha * shifted
    if c.include_negative_mechanical_work:
        work = -active_force * velocity
    else:
        work = smooth.conditional(shifted, -active_force * velocity, 0.0, c.velocity_smoothing, -1)

    if c.forbid_negative_total_power:
        before_clamp = activation_heat + maintenance_heat + shortening_heat + work
        shortening_heat = shortening_heat - smooth.conditional(-before_clamp, 0.0, before_clamp,
                                                               c.power_smoothing, 1, slope=-1.0)
    heat = activation_heat + maintenance_heat + shortening_heat
    if c.enforce_minimum_heat_rate_per_muscle:
        heat = smooth.conditional(muscle_mass - heat, heat, 1.0 * muscle_mass, c.heat_rate_smoothing, 1, slope=1.0)
    return MetabolicRates(activation_heat, maintenance_heat, shortening_heat, work, heat + work)


def metabolics_bhargava2004_function(
    muscles: Sequence[MuscleParameters],
    metabolic: Sequence[Bhargava2004MuscleConstants] | None = None,
    constants: Bhargava2004Constants = DEFAULT_BHARGAVA2004,
    name: str = "metabolics_bhargava2004",
) -> casadi.Function:
    """Named Function of n muscles: inputs (n-vectors) excitation, activation, normalized_fiber_length,
    fiber_velocity, active_fiber_force, passive_fiber_force, active_force_length_multiplier; outputs (n-vectors)
    activation_heat_rate, maintenance_heat_rate, shortening_heat_rate, mechanical_work_rate, total_rate (W).

    ``metabolic``: one ``Bhargava2004MuscleConstants`` per muscle (None: the defaults for all).
    """
    muscles = tuple(muscles)
    metabolic = tuple(metabolic) if metabolic is not None else (Bhargava2004MuscleConstants(),) * len(muscles)
    if len(metabolic) != len(muscles):
        raise TrajoptInputError(f"metabolics_bhargava2004_function: {len(metabolic)} metabolic parameter sets "
                                f"for {len(muscles)} muscles")
    n = len(muscles)
    inputs = {key: casadi.SX.sym(key, n) for key in MetabolicInputs.__dataclass_fields__}
    rates = []
    for k, (parameters, own) in enumerate(zip(muscles, metabolic)):
        row = MetabolicInputs(**{key: value[k] for key, value in inputs.items()})
        rates.append(metabolic_rates_bhargava2004(row, parameters.max_isometric_force, own.mass(parameters), own,
                                                  constants))
    outputs = {key: casadi.vertcat(*[getattr(r, key) for r in rates]) for key in MetabolicRates.__dataclass_fields__}
    return casadi.Function(name, list(inputs.values()), list(outputs.values()), list(inputs), list(outputs))
