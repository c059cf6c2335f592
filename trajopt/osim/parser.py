"""Parse an OpenSim 4 ``.osim`` file into a `trajopt.osim.spec.ModelSpec` (xml.etree only, no OpenSim).

An element trajopt cannot represent and that changes the dynamics (an unknown joint, force or
constraint type) raises `trajopt.errors.ModelFileError` naming it and its path in the file.
Optional elements and properties trajopt does not use are collected in ``ModelSpec.ignored`` and
reported in one `OsimIgnoredWarning`; visual-only elements (geometry, appearance) are skipped
without a warning.
"""

from __future__ import annotations

import math
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

from trajopt.errors import ModelFileError
from trajopt.osim import spec

# Visual-only elements: skipped without a warning.
VISUAL_ELEMENTS = frozenset(
    {"FrameGeometry", "frame_geometry", "attached_geometry", "Appearance", "VisibleObject", "display",
     "force_visualization_radius", "force_visualization_scale_factor", "groups", "credits", "publications"}
)

MUSCLE_PARAMETERS = {
    "DeGrooteFregly2016Muscle": spec.DeGrooteFregly2016Parameters,
    "Thelen2003Muscle": spec.Thelen2003Parameters,
    "Millard2012EquilibriumMuscle": spec.Millard2012Parameters,
}

# OpenSim 4.6 defaults of the properties common to the supported muscles (per model where they differ).
_MUSCLE_DEFAULTS = {
    "DeGrooteFregly2016Muscle": dict(min_control=0.0, activation_time_constant=0.015,
                                     deactivation_time_constant=0.06, default_activation=0.5),
    "Thelen2003Muscle": dict(min_control=0.01, activation_time_constant=0.015,
                             deactivation_time_constant=0.05, default_activation=0.05),
    "Millard2012EquilibriumMuscle": dict(min_control=0.01, activation_time_constant=0.01,
                                         deactivation_time_constant=0.04, default_activation=0.05),
}

_JOINT_TYPES = {
    "WeldJoint": spec.WeldJoint, "PinJoint": spec.PinJoint, "SliderJoint": spec.SliderJoint,
    "PlanarJoint": spec.PlanarJoint, "UniversalJoint": spec.UniversalJoint, "BallJoint": spec.BallJoint,
    "FreeJoint": spec.FreeJoint, "CustomJoint": spec.CustomJoint,
}

# Motion type of each coordinate of the fixed-axis joints, in OpenSim's coordinate order.
_JOINT_MOTION = {
    "WeldJoint": (), "PinJoint": ("rotational",), "SliderJoint": ("translational",),
    "PlanarJoint": ("rotational", "translational", "translational"),
    "UniversalJoint": ("rotational", "rotational"), "BallJoint": ("rotational",) * 3,
    "FreeJoint": ("rotational",) * 3 + ("translational",) * 3,
}

_FUNCTIONS = ("Constant", "LinearFunction", "PolynomialFunction", "SimmSpline", "MultiplierFunction",
              "NaturalCubicSpline")


class OsimIgnoredWarning(UserWarning):
    """Elements of a model file that trajopt read past (listed with their paths)."""


def _label(element: ET.Element) -> str:
    name = element.get("name")
    return f"{element.tag}[{name}]" if name else element.tag


