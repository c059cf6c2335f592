"""The solution of a ``MuscleDrivenInverse``: activations, excitations, actuator controls and forces, muscle
forces, constraint multipliers, the objective's terms, and a forward check of the dynamics.

Tables carry OpenSim Moco's labels (``/forceset/<muscle>/activation``, ``/forceset/<muscle>``,
``/forceset/<actuator>``) so that ``write`` produces files OpenSim reads and that compare column by column
with a ``MocoInverse`` solution.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.joint_reactions import muscle_joint_reactions
from trajopt.model.io import Table, write_sto
from trajopt.core.multibody import BodyAxes, ReactionAxes, mass_matrix
from trajopt.core.ocp.solution import SolveStatus


@dataclass(frozen=True)
class DynamicsCheck:
    """Forward check at the grid points: accelerations the solution's forces produce vs the prescribed ones.

    ``generalized_force_error`` (points, nv): muscle + actuator + constraint forces minus what inverse dynamics
    requires; ``acceleration_error`` (points, nv): M⁻¹ of it, i.e. forward dynamics of the solution's forces
    minus the prescribed accelerations.
    """

    times: np.ndarray
    speed_names: tuple[str, ...]
    generalized_force_error: np.ndarray
    acceleration_error: np.ndarray

    @property
    def max_generalized_force_error(self) -> float:
        return float(np.max(np.abs(self.generalized_force_error))) if self.generalized_force_error.size else 0.0

    @property
    def max_acceleration_error(self) -> float:
        return float(np.max(np.abs(self.acceleration_error))) if self.acceleration_error.size else 0.0


class MuscleInverseSolution(SolveStatus):
    """Values of a solved ``MuscleDrivenInverse`` on its grid (``solution``: the ``ocp.Solution``)."""

    def __init__(self, inverse, variables, solution):
        self.inverse = inverse
        self.variables = variables
        self.solution = solution
        self.times = np.asarray(solution.time, dtype=float)

    # -- values ---------------------------------------------------------------------------------------
    def _rows(self, expression) -> np.ndarray:
        values = np.asarray(self.solution.value(expression), dtype=float)
        return np.atleast_2d(values).reshape(-1, self.times.size).T

    @property
    def muscle_names(self) -> tuple[str, ...]:
        return self.inverse.model.muscle_names

    @property
    def actuator_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.inverse.model.coordinate_actuators)

    @property
    def activations(self) -> np.ndarray:
        return self._rows(self.variables.activations)

    @property
    def excitations(self) -> np.ndarray:
        return self._rows(self.variables.excitations)

    @property
    def actuator_controls(self) -> np.ndarray:
        if self.variables.actuator_controls is None:
            return np.zeros((self.times.size, 0))
        return self._rows(self.variables.actuator_controls)

    @property
    def actuator_forces(self) -> np.ndarray:
        optimal = np.array([s.optimal_force for s in self.inverse.model.coordinate_actuators])
        return self.actuator_controls * optimal

    @property
    def muscle_forces(self) -> np.ndarray:
        """Tendon forces (N) at the grid points."""
        return self._rows(self.variables.muscle_forces)

    @property
    def multipliers(self) -> np.ndarray:
        if self.variables.multipliers is None:
            return np.zeros((self.times.size, 0))
        return self._rows(self.variables.multipliers)

    def effort_terms(self) -> dict[str, float]:
        """The objective split as Moco reports it: excitation effort of muscles and of actuators (weighted)."""
        weights = self.solution.discrete.transcription.grid().quadrature * self.inverse.duration
        muscles = float(weights @ np.sum(self.excitations ** 2, axis=1))
        actuators = float(weights @ np.sum(self.actuator_controls ** 2, axis=1)) * self.inverse.reserve_weight
        return {"muscle excitations": muscles, "actuator controls": actuators}

    def dynamics_check(self) -> DynamicsCheck:
        """Generalized-force balance and forward-dynamics acceleration error at the grid points (see DynamicsCheck)."""
        data = self.variables.data
        model = self.inverse.model
        produced = np.einsum("kmv,km->kv", data.moment_arms, self.muscle_forces)
        optimal = np.zeros((model.multibody.nv, len(model.coordinate_actuators)))
        for k, spec in enumerate(model.coordinate_actuators):
            optimal[list(model.speed_names).index(spec.coordinate), k] = spec.optimal_force
        produced = produced + self.actuator_controls @ optimal.T
        if data.constraint_jacobian.shape[1]:
            produced = produced + np.einsum("kcv,kc->kv", data.constraint_jacobian, self.multipliers)
        error = produced - data.required_forces
        accelerations = np.array([np.linalg.solve(np.asarray(mass_matrix(model.multibody, q)), f)
                                  for q, f in zip(data.kinematics.q, error)])
        return DynamicsCheck(self.times, tuple(model.speed_names), error, accelerations)

    def joint_reactions(self, expressed_in: ReactionAxes | BodyAxes = ReactionAxes.GROUND):
        """Joint reaction loads at the grid points with the muscle forces applied along their .osim paths and the
        applied loads' wrenches (``trajopt.studies.analysis.joint_reactions``; it states which muscles' wrap objects it
        ignores). With function-based or polynomial paths the solve used other moment arms than these paths':
        the difference is carried as ``joint_generalized_forces``."""
        kinematics = self.variables.data.kinematics
        return muscle_joint_reactions(self.inverse.model, kinematics, self.muscle_forces, expressed_in,
                                      self.inverse.applied_wrenches(kinematics))

    # -- tables and files ---------------------------------------------------------------------------------
    def table(self) -> Table:
        """Moco-style solution table: activations, excitations, actuator controls, multipliers."""
        labels = (tuple(f"/forceset/{m}/activation" for m in self.muscle_names)
                  + tuple(f"/forceset/{m}" for m in self.muscle_names)
                  + tuple(f"/forceset/{a}" for a in self.actuator_names)
                  + tuple(f"lambda_{k}" for k in range(self.multipliers.shape[1])))
        data = np.hstack([self.activations, self.excitations, self.actuator_controls, self.multipliers])
        status = "converged" if self.success else f"FAILED ({self.status})"
        return Table(self.times, labels, data, in_degrees=False, name="MuscleDrivenInverse",
                     metadata={"status": status, "objective": repr(self.objective)})

    def named_tables(self) -> dict[str, Table]:
        forces = Table(self.times, self.muscle_names + self.actuator_names,
                       np.hstack([self.muscle_forces, self.actuator_forces]), name="Forces")
        return {
            "solution": self.table(),
            "activations": Table(self.times, self.muscle_names, self.activations, name="Activations"),
            "excitations": Table(self.times, self.muscle_names, self.excitations, name="Excitations"),
            "actuators": Table(self.times, self.actuator_names, self.actuator_forces, name="Actuator forces"),
            "forces": forces,
        }

    def write(self, folder) -> list[Path]:
        """Each table as .sto (OpenSim reads them) in ``folder``; written for failed solves too."""
        folder = Path(folder)
        written = []
        for name, table in self.named_tables().items():
            written.append(write_sto(folder / f"{name}.sto", table))
        written += self.joint_reactions().write(folder, "joint_reactions")
        return written
