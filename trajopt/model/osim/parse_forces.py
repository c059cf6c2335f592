"""Parse the force elements of an OpenSim model (muscles with their paths, CoordinateActuators, contact geometry,
SmoothSphereHalfSpaceForces, HuntCrossleyForces, ExpressionBasedCoordinateForces, CoordinateLimitForces, PathSprings,
PathActuators) and its constraints into spec objects."""

from __future__ import annotations

import math

from trajopt.model.osim import spec
from trajopt.model.osim.xml_reader import function_child, label, members, resolve_path

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
                                             function_child(reader, container, f"{where}/{axis}_location"))
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
        method = values["method"].lower() if values["method"] != "Unassigned" else "hybrid"
        if method not in ("hybrid", "midpoint", "axial"):
            raise reader.error(f"{wrap_where}/method", f"method must be hybrid, midpoint or axial, "
                                                       f"got '{values['method']}'")
        if any(r != int(r) for r in values["range"]):
            raise reader.error(f"{wrap_where}/range", f"expected two integers, got {values['range']}")
        wraps.append(spec.PathWrap(values["wrap_object"], method, tuple(int(r) for r in values["range"])))
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
    if path_element is None:
        other = [c.tag for c in element if isinstance(c.tag, str) and c.tag.endswith("Path")]
        if other:
            raise reader.error(f"{where}/{other[0]}", f"unsupported path type '{other[0]}' (only GeometryPath)")
    path = parse_geometry_path(reader, path_element, f"/forceset/{name}", f"{where}/GeometryPath")
    return spec.Muscle(
        name=name, model=model, path=path, applies_force=values.pop("appliesForce"),
        parameters=parameter_type(**{k: values.pop(k) for k in specific}),
        component_path=f"{owner}/{name}", **values,
    )


def parse_coordinate_actuator(reader, element, where, owner: str = "") -> spec.CoordinateActuator:
    values = reader.properties(element, where, {"appliesForce": True, "coordinate": "", "optimal_force": 1.0,
                                                "min_control": -math.inf, "max_control": math.inf})
    if not values["coordinate"]:
        raise reader.error(where, "CoordinateActuator without coordinate")
    return spec.CoordinateActuator(name=element.get("name", ""), coordinate=values["coordinate"],
                                   optimal_force=values["optimal_force"], min_control=values["min_control"],
                                   max_control=values["max_control"], applies_force=values["appliesForce"],
                                   component_path=f"{owner}/{element.get('name', '')}")


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
    function = None if container is None else function_child(reader, container, f"{where}/coupled_coordinates_function")
    if function is None:
        raise reader.error(where, "CoordinateCouplerConstraint without coupled_coordinates_function")
    return spec.CoordinateCouplerConstraint(
        name=element.get("name", ""), dependent_coordinate=values["dependent_coordinate_name"],
        independent_coordinates=tuple(values["independent_coordinate_names"].split()), function=function,
        scale_factor=values["scale_factor"], enforced=values["isEnforced"])



def parse_point_constraint(reader, element, where) -> spec.PointConstraint:
    values = reader.properties(element, where, {"isEnforced": True, "socket_body_1": "", "socket_body_2": "",
                                                "location_body_1": (0.0, 0.0, 0.0),
                                                "location_body_2": (0.0, 0.0, 0.0)})
    own_path = f"/constraintset/{element.get('name', '')}"
    return spec.PointConstraint(
        name=element.get("name", ""), body1=resolve_path(own_path, values["socket_body_1"]),
        location1=values["location_body_1"], body2=resolve_path(own_path, values["socket_body_2"]),
        location2=values["location_body_2"], enforced=values["isEnforced"])


def parse_weld_constraint(reader, element, where, frames: list) -> spec.WeldConstraint:
    """A WeldConstraint; the offset frames it owns (its <frames>) are appended to ``frames``."""
    from trajopt.model.osim.parser import parse_offset_frame  # here: trajopt.model.osim.parser imports this module

    values = reader.properties(element, where, {"isEnforced": True, "socket_frame1": "", "socket_frame2": ""},
                               handled=("frames",))
    own_path = f"/constraintset/{element.get('name', '')}"
    for container in element.findall("frames"):
        for frame in container:
            if isinstance(frame.tag, str):
                if frame.tag != "PhysicalOffsetFrame":
                    raise reader.error(f"{where}/frames", f"unsupported frame type '{frame.tag}' (only "
                                       f"PhysicalOffsetFrame)")
                frames.append(parse_offset_frame(reader, frame, own_path, f"{where}/frames/{label(frame)}"))
    return spec.WeldConstraint(
        name=element.get("name", ""), frame1=resolve_path(own_path, values["socket_frame1"]),
        frame2=resolve_path(own_path, values["socket_frame2"]), enforced=values["isEnforced"])


