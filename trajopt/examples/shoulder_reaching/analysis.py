"""Checks on shoulder-reaching solutions: quaternion norm, the torque identity of Zoufaly et al. (eqs. 4-16),
distance from YZY gimbal lock, Euler residuals seen as spatial torques, and the condition of the KKT matrix.

Shoulder torque of the muscles (humerus axes, N·m), three ways (sign: positive when the tension turns the
humerus about +axis, i.e. τ = -R_S F with R_S the spatial length Jacobian of the paper):

- ``quaternion``: R_Q = ∂l/∂Q of the full quaternion, R_S = ½ G(Q) R_Q (eq. 4);
- ``constrained``: l(Q*) with Q0 = sqrt(1 - |Q*|²), R_Q* = ∂l/∂Q*, R_S = (Eᵀ)⁻¹ R_Q* (eqs. 12-15);
- ``spatial``: the generalized-force method (``trajopt.model.paths.moment_arms.spatial_moment_arm``: tension applied to
  the bodies as wrenches, mapped by the humerus Jacobian), independent of any length derivative.

Eq. 4 holds on unit quaternions (G Q = 0 removes the radial part of R_Q only there), so along a transcribed
solution, whose ‖Q‖ is 1 up to the transcription error, the identity is checked at Q/‖Q‖.
"""

from __future__ import annotations

import threading

import casadi as ca
import numpy as np

from trajopt.core.multibody import rotations
from trajopt.model.paths import quaternion as qmaps
from trajopt.model.paths.moment_arms import spatial_moment_arm
from trajopt.studies.prediction import resimulate
from trajopt.examples.shoulder_reaching.model import ShoulderArm


def _shoulder_torque_functions(arm: ShoulderArm) -> ca.Function:
    """(q, forces) -> (quaternion, constrained, spatial) shoulder torques (3 each), built once per arm."""
    cache = arm.__dict__.setdefault("_torque_identity", {})
    if "function" in cache:
        return cache["function"]
    model = arm.multibody
    q = ca.SX.sym("q", model.nq)
    forces = ca.SX.sym("forces", len(arm.paths))
    quaternion = q[0:4]
    lengths = ca.vertcat(*[p.length(q) for p in arm.paths])
    # eq. 3-4: full-quaternion length Jacobian, R_S = ½ G R_Q (one column per muscle).
    r_q = ca.jacobian(lengths, quaternion).T
    r_s_quaternion = 0.5 * ca.mtimes(qmaps.angular_velocity_matrix(quaternion), r_q)
    # eqs. 12-15: lengths as functions of Q* with Q0 eliminated, R_S = (Eᵀ)⁻¹ R_Q*.
    constrained = ca.SX.sym("constrained", 3)
    q_constrained = ca.vertcat(qmaps.full_quaternion(constrained), q[4:])
    lengths_constrained = ca.vertcat(*[p.length(q_constrained) for p in arm.paths])
    r_q_star = ca.jacobian(lengths_constrained, constrained).T
    r_q_star = ca.substitute(r_q_star, constrained, quaternion[1:4])
    e = qmaps.constrained_angular_velocity_matrix(quaternion)
    r_s_constrained = ca.solve(e.T, r_q_star)
    # Generalized-force method: spatial moment arm = -R_S.
    arms = ca.horzcat(*[spatial_moment_arm(p, q, "shoulder") for p in arm.paths])
    function = ca.Function("shoulder_torques", [q, forces],
                           [-ca.mtimes(r_s_quaternion, forces), -ca.mtimes(r_s_constrained, forces),
                            ca.mtimes(arms, forces)],
                           ["q", "tendon_forces"], ["quaternion", "constrained", "spatial"], {"cse": True})
    cache["function"] = function
    return function


def shoulder_torques(arm: ShoulderArm, q, forces) -> dict[str, np.ndarray]:
    """Shoulder muscle torques (3 x n) at configurations q (nq x n, quaternion shoulder, Q0 > 0) and
    tendon forces (m x n), by the three routes of the module docstring."""
    if arm.euler_sequence is not None:
        raise ValueError("shoulder_torques needs the quaternion shoulder")
    q = np.atleast_2d(np.asarray(q, dtype=float).T).T
    forces = np.atleast_2d(np.asarray(forces, dtype=float).T).T
    # Q and -Q are one rotation; the constrained form needs Q0 > 0 and l(Q) does not see the sign.
    q = q.copy()
    q[0:4] *= np.where(q[0] < 0, -1.0, 1.0)
    function = _shoulder_torque_functions(arm).map(q.shape[1])
    out = function(q, forces)
    return {name: np.asarray(value) for name, value in zip(("quaternion", "constrained", "spatial"), out)}


def torque_identity_error(arm: ShoulderArm, q, forces) -> dict[str, float]:
    """Max |difference| (N·m) of the length-Jacobian torques (eq. 4 and eq. 15) from the spatial ones."""
    torques = shoulder_torques(arm, q, forces)
    return {"eq4_quaternion_vs_spatial": float(np.max(np.abs(torques["quaternion"] - torques["spatial"]))),
            "eq15_constrained_vs_spatial": float(np.max(np.abs(torques["constrained"] - torques["spatial"]))),
            "max_torque": float(np.max(np.abs(torques["spatial"])))}


def normalized(q) -> np.ndarray:
    """q (nq x n) with the shoulder quaternions scaled to unit norm: the orientations they stand for."""
    q = np.array(q, dtype=float)
    q[0:4] /= np.linalg.norm(q[0:4], axis=0)
    return q


