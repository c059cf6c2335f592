"""Muscle-driven tracking of coordinates and ground reactions (Moco's ``MocoTrack`` with foot contact).

``track(built, coordinates, ...)`` adds to a ``MuscleDrivenProblem``
(``trajopt.studies.prediction.muscle_driven_problem``) the goals of MocoTrack's example2DWalking step::

    w_q ∫ Σ (q - q_ref)² dt [+ w_u ∫ Σ (u - u_ref)² dt] + w_grf ∫ Σ ((F - F_ref) / N)² dt
        + w_e ∫ Σ e² dt [+ w_emg ∫ Σ (e - emg)² dt] + w_a ∫ Σ c² dt

over the tracked coordinates (a ``Table`` labelled with coordinate names, e.g. ``trajopt.model.io.read_motion``), the
tracked speeds when given (a table labelled with speed names, e.g. from the splined coordinates), the feet's
ground-reaction components (``GroundReactionReference``: a table such as referenceGRF.sto, the per-foot
reactions Function of ``trajopt.studies.gait.ground_reactions.foot_ground_reactions`` and a normalization N, e.g. the
body weight m g;
N = sqrt(m g) gives Moco's MocoContactTrackingGoal, which divides the squared error by m g once), the muscle
excitations (or activations when they are controls), EMG when given (a table labelled with muscle names, values
in [0, 1]) and the coordinate actuators' controls. References are interpolated linearly in time between their
frames; the coordinates, speeds and ground reactions may instead follow natural quintic splines through their
frames (``ReferenceInterpolation.QUINTIC_SPLINES``, Moco's ``MocoStateTrackingGoal`` and ``MocoContactTrackingGoal``:
a ``GCVSplineSet`` with error variance 0, evaluated at the collocation times).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.io.signals import natural_spline, spline_pieces
from trajopt.core.ocp import Goal, Integral, LinearInterpolation, PiecewisePolynomial, Tracking
from trajopt.table import Table


class ReferenceInterpolation(Enum):
    """How the tracked coordinates and speeds are evaluated between the reference's frames."""

    LINEAR = "linear"  # straight lines between the frames
    QUINTIC_SPLINES = "quintic splines"  # natural quintic splines through the frames (Moco's tracking goals)


@dataclass(frozen=True)
class TrackingWeights:
    """Weights of the tracking objective's terms (MocoTrack's example2DWalking values by default)."""

    coordinates: float = 10.0
    ground_reactions: float = 1.0
    excitations: float = 10.0
    actuator_controls: float = 1e-4
    speeds: float | None = None  # None: the coordinates' weight (MocoTrack's one weight for values and speeds)
    emg: float = 1.0
    # (coordinate, relative weight) pairs scaling single coordinates' value and speed terms (MocoTrack's
    # states_weight_set: 0 leaves one untracked); coordinates not named keep 1.
    coordinate_scales: tuple[tuple[str, float], ...] = ()
    speed_scales: tuple[tuple[str, float], ...] = ()

    def __post_init__(self):
        negative = [(name, w) for name, w in self.coordinate_scales + self.speed_scales if not w >= 0]
        if negative:
            raise TrajoptInputError(f"tracking weights: {negative[0][0]} has weight {negative[0][1]}, not >= 0")


@dataclass(frozen=True, eq=False)
class GroundReactionReference:
    """Measured ground reactions to track: ``table`` columns ``label.format(side=, axis=)`` for each foot side
    (``r``, ``l``) and axis in ``axes``; ``reactions`` is ``ground_reactions(q, u) -> (right_force, left_force,
    ...)``; forces are divided by ``normalization`` (e.g. the body weight m g) in the objective."""

    table: Table
    reactions: ca.Function
    normalization: float
    axes: tuple[str, ...] = ("x", "y")
    label: str = "ground_force_{side}_v{axis}"

    def expressions_and_reference(self, q, u) -> tuple[ca.SX, np.ndarray]:
        right, left = self.reactions(q, u)[0:2]
        index = {"x": 0, "y": 1, "z": 2}
        unknown = [a for a in self.axes if a not in index]
        if unknown or not self.normalization > 0:
            raise TrajoptInputError(f"ground reaction tracking: axes must be among x, y, z (got {unknown}) and "
                                    f"the normalization > 0 (got {self.normalization})")
        expressions, columns = [], []
        for side, force in (("r", right), ("l", left)):
            for axis in self.axes:
                expressions.append(force[index[axis]])
                columns.append(self.table.column(self.label.format(side=side, axis=axis)))
        return ca.vertcat(*expressions) / self.normalization, np.column_stack(columns) / self.normalization


