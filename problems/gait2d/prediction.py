"""Predictive and tracking 2D gait on 2D_gait.osim: the problems of Moco's example2DWalking.

Half a gait cycle (t0 = 0, tf free in [0.4, 0.6] s) with implicit multibody dynamics:
states q, u (10 each) and muscle activations (18); controls muscle excitations (18) and the lumbar
actuator control; algebraic accelerations udot with the path constraint
``inverse_dynamics(q, u, udot, contact wrenches) = muscle + lumbar generalized forces``.

Prediction (`build_problem`), as gaitPrediction_study.omoco:
- left/right symmetry: every state at tf equals the mirrored state at t0 (q, u, activations; pelvis_tx
  value excluded), and the lumbar control repeats (Moco's MocoPeriodicityGoal; excitations free);
- average speed ``(pelvis_tx(tf) - pelvis_tx(0)) / tf = speed`` (MocoAverageSpeedGoal: the centre of
  mass moves like pelvis_tx between mirrored end states of this left/right-symmetric model);
- objective ``10 * ∫ Σ |control|³ dt / displacement`` over the 18 excitations and the lumbar control
  (MocoControlGoal weight 10, exponent 3, divide_by_displacement);
- Moco's state bounds; speeds in [-50, 50] (Moco's default); excitations and activations in
  [min_control, max_control] = [0.01, 1]; lumbar control in [-150, 150].
  pelvis_tx(0) = 0 (Moco leaves it free in [0, 1]; the problem is invariant to shifting it).

Tracking (`build_tracking_problem`), as Moco's MocoTrack step of the example: fixed tf = 0.47008941 s,
same symmetry, minimize ``10 ∫ Σ (q - q_ref)² + 10 ∫ Σ e² + w_grf ∫ Σ (F - F_ref)²/(m g)²``.
"""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.io.motion import read_motion
from trajopt.io.tables import read_table
from trajopt.ocp import Effort, Free, Guess, HermiteSimpson, Integral, Problem, Tracking

from problems.gait2d.model import HERE, GaitModel, coordinate_path

REFERENCE_COORDINATES = HERE / "referenceCoordinates.sto"
REFERENCE_GRF = HERE / "referenceGRF.sto"

# gaitPrediction_study.omoco <state_infos> (radians, metres).
MOCO_STATE_BOUNDS = {
    "pelvis_tilt": (-0.3490658503988659, -0.17453292519943295),
    "pelvis_tx": (0.0, 1.0),
    "pelvis_ty": (0.75, 1.25),
    "hip_flexion_l": (-0.17453292519943295, 1.0471975511965976),
    "hip_flexion_r": (-0.17453292519943295, 1.0471975511965976),
    "knee_angle_l": (-0.87266462599716477, 0.0),
    "knee_angle_r": (-0.87266462599716477, 0.0),
    "ankle_angle_l": (-0.26179938779914941, 0.43633231299858238),
    "ankle_angle_r": (-0.26179938779914941, 0.43633231299858238),
    "lumbar": (0.0, 0.3490658503988659),
}
MOCO_SPEED_BOUNDS = (-50.0, 50.0)
ACCELERATION_BOUNDS = (-1000.0, 1000.0)
EFFORT_WEIGHT = 10.0
MOCO_TRACKING_FINAL_TIME = 0.47008941


@dataclass(frozen=True)
class GaitVariables:
    """SX symbols of one gait problem."""

    q: ca.SX
    u: ca.SX
    activations: ca.SX
    excitations: ca.SX
    lumbar_control: ca.SX
    udot: ca.SX


@dataclass(frozen=True)
class GaitProblem:
    """A gait Problem with its model, symbols, mesh and the speed it asks for (None for tracking)."""

    problem: Problem
    model: GaitModel
    variables: GaitVariables
    speed: float | None
    intervals: int

    @property
    def transcription(self) -> HermiteSimpson:
        """Moco's transcription for this example: separated Hermite-Simpson on `intervals` mesh intervals."""
        return HermiteSimpson(intervals=self.intervals)

    def reference_guess(self, coordinates=REFERENCE_COORDINATES) -> Guess:
        """Guess from a coordinates table: q, finite-difference u and udot, activations 0.05, lumbar 0."""
        v, model = self.variables, self.model
        motion = read_motion(coordinates, coordinates=model.coordinate_names)
        time, q = motion.time, motion.data
        u = np.gradient(q, time, axis=0)
        udot = np.gradient(u, time, axis=0)
        muscles = np.full((time.size, len(model.muscle_names)), 0.05)
        guess = Guess(time)
        guess.set(v.q, q).set(v.u, u).set(v.udot, udot).set(v.activations, muscles)
        guess.set(v.excitations, muscles).set(v.lumbar_control, np.zeros(time.size))
        return guess

    def ground_reactions(self):
        """(right force, left force) SX expressions (3 each, ground axes) on the problem's symbols."""
        right, left, _, _ = self.model.ground_reactions(self.variables.q, self.variables.u)
        return right, left


