"""Predictive and tracking 2D gait on 2D_gait.osim: the problems of Moco's example2DWalking.

Half a gait cycle (t0 = 0, tf free in [0.4, 0.6] s) built by ``trajopt.studies.prediction.muscle_driven_problem``
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
from trajopt.model.io.motion import read_motion
from trajopt.model.io.motion_processor import MotionProcessor
from trajopt.studies.gait.guess import guess_from_coordinates
from trajopt.studies.gait.study import GaitBounds, half_gait_cycle
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.tracking import TrackingWeights
from trajopt.studies.gait.walking import displacement, require_average_speed
from trajopt.core.ocp import Effort, Free, Guess, HermiteSimpson, Problem
from trajopt.studies.prediction import MuscleDrivenProblem, VariableScales
from trajopt.studies.prediction.tendon_dynamics import (
    PREDSIM_DERIVATIVE_BOUNDS,
    PREDSIM_DERIVATIVE_SCALE,
    PREDSIM_DERIVATIVE_WEIGHT,
    ElasticTendons,
    RigidTendons,
)

from trajopt.examples.gait2d.model import HERE, GaitModel

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

# Compliant tendons as PredSim (Falisse et al. 2019) sets their implicit dynamics: df̃T/dt in [-100, 100] 1/s scaled
# by 100, weight 1e-7 on its square (trajopt.studies.prediction.tendon_dynamics); each muscle keeps 2D_gait.osim's
# tendon strain 0.049.
ELASTIC_TENDONS = ElasticTendons(derivative_bounds=PREDSIM_DERIVATIVE_BOUNDS,
                                 derivative_weight=PREDSIM_DERIVATIVE_WEIGHT, derivative_scale=PREDSIM_DERIVATIVE_SCALE)


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
        motion = read_motion(coordinates, coordinates=self.model.coordinate_names)
        return guess_from_coordinates(self.muscle_driven, motion.time, motion.data)

    def ground_reactions(self):
        """(right force, left force) SX expressions (3 each, ground axes) on the problem's symbols."""
        right, left, _, _ = self.model.ground_reactions(self.muscle_driven.q, self.muscle_driven.u)
        return right, left


def _declare(model: GaitModel, duration, mirror_excitations: bool = False,
             coordinate_bounds: dict | None = None, tendons=RigidTendons()) -> MuscleDrivenProblem:
    """Moco's bounds on the library's half gait cycle (implicit dynamics, foot contacts, symmetric ends).

    ``coordinate_bounds`` replaces Moco's bounds of the coordinates it names (radians, metres).
    """
    unknown = sorted(set(coordinate_bounds or {}) - set(model.coordinate_names))
    if unknown:
        raise TrajoptInputError(f"gait2d: coordinate_bounds names {unknown[0]!r}, not a coordinate of 2D_gait.osim "
                                f"(coordinates: {', '.join(model.coordinate_names)})")
    walk = half_gait_cycle(
        model.musculoskeletal, model.contacts, duration=duration, symmetry=model.symmetry,
        bounds=GaitBounds({**MOCO_STATE_BOUNDS, **(coordinate_bounds or {})}, MOCO_SPEED_BOUNDS, MAX_ACCELERATION),
        scales=VariableScales(speeds=5.0, actuator_controls=10.0, accelerations=50.0),
        activation_smoothing=model.activation_smoothing, mirror_excitations=mirror_excitations,
        tendons=tendons)
    return walk.muscle_driven


def displacement_expression(gait: GaitProblem) -> ca.SX:
    """pelvis_tx(tf) - pelvis_tx(t0), an endpoint expression."""
    return displacement(gait.muscle_driven, "pelvis_tx")


