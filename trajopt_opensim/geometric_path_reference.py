"""OpenSim task: GeometryPath lengths, lengthening speeds and moment arms at given states.

Request
- ``model``: path of the .osim file.
- ``coordinates``: names of the coordinates set from ``configurations`` (others keep defaults).
- ``configurations``: array (samples x coordinates), radians/metres.
- ``speeds`` (optional): array like ``configurations`` of coordinate speeds (others zero).
- ``muscles`` (optional): names of the muscles (default: all).
- ``disable_wraps`` (optional, 0/1): deactivate every wrap object, so paths are straight segments.

Result: ``muscle_names``, ``coordinate_names``, ``lengths`` (samples x muscles),
``lengthening_speeds`` (samples x muscles, with ``speeds``), ``moment_arms`` (samples x muscles x
coordinates, ``GeometryPath.computeMomentArm``, OpenSim's sign -dl/dq), ``wrapped`` (muscles).
Coordinate values are set without enforcing constraints: give dependent coordinates explicitly.
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import all_muscles




def run(request):
    model = opensim.Model(str(request["model"]))
    if int(request.get("disable_wraps", 0)):
        for body in model.getBodySet():
            wraps = body.getWrapObjectSet()
            for k in range(wraps.getSize()):
                wraps.get(k).set_active(False)
        ground_wraps = model.getGround().getWrapObjectSet()
        for k in range(ground_wraps.getSize()):
            ground_wraps.get(k).set_active(False)
    state = model.initSystem()
    by_name = all_muscles(model)
    names = [str(n) for n in np.atleast_1d(request["muscles"])] if "muscles" in request else list(by_name)
    muscles = [by_name[n] for n in names]
    coordinate_names = [str(n) for n in np.atleast_1d(request["coordinates"])]
    coordinate_set = model.getCoordinateSet()
    coordinates = [coordinate_set.get(n) for n in coordinate_names]
    for k in range(coordinate_set.getSize()):
        coordinate_set.get(k).setLocked(state, False)
    configurations = np.atleast_2d(np.asarray(request["configurations"], dtype=float))
    speeds = request.get("speeds")
    speeds = None if speeds is None else np.atleast_2d(np.asarray(speeds, dtype=float))
    samples = configurations.shape[0]
    lengths = np.zeros((samples, len(muscles)))
    lengthening = np.zeros((samples, len(muscles)))
    moment_arms = np.zeros((samples, len(muscles), len(coordinates)))
    for s in range(samples):
        for coordinate, value in zip(coordinates, configurations[s]):
            coordinate.setValue(state, float(value), False)
        if speeds is not None:
            for coordinate, value in zip(coordinates, speeds[s]):
                coordinate.setSpeedValue(state, float(value))
        model.realizeVelocity(state)
        for m, muscle in enumerate(muscles):
            path = muscle.getGeometryPath()
            lengths[s, m] = path.getLength(state)
            if speeds is not None:
                lengthening[s, m] = path.getLengtheningSpeed(state)
            for c, coordinate in enumerate(coordinates):
                moment_arms[s, m, c] = path.computeMomentArm(state, coordinate)
    result = {
        "muscle_names": np.array(names),
        "coordinate_names": np.array(coordinate_names),
        "lengths": lengths,
        "moment_arms": moment_arms,
        "wrapped": np.array([int(m.getGeometryPath().getWrapSet().getSize() > 0) for m in muscles]),
    }
    if speeds is not None:
        result["lengthening_speeds"] = lengthening
    return result
