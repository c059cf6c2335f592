"""Geometric muscle paths: straight segments through points fixed on (or moving over) bodies.

A path is a sequence of points on bodies of a `trajopt.core.multibody.Model`:
- `FixedPathPoint`: fixed in its body (OpenSim's PathPoint);
- `ConditionalPathPoint`: fixed, but part of the path only while a coordinate lies in a range
  (OpenSim's rule: min - 1e-5 <= value <= max + 1e-5);
- `MovingPathPoint`: each location component in its frame is a function of a coordinate, clamped
  to the coordinate's range (OpenSim's MovingPathPoint).

`GeometricPath` gives, as one named casadi Function built once in SX, the length l(q), the exact
lengthening speed l̇(q, u) (from point velocities, moving points included), and the loads a unit
tension applies: body wrenches (6 x nb, as `trajopt.core.multibody.dynamics`: moment about the body
origin and force, ground axes) and the generalized forces moving points add (their location
depends on q, so tension does work through that coordinate; Sherman et al. 2010 flag this).
Wrap objects: cylinders, spheres, ellipsoids and tori as OpenSim computes them (exact mode,
`trajopt.model.paths.wrapping`), or closed-form and twice differentiable for optimization (smooth mode,
`trajopt.model.paths.wrapping.smooth.SmoothWrapping`: lengths and −∂l/∂q; the loads stay exact mode's).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import cached_property

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody.bodies import GROUND
from trajopt.core.multibody.functions import CoordinateFunction
from trajopt.core.multibody.kinematics import body_pose, coordinate_rates_matrix, point_velocity
from trajopt.core.multibody.dynamics import point_force, zero_wrenches
from trajopt.model.osim import spec
from trajopt.model.osim.build import coordinate_function
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_report import PathsWithDomain
from trajopt.model.paths.wrapping.forces import (generalized_force_moment_arms,
                                                 length_and_generalized_force_moment_arms, unit_tension_loads)
from trajopt.model.paths.wrapping.implicit import WrapDerivatives
from trajopt.model.paths.wrapping.path import wrapped_path
from trajopt.model.paths.wrapping.surfaces import path_wraps, unsupported_wraps

# OpenSim's ConditionalPathPoint::isActive widens the range by this much on both sides.
CONDITIONAL_RANGE_TOLERANCE = 1e-5


class GeometricPathWarning(UserWarning):
    """A geometric path leaves out something its model file has (wrap objects)."""


def _vector3(value, what) -> tuple[float, float, float]:
    v = np.asarray(value, dtype=float).reshape(-1)
    if v.size != 3 or not np.all(np.isfinite(v)):
        raise TrajoptInputError(f"{what}: expected 3 finite numbers, got {value!r}")
    return tuple(float(x) for x in v)


@dataclass(frozen=True)
class FixedPathPoint:
    """A point fixed at `location` (m, body frame) on `body` ('ground' allowed)."""

    name: str
    body: str
    location: tuple[float, float, float]

    def __post_init__(self):
        object.__setattr__(self, "location", _vector3(self.location, f"path point '{self.name}' location"))

    def location_in_body(self, model, q):
        return ca.DM(self.location)

    def active(self, model, q):
        return 1


@dataclass(frozen=True)
class ConditionalPathPoint(FixedPathPoint):
    """A fixed point that is on the path only while `coordinate` lies in `range` (inclusive,
    widened by OpenSim's 1e-5)."""

    coordinate: str = ""
    range: tuple[float, float] = (0.0, 0.0)

    def active(self, model, q):
        value = q[_coordinate_index(model, self.coordinate, self.name)]
        low, high = self.range
        return ca.logic_and(value >= low - CONDITIONAL_RANGE_TOLERANCE, value <= high + CONDITIONAL_RANGE_TOLERANCE)


@dataclass(frozen=True)
class MovingPathPoint:
    """A point whose location in a frame fixed to `body` (axes `frame_rotation`, origin
    `frame_origin`, both in the body frame) has components `functions[k](coordinates[k])`;
    a component without coordinate is `fixed[k]`. Coordinates are clamped to their ranges."""

    name: str
    body: str
    coordinates: tuple[str | None, str | None, str | None]
    functions: tuple[CoordinateFunction | None, CoordinateFunction | None, CoordinateFunction | None]
    fixed: tuple[float, float, float] = (0.0, 0.0, 0.0)
    frame_rotation: tuple = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    frame_origin: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def location_in_body(self, model, q):
        components = []
        for k in range(3):
            name, function = self.coordinates[k], self.functions[k]
            if name and function is not None:
                coordinate = _coordinate(model, name, self.name)
                value = q[_coordinate_index(model, name, self.name)]
                low, high = coordinate.range
                if np.isfinite(low):
                    value = ca.fmax(value, low)
                if np.isfinite(high):
                    value = ca.fmin(value, high)
                components.append(function(value))
            elif function is not None:
                components.append(function(0.0))
            else:
                components.append(self.fixed[k])
        local = ca.vertcat(*components)
        return ca.DM(self.frame_origin) + ca.mtimes(ca.DM(np.asarray(self.frame_rotation, dtype=float)), local)

    def active(self, model, q):
        return 1


PathPoint = FixedPathPoint | ConditionalPathPoint | MovingPathPoint


def _coordinate_index(model, name, point):
    if name not in model.coordinate_names:
        raise TrajoptInputError(f"path point '{point}': coordinate '{name}' is not a scalar coordinate of model "
                                f"'{model.name}' (coordinates: {list(model.coordinate_names)})")
    return model.coordinate_index(name)


def _coordinate(model, name, point):
    for c in model.coordinates:
        if c.name == name:
            return c
    raise TrajoptInputError(f"path point '{point}': model '{model.name}' has no coordinate '{name}'")


def point_position_in_ground(model, q, point):
    c = point.location_in_body(model, q)
    if point.body == GROUND:
        return c
    rotation, origin = body_pose(model, q, point.body)
    return origin + ca.mtimes(rotation, c)


def _safe(name):
    return re.sub(r"\W", "_", name)


class GeometricPath:
    """A muscle path of straight segments between `points` on the bodies of `model`."""

    def __init__(self, model, points, name: str = "path", wraps=(), smoothing=None,
                 derivatives: WrapDerivatives = WrapDerivatives.UNROLLED):
        self.model = model.finalize()
        self.derivatives = derivatives  # how exact mode's wrap solves are differentiated
        self.points = tuple(points)
        self.name = str(name)
        self.wraps = tuple(wraps)  # trajopt.model.paths.wrapping.surfaces.PathWrapEntry, in PathWrapSet order
        self.smoothing = smoothing  # trajopt.model.paths.wrapping.smooth.SmoothWrapping, or None: exact mode
        if len(self.points) < 2:
            raise TrajoptInputError(f"geometric path '{self.name}': needs >= 2 points, got {len(self.points)}")
        for p in self.points:
            if not isinstance(p, (FixedPathPoint, MovingPathPoint)):
                raise TrajoptInputError(f"geometric path '{self.name}': {p!r} is not a path point "
                                        f"(FixedPathPoint, ConditionalPathPoint or MovingPathPoint)")
            if p.body != GROUND:
                self.model.body_index(p.body)  # raises for an unknown body

    def _segments(self, q):
        """Candidate segments (i, j, weight): weight is 1 when i and j are consecutive active points."""
        active = [p.active(self.model, q) for p in self.points]
        always = [isinstance(a, int) for a in active]
        segments = []
        for i in range(len(self.points)):
            for j in range(i + 1, len(self.points)):
                weight = active[i] * active[j] if not (always[i] and always[j]) else 1
                for m in range(i + 1, j):
                    weight = weight * (1 - active[m])
                segments.append((i, j, weight))
                if always[j]:
                    break  # no segment skips a point that is always active
        return segments

    @cached_property
    def function(self) -> ca.Function:
        """casadi Function (q, u) -> (length, lengthening_speed, wrenches, generalized_forces) for
        unit tension; wrenches 6 x nb and generalized_forces (from moving points) nv."""
        model = self.model
        q = ca.SX.sym("q", model.nq)
        u = ca.SX.sym("u", model.nv)
        n_matrix = coordinate_rates_matrix(model, q)
        qdot = ca.mtimes(n_matrix, u)
        locations, positions, velocities, rotations = [], [], [], []
        for p in self.points:
            c = p.location_in_body(model, q)
            rate = ca.jtimes(c, q, qdot) if ca.depends_on(ca.SX(c), q) else ca.DM.zeros(3, 1)
            if p.body == GROUND:
                rotation, origin = ca.DM.eye(3), ca.DM.zeros(3, 1)
                velocity = rate
            else:
                rotation, origin = body_pose(model, q, p.body)
                velocity = point_velocity(model, q, u, p.body, c) + ca.mtimes(rotation, rate)
            locations.append(c)
            rotations.append(rotation)
            positions.append(origin + ca.mtimes(rotation, c))
            velocities.append(velocity)
        if any(w.surface.active for w in self.wraps):
            length = self._wrapped_length_expression(q, positions)
            gradient = ca.jacobian(length, q)
            return ca.Function(
                f"geometric_path_{_safe(self.name)}", [q, u],
                [length, ca.mtimes(gradient, qdot), zero_wrenches(model), -ca.mtimes(n_matrix.T, gradient.T)],
                ["q", "u"], ["length", "lengthening_speed", "wrenches", "generalized_forces"])
        length = 0
        speed = 0
        wrenches = zero_wrenches(model)
        generalized = ca.SX.zeros(model.nv, 1)
        for i, j, weight in self._segments(q):
            first, second = self.points[i], self.points[j]
            if first.body == second.body and not isinstance(first, MovingPathPoint) \
                    and not isinstance(second, MovingPathPoint):
                # Both ends fixed on one body: a constant length, no speed, loads that cancel.
                length = length + weight * float(np.linalg.norm(np.subtract(second.location, first.location)))
                continue
            delta = positions[j] - positions[i]
            distance = ca.norm_2(delta)
            if not isinstance(weight, int):
                # A segment that is off may join coincident points: keep its NaN out of the sums.
                distance = ca.if_else(weight, distance, 1.0)
            direction = delta / distance
            length = length + weight * distance
            speed = speed + weight * ca.dot(direction, velocities[j] - velocities[i])
            # Tension pulls each end of the segment toward the other.
            for k, force in ((i, weight * direction), (j, -weight * direction)):
                point = self.points[k]
                if point.body == GROUND:
                    continue
                wrenches = wrenches + point_force(model, q, point.body, locations[k], force)
                if isinstance(point, MovingPathPoint):
                    # Work done as the point slides over its body: f = N^T (dc/dq)^T R^T F.
                    dc_dq = ca.jacobian(locations[k], q)
                    local_force = ca.mtimes(rotations[k].T, force)
                    generalized = generalized + ca.mtimes(n_matrix.T, ca.mtimes(dc_dq.T, local_force))
        return ca.Function(
            f"geometric_path_{_safe(self.name)}",
            [q, u],
            [length, speed, wrenches, generalized],
            ["q", "u"],
            ["length", "lengthening_speed", "wrenches", "generalized_forces"],
            {"cse": True},
        )

    def wrapped_path(self, q, positions=None):
        """OpenSim's wrapped path at q as a `trajopt.model.paths.wrapping.path.SlotPath`."""
        if positions is None:
            positions = [point_position_in_ground(self.model, q, p) for p in self.points]
        active = [p.active(self.model, q) for p in self.points]
        single = len(self.wraps) == 1
        placed = [w.surface.placed(self.model, q, single, w.first,
                                   len(self.points) - 1 if w.last is None else w.last, w.method, self.derivatives)
                  for w in self.wraps]
        return wrapped_path(positions, active, placed)

    def wrapped_length(self, q, positions=None):
        return self.wrapped_path(q, positions).length()

    def smooth_wrapped_length(self, q, positions=None):
        """Smooth mode's length (`trajopt.model.paths.wrapping.smooth`): the straight segments plus each active wrap
        object's blended excess on the first segment of its point range it wraps (later ones weighted by how far
        the earlier ones are not engaged)."""
        if positions is None:
            positions = [point_position_in_ground(self.model, q, p) for p in self.points]
        segments = self._segments(q)
        total = sum(weight * ca.norm_2(positions[j] - positions[i]) for i, j, weight in segments)
        for entry in self.wraps:
            excess = entry.surface.smooth_excess(self.smoothing)
            if excess is None:
                continue
            rotation, origin = entry.surface.frame(self.model, q)
            last = len(self.points) - 1 if entry.last is None else entry.last
            free = 1
            for i, j, weight in segments:
                if entry.first <= i and j <= last:
                    local = [ca.mtimes(rotation.T, positions[k] - origin) for k in (i, j)]
                    added, engaged = excess(*local)
                    total = total + free * weight * added
                    free = free * (1 - weight * engaged)
        return total

    def _wrapped_length_expression(self, q, positions=None):
        if self.smoothing is None:
            return self.wrapped_length(q, positions)
        return self.smooth_wrapped_length(q, positions)

    def generalized_force_moment_arms(self, q):
        """Moment arms by the generalized-force method, as OpenSim's GeometryPath::computeMomentArm: the
        generalized forces (nv) a unit tension applies along the path's straight segments, each tangent
        point held fixed on its wrap object's body. Equal to −∂l/∂q without wrapping; with wrapping they
        differ wherever OpenSim's path is not length-minimal (see `trajopt.model.paths.wrapping.forces`)."""
        if not any(w.surface.active for w in self.wraps):
            return -ca.mtimes(coordinate_rates_matrix(self.model, q).T, ca.jacobian(self.length(q), q).T)
        return generalized_force_moment_arms(self, q)

    @cached_property
    def generalized_force_function(self) -> ca.Function:
        """casadi Function q -> (length, moment arms by the generalized-force method, nv), built once in SX; for a
        wrapped path both come from one wrapped path (`trajopt.model.paths.wrapping.forces`)."""
        q = ca.SX.sym("q", self.model.nq)
        if any(w.surface.active for w in self.wraps):
            length, arms = length_and_generalized_force_moment_arms(self, q)
        else:
            length, arms = self.length(q), self.generalized_force_moment_arms(q)
        return ca.Function(f"geometric_path_{_safe(self.name)}_force", [q], [length, arms], ["q"],
                           ["length", "moment_arms"])

    def length(self, q):
        """Path length l(q) (m)."""
        if any(w.surface.active for w in self.wraps):
            return self.wrapped_length_function(q)
        return self.function(q, ca.DM.zeros(self.model.nv))[0]

    @cached_property
    def wrapped_length_function(self) -> ca.Function:
        """casadi Function q -> the wrapped path's length, built once in SX (callable on numbers too: the path's
        selections evaluate both branches, so it is never evaluated as numbers directly)."""
        q = ca.SX.sym("q", self.model.nq)
        # No common-subexpression pass: on paths with several wrap objects it takes up to minutes, and the
        # evaluation time is that of the wrap objects' nodes anyway.
        return ca.Function(f"geometric_path_{_safe(self.name)}_length", [q], [self._wrapped_length_expression(q)],
                           ["q"], ["length"])

    def lengthening_speed(self, q, u):
        """l̇(q, u) (m/s), exact from the velocities of the path points."""
        return self.function(q, u)[1]

    def unit_tension_loads(self, q):
        """(wrenches 6 x nb, generalized forces nv) a tension of 1 N applies to the model: forces on the bodies
        at the path points (and at the tangent points of a wrapped path, on the wrap object's body), and the
        generalized forces of moving points. Their generalized forces are OpenSim's computeMomentArm."""
        wrenches, generalized = self.loads_function(q)
        return ca.reshape(wrenches, 6, len(self.model.bodies)), generalized

    @cached_property
    def loads_function(self) -> ca.Function:
        """casadi Function q -> (wrenches as a 6 nb vector, body by body; generalized forces nv) of a unit tension
        (a wrapped path's from `trajopt.model.paths.wrapping.forces.unit_tension_loads`)."""
        q = ca.SX.sym("q", self.model.nq)
        if any(w.surface.active for w in self.wraps):
            wrenches, generalized = unit_tension_loads(self, q)
            # No cse pass, as wrapped_length_function (slower still on the loads' larger graph)
            return ca.Function(f"geometric_path_{_safe(self.name)}_loads", [q], [ca.vec(wrenches), generalized],
                               ["q"], ["wrenches", "generalized_forces"])
        result = self.function(q, ca.DM.zeros(self.model.nv))
        return ca.Function(f"geometric_path_{_safe(self.name)}_loads", [q], [ca.vec(result[2]), result[3]],
                           ["q"], ["wrenches", "generalized_forces"], {"cse": True})

    def __repr__(self):
        return f"GeometricPath({self.name!r}, points={len(self.points)})"


def _path_point(osim_model, point, muscle):
    if isinstance(point, spec.MovingPathPoint):
        body, rotation, origin = osim_model.frames.pose(point.frame)
        names = (point.x_coordinate, point.y_coordinate, point.z_coordinate)
        specs = (point.x_location, point.y_location, point.z_location)
        return MovingPathPoint(
            name=point.name,
            body=body,
            coordinates=tuple(n or None for n in names),
            functions=tuple(None if f is None else coordinate_function(f) for f in specs),
            fixed=tuple(point.location),
            frame_rotation=tuple(map(tuple, np.asarray(rotation, dtype=float))),
            frame_origin=tuple(float(v) for v in origin),
        )
    body_point = osim_model.point(point.frame, point.location)
    if isinstance(point, spec.ConditionalPathPoint):
        if not point.coordinate:
            raise TrajoptInputError(f"{osim_model.spec.file}: muscle '{muscle}' ConditionalPathPoint "
                                    f"'{point.name}' names no coordinate")
        return ConditionalPathPoint(point.name, body_point.body, body_point.location,
                                    coordinate=point.coordinate, range=tuple(point.range))
    return FixedPathPoint(point.name, body_point.body, body_point.location)


def geometric_path(osim_model, muscle: str, wrapping: bool = True, smoothing=None,
                   derivatives: WrapDerivatives = WrapDerivatives.UNROLLED) -> GeometricPath:
    """The geometric path of `muscle` of a loaded .osim model (`trajopt.model.osim.load_osim`).

    With `wrapping` (default) the path wraps over its cylinders, spheres, ellipsoids and tori as OpenSim computes it
    (`trajopt.model.paths.wrapping`). With `wrapping` False a wrapped path is straight segments between its points:
    then `GeometricPathWarning` says so. `smoothing` (a `trajopt.model.paths.wrapping.smooth.SmoothWrapping`) selects
    smooth mode for the wrapped length; `derivatives` how exact mode's wrap solves are differentiated
    (`trajopt.model.paths.wrapping.implicit`).
    """
    return element_geometric_path(osim_model, osim_model.muscle(muscle), wrapping, smoothing, derivatives)


def element_geometric_path(osim_model, element, wrapping: bool = True, smoothing=None,
                           derivatives: WrapDerivatives = WrapDerivatives.UNROLLED) -> GeometricPath:
    """The geometric path of any element of a loaded model with a ``name`` and a ``path``
    (``trajopt.model.osim.spec.GeometryPath``): a muscle, a PathSpring or a PathActuator (see `geometric_path`)."""
    spec_muscle = element
    muscle = element.name
    points = [_path_point(osim_model, p, muscle) for p in spec_muscle.path.points]
    if spec_muscle.path.wraps:
        unsupported = unsupported_wraps(osim_model, spec_muscle)
        if unsupported or not wrapping:
            names = [w.wrap_object for w in spec_muscle.path.wraps]
            why = (f"trajopt does not model wrapping over {', '.join(unsupported)} yet" if wrapping and unsupported
                   else "wrapping is switched off")
            warnings.warn(f"{osim_model.spec.file}: muscle '{muscle}' wraps over {names}; {why}, so its geometric "
                          f"path ignores wrap objects (use a fitted surrogate for the wrapped length)",
                          GeometricPathWarning, stacklevel=2)
            return GeometricPath(osim_model.multibody, points, name=muscle)
    path = GeometricPath(osim_model.multibody, points, name=muscle, wraps=path_wraps(osim_model, spec_muscle),
                         smoothing=smoothing, derivatives=derivatives)
    if smoothing is not None:
        for entry in path.wraps:
            try:
                entry.surface.smooth_excess(smoothing)
            except TrajoptInputError as error:
                raise TrajoptInputError(f"{osim_model.spec.file}: muscle '{muscle}': {error}") from None
    return path


def geometric_paths(osim_model, wrapping: bool = True, smoothing=None,
                    derivatives: WrapDerivatives = WrapDerivatives.UNROLLED) -> tuple[GeometricPath, ...]:
    """Geometric paths of every muscle of the model, in file order (see `geometric_path`)."""
    return tuple(geometric_path(osim_model, m.name, wrapping, smoothing, derivatives) for m in osim_model.muscles)


class GeometricPaths(PathsWithDomain):
    """The .osim's own geometric paths of every muscle as ``MusclePaths``: lengths and moment arms −∂l/∂q.

    Straight segments between the path points (conditional and moving points included), wrapped over
    cylinders, spheres, ellipsoids and tori as OpenSim computes it (`trajopt.model.paths.wrapping`). Muscles whose wrap
    objects are ignored (``wrapping=False``) warn (``GeometricPathWarning``) and are
    listed in ``wrapped_muscles``. ``smoothing`` (`trajopt.model.paths.wrapping.smooth.SmoothWrapping`): smooth mode,
    for optimization (moment arms −∂l/∂q of the smooth length).
    """

    def __init__(self, osim_model, wrapping: bool = True, generalized_force_moment_arms: bool = False,
                 smoothing=None):
        # Moment arms: −∂l/∂q by default (the muscle's generalized force is then −T ∂l/∂q, so its power equals
        # −T l̇ and fiber kinematics and forces agree); with ``generalized_force_moment_arms``, OpenSim's
        # computeMomentArm, from the tangent points alone (the forces and lengthening speeds OpenSim's muscles
        # use): their derivatives are first derivatives of the wrap solves, taken by the implicit function
        # theorem (`trajopt.model.paths.wrapping.implicit`; not for exact Hessians).
        self.generalized_force = bool(generalized_force_moment_arms)
        if self.generalized_force and smoothing is not None:
            raise TrajoptInputError("geometric paths: generalized-force moment arms are exact mode's; smooth mode "
                                    "gives −∂l/∂q of its length")
        self.smoothing = smoothing
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", GeometricPathWarning)
            derivatives = WrapDerivatives.IMPLICIT if self.generalized_force else WrapDerivatives.UNROLLED
            self.paths = geometric_paths(osim_model, wrapping, smoothing, derivatives)
        self.wrapped_muscles = tuple(p.name for p, m in zip(self.paths, osim_model.muscles)
                                     if m.path.wraps and not p.wraps)
        for warning in caught:
            warnings.warn(warning.message, warning.category, stacklevel=2)
        self.multibody = osim_model.multibody

    @property
    def muscles(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.paths)

    def check_domain(self, q, coordinates, times=None, where: str = "motion") -> None:
        """Geometric paths hold at every configuration: nothing to check."""

    @property
    def domain(self) -> PathDomain:
        return PathDomain.everywhere("geometric paths hold at every configuration")

    def lengths_and_moment_arms_function(self, coordinates) -> ca.Function:
        """q (the model's coordinates) -> (lengths, −∂l/∂q)."""
        if tuple(coordinates) != tuple(self.multibody.coordinate_names):
            raise TrajoptInputError(f"geometric paths take the model's coordinates {self.multibody.coordinate_names}, "
                                    f"got {tuple(coordinates)}")
        q = ca.SX.sym("q", self.multibody.nq)
        if self.generalized_force:
            both = [p.generalized_force_function(q) for p in self.paths]
            lengths = ca.vertcat(*[length for length, _ in both])
            arms = ca.horzcat(*[arms for _, arms in both]).T
        else:
            lengths = ca.vertcat(*[p.length(q) for p in self.paths])
            arms = -ca.jacobian(lengths, q)
        return ca.Function("geometric_paths", [q], [lengths, arms], ["q"], ["lengths", "moment_arms"])
