"""A musculoskeletal model: a multibody model, its muscles as DeGroote 2016 units, their paths and actuators.

``MusculoskeletalModel`` is the glue static optimization, reaching and gait problems share::

    osim = load_osim("trajopt/examples/arm26/arm26.osim")
    model = MusculoskeletalModel(osim, PolynomialPaths.load("trajopt/examples/arm26/paths.json"))
    lengths, speeds, arms = model.musculotendon_kinematics(q, u)
    tau = model.muscle_generalized_forces(activations, q, u)

Muscles. Every OpenSim muscle becomes a ``RigidTendonMuscle`` (DeGroote et al. 2016 curves, with
the chosen constant set) with the parameters OpenSim's ``DeGrooteFregly2016Muscle::replaceMuscles``
would give it:

- common: max_isometric_force, optimal_fiber_length, tendon_slack_length,
  pennation_angle_at_optimal, max_contraction_velocity, activation/deactivation time constants;
- Thelen2003Muscle: tendon strain at one normalized force = ``FmaxTendonStrain``, passive fiber
  strain = ``FmaxMuscleStrain``, fiber damping 0 (Thelen's own curve shapes, ``KshapeActive``,
  ``Af``, ``Flen`` ..., have no DeGroote counterpart and are dropped);
- Millard2012EquilibriumMuscle: fiber damping = its ``fiber_damping``; strains: the default
  curves' (tendon 0.049, passive fiber 0.7), since trajopt does not read custom curves;
- DeGrooteFregly2016Muscle: its own properties.

Paths. ``paths`` is any object with ``muscles`` (names) and
``lengths_and_moment_arms_function(coordinates) -> Function q -> (lengths, moment_arms)`` whose
moment arms are ``-∂l/∂q`` (e.g. ``trajopt.model.paths.polynomial.PolynomialPaths``). It is asked for the model's
full coordinate list, so a path that covers only some coordinates gets zero moment arms about the
others. Moment arms about speeds are ``-∂l/∂q N(q)`` with ``q̇ = N(q) u``; for joints whose
coordinates are their speeds (pin, slider, custom) that is the plain derivative.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError, first_names
from trajopt.core.multibody import Model, coordinate_rates_matrix
from trajopt.core.muscles import DEFAULT_CONSTANTS, DeGroote2016Constants, MuscleParameters, RigidTendonMuscle
from trajopt.model.osim import OsimModel, load_osim
from trajopt.model.musculoskeletal.state_labels import opensim_state_labels
from trajopt.model.paths.domain_report import PathDomainReport
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.model.paths.polynomial import PolynomialPaths

# OpenSim's default Millard2012 curves (FiberForceLengthCurve, TendonForceLengthCurve).
MILLARD2012_PASSIVE_FIBER_STRAIN = 0.7
MILLARD2012_TENDON_STRAIN = 0.049


class MusclePaths(Protocol):
    """What a muscle-path provider must give: muscle names and a lengths/moment-arms Function."""

    @property
    def muscles(self) -> tuple[str, ...]: ...

    def lengths_and_moment_arms_function(self, coordinates: tuple[str, ...]) -> ca.Function: ...

    def check_domain(self, q, coordinates: tuple[str, ...], times=None, where: str = "motion") -> None:
        """Raise ``trajopt.model.paths.domain.PathDomainError`` when a configuration is outside the paths' domain."""

    def domain_report(self, q, coordinates: tuple[str, ...], times=None) -> PathDomainReport:
        """Configurations (rows of q over ``coordinates``) against the paths' domain, in numbers."""

    def domain_bounds(self, coordinates: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) per coordinate: a box holding the paths' domain (-inf/inf where it does not restrict)."""


