"""Forward re-simulation of a gait solution's controls (excitations, lumbar control).

Unlike `Solution.verify()`, which integrates the optimized accelerations udot as given inputs, this
integrates the full forward model from the solution's initial state:
``q' = u``, ``u' = forward_dynamics(q, u, muscle + lumbar forces, contact wrenches)``,
``a' = activation_rates(e, a)``, with the controls interpolated as the transcription represents them
(per mesh interval). The drift is simulated minus optimized states on the solution grid.
"""

from __future__ import annotations

import casadi as ca

from trajopt.core.ocp import Verification
from trajopt.studies.prediction import resimulate as resimulate_forward


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
               atol: float = 1e-8) -> Verification:
    """Integrate the forward model under the solution's controls from its initial state.

    Open loop over the whole half cycle (walking is unstable open loop, so the drift grows), or with
    `restart_each_interval` from the optimized state at each mesh point (the transcription's local error).
    Radau (stiff foot contact) gets the exact state Jacobian.
    """
    return resimulate_forward(gait.muscle_driven, solution, restart_each_interval, method, rtol, atol)
