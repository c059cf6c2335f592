"""Muscle-driven inverse simulation of a measured motion: OpenSim Moco's MocoInverse, by direct collocation.

The coordinates are prescribed exactly: natural quintic splines through the motion's columns (as
OpenSim's ``PositionMotion``), speeds and accelerations from the same splines. What is left to solve for
is how the muscles and actuators produce the generalized forces of inverse dynamics, with activation
dynamics linking the grid points in time::

    minimize    ∫ Σ e² + Σ w c² dt                       (Moco's MocoControlGoal, exponent 2)
    subject to  ȧ = f(e, a)                               (De Groote et al. 2016 activation dynamics)
                Rᵀ(q) (F0(q, q̇) + F1(q, q̇) ∘ a) + S c + Gᵀ(q) λ = τ_ID(q, q̇, q̈) − τ_applied(t)
                a(t0) = e(t0)                             (Moco's MocoInitialActivationGoal)

at every grid point of the transcription, with e the excitations, a the activations, c the controls of
the model's coordinate actuators (residuals and reserves: add them with the model operators), S their
optimal forces, G the Jacobian of the model's kinematic constraints and λ their multipliers (free at each
grid point, as Moco's). τ_applied are the loads the motion file does not carry: external loads (ground
reactions, ``external_loads``) and other model forces (``applied_forces``).

Because the kinematics are known, every model quantity (moment arms, musculotendon force terms, inverse
dynamics, constraint Jacobian) is evaluated once, numerically, at the grid times; the NLP sees them as
data (piecewise-linear in t through the grid points, so exact at them). The time window is fixed, so the
transcription's grid times are numbers and nothing is differentiated along t (``trajopt.core.ocp.nlp``). The NLP
is therefore small: activation dynamics are its only nonlinearity.

Problem (what) and solver (how) are apart as in Moco: ``MuscleDrivenInverse(model, motion, ...)`` is the
problem, ``.solve(transcription, solver)`` its solution.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import casadi as ca
import numpy as np

from trajopt.studies.analysis.external_loads import AppliedExternalLoads
from trajopt.studies.analysis.external_loads_file import external_loads_from
from trajopt.studies.analysis.inverse_tendons import RigidTendons
from trajopt.studies.analysis.inverse_dynamics import MotionKinematics, generalized_forces, read_model_motion
from trajopt.studies.analysis.muscle_inverse_solution import MuscleInverseSolution
from trajopt.errors import TrajoptInputError
from trajopt.model.io import motion_processor
from trajopt.core.ocp import Effort, HermiteSimpson, Ipopt, Problem
from trajopt.core.ocp.transcriptions import MOCO_MESH_INTERVAL

if TYPE_CHECKING:
    from trajopt.studies.analysis.muscle_inverse_solution import MuscleInverseSolution

# OpenSim 4.x's DeGrooteFregly2016Muscle (what Moco solves with) hard codes this activation smoothing.
OPENSIM_ACTIVATION_SMOOTHING = 0.1


class AppliedForces(Protocol):
    """Loads the motion file does not carry (external loads, model forces) as generalized forces."""

    def generalized_forces(self, kinematics: MotionKinematics) -> np.ndarray:
        """(frames, nv) generalized forces the loads apply at each frame of ``kinematics``."""

    def wrenches(self, kinematics: MotionKinematics) -> np.ndarray:
        """(frames, 6, bodies) the same loads as body wrenches (ground axes), for joint reactions."""


class KinematicConstraints(Protocol):
    """Holonomic constraints of the model: G(q) (constraints x nv), the Jacobian of φ(q) = 0 along u."""

    @property
    def count(self) -> int: ...

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """(frames, constraints, nv) at the frames of ``q`` (frames, nq)."""


MIN_MESH_INTERVALS = 4


def mesh_intervals(duration: float, mesh_interval: float, minimum: int = MIN_MESH_INTERVALS) -> int:
    """Moco's number of mesh intervals for a mesh interval in seconds: ceil(duration / mesh_interval); fewer than
    ``minimum`` (a mesh coarser than the motion it should follow) is refused in one line."""
    if not (np.isfinite(mesh_interval) and mesh_interval > 0):
        raise TrajoptInputError(f"mesh interval must be a positive number of seconds, got {mesh_interval!r}")
    count = max(1, int(np.ceil(duration / mesh_interval - 1e-9)))
    if count < minimum:
        raise TrajoptInputError(f"mesh interval {mesh_interval:g} s over the {duration:g} s window gives {count} mesh "
                                f"interval(s), fewer than {minimum}: give a mesh interval of at most "
                                f"{duration / minimum:.4g} s")
    return count


@dataclass(frozen=True)
class GridData:
    """Numbers at the grid points (rows): what the prescribed kinematics fix."""

    times: np.ndarray  # (n,)
    kinematics: MotionKinematics
    required_forces: np.ndarray  # (n, nv) inverse dynamics minus applied loads
    moment_arms: np.ndarray  # (n, muscles, nv)
    musculotendon_lengths: np.ndarray  # (n, muscles)
    lengthening_speeds: np.ndarray  # (n, muscles)
    force_at_zero_activation: np.ndarray  # (n, muscles)
    force_per_activation: np.ndarray  # (n, muscles)
    constraint_jacobian: np.ndarray  # (n, constraints, nv)


@dataclass(frozen=True, eq=False)
class MuscleInverseVariables:
    """The SX symbols of a built inverse problem, to write goals and constraints on."""

    problem: Problem
    activations: ca.SX
    excitations: ca.SX
    actuator_controls: ca.SX | None
    multipliers: ca.SX | None
    muscle_forces: ca.SX  # tendon forces, N
    data: GridData
    muscle_names: tuple[str, ...]
    model: object = None  # the MusculoskeletalModel
    external_wrenches: np.ndarray | None = None  # applied loads at the grid (frames x 6 x bodies, ground axes)


@dataclass
class MuscleDrivenInverse:
    """MocoInverse: the problem of driving a prescribed motion with the model's muscles and actuators.

    ``model``: a ``MusculoskeletalModel`` (its coordinate actuators are the reserves and residuals);
    ``motion``: file, radians ``Table`` or ``MotionProcessor`` (filter; window, default the motion's span) with every
    coordinate; ``external_loads``: an ExternalLoads .xml file or ``ExternalLoads`` (e.g. ground reactions);
    ``applied_forces``: other non-actuator model forces (``AppliedForces``);
    ``constraints``: the model's kinematic constraints (``KinematicConstraints``), with a multiplier each.
    ``reserve_weight`` weighs the actuator controls in the effort (Moco's ``reserves_weight``); ``tendons``:
    ``RigidTendons()`` or ``ElasticTendons()``; ``goals``: extra goals added to the effort (e.g. ``EmgTracking``).
    """

    model: object
    motion: object
    external_loads: object = None
    applied_forces: AppliedForces | None = None
    constraints: KinematicConstraints | None = None
    reserve_weight: float = 1.0
    tendons: object = field(default_factory=RigidTendons)
    activation_smoothing: float = OPENSIM_ACTIVATION_SMOOTHING
    goals: list = field(default_factory=list)  # extra goals: objects with .goal(MuscleInverseVariables) -> Goal

    def __post_init__(self):
        processor = motion_processor(self.motion)
        self._table = read_model_motion(processor, self.model.coordinate_names, self.model.rotational_coordinates)
        self._splines = processor.splines(self._table)
        first, last = float(self._table.time[0]), float(self._table.time[-1])
        start, final = processor.time_range(self._table)
        if not (first <= start < final <= last):
            raise TrajoptInputError(f"{self._table.source or 'motion'}: window ({start}, {final}) must lie within "
                                    f"the motion's time range ({first}, {last})")
        self.initial_time, self.final_time = start, final
        # Paths are never extrapolated: a frame of the motion's window outside their domain is an error, as in static
        # optimization (refit the paths for the motion: trajopt.model.paths.refit).
        frames = (self._table.time >= start - 1e-12) & (self._table.time <= final + 1e-12)
        self.model.check_path_domain(self._table.data[frames], self._table.time[frames], self._table.source or "motion")
        if not (np.isfinite(self.reserve_weight) and self.reserve_weight >= 0):
            raise TrajoptInputError(f"reserve_weight must be a finite number >= 0, got {self.reserve_weight!r}")
        loads = external_loads_from(self.external_loads)
        if loads is not None:  # before any solve: the loads must span the window
            loads.check_covers([start, final])
        self._applied = tuple(p for p in (self.applied_forces, None if loads is None else
                                          AppliedExternalLoads(loads, self.model.multibody)) if p is not None)

    @property
    def duration(self) -> float:
        return self.final_time - self.initial_time

    # -- data at the grid ------------------------------------------------------------------------------
    def kinematics_at(self, times) -> MotionKinematics:
        """Prescribed q, u, u̇ at ``times`` (the spline and its first two derivatives)."""
        times = np.asarray(times, dtype=float)
        return MotionKinematics(times, tuple(self._table.labels), self._splines.evaluate(times, 0),
                                self._splines.evaluate(times, 1), self._splines.evaluate(times, 2),
                                self._table.source)

    def grid_data(self, times) -> GridData:
        model = self.model
        kinematics = self.kinematics_at(times)
        n = kinematics.times.size
        # Only the generalized forces: the joint reactions of solve_inverse_dynamics are not needed here, and
        # building their Function costs as much as the inverse dynamics' own.
        required = generalized_forces(model.multibody, kinematics)
        if self._applied:
            applied = sum(np.asarray(p.generalized_forces(kinematics)) for p in self._applied)
            required = required - np.asarray(applied, dtype=float)
        lengths, speeds, arms = model.musculotendon_kinematics.map(n)(kinematics.q.T, kinematics.u.T)
        arms = np.asarray(arms).reshape(len(model.muscles), n, -1).transpose(1, 0, 2)
        at_zero, per_activation = (np.asarray(x).T for x in model.tendon_force_affine.map(n)(kinematics.q.T,
                                                                                              kinematics.u.T))
        if self.constraints is not None and self.constraints.count:
            jacobian = np.asarray(self.constraints.jacobian(kinematics.q), dtype=float)
        else:
            jacobian = np.zeros((n, 0, model.multibody.nv))
        return GridData(kinematics.times, kinematics, required, arms, np.asarray(lengths).T, np.asarray(speeds).T,
                        at_zero, per_activation, jacobian)

    def applied_wrenches(self, kinematics: MotionKinematics) -> np.ndarray | None:
        """(frames, 6, bodies) the external loads and applied forces as body wrenches (ground axes), None without."""
        return sum(np.asarray(p.wrenches(kinematics)) for p in self._applied) if self._applied else None

    # -- the optimal-control problem ------------------------------------------------------------------------
    def build(self, transcription) -> MuscleInverseVariables:
        """The ``ocp.Problem`` on ``transcription``'s grid, with its symbols."""
        model = self.model
        times = self.initial_time + self.duration * np.asarray(transcription.grid().tau)
        data = self.grid_data(times)
        problem = Problem(duration=self.duration, initial_time=self.initial_time)
        muscles = model.muscle_names
        lower, upper = model.min_activations, model.max_activations
        a = problem.state("activations", len(muscles), bounds=(lower, upper), guess=np.maximum(lower, 0.05),
                          labels=tuple(f"/forceset/{m}/activation" for m in muscles))
        e = problem.control("excitations", len(muscles), bounds=(lower, upper), guess=np.maximum(lower, 0.05),
                            labels=tuple(f"/forceset/{m}" for m in muscles))
        rates = ca.vertcat(*[m.parameters.activation_dynamics(self.activation_smoothing)
                             .activation_rate_expression(e[k], a[k]) for k, m in enumerate(model.muscles)])
        problem.set_derivative(a, rates)
        problem.require(problem.initial(a - e), equals=0.0, name="initial activation",
                        labels=tuple(f"initial activation {m}" for m in muscles))

        values = _GridInterpolant(problem.time, data)
        forces, tendon_goal = self.tendons.tendon_forces(problem, model, values, a)
        generalized = ca.mtimes(values.moment_arms.T, forces)
        actuators = model.coordinate_actuators
        c = None
        if actuators:
            c = problem.control("actuator_controls", len(actuators), guess=0.0,
                                bounds=(np.array([s.min_control for s in actuators]),
                                        np.array([s.max_control for s in actuators])),
                                labels=tuple(f"/forceset/{s.name}" for s in actuators))
            speeds = list(model.speed_names)
            selection = np.zeros((model.multibody.nv, len(actuators)))
            for k, spec in enumerate(actuators):
                selection[speeds.index(spec.coordinate), k] = spec.optimal_force
            generalized = generalized + ca.mtimes(ca.DM(selection), c)
        lam = None
        if data.constraint_jacobian.shape[1]:
            lam = problem.algebraic("multipliers", data.constraint_jacobian.shape[1], guess=0.0,
                                    labels=tuple(f"lambda_{k}" for k in range(data.constraint_jacobian.shape[1])))
            generalized = generalized + ca.mtimes(values.constraint_jacobian.T, lam)
        problem.require(generalized - values.required, equals=0.0, name="multibody dynamics",
                        labels=tuple(f"dynamics {n}" for n in model.speed_names))
        goal = Effort(e)
        if c is not None and self.reserve_weight > 0:
            goal = goal + self.reserve_weight * Effort(c)
        if tendon_goal is not None:
            goal = goal + tendon_goal
        wrenches = self.applied_wrenches(data.kinematics)
        variables = MuscleInverseVariables(problem, a, e, c, lam, forces, data, muscles, model, wrenches)
        for extra in self.goals:
            goal = goal + extra.goal(variables)
        problem.minimize(goal)
        return variables

    def solve(self, transcription=None, solver: Ipopt | None = None, guess=None) -> "MuscleInverseSolution":
        """Solve on ``transcription`` (default Hermite-Simpson with Moco's 0.02 s mesh interval) with ``solver``
        (default IPOPT at tolerance 1e-6) from ``guess`` (default the problem's)."""
        if transcription is None:
            transcription = HermiteSimpson(mesh_intervals(self.duration, MOCO_MESH_INTERVAL))
        solver = Ipopt(tol=1e-6, print_level=5) if solver is None else solver
        variables = self.build(transcription)
        solution = variables.problem.solve(transcription, solver, guess=guess)
        return MuscleInverseSolution(self, variables, solution)


class _GridInterpolant:
    """The grid data as piecewise-linear functions of t (exact at the grid points), sparse where the data is."""

    def __init__(self, t: ca.SX, data: GridData):
        n = data.times.size
        arms_pattern = np.any(np.abs(data.moment_arms) > 0, axis=0)  # (muscles, nv)
        jacobian_pattern = np.any(np.abs(data.constraint_jacobian) > 0, axis=0)
        columns = [data.required_forces, data.force_at_zero_activation, data.force_per_activation,
                   data.musculotendon_lengths, data.lengthening_speeds,
                   data.moment_arms[:, arms_pattern], data.constraint_jacobian[:, jacobian_pattern]]
        sizes = [c.reshape(n, -1).shape[1] for c in columns]
        table = np.hstack([c.reshape(n, -1) for c in columns])
        # Duplicate times (none on a collocation grid) would make the interpolant ill-defined.
        lookup = ca.interpolant("grid_data", "linear", [data.times], table.T.ravel(order="F"))
        values = lookup(t)
        parts = ca.vertsplit(values, np.concatenate([[0], np.cumsum(sizes)]).astype(int).tolist())
        self.required = parts[0]
        self.force_at_zero = parts[1]
        self.force_per_activation = parts[2]
        self.musculotendon_lengths = parts[3]
        self.lengthening_speeds = parts[4]
        self.moment_arms = _scatter(parts[5], arms_pattern)
        self.constraint_jacobian = _scatter(parts[6], jacobian_pattern)


def _scatter(values: ca.SX, pattern: np.ndarray) -> ca.SX:
    """A (rows x cols) SX matrix with ``values`` at the True entries of ``pattern`` (row-major) and zeros elsewhere."""
    matrix = ca.SX.zeros(*pattern.shape)
    for k, (i, j) in enumerate(zip(*np.nonzero(pattern))):
        matrix[int(i), int(j)] = values[k]
    return matrix

