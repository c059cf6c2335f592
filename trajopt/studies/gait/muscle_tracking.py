"""Muscle-driven tracking of measured walking with foot contact, for any model: OpenSim Moco's ``MocoTrack``.

``MuscleDrivenTracking(model, motion, ...)`` is the problem (what), ``solve(transcription, solver, guess)`` its
solution (how); nothing is written. Over a window (t0, t1) of the measured coordinates (a full gait cycle, half a
cycle, a step: any window; the ends are free unless ``symmetry`` asks for a mirrored half cycle):

- the gait study's muscle-driven problem (``trajopt.studies.gait.study.walking_problem``): states q, u, activations;
  controls excitations and the model's coordinate-actuator controls; implicit multibody dynamics with the wrenches
  of the model's sphere contacts and the optional ``passive`` generalized forces; OpenSim labels;
- goals (``trajopt.studies.gait.tracking.track``): the coordinates of the file, their speeds from the splined
  coordinates (MocoTrack's ``track_reference_position_derivatives``: natural quintic splines of
  ``trajopt.model.io.signals``, after an optional low-pass filter as Moco's ``TabOpLowPassFilter``), the measured ground
  reactions through the contact forces (per foot, divided by the body weight), excitation effort, EMG, actuator
  controls, and the study's extra ``goals`` (e.g. Moco's joint reaction goal);
- residual actuators on the coordinates of the joints attached to ground (the pelvis): none unless
  ``residuals=Residuals(..., coordinates=ResidualCoordinates.GROUND)`` asks for them, with their own weight in the
  objective.

Files or objects: ``motion``, ``ground_reactions`` and ``emg`` are ``Table`` objects or paths to .sto/.mot
files (coordinates in degrees are converted as their header says); ``motion`` may also be a ``MotionProcessor``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.model.paths.domain_report import PathDomainReport
from trajopt.studies.analysis.muscle_inverse import mesh_intervals
from trajopt.model.contact import contact_loads_function, osim_contacts
from trajopt.errors import TrajoptInputError, first_names
from trajopt.studies.gait.ground_reactions import foot_ground_reactions
from trajopt.studies.gait.guess import guess_from_coordinates
from trajopt.studies.gait.study import GaitBounds, walking_problem
from trajopt.studies.gait.symmetry import BilateralSymmetry, require_symmetric_ends
from trajopt.studies.gait.tracking import GroundReactionReference, ReferenceInterpolation, TrackingWeights, track
from trajopt.model.io.motion_processor import motion_processor
from trajopt.model.io.motion_units import check_normalized_emg
from trajopt.model.io.signals import lowpass_table, natural_spline
from trajopt.model.io.tables import read_table
from trajopt.core.multibody.bodies import GROUND
from trajopt.core.ocp import HermiteSimpson, Integral, Ipopt, ResidualCoordinates, Residuals
from trajopt.core.ocp.solution import SolveStatus
from trajopt.core.ocp.transcriptions import MOCO_MESH_INTERVAL
from trajopt.studies.prediction import (
    OPENSIM_ACTIVATION_SMOOTHING,
    MuscleDrivenProblem,
    VariableScales,
)
from trajopt.studies.prediction.tendon_dynamics import RigidTendons
from trajopt.table import Table

GRF_LABEL = "ground_force_{side}_v{axis}"  # OpenSim's gait GRF columns (createExternalLoadsTableForGait)
SIDES = ("r", "l")
_EDGE = 1e-9  # s: a reference that ends this close to the window still covers it


def ground_coordinates(multibody) -> tuple[int, ...]:
    """Indices in u of the speeds of the joints whose parent is ground."""
    indices = []
    for joint in multibody.joints:
        if joint.parent.body == GROUND:
            indices += list(range(multibody.v_slice(joint.name).start, multibody.v_slice(joint.name).stop))
    return tuple(indices)


def _table(given, read) -> Table:
    """A ``Table`` as given, or read from its file."""
    return given if isinstance(given, Table) else read(Path(given))


def _check_covers(table: Table, window: tuple[float, float], what: str) -> None:
    first, last = float(table.time[0]), float(table.time[-1])
    if first > window[0] + _EDGE or last < window[1] - _EDGE:
        raise TrajoptInputError(f"{table.source or what}: {what} cover {first:g}-{last:g} s, not the tracked window "
                                f"{window[0]:g}-{window[1]:g} s")


def _in_window(table: Table, window, times=None) -> Table:
    """``table`` on the frames inside ``window`` plus its ends (linear interpolation), or at ``times``."""
    if times is None:
        inside = table.time[(table.time > window[0] + _EDGE) & (table.time < window[1] - _EDGE)]
        times = np.concatenate([[window[0]], inside, [window[1]]])
    data = np.column_stack([np.interp(times, table.time, table.data[:, k]) for k in range(len(table.labels))])
    return Table(times, table.labels, data, False, table.name, table.metadata, table.source)


def _moco_frames(motion: Table, cutoff_frequency: float | None, speed_names) -> tuple[Table, Table]:
    """MocoTrack's tracked frames: the motion (low-pass filtered as TabOpLowPassFilter when a cutoff is set) and, for
    its columns that are speeds of the model, the derivatives of the natural quintic splines through it."""
    frames = motion if cutoff_frequency is None else lowpass_table(motion, cutoff_frequency)
    columns = [k for k, name in enumerate(frames.labels) if name in tuple(speed_names)]
    derivatives = natural_spline(frames.time, frames.data)(frames.time, nu=1)[:, columns]
    return frames, Table(frames.time, tuple(frames.labels[k] for k in columns), derivatives, False, "reference_speeds")


def rms(times, error) -> np.ndarray:
    """Root mean square over time (trapezoidal) of ``error`` (frames x columns): sqrt(∫ e² dt / T)."""
    error = np.atleast_2d(np.asarray(error, dtype=float).T).T
    duration = times[-1] - times[0]
    return np.sqrt(np.trapezoid(error ** 2, times, axis=0) / duration)


@dataclass(frozen=True, eq=False)
class MuscleDrivenTracking:
    """MocoTrack with foot contact (module docstring).

    ``model``: a ``MusculoskeletalModel`` (an .osim with paths, after its operators); ``motion``: the tracked
    coordinates (file, radians ``Table`` or ``MotionProcessor``: low-pass filter before splining; window (t0, t1) s,
    default the motion's span), columns that are coordinates of the model (``.../speed`` columns are ignored: the
    speeds come from the splines); ``contacts``: the sphere contacts (default the model's SmoothSphereHalfSpaceForces);
    ``ground_reactions``: measured ground reactions (file or ``Table``) with columns ``ground_force_{r,l}_v{x,y,z}``
    for ``grf_axes``, tracked through the contacts of each foot, divided by ``grf_normalization`` (default the body
    weight m g; sqrt(m g) is Moco's MocoContactTrackingGoal); ``emg``: normalized EMG whose columns named after
    muscles are tracked by their excitations; ``mesh_interval`` (s) sets the default transcription;
    ``passive(q, u)``: generalized forces beside muscles and actuators; ``residuals``: ``trajopt.core.ocp.Residuals``
    (on every coordinate or those of the ground's joints) or None;
    ``symmetry``: a ``BilateralSymmetry`` to make the window a half gait cycle with mirrored ends (``progression``
    excluded), or None (free ends); ``start_at_zero``: a coordinate fixed to 0 at t0 (e.g. the walking direction's
    translation of a half cycle that starts there), or None; ``quaternion_norm_stabilization`` (1/s): as the gait
    study's, for a model with a quaternion joint (whose components are then tracked as coordinates); ``tendons``:
    ``RigidTendons()`` or ``ElasticTendons(...)`` (``trajopt.studies.prediction.tendon_dynamics``: compliant tendons
    with implicit normalized tendon-force states, started in fiber-tendon equilibrium by the guess);
    ``reference_interpolation``: ``ReferenceInterpolation.LINEAR`` tracks the splined (filtered) coordinates and
    their derivatives at the motion's frames in the window, linearly in between; ``QUINTIC_SPLINES`` tracks them as
    MocoTrack does: the motion low-pass filtered as ``TabOpLowPassFilter`` (``trajopt.model.io.signals.lowpass_table``),
    speeds the derivatives of the natural quintic splines through its frames at those frames, and values and speeds
    each on natural quintic splines through their frames at the collocation times (``MocoStateTrackingGoal``), and
    the ground reactions on natural quintic splines through theirs (``MocoContactTrackingGoal``);
    ``goals``: extra goals added to the tracking objective, objects with ``motion_goal(MuscleDrivenProblem)`` (e.g.
    ``trajopt.studies.analysis.reaction_goal.JointReactionGoal``, Moco's MocoJointReactionGoal, contact forces included;
    ``trajopt.studies.analysis.inverse_goals.EmgTracking``).
    """

    model: object
    motion: object
    contacts: tuple | None = None
    ground_reactions: object = None
    grf_axes: tuple[str, ...] = ("x", "y", "z")
    grf_normalization: float | None = None
    emg: object = None
    weights: TrackingWeights = TrackingWeights()
    mesh_interval: float = MOCO_MESH_INTERVAL
    bounds: GaitBounds = GaitBounds()
    passive: ca.Function | None = None
    residuals: Residuals | None = None
    symmetry: BilateralSymmetry | None = None
    progression: str = "pelvis_tx"
    start_at_zero: str | None = None
    scales: VariableScales = VariableScales(speeds=5.0, accelerations=50.0)
    activation_smoothing: float = OPENSIM_ACTIVATION_SMOOTHING
    quaternion_norm_stabilization: float = 0.0
    tendons: object = RigidTendons()
    reference_interpolation: ReferenceInterpolation = ReferenceInterpolation.LINEAR
    goals: tuple = ()

    def __post_init__(self):
        if type(self.reference_interpolation) is not ReferenceInterpolation:
            raise TrajoptInputError(f"muscle-driven tracking: reference_interpolation must be a ReferenceInterpolation "
                                    f"(LINEAR or QUINTIC_SPLINES), got {self.reference_interpolation!r}")
        if self.residuals is not None:
            self.residuals.require("muscle-driven tracking", mapped=False)
        model = self.model
        names = tuple(model.coordinate_names)
        processor = motion_processor(self.motion)
        motion = processor.table(model.rotational_coordinates)
        unknown = [label for label in motion.labels if label not in names and not label.endswith("/speed")]
        if unknown:
            raise TrajoptInputError(f"{motion.source or 'coordinates table'}: columns {first_names(unknown, 4)} are "
                                    f"not coordinates of "
                                    f"the model (coordinates: {', '.join(names)})")
        tracked = tuple(label for label in motion.labels if label in names)
        if not tracked:
            raise TrajoptInputError(f"{motion.source or 'coordinates table'}: no column names a coordinate of the "
                                    f"model (coordinates: {', '.join(names)})")
        motion = motion.select(tracked)
        window = processor.time_range(motion)
        _check_covers(motion, window, "coordinates")
        mesh_intervals(window[1] - window[0], self.mesh_interval)  # refuses <= 0 s or < 4 intervals
        grf = None
        if self.ground_reactions is not None:
            grf = _table(self.ground_reactions, read_table)
            needed = [GRF_LABEL.format(side=s, axis=a) for s in SIDES for a in self.grf_axes]
            missing = [label for label in needed if label not in grf.labels]
            if missing:
                raise TrajoptInputError(f"{grf.source or 'ground reactions table'}: no column {missing[0]} (the "
                                        f"tracked forces are {', '.join(needed)})")
            _check_covers(grf, window, "ground reactions")
        contacts = osim_contacts(model.osim) if self.contacts is None else tuple(self.contacts)
        if grf is not None and not contacts:
            raise TrajoptInputError("ground reaction tracking: the model has no sphere contacts to produce them")
        emg = None
        if self.emg is not None:
            table = _table(self.emg, read_table)
            columns = tuple(label for label in table.labels if label in model.muscle_names)
            if not columns:
                raise TrajoptInputError(f"{table.source or 'EMG table'}: no column is named after a muscle of the "
                                        f"model (columns: {', '.join(table.labels)})")
            _check_covers(table, window, "EMG")
            check_normalized_emg(table, columns)
            emg = table.select(columns)
        object.__setattr__(self, "_motion", motion)
        object.__setattr__(self, "_window", window)
        object.__setattr__(self, "_grf", grf)
        object.__setattr__(self, "_emg", emg)
        object.__setattr__(self, "_contacts", contacts)
        object.__setattr__(self, "_filtered", processor.cutoff_frequency is not None)
        object.__setattr__(self, "_splines", processor.splines(motion))
        object.__setattr__(self, "_moco_frames", _moco_frames(motion, processor.cutoff_frequency, model.speed_names)
                           if self.reference_interpolation is ReferenceInterpolation.QUINTIC_SPLINES else None)

    # -- what is tracked -------------------------------------------------------------------------------------------
    @property
    def initial_time(self) -> float:
        return self._window[0]

    @property
    def final_time(self) -> float:
        return self._window[1]

    @property
    def duration(self) -> float:
        return self._window[1] - self._window[0]

    @property
    def tracked_coordinates(self) -> tuple[str, ...]:
        return tuple(self._motion.labels)

    @property
    def body_weight(self) -> float:
        """m g (N): the ground reactions' normalization."""
        mb = self.model.multibody
        return float(sum(body.mass for body in mb.bodies) * np.linalg.norm(mb.gravity))

    def reference_times(self) -> np.ndarray:
        times = self._motion.time
        inside = times[(times > self._window[0] + _EDGE) & (times < self._window[1] - _EDGE)]
        return np.concatenate([[self._window[0]], inside, [self._window[1]]])

    def reference_coordinates(self, times=None) -> Table:
        """The tracked coordinates at ``times`` (default the motion's frames in the window and its ends): the splines
        (through the filtered motion when the processor filters, through MocoTrack's frames with
        ``QUINTIC_SPLINES``); the motion's own frames when unfiltered and ``LINEAR``."""
        if times is None and not self._filtered and self._moco_frames is None:
            return _in_window(self._motion, self._window)
        times = self.reference_times() if times is None else np.asarray(times, dtype=float)
        values = self._splines.evaluate(times, 0) if self._moco_frames is None else \
            natural_spline(self._moco_frames[0].time, self._moco_frames[0].data)(times)
        return Table(times, self.tracked_coordinates, values, False, "reference_coordinates")

    def reference_speeds(self, times=None) -> Table:
        """The splines' derivatives for the tracked coordinates that are also speeds of the model."""
        times = self.reference_times() if times is None else np.asarray(times, dtype=float)
        if self._moco_frames is not None:
            frames = self._moco_frames[1]
            return Table(times, frames.labels, natural_spline(frames.time, frames.data)(times), False,
                         "reference_speeds")
        speeds = tuple(self.model.speed_names)
        columns = [k for k, name in enumerate(self.tracked_coordinates) if name in speeds]
        return Table(times, tuple(self.tracked_coordinates[k] for k in columns),
                     self._splines.evaluate(times, 1)[:, columns], False, "reference_speeds")

    def tracked_frames(self) -> tuple[Table, Table]:
        """The coordinates and speeds at the frames the state tracking goals follow (``reference_interpolation``
        between them; no speed columns when none is tracked)."""
        return (self.reference_coordinates(), self.reference_speeds()) if self._moco_frames is None \
            else self._moco_frames

    def ground_reaction_function(self) -> ca.Function:
        """``ground_reactions(q, u) -> (right_force, left_force, right_torque, left_torque)`` of the contacts."""
        return foot_ground_reactions(self.model.multibody, self._contacts)

    def measured_ground_reactions(self, times=None) -> Table | None:
        """The tracked columns of the measured ground reactions over the window (None without them)."""
        if self._grf is None:
            return None
        labels = tuple(GRF_LABEL.format(side=s, axis=a) for s in SIDES for a in self.grf_axes)
        window = self._grf.select(labels)
        return _in_window(window, self._window, times)

    # -- the optimal-control problem -------------------------------------------------------------------------------
    def build(self) -> TrackingProblem:
        """The muscle-driven problem with the tracking goals (free of any transcription)."""
        model, multibody = self.model, self.model.multibody
        contact_loads = contact_loads_function(multibody, self._contacts)
        residual_rows = () if self.residuals is None else ground_coordinates(multibody) \
            if self.residuals.coordinates is ResidualCoordinates.GROUND else tuple(range(multibody.nv))
        holder = {}

        def generalized_forces(problem, q, u):
            forces = ca.SX.zeros(multibody.nv)
            if self.passive is not None:
                forces = forces + self.passive(q, u)
            if residual_rows:
                names = [multibody.speed_names[i] for i in residual_rows]
                r = problem.control("residuals", len(residual_rows), guess=0.0,
                                    bounds=(-self.residuals.max_control, self.residuals.max_control),
                                    labels=tuple(f"/forceset/residual_{n}" for n in names))
                for k, row in enumerate(residual_rows):
                    forces[row] = forces[row] + self.residuals.optimal_force * r[k]
                holder["residuals"] = r
            return forces

        hook = generalized_forces if (self.passive is not None or residual_rows) else None
        built = walking_problem(model, contact_loads, duration=self.duration, bounds=self.bounds,
                                generalized_forces=hook, initial_time=self.initial_time, scales=self.scales,
                                start_at_zero=self.start_at_zero,
                                activation_smoothing=self.activation_smoothing,
                                quaternion_norm_stabilization=self.quaternion_norm_stabilization,
                                tendons=self.tendons)
        if self.symmetry is not None:
            require_symmetric_ends(built, self.symmetry, exclude=(self.progression,))
        grf = None
        if self._grf is not None:
            normalization = self.body_weight if self.grf_normalization is None else self.grf_normalization
            grf = GroundReactionReference(self.measured_ground_reactions(), self.ground_reaction_function(),
                                          normalization, axes=tuple(self.grf_axes), label=GRF_LABEL)
        coordinates, speeds = self.tracked_frames()
        emg = None if self._emg is None else _in_window(self._emg, self._window)
        track(built, coordinates, grf, self.weights, speeds=speeds if speeds.labels else None, emg=emg,
              interpolation=self.reference_interpolation)
        for goal in self.goals:
            built.problem.minimize(goal.motion_goal(built))
        residuals = holder.get("residuals")
        if residuals is not None and self.residuals.weight:
            built.problem.minimize(self.residuals.weight * Integral(ca.sumsqr(residuals)))
        return TrackingProblem(self, built, residuals)

    def transcription(self) -> HermiteSimpson:
        """Hermite-Simpson with ``mesh_interval`` (Moco's number of intervals: ceil(duration / mesh_interval))."""
        return HermiteSimpson(mesh_intervals(self.duration, self.mesh_interval))

    def guess(self, built: MuscleDrivenProblem, activations: Table | None = None):
        """MocoTrack's ``apply_tracked_states_to_guess``: the tracked coordinates (others at their default), speeds
        by finite differences, activations and excitations 0.05, actuator controls and residuals 0.
        ``activations``: a table with a column per muscle of the model (e.g. a muscle inverse's solution of the
        same motion), interpolated in time, for the activations and excitations instead of 0.05."""
        times = self.reference_times()
        level = 0.05
        if activations is not None:
            missing = [name for name in self.model.muscle_names if name not in activations.labels]
            if missing:
                raise TrajoptInputError(f"tracking guess: the activations table has no column {missing[0]!r}")
            level = np.column_stack([np.interp(times, activations.time, activations.column(name))
                                     for name in self.model.muscle_names])
        multibody = self.model.multibody
        q = np.tile(multibody.default_q(), (times.size, 1))
        reference = self.reference_coordinates(times)
        names = tuple(self.model.coordinate_names)
        for k, name in enumerate(reference.labels):
            q[:, names.index(name)] = reference.data[:, k]
        return guess_from_coordinates(built, times, q, level)

    def solve(self, transcription=None, solver: Ipopt | None = None, guess=None,
              built: TrackingProblem | None = None) -> MuscleTrackingResult:
        """Solve on ``transcription`` (default ``self.transcription()``) from ``guess`` (default ``self.guess``);
        ``built``: the problem of ``self.build()`` when the caller built it already (e.g. to make the guess)."""
        transcription = self.transcription() if transcription is None else transcription
        solver = Ipopt(tol=1e-4, print_level=5, options={"constr_viol_tol": 1e-4}) if solver is None else solver
        problem = self.build() if built is None else built
        guess = self.guess(problem.muscle_driven) if guess is None else guess
        solution = problem.muscle_driven.problem.solve(transcription, solver, guess=guess)
        return MuscleTrackingResult(problem, solution)


@dataclass(frozen=True, eq=False)
class TrackingProblem:
    """A built tracking study: its muscle-driven problem and the residual controls (None when off)."""

    study: MuscleDrivenTracking
    muscle_driven: MuscleDrivenProblem
    residuals: ca.SX | None

    @property
    def problem(self):
        return self.muscle_driven.problem


@dataclass(frozen=True, eq=False)
class MuscleTrackingResult(SolveStatus):
    """A solved tracking study: the ``ocp`` solution and what it tracked, evaluated on the solution's grid."""

    tracking: TrackingProblem
    solution: object

    @property
    def study(self) -> MuscleDrivenTracking:
        return self.tracking.study

    @property
    def time(self) -> np.ndarray:
        return np.asarray(self.solution.time)

    def path_domain_report(self) -> PathDomainReport:
        """The solution against the muscle paths' domain (frames outside, worst coordinate, by how much)."""
        return self.tracking.muscle_driven.path_domain_report(self.solution)

    def table(self) -> Table:
        """States, controls and accelerations on the grid with OpenSim's labels (``Solution.table``)."""
        return self.solution.table()

    def _value(self, symbol) -> np.ndarray:
        return np.atleast_2d(np.asarray(self.solution.value(symbol), dtype=float)).reshape(symbol.numel(), -1).T

    def activations(self) -> Table:
        built = self.tracking.muscle_driven
        labels = tuple(self.study.model.muscle_names)
        return Table(self.time, labels, self._value(built.activations), False, "activations")

    def coordinate_errors(self) -> dict[str, float]:
        """RMS over time of (solution - reference) per tracked coordinate (rad or m) on the solution's grid."""
        names = tuple(self.study.model.coordinate_names)
        reference = self.study.reference_coordinates(self.time)
        q = self._value(self.tracking.muscle_driven.q)
        rows = [names.index(label) for label in reference.labels]
        return dict(zip(reference.labels, rms(self.time, q[:, rows] - reference.data).tolist()))

    def ground_reactions(self) -> Table | None:
        """The contacts' ground reactions per foot at the grid (columns as the tracked ones), None without GRFs."""
        measured = self.study.measured_ground_reactions(self.time)
        if measured is None:
            return None
        built = self.tracking.muscle_driven
        right, left = self.study.ground_reaction_function()(built.q, built.u)[0:2]
        index = {"x": 0, "y": 1, "z": 2}
        columns = [self._value(force[index[a]])[:, 0] for force in (right, left) for a in self.study.grf_axes]
        return Table(self.time, measured.labels, np.column_stack(columns), False, "ground_reactions")

    def ground_reaction_errors(self) -> dict[str, float]:
        """RMS over time of (contact - measured) per tracked ground-reaction component (N); empty without GRFs."""
        model = self.ground_reactions()
        if model is None:
            return {}
        measured = self.study.measured_ground_reactions(self.time)
        return dict(zip(model.labels, rms(self.time, model.data - measured.data).tolist()))
