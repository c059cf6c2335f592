"""Predictive simulation: turn a ``MusculoskeletalModel`` into an ``ocp.Problem`` with muscle-driven dynamics.

``muscle_driven_problem(model, duration, ...)`` declares the states and controls of a muscle-driven
motion and sets their dynamics; it returns a ``MuscleDrivenProblem`` holding the problem and the SX
symbols, so users write goals and constraints on them::

    ms = muscle_driven_problem(model, duration=0.5, coordinates=StateBounds(initial=[0, 0], final=[0, 1.57]),
                               speeds=StateBounds((-20, 20), initial=0, final=0), activations=StateBounds(initial=0))
    ms.problem.minimize(Effort(ms.excitations))
    solution = ms.problem.solve(HermiteSimpson(50), Ipopt(tol=1e-6))

Variables (labels: the model's ``state_labels`` for q and u, distinct; muscle and actuator names for the rest):

- states ``q`` (coordinates), ``u`` (speeds), ``activations`` (with activation dynamics);
- states ``normalized_tendon_forces`` and controls ``normalized_tendon_force_derivatives`` with
  ``tendons=ElasticTendons(...)`` (``trajopt.studies.prediction.tendon_dynamics``: De Groote et al. 2016's implicit
  tendon dynamics, the fiber-tendon equilibrium a path equality); rigid tendons (the default) add nothing;
- controls ``excitations`` (De Groote 2016 first-order activation dynamics), or ``activations`` when
  ``activation_dynamics=False`` (activations are then controls, as in bioptim's muscle-driven examples);
  ``residuals`` (one generalized force per speed, ``optimal_force * control``) when ``residuals`` is
  given; ``actuator_controls`` for the model's coordinate actuators.

Multibody dynamics: ``ExplicitDynamics()`` sets du/dt = forward_dynamics(q, u, tau) (articulated-body
algorithm); ``ImplicitDynamics()`` makes the accelerations algebraic variables, du/dt = udot, with
inverse_dynamics(q, u, udot) = tau as a path equality (no mass-matrix inverse: sparser, usually faster).

Variable scales and row labels (e.g. OpenSim state paths for .sto files) are optional:
``scales=VariableScales(...)`` and ``labels=VariableLabels(...)``.

Loads hook (contact, springs, ...): ``external_wrenches(problem, q, u) -> 6 x nb`` body wrenches (ground
axes, see ``trajopt.core.multibody.point_force``) and ``extra_generalized_forces(problem, q, u) -> nv`` are
called once while the problem is built; they may declare variables of their own on ``problem``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.joints import BallJoint, FreeJoint
from trajopt.model.paths.domain import PathDomainError
from trajopt.model.paths.domain_report import PathDomainReport
from trajopt.studies.prediction.domain_bounds import check_fixed_value, intersected_bounds
from trajopt.studies.prediction.kinematic_constraints import ConstrainedAccelerations, constrained_accelerations
from trajopt.core.multibody import coordinate_rates, forward_dynamics, inverse_dynamics, point_position, point_velocity
from trajopt.model.musculoskeletal import MUSCLE_DRIVEN_MODEL_MEMBERS, MuscleDrivenModel
from trajopt.core.ocp import Problem, ResidualCoordinates, Residuals, Verification
from trajopt.core.ocp.verification import simulate
from trajopt.studies.prediction.tendon_dynamics import ElasticTendons, RigidTendons, TendonVariables

# OpenSim 4.x DeGrooteFregly2016Muscle hard codes this smoothing of its activation dynamics.
OPENSIM_ACTIVATION_SMOOTHING = 0.1

LoadsHook = Callable[[Problem, ca.SX, ca.SX], ca.SX]


@dataclass(frozen=True)
class StateBounds:
    """Bounds of a state vector: over the whole motion, at the initial and at the final time.

    Each is None (free), a number or a sequence (fixed value), or a ``(lower, upper)`` tuple;
    numbers apply to every element, sequences give one value per element. ``guess``: the variable's
    constant guess (None: the problem's default).
    """

    bounds: object = None
    initial: object = None
    final: object = None
    guess: object = None


@dataclass(frozen=True)
class VariableScales:
    """Typical magnitudes of the declared variables for NLP scaling (None: unscaled); number or one per element."""

    coordinates: object = None
    speeds: object = None
    activations: object = None
    excitations: object = None
    actuator_controls: object = None
    accelerations: object = None


@dataclass(frozen=True)
class VariableLabels:
    """Row labels of the declared variables (None: the model's ``state_labels`` for q and u, muscle/actuator names
    for the rest)."""

    coordinates: tuple[str, ...] | None = None
    speeds: tuple[str, ...] | None = None
    activations: tuple[str, ...] | None = None
    excitations: tuple[str, ...] | None = None
    actuator_controls: tuple[str, ...] | None = None
    accelerations: tuple[str, ...] | None = None


@dataclass(frozen=True)
class ExplicitDynamics:
    """du/dt = forward_dynamics(q, u, tau, wrenches) (articulated-body algorithm).

    Less robust than ``ImplicitDynamics`` on contact-driven gait (the 2D gait prediction converges on coarse meshes
    only: trajopt/examples/gait2d/README.md); prefer the implicit default there."""

    def accelerations(self, problem: Problem, model: MuscleDrivenModel, q, u, tau, wrenches, scale=None,
                      labels=None):
        return forward_dynamics(model.multibody, q, u, tau, wrenches)


@dataclass(frozen=True)
class ImplicitDynamics:
    """Accelerations are algebraic variables in ±max_acceleration; inverse dynamics = tau is a path equality."""

    max_acceleration: float = 1000.0

    def accelerations(self, problem: Problem, model: MuscleDrivenModel, q, u, tau, wrenches, scale=None,
                      labels=None):
        names = model.speed_names
        udot = problem.algebraic("accelerations", len(names), bounds=(-self.max_acceleration, self.max_acceleration),
                                 guess=0.0, scale=scale,
                                 labels=labels if labels is not None else tuple(f"{n}_acceleration" for n in names))
        residual = inverse_dynamics(model.multibody, q, u, udot, wrenches) - tau
        problem.require(residual, equals=0.0, name="multibody dynamics",
                        labels=tuple(f"dynamics {n}" for n in names))
        return udot


def _bounds(value):
    """StateBounds field -> Problem.state argument (tuples stay bounds, lists/arrays become fixed values)."""
    if value is None or isinstance(value, tuple):
        return value
    return np.asarray(value, dtype=float)


def _within_path_domain(coordinates: StateBounds, model: MuscleDrivenModel) -> StateBounds:
    """``coordinates`` with every bound intersected with the box of the paths' domain (fixed ends checked)."""
    domain = model.path_domain_bounds
    if not (np.isfinite(domain[0]).any() or np.isfinite(domain[1]).any()):
        return coordinates
    names = tuple(model.coordinate_names)
    ends = []
    for what, value in (("initial", coordinates.initial), ("final", coordinates.final)):
        if value is None or isinstance(value, tuple):
            ends.append(None if value is None else intersected_bounds(value, domain, names, f"{what} bounds"))
        else:
            check_fixed_value(value, domain, names, f"{what} value of")
            ends.append(value)
    return StateBounds(intersected_bounds(coordinates.bounds, domain, names, "bounds"), *ends, coordinates.guess)


def _labels(given, default) -> tuple[str, ...]:
    return tuple(default) if given is None else tuple(given)


@dataclass(frozen=True, eq=False)
class MuscleDrivenProblem:
    """A muscle-driven ``Problem`` and the symbols to write goals and constraints on.

    ``accelerations`` is the forward-dynamics expression (explicit) or the algebraic symbol (implicit);
    ``excitations`` is None without activation dynamics; ``residuals``/``actuator_controls`` None when absent.
    ``tendon_forces`` (N) drive the multibody; ``tendons``
    (``trajopt.studies.prediction.tendon_dynamics.TendonVariables``) holds the
    tendon-force states and controls of elastic tendons and every muscle quantity (``fiber_lengths``,
    ``fiber_velocities``, ``muscle_quantity(name)``).
    """

    problem: Problem
    model: MuscleDrivenModel
    q: ca.SX
    u: ca.SX
    activations: ca.SX
    excitations: ca.SX | None
    residuals: ca.SX | None
    actuator_controls: ca.SX | None
    accelerations: ca.SX
    tendon_forces: ca.SX
    generalized_forces: ca.SX
    explicit_accelerations: ca.SX
    activation_rates: ca.SX | None
    constraints: ConstrainedAccelerations | None = None  # multipliers, errors... when constraints are held
    tendons: TendonVariables | None = None  # tendon states, controls and muscle quantities

    @property
    def normalized_tendon_forces(self) -> ca.SX | None:
        """The elastic tendons' normalized tendon force states f̃T (None with rigid tendons)."""
        return None if self.tendons is None else self.tendons.normalized_tendon_forces

    @property
    def normalized_tendon_force_derivatives(self) -> ca.SX | None:
        """The elastic tendons' df̃T/dt controls (None with rigid tendons)."""
        return None if self.tendons is None else self.tendons.normalized_tendon_force_derivatives

    @property
    def fiber_lengths(self) -> ca.SX:
        """Fiber lengths (m), one per muscle, as expressions of the problem's symbols."""
        return self.tendons.quantities["fiber_length"]

    @property
    def fiber_velocities(self) -> ca.SX:
        """Fiber velocities (m/s, positive when lengthening), one per muscle."""
        return self.tendons.quantities["fiber_velocity"]

    def path_domain_violation(self, solution) -> str | None:
        """None when every configuration of the solution's grid lies in the domain the muscle paths were fitted on;
        otherwise the reason in one line (coordinate, time, value): the solution extrapolates its surrogates."""
        q = np.atleast_2d(solution.value(self.q)).T
        try:
            self.model.check_path_domain(q, solution.time, "solution")
        except PathDomainError as error:
            return str(error)
        return None

    def path_domain_report(self, solution) -> PathDomainReport:
        """The solution's grid against the muscle paths' domain: frames outside, worst coordinate and by how much
        (``trajopt.model.paths.domain_report.PathDomainReport``; "not declared" for paths that declare no domain)."""
        return self.model.path_domain_report(np.atleast_2d(solution.value(self.q)).T, solution.time)

    def muscle_quantity(self, name: str) -> ca.SX:
        """Any named output of the muscle units (e.g. ``active_fiber_force``, ``active_force_length_multiplier``,
        ``normalized_fiber_velocity``), one per muscle."""
        quantities = self.tendons.quantities
        if name not in quantities:
            raise TrajoptInputError(f"muscle_quantity: no quantity '{name}' (known: {', '.join(sorted(quantities))})")
        return quantities[name]
    path_actuator_controls: ca.SX | None = None
    external_wrenches: ca.SX | None = None  # 6 x bodies (ground axes) of the loads hook, e.g. foot contact

    @property
    def muscle_controls(self) -> ca.SX:
        """What the muscles are driven by: excitations, or activations when they are controls."""
        return self.excitations if self.excitations is not None else self.activations

    def point_position(self, body: str, point=(0.0, 0.0, 0.0)) -> ca.SX:
        """Position in ground of a point fixed on ``body`` (body axes)."""
        return point_position(self.model.multibody, self.q, body, point)

    def point_velocity(self, body: str, point=(0.0, 0.0, 0.0)) -> ca.SX:
        return point_velocity(self.model.multibody, self.q, self.u, body, point)

    def marker_position(self, name: str) -> ca.SX:
        """Position in ground of a marker of the model's .osim file."""
        marker = self.model.osim.marker(name)
        return self.point_position(marker.body, marker.location)

    def resimulate(self, solution, rtol: float = 1e-8, atol: float = 1e-8) -> Verification:
        """Forward re-simulation of the solution's controls with forward dynamics (also for implicit problems)."""
        return resimulate(self, solution, rtol=rtol, atol=atol)


def muscle_driven_problem(
    model: MuscleDrivenModel,
    duration,
    coordinates: StateBounds = StateBounds(),
    speeds: StateBounds = StateBounds(bounds=(-20.0, 20.0)),
    activations: StateBounds = StateBounds(bounds=(0.0, 1.0)),
    excitation_bounds: tuple[float, float] = (0.0, 1.0),
    activation_dynamics: bool = True,
    activation_smoothing: float = 10.0,
    residuals: Residuals | None = None,
    dynamics=ExplicitDynamics(),
    external_wrenches: LoadsHook | None = None,
    extra_generalized_forces: LoadsHook | None = None,
    scales: VariableScales = VariableScales(),
    labels: VariableLabels = VariableLabels(),
    quaternion_norm_stabilization: float = 0.0,
    constraints=(),
    tendons: RigidTendons | ElasticTendons = RigidTendons(),
    path_actuators=None,
    initial_time: float = 0.0,
    bound_by_path_domain: bool = True,
) -> MuscleDrivenProblem:
    """Declare q, u, activations (+ excitations, residuals, actuator controls) and their dynamics.

    ``model``: any ``MuscleDrivenModel`` (an .osim ``MusculoskeletalModel`` or a hand-built model).
    ``duration`` is a number or ``ocp.Free(lo, hi)``. Coordinate bounds default to the model's
    ``coordinate_bounds``. ``quaternion_norm_stabilization`` k (1/s) adds k (1 - ‖Q‖²) Q to the rates
    of every ball/free joint's quaternion Q: zero on unit quaternions, it pulls transcribed ones back.
    ``constraints`` (``trajopt.core.multibody.constraints`` objects, e.g.
    ``load_osim(path, constraints=True).constraints``) are held with multipliers by
    ``trajopt.studies.prediction.kinematic_constraints.constrained_accelerations`` (Moco's Hermite-Simpson formulation
    with constraint derivatives: solve with HermiteSimpson). ``activations`` bounds apply to the activation controls
    when ``activation_dynamics`` is False. ``StateBounds.initial``/``final`` may be ``(lower, upper)`` arrays, e.g.
    to fix one coordinate at t0 and leave the others within their bounds. ``tendons``: ``RigidTendons()`` (tendon
    force affine in activation) or ``ElasticTendons(...)`` (tendon-force states; their derivative regularization,
    ``ElasticTendons.derivative_weight``, is added to the objective). ``path_actuators``
    (``trajopt.model.musculoskeletal.model_forces.path_actuators(osim)``): one control each, their tension
    optimal_force * control along the path. A model without muscles has no activations (``activations`` and
    ``excitations`` are None): its actuators drive it. ``initial_time``: the motion's start
    (a number, or ``ocp.Free``), e.g. a tracked window's first time. ``bound_by_path_domain`` (default True):
    the coordinate bounds (and the ends' bounds) are intersected with the box of the muscle paths' domain
    (``model.path_domain_bounds``; ``trajopt.studies.prediction.domain_bounds``) so fitted paths are not extrapolated;
    False keeps the given bounds (then check ``MuscleDrivenProblem.path_domain_report``).
    """
    missing = [m for m in MUSCLE_DRIVEN_MODEL_MEMBERS if not hasattr(model, m)]
    if missing:
        raise TrajoptInputError(f"muscle_driven_problem: {type(model).__name__} is not a MuscleDrivenModel "
                                f"(missing {sorted(missing)})")
    if not hasattr(dynamics, "accelerations"):
        raise TrajoptInputError(f"dynamics must be ExplicitDynamics() or ImplicitDynamics(), got {dynamics!r}")
    problem = Problem(duration=duration, initial_time=initial_time)
    multibody = model.multibody
    if coordinates.bounds is None:
        lower, upper = (np.asarray(b, dtype=float) for b in model.coordinate_bounds)
        coordinates = StateBounds((lower, upper), coordinates.initial, coordinates.final, coordinates.guess)
    if bound_by_path_domain:
        coordinates = _within_path_domain(coordinates, model)
    q = problem.state("q", multibody.nq, bounds=_bounds(coordinates.bounds), initial=_bounds(coordinates.initial),
                      final=_bounds(coordinates.final), guess=coordinates.guess, scale=scales.coordinates,
                      labels=_labels(labels.coordinates, model.state_labels[0]))
    u = problem.state("u", multibody.nv, bounds=_bounds(speeds.bounds), initial=_bounds(speeds.initial),
                      final=_bounds(speeds.final), guess=speeds.guess, scale=scales.speeds,
                      labels=_labels(labels.speeds, model.state_labels[1]))
    muscles = model.muscle_names
    activation_labels = _labels(labels.activations, tuple(f"{m}_activation" for m in muscles))
    if not muscles:  # a model driven by coordinate or path actuators alone: no activations
        a = e = rates = None
    elif activation_dynamics:
        a = problem.state("activations", len(muscles), bounds=_bounds(activations.bounds),
                          initial=_bounds(activations.initial), final=_bounds(activations.final),
                          guess=activations.guess, scale=scales.activations, labels=activation_labels)
        e = problem.control("excitations", len(muscles), bounds=tuple(excitation_bounds), guess=0.1,
                            scale=scales.excitations,
                            labels=_labels(labels.excitations, tuple(f"{m}_excitation" for m in muscles)))
        rates = [muscle.parameters.activation_dynamics(activation_smoothing).activation_rate_expression(e[k], a[k])
                 for k, muscle in enumerate(model.muscles)]
        rates = ca.vertcat(*rates)
        problem.set_derivative(a, rates)
    else:
        rates = None
        a = problem.control("activations", len(muscles), bounds=_bounds(activations.bounds),
                            guess=0.1 if activations.guess is None else activations.guess,
                            initial=_bounds(activations.initial), final=_bounds(activations.final),
                            scale=scales.activations, labels=activation_labels)
        e = None
    muscle_activations = ca.DM(0, 1) if a is None else a  # a model without muscles has none
    declared = tendons.declare(problem, model, muscle_activations, q, u)
    forces = declared.tendon_forces
    if declared.normalized_tendon_forces is None:
        tau = model.muscle_generalized_forces(muscle_activations, q, u)
    else:
        tau = ca.mtimes(declared.moment_arms.T, forces)
    if declared.goal is not None:
        problem.minimize(declared.goal)
    r = None
    if residuals is not None:
        residuals.require("muscle_driven_problem", coordinates=(ResidualCoordinates.ALL,))
        r = problem.control("residuals", multibody.nv, bounds=(-residuals.max_control, residuals.max_control),
                            guess=0.0, labels=tuple(f"{n}_residual" for n in model.speed_names))
        forces_r = residuals.optimal_force * r
        tau = tau + (forces_r if residuals.generalized_forces is None else residuals.generalized_forces(q, forces_r))
    actuators = model.coordinate_actuators
    c = None
    if actuators:
        c = problem.control("actuator_controls", len(actuators), bounds=(
            np.array([s.min_control for s in actuators]), np.array([s.max_control for s in actuators])),
            guess=0.0, scale=scales.actuator_controls,
            labels=_labels(labels.actuator_controls, tuple(s.name for s in actuators)))
        for k, spec in enumerate(actuators):
            index = model.speed_names.index(spec.coordinate)
            tau[index] = tau[index] + spec.optimal_force * c[k]
    path_controls = None
    if path_actuators is not None:
        path_controls = problem.control("path_actuator_controls", len(path_actuators.names),
                                        bounds=(path_actuators.min_controls, path_actuators.max_controls), guess=0.0,
                                        labels=path_actuators.names)
        tau = tau + ca.mtimes(path_actuators.per_control(q), path_controls)
    if extra_generalized_forces is not None:
        extra = ca.vec(extra_generalized_forces(problem, q, u))
        if extra.numel() != multibody.nv:
            raise TrajoptInputError(f"extra_generalized_forces returned {extra.numel()} values, "
                                    f"expected {multibody.nv}")
        tau = tau + extra
    wrenches = None
    if external_wrenches is not None:
        wrenches = external_wrenches(problem, q, u)
        if wrenches.shape != (6, len(multibody.bodies)):
            raise TrajoptInputError(f"external_wrenches returned shape {wrenches.shape}, expected "
                                    f"(6, {len(multibody.bodies)}) (one column per body)")
    explicit = forward_dynamics(multibody, q, u, tau, wrenches)
    held = None
    if constraints:
        held = constrained_accelerations(problem, multibody, tuple(constraints), q, u, tau, wrenches,
                                         implicit=isinstance(dynamics, ImplicitDynamics), derivatives=True,
                                         max_acceleration=getattr(dynamics, "max_acceleration", 1000.0))
        udot, qdot = held.accelerations, held.coordinate_rates
    else:
        udot = explicit if isinstance(dynamics, ExplicitDynamics) else \
            dynamics.accelerations(problem, model, q, u, tau, wrenches, scale=scales.accelerations,
                                   labels=labels.accelerations)
        qdot = _coordinate_rates(multibody, q, u)
    if quaternion_norm_stabilization:
        qdot = qdot + quaternion_norm_stabilization * _quaternion_norm_pull(multibody, q)
    problem.set_derivative(q, qdot)
    problem.set_derivative(u, udot)
    return MuscleDrivenProblem(problem, model, q, u, a, e, r, c, udot, forces, tau, explicit, rates, held, declared,
                               path_controls, wrenches)


def _coordinate_rates(multibody, q, u):
    if multibody.nq == multibody.nv:
        return u
    return coordinate_rates(multibody, q, u)


def quaternion_slices(multibody) -> tuple[slice, ...]:
    """Slices of q holding a unit quaternion (the first 4 coordinates of each ball and free joint)."""
    return tuple(slice(multibody.q_slice(j.name).start, multibody.q_slice(j.name).start + 4)
                 for j in multibody.joints if isinstance(j, (BallJoint, FreeJoint)))


def _quaternion_norm_pull(multibody, q) -> ca.SX:
    """(1 - ‖Q‖²) Q on each quaternion's entries of q, zero elsewhere."""
    pull = ca.SX.zeros(multibody.nq)
    for s in quaternion_slices(multibody):
        pull[s] = (1.0 - ca.sumsqr(q[s])) * q[s]
    return pull


def resimulate(built: MuscleDrivenProblem, solution, restart_each_interval: bool = False, method: str = "RK45",
               rtol: float = 1e-8, atol: float = 1e-8) -> Verification:
    """Integrate the states with forward dynamics under the solution's controls
    (see `trajopt.core.ocp.verification.simulate`).

    Unlike ``Solution.verify`` (which integrates the problem's own dynamics), an implicit problem's
    algebraic accelerations are replaced by forward dynamics here, so both formulations are checked
    against the same physics. Controls are interpolated as the transcription represents them. Elastic tendons'
    f̃T is integrated with the rate that solves the fiber-tendon equilibrium at the simulated state
    (``ElasticTendonMuscle.normalized_tendon_force_derivative``), not with the df̃T/dt control, so the drift also
    shows how well the equilibrium holds between collocation points.
    """
    if built.constraints is not None:
        raise TrajoptInputError("resimulate: the problem holds kinematic constraints; forward re-simulation with "
                                "constraints is not available (check built.constraints.errors instead)")
    symbols = solution.discrete.problem.symbols
    rates = [_coordinate_rates(built.model.multibody, built.q, built.u), built.explicit_accelerations]
    if built.activation_rates is not None:
        rates.append(built.activation_rates)
    if built.normalized_tendon_forces is not None:
        rates.append(built.tendons.explicit_normalized_tendon_force_derivatives())
    rhs = ca.Function("explicit_dynamics", [symbols[k] for k in ("t", "x", "u", "p", "z")], [ca.vertcat(*rates)])
    return simulate(solution, rhs, restart_each_interval, method, rtol, atol)