class _Reader:
    """Reads one file, remembering where it is (for messages) and what it skipped."""

    def __init__(self, file: str):
        self.file = file
        self.ignored: list[str] = []

    def error(self, where: str, message: str) -> ModelFileError:
        return ModelFileError(f"{self.file}: {where}: {message}")

    def text(self, element: ET.Element, where: str) -> str:
        return (element.text or "").strip().strip("()").strip()

    def numbers(self, element: ET.Element, where: str, count: int | None = None) -> tuple[float, ...]:
        text = self.text(element, where)
        try:
            values = tuple(float(v) for v in text.replace(",", " ").split())
        except ValueError:
            raise self.error(where, f"expected numbers, got '{text}'") from None
        if count is not None and len(values) != count:
            raise self.error(where, f"expected {count} numbers, got {len(values)} ('{text}')")
        return values

    def value(self, element: ET.Element, where: str, default):
        """Parse ``element`` as the type of ``default``: bool, float, str, tuple of floats (that many)
        or list (any number of floats, returned as a tuple)."""
        if isinstance(default, bool):
            text = self.text(element, where).lower()
            if text not in ("true", "false"):
                raise self.error(where, f"expected true or false, got '{text}'")
            return text == "true"
        if isinstance(default, (int, float)):
            return self.numbers(element, where, 1)[0]
        if isinstance(default, list):  # any number of values
            return self.numbers(element, where)
        if isinstance(default, tuple):
            return self.numbers(element, where, len(default) or None)
        return self.text(element, where)

    def properties(self, element: ET.Element, where: str, schema: dict, handled=()) -> dict:
        """Read the children named in ``schema`` (name -> default); report the rest as ignored."""
        values = dict(schema)
        for child in element:
            if not isinstance(child.tag, str):
                continue
            child_where = f"{where}/{_label(child)}"
            if child.tag in schema:
                values[child.tag] = self.value(child, child_where, schema[child.tag])
            elif child.tag not in handled and child.tag not in VISUAL_ELEMENTS:
                self.ignored.append(child_where)
        return values

    def ignore_unless_empty(self, element: ET.Element, where: str) -> None:
        """A set that trajopt does not use: list each object it holds as ignored."""
        for _, child_where in members(element, where):
            self.ignored.append(child_where)


def members(set_element: ET.Element | None, where: str) -> list[tuple[ET.Element, str]]:
    """The members of an OpenSim Set with their paths: children of ``<objects>`` or, in some
    files, direct children of the set."""
    if set_element is None:
        return []
    inner = set_element.find("objects")
    if inner is not None:
        where = f"{where}/objects"
    found = list(inner) if inner is not None else list(set_element)
    return [(m, f"{where}/{_label(m)}") for m in found
            if isinstance(m.tag, str) and m.tag not in ("objects", "groups")]


def resolve_path(owner: str, path: str) -> str:
    """Absolute component path of socket value ``path`` written inside the component at ``owner``."""
    path = path.strip()
    if path.startswith("/"):
        parts = []
    else:
        parts = [p for p in owner.split("/") if p]
    for piece in path.split("/"):
        if piece in ("", "."):
            continue
        if piece == "..":
            if parts:
                parts.pop()
        else:
            parts.append(piece)
    return "/" + "/".join(parts)


# --- functions ---------------------------------------------------------------------------------


def parse_function(reader: _Reader, element: ET.Element, where: str) -> spec.CoordinateFunction:
    """One of OpenSim's Function elements (the element itself, not its container)."""
    tag = element.tag
    if tag == "Constant":
        return spec.Constant(reader.properties(element, where, {"value": 0.0})["value"])
    if tag == "LinearFunction":
        coefficients = reader.properties(element, where, {"coefficients": (1.0, 0.0)})["coefficients"]
        return spec.LinearFunction(slope=coefficients[0], intercept=coefficients[1])
    if tag == "PolynomialFunction":
        return spec.PolynomialFunction(tuple(reader.properties(element, where, {"coefficients": [1.0]})["coefficients"]))
    if tag in ("SimmSpline", "NaturalCubicSpline"):
        values = reader.properties(element, where, {"x": [], "y": []})
        if len(values["x"]) != len(values["y"]) or len(values["x"]) < 2:
            raise reader.error(where, f"spline needs >= 2 knots and as many x as y (got {len(values['x'])} x, "
                               f"{len(values['y'])} y)")
        kind = spec.SimmSpline if tag == "SimmSpline" else spec.NaturalCubicSpline
        return kind(x=tuple(values["x"]), y=tuple(values["y"]))
    if tag == "MultiplierFunction":
        values = reader.properties(element, where, {"scale": 1.0}, handled=("function",))
        inner = element.find("function")
        members = [c for c in inner if isinstance(c.tag, str)] if inner is not None else []
        if len(members) != 1:
            raise reader.error(where, "MultiplierFunction needs exactly one function")
        return spec.MultiplierFunction(parse_function(reader, members[0], f"{where}/function/{_label(members[0])}"),
                                       values["scale"])
    raise reader.error(where, f"unsupported function type '{tag}' (supported: {', '.join(_FUNCTIONS)})")


