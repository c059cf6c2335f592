"""Forward re-simulation of a gait solution's controls (excitations, lumbar control).

Unlike `Solution.verify()`, which integrates the optimized accelerations udot as given inputs, this
integrates the full forward model from the solution's initial state:
``q' = u``, ``u' = forward_dynamics(q, u, muscle + lumbar forces, contact wrenches)``,
``a' = activation_rates(e, a)``, with the controls interpolated as the transcription represents them
(per mesh interval). The drift is simulated minus optimized states on the solution grid.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np
from scipy.integrate import solve_ivp


@dataclass(frozen=True)
class Resimulation:
    time: np.ndarray
    simulated_states: np.ndarray  # (nx, M)
    drift: np.ndarray  # (nx, M)
    labels: tuple[str, ...]

    def max_drift(self, rows: slice | list | None = None) -> float:
        drift = self.drift if rows is None else self.drift[rows]
        return float(np.max(np.abs(drift)))

    def first_time_beyond(self, rows, threshold: float) -> float | None:
        """First grid time at which |drift| of `rows` exceeds `threshold` (None if never)."""
        beyond = np.any(np.abs(self.drift[rows]) > threshold, axis=0)
        return float(self.time[np.argmax(beyond)]) if beyond.any() else None

    def worst(self) -> str:
        row, column = np.unravel_index(np.argmax(np.abs(self.drift)), self.drift.shape)
        return f"{self.labels[row]} drifts {self.drift[row, column]:.3g} at t={self.time[column]:.4g} s"


def explicit_dynamics_function(gait) -> ca.Function:
    """``explicit_dynamics(x, excitations, lumbar_control) -> xdot`` with x = (q, u, activations).

    Built from the muscle-driven problem's own symbols: its forward-dynamics accelerations (muscles,
    lumbar actuator, contact wrenches) and activation rates.
    """
    built = gait.muscle_driven
    x = ca.vertcat(built.q, built.u, built.activations)
    xdot = ca.vertcat(built.u, built.explicit_accelerations, built.activation_rates)
    return ca.Function("explicit_dynamics", [x, built.excitations, built.actuator_controls],
                       [xdot, ca.jacobian(xdot, x)], ["x", "excitations", "lumbar_control"], ["xdot", "jacobian"])


def resimulate(gait, solution, restart_each_interval: bool = False, method: str = "Radau", rtol: float = 1e-8,
               atol: float = 1e-8) -> Resimulation:
    """Integrate the forward model under the solution's controls from its initial state.

    Open loop over the whole half cycle (walking is unstable open loop, so the drift grows), or with
    `restart_each_interval` from the optimized state at each mesh point (the transcription's local error).
    """
    v = gait.muscle_driven
    function = explicit_dynamics_function(gait)
    transcription = solution.discrete.transcription
    x_grid = np.vstack([solution.value(v.q), solution.value(v.u), solution.value(v.activations)])
    e_grid = np.atleast_2d(solution.value(v.excitations))
    lumbar_grid = np.atleast_2d(solution.value(v.actuator_controls))
    t0, duration = solution.initial_time, solution.duration
    mesh = t0 + duration * np.linspace(0.0, 1.0, transcription.intervals + 1)
    simulated = np.zeros_like(x_grid)
    simulated[:, 0] = state = x_grid[:, 0]
    for k in range(transcription.intervals):
        def controls(t, interval=k):
            weights = transcription.interpolation(np.array([(t - t0) / duration]), controls=True,
                                                  interval=interval)[:, 0]
            return e_grid @ weights, lumbar_grid @ weights

        def rhs(t, x):
            e, lumbar = controls(t)
            return np.asarray(function(x, e, lumbar)[0]).ravel()

        def jacobian(t, x):
            e, lumbar = controls(t)
            return np.asarray(function(x, e, lumbar)[1])

        start, end = mesh[k], mesh[k + 1]
        if restart_each_interval:
            state = x_grid[:, np.searchsorted(solution.time, start - 1e-12)]
        points = solution.time[(solution.time > start) & (solution.time <= end + 1e-12)]
        result = solve_ivp(rhs, (start, end), state, method=method, jac=jacobian, rtol=rtol, atol=atol,
                           t_eval=np.clip(points, start, end))
        simulated[:, np.searchsorted(solution.time, points)] = result.y
        state = result.y[:, -1]
    problem = solution.discrete.problem
    labels = tuple(label for variable in problem.states for label in variable.labels)
    return Resimulation(solution.time.copy(), simulated, simulated - x_grid, labels)
