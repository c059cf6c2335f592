"""OpenSim's SmoothSphereHalfSpaceForce on a free ball, at states chosen relative to the plane.

Model: a free body 'ball' carrying a ContactSphere (radius, sphere_location in the ball frame);
a ContactHalfSpace (half_space_location, half_space_orientation: body-fixed XYZ angles) fixed to
ground, or, with half_space_on_body=1, to a second free body 'plate'.

Request: the force's properties (stiffness, dissipation, static_friction, dynamic_friction,
viscous_friction, transition_velocity, constant_contact_force, hertz_smoothing,
hunt_crossley_smoothing), radius, sphere_location, half_space_location, half_space_orientation,
half_space_on_body, and per sample (N rows): indentation (m), tangent_offset (N x 2, along two
tangent directions of the plane), approach_speed (sphere centre towards the plane relative to the
plate's material point there, m/s), tangential_velocity (N x 2), ball_angles (N x 3),
ball_angular_speeds (N x 3), plate_coordinates (N x 6), plate_speeds (N x 6).
Result (N rows): record_values (N x 12, getRecordValues), record_labels, and the realized state:
sphere_center, sphere_velocity, ball_origin, ball_angular_velocity, plate_rotation (N x 9,
row-major), plate_origin, plate_velocity, plate_angular_velocity.
"""

import numpy as np
import opensim

_PROPERTIES = ("stiffness", "dissipation", "static_friction", "dynamic_friction", "viscous_friction",
               "transition_velocity", "constant_contact_force", "hertz_smoothing", "hunt_crossley_smoothing")


def _vec3(values):
    return opensim.Vec3(*(float(v) for v in np.asarray(values).reshape(3)))


def _array(vec3):
    return np.array([vec3.get(i) for i in range(3)])


def _build(request):
    model = opensim.Model()
    ball = opensim.Body("ball", 1.0, opensim.Vec3(0), opensim.Inertia(0.01))
    model.addBody(ball)
    model.addJoint(opensim.FreeJoint("ball_free", model.getGround(), ball))
    plate_frame = model.getGround()
    plate = None
    if int(request["half_space_on_body"]):
        plate = opensim.Body("plate", 1.0, opensim.Vec3(0), opensim.Inertia(0.01))
        model.addBody(plate)
        model.addJoint(opensim.FreeJoint("plate_free", model.getGround(), plate))
        plate_frame = plate
    sphere = opensim.ContactSphere(float(request["radius"]), _vec3(request["sphere_location"]), ball, "sphere")
    half_space = opensim.ContactHalfSpace(_vec3(request["half_space_location"]),
                                          _vec3(request["half_space_orientation"]), plate_frame, "plane")
    model.addContactGeometry(sphere)
    model.addContactGeometry(half_space)
    force = opensim.SmoothSphereHalfSpaceForce("contact", sphere, half_space)
    for name in _PROPERTIES:
        getattr(force, f"set_{name}")(float(request[name]))
    model.addForce(force)
    state = model.initSystem()
    return model, state, ball, plate, half_space, force


def _rotation(frame, state):
    rotation = frame.getRotationInGround(state)  # keep alive: asMat33 returns a reference into it
    return _matrix(rotation)


def _matrix(rotation):
    matrix = rotation.asMat33()
    return np.array([[matrix.get(i, j) for j in range(3)] for i in range(3)])


def _set(coordinates, state, values, speeds):
    for coordinate, value, speed in zip(coordinates, values, speeds):
        coordinate.setValue(state, float(value), False)
        coordinate.setSpeedValue(state, float(speed))


def run(request):
    model, state, ball, plate, half_space, force = _build(request)
    coordinate_set = model.getCoordinateSet()
    ball_coordinates = [coordinate_set.get(i) for i in range(6)]  # rx ry rz tx ty tz
    plate_coordinates = [coordinate_set.get(i) for i in range(6, coordinate_set.getSize())]
    location = np.asarray(request["sphere_location"], float).reshape(3)
    radius = float(request["radius"])
    # The plane in its own frame: point and outward normal (-x of the half space's frame).
    transform = half_space.getTransform()
    outward_local = -_matrix(transform.R())[:, 0]
    point_local = np.asarray(request["half_space_location"], float).reshape(3)

    n = len(np.atleast_1d(request["indentation"]))
    keys = ("sphere_center", "sphere_velocity", "ball_origin", "ball_angular_velocity", "plate_origin",
            "plate_velocity", "plate_angular_velocity")
    result = {key: np.zeros((n, 3)) for key in keys}
    result["plate_rotation"] = np.zeros((n, 9))
    result["record_values"] = np.zeros((n, 12))
    for k in range(n):
        if plate is not None:
            _set(plate_coordinates, state, request["plate_coordinates"][k], request["plate_speeds"][k])
        # Ball orientation and spin first; translation follows from where the centre must be.
        _set(ball_coordinates, state, list(request["ball_angles"][k]) + [0, 0, 0],
             list(request["ball_angular_speeds"][k]) + [0, 0, 0])
        model.realizeVelocity(state)
        if plate is not None:
            rotation_p = _rotation(plate, state)
            origin_p = _array(plate.getPositionInGround(state))
        else:
            rotation_p, origin_p = np.eye(3), np.zeros(3)
        normal = rotation_p @ outward_local
        tangent_1 = np.cross(normal, [0.3, 0.5, 0.8])
        tangent_1 /= np.linalg.norm(tangent_1)
        tangent_2 = np.cross(normal, tangent_1)
        offset = request["tangent_offset"][k]
        center = (origin_p + rotation_p @ point_local + (radius - request["indentation"][k]) * normal
                  + offset[0] * tangent_1 + offset[1] * tangent_2)
        plate_point_velocity = np.zeros(3)
        if plate is not None:
            plate_point_velocity = _array(plate.findStationVelocityInGround(
                state, _vec3(rotation_p.T @ (center - origin_p))))
        tangential = request["tangential_velocity"][k]
        velocity = (plate_point_velocity - request["approach_speed"][k] * normal
                    + tangential[0] * tangent_1 + tangential[1] * tangent_2)
        # FreeJoint translations are the ball origin (and its velocity) in ground.
        rotation_b = _rotation(ball, state)
        spin_velocity = _array(ball.findStationVelocityInGround(state, _vec3(location)))
        _set(ball_coordinates[3:], state, center - rotation_b @ location, velocity - spin_velocity)
        model.realizeVelocity(state)
        values = force.getRecordValues(state)
        result["record_values"][k] = [values.get(i) for i in range(values.getSize())]
        result["sphere_center"][k] = _array(ball.findStationLocationInGround(state, _vec3(location)))
        result["sphere_velocity"][k] = _array(ball.findStationVelocityInGround(state, _vec3(location)))
        result["ball_origin"][k] = _array(ball.getPositionInGround(state))
        result["ball_angular_velocity"][k] = _array(ball.getAngularVelocityInGround(state))
        if plate is not None:
            result["plate_rotation"][k] = _rotation(plate, state).reshape(9)
            result["plate_origin"][k] = _array(plate.getPositionInGround(state))
            result["plate_velocity"][k] = _array(plate.getLinearVelocityInGround(state))
            result["plate_angular_velocity"][k] = _array(plate.getAngularVelocityInGround(state))
        else:
            result["plate_rotation"][k] = np.eye(3).reshape(9)
    labels = force.getRecordLabels()
    result["record_labels"] = np.array([labels.get(i) for i in range(labels.getSize())], dtype=str)
    return result
