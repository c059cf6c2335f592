"""Transcribe a compiled Problem on a transcription's Grid into an NLP (MX graph over a VariableLayout).

The SX Functions of the problem are evaluated over the grid with `Function.map`; defects, path and
endpoint constraints are stacked into g, and a catalog records what each row of g means so a solver
report can name the worst constraint ("dynamics defect of state 'v' at t=0.31 s").
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.ocp.layout import VariableLayout
from trajopt.ocp.problem import CompiledProblem
from trajopt.ocp.transcriptions import Grid, Transcription
from trajopt.ocp.variables import Variable, concatenate, labels_of


@dataclass(frozen=True)
class ConstraintBlock:
    """Rows [start, start + rows*columns) of g: a (rows x columns) block, column-major."""

    description: str  # e.g. "dynamics defect (Simpson)"
    labels: tuple[str, ...]  # one per row
    tau: np.ndarray | None  # normalized time per column (None for endpoint constraints)
    start: int
    rows: int
    columns: int
    unscale: np.ndarray  # per row: physical value = g * unscale


@dataclass(frozen=True)
class DiscreteProblem:
    """An NLP built from a problem and a transcription, with everything needed to read its solution."""

    problem: CompiledProblem
    transcription: Transcription
    grid: Grid
    layout: VariableLayout
    nlp: dict
    lower_g: np.ndarray
    upper_g: np.ndarray
    catalog: tuple[ConstraintBlock, ...]

    def describe_row(self, row: int, times: tuple[float, float]) -> tuple[str, float]:
        """Human name of constraint row `row` and its unscaling factor; `times` = (t0, duration)."""
        for block in self.catalog:
            if block.start <= row < block.start + block.rows * block.columns:
                local = row - block.start
                label = block.labels[local % block.rows]
                where = ""
                if block.tau is not None:
                    where = f" at t={times[0] + times[1] * block.tau[local // block.rows]:.4g} s"
                return f"{block.description} '{label}'{where}", float(block.unscale[local % block.rows])
        return f"constraint row {row}", 1.0


def _variable_blocks(layout: VariableLayout, name: str, variables: tuple[Variable, ...], tau: np.ndarray,
                     scale_from_bounds: bool, boundary: bool) -> None:
    rows, columns = sum(v.size for v in variables), tau.size
    lower = np.repeat(concatenate(list(variables), "lower")[:, None], columns, axis=1)
    upper = np.repeat(concatenate(list(variables), "upper")[:, None], columns, axis=1)
    if boundary and columns > 0:
        lower[:, 0], upper[:, 0] = concatenate(list(variables), "initial_lower"), \
            concatenate(list(variables), "initial_upper")
        lower[:, -1], upper[:, -1] = concatenate(list(variables), "final_lower"), \
            concatenate(list(variables), "final_upper")
    start, end = concatenate(list(variables), "guess_start"), concatenate(list(variables), "guess_end")
    guess = start[:, None] + (end - start)[:, None] * tau[None, :]
    guess = np.clip(guess, lower, upper)
    scale = None
    if any(v.scale is not None for v in variables):
        scale = np.concatenate([v.scale if v.scale is not None else _bound_scale(v, scale_from_bounds)
                                for v in variables])
    layout.add(name, rows, columns, lower, upper, guess, scale=scale)


def _bound_scale(variable: Variable, enabled: bool) -> np.ndarray:
    finite = np.isfinite(variable.lower) & np.isfinite(variable.upper) & (variable.upper > variable.lower)
    return np.where(finite & enabled, variable.upper - variable.lower, 1.0)


def transcribe(problem: CompiledProblem, transcription: Transcription,
               scale_from_bounds: bool = True) -> DiscreteProblem:
    """Build the NLP {x: w, f: cost, g: constraints} with bounds and a constraint catalog."""
    if not isinstance(transcription, Transcription):
        raise TrajoptInputError(f"transcription must be Trapezoidal(...), HermiteSimpson(...) or "
                                f"Radau(...), got {transcription!r}")
    grid = transcription.grid()
    layout = VariableLayout(scale_from_bounds)
    _variable_blocks(layout, "states", problem.states, grid.tau, scale_from_bounds, boundary=True)
    control_tau = grid.tau[grid.control_points]
    _variable_blocks(layout, "controls", problem.controls, control_tau, scale_from_bounds, boundary=False)
    _variable_blocks(layout, "algebraics", problem.algebraics, control_tau, scale_from_bounds, boundary=False)
    _variable_blocks(layout, "parameters", problem.parameters, np.zeros(1), scale_from_bounds, boundary=False)
    for name, (lower, upper, guess) in (("initial_time", problem.initial_time),
                                        ("duration", problem.duration)):
        layout.add(name, 1, 1, lower, upper, guess, scale=None if lower < upper else 1.0)
    layout.finalize()

    states = layout.expression("states")
    extension = ca.DM(grid.control_extension)
    controls = ca.mtimes(layout.expression("controls"), extension)
    algebraics = ca.mtimes(layout.expression("algebraics"), extension)
    parameters = layout.expression("parameters")
    t0, duration = layout.expression("initial_time"), layout.expression("duration")
    times = t0 + duration * ca.DM(grid.tau).T

    def at(points):
        return times[:, points], states[:, points], controls[:, points], parameters, algebraics[:, points]

    points = grid.dynamics_points
    derivatives = problem.dynamics.map(points.size)(*at(points))
    defects = ca.mtimes(states, ca.DM(grid.defect_states)) - \
        duration * ca.mtimes(derivatives, ca.DM(grid.defect_dynamics))
    state_scale = np.concatenate([v.scale if v.scale is not None else _bound_scale(v, scale_from_bounds)
                                  for v in problem.states]) if problem.states else np.zeros(0)
    pieces, catalog, lower_g, upper_g = [], [], [], []
    start = 0
    state_labels = tuple(labels_of(list(problem.states)))
    for kind in dict.fromkeys(grid.defect_kind):
        columns = np.array([i for i, k in enumerate(grid.defect_kind) if k == kind])
        block = defects[:, columns] / ca.DM(state_scale)
        pieces.append(ca.vec(block))
        catalog.append(ConstraintBlock(f"dynamics defect ({kind}) of state", state_labels,
                                       grid.defect_tau[columns], start, len(state_labels), columns.size,
                                       state_scale))
        start += block.numel()
    lower_g.append(np.zeros(start))
    upper_g.append(np.zeros(start))

    points = grid.path_points
    path_values = problem.path.map(points.size)(*at(points))
    pieces.append(ca.vec(path_values))
    n_path = path_values.size1()
    if n_path:
        # Rows of all path groups repeat at every path point (column-major over points).
        catalog.append(ConstraintBlock(
            "path constraint", tuple(label for g in problem.path_groups for label in g.labels),
            grid.tau[points], start, n_path, points.size, np.ones(n_path)))
        lower_g.append(np.tile(np.concatenate([g.lower for g in problem.path_groups]), points.size))
        upper_g.append(np.tile(np.concatenate([g.upper for g in problem.path_groups]), points.size))
        start += n_path * points.size

    quadrature = ca.DM(grid.quadrature)
    integrand_values = problem.integrands.map(grid.tau.size)(*at(np.arange(grid.tau.size)))
    integrals = duration * ca.mtimes(integrand_values, quadrature)
    last = grid.tau.size - 1
    cost, endpoint_g = problem.endpoint(t0, states[:, 0], controls[:, 0], algebraics[:, 0],
                                        t0 + duration, states[:, last], controls[:, last],
                                        algebraics[:, last], parameters, integrals)
    pieces.append(endpoint_g)
    for group in problem.endpoint_groups:
        size = len(group.labels)
        catalog.append(ConstraintBlock("endpoint constraint", group.labels, None, start, size, 1,
                                       np.ones(size)))
        lower_g.append(group.lower)
        upper_g.append(group.upper)
        start += size

    nlp = {"x": layout.w, "f": cost, "g": ca.vertcat(*pieces)}
    return DiscreteProblem(problem, transcription, grid, layout, nlp, np.concatenate(lower_g),
                           np.concatenate(upper_g), tuple(catalog))