def _function_child(reader: _Reader, container: ET.Element, where: str):
    """The single Function element inside ``container`` (e.g. a TransformAxis or x_location)."""
    for child in container:
        if isinstance(child.tag, str) and (child.tag in _FUNCTIONS or child.tag.endswith(("Function", "Spline"))):
            return parse_function(reader, child, f"{where}/{_label(child)}")
    return None


# --- bodies, frames, joints ----------------------------------------------------------------------


def parse_offset_frame(reader, element, owner, where) -> spec.OffsetFrame:
    values = reader.properties(element, where, {"socket_parent": "", "translation": (0.0,) * 3,
                                                "orientation": (0.0,) * 3})
    if not values["socket_parent"]:
        raise reader.error(where, "PhysicalOffsetFrame without socket_parent")
    path = resolve_path(owner, element.get("name", ""))
    # A socket path is written relative to the frame itself.
    return spec.OffsetFrame(name=element.get("name", ""), path=path,
                            parent=resolve_path(path, values["socket_parent"]),
                            translation=values["translation"], orientation=values["orientation"])


def parse_body(reader, element, where, frames: list) -> spec.Body:
    name = element.get("name", "")
    path = f"/bodyset/{name}"
    values = reader.properties(element, where, {"mass": 0.0, "mass_center": (0.0,) * 3, "inertia": (0.0,) * 6},
                               handled=("WrapObjectSet", "components"))
    if math.isnan(values["mass"]) or values["mass"] < 0:
        raise reader.error(f"{where}/mass", f"mass must be >= 0, got {values['mass']}")
    inertia = values["inertia"]
    for child in element.findall("components"):
        for frame in child:
            _component(reader, frame, path, f"{where}/components/{_label(frame)}", frames=frames)
    return spec.Body(name=name, path=path, mass=values["mass"], mass_center=values["mass_center"],
                     inertia=tuple(inertia))


def parse_wrap_objects(reader, body_element, frame_path, where) -> list[spec.WrapObject]:
    wraps = []
    for wrap_set in body_element.findall("WrapObjectSet"):
        for element, wrap_where in members(wrap_set, f"{where}/WrapObjectSet"):
            dimensions = []
            common = {"active": True, "translation": (0.0,) * 3, "xyz_body_rotation": (0.0,) * 3,
                      "quadrant": "all"}
            values = dict(common)
            for child in element:
                if not isinstance(child.tag, str) or child.tag in VISUAL_ELEMENTS:
                    continue
                child_where = f"{wrap_where}/{child.tag}"
                if child.tag in common:
                    values[child.tag] = reader.value(child, child_where, common[child.tag])
                else:
                    try:
                        dimensions.append((child.tag, reader.numbers(child, child_where)))
                    except ModelFileError:
                        reader.ignored.append(child_where)
            wraps.append(spec.WrapObject(name=element.get("name", ""), kind=element.tag, frame=frame_path,
                                         translation=values["translation"],
                                         xyz_body_rotation=values["xyz_body_rotation"], quadrant=values["quadrant"],
                                         active=values["active"], dimensions=tuple(dimensions)))
    return wraps


