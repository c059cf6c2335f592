"""Transcribe a compiled Problem on a transcription's Grid into an NLP (MX graph over a VariableLayout).

The SX Functions of the problem are evaluated over the grid with `Function.map`; defects, path and
endpoint constraints are stacked into g, and a catalog records what each row of g means so a solver
report can name the worst constraint ("dynamics defect of state 'v' at t=0.31 s"). The mapped
per-point terms and the `outer` function combining them are kept so `trajopt.core.ocp.derivatives` can
assemble exact derivatives point by point.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.ocp.derivatives import structured_derivatives
from trajopt.core.ocp.layout import VariableLayout
from trajopt.core.ocp.problem import CompiledProblem
from trajopt.core.ocp.transcriptions import Grid, Transcription
from trajopt.core.ocp.variables import Variable, concatenate, labels_of


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
class PointFunction:
    """An SX Function of one grid point's stacked inputs v = (t, x, u, p, z), evaluated at many points."""

    function: ca.Function  # v -> values at one point (SX)
    inputs: ca.MX  # (len(v), points): v at every point, affine in the decision vector
    values: ca.MX  # (outputs, points)

    @classmethod
    def on(cls, function: ca.Function, arguments) -> "PointFunction":
        """`function(t, x, u, p, z)` at the points whose arguments are the columns of `arguments`."""
        sizes = [function.size1_in(i) for i in range(function.n_in())]
        v = ca.SX.sym("v", sum(sizes))
        split = ca.vertsplit(v, np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist())
        stacked = ca.Function(function.name(), [v], [function(*split)], ["v"], [function.name_out(0)])
        count = arguments[0].size2()
        columns = [ca.repmat(a, 1, count) if a.size2() == 1 and count != 1 else a for a in arguments]
        inputs = ca.vertcat(*columns)
        return cls(stacked, inputs, stacked.map(count)(inputs))


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
    mapped: tuple[PointFunction, ...] = ()  # grid-point terms: dynamics, path, integrands
    outer: ca.Function | None = None  # (w, values of `mapped`...) -> (f, g)

    def derivative_functions(self, hessian: bool = True) -> dict:
        """nlpsol options jac_g (and hess_lag) built point by point (`trajopt.core.ocp.derivatives`)."""
        return structured_derivatives(self.layout.w, self.mapped, self.outer, hessian)

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


def _sparse(matrix: np.ndarray) -> ca.DM:
    """Constant matrix with its zeros structural, so MX sparsity (Jacobian, Hessian) stays banded."""
    return ca.sparsify(ca.DM(matrix))


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


