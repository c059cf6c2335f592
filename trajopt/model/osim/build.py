"""Turn a parsed `ModelSpec` into a `trajopt.core.multibody.Model` plus points fixed on its bodies.

Offset frames (possibly nested: a frame on a frame on a body) are composed down to their body, so
every joint frame, marker, path point and contact sphere becomes a body name and a location in
that body's frame. OpenSim's joints map to trajopt.core.multibody's joints of the same name; a
BallJoint/FreeJoint becomes a unit-quaternion joint (4 coordinates, 3 angular-velocity speeds)
instead of OpenSim's three X-Y-Z angles.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trajopt.errors import ModelFileError
from trajopt.core.multibody import constraints as mbc, functions as mbf, joints as mbj
from trajopt.core.multibody.bodies import GROUND, Body, OffsetFrame
from trajopt.core.multibody.coordinates import Coordinate
from trajopt.core.multibody.model import Model
from trajopt.core.multibody.rotations import rotation_to_euler, xyz_body_fixed_rotation
from trajopt.model.osim import spec


@dataclass(frozen=True)
class BodyPoint:
    """A point fixed on ``body`` ('ground' for the ground), at ``location`` in the body frame (m)."""

    body: str
    location: tuple[float, float, float]


@dataclass(frozen=True)
class ContactSphereOnBody:
    """A ContactSphere resolved to its body: center in the body frame and radius (m)."""

    name: str
    body: str
    center: tuple[float, float, float]
    radius: float


@dataclass(frozen=True)
class ContactHalfSpaceOnBody:
    """A ContactHalfSpace resolved to its body: the solid is {x : normal . (x - point) <= 0}
    (Simbody's half space occupies x > 0 of its own frame, so the outward normal is its -x axis)."""

    name: str
    body: str
    point: tuple[float, float, float]
    normal: tuple[float, float, float]


def coordinate_function(function: spec.CoordinateFunction) -> mbf.CoordinateFunction:
    """The trajopt.core.multibody function (casadi-callable, with derivative) for an OpenSim function."""
    if isinstance(function, spec.Constant):
        return mbf.Constant(function.value)
    if isinstance(function, spec.LinearFunction):
        return mbf.Linear(function.slope, function.intercept)
    if isinstance(function, spec.PolynomialFunction):
        return mbf.Polynomial(tuple(function.coefficients))
    if isinstance(function, spec.SimmSpline):
        return mbf.SimmSpline(function.x, function.y)
    if isinstance(function, spec.NaturalCubicSpline):
        return mbf.NaturalCubicSpline(function.x, function.y)
    if isinstance(function, spec.MultiplierFunction):
        return mbf.Multiplier(coordinate_function(function.function), function.scale)
    raise ModelFileError(f"no trajopt function for {type(function).__name__}")


class FrameResolver:
    """Composes OpenSim frame paths down to (body, rotation in body, origin in body)."""

    def __init__(self, model_spec: spec.ModelSpec):
        self._file = model_spec.file
        self._bodies = {b.path: b.name for b in model_spec.bodies}
        self._bodies[spec.GROUND_PATH] = GROUND
        self._frames = {f.path: f for f in model_spec.frames}
        self._cache: dict[str, tuple[str, np.ndarray, np.ndarray]] = {}

    def pose(self, path: str, _seen=()) -> tuple[str, np.ndarray, np.ndarray]:
        """(body name, R_body_frame, p_body_frame) of the frame at ``path``."""
        if path in self._bodies:
            return self._bodies[path], np.eye(3), np.zeros(3)
        if path in self._cache:
            return self._cache[path]
        if path not in self._frames:
            raise ModelFileError(f"{self._file}: frame '{path}' is not defined in the model")
        if path in _seen:
            raise ModelFileError(f"{self._file}: offset frames form a loop through '{path}'")
        frame = self._frames[path]
        body, rotation, origin = self.pose(frame.parent, _seen + (path,))
        own = np.array(xyz_body_fixed_rotation(frame.orientation), dtype=float)
        result = (body, rotation @ own, origin + rotation @ np.asarray(frame.translation))
        self._cache[path] = result
        return result

    def offset_frame(self, path: str) -> OffsetFrame:
        """The trajopt.core.multibody OffsetFrame (fixed to a body) equivalent to OpenSim's frame ``path``."""
        body, rotation, origin = self.pose(path)
        return OffsetFrame(body=body, translation=tuple(origin), orientation=tuple(rotation_to_euler("XYZ", rotation)),
                           name=path.rsplit("/", 1)[-1])

    def point(self, path: str, location) -> BodyPoint:
        """``location`` given in frame ``path``, as a point on that frame's body."""
        body, rotation, origin = self.pose(path)
        return BodyPoint(body, tuple(float(v) for v in origin + rotation @ np.asarray(location, dtype=float)))


def _coordinate(c: spec.Coordinate) -> Coordinate:
    return Coordinate(name=c.name, default_value=c.default_value, range=tuple(c.range), locked=c.locked,
                      rotational=c.motion_type != "translational")


def _joint(joint: spec.Joint, frames: FrameResolver) -> mbj.Joint:
    parent = frames.offset_frame(joint.parent_frame)
    child = frames.offset_frame(joint.child_frame)
    coordinates = tuple(_coordinate(c) for c in joint.coordinates)
    if isinstance(joint, spec.WeldJoint):
        return mbj.WeldJoint(joint.name, parent, child)
    if isinstance(joint, spec.PinJoint):
        return mbj.PinJoint(joint.name, parent, child, coordinates[0])
    if isinstance(joint, spec.SliderJoint):
        return mbj.SliderJoint(joint.name, parent, child, coordinates[0])
    if isinstance(joint, spec.PlanarJoint):
        return mbj.PlanarJoint(joint.name, parent, child, coordinates)
    if isinstance(joint, spec.UniversalJoint):
        return mbj.UniversalJoint(joint.name, parent, child, coordinates)
    if isinstance(joint, spec.BallJoint):
        return mbj.BallJoint(joint.name, parent, child)
    if isinstance(joint, spec.FreeJoint):
        return mbj.FreeJoint(joint.name, parent, child, translation_coordinates=coordinates[3:6])
    if isinstance(joint, spec.CustomJoint):
        axes = tuple(mbj.TransformAxis(axis=a.axis, coordinates=a.coordinates, function=coordinate_function(a.function))
                     for a in joint.spatial_transform)
        return mbj.CustomJoint(joint.name, parent, child, coordinates, axes)
    raise ModelFileError(f"joint '{joint.name}': no trajopt joint for {type(joint).__name__}")


def build_multibody(model_spec: spec.ModelSpec) -> Model:
    """The trajopt.core.multibody Model (bodies, joints, gravity) described by ``model_spec``; its constraints
    are built apart (``build_constraints``)."""
    frames = FrameResolver(model_spec)
    model = Model(name=model_spec.name, gravity=model_spec.gravity)
    for body in model_spec.bodies:
        model.add_body(Body(name=body.name, mass=body.mass, center_of_mass=body.mass_center, inertia=body.inertia))
    for joint in model_spec.joints:
        model.add_joint(_joint(joint, frames))
    return model.finalize()


def contact_geometry(model_spec: spec.ModelSpec, frames: FrameResolver):
    """Contact spheres and half spaces resolved to their bodies."""
    spheres, half_spaces = [], []
    for geometry in model_spec.contact_geometry:
        if isinstance(geometry, spec.ContactSphere):
            point = frames.point(geometry.frame, geometry.location)
            spheres.append(ContactSphereOnBody(geometry.name, point.body, point.location, geometry.radius))
        else:
            body, rotation, origin = frames.pose(geometry.frame)
            own = np.array(xyz_body_fixed_rotation(geometry.orientation), dtype=float)
            point = origin + rotation @ np.asarray(geometry.location)
            normal = rotation @ own @ np.array([-1.0, 0.0, 0.0])
            half_spaces.append(ContactHalfSpaceOnBody(geometry.name, body, tuple(map(float, point)),
                                                      tuple(map(float, normal))))
    return tuple(spheres), tuple(half_spaces)


def build_constraints(model_spec: spec.ModelSpec, frames: FrameResolver) -> tuple:
    """The enforced constraints as ``trajopt.core.multibody.constraints`` objects: CoordinateCouplerConstraints
    (in file order), then PointConstraints and WeldConstraints (in file order). OpenSim numbers its
    multipliers in ConstraintSet order, which is the same unless the file lists a coupler after a point or
    weld constraint."""
    built = []
    for c in model_spec.constraints:
        if not c.enforced:
            continue
        if len(c.independent_coordinates) != 1:
            raise ModelFileError(f"{model_spec.file}: CoordinateCouplerConstraint '{c.name}' has independent "
                                 f"coordinates {list(c.independent_coordinates)}; trajopt supports exactly one")
        built.append(mbc.CoordinateCoupler(c.name, c.dependent_coordinate, c.independent_coordinates[0],
                                           coordinate_function(c.function), c.scale_factor))
    for c in model_spec.body_constraints:
        if not c.enforced:
            continue
        if isinstance(c, spec.PointConstraint):
            p1, p2 = frames.point(c.body1, c.location1), frames.point(c.body2, c.location2)
            built.append(mbc.PointConstraint(c.name, p1.body, p1.location, p2.body, p2.location))
        else:
            built.append(mbc.WeldConstraint(c.name, frames.offset_frame(c.frame1), frames.offset_frame(c.frame2)))
    return tuple(built)


def enforced_constraint_names(model_spec: spec.ModelSpec) -> dict[str, list[str]]:
    """Names of the enforced constraints by OpenSim type (empty when there are none)."""
    names: dict[str, list[str]] = {}
    for c in model_spec.constraints + model_spec.body_constraints:
        if c.enforced:
            names.setdefault(type(c).__name__, []).append(c.name)
    return names
