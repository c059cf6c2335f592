"""PredSim's cost of walking as goals, with its default weights, each term reported on its own.

PredSim (Falisse et al. 2019, J. R. Soc. Interface 16: 20190402; the KU Leuven PredSim code,
``DefaultSettings/getDefaultSettings.m`` for the weights and ``OCP/OCP_formulation.m`` for the terms) minimizes,
per distance travelled, the integral over the motion of

    W_E   mean_i(Edot_i ** 2) / body mass      metabolic energy rate of each muscle (Bhargava et al. 2004)
    W_a   mean_i(a_i ** 2)                     muscle activations
    W_qdd mean_j(qdd_j ** 2)                   accelerations of the joints (arms excluded)
    W_pt  mean_k(T_k ** 2)                     passive limit torques of the joints (damping excluded)
    W_ea  mean_m(e_m ** 2)                     excitations of the torque actuators (arms)
    W_s   mean_i(s_i ** 2)                     slack controls (time derivatives of activation and tendon force)

with W_E 500, W_a 2000, W_qdd 50000, W_pt 1000, W_ea 1e6, W_s 0.001 (``PREDSIM_WEIGHTS``). Means are over the
elements of each term, as PredSim's ``J_muscles``, ``J_not_arms_dof``, ``J_lim_torq`` and ``J_torq_act``.
``predsim_cost(...)`` returns the terms by name; their sum is the objective (``total``) and each can be evaluated
on a solution (``term_values``) for the summary.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.metabolic_cost import predsim_metabolic_cost
from trajopt.core.ocp.goals import Effort, Goal


@dataclass(frozen=True)
class PredSimWeights:
    """Weights of PredSim's cost terms (``getDefaultSettings.m``); 0 leaves a term out."""

    metabolic_energy: float = 500.0
    metabolic_exponent: float = 2.0
    activations: float = 2000.0
    joint_accelerations: float = 50000.0
    passive_torques: float = 1000.0
    actuator_excitations: float = 1e6
    slack_controls: float = 0.001

    def __post_init__(self):
        for name, value in self.__dict__.items():
            if not (np.isfinite(value) and value >= 0):
                raise TrajoptInputError(f"PredSimWeights: {name} must be a finite number >= 0, got {value!r}")


PREDSIM_WEIGHTS = PredSimWeights()


def _mean_square(expressions, weight: float, distance) -> Goal | None:
    values = ca.vec(ca.SX(expressions))
    if weight == 0 or values.numel() == 0:
        return None
    return Effort(values, power=2, per_distance=distance) * (weight / values.numel())


def predsim_cost(built, distance, *, joint_accelerations, passive_torques=None, actuator_excitations=None,
                 slack_controls=None, weights: PredSimWeights = PREDSIM_WEIGHTS, mass: float | None = None,
                 metabolics=None) -> dict[str, Goal]:
    """PredSim's terms on a ``MuscleDrivenProblem`` (module docstring), each divided by ``distance``.

    ``joint_accelerations``: the accelerations that count (PredSim leaves the arms out); ``passive_torques``:
    the joints' passive limit torques; ``actuator_excitations``: the torque actuators' controls; ``slack_controls``:
    PredSim's slack controls (trajopt's excitations stand in for its activation derivatives, and the tendon force
    derivatives of elastic tendons); ``metabolics``: per-muscle ``Bhargava2004MuscleConstants`` (None: defaults).
    Returns {term name: goal}; terms with weight 0 or nothing to weigh are left out.
    """
    terms = {}
    if weights.metabolic_energy:
        terms["metabolic energy"] = weights.metabolic_energy * predsim_metabolic_cost(
            built, metabolics, mass=mass, power=weights.metabolic_exponent, per_distance=distance)
    candidates = (("activations", built.activations, weights.activations),
                  ("joint accelerations", joint_accelerations, weights.joint_accelerations),
                  ("passive torques", passive_torques, weights.passive_torques),
                  ("actuator excitations", actuator_excitations, weights.actuator_excitations),
                  ("slack controls", slack_controls, weights.slack_controls))
    for name, expressions, weight in candidates:
        goal = None if expressions is None else _mean_square(expressions, weight, distance)
        if goal is not None:
            terms[name] = goal
    return terms


def total(terms: dict[str, Goal]) -> Goal:
    """The sum of the terms: the objective."""
    goals = list(terms.values())
    if not goals:
        raise TrajoptInputError("predsim_cost: no term has a weight and something to weigh")
    result = goals[0]
    for goal in goals[1:]:
        result = result + goal
    return result


def term_values(solution, terms: dict[str, Goal]) -> dict[str, float]:
    """Each term's value on a solution: its integrands integrated over the solution's grid (trapezoidal rule on
    the mesh and collocation points), then its cost evaluated with the solution's end values."""
    problem = solution.discrete.problem
    time = np.asarray(solution.time, dtype=float)
    values = {}
    for name, goal in terms.items():
        parts = goal.terms(problem)
        integrals = [float(np.trapezoid(np.atleast_1d(solution.value(integrand)), time))
                     for integrand in parts.integrands]
        values[name] = float(solution.value(parts.cost([ca.SX(i) for i in integrals])))
    return values