def _time_expression(layout: VariableLayout, name: str):
    """The initial time or the duration: a number when its bounds fix it, so that the grid-point Functions see t as
    data (nothing is differentiated along it, e.g. interpolants of measured data in t) and the defects and
    integrals are linear in the dynamics and integrands; otherwise affine in the decision variables."""
    block = layout.blocks[name]
    if np.all(block.lower == block.upper):
        return ca.DM(float(block.lower[0, 0]))
    return layout.expression(name)


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
    _variable_blocks(layout, "algebraics", problem.algebraics, grid.tau[grid.algebraic_points], scale_from_bounds,
                     boundary=False)
    _variable_blocks(layout, "parameters", problem.parameters, np.zeros(1), scale_from_bounds, boundary=False)
    for name, (lower, upper, guess) in (("initial_time", problem.initial_time),
                                        ("duration", problem.duration)):
        layout.add(name, 1, 1, lower, upper, guess, scale=None if lower < upper else 1.0)
    layout.finalize()

    states = layout.expression("states")
    extension = _sparse(grid.control_extension)
    controls = ca.mtimes(layout.expression("controls"), extension)
    algebraics = ca.mtimes(layout.expression("algebraics"), _sparse(grid.algebraic_extension))
    parameters = layout.expression("parameters")
    t0, duration = _time_expression(layout, "initial_time"), _time_expression(layout, "duration")
    times = t0 + duration * ca.DM(grid.tau).T

    def at(points):
        return times[:, points], states[:, points], controls[:, points], parameters, algebraics[:, points]

    # Every grid-point term is one SX Function mapped over its points; the rest of the NLP is linear
    # algebra on their values (plus the endpoint Function), kept apart so derivatives can use that.
    dynamics_term = PointFunction.on(problem.dynamics, at(grid.dynamics_points))
    path_term = PointFunction.on(problem.path, at(grid.path_points))
    integrand_term = PointFunction.on(problem.integrands, at(np.arange(grid.tau.size)))
    mapped = (dynamics_term, path_term, integrand_term)
    mesh_points = grid.path_points if grid.mesh_points is None else grid.mesh_points
    if problem.mesh_path is not None:
        mapped = mapped + (PointFunction.on(problem.mesh_path, at(mesh_points)),)
    state_scale = np.concatenate([v.scale if v.scale is not None else _bound_scale(v, scale_from_bounds)
                                  for v in problem.states]) if problem.states else np.zeros(0)
    defect_columns = [np.array([i for i, k in enumerate(grid.defect_kind) if k == kind])
                      for kind in dict.fromkeys(grid.defect_kind)]
    last = grid.tau.size - 1

    def objective_and_constraints(derivatives, path_values, integrand_values, mesh_values=None):
        defects = ca.mtimes(states, _sparse(grid.defect_states)) - \
            duration * ca.mtimes(derivatives, _sparse(grid.defect_dynamics))
        pieces = [ca.vec(defects[:, columns] / ca.DM(state_scale)) for columns in defect_columns]
        pieces.append(ca.vec(path_values))
        if mesh_values is not None:
            pieces.append(ca.vec(mesh_values))
        integrals = duration * ca.mtimes(integrand_values, _sparse(grid.quadrature))
        cost, endpoint_g = problem.endpoint(t0, states[:, 0], controls[:, 0], algebraics[:, 0],
                                            t0 + duration, states[:, last], controls[:, last],
                                            algebraics[:, last], parameters, integrals)
        return cost, ca.vertcat(*pieces, endpoint_g)

    cost, constraints = objective_and_constraints(*[term.values for term in mapped])
    symbols = [ca.MX.sym(f"values_{term.function.name()}", *term.values.shape) for term in mapped]
    outer = ca.Function("outer", [layout.w, *symbols], [*objective_and_constraints(*symbols)])

    catalog, lower_g, upper_g = [], [], []
    start = 0
    state_labels = tuple(labels_of(list(problem.states)))
    for kind, columns in zip(dict.fromkeys(grid.defect_kind), defect_columns):
        catalog.append(ConstraintBlock(f"dynamics defect ({kind}) of state", state_labels,
                                       grid.defect_tau[columns], start, len(state_labels), columns.size,
                                       state_scale))
        start += len(state_labels) * columns.size
    lower_g.append(np.zeros(start))
    upper_g.append(np.zeros(start))

    points = grid.path_points
    n_path = path_term.values.size1()
    if n_path:
        # Rows of all path groups repeat at every path point (column-major over points).
        catalog.append(ConstraintBlock(
            "path constraint", tuple(label for g in problem.path_groups for label in g.labels),
            grid.tau[points], start, n_path, points.size, np.ones(n_path)))
        lower_g.append(np.tile(np.concatenate([g.lower for g in problem.path_groups]), points.size))
        upper_g.append(np.tile(np.concatenate([g.upper for g in problem.path_groups]), points.size))
        start += n_path * points.size

    if problem.mesh_path is not None:
        n_mesh = sum(len(g.labels) for g in problem.mesh_path_groups)
        catalog.append(ConstraintBlock(
            "mesh-point constraint", tuple(label for g in problem.mesh_path_groups for label in g.labels),
            grid.tau[mesh_points], start, n_mesh, mesh_points.size, np.ones(n_mesh)))
        lower_g.append(np.tile(np.concatenate([g.lower for g in problem.mesh_path_groups]), mesh_points.size))
        upper_g.append(np.tile(np.concatenate([g.upper for g in problem.mesh_path_groups]), mesh_points.size))
        start += n_mesh * mesh_points.size

    for group in problem.endpoint_groups:
        size = len(group.labels)
        catalog.append(ConstraintBlock("endpoint constraint", group.labels, None, start, size, 1,
                                       np.ones(size)))
        lower_g.append(group.lower)
        upper_g.append(group.upper)
        start += size

    nlp = {"x": layout.w, "f": cost, "g": constraints}
    return DiscreteProblem(problem, transcription, grid, layout, nlp, np.concatenate(lower_g),
                           np.concatenate(upper_g), tuple(catalog), mapped, outer)
