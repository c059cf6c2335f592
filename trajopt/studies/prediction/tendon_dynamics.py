"""How a muscle-driven problem turns activations into tendon forces: rigid or elastic tendons.

One implementation for both muscle-driven problems: the prediction
(``trajopt.studies.prediction.muscle_driven_problem``, q and u are states) and the inverse
(``trajopt.studies.analysis.muscle_inverse.MuscleDrivenInverse``, prescribed kinematics). A tendon model declares what
it needs on the ``ocp.Problem`` and returns ``TendonVariables`` (forces, states, quantities):

- ``RigidTendons``: F = F0 + F1 ∘ a at the current musculotendon length and speed (Moco's
  ``ModOpIgnoreTendonCompliance``), linear in activation; no variables.
- ``ElasticTendons``: De Groote et al. 2016's implicit formulation (as Moco and PredSim, Falisse et al. 2019,
  solve it): a normalized tendon force f̃T per muscle is a state, its derivative df̃T/dt a control, and the
  fiber-tendon equilibrium f̃T - f̃M cos α = 0 a path equality (``trajopt.core.muscles.ElasticTendonMuscle``);
  ``derivative_weight`` ∫ Σ (df̃T/dt)² dt regularizes the derivative (Moco's MocoInverse: 0.01, its
  ``minimize_implicit_auxiliary_derivatives``). Tendon strain or stiffness kT may be set per muscle by name.

``TendonVariables.explicit_normalized_tendon_force_derivatives()`` solves the equilibrium for df̃T/dt: the explicit
tendon dynamics a forward re-simulation integrates in place of the control.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.muscles import DeGroote2016Constants, ElasticTendonMuscle
from trajopt.core.ocp import Effort

# OpenSim's bounds on DeGrooteFregly2016Muscle's normalized tendon force state.
NORMALIZED_TENDON_FORCE_BOUNDS = (0.0, 5.0)

# Moco's MocoDirectCollocationSolver implicit_auxiliary_derivative_bounds default
# (opensim-core OpenSim/Moco/MocoDirectCollocationSolver.cpp:40), and MocoInverse's weight on their squares.
MOCO_DERIVATIVE_BOUNDS = (-1000.0, 1000.0)
MOCO_INVERSE_DERIVATIVE_WEIGHT = 0.01

PREDSIM_TENDON_STIFFNESS = 35.0
"""PredSim's default tendon stiffness kT (1 / normalized tendon length) of every muscle, Falisse et al. 2019:
KULeuvenNeuromechanics/PredSim PreProcessing/read_and_scale_MTparameters.m:73 (``tendon_stiff = 35``), in its
tendon curve ``0.2 exp(kT (l̃T - 0.995)) - 0.25`` (the published De Groote 2016 constants). Give it to
``ElasticTendons(tendon_stiffness=...)``, which turns kT into the tendon strain of the model's constant set."""

PREDSIM_TRICEPS_SURAE_STIFFNESS_SCALE = 0.5
"""PredSim's compliant Achilles tendon: soleus and gastrocnemius kT scaled by 0.5 (kT = 17.5) in its 2D model's
settings, PredSim Subjects/gait1018/settings_gait1018.m:14 (``tendon_stiff_scale = {{'soleus','gastroc'},0.5}``;
also Subjects/DHondt_et_al_2024_3seg/settings_DHondt_et_al_2024_3seg.m:33)."""

PREDSIM_DERIVATIVE_SCALE = 100.0
"""PredSim's scale of df̃T/dt (1/s): OCP/getScaleFactor.m:67 (``scaling.dFTtilde = 100``)."""

PREDSIM_DERIVATIVE_BOUNDS = (-100.0, 100.0)
"""PredSim's bounds on df̃T/dt (1/s): [-1, 1] on the scaled variable (OCP/getBounds.m:197-198) times its scale 100."""

PREDSIM_DERIVATIVE_WEIGHT = 1e-3 / PREDSIM_DERIVATIVE_SCALE**2
"""PredSim's weight on ∫ Σ (df̃T/dt)² dt: ``W.slack_ctrl`` 0.001 (DefaultSettings/getDefaultSettings.m:671) on the
scaled derivative squared (OCP/OCP_formulation.m:454), i.e. 1e-7 on the unscaled one."""


def tendon_strain_at_stiffness(stiffness: float, constants: DeGroote2016Constants) -> float:
    """The tendon strain at one normalized force whose curve in ``constants`` has stiffness kT (the inverse of
    ``DeGroote2016Constants.tendon_stiffness``)."""
    return math.log((1.0 + constants.tendon_shift) / constants.tendon_scale) / stiffness + constants.tendon_offset - 1.0


def _by_muscle(mapping, what: str) -> tuple[tuple[str, float], ...]:
    """{muscle: value} (or its items) as sorted (name, value) pairs, so the tendon model stays hashable."""
    pairs = tuple(sorted(dict(mapping or {}).items()))
    for name, value in pairs:
        if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise TrajoptInputError(f"ElasticTendons: {what} of muscle '{name}' must be a finite number > 0, "
                                    f"got {value!r}")
    return pairs


