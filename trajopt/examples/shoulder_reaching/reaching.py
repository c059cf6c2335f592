"""Point-to-point reach of the 3D arm from hanging (YZY gimbal lock) to a target forward and to the side.

``build_problem(euler_sequence=None)`` is the quaternion-shoulder problem, ``build_problem(euler_sequence="YZY")``
the same reach with the shoulder in Euler angles. Both: start at rest (zero speeds and accelerations) with
the arm hanging and the elbow at ``START_ELBOW``; end at rest with the hand marker at ``target``; minimize
∫ Σ e² + ``residual_weight`` ∫ Σ r² (excitations e, residual generalized forces r = 1 N·m · control,
|control| <= 1); DeGroote activation dynamics; implicit multibody dynamics by default (accelerations are
algebraic variables, inverse dynamics = muscle + residual forces), so the Euler model can be evaluated at
gimbal lock, where its mass matrix is singular (``explicit_dynamics=True``: u̇ = forward dynamics, NaN there).

Residuals of the Euler shoulder act on the three angles (generalized forces r_E = Jᵀ τ, so near gimbal lock a
small r_E stands for a large humerus torque) unless ``residuals_in_humerus_axes``, which gives them the
quaternion shoulder's actuators, torques about the humerus axes.

The Euler start is the hanging orientation, whose YZY angles are not unique: θ2 = 0 and θ1 + θ3 = 0 with
θ1 (the plane of elevation) free, unless ``fix_euler_start`` pins all three at 0.

Activation dynamics use OpenSim's smoothing (tanh factor 0.1). With the sharp switch b = 10 the optimum
chatters between activation and deactivation, which the transcription cannot resolve: its objective is lower but
the forward re-simulation drifts far from it (README.md).

The quaternion norm: the exact flow of Q̇ = ½ Gᵀ ω keeps ‖Q‖ = 1, a transcription only up to its error. The
rates get the term ``norm_stabilization`` (1 - ‖Q‖²) Q, zero on unit quaternions (exact solutions and the
forward re-simulation are unchanged), which pulls transcribed trajectories back towards ‖Q‖ = 1 (it matters on coarse
meshes: README.md).
``unit_quaternion_constraint`` adds ‖Q‖² = 1 as a path constraint instead; it nearly duplicates the defects (a
degenerate KKT system IPOPT struggles with), so it is off by default.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import point_position, rotations
from trajopt.core.ocp import Effort, Guess, HermiteSimpson, Ipopt, ResidualPenalty, Residuals
from trajopt.studies.prediction import (
    ExplicitDynamics,
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    muscle_driven_problem,
)
from trajopt.examples.shoulder_reaching.model import ShoulderArm, elevation_rotation, shoulder_arm

START_ELBOW = 0.2  # rad
# Final posture used to place the target (and as the naive guess's end): humerus elevated 80 deg in the
# scapular plane, elbow at 0.6 rad.
TARGET_ELEVATION = np.radians(80.0)
TARGET_ELBOW = 0.6
DURATION = 0.8  # s
SPEED_BOUND = 20.0  # rad/s
ACCELERATION_BOUND = 1000.0  # rad/s^2
RESIDUAL_WEIGHT = 10.0
ACTIVATION_SMOOTHING = 0.1  # OpenSim DeGrooteFregly2016Muscle; see the module docstring
NORM_STABILIZATION = 50.0  # 1/s


@dataclass(frozen=True, eq=False)
class ReachingProblem(MuscleDrivenProblem):
    """A reach built by ``trajopt.studies.prediction.muscle_driven_problem`` (its symbols) and what the reach asks
    for."""

    target: np.ndarray = None
    duration: float = None
    start_elbow: float = None
    residuals_in_humerus_axes: bool = False  # Euler shoulder: residual controls are humerus-axes torques

    def hand_position(self) -> ca.SX:
        return point_position(self.model.multibody, self.q, *self.model.hand)


def default_target() -> np.ndarray:
    """Hand position (ground, m) with the humerus elevated 80 deg in the scapular plane and the elbow at 0.6 rad."""
    arm = shoulder_arm()
    q = arm.configuration(elevation_rotation(TARGET_ELEVATION), TARGET_ELBOW)
    return np.asarray(point_position(arm.multibody, q, *arm.hand)).ravel()


def residual_generalized_forces(arm: ShoulderArm, q, residuals, in_humerus_axes: bool):
    """Generalized forces of the residual controls (optimal force 1 N·m): the quaternion shoulder's are torques
    about the humerus axes; the Euler shoulder's act on the angles, unless ``in_humerus_axes`` makes them those
    same torques, Jᵀ r (J: Euler-rate to angular-velocity map)."""
    if arm.euler_sequence is None or not in_humerus_axes:
        return residuals
    rate_matrix = rotations.euler_rate_matrix(arm.euler_sequence, q[0:3])
    return ca.vertcat(ca.mtimes(rate_matrix.T, residuals[0:3]), residuals[3:])


def build_problem(euler_sequence: str | None = None, target=None, duration: float = DURATION,
                  start_elbow: float = START_ELBOW, residual_weight: float = RESIDUAL_WEIGHT,
                  fix_euler_start: bool = False, norm_stabilization: float = NORM_STABILIZATION,
                  unit_quaternion_constraint: bool = False, explicit_dynamics: bool = False,
                  residuals_in_humerus_axes: bool = False, arm: ShoulderArm | None = None,
                  bound_by_path_domain: bool = True) -> ReachingProblem:
    """The reach in quaternion (``euler_sequence`` None) or Euler shoulder coordinates; see the module docstring.
    ``arm``: the same arm with other muscle paths (e.g. polynomial surrogates), default the geometric one;
    ``bound_by_path_domain``: fitted paths' domain bounds the coordinates (``muscle_driven_problem``'s option)."""
    arm = arm or shoulder_arm(euler_sequence)
    model = arm.multibody
    target = default_target() if target is None else np.asarray(target, dtype=float).reshape(-1)
    if target.size != 3 or not np.all(np.isfinite(target)):
        raise TrajoptInputError(f"shoulder reaching: target must be 3 finite numbers (m), got {target.tolist()}")
    if not (np.isfinite(duration) and duration > 0):
        raise TrajoptInputError(f"shoulder reaching: duration must be > 0 s, got {duration}")
    in_humerus_axes = bool(residuals_in_humerus_axes and euler_sequence is not None)
    built = muscle_driven_problem(
        arm, float(duration),
        speeds=StateBounds((-SPEED_BOUND, SPEED_BOUND), initial=0.0, final=0.0),
        activations=StateBounds((0.0, 1.0), guess=0.1),
        activation_smoothing=ACTIVATION_SMOOTHING,
        residuals=Residuals(1.0, 1.0, generalized_forces=lambda q, r: residual_generalized_forces(arm, q, r,
                                                                                              in_humerus_axes)),
        dynamics=ExplicitDynamics() if explicit_dynamics else ImplicitDynamics(ACCELERATION_BOUND),
        quaternion_norm_stabilization=norm_stabilization if euler_sequence is None else 0.0,
        bound_by_path_domain=bound_by_path_domain)
    problem, q, udot, rates = built.problem, built.q, built.accelerations, built.activation_rates
    if euler_sequence is None and unit_quaternion_constraint:
        problem.require(ca.sumsqr(q[0:4]) - 1.0, equals=0.0, name="unit quaternion")
    start = problem.initial(q)
    if euler_sequence is None:
        problem.require(start, equals=np.array([1.0, 0.0, 0.0, 0.0, start_elbow]), name="start: arm hanging")
    elif fix_euler_start:
        problem.require(start, equals=np.array([0.0, 0.0, 0.0, start_elbow]), name="start: arm hanging")
    else:
        # Hanging: R = R_y(θ1) R_z(0) R_y(θ3) = I for any θ1 with θ3 = -θ1 (for a Y-Z-Y sequence).
        if euler_sequence.upper()[0] != euler_sequence.upper()[2]:
            raise TrajoptInputError(f"shoulder reaching: a free Euler start needs a symmetric sequence "
                                    f"(e.g. 'YZY'), got '{euler_sequence}'; use fix_euler_start=True")
        problem.require(ca.vertcat(start[1], start[0] + start[2], start[3]), equals=np.array([0.0, 0.0, start_elbow]),
                        name="start: arm hanging", labels=("middle angle", "first + third angle", "elbow"))
    problem.require(problem.initial(udot), equals=0.0, name="start at rest (accelerations)")
    problem.require(problem.initial(rates), equals=0.0, name="start at rest (activation rates)")
    hand = point_position(model, q, *arm.hand)
    problem.require(problem.final(hand) - target, equals=0.0, name="hand at target",
                    labels=("hand x", "hand y", "hand z"))
    problem.minimize(Effort(built.excitations) + residual_weight * ResidualPenalty(built.residuals))
    return ReachingProblem(**{f.name: getattr(built, f.name) for f in fields(MuscleDrivenProblem)}, target=target,
                           duration=float(duration), start_elbow=float(start_elbow),
                           residuals_in_humerus_axes=in_humerus_axes)


def end_configuration(built: ReachingProblem, elevation: float = TARGET_ELEVATION, elbow: float = TARGET_ELBOW):
    """q of the posture the default target was made from (naive guess end)."""
    return built.model.configuration(elevation_rotation(elevation), elbow)


def start_configuration(built: ReachingProblem) -> np.ndarray:
    """q of the start: arm hanging (identity orientation), elbow at the problem's start angle."""
    return built.model.configuration(np.eye(3), built.start_elbow)


