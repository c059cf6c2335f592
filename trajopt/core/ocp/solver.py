"""IPOPT through casadi.nlpsol, initial guesses (warm start from a Solution or a time table)."""

from __future__ import annotations

import contextlib
import enum
import time as wallclock
from dataclasses import dataclass, field

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.ocp.compiled import compiled_nlp
from trajopt.core.ocp.interrupts import call_solver
from trajopt.core.ocp.linear_algebra import keep_freed_memory, linear_solver_options, set_blas_threads
from trajopt.core.ocp.nlp import DiscreteProblem
from trajopt.core.ocp.solution import Solution


class Guess:
    """An initial guess as a time table: `Guess(times).set(x, values)` with values (K,) or (K, size).

    Values are linearly interpolated onto the grid; unset variables keep their default guess. The
    table's first time and span are the guesses of the initial time and duration.
    """

    def __init__(self, times):
        self.times = np.asarray(times, dtype=float).flatten()
        if self.times.size < 2 or np.any(np.diff(self.times) <= 0) or not np.all(np.isfinite(self.times)):
            raise TrajoptInputError(f"Guess times must be >= 2 finite increasing values, got {self.times[:5]}...")
        self._entries: list[tuple[ca.SX, np.ndarray]] = []

    @classmethod
    def from_table(cls, table, columns) -> "Guess":
        """From a `trajopt.model.io.Table` (e.g. a motion file): `columns` = [(variable, [label, ...]), ...]."""
        guess = cls(table.time)
        for variable, labels in columns:
            guess.set(variable, np.column_stack([table.column(label) for label in labels]))
        return guess

    def set(self, variable, values) -> "Guess":
        values = np.asarray(values, dtype=float).reshape(self.times.size, -1)
        if np.any(np.isnan(values)):
            raise TrajoptInputError(f"Guess for variable {variable} contains NaN")
        self._entries.append((variable, values))
        return self

    def values_of(self, variable) -> np.ndarray | None:
        for symbol, values in self._entries:
            if isinstance(symbol, ca.SX) and symbol.shape == variable.symbol.shape and \
                    ca.is_equal(symbol, variable.symbol):
                if values.shape[1] != variable.size:
                    raise TrajoptInputError(f"Guess for '{variable.name}' has {values.shape[1]} columns, "
                                            f"expected {variable.size}")
                return values
        return None


def _variables(problem, kind):
    return {"states": problem.states, "controls": problem.controls, "algebraics": problem.algebraics,
            "parameters": problem.parameters}[kind]


def initial_point(discrete: DiscreteProblem, guess) -> tuple[np.ndarray, dict]:
    """Scaled flat initial guess and, for a Solution of the same layout, its multipliers."""
    layout, grid = discrete.layout, discrete.grid
    if guess is None:
        return layout.guess(), {}
    if isinstance(guess, Solution):
        t0, duration = guess.initial_time, guess.duration
        lookup = {v.name: v for kind in ("states", "controls", "algebraics", "parameters")
                  for v in _variables(guess.discrete.problem, kind)}
    elif isinstance(guess, Guess):
        t0, duration = guess.times[0], guess.times[-1] - guess.times[0]
    else:
        raise TrajoptInputError(f"guess must be a Solution or a Guess table, got {type(guess).__name__}")
    # Clip to the time bounds first so a fixed-time problem reads the guess at its own times.
    blocks = layout.blocks
    t0 = float(np.clip(t0, blocks["initial_time"].lower[0, 0], blocks["initial_time"].upper[0, 0]))
    duration = float(np.clip(duration, blocks["duration"].lower[0, 0], blocks["duration"].upper[0, 0]))
    block_values = {"initial_time": t0, "duration": duration}
    control_tau = grid.tau[grid.control_points]
    for kind, tau in (("states", grid.tau), ("controls", control_tau), ("algebraics", grid.tau[grid.algebraic_points]),
                      ("parameters", np.zeros(1))):
        variables = _variables(discrete.problem, kind)
        default = layout.unpack(layout.guess())[kind]
        rows, row = [], 0
        for variable in variables:
            values = default[row:row + variable.size]
            times = t0 + duration * tau
            if isinstance(guess, Solution) and variable.name in lookup:
                if lookup[variable.name].size != variable.size:
                    raise TrajoptInputError(f"guess: the solution's '{variable.name}' has {lookup[variable.name].size} "
                                            f"entries, this problem's {variable.size} (another model?)")
                values = np.atleast_2d(guess.value(lookup[variable.name].symbol, at=times))
            elif isinstance(guess, Guess):
                table = guess.values_of(variable)
                if table is not None:
                    values = np.array([np.interp(times, guess.times, table[:, i]) for i in range(table.shape[1])])
            rows.append(values.reshape(variable.size, tau.size))
            row += variable.size
        if rows:
            block_values[kind] = np.vstack(rows)
    for name, value in block_values.items():
        lower, upper = blocks[name].lower, blocks[name].upper
        block_values[name] = np.clip(np.broadcast_to(value, lower.shape), lower, upper)
    w0 = layout.pack(block_values)
    multipliers = {}
    if isinstance(guess, Solution) and guess.discrete.layout.size == layout.size and \
            guess.lam_g.size == discrete.lower_g.size and type(guess.discrete.transcription) is \
            type(discrete.transcription) and guess.discrete.grid.tau.size == grid.tau.size:
        multipliers = {"lam_x0": guess.lam_x, "lam_g0": guess.lam_g}
    return w0, multipliers


