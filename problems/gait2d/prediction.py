"""Predictive and tracking 2D gait on 2D_gait.osim: the problems of Moco's example2DWalking.

Half a gait cycle (t0 = 0, tf free in [0.4, 0.6] s) built by ``trajopt.prediction.muscle_driven_problem``
with ``ImplicitDynamics``: states q, u (10 each) and muscle activations (18); controls muscle excitations
(18) and the lumbar actuator control; algebraic accelerations with the path constraint
``inverse_dynamics(q, u, udot, contact wrenches) = muscle + lumbar generalized forces`` (contacts through
the ``external_wrenches`` hook). Labels are OpenSim's state/control paths, for .sto files OpenSim reads.

Prediction (`build_problem`), as gaitPrediction_study.omoco:
- left/right symmetry: every state at tf equals the mirrored state at t0 (q, u, activations; pelvis_tx
  value excluded), and the lumbar control repeats (Moco's MocoPeriodicityGoal; excitations free unless
  ``mirror_excitations``, which also maps them left<->right at the end);
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

from trajopt.errors import TrajoptInputError
from trajopt.io.motion import read_motion
from trajopt.io.tables import read_table
from trajopt.ocp import Effort, Free, Guess, HermiteSimpson, Integral, Problem, Tracking
from trajopt.prediction import (
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    VariableLabels,
    VariableScales,
    muscle_driven_problem,
)

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
MAX_ACCELERATION = 1000.0
EFFORT_WEIGHT = 10.0
MOCO_TRACKING_FINAL_TIME = 0.47008941


@dataclass(frozen=True)
class GaitProblem:
    """A gait Problem with its model, symbols, mesh and the speed it asks for (None for tracking)."""

    problem: Problem
    model: GaitModel
    muscle_driven: MuscleDrivenProblem  # symbols: q, u, activations, excitations, actuator_controls, accelerations
    speed: float | None
    intervals: int

    @property
    def transcription(self) -> HermiteSimpson:
        """Moco's transcription for this example: separated Hermite-Simpson on `intervals` mesh intervals."""
        return HermiteSimpson(intervals=self.intervals)

    def reference_guess(self, coordinates=REFERENCE_COORDINATES) -> Guess:
        """Guess from a coordinates table: q, finite-difference u and udot, activations 0.05, lumbar 0."""
        v, model = self.muscle_driven, self.model
        motion = read_motion(coordinates, coordinates=model.coordinate_names)
        time, q = motion.time, motion.data
        u = np.gradient(q, time, axis=0)
        udot = np.gradient(u, time, axis=0)
        muscles = np.full((time.size, len(model.muscle_names)), 0.05)
        guess = Guess(time)
        guess.set(v.q, q).set(v.u, u).set(v.accelerations, udot).set(v.activations, muscles)
        guess.set(v.excitations, muscles).set(v.actuator_controls, np.zeros(time.size))
        return guess

    def ground_reactions(self):
        """(right force, left force) SX expressions (3 each, ground axes) on the problem's symbols."""
        right, left, _, _ = self.model.ground_reactions(self.muscle_driven.q, self.muscle_driven.u)
        return right, left


def _declare(model: GaitModel, duration, mirror_excitations: bool = False,
             coordinate_bounds: dict | None = None) -> MuscleDrivenProblem:
    """Moco's bounds on trajopt's muscle-driven problem (implicit dynamics, foot contacts) plus the symmetry.

    ``coordinate_bounds`` replaces Moco's bounds of the coordinates it names (radians, metres).
    """
    names = model.coordinate_names
    bounds = {**MOCO_STATE_BOUNDS, **(coordinate_bounds or {})}
    unknown = sorted(set(bounds) - set(names))
    if unknown:
        raise TrajoptInputError(f"gait2d: coordinate_bounds names {unknown[0]!r}, not a coordinate of 2D_gait.osim "
                                f"(coordinates: {', '.join(names)})")
    lower = np.array([bounds[n][0] for n in names])
    upper = np.array([bounds[n][1] for n in names])
    initial_lower, initial_upper = lower.copy(), upper.copy()
    tx = model.coordinate_index("pelvis_tx")
    initial_lower[tx] = initial_upper[tx] = 0.0
    muscles = model.musculoskeletal
    activation_bounds = (muscles.min_activations, muscles.max_activations)
    built = muscle_driven_problem(
        muscles, duration,
        coordinates=StateBounds((lower, upper), initial=(initial_lower, initial_upper)),
        speeds=StateBounds(MOCO_SPEED_BOUNDS),
        activations=StateBounds(activation_bounds),
        excitation_bounds=activation_bounds,
        activation_smoothing=model.activation_smoothing,
        dynamics=ImplicitDynamics(max_acceleration=MAX_ACCELERATION),
        external_wrenches=lambda problem, q, u: model.contact_loads(q, u)[0],
        scales=VariableScales(speeds=5.0, actuator_controls=10.0, accelerations=50.0),
        labels=VariableLabels(
            coordinates=tuple(coordinate_path(n) for n in names),
            speeds=tuple(coordinate_path(n, "speed") for n in names),
            activations=tuple(f"/{n}/activation" for n in model.muscle_names),
            excitations=tuple(f"/{n}" for n in model.muscle_names),
            actuator_controls=(f"/{model.lumbar_actuator.name}",),
            accelerations=tuple(coordinate_path(n, "accel") for n in names)))
    _symmetry(built, model, mirror_excitations)
    return built