def quaternion_norm_error(arm: ShoulderArm, q) -> float:
    """max |‖Q‖ - 1| over the columns of q (nq x n)."""
    q = np.asarray(q, dtype=float)
    return float(np.max(np.abs(np.linalg.norm(q[0:4], axis=0) - 1.0)))


def yzy_middle_angle(arm: ShoulderArm, q, sequence: str = "YZY") -> np.ndarray:
    """Middle angle of the Euler sequence for the shoulder orientation of each column of q (rad)."""
    q = np.asarray(q, dtype=float)
    if arm.euler_sequence is not None:
        if arm.euler_sequence.upper() == sequence.upper():
            return q[1].copy()
        rotation = [np.array(rotations.euler_to_rotation(arm.euler_sequence, c[0:3])) for c in q.T]
    else:
        rotation = [np.array(rotations.quaternion_to_rotation(c[0:4] / np.linalg.norm(c[0:4]))) for c in q.T]
    # Middle angle of a symmetric sequence a-b-a: cos(θ2) = R[a, a]; no decomposition (which warns at lock) needed.
    axis = "XYZ".index(sequence.upper()[0])
    return np.array([np.arccos(np.clip(r[axis, axis], -1.0, 1.0)) for r in rotation])


def euler_residuals_as_spatial_torques(arm: ShoulderArm, q, residuals) -> np.ndarray:
    """Euler-coordinate residual forces r_E (3 x n) as the humerus-axes torques they stand for, (Jᵀ)⁻¹ r_E
    (3 x n; inf where J is singular)."""
    q, residuals = np.asarray(q, dtype=float), np.asarray(residuals, dtype=float)
    out = np.full((3, q.shape[1]), np.inf)
    for k in range(q.shape[1]):
        j = np.array(rotations.euler_rate_matrix(arm.euler_sequence, q[0:3, k]))
        if abs(np.linalg.det(j)) > 1e-14:
            out[:, k] = np.linalg.solve(j.T, residuals[0:3, k])
    return out


def _singular_values(matrix: np.ndarray) -> np.ndarray:
    """``np.linalg.svd(matrix, compute_uv=False)`` in a daemon thread: LAPACK does not return to Python for the
    minutes a dense KKT matrix takes, so Ctrl-C would wait for it; the main thread stays free to stop at once."""
    result = {}

    def work():
        try:
            result["values"] = np.linalg.svd(matrix, compute_uv=False)
        except np.linalg.LinAlgError as error:
            result["error"] = error

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.2)
    if "error" in result:
        raise result["error"]
    return result["values"]


def kkt_condition_number(solution, active_tolerance: float = 1e-8) -> dict[str, float]:
    """2-norm condition number of the KKT matrix [[H, Aᵀ], [A, 0]] at the solution, in IPOPT's (scaled) variables.

    H: Hessian of the Lagrangian; A: Jacobian of the equality and active inequality constraints. Variables fixed
    by equal bounds or at an active bound are removed (their multiplier row would be an identity row).
    """
    discrete = solution.discrete
    nlp = discrete.nlp
    w = nlp["x"]
    lam = ca.MX.sym("lam", nlp["g"].numel())
    lagrangian = nlp["f"] + ca.dot(lam, nlp["g"])
    hessian = ca.Function("hessian", [w, lam], [ca.hessian(lagrangian, w)[0], ca.jacobian(nlp["g"], w)])
    w_value, lam_g = solution.nlp_variables, solution.lam_g  # the solution's raw NLP point
    h, a = (np.asarray(m.full() if hasattr(m, "full") else m) for m in hessian(w_value, lam_g))
    lower, upper = discrete.layout.lower(), discrete.layout.upper()
    width = np.maximum(upper - lower, 1.0)
    at_bound = ((np.minimum(w_value - lower, upper - w_value) < 1e-7 * width)
                & (np.abs(solution.lam_x) > active_tolerance))
    free = ~((upper - lower <= 0) | at_bound)
    g = discrete.lower_g
    rows = (discrete.upper_g - g <= 0) | (np.abs(lam_g) > active_tolerance)
    h = h[np.ix_(free, free)]
    a = a[np.ix_(rows, free)]
    kkt = np.block([[h, a.T], [a, np.zeros((a.shape[0], a.shape[0]))]])
    singular_values = _singular_values(kkt)
    return {"kkt_size": int(kkt.shape[0]), "kkt_condition_number": float(singular_values[0] / singular_values[-1]),
            "kkt_smallest_singular_value": float(singular_values[-1])}


def interval_resimulation_error(built, solution, rtol: float = 1e-9, atol: float = 1e-9) -> dict[str, float]:
    """Forward dynamics integrated over each mesh interval from the optimized state at its start (controls as the
    transcription represents them): the largest state error at the interval ends, i.e. the transcription's local
    error. Compare with the whole-motion re-simulation drift, which also grows with any open-loop instability."""
    local = resimulate(built, solution, restart_each_interval=True, rtol=rtol, atol=atol)
    intervals = solution.discrete.transcription.intervals
    mesh = solution.initial_time + solution.duration * np.linspace(0.0, 1.0, intervals + 1)
    ends = np.array([int(np.argmin(np.abs(solution.time - t))) for t in mesh[1:]])
    errors = np.abs(local.drift[:, ends])
    row, column = np.unravel_index(np.argmax(errors), errors.shape)
    return {"max_interval_error": float(errors[row, column]),
            "worst_interval": f"{local.labels[row]} at t={mesh[1 + column]:.3g} s"}
