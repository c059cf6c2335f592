"""A predictive half gait cycle of any musculoskeletal model with foot contact: the gait study object.

``half_gait_cycle(model, contacts, ...)`` declares what the field's half-cycle predictions (Moco's
example2DWalking, PredSim) share, so that a gait problem is a page of library calls:

- states q, u, activations; controls excitations and actuator controls; implicit multibody dynamics
  (algebraic accelerations, ``ImplicitDynamics``) with the contact wrenches of ``contacts`` and the optional
  ``passive`` generalized forces;
- the walking direction's translation (``progression``) starts at 0 (the problem is invariant to shifting it);
- bilateral symmetry: the state at the end is the mirror image of the state at the start (``BilateralSymmetry``
  derived from the model's names and kinematics), the actuator controls repeat mirrored;
- OpenSim state and control paths as labels, so the solution's tables are OpenSim-readable.

The returned ``HalfGaitCycle`` holds the ``MuscleDrivenProblem``; ``walk_at(speed)`` adds the average speed and
returns the distance walked, which effort goals divide by (``Effort(..., per_distance=distance)``). Goals and
guesses are the caller's: the study says what is walked, not what is optimal. ``walking_problem`` is the same
muscle-driven problem without the conditions on its ends (no symmetry, no fixed start), for tracking a measured
window such as a full gait cycle (``trajopt.studies.gait.muscle_tracking``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.model.contact import SphereContact, contact_loads_function
from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.guess import guess_from_coordinates
from trajopt.studies.gait.labels import opensim_labels
from trajopt.studies.gait.symmetry import BilateralSymmetry, bilateral_symmetry, require_symmetric_ends
from trajopt.studies.gait.walking import require_average_speed
from trajopt.model.musculoskeletal import MuscleDrivenModel
from trajopt.core.ocp import Free, Guess, Problem
from trajopt.studies.prediction.tendon_dynamics import RigidTendons
from trajopt.studies.prediction import (
    OPENSIM_ACTIVATION_SMOOTHING,
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    VariableScales,
    muscle_driven_problem,
)
from trajopt.studies.prediction.problem import LoadsHook


@dataclass(frozen=True)
class GaitBounds:
    """Bounds of a gait study's variables.

    ``coordinates``: {name: (lower, upper)} replacing the model's ranges for those coordinates (radians, metres);
    ``speeds`` and ``max_acceleration`` bound every generalized speed and acceleration; ``excitations``
    (lower, upper) bounds the excitations and activations (None: each muscle's min and max control, the
    model's ``min_activations`` and ``max_activations``); ``bound_by_path_domain``: the coordinates are also kept
    inside the box of the muscle paths' domain (``muscle_driven_problem``'s option of that name; False: only these
    bounds).
    """

    coordinates: dict | None = None
    speeds: tuple[float, float] = (-20.0, 20.0)
    max_acceleration: float = 1000.0
    excitations: tuple[float, float] | None = None
    bound_by_path_domain: bool = True


@dataclass(frozen=True)
class HalfGaitCycle:
    """A declared half gait cycle: the muscle-driven problem, its symmetry and walking direction."""

    muscle_driven: MuscleDrivenProblem
    symmetry: BilateralSymmetry
    progression: str

    @property
    def problem(self) -> Problem:
        return self.muscle_driven.problem

    def walk_at(self, speed: float) -> ca.SX:
        """Require the average speed (progression displacement / duration, m/s); returns the displacement."""
        return require_average_speed(self.muscle_driven, self.progression, speed)

    def guess_from_coordinates(self, time, q, muscle_level: float = 0.05) -> Guess:
        """A guess from a motion of the model's coordinates (rows of q at ``time``), shifted to start at 0."""
        q = np.array(q, dtype=float)
        index = tuple(self.muscle_driven.model.coordinate_names).index(self.progression)
        q[:, index] -= q[0, index]
        return guess_from_coordinates(self.muscle_driven, np.asarray(time) - time[0], q, muscle_level)


def _coordinate_bounds(model: MuscleDrivenModel, given: dict | None, start_at_zero: str | None) -> StateBounds:
    names = tuple(model.coordinate_names)
    if start_at_zero is not None and start_at_zero not in names:
        raise TrajoptInputError(f"gait study: progression {start_at_zero!r} is not a coordinate of the model "
                                f"(coordinates: {', '.join(names)})")
    unknown = sorted(set(given or {}) - set(names))
    if unknown:
        raise TrajoptInputError(f"gait study: bounds name {unknown[0]!r}, not a coordinate of the model "
                                f"(coordinates: {', '.join(names)})")
    lower, upper = (np.array(b, dtype=float) for b in model.coordinate_bounds)
    for name, (low, high) in (given or {}).items():
        lower[names.index(name)], upper[names.index(name)] = low, high
    if start_at_zero is None:
        return StateBounds((lower, upper))
    initial_lower, initial_upper = lower.copy(), upper.copy()
    initial_lower[names.index(start_at_zero)] = initial_upper[names.index(start_at_zero)] = 0.0
    return StateBounds((lower, upper), initial=(initial_lower, initial_upper))


