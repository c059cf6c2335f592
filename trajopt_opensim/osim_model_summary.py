"""What OpenSim itself reads from a model file: names, types and key numbers (for import tests)."""

import numpy as np
import opensim


_MOTION_TYPES = {1: "rotational", 2: "translational", 3: "coupled"}


def _names(components):
    return np.array([c.getName() for c in components], dtype=str)


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()  # no opensim.log in the caller's folder
    model = opensim.Model(str(request["model"]))
    model.initSystem()
    bodies = [model.getBodySet().get(i) for i in range(model.getBodySet().getSize())]
    joints = [model.getJointSet().get(i) for i in range(model.getJointSet().getSize())]
    coordinates = [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]
    markers = [model.getMarkerSet().get(i) for i in range(model.getMarkerSet().getSize())]
    forces = list(model.getComponentsList())
    muscles = [opensim.Muscle.safeDownCast(c) for c in forces]
    muscles = [m for m in muscles if m is not None]
    actuators = [opensim.CoordinateActuator.safeDownCast(c) for c in forces]
    actuators = [a for a in actuators if a is not None]
    contacts = [opensim.SmoothSphereHalfSpaceForce.safeDownCast(c) for c in forces]
    contacts = [c for c in contacts if c is not None]
    gravity = model.getGravity()
    return {
        "gravity": np.array([gravity.get(i) for i in range(3)]),
        "body_names": _names(bodies),
        "body_masses": np.array([b.getMass() for b in bodies]),
        "body_mass_centers": np.array([[b.getMassCenter().get(i) for i in range(3)] for b in bodies]),
        "joint_names": _names(joints),
        "joint_types": np.array([j.getConcreteClassName() for j in joints], dtype=str),
        "joint_parent_frames": np.array([j.getParentFrame().getAbsolutePathString() for j in joints], dtype=str),
        "joint_child_frames": np.array([j.getChildFrame().getAbsolutePathString() for j in joints], dtype=str),
        "coordinate_names": _names(coordinates),
        "coordinate_motion_types": np.array([_MOTION_TYPES[int(c.getMotionType())] for c in coordinates], dtype=str),
        "coordinate_ranges": np.array([[c.getRangeMin(), c.getRangeMax()] for c in coordinates]),
        "coordinate_defaults": np.array([c.getDefaultValue() for c in coordinates]),
        "coordinate_locked": np.array([c.getDefaultLocked() for c in coordinates]),
        "marker_names": _names(markers),
        "muscle_names": _names(muscles),
        "muscle_types": np.array([m.getConcreteClassName() for m in muscles], dtype=str),
        "muscle_max_isometric_force": np.array([m.getMaxIsometricForce() for m in muscles]),
        "muscle_optimal_fiber_length": np.array([m.getOptimalFiberLength() for m in muscles]),
        "muscle_tendon_slack_length": np.array([m.getTendonSlackLength() for m in muscles]),
        "muscle_pennation_angle": np.array([m.getPennationAngleAtOptimalFiberLength() for m in muscles]),
        "muscle_max_contraction_velocity": np.array([m.getMaxContractionVelocity() for m in muscles]),
        "muscle_path_point_counts": np.array([m.getGeometryPath().getPathPointSet().getSize() for m in muscles]),
        "actuator_names": _names(actuators),
        "actuator_coordinates": np.array([a.get_coordinate() for a in actuators], dtype=str),
        "actuator_optimal_forces": np.array([a.getOptimalForce() for a in actuators]),
        "contact_names": _names(contacts),
        "contact_stiffness": np.array([c.get_stiffness() for c in contacts]),
    }