def parse_expression_force(reader, element, where) -> spec.ExpressionBasedCoordinateForce | None:
    """An ExpressionBasedCoordinateForce (None when it does not apply force)."""
    values = reader.properties(element, where, {"appliesForce": True, "coordinate": "", "expression": ""})
    if not values["coordinate"] or not values["expression"]:
        raise reader.error(where, "ExpressionBasedCoordinateForce needs <coordinate> and <expression>")
    if not values["appliesForce"]:
        return None
    return spec.ExpressionBasedCoordinateForce(element.get("name", ""), values["coordinate"], values["expression"],
                                               f"{reader.file}: {where}")


def parse_coordinate_limit_force(reader, element, where) -> spec.CoordinateLimitForce | None:
    """A CoordinateLimitForce with OpenSim 4.6's defaults (None when it does not apply force)."""
    values = reader.properties(element, where, {
        "appliesForce": True, "coordinate": "", "upper_stiffness": 1.0, "upper_limit": 0.0, "lower_stiffness": 1.0,
        "lower_limit": 0.0, "damping": 0.001, "transition": 0.1, "compute_dissipation_energy": False})
    if not values["coordinate"]:
        raise reader.error(where, "CoordinateLimitForce without <coordinate>")
    for key in ("upper_stiffness", "lower_stiffness", "transition"):
        if not values[key] > 0:
            # OpenSim divides by both stiffnesses (the damping's transition) and by the transition width.
            raise reader.error(f"{where}/{key}", f"must be > 0, got {values[key]}")
    if not values.pop("appliesForce"):
        return None
    values.pop("compute_dissipation_energy")
    return spec.CoordinateLimitForce(name=element.get("name", ""), source=f"{reader.file}: {where}", **values)


def _force_path(reader, element, owner, where) -> spec.GeometryPath:
    """The GeometryPath of a path force (written directly or inside ``<path>``)."""
    name = element.get("name", "")
    path_element = element.find("GeometryPath")
    if path_element is None:
        path_element = element.find("path/GeometryPath")
    if path_element is None:
        raise reader.error(where, f"{element.tag} without a GeometryPath (other path types are not supported)")
    return parse_geometry_path(reader, path_element, f"{owner}/{name}", f"{where}/GeometryPath")


def parse_path_spring(reader, element, owner, where) -> spec.PathSpring | None:
    """A PathSpring (None when it does not apply force); OpenSim leaves its three numbers unset (NaN) by default."""
    values = reader.properties(element, where, {"appliesForce": True, "resting_length": math.nan,
                                                "stiffness": math.nan, "dissipation": math.nan},
                               handled=("GeometryPath", "path"))
    for key in ("resting_length", "stiffness", "dissipation"):
        if not values[key] >= 0:
            raise reader.error(f"{where}/{key}", f"must be a number >= 0, got {values[key]}")
    path = _force_path(reader, element, owner, where)
    if not values.pop("appliesForce"):
        return None
    return spec.PathSpring(name=element.get("name", ""), path=path, source=f"{reader.file}: {where}", **values)


def parse_path_actuator(reader, element, owner, where) -> spec.PathActuator | None:
    """A PathActuator (None when it does not apply force)."""
    values = reader.properties(element, where, {"appliesForce": True, "optimal_force": 1.0,
                                                "min_control": -math.inf, "max_control": math.inf},
                               handled=("GeometryPath", "path"))
    path = _force_path(reader, element, owner, where)
    if not values.pop("appliesForce"):
        return None
    return spec.PathActuator(name=element.get("name", ""), path=path, source=f"{reader.file}: {where}", **values)


def parse_hunt_crossley(reader, element, where) -> spec.HuntCrossleyForce | None:
    """A HuntCrossleyForce with its ``HuntCrossleyForce::ContactParametersSet`` (None when it does not apply force)."""
    parameter_set = "HuntCrossleyForce::ContactParametersSet"
    values = reader.properties(element, where, {"appliesForce": True, "transition_velocity": 0.001},
                               handled=(parameter_set,))
    contacts = []
    for container in (c for c in element if c.tag == parameter_set):
        for member, member_where in members(container, f"{where}/{label(container)}"):
            parameters = reader.properties(member, member_where, {
                "geometry": "", "stiffness": 0.0, "dissipation": 0.0, "static_friction": 0.0,
                "dynamic_friction": 0.0, "viscous_friction": 0.0})
            contacts.append(spec.HuntCrossleyContact(geometry=tuple(parameters.pop("geometry").split()), **parameters))
    if not values["appliesForce"]:
        return None
    return spec.HuntCrossleyForce(element.get("name", ""), tuple(contacts), values["transition_velocity"],
                                  f"{reader.file}: {where}")
