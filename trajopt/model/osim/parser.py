"""Parse an OpenSim 4 ``.osim`` file into a `trajopt.model.osim.spec.ModelSpec` (xml.etree only, no OpenSim).

An element trajopt cannot represent and that changes the dynamics (an unknown joint, force or
constraint type) raises `trajopt.errors.ModelFileError` naming it and its path in the file.
Optional elements and properties trajopt does not use are collected in ``ModelSpec.ignored`` and
reported in one `OsimIgnoredWarning`; visual-only elements (geometry, appearance) are skipped
without a warning.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import casadi as ca

from trajopt.errors import ModelFileError
from trajopt.model.osim import spec
from trajopt.model.osim.expressions import parse_expression
from trajopt.model.osim.parse_forces import (
    MUSCLE_PARAMETERS,
    parse_contact_geometry,
    parse_coordinate_actuator,
    parse_coupler,
    parse_coordinate_limit_force,
    parse_expression_force,
    parse_hunt_crossley,
    parse_path_actuator,
    parse_path_spring,
    parse_muscle,
    parse_point_constraint,
    parse_smooth_contact,
    parse_weld_constraint,
)
from trajopt.model.osim.xml_reader import (
    FUNCTIONS,
    VISUAL_ELEMENTS,
    Reader,
    function_child,
    label,
    members,
    read_xml,
    resolve_path,
)

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


class OsimIgnoredWarning(UserWarning):
    """Elements of a model file that trajopt read past (listed with their paths)."""


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
            _component(reader, frame, path, f"{where}/components/{label(frame)}", frames=frames)
    return spec.Body(name=name, path=path, mass=values["mass"], mass_center=values["mass_center"],
                     inertia=tuple(inertia))


_WRAP_TYPES = {"WrapCylinder": (spec.WrapCylinder, {"radius": 1.0, "length": 1.0}),
               "WrapSphere": (spec.WrapSphere, {"radius": 0.05}),
               "WrapEllipsoid": (spec.WrapEllipsoid, {"dimensions": (0.05, 0.05, 0.05)}),
               "WrapTorus": (spec.WrapTorus, {"inner_radius": 0.01, "outer_radius": 0.05})}
# OpenSim 3 display properties of wrap objects (visual only).
_WRAP_VISUAL = frozenset({"display_preference", "color", "visible"})


def parse_wrap_object(reader, element, frame_path, where) -> spec.WrapObject:
    """One wrap object; an unknown type, property or quadrant, or a negative size, is a ModelFileError."""
    if element.tag not in _WRAP_TYPES:
        raise reader.error(where, f"unsupported wrap object type '{element.tag}' (supported: "
                                  f"{', '.join(_WRAP_TYPES)})")
    kind, sizes = _WRAP_TYPES[element.tag]
    schema = {"active": True, "translation": (0.0,) * 3, "xyz_body_rotation": (0.0,) * 3,
              "quadrant": "all", **sizes}
    for child in element:
        if isinstance(child.tag, str) and child.tag not in schema and child.tag not in VISUAL_ELEMENTS \
                and child.tag not in _WRAP_VISUAL:
            raise reader.error(f"{where}/{label(child)}", f"unsupported {element.tag} property '{child.tag}'")
    values = reader.properties(element, where, schema, handled=_WRAP_VISUAL)
    if values["quadrant"] in ("", "Unassigned"):
        values["quadrant"] = "all"
    if values["quadrant"] not in spec.WRAP_QUADRANTS:
        raise reader.error(f"{where}/quadrant", f"quadrant must be all, x, -x, y, -y, z or -z, "
                                               f"got '{values['quadrant']}'")
    for size in sizes:
        numbers = values[size] if isinstance(values[size], tuple) else (values[size],)
        if any(math.isnan(v) or v < 0 for v in numbers):
            raise reader.error(f"{where}/{size}", f"must be >= 0, got {values[size]}")
    if kind is spec.WrapTorus and not 0 < values["inner_radius"] < values["outer_radius"]:
        # OpenSim refuses such a torus when it loads the model (WrapTorus::extendFinalizeFromProperties).
        raise reader.error(f"{where}/outer_radius", f"a WrapTorus needs 0 < inner_radius < outer_radius, got "
                                                    f"inner_radius {values['inner_radius']} and outer_radius "
                                                    f"{values['outer_radius']}")
    return kind(name=element.get("name", ""), frame=frame_path, **values)


def parse_wrap_objects(reader, body_element, frame_path, where) -> list[spec.WrapObject]:
    return [parse_wrap_object(reader, element, frame_path, wrap_where)
            for wrap_set in body_element.findall("WrapObjectSet")
            for element, wrap_where in members(wrap_set, f"{where}/WrapObjectSet")]


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
    """OpenSim's rule (``CustomJoint::extendConnectToModel``): over the six axes in order, an axis that moves
    with the coordinate through a LinearFunction of slope ±1 makes it rotational (rotation axes) or
    translational (translation axes), the last such axis deciding; any other function makes it coupled only
    if no pure axis has typed it. So a knee angle that also drives spline translations is rotational."""
    kinds = []
    for name in names:
        kind = None
        for i, axis in enumerate(axes):
            if name not in axis.coordinates or axis.function is None:
                continue
            function = axis.function
            if isinstance(function, spec.LinearFunction) and abs(function.slope) == 1.0:
                kind = "rotational" if i < 3 else "translational"
            elif kind is None:
                kind = "coupled"
        kinds.append(kind or "coupled")
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
                _component(reader, frame, path, f"{where}/{container}/{label(frame)}", frames=frames)
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
                                            handled=FUNCTIONS + ("function",))
            function = function_child(reader, axis_element, axis_where)
            if function is None and axis_element.find("function") is not None:
                function = function_child(reader, axis_element.find("function"), axis_where + "/function")
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
        parse_coordinate(reader, c, name, kind, f"{where}/coordinates/{label(c)}")
        for c, kind in zip(coordinate_elements, motion)
    )
    for socket in ("socket_parent_frame", "socket_child_frame"):
        if not values[socket]:
            raise reader.error(where, f"missing {socket}")
    extra = {"spatial_transform": tuple(axes)} if tag == "CustomJoint" else {}
    return _JOINT_TYPES[tag](name=name, parent_frame=resolve_path(path, values["socket_parent_frame"]),
                             child_frame=resolve_path(path, values["socket_child_frame"]),
                             coordinates=coordinates, **extra)


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
        out["actuators"].append(parse_coordinate_actuator(reader, element, where, owner))
    elif tag in ("ContactSphere", "ContactHalfSpace"):
        out["contact_geometry"].append(parse_contact_geometry(reader, element, owner, where))
    elif tag == "SmoothSphereHalfSpaceForce":
        out["contact_forces"].append(parse_smooth_contact(reader, element, owner, where))
    elif tag == "CoordinateCouplerConstraint":
        out["constraints"].append(parse_coupler(reader, element, where))
    elif tag == "ExpressionBasedCoordinateForce":
        force = parse_expression_force(reader, element, where)
        if force is not None:
            out["expression_forces"].append(force)
    elif tag == "CoordinateLimitForce":
        _append(out["limit_forces"], parse_coordinate_limit_force(reader, element, where))
    elif tag == "PathSpring":
        _append(out["path_springs"], parse_path_spring(reader, element, owner, where))
    elif tag == "PathActuator":
        _append(out["path_actuators"], parse_path_actuator(reader, element, owner, where))
    elif tag == "HuntCrossleyForce":
        _append(out["hunt_crossley"], parse_hunt_crossley(reader, element, where))
    elif tag == "PointConstraint":
        out["body_constraints"].append(parse_point_constraint(reader, element, where))
    elif tag == "WeldConstraint":
        out["body_constraints"].append(parse_weld_constraint(reader, element, where, out["frames"]))
    elif tag.endswith("Constraint"):
        raise reader.error(where, f"unsupported constraint type '{tag}' (supported: {', '.join(CONSTRAINT_TYPES)})")
    else:
        raise reader.error(where, f"unsupported component type '{tag}'")


def _append(found: list, force) -> None:
    if force is not None:  # None: the file switches it off (appliesForce false)
        found.append(force)


CONSTRAINT_TYPES = ("CoordinateCouplerConstraint", "PointConstraint", "WeldConstraint")

_MODEL_PROPERTIES = {"gravity": (0.0, -9.80665, 0.0), "length_units": "meters", "force_units": "N"}


def parse_osim(path: str | Path) -> spec.ModelSpec:
    """Read an OpenSim 4 model file into a `ModelSpec`; warn once listing what was ignored."""
    file = str(path)
    reader = Reader(file)
    root = read_xml(file, "the model file")
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
                                 "constraints", "body_constraints", "expression_forces", "limit_forces",
                                 "path_springs", "path_actuators", "hunt_crossley")}
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
                _component(reader, frame, spec.GROUND_PATH, f"{where}/Ground/components/{label(frame)}", **lists)
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
                _component(reader, element, "", f"{where}/components/{label(element)}", **lists)
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
        body_constraints=tuple(lists["body_constraints"]), expression_forces=tuple(lists["expression_forces"]),
        coordinate_limit_forces=tuple(lists["limit_forces"]), path_springs=tuple(lists["path_springs"]),
        path_actuators=tuple(lists["path_actuators"]), hunt_crossley_forces=tuple(lists["hunt_crossley"]),
    )
    _check_references(result)
    if reader.ignored:
        warnings.warn(ignored_summary(file, reader.ignored), OsimIgnoredWarning, stacklevel=2)
    return result


def check_expression(force: spec.ExpressionBasedCoordinateForce) -> None:
    """Parse the force's expression once (a one-line TrajoptInputError naming the element and the text if it
    cannot be read)."""
    parse_expression(force.expression, {"q": ca.SX.sym("q"), "qdot": ca.SX.sym("qdot")},
                     f"{force.source or 'model'}: ExpressionBasedCoordinateForce '{force.name}'")


def constraint_frames(constraint) -> tuple[tuple[str, str], ...]:
    """(socket, frame path) pairs a PointConstraint or WeldConstraint refers to."""
    if isinstance(constraint, spec.PointConstraint):
        return (("socket_body_1", constraint.body1), ("socket_body_2", constraint.body2))
    return (("socket_frame1", constraint.frame1), ("socket_frame2", constraint.frame2))


def ignored_summary(file, ignored, examples: int = 3) -> str:
    """One short line: how many elements of each kind were ignored, with a few of their paths. The full list is
    the parsed model's ``spec.ignored``."""
    kinds: dict[str, list[str]] = {}
    for path in ignored:
        tag = path.rstrip("/").split("/")[-1].split("[")[0]
        kinds.setdefault(tag, []).append(path)
    parts = [f"{len(paths)} {tag}" for tag, paths in sorted(kinds.items(), key=lambda item: -len(item[1]))]
    shown = "; ".join(path.split("/", 2)[-1] if path.count("/") > 2 else path for path in ignored[:examples])
    more = f" (+{len(ignored) - examples} more in the model's spec.ignored)" if len(ignored) > examples else ""
    return f"{file}: trajopt ignores {len(ignored)} element(s): {', '.join(parts)}; e.g. {shown}{more}"


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
    def need_coordinate(name, who):
        if name not in coordinates:
            raise ModelFileError(f"{model.file}: {who} refers to coordinate '{name}', which the model does not define")

    for actuator in model.coordinate_actuators:
        need_coordinate(actuator.coordinate, f"CoordinateActuator {actuator.name}")
    for muscle in model.muscles:
        for point in muscle.path.points:
            used = (getattr(point, "coordinate", ""), getattr(point, "x_coordinate", ""),
                    getattr(point, "y_coordinate", ""), getattr(point, "z_coordinate", ""))
            for name in filter(None, used):
                need_coordinate(name, f"muscle {muscle.name} path point {point.name}")
    for constraint in model.constraints:
        for name in (constraint.dependent_coordinate,) + constraint.independent_coordinates:
            need_coordinate(name, f"CoordinateCouplerConstraint {constraint.name}")
    for force in model.expression_forces:
        need_coordinate(force.coordinate, f"ExpressionBasedCoordinateForce {force.name}")
        check_expression(force)
    for force in model.coordinate_limit_forces:
        need_coordinate(force.coordinate, f"CoordinateLimitForce {force.name}")
    for force in model.path_springs + model.path_actuators:
        for point in force.path.points:
            need_frame(point.frame, f"{type(force).__name__} {force.name} path point {point.name}")
    geometry = {g.name for g in model.contact_geometry}
    for force in model.hunt_crossley_forces:
        for contact in force.contacts:
            for name in contact.geometry:
                if name not in geometry:
                    raise ModelFileError(f"{model.file}: HuntCrossleyForce {force.name} names contact geometry "
                                         f"'{name}', which the model does not define")
    for constraint in model.body_constraints:
        for role, path in constraint_frames(constraint):
            need_frame(path, f"{type(constraint).__name__} {constraint.name} ({role})")
    wraps = {w.name for w in model.wrap_objects}
    for muscle in model.muscles:
        for wrap in muscle.path.wraps:
            if wrap.wrap_object not in wraps:
                raise ModelFileError(f"{model.file}: muscle {muscle.name} wraps over '{wrap.wrap_object}', which no "
                                     f"body defines")