def parse_coordinate(reader, element, joint, motion_type, where) -> spec.Coordinate:
    values = reader.properties(element, where, {"default_value": 0.0, "default_speed_value": 0.0,
                                                "range": (-10.0, 10.0), "clamped": False, "locked": False,
                                                "prescribed": False}, handled=("prescribed_function",
                                                                               "is_free_to_satisfy_constraints"))
    prescribed_function = element.find("prescribed_function")
    if values["prescribed"] and prescribed_function is not None and len(prescribed_function):
        raise reader.error(where, "prescribed coordinates are not supported")
    return spec.Coordinate(name=element.get("name", ""), joint=joint, motion_type=motion_type,
                           default_value=values["default_value"],
                           default_speed_value=values["default_speed_value"], range=values["range"],
                           clamped=values["clamped"], locked=values["locked"], prescribed=values["prescribed"])


def _custom_motion_types(axes: list[spec.TransformAxis], names: list[str]) -> list[str]:
    """OpenSim's rule: rotational if only rotation axes use the coordinate, translational if only
    translation axes do, coupled when both do or when a function other than a unit-slope line is used."""
    kinds = []
    for name in names:
        used = [(i < 3, axis.function) for i, axis in enumerate(axes) if name in axis.coordinates]
        rotations = {is_rotation for is_rotation, _ in used}
        unit_slope = all(isinstance(f, spec.LinearFunction) and f.slope == 1.0 for _, f in used)
        if len(rotations) != 1 or not unit_slope:
            kinds.append("coupled")
        else:
            kinds.append("rotational" if rotations == {True} else "translational")
    return kinds


def parse_joint(reader, element, where, frames: list) -> spec.Joint:
    tag = element.tag
    if tag not in _JOINT_TYPES:
        raise reader.error(where, f"unsupported joint type '{tag}' (supported: {', '.join(_JOINT_TYPES)})")
    name = element.get("name", "")
    path = f"/jointset/{name}"
    values = reader.properties(element, where, {"socket_parent_frame": "", "socket_child_frame": ""},
                               handled=("coordinates", "frames", "SpatialTransform", "components"))
    for container in ("frames", "components"):
        for child in element.findall(container):
            for frame in child:
                _component(reader, frame, path, f"{where}/{container}/{_label(frame)}", frames=frames)
    coordinate_elements = [c for c in element.findall("coordinates/Coordinate")]
    axes = []
    if tag == "CustomJoint":
        transform = element.find("SpatialTransform")
        if transform is None:
            raise reader.error(where, "CustomJoint without SpatialTransform")
        by_name = {axis.get("name"): axis for axis in transform.findall("TransformAxis")}
        order = ("rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3")
        for axis_name in order:
            axis_element = by_name.get(axis_name)
            axis_where = f"{where}/SpatialTransform/TransformAxis[{axis_name}]"
            if axis_element is None:  # OpenSim fills a missing axis with a zero constant
                default_axis = [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)][order.index(axis_name) % 3]
                axes.append(spec.TransformAxis(axis_name, (), default_axis, spec.Constant(0.0)))
                continue
            axis_values = reader.properties(axis_element, axis_where, {"coordinates": "", "axis": (0.0,) * 3},
                                            handled=_FUNCTIONS + ("function",))
            function = _function_child(reader, axis_element, axis_where)
            if function is None and axis_element.find("function") is not None:
                function = _function_child(reader, axis_element.find("function"), axis_where + "/function")
            coordinates = tuple(axis_values["coordinates"].split())
            if function is None:
                function = spec.LinearFunction(1.0, 0.0) if coordinates else spec.Constant(0.0)
            if len(coordinates) > 1:
                raise reader.error(axis_where, "transform axes of more than one coordinate are not supported")
            axes.append(spec.TransformAxis(axis_name, coordinates, axis_values["axis"], function))
        motion = _custom_motion_types(axes, [c.get("name", "") for c in coordinate_elements])
    else:
        motion = _JOINT_MOTION[tag]
        if len(coordinate_elements) not in (0, len(motion)):
            raise reader.error(where, f"{tag} needs {len(motion)} coordinates, the file lists "
                               f"{len(coordinate_elements)}")
        if not coordinate_elements and motion:
            raise reader.error(where, f"{tag} without its {len(motion)} coordinates")
    coordinates = tuple(
        parse_coordinate(reader, c, name, kind, f"{where}/coordinates/{_label(c)}")
        for c, kind in zip(coordinate_elements, motion)
    )
    for label in ("socket_parent_frame", "socket_child_frame"):
        if not values[label]:
            raise reader.error(where, f"missing {label}")
    extra = {"spatial_transform": tuple(axes)} if tag == "CustomJoint" else {}
    return _JOINT_TYPES[tag](name=name, parent_frame=resolve_path(path, values["socket_parent_frame"]),
                             child_frame=resolve_path(path, values["socket_child_frame"]),
                             coordinates=coordinates, **extra)