def _declare(model: GaitModel, duration) -> tuple[Problem, GaitVariables]:
    problem = Problem(duration=duration)
    names = model.coordinate_names
    lower = np.array([MOCO_STATE_BOUNDS[n][0] for n in names])
    upper = np.array([MOCO_STATE_BOUNDS[n][1] for n in names])
    initial_lower, initial_upper = lower.copy(), upper.copy()
    tx = model.coordinate_index("pelvis_tx")
    initial_lower[tx] = initial_upper[tx] = 0.0
    q = problem.state("q", len(names), bounds=(lower, upper), initial=(initial_lower, initial_upper),
                      labels=[coordinate_path(n) for n in names])
    u = problem.state("u", len(names), bounds=MOCO_SPEED_BOUNDS, scale=5.0,
                      labels=[coordinate_path(n, "speed") for n in names])
    muscles = model.musculoskeletal
    activation_bounds = (muscles.min_activations, muscles.max_activations)
    a = problem.state("activations", len(model.muscle_names), bounds=activation_bounds,
                      labels=[f"/{n}/activation" for n in model.muscle_names])
    e = problem.control("excitations", len(model.muscle_names), bounds=activation_bounds,
                        labels=[f"/{n}" for n in model.muscle_names])
    actuator = model.lumbar_actuator
    lumbar = problem.control("lumbar_control", bounds=(actuator.min_control, actuator.max_control), scale=10.0,
                             labels=[f"/{actuator.name}"])
    udot = problem.algebraic("udot", len(names), bounds=ACCELERATION_BOUNDS, scale=50.0,
                             labels=[coordinate_path(n, "accel") for n in names])
    problem.set_derivative(q, u)
    problem.set_derivative(u, udot)
    problem.set_derivative(a, model.activation_rates(e, a))
    problem.require(model.implicit_dynamics(q, u, udot, a, lumbar), equals=0.0, name="implicit multibody dynamics",
                    labels=[f"residual {n}" for n in names])
    _symmetry(problem, model, q, u, a, lumbar)
    return problem, GaitVariables(q, u, a, e, lumbar, udot)


def _symmetry(problem: Problem, model: GaitModel, q, u, a, lumbar) -> None:
    """State at tf = mirrored state at t0 (pelvis_tx value excluded); the lumbar control repeats."""
    mirror = model.mirror
    keep = [i for i, n in enumerate(model.coordinate_names) if n != "pelvis_tx"]
    mirrored_q = ca.mtimes(ca.DM(mirror.coordinates), q)
    problem.require(problem.final(q[keep]) - problem.initial(mirrored_q[keep]), equals=0.0, name="symmetry q",
                    labels=[f"symmetry {model.coordinate_names[i]}" for i in keep])
    problem.require(problem.final(u) - problem.initial(ca.mtimes(ca.DM(mirror.coordinates), u)), equals=0.0,
                    name="symmetry u", labels=[f"symmetry speed {n}" for n in model.coordinate_names])
    problem.require(problem.final(a) - problem.initial(ca.mtimes(ca.DM(mirror.muscles), a)), equals=0.0,
                    name="symmetry activations", labels=[f"symmetry {n}" for n in model.muscle_names])
    problem.require(problem.final(lumbar) - problem.initial(lumbar), equals=0.0, name="symmetry lumbar control")


def displacement_expression(gait: GaitProblem) -> ca.SX:
    """pelvis_tx(tf) - pelvis_tx(t0), an endpoint expression."""
    tx = gait.variables.q[gait.model.coordinate_index("pelvis_tx")]
    return gait.problem.final(tx) - gait.problem.initial(tx)


def build_problem(intervals: int = 50, speed: float = 1.2, model: GaitModel | None = None,
                  duration=Free(0.4, 0.6)) -> GaitProblem:
    """The predictive half gait cycle (see the module docstring) on `intervals` mesh intervals."""
    model = model if model is not None else GaitModel.load()
    problem, variables = _declare(model, duration)
    gait = GaitProblem(problem, model, variables, float(speed), int(intervals))
    displacement = displacement_expression(gait)
    problem.require(displacement - speed * problem.final(problem.time), equals=0.0, name="average speed")
    controls = ca.vertcat(variables.excitations, variables.lumbar_control)
    problem.minimize(EFFORT_WEIGHT * Effort(controls, power=3, per_distance=displacement))
    return gait


def build_tracking_problem(intervals: int = 24, model: GaitModel | None = None, grf_weight: float = 1.0,
                           duration: float = MOCO_TRACKING_FINAL_TIME) -> GaitProblem:
    """Track referenceCoordinates.sto and referenceGRF.sto (vertical and fore-aft forces) with effort."""
    model = model if model is not None else GaitModel.load()
    problem, variables = _declare(model, duration)
    gait = GaitProblem(problem, model, variables, None, int(intervals))
    motion = read_motion(REFERENCE_COORDINATES, coordinates=model.coordinate_names)
    problem.minimize(10.0 * Tracking(variables.q, motion.time, motion.data))
    grf = read_table(REFERENCE_GRF)
    labels = ["ground_force_r_vx", "ground_force_r_vy", "ground_force_l_vx", "ground_force_l_vy"]
    right, left = gait.ground_reactions()
    body_weight = model.multibody_weight
    forces = ca.vertcat(right[0], right[1], left[0], left[1]) / body_weight
    reference = np.column_stack([grf.column(label) for label in labels]) / body_weight
    problem.minimize(grf_weight * Tracking(forces, grf.time, reference))
    problem.minimize(10.0 * Integral(ca.sumsqr(variables.excitations)))
    problem.minimize(1e-4 * Integral(variables.lumbar_control ** 2))
    return gait
