"""Static optimization of a measured motion: muscle activations and residual actuators per frame.

At each frame, with moment arms R (muscles x speeds) from the muscle paths and inverse-dynamics
generalized forces τ:

    minimize   Σ aᵢᵖ + Σ wⱼ eⱼ²
    subject to Rᵀ (F0 + F1 ∘ a) + s ∘ e = τ,   a_min ≤ a ≤ a_max

(``trajopt.studies.analysis.frame_optimization``). Muscle force per unit activation F1:

- ``force_length_velocity=True``: the DeGroote rigid-tendon active force along the tendon,
  Fmax f̃L(l̃M) f̃V(ṽM) cos α, at the frame's fiber length and velocity;
- ``force_length_velocity=False``: Fmax, so activation = force / max isometric force.

F0 is the passive fiber force (and damping) along the tendon with ``passive_force=True``, else 0.

OpenSim's Static Optimization (StaticOptimizationTarget.cpp) overrides each muscle's force with
``activation * capacity``, capacity = ``calcInextensibleTendonActiveFiberForce(s, 1)`` or the max
isometric force (``use_muscle_physiology`` false): it never includes passive fiber force. Its
objective is Σ |x|ᵖ over muscles and reserves alike (reserve weight 1), its target accelerations
the derivative of a quintic spline through the speeds (``speed_spline_accelerations``). To
compare with OpenSim use ``passive_force=False``. For DeGrooteFregly2016Muscle, OpenSim's capacity is
the active fiber force along the fiber: it omits cos α, the pennation factor, and OpenSim applies that
force along the path. trajopt's default keeps cos α (the tendon force the muscle transmits);
``capacity_along_fiber=True`` reproduces OpenSim's choice (measured on arm26 with FLV and geometric paths: 2e-5
activation from OpenSim's over cylinders, 1.6e-3 with the ellipsoids; 0.0185 with the default, on the pennated
triceps; tests/test_wrapping_static_optimization.py).

Joint reactions: the result carries those of inverse dynamics without muscle forces
(``trajopt.studies.analysis.inverse_dynamics``; polynomial paths have no points of application).
``StaticOptimization.joint_reactions(result)`` applies the muscle forces along the muscles'
.osim paths (``trajopt.studies.analysis.joint_reactions``: OpenSim's wrapped paths over cylinders, spheres and
ellipsoids and tori, at the path and tangent points; muscles whose wrap objects are ignored are listed).
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.studies.analysis.external_loads_file import external_loads_from
from trajopt.studies.analysis.figures import plot_joint_reactions, plot_series
from trajopt.studies.analysis.frame_optimization import (DEFAULT_SOLVER, WARM_SOLVER, FrameGuess, FrameLoads, Frames,
                                                         optimize_frames)
from trajopt.studies.analysis.inverse_dynamics import (InverseDynamicsResult, processed_kinematics,
                                                       solve_inverse_dynamics)
from trajopt.studies.analysis.joint_reactions import muscle_joint_reactions
from trajopt.errors import TrajoptInputError
from trajopt.model.io import Table, motion_processor, write_sto
from trajopt.core.multibody import BodyAxes, ReactionAxes
from trajopt.model.musculoskeletal.model_forces import model_applied_forces
from trajopt.core.ocp import Ipopt, ResidualCoordinates, Residuals
from trajopt.model.musculoskeletal.operators import ground_coordinates


class StaticOptimizationWarning(UserWarning):
    """Some frames need large residual forces or saturated muscles: the muscles cannot produce the load."""


class ReserveKind(enum.Enum):
    """What a reserve actuator's force stands for: (what its reserves are, what their force means)."""

    RESIDUAL = ("residual loads on the ground joint's coordinates", "the motion and the external loads disagree")
    ALONE = ("reserves on coordinates no muscle crosses", "the reserve is the only actuator there")
    MUSCLES = ("reserves on coordinates muscles cross", "what the muscles could not produce")

    @property
    def label(self) -> str:
        return self.value[0]

    @property
    def meaning(self) -> str:
        return self.value[1]