@runtime_checkable
class MuscleDrivenModel(Protocol):
    """What a model must provide to be driven by muscles (bioptim's BioModel idea).

    ``trajopt.studies.prediction.muscle_driven_problem`` and the gait tools take any object with these members:
    ``MusculoskeletalModel`` (an .osim file and its paths) and hand-built models alike (e.g. the
    shoulder of trajopt/examples/shoulder_reaching).

    - ``multibody``: the ``trajopt.core.multibody.Model`` (q: nq coordinates, u: nv speeds);
    - ``muscles``: one DeGroote ``RigidTendonMuscle`` per muscle (activation dynamics constants);
    - ``muscle_names``, ``coordinate_names`` (nq), ``speed_names`` (nv);
    - ``state_labels``: (coordinate labels, speed labels), the distinct column labels of q and u in solution
      tables (``trajopt.model.musculoskeletal.state_labels``: OpenSim's state paths or names with ``_speed``);
    - ``coordinate_actuators``: ``CoordinateActuatorSpec``s (may be empty);
    - ``coordinate_bounds``: (lower, upper) arrays of q, the default state bounds;
    - ``tendon_forces(activations, q, u) -> tendon_forces`` and
      ``muscle_generalized_forces(activations, q, u) -> generalized_forces`` (nv): casadi.Functions.
    """

    @property
    def multibody(self) -> Model: ...

    @property
    def muscles(self) -> tuple: ...

    @property
    def muscle_names(self) -> tuple[str, ...]: ...

    @property
    def coordinate_names(self) -> tuple[str, ...]: ...

    @property
    def speed_names(self) -> tuple[str, ...]: ...

    @property
    def state_labels(self) -> tuple[tuple[str, ...], tuple[str, ...]]: ...

    @property
    def coordinate_actuators(self) -> tuple: ...

    @property
    def coordinate_bounds(self) -> tuple[np.ndarray, np.ndarray]: ...

    @property
    def tendon_forces(self) -> ca.Function: ...

    @property
    def muscle_generalized_forces(self) -> ca.Function: ...

    def check_path_domain(self, q, times=None, where: str = "motion") -> None:
        """Raise ``PathDomainError`` where a configuration (rows of q) lies outside the domain the muscle paths hold
        on (fitted surrogates); paths that hold everywhere never raise."""

    def path_domain_report(self, q, times=None) -> PathDomainReport:
        """Configurations (rows of q) against the muscle paths' domain: frames outside, worst coordinate, by how
        much; "not declared" for paths that declare none."""

    @property
    def path_domain_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of q: a box holding the muscle paths' domain, -inf/inf where it does not restrict
        (``muscle_driven_problem`` intersects the coordinate bounds with it by default)."""


MUSCLE_DRIVEN_MODEL_MEMBERS = ("multibody", "muscles", "muscle_names", "coordinate_names", "speed_names",
                               "state_labels", "coordinate_actuators", "coordinate_bounds", "tendon_forces",
                               "muscle_generalized_forces", "check_path_domain", "path_domain_report",
                               "path_domain_bounds")


@dataclass(frozen=True)
class CoordinateActuatorSpec:
    """A generalized-force actuator: force = control * optimal_force along ``coordinate``'s speed."""

    name: str
    coordinate: str
    optimal_force: float
    min_control: float
    max_control: float


def degroote_parameters(muscle, ignore_passive_fiber_force: bool = False, source="") -> MuscleParameters:
    """DeGroote 2016 rigid-tendon parameters for an OpenSim muscle (``trajopt.model.osim.spec.Muscle``); an unusable
    parameter is one line naming ``source`` (the model file), the muscle and the value."""
    try:
        return _degroote_parameters(muscle, ignore_passive_fiber_force)
    except TrajoptInputError as error:
        raise TrajoptInputError(f"{source}: {error}" if source else str(error)) from None


def _degroote_parameters(muscle, ignore_passive_fiber_force: bool) -> MuscleParameters:
    extra = muscle.parameters
    kind = muscle.model
    if kind == "Thelen2003Muscle":
        strains = {"tendon_strain_at_one_norm_force": extra.FmaxTendonStrain,
                   "passive_fiber_strain_at_one_norm_force": extra.FmaxMuscleStrain}
        damping, width = 0.0, 1.0
    elif kind == "Millard2012EquilibriumMuscle":
        strains = {"tendon_strain_at_one_norm_force": MILLARD2012_TENDON_STRAIN,
                   "passive_fiber_strain_at_one_norm_force": MILLARD2012_PASSIVE_FIBER_STRAIN}
        damping, width = extra.fiber_damping, 1.0
    elif kind == "DeGrooteFregly2016Muscle":
        strains = {"tendon_strain_at_one_norm_force": extra.tendon_strain_at_one_norm_force,
                   "passive_fiber_strain_at_one_norm_force": extra.passive_fiber_strain_at_one_norm_force}
        damping, width = extra.fiber_damping, extra.active_force_width_scale
        ignore_passive_fiber_force = ignore_passive_fiber_force or extra.ignore_passive_fiber_force
    else:
        raise TrajoptInputError(f"muscle '{muscle.name}': model {kind} has no DeGroote 2016 mapping")
    return MuscleParameters(
        max_isometric_force=muscle.max_isometric_force,
        optimal_fiber_length=muscle.optimal_fiber_length,
        tendon_slack_length=muscle.tendon_slack_length,
        optimal_pennation_angle=muscle.pennation_angle_at_optimal,
        max_contraction_velocity=muscle.max_contraction_velocity,
        fiber_damping=damping,
        active_force_width_scale=width,
        ignore_passive_fiber_force=ignore_passive_fiber_force,
        activation_time_constant=muscle.activation_time_constant,
        deactivation_time_constant=muscle.deactivation_time_constant,
        ignore_tendon_compliance=True,
        ignore_activation_dynamics=muscle.ignore_activation_dynamics,
        name=muscle.name,
        **strains,
    )


