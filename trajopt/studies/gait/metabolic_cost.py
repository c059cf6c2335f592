"""Metabolic energy rate of a muscle-driven problem (Bhargava et al. 2004), and a goal on it as PredSim uses.

On a ``MuscleDrivenProblem``, each muscle's fiber length, velocity and forces are those of its tendon model
(``built.tendons.quantities``: rigid-tendon geometry, or the elastic tendon's fiber-tendon equilibrium); the rates
are those of
``trajopt.core.muscles.metabolics_bhargava2004`` (OpenSim's ``Bhargava2004SmoothedMuscleMetabolics``)::

    rate = whole_body_metabolic_rate(built, per_body_mass=True)          # SX, W/kg
    built.problem.minimize(metabolic_cost(built, per_distance=displacement(built, "pelvis_tx")))

Two goals, each divided by the distance travelled when ``per_distance`` (an endpoint expression) is given:
``metabolic_cost``, the integral of (whole-body rate / body mass) ** power; and ``predsim_metabolic_cost``,
PredSim's term (Falisse et al. 2019, J. R. Soc. Interface 16: 20190402): the integral of the muscles' mean
rate ** power (W², basal excluded) over body mass. Without activation dynamics (activations are controls) the
excitation of the rates is the activation.
"""

from __future__ import annotations

from collections.abc import Sequence

import casadi as ca

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles.metabolics_bhargava2004 import (
    DEFAULT_BHARGAVA2004,
    Bhargava2004Constants,
    Bhargava2004MuscleConstants,
    MetabolicInputs,
    MetabolicRates,
    basal_metabolic_rate_bhargava2004,
    metabolic_rates_bhargava2004,
)
from trajopt.core.ocp.goals import Effort, Goal


def body_mass(model) -> float:
    """Total mass (kg) of the model's bodies (as OpenSim's ``calcSystemMass``)."""
    return float(sum(body.mass for body in model.multibody.bodies))


def _mass(built, mass: float | None, owner: str) -> float:
    """The given body mass (kg), or the model's bodies' when None; refused when not positive."""
    mass = body_mass(built.model) if mass is None else float(mass)
    if not mass > 0:
        raise TrajoptInputError(f"{owner}: body mass must be > 0 kg, got {mass!r}")
    return mass


def muscle_metabolic_rates(
    built,
    muscles: Sequence[Bhargava2004MuscleConstants] | None = None,
    constants: Bhargava2004Constants = DEFAULT_BHARGAVA2004,
) -> MetabolicRates:
    """Each muscle's rates (W) as SX columns (the model's muscle order) of the problem's q, u, activations and
    excitations. ``muscles``: one ``Bhargava2004MuscleConstants`` per muscle (None: the defaults for all)."""
    names = tuple(built.model.muscle_names)
    muscles = tuple(muscles) if muscles is not None else (Bhargava2004MuscleConstants(),) * len(names)
    if len(muscles) != len(names):
        raise TrajoptInputError(f"muscle_metabolic_rates: {len(muscles)} metabolic parameter sets for "
                                f"{len(names)} muscles ({', '.join(names[:4])}...)")
    quantities = built.tendons.quantities  # fiber states of rigid or elastic tendons alike
    excitations = built.excitations if built.excitations is not None else built.activations
    rates = []
    for k, (unit, own) in enumerate(zip(built.tendons.units, muscles)):
        inputs = MetabolicInputs.from_fiber_outputs(
            excitations[k], built.activations[k], {name: values[k] for name, values in quantities.items()})
        rates.append(metabolic_rates_bhargava2004(inputs, unit.parameters.max_isometric_force,
                                                  own.mass(unit.parameters), own, constants))
    return MetabolicRates(*(ca.vertcat(*[getattr(r, key) for r in rates])
                            for key in MetabolicRates.__dataclass_fields__))


def whole_body_metabolic_rate(
    built,
    muscles: Sequence[Bhargava2004MuscleConstants] | None = None,
    constants: Bhargava2004Constants = DEFAULT_BHARGAVA2004,
    mass: float | None = None,
    per_body_mass: bool = False,
) -> ca.SX:
    """Sum of the muscles' total rates plus the basal rate (W), or per kg of body mass with ``per_body_mass``.

    ``mass``: body mass in kg (None: the model's bodies, ``body_mass``); it sets the basal rate and the scaling.
    """
    mass = _mass(built, mass, "whole_body_metabolic_rate")
    rates = muscle_metabolic_rates(built, muscles, constants)
    total = ca.sum1(rates.total_rate) + basal_metabolic_rate_bhargava2004(mass, constants)
    return total / mass if per_body_mass else total


def metabolic_cost(
    built,
    muscles: Sequence[Bhargava2004MuscleConstants] | None = None,
    constants: Bhargava2004Constants = DEFAULT_BHARGAVA2004,
    mass: float | None = None,
    power: float = 2.0,
    per_distance=None,
) -> Goal:
    """Integral of (whole-body metabolic rate / body mass) ** power, divided by ``per_distance`` (an endpoint
    expression such as ``trajopt.studies.gait.walking.displacement``) when given."""
    rate = whole_body_metabolic_rate(built, muscles, constants, mass, per_body_mass=True)
    return Effort(rate, power=power, per_distance=per_distance)


def predsim_metabolic_cost(
    built,
    muscles: Sequence[Bhargava2004MuscleConstants] | None = None,
    constants: Bhargava2004Constants = DEFAULT_BHARGAVA2004,
    mass: float | None = None,
    power: float = 2.0,
    per_distance=None,
) -> Goal:
    """PredSim's metabolic term: integral of (1 / n) Σ_i rate_i ** power over the n muscles, divided by the body
    mass (and by ``per_distance`` when given)."""
    mass = _mass(built, mass, "predsim_metabolic_cost")
    rates = muscle_metabolic_rates(built, muscles, constants).total_rate
    return Effort(rates, power=power, per_distance=per_distance) * (1.0 / (rates.numel() * mass))