def build_problem(intervals: int = 50, speed: float = 1.2, model: GaitModel | None = None,
                  duration=Free(0.4, 0.6), mirror_excitations: bool = False,
                  coordinate_bounds: dict | None = None, tendons=RigidTendons()) -> GaitProblem:
    """The predictive half gait cycle (see the module docstring) on `intervals` mesh intervals.

    ``mirror_excitations`` also maps the excitations left<->right at the end (Moco's example leaves them free).
    ``coordinate_bounds`` ({name: (lower, upper)}) replaces Moco's bounds of those coordinates (a speed sweep
    widens pelvis_tx: Moco's [0, 1] m caps the half-cycle displacement, i.e. speed * final time).
    ``tendons``: ``RigidTendons()`` (Moco's example) or e.g. ``ELASTIC_TENDONS`` (tendon-force states, their
    end values mirrored like the activations).
    """
    model = model if model is not None else GaitModel.load()
    built = _declare(model, duration, mirror_excitations, coordinate_bounds, tendons)
    problem = built.problem
    gait = GaitProblem(problem, model, built, float(speed), int(intervals))
    distance = require_average_speed(built, "pelvis_tx", speed)
    controls = ca.vertcat(built.excitations, built.actuator_controls)
    problem.minimize(EFFORT_WEIGHT * Effort(controls, power=3, per_distance=distance))
    return gait


def tracking_study(model: GaitModel | None = None, grf_weight: float = 1.0,
                   duration: float = MOCO_TRACKING_FINAL_TIME, cutoff_frequency: float | None = None,
                   **options) -> MuscleDrivenTracking:
    """Moco's example2DWalking tracking step as a ``MuscleDrivenTracking``: referenceCoordinates.sto and the
    vertical and fore-aft forces of referenceGRF.sto over (0, duration), mirrored ends, Moco's bounds, pelvis_tx(0) = 0;
    ``cutoff_frequency`` low-pass filters the coordinates; ``options`` replace the study's other fields (e.g.
    ``weights``, ``grf_normalization``)."""
    model = model if model is not None else GaitModel.load()
    fields = {"contacts": model.contacts, "ground_reactions": REFERENCE_GRF, "grf_axes": ("x", "y"),
              "weights": TrackingWeights(ground_reactions=grf_weight, speeds=0.0),
              "bounds": GaitBounds(MOCO_STATE_BOUNDS, MOCO_SPEED_BOUNDS, MAX_ACCELERATION),
              "scales": VariableScales(speeds=5.0, actuator_controls=10.0, accelerations=50.0),
              "symmetry": model.symmetry, "start_at_zero": "pelvis_tx",
              "activation_smoothing": model.activation_smoothing}
    motion = MotionProcessor(REFERENCE_COORDINATES, cutoff_frequency=cutoff_frequency, window=(0.0, float(duration)))
    return MuscleDrivenTracking(model.musculoskeletal, motion, **{**fields, **options})


def moco_tracking_study(model: GaitModel | None = None) -> MuscleDrivenTracking:
    """example2DWalking's MocoTrack objective term for term: coordinates (low-pass 6 Hz) and their splined speeds
    with weight 1, effort weight 10 on every control (excitations and the lumbar actuator), contact tracking weight 1
    divided by m g once (MocoContactTrackingGoal), pelvis_tx(0) free as Moco leaves it. Solve with
    ``HermiteSimpson(24, interpolate_control_midpoints=True)`` for Moco's transcription of the controls."""
    model = model if model is not None else GaitModel.load()
    weights = TrackingWeights(coordinates=1.0, speeds=1.0, ground_reactions=1.0, excitations=10.0,
                              actuator_controls=10.0)
    return tracking_study(model, weights=weights, cutoff_frequency=6.0, start_at_zero=None,
                          grf_normalization=float(np.sqrt(model.multibody_weight)))


def build_tracking_problem(intervals: int = 24, model: GaitModel | None = None, grf_weight: float = 1.0,
                           duration: float = MOCO_TRACKING_FINAL_TIME) -> GaitProblem:
    """Track referenceCoordinates.sto and referenceGRF.sto (vertical and fore-aft forces) with effort
    (``tracking_study``; speeds not tracked)."""
    model = model if model is not None else GaitModel.load()
    built = tracking_study(model, grf_weight, duration).build().muscle_driven
    return GaitProblem(built.problem, model, built, None, int(intervals))