def walking_problem(model: MuscleDrivenModel, contact_loads: ca.Function, *, duration,
                    bounds: GaitBounds = GaitBounds(), generalized_forces: LoadsHook | None = None,
                    start_at_zero: str | None = None, initial_time: float = 0.0,
                    scales: VariableScales = VariableScales(speeds=5.0, accelerations=50.0),
                    activation_smoothing: float = OPENSIM_ACTIVATION_SMOOTHING,
                    quaternion_norm_stabilization: float = 0.0, tendons=RigidTendons()) -> MuscleDrivenProblem:
    """The muscle-driven problem every gait study shares (module docstring), with no condition on its ends.

    ``contact_loads(q, u)``: the contact model's body wrenches first (``trajopt.model.contact.contact_loads_function``);
    ``generalized_forces(problem, q, u)``: generalized forces beside the muscles' and actuators' (joint limits,
    damping, residual actuators), or None; ``start_at_zero``: a coordinate fixed to 0 at the start (the walking
    direction's translation of a prediction); ``initial_time``: the motion's first time (a tracked window's);
    ``tendons``: ``RigidTendons()`` or ``ElasticTendons(...)`` (``trajopt.studies.prediction.tendon_dynamics``).
    """
    excitation_bounds = bounds.excitations if bounds.excitations is not None else \
        (model.min_activations, model.max_activations)
    return muscle_driven_problem(
        model, duration,
        coordinates=_coordinate_bounds(model, bounds.coordinates, start_at_zero),
        speeds=StateBounds(tuple(bounds.speeds)),
        activations=StateBounds(tuple(excitation_bounds)), excitation_bounds=tuple(excitation_bounds),
        activation_smoothing=activation_smoothing,
        dynamics=ImplicitDynamics(bounds.max_acceleration),
        external_wrenches=lambda problem, q, u: contact_loads(q, u)[0],
        extra_generalized_forces=generalized_forces,
        scales=scales, labels=opensim_labels(model),
        quaternion_norm_stabilization=quaternion_norm_stabilization, initial_time=initial_time,
        tendons=tendons, bound_by_path_domain=bounds.bound_by_path_domain)


def half_gait_cycle(model: MuscleDrivenModel, contacts: Sequence[SphereContact], *, duration=Free(0.4, 0.8),
                    bounds: GaitBounds = GaitBounds(), passive: ca.Function | None = None,
                    symmetry: BilateralSymmetry | None = None, progression: str = "pelvis_tx",
                    scales: VariableScales = VariableScales(speeds=5.0, accelerations=50.0),
                    activation_smoothing: float = OPENSIM_ACTIVATION_SMOOTHING,
                    quaternion_norm_stabilization: float = 0.0, mirror_excitations: bool = False,
                    tendons=RigidTendons()) -> HalfGaitCycle:
    """Declare a predictive half gait cycle (module docstring) of ``model``.

    ``contacts``: the model's smooth sphere-ground contacts (``trajopt.model.contact.osim_contacts``);
    ``passive(q, u)``: generalized forces beside the muscles' (joint limits, damping), or None;
    ``symmetry``: derived from the model and its contacts (whose spheres must mirror too) when None;
    ``mirror_excitations``: the excitations map left<->right at the end too (Moco's example leaves them free);
    ``tendons``: ``RigidTendons()`` or ``ElasticTendons(...)`` (``trajopt.studies.prediction.tendon_dynamics``).
    """
    symmetry = symmetry if symmetry is not None else bilateral_symmetry(model, contacts=contacts)
    contact_loads = contact_loads_function(model.multibody, contacts)
    built = walking_problem(
        model, contact_loads, duration=duration, bounds=bounds,
        generalized_forces=None if passive is None else (lambda problem, q, u: passive(q, u)),
        start_at_zero=progression, scales=scales, activation_smoothing=activation_smoothing,
        quaternion_norm_stabilization=quaternion_norm_stabilization, tendons=tendons)
    require_symmetric_ends(built, symmetry, exclude=(progression,), mirror_excitations=mirror_excitations)
    return HalfGaitCycle(built, symmetry, progression)
