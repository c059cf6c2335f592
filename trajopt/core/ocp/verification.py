"""Verification: re-simulate a solution's controls with a variable-step integrator, report state drift.

Controls (and algebraic variables, treated as given inputs) are interpolated exactly as the
transcription represents them (linear for trapezoidal, quadratic per interval for Hermite-Simpson,
the degree d-1 Radau control polynomial), one mesh interval at a time so that discontinuities at
mesh points are respected. The drift is the difference between the simulated and optimized states
at the grid points.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp


@dataclass(frozen=True)
class Verification:
    """Simulated states on the solution grid and their drift from the optimized states."""

    time: np.ndarray
    simulated_states: np.ndarray  # (nx, M)
    drift: np.ndarray  # (nx, M) simulated - optimized
    labels: tuple[str, ...]

    @property
    def max_drift(self) -> float:
        return float(np.max(np.abs(self.drift))) if self.drift.size else 0.0

    def max_drift_in(self, rows) -> float:
        """Largest |drift| of the states in ``rows`` (a slice or index list)."""
        return float(np.max(np.abs(self.drift[rows])))

    def first_time_beyond(self, rows, threshold: float) -> float | None:
        """First grid time at which |drift| of ``rows`` exceeds ``threshold`` (None if never)."""
        beyond = np.any(np.abs(self.drift[rows]) > threshold, axis=0)
        return float(self.time[np.argmax(beyond)]) if beyond.any() else None

    def max_drift_by_state(self) -> dict[str, float]:
        return {label: float(np.max(np.abs(row))) for label, row in zip(self.labels, self.drift)}

    def worst(self) -> str:
        if not self.drift.size:
            return "no states"
        row, column = np.unravel_index(np.argmax(np.abs(self.drift)), self.drift.shape)
        return f"state '{self.labels[row]}' drifts {self.drift[row, column]:.3g} at t={self.time[column]:.4g} s"


class SimulationUndefined(ValueError):
    """A re-simulation cannot integrate an interval: the forward dynamics are not finite where it starts or steps
    (the states whose derivatives are not finite), or the integrator stopped (its message; e.g. dynamics too stiff
    for its smallest step, as a damped fiber's at activation 0)."""


def verify(solution, rtol: float = 1e-10, atol: float = 1e-10, method: str = "RK45") -> Verification:
    """Integrate x' = f(t, x, u(t), p, z(t)) from the solution's initial state with scipy's solve_ivp."""
    return simulate(solution, rtol=rtol, atol=atol, method=method)


def simulate(solution, dynamics: ca.Function | None = None, restart_each_interval: bool = False,
             method: str = "RK45", rtol: float = 1e-10, atol: float = 1e-10) -> Verification:
    """Integrate ``dynamics(t, x, u, p, z) -> xdot`` (default: the problem's own) under the solution's controls.

    Open loop from the initial state, or with ``restart_each_interval`` from the optimized state at each
    mesh point (the transcription's local error). ``method`` is any scipy ``solve_ivp`` method; the implicit
    ones (Radau, BDF, LSODA) get the exact state Jacobian.
    """
    discrete = solution.discrete
    problem, transcription = discrete.problem, discrete.transcription
    dynamics = problem.dynamics if dynamics is None else dynamics
    jacobian = None
    if method in ("Radau", "BDF", "LSODA"):
        inputs = dynamics.sx_in()
        jacobian = ca.Function("dynamics_state_jacobian", inputs, [ca.jacobian(dynamics(*inputs), inputs[1])])
    parameters = solution.parameters
    columns = solution.time.size
    x_grid = solution.value(problem.symbols["x"]).reshape(-1, columns)
    u_grid = solution.value(problem.symbols["u"]).reshape(-1, columns)
    z_grid = solution.value(problem.symbols["z"]).reshape(-1, columns)
    n_intervals = transcription.intervals
    mesh = solution.initial_time + solution.duration * np.linspace(0.0, 1.0, n_intervals + 1)
    labels = tuple(label for variable in problem.states for label in variable.labels)
    simulated = np.zeros_like(x_grid)
    simulated[:, 0] = x_grid[:, 0]
    state = x_grid[:, 0].copy()
    for k in range(n_intervals):
        start, end = mesh[k], mesh[k + 1]

        def inputs(t, interval=k):
            tau = (t - solution.initial_time) / solution.duration
            weights = transcription.interpolation(np.array([tau]), controls=True, interval=interval)[:, 0]
            return u_grid @ weights, z_grid @ weights

        def rhs(t, x):
            u, z = inputs(t)
            return np.asarray(dynamics(t, x, u, parameters, z)).flatten()

        def state_jacobian(t, x):
            u, z = inputs(t)
            return np.asarray(jacobian(t, x, u, parameters, z))

        if restart_each_interval:
            state = x_grid[:, np.searchsorted(solution.time, start - 1e-12 * max(1.0, abs(start)))]
        points = solution.time[(solution.time > start) & (solution.time <= end + 1e-12 * max(1.0, abs(end)))]
        where = f"interval {k} ({start:.4g}-{end:.4g} s)"
        bad = [label for label, value in zip(labels, rhs(start, state)) if not np.isfinite(value)]
        if bad:
            raise SimulationUndefined(f"the forward dynamics are not finite in {where}: derivatives of "
                                      f"{', '.join(bad[:5])}{' ...' if len(bad) > 5 else ''} at its start")
        try:
            result = solve_ivp(rhs, (start, end), state, method=method, rtol=rtol, atol=atol,
                               t_eval=np.clip(points, start, end), **({"jac": state_jacobian} if jacobian else {}))
        except ValueError as error:  # scipy refuses a Jacobian or step with NaN or inf
            raise SimulationUndefined(f"the forward dynamics are not finite in {where}: {error}") from None
        if not result.success:
            raise SimulationUndefined(f"the integrator stopped in {where}: {result.message}")
        indices = np.searchsorted(solution.time, points)
        simulated[:, indices] = result.y
        state = result.y[:, -1]
    return Verification(solution.time.copy(), simulated, simulated - x_grid, labels)