@dataclass(frozen=True)
class StaticOptimizationResult:
    """Per-frame activations, forces, residuals, equality error and (muscle-free) joint reactions."""

    muscle_names: tuple[str, ...]
    coordinate_names: tuple[str, ...]
    activations: np.ndarray  # (frames, muscles)
    muscle_forces: np.ndarray  # (frames, muscles) tendon forces, N
    residual_controls: np.ndarray  # (frames, speeds)
    residual_forces: np.ndarray  # (frames, speeds) N·m or N
    equality_error: np.ndarray  # (frames, speeds) muscle + residual - inverse dynamics
    moment_arms: np.ndarray  # (frames, muscles, speeds)
    inverse_dynamics: InverseDynamicsResult
    success: bool
    status: str
    iterations: int
    solve_time: float
    frames_needing_residuals: tuple[int, ...]
    settings: dict

    @property
    def times(self) -> np.ndarray:
        return self.inverse_dynamics.times

    @property
    def reserve_names(self) -> tuple[str, ...]:
        return tuple(f"reserve_{c}" for c in self.coordinate_names)

    def activations_table(self) -> Table:
        """Muscle activations then reserve controls, as OpenSim's ``_StaticOptimization_activation.sto``."""
        return Table(self.times, self.muscle_names + self.reserve_names,
                     np.hstack([self.activations, self.residual_controls]), name="Static Optimization")

    def forces_table(self) -> Table:
        """Muscle forces then reserve forces, as OpenSim's ``_StaticOptimization_force.sto``."""
        return Table(self.times, self.muscle_names + self.reserve_names,
                     np.hstack([self.muscle_forces, self.residual_forces]), name="Static Optimization")

    def residuals_table(self) -> Table:
        return Table(self.times, self.reserve_names, self.residual_forces, name="Residual forces")

    def equality_error_table(self) -> Table:
        return Table(self.times, tuple(f"{c}_equality_error" for c in self.coordinate_names),
                     self.equality_error, name="Equality error")

    def write(self, folder, prefix: str = "static_optimization", figures: bool = False) -> list[Path]:
        """Activations, forces, residuals, equality error, ID forces and reactions as .sto (OpenSim reads them;
        ``trajopt.model.io.write_csv`` writes any table as CSV on demand); with ``figures``, PNGs of each in
        ``folder/figures``."""
        folder = Path(folder)
        written = []
        for name, table in (("activation", self.activations_table()), ("force", self.forces_table()),
                            ("residuals", self.residuals_table()), ("equality_error", self.equality_error_table())):
            written.append(write_sto(folder / f"{prefix}_{name}.sto", table))
        written += self.inverse_dynamics.write(folder, f"{prefix}_inverse_dynamics")
        if figures:
            written += self._figures(folder / "figures", prefix)
        return written

    def _figures(self, folder: Path, prefix: str) -> list[Path]:
        inverse = self.inverse_dynamics
        return [
            plot_series(folder / f"{prefix}_activations.png", "Activations", "activation", self.times,
                        self.muscle_names, self.activations),
            plot_series(folder / f"{prefix}_forces.png", "Muscle forces", "N", self.times, self.muscle_names,
                        self.muscle_forces),
            plot_series(folder / f"{prefix}_residuals.png", "Residual actuators", "N·m or N", self.times,
                        self.reserve_names, self.residual_forces),
            plot_series(folder / f"{prefix}_inverse_dynamics.png", "Inverse dynamics", "N·m or N", self.times,
                        inverse.generalized_force_labels, inverse.generalized_forces),
            plot_joint_reactions(folder / f"{prefix}_joint_reactions.png", inverse, inverse.joint_names,
                                 "Joint reactions from inverse dynamics (muscle forces not applied)"),
        ]


