"""Wrap surfaces placed on bodies, made from a loaded .osim model's wrap objects."""

from __future__ import annotations

from dataclasses import dataclass

import casadi as ca
import numpy as np

from trajopt.errors import ModelFileError, TrajoptInputError
from trajopt.core.multibody.bodies import GROUND
from trajopt.core.multibody.kinematics import body_pose
from trajopt.core.multibody.rotations import xyz_body_fixed_rotation
from trajopt.model.osim import spec
from trajopt.model.paths.wrapping.cylinder import cylinder_wrap
from trajopt.model.paths.wrapping.ellipsoid import ellipsoid_wrap
from trajopt.model.paths.wrapping.implicit import WrapDerivatives
from trajopt.model.paths.wrapping.path import PlacedWrap
from trajopt.model.paths.wrapping.smooth import cylinder_excess, ellipsoid_excess, sphere_excess
from trajopt.model.paths.wrapping.sphere import sphere_wrap
from trajopt.model.paths.wrapping.torus import torus_wrap


@dataclass(frozen=True)
class Cylinder:
    radius: float
    length: float

    def wrap_function(self, axis, sign, single_wrap, method, derivatives):
        return cylinder_wrap(self.radius, self.length, axis, sign, single_wrap)

    def smooth_excess(self, axis, sign, smoothing):
        return cylinder_excess(self.radius, self.length, axis, sign, smoothing)


@dataclass(frozen=True)
class Sphere:
    radius: float

    def wrap_function(self, axis, sign, single_wrap, method, derivatives):
        return sphere_wrap(self.radius, axis, sign)

    def smooth_excess(self, axis, sign, smoothing):
        return sphere_excess(self.radius, axis, sign, smoothing.band)


@dataclass(frozen=True)
class Ellipsoid:
    radii: tuple[float, float, float]

    def wrap_function(self, axis, sign, single_wrap, method, derivatives):
        return ellipsoid_wrap(self.radii, axis, sign, method, derivatives)

    def smooth_excess(self, axis, sign, smoothing):
        return ellipsoid_excess(self.radii, axis, sign, smoothing.band)


@dataclass(frozen=True)
class Torus:
    inner_radius: float
    outer_radius: float

    def wrap_function(self, axis, sign, single_wrap, method, derivatives):
        return torus_wrap(self.inner_radius, self.outer_radius, axis, sign, single_wrap)

    def smooth_excess(self, axis, sign, smoothing):
        raise TrajoptInputError("smooth wrapping does not model WrapTorus (use the exact mode)")


@dataclass(frozen=True)
class Inactive:
    """An inactive wrap object of a shape trajopt does not wrap over yet: it only holds its place in the
    PathWrapSet (OpenSim counts it in its passes)."""

    kind: str

    def wrap_function(self, axis, sign, single_wrap, method, derivatives):
        return None

    def smooth_excess(self, axis, sign, smoothing):
        return None


def quadrant_axis_sign(quadrant: str) -> tuple[int, int]:
    """(axis 0-2, sign -1/0/1) of an OpenSim quadrant name; sign 0 is 'all'."""
    name = quadrant.strip().lower()
    if name in ("all", "", "unassigned"):
        return 0, 0
    sign = -1 if name.startswith("-") else 1
    return "xyz".index(name.lstrip("+-")), sign


@dataclass(frozen=True)
class WrapSurface:
    """A wrap object on `body` (or ground): its frame's axes `rotation` and origin `translation` in the
    body frame, its shape, quadrant and whether it is active."""

    name: str
    body: str
    rotation: tuple
    translation: tuple[float, float, float]
    shape: Cylinder | Sphere | Ellipsoid | Torus | Inactive
    quadrant: str = "all"
    active: bool = True

    def frame(self, model, q):
        """(axes, origin) of the wrap frame in ground, expressions of q."""
        rotation = ca.DM(np.asarray(self.rotation, dtype=float))
        translation = ca.DM(self.translation)
        if self.body == GROUND:
            return rotation, translation
        body_rotation, body_origin = body_pose(model, q, self.body)
        return ca.mtimes(body_rotation, rotation), body_origin + ca.mtimes(body_rotation, translation)

    def placed(self, model, q, single_wrap: bool, first: int, last: int, method: str = "hybrid",
               derivatives: WrapDerivatives = WrapDerivatives.UNROLLED) -> PlacedWrap:
        """The wrap at q (`derivatives`: how its iterative solves are differentiated)."""
        axis, sign = quadrant_axis_sign(self.quadrant)
        rotation, origin = self.frame(model, q)
        return PlacedWrap(self.shape.wrap_function(axis, sign, single_wrap, method, derivatives), rotation, origin,
                          first, last, self.active)

    def smooth_excess(self, smoothing):
        """casadi Function (p1, p2) (wrap frame) -> the segment's blended excess length in smooth mode
        (`trajopt.model.paths.wrapping.smooth`), None for an inactive object."""
        if not self.active:
            return None
        axis, sign = quadrant_axis_sign(self.quadrant)
        try:
            return self.shape.smooth_excess(axis, sign, smoothing)
        except TrajoptInputError as error:
            raise TrajoptInputError(f"wrap object '{self.name}': {error}") from None