# --- forces and other components -----------------------------------------------------------------


def _coordinate_name(socket: str) -> str:
    """Coordinate name from a socket path (``/jointset/knee_r/knee_angle_r`` -> ``knee_angle_r``)."""
    return socket.strip().rstrip("/").split("/")[-1]


def parse_path_point(reader, element, owner, where) -> spec.PathPoint:
    name = element.get("name", "")
    base = {"socket_parent_frame": "", "location": (0.0,) * 3}
    own_path = f"{owner}/{name}"
    if element.tag == "PathPoint":
        values = reader.properties(element, where, base)
        frame = resolve_path(own_path, values["socket_parent_frame"])
        return spec.PathPoint(name, frame, values["location"])
    if element.tag == "ConditionalPathPoint":
        values = reader.properties(element, where, {**base, "socket_coordinate": "", "coordinate": "",
                                                    "range": (0.0, 0.0)})
        coordinate = _coordinate_name(values["socket_coordinate"] or values["coordinate"])
        return spec.ConditionalPathPoint(name, resolve_path(own_path, values["socket_parent_frame"]),
                                         values["location"], coordinate=coordinate, range=values["range"])
    if element.tag == "MovingPathPoint":
        sockets = {f"socket_{axis}_coordinate": "" for axis in "xyz"}
        values = reader.properties(element, where, {**base, **sockets},
                                   handled=("x_location", "y_location", "z_location",
                                            "x_coordinate", "y_coordinate", "z_coordinate"))
        functions = {}
        for axis in "xyz":
            container = element.find(f"{axis}_location")
            functions[f"{axis}_location"] = (None if container is None else
                                             _function_child(reader, container, f"{where}/{axis}_location"))
            legacy = element.find(f"{axis}_coordinate")
            socket = values[f"socket_{axis}_coordinate"] or (legacy.text or "" if legacy is not None else "")
            functions[f"{axis}_coordinate"] = _coordinate_name(socket) if socket.strip() else ""
        return spec.MovingPathPoint(name, resolve_path(own_path, values["socket_parent_frame"]),
                                    values["location"], **functions)
    raise reader.error(where, f"unsupported path point type '{element.tag}'")


def parse_geometry_path(reader, element, owner, where) -> spec.GeometryPath:
    if element is None:
        raise reader.error(where, "muscle without GeometryPath")
    reader.properties(element, where, {}, handled=("PathPointSet", "PathWrapSet", "socket_frame"))
    points = tuple(parse_path_point(reader, p, owner, point_where)
                   for p, point_where in members(element.find("PathPointSet"), f"{where}/PathPointSet"))
    wraps = []
    for w, wrap_where in members(element.find("PathWrapSet"), f"{where}/PathWrapSet"):
        values = reader.properties(w, wrap_where,
                                   {"wrap_object": "", "method": "hybrid", "range": (-1.0, -1.0)})
        wraps.append(spec.PathWrap(values["wrap_object"], values["method"], tuple(int(r) for r in values["range"])))
    if len(points) < 2:
        raise reader.error(where, f"a muscle path needs >= 2 points, found {len(points)}")
    return spec.GeometryPath(points, tuple(wraps))