class MusculoskeletalModel:
    """Multibody model + DeGroote rigid-tendon muscles + muscle paths + coordinate actuators.

    Named Functions, built once in SX (q: nq coordinates, u: nv speeds, activations: muscles):

    - ``musculotendon_kinematics(q, u) -> (musculotendon_lengths, lengthening_speeds, moment_arms)``,
      moment arms muscles x speeds;
    - ``tendon_forces(activations, q, u) -> tendon_forces``;
    - ``tendon_force_affine(q, u) -> (force_at_zero_activation, force_per_activation)``: tendon
      force = force_at_zero_activation + activation * force_per_activation;
    - ``muscle_generalized_forces(activations, q, u) -> generalized_forces`` (nv) = Rᵀ F.
    """

    def __init__(
        self,
        osim: OsimModel,
        paths: MusclePaths | None,
        constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
        ignore_passive_fiber_force: bool = False,
    ):
        self.osim = osim
        self.multibody = osim.multibody
        self.constants = constants
        active = [m for m in osim.muscles if m.applies_force]
        if paths is None:  # a model without muscles (e.g. driven by coordinate or path actuators) needs no paths
            if active:
                raise TrajoptInputError(f"{osim.spec.file}: muscles {[m.name for m in active][:6]} need paths (e.g. "
                                        "trajopt.model.paths.geometric.GeometricPaths(osim) or "
                                        "PolynomialPaths.load(...))")
            paths = GeometricPaths(osim)
        self.paths = paths
        missing = [m.name for m in active if m.name not in paths.muscles]
        if missing:
            have = list(paths.muscles)
            raise TrajoptInputError(f"{osim.spec.file}: no path for muscles {missing[:6]}"
                                    f"{f' (+{len(missing) - 6} more)' if len(missing) > 6 else ''} (paths have "
                                    f"{have[:6]}{f' (+{len(have) - 6} more)' if len(have) > 6 else ''})")
        names = {m.name for m in osim.muscles}
        unused = [name for name in paths.muscles if name not in names]
        # Paths for muscles the model lacks are not used; tools report this note (summary.md and stderr).
        self.notes = (f"{osim.spec.file}: the paths have {len(unused)} muscle(s) the model lacks, not used: "
                      + first_names(unused),) \
            if unused else ()
        self.muscle_specs = tuple(active)
        self.muscles = tuple(RigidTendonMuscle(degroote_parameters(m, ignore_passive_fiber_force, osim.spec.file),
                                               constants) for m in active)
        self.coordinate_actuators = tuple(
            CoordinateActuatorSpec(a.name, a.coordinate, a.optimal_force, a.min_control, a.max_control)
            for a in osim.coordinate_actuators if a.applies_force
        )
        self._build_functions()

    @classmethod
    def load(cls, model_file, paths_file, constants: DeGroote2016Constants = DEFAULT_CONSTANTS,
             ignore_passive_fiber_force: bool = False) -> "MusculoskeletalModel":
        """From an .osim file and a polynomial-paths JSON file (``PolynomialPaths.save``)."""
        return cls(load_osim(model_file), PolynomialPaths.load(paths_file), constants, ignore_passive_fiber_force)

    # -- names and bounds ----------------------------------------------------------------------
    @property
    def muscle_names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.muscle_specs)

    @property
    def coordinate_names(self) -> tuple[str, ...]:
        return self.multibody.coordinate_names

    @property
    def speed_names(self) -> tuple[str, ...]:
        return self.multibody.speed_names

    @property
    def state_labels(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """OpenSim's state paths of q and u (``/jointset/<joint>/<coordinate>/value``, ``.../speed``)."""
        return opensim_state_labels(self.multibody)

    @property
    def coordinate_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """The .osim coordinate ranges; quaternion components (no .osim range) get ±1.05.

        ±1.05, not ±1, so that a start at the identity does not sit on a bound and duplicate the
        initial-value constraint (a degenerate KKT system).
        """
        ranges = {c.name: c.range for c in self.osim.spec.coordinates}
        lower = np.array([ranges.get(n, (-1.05, 1.05))[0] for n in self.coordinate_names])
        upper = np.array([ranges.get(n, (-1.05, 1.05))[1] for n in self.coordinate_names])
        return lower, upper

    @property
    def rotational_coordinates(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.osim.spec.coordinates if c.motion_type == "rotational")

    @property
    def min_activations(self) -> np.ndarray:
        """Each muscle's ``min_control`` (OpenSim's lower bound on activation in static optimization)."""
        return np.array([m.min_control for m in self.muscle_specs])

    @property
    def max_activations(self) -> np.ndarray:
        return np.array([m.max_control for m in self.muscle_specs])

    @property
    def max_isometric_forces(self) -> np.ndarray:
        return np.array([m.max_isometric_force for m in self.muscle_specs])

    # -- Functions ------------------------------------------------------------------------------
    def _build_functions(self) -> None:
        mb = self.multibody
        q = ca.SX.sym("q", mb.nq)
        u = ca.SX.sym("u", mb.nv)
        a = ca.SX.sym("activations", len(self.muscles))
        path_function = self.paths.lengths_and_moment_arms_function(tuple(mb.coordinate_names))
        order = [tuple(self.paths.muscles).index(name) for name in self.muscle_names]
        lengths_all, arms_q_all = path_function(q)
        # muscles x 1 and muscles x nq (-∂l/∂q); sized explicitly, as vertcat of no rows is 0 x 1 (no muscles)
        lengths = ca.vertcat(ca.SX(0, 1), *[lengths_all[i] for i in order])
        arms_q = ca.vertcat(ca.SX(0, mb.nq), *[arms_q_all[i, :] for i in order])
        rates = coordinate_rates_matrix(mb, q)
        arms = ca.mtimes(arms_q, rates) if mb.nq != mb.nv else arms_q
        speeds = -ca.mtimes(arms, u)
        self.musculotendon_kinematics = ca.Function(
            "musculotendon_kinematics", [q, u], [lengths, speeds, arms],
            ["q", "u"], ["musculotendon_lengths", "lengthening_speeds", "moment_arms"],
        )
        at_zero, per_activation = [], []
        for k, muscle in enumerate(self.muscles):
            zero_k, per_k = muscle.tendon_force_affine(lengths[k], speeds[k])
            at_zero.append(zero_k)
            per_activation.append(per_k)
        at_zero, per_activation = ca.vertcat(ca.SX(0, 1), *at_zero), ca.vertcat(ca.SX(0, 1), *per_activation)
        self.tendon_force_affine = ca.Function(
            "tendon_force_affine", [q, u], [at_zero, per_activation],
            ["q", "u"], ["force_at_zero_activation", "force_per_activation"],
        )
        forces = at_zero + per_activation * a
        self.tendon_forces = ca.Function(
            "tendon_forces", [a, q, u], [forces], ["activations", "q", "u"], ["tendon_forces"])
        self.muscle_generalized_forces = ca.Function(
            "muscle_generalized_forces", [a, q, u], [ca.mtimes(arms.T, forces)],
            ["activations", "q", "u"], ["generalized_forces"],
        )

    def check_path_domain(self, q, times=None, where: str = "motion") -> None:
        """Raise ``PathDomainError`` (coordinate, frame, value) when a configuration (rows of q, model
        coordinate order) lies outside the domain the muscle paths were fitted on."""
        self.paths.check_domain(q, self.coordinate_names, times, where)

    def path_domain_report(self, q, times=None) -> PathDomainReport:
        """Configurations (rows of q, model coordinate order) against the muscle paths' domain."""
        return self.paths.domain_report(q, self.coordinate_names, times)

    @property
    def path_domain_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of q holding the muscle paths' domain (-inf/inf where it does not restrict)."""
        return self.paths.domain_bounds(self.coordinate_names)

    def muscle_quantities(self, activations, q, u) -> dict[str, np.ndarray]:
        """Every named output of each muscle's ``quantities`` Function per frame: name -> (frames, muscles).

        ``activations`` (frames, muscles), ``q`` (frames, nq), ``u`` (frames, nv).
        """
        kinematics = self.musculotendon_kinematics.map(len(q))
        lengths, speeds, _ = (np.asarray(x) for x in kinematics(np.asarray(q).T, np.asarray(u).T))
        result: dict[str, list] = {}
        for k, muscle in enumerate(self.muscles):
            mapped = muscle.quantities.map(len(q))
            values = mapped(np.asarray(activations)[:, k], lengths[k], speeds[k])
            for name, value in zip(muscle.quantities.name_out(), values):
                result.setdefault(name, []).append(np.asarray(value).ravel())
        return {name: np.column_stack(columns) for name, columns in result.items()}
