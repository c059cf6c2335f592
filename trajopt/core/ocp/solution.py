"""Solution of a transcribed problem: IPOPT stats, trajectories on the mesh, `value(expr)` anywhere."""

from __future__ import annotations

from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.core.ocp.figures import plot_solution
from trajopt.core.ocp.nlp import DiscreteProblem
from trajopt.core.ocp.verification import verify
from trajopt.table import Table


class Solution:
    """Result of a solve (converged or not): stats, named trajectories and expression evaluation.

    `constraint_violation` is the largest violation of the NLP constraints as IPOPT sees them
    (dynamics defects divided by their state's scale); `worst_constraint` names that constraint
    with its value in physical units (defects in state units over one interval).

    `value(expr)` evaluates any SX expression of the problem's symbols on the grid ((M,) for a scalar,
    (rows, M) otherwise), `value(expr, at=times)` with the transcription's interpolation of states
    and controls; expressions of `initial()/final()` values return numbers.
    """

    def __init__(self, discrete: DiscreteProblem, w, g, objective, lam_x, lam_g, status, success,
                 iterations, wall_time):
        self.discrete = discrete
        self._w = w
        self.lam_x, self.lam_g = lam_x, lam_g
        self.status = status
        self.success = success
        self.iterations = iterations
        self.objective = objective
        self.wall_time = wall_time
        blocks = discrete.layout.unpack(w)
        self.initial_time = float(blocks["initial_time"][0, 0])
        self.duration = float(blocks["duration"][0, 0])
        grid = discrete.grid
        extension = grid.control_extension
        self._states = blocks["states"]
        self._controls = blocks["controls"] @ extension
        self._algebraics = blocks["algebraics"] @ grid.algebraic_extension
        self._parameters = blocks["parameters"][:, 0]
        self.time = self.initial_time + self.duration * grid.tau
        violation = np.maximum(np.maximum(discrete.lower_g - g, g - discrete.upper_g), 0.0)
        self.constraint_violation = float(violation.max()) if violation.size else 0.0
        self.worst_constraint = "none"
        if violation.size:
            row = int(np.argmax(violation))
            description, unscale = discrete.describe_row(row, (self.initial_time, self.duration))
            # Report in physical units (defects are scaled by their state's scale in the NLP).
            self.worst_constraint = f"{description}: {violation[row] * unscale:.3g}"

    def __repr__(self):
        return (f"Solution(status={self.status!r}, success={self.success}, iterations={self.iterations}, "
                f"objective={self.objective:.6g}, constraint_violation={self.constraint_violation:.3g}, "
                f"worst_constraint={self.worst_constraint!r})")

    @property
    def nlp_variables(self) -> np.ndarray:
        """The raw (scaled) NLP decision vector, for KKT analysis; use `value(expr)` for anything physical."""
        return np.array(self._w, dtype=float)

    @property
    def parameters(self) -> np.ndarray:
        return self._parameters.copy()

    def _at(self, times):
        """(t, x, u, z) at arbitrary times via the transcription's interpolation."""
        transcription = self.discrete.transcription
        tau = (np.asarray(times, dtype=float).flatten() - self.initial_time) / self.duration
        states = self._states @ transcription.interpolation(tau, controls=False)
        control_weights = transcription.interpolation(tau, controls=True)
        return (np.atleast_1d(np.asarray(times, dtype=float).flatten()), states,
                self._controls @ control_weights, self._algebraics @ control_weights)

    def value(self, expression, at=None) -> np.ndarray | float:
        """Evaluate an expression of problem symbols on the grid (or at `at` times)."""
        symbols = self.discrete.problem.symbols
        expression = ca.vec(expression if isinstance(expression, ca.SX) else ca.SX(expression))
        endpoint_inputs = [symbols[k] for k in ("t0", "x0", "u0", "z0", "tf", "xf", "uf", "zf")]
        if ca.depends_on(expression, ca.vertcat(*endpoint_inputs)):
            function = ca.Function("endpoint_value", endpoint_inputs + [symbols["p"]], [expression])
            last = self._states.shape[1] - 1
            result = function(self.initial_time, self._states[:, 0], self._controls[:, 0],
                              self._algebraics[:, 0], self.initial_time + self.duration,
                              self._states[:, last], self._controls[:, last], self._algebraics[:, last],
                              self._parameters)
            result = np.asarray(result).flatten()
            return float(result[0]) if result.size == 1 else result
        function = ca.Function("value", [symbols[k] for k in ("t", "x", "u", "p", "z")], [expression])
        if at is None:
            times, states, controls, algebraics = self.time, self._states, self._controls, self._algebraics
        else:
            times, states, controls, algebraics = self._at(at)
        values = np.asarray(function.map(times.size)(times[None, :], states, controls, self._parameters,
                                                        algebraics))
        return values[0] if values.shape[0] == 1 else values

    def table(self):
        """States, controls and algebraics on the grid as a `trajopt.table.Table` (labels from the variables).

        Files: ``trajopt.model.io.write_sto(path, solution.table())`` (OpenSim-readable) or ``write_csv``; also for
        failed solves.
        """
        problem = self.discrete.problem
        labels = [label for group in (problem.states, problem.controls, problem.algebraics)
                  for variable in group for label in variable.labels]
        data = np.vstack([self._states, self._controls, self._algebraics]).T
        status = "converged" if self.success else f"FAILED ({self.status})"
        return Table(self.time, tuple(labels), data, in_degrees=False, name="trajopt_solution",
                     metadata={"status": status, "objective": repr(self.objective)})

    def plot(self, path, units: dict | None = None) -> Path:
        """Figure of states and controls versus time (PNG or any matplotlib format); ``units``: variable name ->
        unit for its axis label."""
        return plot_solution(self, path, units)

    def verify(self, **options):
        """Re-simulate the controls with a variable-step integrator; see `trajopt.core.ocp.verification`."""
        return verify(self, **options)


class SolveStatus:
    """How a study's solve ended, read from its ``solution`` (an ``ocp.Solution``): the properties every study
    result shares."""

    solution: Solution

    @property
    def success(self) -> bool:
        return bool(self.solution.success)

    @property
    def status(self) -> str:
        return str(self.solution.status)

    @property
    def objective(self) -> float:
        return float(self.solution.objective)

    @property
    def iterations(self) -> int:
        return int(self.solution.iterations)

    @property
    def worst_constraint(self) -> str:
        """The constraint furthest from satisfied at the last iterate (``ocp.Solution.worst_constraint``)."""
        return self.solution.worst_constraint