def _rows(table: Table, names, what: str) -> list[int]:
    names = tuple(names)
    unknown = [label for label in table.labels if label not in names]
    if unknown:
        raise TrajoptInputError(f"tracking: {table.source or table.name or what + ' table'} has columns {unknown} "
                                f"that are not {what} of the model ({', '.join(names)})")
    return [names.index(label) for label in table.labels]


def _selected(symbol, rows: list[int]):
    return symbol if rows == list(range(symbol.numel())) else ca.vertcat(*[symbol[i] for i in rows])


def _column_weights(table: Table, scales: tuple[tuple[str, float], ...], what: str) -> np.ndarray:
    """Per-column relative weights of ``table`` (1 unless ``scales`` names the column)."""
    given = dict(scales)
    unknown = sorted(set(given) - set(table.labels))
    if unknown:
        raise TrajoptInputError(f"tracking weights: {unknown[0]!r} is not a tracked {what} "
                                f"({', '.join(table.labels)})")
    return np.array([given.get(label, 1.0) for label in table.labels])


def _interpolated(times, data, interpolation: ReferenceInterpolation):
    if interpolation is ReferenceInterpolation.QUINTIC_SPLINES:
        return PiecewisePolynomial(*spline_pieces(natural_spline(times, data)))
    return LinearInterpolation(times, data)


def _reference_tracking(expressions, table: Table, weights, interpolation: ReferenceInterpolation) -> Goal:
    return Tracking(expressions, _interpolated(table.time, table.data, interpolation), weights)


def state_tracking(built, coordinates: Table, weights: TrackingWeights = TrackingWeights(),
                   speeds: Table | None = None,
                   interpolation: ReferenceInterpolation = ReferenceInterpolation.LINEAR) -> tuple[Goal, ...]:
    """The weighted coordinate tracking goal of ``track`` and, when ``speeds`` are given and weighted, the speed
    tracking goal (MocoTrack's state tracking is their sum)."""
    model = built.model
    rows = _rows(coordinates, model.coordinate_names, "coordinates")
    goals = (weights.coordinates * _reference_tracking(
        _selected(built.q, rows), coordinates,
        _column_weights(coordinates, weights.coordinate_scales, "coordinate"), interpolation),)
    weight = weights.coordinates if weights.speeds is None else weights.speeds
    if speeds is not None and weight:
        rows = _rows(speeds, model.speed_names, "speeds")
        goals += (weight * _reference_tracking(_selected(built.u, rows), speeds,
                                               _column_weights(speeds, weights.speed_scales, "speed"),
                                               interpolation),)
    return goals


def track(built, coordinates: Table, ground_reactions: GroundReactionReference | None = None,
          weights: TrackingWeights = TrackingWeights(), speeds: Table | None = None,
          emg: Table | None = None, interpolation: ReferenceInterpolation = ReferenceInterpolation.LINEAR) -> None:
    """Add the tracking objective (module docstring) to ``built.problem``; ``coordinates`` columns are coordinate
    names (a subset of the model's), ``speeds`` columns speed names, ``emg`` columns muscle names;
    ``interpolation``: of the coordinates, speeds and ground reactions between their frames."""
    model = built.model
    problem = built.problem
    for goal in state_tracking(built, coordinates, weights, speeds, interpolation):
        problem.minimize(goal)
    if ground_reactions is not None:
        forces, reference = ground_reactions.expressions_and_reference(built.q, built.u)
        problem.minimize(weights.ground_reactions * Tracking(forces, _interpolated(
            ground_reactions.table.time, reference, interpolation)))
    problem.minimize(weights.excitations * Integral(ca.sumsqr(built.muscle_controls)))
    if emg is not None and weights.emg:
        rows = _rows(emg, model.muscle_names, "muscles")
        problem.minimize(weights.emg * Tracking(_selected(built.muscle_controls, rows),
                                                LinearInterpolation(emg.time, emg.data)))
    if built.actuator_controls is not None and weights.actuator_controls:
        problem.minimize(weights.actuator_controls * Integral(ca.sumsqr(built.actuator_controls)))
