"""How a muscle-driven inverse problem turns activations into tendon forces: rigid or elastic tendons.

Each tendon model declares what it needs on the problem and returns the tendon forces (N) as expressions;
``MuscleDrivenInverse`` calls ``tendon_forces(problem, model, values, activations)`` once while building.

- ``RigidTendons``: F = F0 + F1 ∘ a at the prescribed musculotendon length and speed (Moco's
  ``ModOpIgnoreTendonCompliance``), linear in activation.
- ``ElasticTendons``: De Groote et al. 2016's implicit formulation as Moco solves it: a normalized tendon
  force state f̃T per muscle, its derivative a control, and the fiber-tendon equilibrium a path equality
  (``trajopt.muscles.ElasticTendonMuscle``); Moco's MocoInverse adds 0.01 ∫ Σ (df̃T/dt)² to the objective
  (``minimize_implicit_auxiliary_derivatives``), and so does this by default.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.muscles import ElasticTendonMuscle
from trajopt.ocp import Effort

# OpenSim's bounds on DeGrooteFregly2016Muscle's normalized tendon force state.
NORMALIZED_TENDON_FORCE_BOUNDS = (0.0, 5.0)


@dataclass(frozen=True)
class RigidTendons:
    """Inextensible tendons: tendon force affine in activation at the prescribed length and speed."""

    def tendon_forces(self, problem, model, values, activations):
        return values.force_at_zero + values.force_per_activation * activations, None

    def describe(self) -> str:
        return "rigid tendons (tendon compliance ignored)"


@dataclass(frozen=True)
class ElasticTendons:
    """Compliant tendons, implicit normalized tendon-force states (see the module docstring).

    ``derivative_bounds``: bounds on df̃T/dt (1/s); ``derivative_weight``: weight of ∫ Σ (df̃T/dt)² dt.
    """

    derivative_bounds: tuple[float, float] = (-1000.0, 1000.0)
    derivative_weight: float = 0.01

    def __post_init__(self):
        low, high = self.derivative_bounds
        if not (low < 0 < high) or not np.isfinite(self.derivative_weight) or self.derivative_weight < 0:
            raise TrajoptInputError(f"ElasticTendons: derivative_bounds must contain 0 and derivative_weight be "
                                    f">= 0, got {self.derivative_bounds}, {self.derivative_weight}")

    def tendon_forces(self, problem, model, values, activations):
        names = model.muscle_names
        count = len(names)
        force = problem.state("normalized_tendon_forces", count, bounds=NORMALIZED_TENDON_FORCE_BOUNDS, guess=0.1,
                              labels=tuple(f"/forceset/{m}/normalized_tendon_force" for m in names))
        rate = problem.control("normalized_tendon_force_derivatives", count, bounds=self.derivative_bounds,
                               guess=0.0, labels=tuple(f"/forceset/{m}/implicitderiv_normalized_tendon_force"
                                                       for m in names))
        problem.set_derivative(force, rate)
        residuals, tendon = [], []
        for k, muscle in enumerate(model.muscles):
            unit = ElasticTendonMuscle(dataclasses.replace(muscle.parameters, ignore_tendon_compliance=False),
                                       model.constants)
            residuals.append(unit.equilibrium_residual(activations[k], values.musculotendon_lengths[k],
                                                       values.lengthening_speeds[k], force[k], rate[k]))
            tendon.append(muscle.parameters.max_isometric_force * force[k])
        problem.require(ca.vertcat(*residuals), equals=0.0, name="fiber-tendon equilibrium",
                        labels=tuple(f"equilibrium {m}" for m in names))
        goal = self.derivative_weight * Effort(rate) if self.derivative_weight > 0 else None
        return ca.vertcat(*tendon), goal

    def describe(self) -> str:
        return (f"elastic tendons (implicit normalized tendon force, derivative in {self.derivative_bounds} 1/s, "
                f"weight {self.derivative_weight} on its square)")