def parse_muscle(reader, element, owner, where) -> spec.Muscle:
    name = element.get("name", "")
    model = element.tag
    parameter_type = MUSCLE_PARAMETERS[model]
    defaults = _MUSCLE_DEFAULTS[model]
    common = {"appliesForce": True, "min_control": defaults["min_control"], "max_control": 1.0,
              "optimal_force": 1.0, "max_isometric_force": 1000.0, "optimal_fiber_length": 0.1,
              "tendon_slack_length": 0.2, "pennation_angle_at_optimal": 0.0, "max_contraction_velocity": 10.0,
              "ignore_tendon_compliance": False, "ignore_activation_dynamics": False,
              "activation_time_constant": defaults["activation_time_constant"],
              "deactivation_time_constant": defaults["deactivation_time_constant"],
              "default_activation": defaults["default_activation"]}
    specific = dict(parameter_type().__dict__)
    values = reader.properties(element, where, {**common, **specific}, handled=("GeometryPath", "path"))
    path_element = element.find("GeometryPath")
    if path_element is None:
        path_element = element.find("path/GeometryPath")
    path = parse_geometry_path(reader, path_element, f"/forceset/{name}", f"{where}/GeometryPath")
    return spec.Muscle(
        name=name, model=model, path=path, applies_force=values.pop("appliesForce"),
        parameters=parameter_type(**{k: values.pop(k) for k in specific}),
        **values,
    )


def parse_coordinate_actuator(reader, element, where) -> spec.CoordinateActuator:
    values = reader.properties(element, where, {"appliesForce": True, "coordinate": "", "optimal_force": 1.0,
                                                "min_control": -math.inf, "max_control": math.inf})
    if not values["coordinate"]:
        raise reader.error(where, "CoordinateActuator without coordinate")
    return spec.CoordinateActuator(name=element.get("name", ""), coordinate=values["coordinate"],
                                   optimal_force=values["optimal_force"], min_control=values["min_control"],
                                   max_control=values["max_control"], applies_force=values["appliesForce"])


def parse_contact_geometry(reader, element, owner, where):
    name = element.get("name", "")
    own_path = f"{owner}/{name}"
    schema = {"socket_frame": "", "location": (0.0,) * 3, "orientation": (0.0,) * 3}
    if element.tag == "ContactSphere":
        values = reader.properties(element, where, {**schema, "radius": 0.0})
        if values["orientation"] != (0.0, 0.0, 0.0):
            reader.ignored.append(f"{where}/orientation")
        return spec.ContactSphere(name, resolve_path(own_path, values["socket_frame"]), values["location"],
                                  values["radius"])
    values = reader.properties(element, where, schema)
    return spec.ContactHalfSpace(name, resolve_path(own_path, values["socket_frame"]), values["location"],
                                 values["orientation"])


def parse_smooth_contact(reader, element, owner, where) -> spec.SmoothSphereHalfSpaceForce:
    name = element.get("name", "")
    own_path = f"{owner}/{name}"
    values = reader.properties(element, where, {
        "appliesForce": True, "socket_sphere": "", "socket_half_space": "", "stiffness": 1.0, "dissipation": 0.0,
        "static_friction": 0.0, "dynamic_friction": 0.0, "viscous_friction": 0.0, "transition_velocity": 0.01,
        "constant_contact_force": 1e-5, "hertz_smoothing": 300.0, "hunt_crossley_smoothing": 50.0})
    return spec.SmoothSphereHalfSpaceForce(
        name=name, sphere=resolve_path(own_path, values.pop("socket_sphere")),
        half_space=resolve_path(own_path, values.pop("socket_half_space")),
        applies_force=values.pop("appliesForce"), **values)