def _symmetry(built: MuscleDrivenProblem, model: GaitModel, mirror_excitations: bool) -> None:
    """State at tf = mirrored state at t0 (pelvis_tx value excluded); the lumbar control repeats.

    With ``mirror_excitations`` the excitations at tf also equal the mirrored excitations at t0.
    """
    problem, q, u, a = built.problem, built.q, built.u, built.activations
    mirror = model.mirror
    keep = [i for i, n in enumerate(model.coordinate_names) if n != "pelvis_tx"]
    mirrored_q = ca.mtimes(ca.DM(mirror.coordinates), q)
    problem.require(problem.final(q[keep]) - problem.initial(mirrored_q[keep]), equals=0.0, name="symmetry q",
                    labels=[f"symmetry {model.coordinate_names[i]}" for i in keep])
    problem.require(problem.final(u) - problem.initial(ca.mtimes(ca.DM(mirror.coordinates), u)), equals=0.0,
                    name="symmetry u", labels=[f"symmetry speed {n}" for n in model.coordinate_names])
    problem.require(problem.final(a) - problem.initial(ca.mtimes(ca.DM(mirror.muscles), a)), equals=0.0,
                    name="symmetry activations", labels=[f"symmetry {n}" for n in model.muscle_names])
    lumbar = built.actuator_controls
    problem.require(problem.final(lumbar) - problem.initial(lumbar), equals=0.0, name="symmetry lumbar control")
    if mirror_excitations:
        e = built.excitations
        problem.require(problem.final(e) - problem.initial(ca.mtimes(ca.DM(mirror.muscles), e)), equals=0.0,
                        name="symmetry excitations", labels=[f"symmetry {n} excitation" for n in model.muscle_names])


def displacement_expression(gait: GaitProblem) -> ca.SX:
    """pelvis_tx(tf) - pelvis_tx(t0), an endpoint expression."""
    tx = gait.muscle_driven.q[gait.model.coordinate_index("pelvis_tx")]
    return gait.problem.final(tx) - gait.problem.initial(tx)


def build_problem(intervals: int = 50, speed: float = 1.2, model: GaitModel | None = None,
                  duration=Free(0.4, 0.6), mirror_excitations: bool = False,
                  coordinate_bounds: dict | None = None) -> GaitProblem:
    """The predictive half gait cycle (see the module docstring) on `intervals` mesh intervals.

    ``mirror_excitations`` also maps the excitations left<->right at the end (Moco's example leaves them free).
    ``coordinate_bounds`` ({name: (lower, upper)}) replaces Moco's bounds of those coordinates (a speed sweep
    widens pelvis_tx: Moco's [0, 1] m caps the half-cycle displacement, i.e. speed * final time).
    """
    model = model if model is not None else GaitModel.load()
    built = _declare(model, duration, mirror_excitations, coordinate_bounds)
    problem = built.problem
    gait = GaitProblem(problem, model, built, float(speed), int(intervals))
    displacement = displacement_expression(gait)
    problem.require(displacement - speed * problem.final(problem.time), equals=0.0, name="average speed")
    controls = ca.vertcat(built.excitations, built.actuator_controls)
    problem.minimize(EFFORT_WEIGHT * Effort(controls, power=3, per_distance=displacement))
    return gait


def build_tracking_problem(intervals: int = 24, model: GaitModel | None = None, grf_weight: float = 1.0,
                           duration: float = MOCO_TRACKING_FINAL_TIME) -> GaitProblem:
    """Track referenceCoordinates.sto and referenceGRF.sto (vertical and fore-aft forces) with effort."""
    model = model if model is not None else GaitModel.load()
    built = _declare(model, duration)
    problem = built.problem
    gait = GaitProblem(problem, model, built, None, int(intervals))
    motion = read_motion(REFERENCE_COORDINATES, coordinates=model.coordinate_names)
    problem.minimize(10.0 * Tracking(built.q, motion.time, motion.data))
    grf = read_table(REFERENCE_GRF)
    labels = ["ground_force_r_vx", "ground_force_r_vy", "ground_force_l_vx", "ground_force_l_vy"]
    right, left = gait.ground_reactions()
    body_weight = model.multibody_weight
    forces = ca.vertcat(right[0], right[1], left[0], left[1]) / body_weight
    reference = np.column_stack([grf.column(label) for label in labels]) / body_weight
    problem.minimize(grf_weight * Tracking(forces, grf.time, reference))
    problem.minimize(10.0 * Integral(ca.sumsqr(built.excitations)))
    problem.minimize(1e-4 * Integral(built.actuator_controls ** 2))
    return gait