class StaticOptimization:
    """Static optimization (the problem: what) of ``motion`` for a ``MusculoskeletalModel``; ``solve(frames,
    solver)`` says how.

    ``motion``: a file, a radians ``Table`` or a ``MotionProcessor`` (low-pass filter, time window).
    ``external_loads``: an ExternalLoads .xml file or ``ExternalLoads`` applied in inverse dynamics (e.g. ground
    reactions). ``residuals``: the reserve actuators on every coordinate (``trajopt.core.ocp.Residuals``: optimal force,
    weight, ``warn_above``; unbounded).
    ``minimum_activation``: None uses each muscle's ``min_control`` (as OpenSim), a number sets all lower bounds.
    ``speed_spline_accelerations``: accelerations from a spline through the speeds, as OpenSim's Static
    Optimization (else the coordinates' splines' second derivative).
    ``constraints``: the model's couplers (``trajopt.studies.analysis.couplers.CouplerConstraints``): the dependent
    coordinates are assembled from the motion and the balance is written about the independent coordinates
    (Cᵀ τ with moment arms R C: the constraint forces drop out, as with their multipliers).
    """

    def __init__(
        self,
        model,
        motion,
        *,
        external_loads=None,
        residuals: Residuals = Residuals(),
        activation_exponent: float = 2.0,
        force_length_velocity: bool = True,
        passive_force: bool = True,
        capacity_along_fiber: bool = False,
        minimum_activation: float | None = None,
        speed_spline_accelerations: bool = True,
        constraints=None,
        applied_forces=None,
    ):
        if not (np.isfinite(activation_exponent) and activation_exponent >= 1):
            raise TrajoptInputError(f"activation_exponent must be >= 1, got {activation_exponent!r}")
        if not model.muscles:
            raise TrajoptInputError(f"{model.osim.spec.file}: static optimization shares the load among muscles and "
                                    f"model '{model.osim.name}' has none (its inverse dynamics: "
                                    f"trajopt.studies.analysis.inverse_dynamics.motion_inverse_dynamics)")
        residuals.require("static optimization", coordinates=(ResidualCoordinates.ALL,), bounded=False,
                          mapped=False)
        external_loads = external_loads_from(external_loads)
        processor = motion_processor(motion)
        self.model = model
        self.motion = processor
        self.residuals = residuals
        self.activation_exponent = float(activation_exponent)
        self.force_length_velocity = force_length_velocity
        self.passive_force = passive_force
        self.capacity_along_fiber = capacity_along_fiber
        self.minimum_activation = minimum_activation
        self.constraints = constraints if constraints is not None and constraints.count else None
        kinematics = processed_kinematics(processor, model.coordinate_names, model.rotational_coordinates,
                                          speed_spline_accelerations,
                                          None if self.constraints is None else self.constraints.assemble)
        if applied_forces is None:
            applied_forces = model_applied_forces(model.osim)
        self.inverse_dynamics = solve_inverse_dynamics(model.multibody, kinematics, model.rotational_coordinates,
                                                       external_loads=external_loads, applied_forces=applied_forces)
        # Paths are never extrapolated: a frame outside their domain is an error (refit them for the motion
        # with trajopt.model.paths.refit.paths_for_motion).
        model.check_path_domain(kinematics.q, kinematics.times, kinematics.source or processor.where)

    def activation_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        lower = self.model.min_activations if self.minimum_activation is None else \
            np.full(len(self.model.muscles), float(self.minimum_activation))
        return lower, self.model.max_activations

    def frame_loads(self) -> FrameLoads:
        """Moment arms, muscle force terms and ID forces at every frame."""
        k = self.inverse_dynamics.kinematics
        n = k.times.size
        lengths, _, arms = self.model.musculotendon_kinematics.map(n)(k.q.T, k.u.T)
        at_zero, per_activation = (np.asarray(x).T for x in self.model.tendon_force_affine.map(n)(k.q.T, k.u.T))
        arms = np.asarray(arms).reshape(len(self.model.muscles), n, -1).transpose(1, 0, 2)  # [R(t0) | R(t1) | ...]
        if not self.force_length_velocity:
            per_activation = np.tile(self.model.max_isometric_forces, (n, 1))
        elif self.capacity_along_fiber:
            per_activation = per_activation / _pennation_cosines(self.model.muscles, np.asarray(lengths))
        if not self.passive_force:
            at_zero = np.zeros_like(at_zero)
        forces = self.inverse_dynamics.generalized_forces
        if self.constraints is not None:
            # Reduced form: forces and moment arms about the independent coordinates, Cᵀ τ and R C.
            coupling = self.constraints.coupling_matrix(k.q)
            forces = np.einsum("nv,nvk->nk", forces, coupling)
            arms = np.einsum("nmv,nvk->nmk", arms, coupling)
        return FrameLoads(forces, arms, at_zero, per_activation)

    @property
    def speed_names(self) -> tuple[str, ...]:
        """The coordinates the balance is written about: the independent ones when the model has couplers."""
        return self.model.speed_names if self.constraints is None else self.constraints.independent_speeds

    def solve(self, transcription: Frames | None = None, solver: Ipopt | None = None,
              guess: StaticOptimizationResult | FrameGuess | None = None) -> StaticOptimizationResult:
        """Solve every frame: ``transcription`` says how frames share solves (default ``Frames()``: in batches),
        ``solver`` the IPOPT settings (default ``frame_optimization.DEFAULT_SOLVER``, tolerance 1e-10), ``guess``
        IPOPT's starting point at every frame: a previous result on the same frames, or a ``FrameGuess`` of
        activations (frames, muscles) and reserve controls (frames, coordinates). With a guess and no ``solver`` the
        default settings get ``frame_optimization.WARM_START_OPTIONS``, so a start near the optimum stays near it.
        The studies' solve: ``solve(transcription, solver, guess)``, the problem is this object."""
        transcription = Frames() if transcription is None else transcription
        start = None if guess is None else FrameGuess(guess.activations, guess.residual_controls)
        if solver is None:
            solver = DEFAULT_SOLVER if start is None else WARM_SOLVER
        loads = self.frame_loads()
        nv = len(self.speed_names)
        solution = optimize_frames(
            loads, self.activation_bounds(),
            residual_optimal_forces=np.full(nv, self.residuals.optimal_force),
            residual_weights=np.full(nv, self.residuals.weight),
            exponent=self.activation_exponent, batched=transcription.batched,
            solver=solver, guess=start,
        )
        frames = self._report_weak_frames(solution.residual_forces, solution.activations, loads.moment_arms)
        return StaticOptimizationResult(
            muscle_names=self.model.muscle_names,
            coordinate_names=tuple(self.speed_names),
            activations=solution.activations,
            muscle_forces=solution.muscle_forces,
            residual_controls=solution.residual_controls,
            residual_forces=solution.residual_forces,
            equality_error=solution.equality_error,
            moment_arms=loads.moment_arms,
            inverse_dynamics=self.inverse_dynamics,
            success=solution.success,
            status=solution.status,
            iterations=solution.iterations,
            solve_time=solution.wall_time,
            frames_needing_residuals=frames,
            settings={"activation_exponent": self.activation_exponent,
                      "force_length_velocity": self.force_length_velocity,
                      "passive_force": self.passive_force,
                      "capacity_along_fiber": self.capacity_along_fiber,
                      "cutoff_frequency": self.motion.cutoff_frequency,
                      "residual_optimal_force": self.residuals.optimal_force,
                      "residual_weight": self.residuals.weight},
        )

    def joint_reactions(self, result: StaticOptimizationResult,
                        expressed_in: ReactionAxes | BodyAxes = ReactionAxes.GROUND):
        """Joint reactions with ``result``'s muscle forces applied along the .osim's paths (see module doc)."""
        return muscle_joint_reactions(self.model, self.inverse_dynamics.kinematics, result.muscle_forces, expressed_in)

    def reserve_kinds(self, moment_arms) -> tuple[ReserveKind, ...]:
        """What each reserve stands for: the muscles' shortfall on a coordinate muscles cross, else (zero moment
        arms over the motion) the residual of a ground joint's coordinate or the only actuator of another."""
        ground = set(ground_coordinates(self.model.osim.spec))
        crossed = (np.abs(moment_arms) > 1e-9).any(axis=(0, 1))
        return tuple(ReserveKind.MUSCLES if crossed[j] else ReserveKind.RESIDUAL if name in ground
                     else ReserveKind.ALONE for j, name in enumerate(self.speed_names))

    def _report_weak_frames(self, residual_forces, activations, moment_arms) -> tuple[int, ...]:
        """Warn about frames whose reserves exceed ``warn_above`` or whose muscles are saturated, apart for each
        ``ReserveKind``: only the reserves of coordinates muscles cross measure what the muscles cannot produce."""
        times = self.inverse_dynamics.times
        _, upper = self.activation_bounds()
        names = [f"reserve_{c}" for c in self.speed_names]
        kinds = np.array(self.reserve_kinds(moment_arms))
        large = np.abs(residual_forces) > self.residuals.warn_above
        saturated = activations >= upper - 1e-6
        weak = []
        for kind in ReserveKind:
            columns = np.flatnonzero(kinds == kind)
            frames = large[:, columns].any(axis=1)
            if kind is ReserveKind.MUSCLES:
                frames = frames | saturated.any(axis=1)
            frames = np.flatnonzero(frames)
            weak.append(frames)
            if not frames.size:
                continue
            peaks = np.abs(residual_forces[:, columns]).max(axis=0, initial=0.0)
            per_coordinate = ", ".join(f"{names[j]} up to {peak:.3g}" for j, peak in zip(columns, peaks)
                                       if peak > self.residuals.warn_above or kind is ReserveKind.MUSCLES)
            if kind is ReserveKind.MUSCLES:
                worst = np.abs(residual_forces[:, columns]).max(axis=1, initial=0.0)
                shown = ", ".join(f"t={times[k]:.4g} s: {worst[k]:.3g}" for k in frames[:20])
                more = f" (+{frames.size - 20} more)" if frames.size > 20 else ""
                message = (f"the muscles cannot produce the load at {frames.size} of {times.size} frames (reserve > "
                           f"{self.residuals.warn_above} on a coordinate muscles cross, or a muscle at its maximum "
                           f"activation); largest reserve per frame: {shown}{more}; {per_coordinate}")
            else:
                message = (f"{kind.label} exceed {self.residuals.warn_above} at {frames.size} of {times.size} frames "
                           f"({kind.meaning}; not a muscle shortfall): {per_coordinate}")
            warnings.warn(f"static optimization: {message}", StaticOptimizationWarning, stacklevel=3)
        return tuple(int(k) for k in np.unique(np.concatenate(weak)))


def _pennation_cosines(muscles, lengths: np.ndarray) -> np.ndarray:
    """cos α of each rigid-tendon muscle (rows of ``lengths``: musculotendon lengths, m) per frame,
    (frames, muscles)."""
    cosines = [np.asarray(m.fiber_geometry(ca.DM(row - m.parameters.tendon_slack_length))[1]).ravel()
               for m, row in zip(muscles, lengths)]
    return np.column_stack(cosines)