class Hessian(enum.Enum):
    """How IPOPT gets the Lagrangian's Hessian: exact second derivatives or its limited-memory (L-BFGS) estimate."""

    EXACT = "exact"
    LIMITED_MEMORY = "limited-memory"


@dataclass(frozen=True)
class Ipopt:
    """IPOPT settings; `options` passes any IPOPT option through (e.g. {"mu_strategy": "adaptive"}).

    `linear_solver`: "mumps" (with `trajopt.core.ocp.linear_algebra.MUMPS_OPTIONS`: METIS ordering, 100 % memory
    margin), an HSL solver "ma27", "ma57", "ma86", "ma97" (needs the user's libhsl; "hsl" = ma57), or any name
    IPOPT knows. `threads`: BLAS threads during the solve (casadi's OpenBLAS; 1 by default: these KKT
    systems are too small for a second thread to pay; 0 leaves the library's setting).
    """

    tol: float = 1e-8
    max_iterations: int = 3000
    hessian: Hessian = Hessian.EXACT
    linear_solver: str = "mumps"
    threads: int = 1
    print_level: int = 0
    scale_from_bounds: bool = True
    expand: bool = True  # with point_derivatives=False: expand the MX graph to SX before differentiating
    options: dict = field(default_factory=dict)
    # Exact constraint Jacobian and Hessian assembled from per-grid-point SX derivatives
    # (trajopt.core.ocp.derivatives): the expanded graph's values to rounding, built in milliseconds instead of
    # seconds. False: nlpsol differentiates the whole graph itself (expanded to SX if `expand`).
    point_derivatives: bool = True
    # Compile the NLP functions to C (CasADi code generation + the system C compiler), cached on disk by the
    # hash of the generated source (trajopt.core.ocp.compiled): the first solve of a problem structure compiles
    # (seconds), later ones load the library. Skipped with a warning when no C compiler is found.
    compiled: bool = False

    def __post_init__(self):
        if type(self.hessian) is not Hessian:
            raise TrajoptInputError(f"Ipopt hessian must be a trajopt.core.ocp.Hessian (EXACT or LIMITED_MEMORY), got "
                                    f"{self.hessian!r}")
        if int(self.threads) != self.threads or self.threads < 0:
            raise TrajoptInputError(f"Ipopt threads must be an integer >= 0, got {self.threads!r}")
        if not self.tol > 0 or int(self.max_iterations) != self.max_iterations or self.max_iterations < 0:
            raise TrajoptInputError(f"Ipopt needs tol > 0 and integer max_iterations >= 0, got tol={self.tol}, "
                                    f"max_iterations={self.max_iterations}")

    def nlpsol_options(self, warm: bool) -> dict:
        ipopt = {"tol": self.tol, "max_iter": int(self.max_iterations),
                 "hessian_approximation": self.hessian.value, **linear_solver_options(self.linear_solver),
                 "print_level": int(self.print_level), "sb": "yes"}
        if warm:
            ipopt.update({"warm_start_init_point": "yes", "warm_start_bound_push": 1e-9,
                          "warm_start_mult_bound_push": 1e-9, "mu_init": 1e-6})
        ipopt.update(self.options)
        return {"ipopt": ipopt, "print_time": False, "expand": self.expand, "error_on_fail": False}

    @contextlib.contextmanager
    def threads_set(self):
        """Context in which casadi's BLAS uses `threads` threads (restored afterwards); freed memory is kept
        for reuse (`trajopt.core.ocp.linear_algebra.keep_freed_memory`)."""
        keep_freed_memory()
        previous = set_blas_threads(self.threads) if self.threads else None
        try:
            yield
        finally:
            if previous is not None:
                set_blas_threads(previous)

    def nlpsol(self, discrete: DiscreteProblem, warm: bool = False) -> ca.Function:
        """The casadi.nlpsol IPOPT solver of `discrete` with these settings (its construction is the NLP build)."""
        options = self.nlpsol_options(warm)
        if self.compiled and discrete.outer is not None:
            compiled = compiled_nlp(discrete, hessian=self.hessian is Hessian.EXACT)
            if compiled is not None:
                nlp, extra = compiled.nlpsol_problem()
                return ca.nlpsol("trajopt", "ipopt", nlp, {**options, **extra})
        if self.point_derivatives and discrete.outer is not None:
            options.update(discrete.derivative_functions(hessian=self.hessian is Hessian.EXACT), expand=False)
        return ca.nlpsol("trajopt", "ipopt", discrete.nlp, options)

    def solve(self, discrete: DiscreteProblem, guess=None) -> Solution:
        """Solve the NLP; returns a Solution (marked failed when IPOPT did not converge); Ctrl-C raises
        ``trajopt.core.ocp.interrupts.SolveInterrupted`` with the status, iteration and constraint violation reached."""
        w0, multipliers = initial_point(discrete, guess)
        solver = self.nlpsol(discrete, warm=bool(multipliers))
        with self.threads_set():
            started = wallclock.perf_counter()
            result, stats = call_solver(solver, x0=w0, lbx=discrete.layout.lower(), ubx=discrete.layout.upper(),
                                        lbg=discrete.lower_g, ubg=discrete.upper_g, **multipliers)
            wall_time = wallclock.perf_counter() - started
        return Solution(discrete, np.asarray(result["x"]).flatten(), np.asarray(result["g"]).flatten(),
                        float(result["f"]), np.asarray(result["lam_x"]).flatten(),
                        np.asarray(result["lam_g"]).flatten(), str(stats.get("return_status", "unknown")),
                        bool(stats.get("success", False)), int(stats.get("iter_count", -1)), wall_time)