@dataclass(frozen=True)
class PathWrapEntry:
    """One PathWrap of a path: the surface, the 0-based point range (None: to the path's end) and method."""

    surface: WrapSurface
    first: int = 0
    last: int | None = None
    method: str = "hybrid"


_SHAPES = {
    spec.WrapCylinder: lambda w: Cylinder(w.radius, w.length),
    spec.WrapSphere: lambda w: Sphere(w.radius),
    spec.WrapEllipsoid: lambda w: Ellipsoid(tuple(float(r) for r in w.dimensions)),
    spec.WrapTorus: lambda w: Torus(float(w.inner_radius), float(w.outer_radius)),
}


def wrap_surface(osim_model, wrap: spec.WrapObject) -> WrapSurface:
    """The WrapSurface of one of a loaded model's wrap objects (ModelFileError for shapes not yet
    supported)."""
    if type(wrap) not in _SHAPES and wrap.active:
        raise ModelFileError(f"{osim_model.spec.file}: {wrap.kind} '{wrap.name}': wrapping over a {wrap.kind} is "
                             f"not supported yet (supported: WrapCylinder, WrapSphere, WrapEllipsoid, WrapTorus)")
    body, rotation, origin = osim_model.frames.pose(wrap.frame)
    own = np.asarray(xyz_body_fixed_rotation(wrap.xyz_body_rotation), dtype=float)
    return WrapSurface(wrap.name, body, tuple(map(tuple, rotation @ own)),
                       tuple(float(v) for v in origin + rotation @ np.asarray(wrap.translation)),
                       _SHAPES[type(wrap)](wrap) if type(wrap) in _SHAPES else Inactive(wrap.kind), wrap.quadrant,
                       wrap.active)


def unsupported_wraps(osim_model, muscle) -> tuple[str, ...]:
    """"WrapX 'name'"-style names of a muscle's active wrap objects that trajopt cannot wrap over (none of the
    parser's types: WrapCylinder, WrapSphere, WrapEllipsoid and WrapTorus are all modelled)."""
    objects = {w.name: w for w in osim_model.spec.wrap_objects}
    return tuple(f"{objects[w.wrap_object].kind} '{w.wrap_object}'" for w in muscle.path.wraps
                 if type(objects[w.wrap_object]) not in _SHAPES and objects[w.wrap_object].active)


def path_wraps(osim_model, muscle) -> tuple[PathWrapEntry, ...]:
    """The PathWrap entries of a muscle of a loaded model, in order."""
    objects = {w.name: w for w in osim_model.spec.wrap_objects}  # inactive ones stay: they count in OpenSim's passes
    n_points = len(muscle.path.points)
    entries = []
    for path_wrap in muscle.path.wraps:
        start, end = path_wrap.range
        first = 0 if start < 1 else start - 1
        last = n_points - 1 if end < 1 else end - 1
        if not (0 <= first <= last < n_points):
            raise ModelFileError(f"{osim_model.spec.file}: muscle '{muscle.name}' PathWrap over "
                                 f"'{path_wrap.wrap_object}': range {path_wrap.range} is outside its "
                                 f"{n_points} path points")
        entries.append(PathWrapEntry(wrap_surface(osim_model, objects[path_wrap.wrap_object]), first, last,
                                     path_wrap.method))
    return tuple(entries)