def parse_coupler(reader, element, where) -> spec.CoordinateCouplerConstraint:
    values = reader.properties(element, where, {"isEnforced": True, "independent_coordinate_names": "",
                                                "dependent_coordinate_name": "", "scale_factor": 1.0},
                               handled=("coupled_coordinates_function",))
    container = element.find("coupled_coordinates_function")
    function = None if container is None else _function_child(reader, container, f"{where}/coupled_coordinates_function")
    if function is None:
        raise reader.error(where, "CoordinateCouplerConstraint without coupled_coordinates_function")
    return spec.CoordinateCouplerConstraint(
        name=element.get("name", ""), dependent_coordinate=values["dependent_coordinate_name"],
        independent_coordinates=tuple(values["independent_coordinate_names"].split()), function=function,
        scale_factor=values["scale_factor"], enforced=values["isEnforced"])


def _component(reader, element, owner, where, **out) -> None:
    """Parse any component that may sit in a Set or a ``<components>`` list into ``out``'s lists."""
    tag = element.tag
    if not isinstance(tag, str):
        return
    if tag != "PhysicalOffsetFrame" and "muscles" not in out:
        raise reader.error(where, f"unsupported component type '{tag}' here (only PhysicalOffsetFrame)")
    if tag == "PhysicalOffsetFrame":
        out["frames"].append(parse_offset_frame(reader, element, owner, where))
    elif tag in MUSCLE_PARAMETERS:
        out["muscles"].append(parse_muscle(reader, element, owner, where))
    elif tag == "CoordinateActuator":
        out["actuators"].append(parse_coordinate_actuator(reader, element, where))
    elif tag in ("ContactSphere", "ContactHalfSpace"):
        out["contact_geometry"].append(parse_contact_geometry(reader, element, owner, where))
    elif tag == "SmoothSphereHalfSpaceForce":
        out["contact_forces"].append(parse_smooth_contact(reader, element, owner, where))
    elif tag == "CoordinateCouplerConstraint":
        out["constraints"].append(parse_coupler(reader, element, where))
    else:
        raise reader.error(where, f"unsupported component type '{tag}'")


_MODEL_PROPERTIES = {"gravity": (0.0, -9.80665, 0.0), "length_units": "meters", "force_units": "N"}


