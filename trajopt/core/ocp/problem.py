"""The symbolic optimal-control Problem: variables, dynamics, constraints, goals; no solver settings.

Every declared variable is an SX column symbol. Expressions of t, states, controls, parameters and
algebraics are path expressions; `initial(expr)` / `final(expr)` turn them into endpoint expressions
(the same expression evaluated at t0 / tf). `compile()` wraps everything once as named SX Functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.ocp.goals import Goal
from trajopt.core.ocp.transcriptions import MOCO_DEFAULT_TRANSCRIPTION
from trajopt.core.ocp.variables import Variable, make_variable, stack, time_bounds


@dataclass(frozen=True)
class ConstraintGroup:
    """A named vector constraint lower <= g <= upper (labels name its rows)."""

    name: str
    expression: ca.SX
    lower: np.ndarray
    upper: np.ndarray
    labels: tuple[str, ...]


@dataclass(frozen=True)
class CompiledProblem:
    """Named SX Functions of one Problem, built once; inputs (t, x, u, p, z) unless said otherwise."""

    dynamics: ca.Function  # -> xdot
    path: ca.Function  # -> g (stacked path constraint groups)
    integrands: ca.Function  # -> q_dot (one row per goal integral)
    endpoint: ca.Function  # (t0, x0, u0, z0, tf, xf, uf, zf, p, integrals) -> (cost, g)
    path_groups: tuple[ConstraintGroup, ...]
    endpoint_groups: tuple[ConstraintGroup, ...]
    states: tuple[Variable, ...]
    controls: tuple[Variable, ...]
    algebraics: tuple[Variable, ...]
    parameters: tuple[Variable, ...]
    initial_time: tuple[float, float, float]
    duration: tuple[float, float, float]
    symbols: dict  # "t", "x", "u", "p", "z" and endpoint copies "t0", "x0", ... (internal use)
    mesh_path: ca.Function | None = None  # -> g at the mesh points only (None: no such constraint)
    mesh_path_groups: tuple[ConstraintGroup, ...] = ()


def as_sx(expression, what: str) -> ca.SX:
    """An SX column from an SX expression or numbers; MX or other types raise a TrajoptInputError."""
    if isinstance(expression, ca.SX):
        return expression
    if isinstance(expression, (ca.MX, ca.Function)) or expression is None:
        raise TrajoptInputError(
            f"{what} must be an SX expression of the problem's symbols (got {type(expression).__name__}); "
            f"call model Functions on the SX symbols returned by Problem.state()/control()")
    try:
        return ca.SX(np.asarray(expression, dtype=float)) if not isinstance(expression, ca.DM) \
            else ca.SX(expression)
    except (TypeError, ValueError, NotImplementedError) as error:
        raise TrajoptInputError(f"{what} must be an SX expression or numbers, got {expression!r}") from error


class Problem:
    """A single-phase optimal-control problem on [t0, t0 + duration]."""

    def __init__(self, duration=1.0, initial_time=0.0):
        self._initial_time = time_bounds(initial_time, "initial_time")
        self._duration = time_bounds(duration, "duration")
        if self._duration[0] < 0:
            raise TrajoptInputError(f"duration must be non-negative, got lower bound {self._duration[0]}")
        self.time = ca.SX.sym("t")
        self._initial_copy_of_time = ca.SX.sym("t_initial")
        self._final_copy_of_time = ca.SX.sym("t_final")
        self._states: list[Variable] = []
        self._controls: list[Variable] = []
        self._algebraics: list[Variable] = []
        self._parameters: list[Variable] = []
        self._copies: list[tuple[ca.SX, ca.SX, ca.SX]] = [
            (self.time, self._initial_copy_of_time, self._final_copy_of_time)]
        self._copies_by_kind: dict[str, list[tuple[ca.SX, ca.SX, ca.SX]]] = {"x": [], "u": [], "z": []}
        self._derivatives: dict[int, ca.SX] = {}
        self._path: list[ConstraintGroup] = []
        self._mesh_path: list[ConstraintGroup] = []
        self._endpoint: list[ConstraintGroup] = []
        self._goals: list[Goal] = []

    # -- declarations ------------------------------------------------------------------------------
    def _declare(self, collection: list, name: str, size: int, kind: str | None, **bounds) -> ca.SX:
        taken = {v.name for group in (self._states, self._controls, self._algebraics, self._parameters)
                 for v in group}
        if name in taken:
            raise TrajoptInputError(f"variable name '{name}' is already declared")
        variable = make_variable(name, size, **bounds)
        collection.append(variable)
        if kind is not None:
            copy = (variable.symbol, ca.SX.sym(name + "_initial", size), ca.SX.sym(name + "_final", size))
            self._copies.append(copy)
            self._copies_by_kind[kind].append(copy)
        return variable.symbol

    def state(self, name: str, size: int = 1, bounds=None, initial=None, final=None, guess=None,
              scale=None, labels=None) -> ca.SX:
        """Declare a state; bounds/initial/final are a number (fixed) or (lower, upper), per element or scalar."""
        return self._declare(self._states, name, size, "x", bounds=bounds, initial=initial, final=final,
                             guess=guess, scale=scale, labels=labels)

    def control(self, name: str, size: int = 1, bounds=None, initial=None, final=None, guess=None,
                scale=None, labels=None) -> ca.SX:
        """Declare a control (initial/final bounds become endpoint constraints)."""
        symbol = self._declare(self._controls, name, size, "u", bounds=bounds, guess=guess, scale=scale,
                               labels=labels)
        self._endpoint_bounds(symbol, initial, final)
        return symbol

    def algebraic(self, name: str, size: int = 1, bounds=None, guess=None, scale=None, labels=None) -> ca.SX:
        """Declare an algebraic variable (e.g. accelerations of an implicit formulation)."""
        return self._declare(self._algebraics, name, size, "z", bounds=bounds, guess=guess, scale=scale,
                             labels=labels)

    def parameter(self, name: str, size: int = 1, bounds=None, guess=None, scale=None, labels=None) -> ca.SX:
        """Declare a time-invariant parameter."""
        return self._declare(self._parameters, name, size, None, bounds=bounds, guess=guess, scale=scale,
                             labels=labels)

    def _endpoint_bounds(self, symbol, initial, final):
        for value, at, where in ((initial, self.initial, "initial"), (final, self.final, "final")):
            if value is not None:
                lower, upper = value if isinstance(value, tuple) else (value, value)
                self.require(at(symbol), lower=lower, upper=upper, name=f"{where} {symbol.name()}"
                             if symbol.numel() == 1 else f"{where} value")

    # -- dynamics, constraints, goals --------------------------------------------------------------
    def _variable_of(self, symbol) -> tuple[int, Variable]:
        for index, variable in enumerate(self._states):
            if isinstance(symbol, ca.SX) and symbol.shape == variable.symbol.shape and \
                    ca.is_equal(symbol, variable.symbol):
                return index, variable
        raise TrajoptInputError(f"set_derivative expects a state symbol returned by Problem.state(), "
                                f"got {symbol!r}")

    def set_derivative(self, state, expression) -> None:
        """Explicit dynamics d(state)/dt = expression (same size as the state)."""
        index, variable = self._variable_of(state)
        expression = ca.vec(as_sx(expression, f"derivative of state '{variable.name}'"))
        if expression.numel() != variable.size:
            raise TrajoptInputError(f"derivative of state '{variable.name}' has {expression.numel()} "
                                    f"elements, expected {variable.size}")
        self._derivatives[index] = expression

    def initial(self, expression) -> ca.SX:
        """The expression evaluated at the initial time (an endpoint expression)."""
        return self._substitute(expression, 1)

    def final(self, expression) -> ca.SX:
        """The expression evaluated at the final time (an endpoint expression)."""
        return self._substitute(expression, 2)

    def _substitute(self, expression, which: int) -> ca.SX:
        expression = as_sx(expression, "initial()/final() argument")
        originals = [copy[0] for copy in self._copies]
        replacements = [copy[which] for copy in self._copies]
        return ca.substitute([expression], originals, replacements)[0]

    def _endpoint_symbols(self) -> ca.SX:
        return ca.vertcat(*[c for copy in self._copies for c in copy[1:]])

    def _path_symbols(self) -> ca.SX:
        return ca.vertcat(*[copy[0] for copy in self._copies])

    def require(self, expression, lower=None, upper=None, equals=None, name: str | None = None,
                labels=None) -> None:
        """Constrain lower <= expression <= upper (or == equals); `labels` name the rows in reports.

        A path constraint if it depends on t/states/controls/algebraics, an endpoint constraint if it
        depends on `initial(...)` / `final(...)` values (mixing both is an error).
        """
        expression = ca.vec(as_sx(expression, f"constraint '{name or 'unnamed'}'"))
        size = expression.numel()
        if equals is not None:
            if lower is not None or upper is not None:
                raise TrajoptInputError(f"constraint '{name}': give either equals or lower/upper")
            lower = upper = equals
        lower = np.broadcast_to(np.asarray(-np.inf if lower is None else lower, dtype=float), (size,)).copy()
        upper = np.broadcast_to(np.asarray(np.inf if upper is None else upper, dtype=float), (size,)).copy()
        on_path = ca.depends_on(expression, self._path_symbols())
        at_ends = ca.depends_on(expression, self._endpoint_symbols())
        group_list = self._path if on_path else self._endpoint
        name = name or f"{'path' if on_path else 'endpoint'} constraint {len(group_list)}"
        if on_path and at_ends:
            raise TrajoptInputError(f"constraint '{name}' mixes path variables with initial()/final() values")
        if np.any(np.isnan(lower)) or np.any(np.isnan(upper)) or np.any(lower > upper):
            raise TrajoptInputError(f"constraint '{name}': invalid bounds lower={lower.tolist()} "
                                    f"upper={upper.tolist()}")
        if labels is None:
            labels = (name,) if size == 1 else tuple(f"{name}[{i}]" for i in range(size))
        labels = tuple(str(label) for label in labels)
        if len(labels) != size:
            raise TrajoptInputError(f"constraint '{name}': {len(labels)} labels for {size} rows")
        group_list.append(ConstraintGroup(name, expression, lower, upper, labels))

    def require_at_mesh_points(self, expression, lower=None, upper=None, equals=None, name: str | None = None,
                               labels=None) -> None:
        """A path constraint that holds at the mesh points only (interval ends; every point of Trapezoidal,
        not the Hermite-Simpson midpoints, the interval ends of Radau): e.g. Moco's kinematic constraint
        derivatives. Same arguments as ``require``; it must depend on path variables."""
        before = len(self._path)
        self.require(expression, lower, upper, equals, name, labels)
        if len(self._path) != before + 1:
            raise TrajoptInputError(f"require_at_mesh_points: constraint '{name}' does not depend on t, states, "
                                    f"controls or algebraics")
        self._mesh_path.append(self._path.pop())

    def periodic(self, pairs=None, name: str = "periodicity") -> None:
        """Periodicity: initial(a) == final(b) for each (a, b) pair of state expressions.

        Without pairs every state repeats. A left/right swap with sign flips is
        `[(q_l, q_r), (q_r, q_l), (pelvis_list, -pelvis_list)]`; vector pairs work the same way.
        """
        if pairs is None:
            pairs = [(variable.symbol, variable.symbol) for variable in self._states]
        for index, (a, b) in enumerate(pairs):
            self.require(self.initial(a) - self.final(b), equals=0.0, name=f"{name} {index}")

    def minimize(self, goal: Goal) -> None:
        """Add a goal to the objective (goals added repeatedly are summed)."""
        if not isinstance(goal, Goal):
            raise TrajoptInputError(f"minimize expects a Goal (Effort, FinalTime, ...), got {type(goal).__name__}")
        self._goals.append(goal)

    # -- compilation -------------------------------------------------------------------------------
    def compile(self) -> CompiledProblem:
        """Wrap dynamics, path, integrands and endpoint terms once as named SX Functions."""
        missing = [v.name for i, v in enumerate(self._states) if i not in self._derivatives]
        if missing:
            raise TrajoptInputError(f"no derivative set for state(s) {missing}: call set_derivative")
        if not self._goals:
            raise TrajoptInputError("no goal: call Problem.minimize(...)")
        t = self.time
        x, u = stack(self._states, "x"), stack(self._controls, "u")
        p, z = stack(self._parameters, "p"), stack(self._algebraics, "z")
        copies = self._copies_by_kind

        def ends(kind, which, fallback):
            items = [c[which] for c in copies[kind]]
            return ca.vertcat(*items) if items else ca.SX.sym(fallback, 0)

        x0, xf = ends("x", 1, "x0"), ends("x", 2, "xf")
        u0, uf = ends("u", 1, "u0"), ends("u", 2, "uf")
        z0, zf = ends("z", 1, "z0"), ends("z", 2, "zf")
        t0, tf = self._initial_copy_of_time, self._final_copy_of_time
        path_in, path_names = [t, x, u, p, z], ["t", "x", "u", "p", "z"]
        xdot = ca.vertcat(*[self._derivatives[i] for i in range(len(self._states))])
        goal = self._goals[0]
        for extra in self._goals[1:]:
            goal = goal + extra
        terms = goal.terms(self)
        integrals = ca.SX.sym("integrals", len(terms.integrands))
        cost = ca.SX(terms.cost([integrals[i] for i in range(len(terms.integrands))]))
        path_g = ca.vertcat(*[g.expression for g in self._path]) if self._path else ca.SX(0, 1)
        end_g = ca.vertcat(*[g.expression for g in self._endpoint]) if self._endpoint else ca.SX(0, 1)
        mesh_g = ca.vertcat(*[g.expression for g in self._mesh_path]) if self._mesh_path else None
        end_in = [t0, x0, u0, z0, tf, xf, uf, zf, p, integrals]
        end_names = ["t0", "x0", "u0", "z0", "tf", "xf", "uf", "zf", "p", "integrals"]
        integrand_column = ca.vertcat(*terms.integrands) if terms.integrands else ca.SX(0, 1)
        try:
            dynamics = ca.Function("dynamics", path_in, [xdot], path_names, ["xdot"])
            path = ca.Function("path", path_in, [path_g], path_names, ["g"])
            integrands = ca.Function("integrands", path_in, [integrand_column], path_names, ["q_dot"])
            endpoint = ca.Function("endpoint", end_in, [cost, end_g], end_names, ["cost", "g"])
            mesh_path = None if mesh_g is None else ca.Function("mesh_path", path_in, [mesh_g], path_names, ["g"])
        except RuntimeError as error:
            free = str(error).split("free variables")[-1][:200] if "free" in str(error) else str(error)[:200]
            raise TrajoptInputError(
                f"an expression uses symbols the problem does not know (free variables {free}); path "
                f"terms may use t, states, controls, parameters, algebraics; endpoint terms only "
                f"initial()/final() values and parameters") from None
        symbols = {"t": t, "x": x, "u": u, "p": p, "z": z, "t0": t0, "x0": x0, "u0": u0, "z0": z0,
                   "tf": tf, "xf": xf, "uf": uf, "zf": zf}
        return CompiledProblem(dynamics, path, integrands, endpoint, tuple(self._path),
                               tuple(self._endpoint), tuple(self._states), tuple(self._controls),
                               tuple(self._algebraics), tuple(self._parameters), self._initial_time,
                               self._duration, symbols, mesh_path, tuple(self._mesh_path))

    def solve(self, transcription=None, solver=None, guess=None):
        """Transcribe with `transcription`, solve with `solver` (default Ipopt()), return a Solution.

        `transcription`: default MocoCasADiSolver's, Hermite-Simpson on 100 mesh intervals with the midpoint
        controls interpolated (`transcriptions.MOCO_DEFAULT_TRANSCRIPTION`); the studies' own defaults follow
        their mesh interval instead. `guess`: a previous Solution (interpolated onto the new grid) or a `Guess`
        table.
        """
        from trajopt.core.ocp.nlp import transcribe  # here: trajopt.core.ocp.nlp imports this module
        from trajopt.core.ocp.solver import Ipopt  # here: trajopt.core.ocp.solver imports this module (via nlp)

        transcription = MOCO_DEFAULT_TRANSCRIPTION if transcription is None else transcription
        solver = solver if solver is not None else Ipopt()
        discrete = transcribe(self.compile(), transcription, scale_from_bounds=solver.scale_from_bounds)
        return solver.solve(discrete, guess=guess)