@dataclass(frozen=True, eq=False)
class TendonVariables:
    """What a tendon model put on a problem, all per muscle (model order).

    ``tendon_forces`` (N); ``normalized_tendon_forces`` (state) and ``normalized_tendon_force_derivatives``
    (control), None with rigid tendons; ``goal``: the regularization for the objective (None without);
    ``units``: the muscle units used; ``quantities``: every named output of the units (``fiber_length`` (m),
    ``fiber_velocity`` (m/s, positive lengthening), ``active_fiber_force`` (N) ...) stacked over the muscles.
    """

    tendon_forces: ca.SX
    normalized_tendon_forces: ca.SX | None
    normalized_tendon_force_derivatives: ca.SX | None
    goal: object
    units: tuple
    activations: ca.SX
    kinematics: Callable  # () -> (musculotendon_lengths, lengthening_speeds, moment_arms or None)
    outputs: Callable  # (k, unit, activation, length, speed) -> dict of the unit's named outputs

    @cached_property
    def musculotendon_lengths(self) -> ca.SX:
        return self._kinematics[0]

    @cached_property
    def lengthening_speeds(self) -> ca.SX:
        return self._kinematics[1]

    @cached_property
    def moment_arms(self) -> ca.SX | None:
        """Moment arms (muscles x speeds) of a prediction; None in an inverse problem (prescribed kinematics)."""
        return self._kinematics[2]

    @cached_property
    def _kinematics(self):
        return self.kinematics()

    @cached_property
    def quantities(self) -> dict:
        lengths, speeds, _ = self._kinematics
        outputs = [self.outputs(k, unit, self.activations[k], lengths[k], speeds[k])
                   for k, unit in enumerate(self.units)]
        return {name: ca.vertcat(*[o[name] for o in outputs]) for name in outputs[0]} if outputs else {}

    def explicit_normalized_tendon_force_derivatives(self) -> ca.SX:
        """df̃T/dt solving the fiber-tendon equilibrium at the state (``ElasticTendonMuscle.
        normalized_tendon_force_derivative``): the explicit tendon dynamics; rigid tendons have none."""
        if self.normalized_tendon_forces is None:
            raise TrajoptInputError("explicit_normalized_tendon_force_derivatives: rigid tendons have no tendon-force "
                                    "state")
        lengths, speeds, _ = self._kinematics
        return ca.vertcat(*[unit.normalized_tendon_force_derivative(self.activations[k], lengths[k], speeds[k],
                                                                    self.normalized_tendon_forces[k])
                            for k, unit in enumerate(self.units)])


@dataclass(frozen=True)
class RigidTendons:
    """Inextensible tendons: tendon force affine in activation at the current length and speed."""

    def tendon_forces(self, problem, model, values, activations):
        """Inverse problems: (forces, goal) from the prescribed affine terms ``values.force_at_zero`` and
        ``values.force_per_activation``."""
        return values.force_at_zero + values.force_per_activation * activations, None

    def declare(self, problem, model, activations, q, u) -> TendonVariables:
        """Prediction: the model's ``tendon_forces(a, q, u)``; declares nothing."""
        return TendonVariables(model.tendon_forces(activations, q, u), None, None, None, tuple(model.muscles),
                               activations, lambda: model.musculotendon_kinematics(q, u),
                               lambda k, unit, a, length, speed: unit.outputs(a, length, speed))

    def describe(self) -> str:
        return "rigid tendons (tendon compliance ignored)"