def parse_osim(path: str | Path) -> spec.ModelSpec:
    """Read an OpenSim 4 model file into a `ModelSpec`; warn once listing what was ignored."""
    file = str(path)
    reader = _Reader(file)
    try:
        root = ET.parse(file).getroot()
    except (OSError, ET.ParseError) as error:
        raise ModelFileError(f"{file}: cannot read the model file: {error}") from None
    if root.tag != "OpenSimDocument" or root.find("Model") is None:
        raise ModelFileError(f"{file}: not an OpenSim model (root element '{root.tag}', expected "
                             f"OpenSimDocument/Model)")
    version = root.get("Version", "0")
    if not version.isdigit() or int(version) < 40000:
        raise ModelFileError(f"{file}: OpenSimDocument Version={version}: only the OpenSim 4 format "
                             f"(Version >= 40000) is supported; open and save the model in OpenSim 4")
    model = root.find("Model")
    where = f"/OpenSimDocument/Model[{model.get('name', '')}]"
    lists = {key: [] for key in ("frames", "muscles", "actuators", "contact_geometry", "contact_forces",
                                 "constraints")}
    bodies, joints, markers, wrap_objects = [], [], [], []
    handled_sets = ("Ground", "BodySet", "JointSet", "ForceSet", "ConstraintSet", "MarkerSet",
                    "ContactGeometrySet", "ComponentSet", "components", "ControllerSet", "ProbeSet")
    values = reader.properties(model, where, _MODEL_PROPERTIES, handled=handled_sets)
    if values["length_units"] != "meters" or values["force_units"] != "N":
        raise reader.error(where, f"units must be meters and N, the file says {values['length_units']} and "
                           f"{values['force_units']}")
    ground = model.find("Ground")
    if ground is not None:
        reader.properties(ground, f"{where}/Ground", {}, handled=("WrapObjectSet", "components"))
        wrap_objects += parse_wrap_objects(reader, ground, spec.GROUND_PATH, f"{where}/Ground")
        for child in ground.findall("components"):
            for frame in child:
                _component(reader, frame, spec.GROUND_PATH, f"{where}/Ground/components/{_label(frame)}", **lists)
    for element, body_where in members(model.find("BodySet"), f"{where}/BodySet"):
        if element.tag != "Body":
            raise reader.error(body_where, f"unsupported body type '{element.tag}'")
        if element.find("Joint") is not None:
            raise reader.error(body_where, "joint nested in a body (OpenSim 3 format); save the model in OpenSim 4")
        body = parse_body(reader, element, body_where, lists["frames"])
        bodies.append(body)
        wrap_objects += parse_wrap_objects(reader, element, body.path, body_where)
    for element, joint_where in members(model.find("JointSet"), f"{where}/JointSet"):
        joints.append(parse_joint(reader, element, joint_where, lists["frames"]))
    for element, marker_where in members(model.find("MarkerSet"), f"{where}/MarkerSet"):
        marker = reader.properties(element, marker_where, {"socket_parent_frame": "", "location": (0.0,) * 3,
                                                           "fixed": False})
        own_path = f"/markerset/{element.get('name', '')}"
        markers.append(spec.Marker(element.get("name", ""), resolve_path(own_path, marker["socket_parent_frame"]),
                                   marker["location"]))
    for set_name, owner in (("ForceSet", "/forceset"), ("ConstraintSet", "/constraintset"),
                            ("ContactGeometrySet", "/contactgeometryset"), ("ComponentSet", "/componentset")):
        for element, element_where in members(model.find(set_name), f"{where}/{set_name}"):
            _component(reader, element, owner, element_where, **lists)
    for container in model.findall("components"):
        for element in container:
            if isinstance(element.tag, str):
                _component(reader, element, "", f"{where}/components/{_label(element)}", **lists)
    for set_name in ("ControllerSet", "ProbeSet"):
        set_element = model.find(set_name)
        if set_element is not None:
            reader.ignore_unless_empty(set_element, f"{where}/{set_name}")
    result = spec.ModelSpec(
        name=model.get("name", ""), file=file, gravity=values["gravity"], bodies=tuple(bodies),
        frames=tuple(lists["frames"]), joints=tuple(joints), constraints=tuple(lists["constraints"]),
        markers=tuple(markers), wrap_objects=tuple(wrap_objects), muscles=tuple(lists["muscles"]),
        coordinate_actuators=tuple(lists["actuators"]), contact_geometry=tuple(lists["contact_geometry"]),
        contact_forces=tuple(lists["contact_forces"]), ignored=tuple(reader.ignored),
    )
    _check_references(result)
    if reader.ignored:
        warnings.warn(f"{file}: trajopt ignores {len(reader.ignored)} element(s): " + "; ".join(reader.ignored),
                      OsimIgnoredWarning, stacklevel=2)
    return result


def _check_references(model: spec.ModelSpec) -> None:
    """Every frame and coordinate a component names must exist (messages name the component)."""
    frames = {spec.GROUND_PATH} | {b.path for b in model.bodies} | {f.path for f in model.frames}
    coordinates = {c.name for c in model.coordinates}

    def need_frame(path, who):
        if path not in frames:
            raise ModelFileError(f"{model.file}: {who} refers to frame '{path}', which the model does not define")

    for frame in model.frames:
        need_frame(frame.parent, f"PhysicalOffsetFrame {frame.path}")
    for joint in model.joints:
        need_frame(joint.parent_frame, f"joint {joint.name} (socket_parent_frame)")
        need_frame(joint.child_frame, f"joint {joint.name} (socket_child_frame)")
    for marker in model.markers:
        need_frame(marker.frame, f"marker {marker.name}")
    for muscle in model.muscles:
        for point in muscle.path.points:
            need_frame(point.frame, f"muscle {muscle.name} path point {point.name}")
    for actuator in model.coordinate_actuators:
        if actuator.coordinate not in coordinates:
            raise ModelFileError(f"{model.file}: CoordinateActuator {actuator.name} acts on unknown coordinate "
                                 f"'{actuator.coordinate}'")