def naive_guess(built: ReachingProblem) -> Guess:
    """Linear interpolation of q (quaternion components or Euler angles, and the elbow) from start to end, zero speeds,
    activations and excitations 0.1 (the variables' defaults)."""
    start, end = start_configuration(built), end_configuration(built)
    guess = Guess([0.0, built.duration]).set(built.q, np.vstack([start, end]))
    guess.set(built.u, np.zeros((2, built.model.multibody.nv)))
    return guess


# IPOPT barrier settings for a start from a converged coarse solution. With the defaults (mu_init 0.1, bound
# push 0.01) the interpolated solution is pushed off its active bounds (excitations at 0) and the fine solve
# ends in worse local optima (README.md).
WARM_START_OPTIONS = {"mu_init": 1e-4, "bound_push": 1e-8, "bound_frac": 1e-8}


def solver(tol: float = 1e-6, max_iterations: int = 1000, print_level: int = 0, warm: bool = False) -> Ipopt:
    """IPOPT settings of these solves; ``warm`` adds ``WARM_START_OPTIONS``."""
    return Ipopt(tol=tol, max_iterations=max_iterations, print_level=print_level,
                 options=dict(WARM_START_OPTIONS) if warm else {})


def solve_naive_and_warm(built: ReachingProblem, intervals: int = 40, coarse_intervals: int = 20, tol: float = 1e-6,
                         max_iterations: int = 1000, print_level: int = 0):
    """Solve from the naive guess, and again from a coarse-mesh solution (warm start, ``WARM_START_OPTIONS``).

    Returns (naive-guess solution, warm-started solution, coarse solution)."""
    guess = naive_guess(built)
    naive = built.problem.solve(HermiteSimpson(intervals), solver(tol, max_iterations, print_level), guess=guess)
    coarse = built.problem.solve(HermiteSimpson(coarse_intervals), solver(tol, max_iterations, print_level),
                                 guess=guess)
    warm = built.problem.solve(HermiteSimpson(intervals), solver(tol, max_iterations, print_level, warm=True),
                               guess=coarse)
    return naive, warm, coarse