@dataclass(frozen=True)
class ElasticTendons:
    """Compliant tendons, implicit normalized tendon-force states (see the module docstring).

    ``derivative_bounds``: bounds on df̃T/dt (1/s); ``derivative_weight``: weight of ∫ Σ (df̃T/dt)² dt;
    ``derivative_scale``: the control's NLP scale (None: unscaled). ``tendon_strain`` ({muscle: strain at one
    normalized force}, OpenSim's ``tendon_strain_at_one_norm_force``) or ``tendon_stiffness`` ({muscle: kT},
    PredSim's ``tendon_stiff``) override the model's tendon for the muscles they name; a muscle named in neither
    keeps its own strain (0.049 by default: kT 36.6 with OpenSim's curve constants, 33.9 with the published ones).
    The overrides are kept as sorted (name, value) pairs.
    """

    derivative_bounds: tuple[float, float] = MOCO_DERIVATIVE_BOUNDS
    derivative_weight: float = MOCO_INVERSE_DERIVATIVE_WEIGHT
    derivative_scale: float | None = None
    tendon_strain: object = field(default_factory=dict)
    tendon_stiffness: object = field(default_factory=dict)

    def __post_init__(self):
        low, high = self.derivative_bounds
        if not (low < 0 < high) or not np.isfinite(self.derivative_weight) or self.derivative_weight < 0:
            raise TrajoptInputError(f"ElasticTendons: derivative_bounds must contain 0 and derivative_weight be "
                                    f">= 0, got {self.derivative_bounds}, {self.derivative_weight}")
        if self.derivative_scale is not None and not (np.isfinite(self.derivative_scale) and
                                                      self.derivative_scale > 0):
            raise TrajoptInputError(f"ElasticTendons: derivative_scale must be > 0, got {self.derivative_scale!r}")
        object.__setattr__(self, "tendon_strain", _by_muscle(self.tendon_strain, "tendon_strain"))
        object.__setattr__(self, "tendon_stiffness", _by_muscle(self.tendon_stiffness, "tendon_stiffness"))
        both = sorted(set(dict(self.tendon_strain)) & set(dict(self.tendon_stiffness)))
        if both:
            raise TrajoptInputError(f"ElasticTendons: muscle '{both[0]}' has both a tendon_strain and a "
                                    f"tendon_stiffness; give one")

    def units(self, model) -> tuple[ElasticTendonMuscle, ...]:
        """One ``ElasticTendonMuscle`` per muscle of ``model``, with this object's strain or stiffness overrides."""
        names = tuple(model.muscle_names)
        strains, stiffnesses = dict(self.tendon_strain), dict(self.tendon_stiffness)
        for what, mapping in (("tendon_strain", strains), ("tendon_stiffness", stiffnesses)):
            unknown = sorted(set(mapping) - set(names))
            if unknown:
                raise TrajoptInputError(f"ElasticTendons: {what} names '{unknown[0]}', not a muscle of the model "
                                        f"(muscles: {', '.join(names)})")
        units = []
        for name, muscle in zip(names, model.muscles):
            strain = strains.get(name, muscle.parameters.tendon_strain_at_one_norm_force)
            if name in stiffnesses:
                strain = tendon_strain_at_stiffness(stiffnesses[name], muscle.constants)
            if not strain > 0:
                raise TrajoptInputError(f"ElasticTendons: tendon_stiffness {stiffnesses[name]!r} of muscle "
                                        f"'{name}' gives strain {strain:.4g} <= 0 with the "
                                        f"'{muscle.constants.name}' curve constants")
            parameters = dataclasses.replace(muscle.parameters, ignore_tendon_compliance=False,
                                             tendon_strain_at_one_norm_force=strain)
            units.append(ElasticTendonMuscle(parameters, muscle.constants))
        return tuple(units)

    def _declare(self, problem, model, activations, lengths, speeds, arms=None, guess=0.1) -> TendonVariables:
        names = model.muscle_names
        count = len(names)
        if not count:
            raise TrajoptInputError("ElasticTendons: the model has no muscles, so no tendons; leave tendons at their "
                                    "default (RigidTendons)")
        force = problem.state("normalized_tendon_forces", count, bounds=NORMALIZED_TENDON_FORCE_BOUNDS, guess=guess,
                              labels=tuple(f"/forceset/{m}/normalized_tendon_force" for m in names))
        rate = problem.control("normalized_tendon_force_derivatives", count, bounds=self.derivative_bounds,
                               guess=0.0, scale=self.derivative_scale,
                               labels=tuple(f"/forceset/{m}/implicitderiv_normalized_tendon_force" for m in names))
        problem.set_derivative(force, rate)
        units = self.units(model)
        residuals, tendon = [], []
        for k, unit in enumerate(units):
            residuals.append(unit.equilibrium_residual(activations[k], lengths[k], speeds[k], force[k], rate[k]))
            tendon.append(unit.parameters.max_isometric_force * force[k])
        problem.require(ca.vertcat(*residuals), equals=0.0, name="fiber-tendon equilibrium",
                        labels=tuple(f"equilibrium {m}" for m in names))
        goal = self.derivative_weight * Effort(rate) if self.derivative_weight > 0 else None
        return TendonVariables(ca.vertcat(*tendon), force, rate, goal, units, activations,
                               lambda: (lengths, speeds, arms),
                               lambda k, unit, a, length, speed: unit.implicit_outputs(a, length, speed, force[k],
                                                                                       rate[k]))

    def tendon_forces(self, problem, model, values, activations):
        """Inverse problems: (forces, goal) at the prescribed ``values.musculotendon_lengths`` and
        ``values.lengthening_speeds``."""
        declared = self._declare(problem, model, activations, values.musculotendon_lengths, values.lengthening_speeds)
        return declared.tendon_forces, declared.goal

    def declare(self, problem, model, activations, q, u) -> TendonVariables:
        """Prediction: lengths and speeds from ``model.musculotendon_kinematics(q, u)``; the goal is not added
        (the caller minimizes ``TendonVariables.goal``)."""
        if not hasattr(model, "musculotendon_kinematics"):
            raise TrajoptInputError(f"ElasticTendons: {type(model).__name__} has no musculotendon_kinematics(q, u) "
                                    f"(lengths, lengthening speeds, moment arms), which elastic tendons need")
        lengths, speeds, arms = model.musculotendon_kinematics(q, u)
        return self._declare(problem, model, activations, lengths, speeds, arms)

    def describe(self) -> str:
        return (f"elastic tendons (implicit normalized tendon force, derivative in {self.derivative_bounds} 1/s, "
                f"weight {self.derivative_weight} on its square)")
