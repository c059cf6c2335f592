"""OpenSim task: OpenSim's MuscleAnalysis loop along a motion, timed.

Per frame: set every coordinate (dependent ones given, not enforced), realize Position, then for every muscle
GeometryPath.getLength and GeometryPath.computeMomentArm about each coordinate of ``moment_coordinates``:
the work MuscleAnalysis does for its lengths and moment arms.

Request: ``model`` (.osim path), ``coordinates`` (names), ``configurations`` (frames x coordinates, radians or
metres), ``moment_coordinates`` (names).
Result: ``muscle_names``, ``lengths`` (frames x muscles), ``moment_arms`` (frames x muscles x moment coordinates),
``load_seconds`` (model load and initSystem), ``loop_seconds`` (the frames).
"""

import time

import numpy as np
import opensim

from trajopt_opensim._model_state import all_muscles


def run(request):
    started = time.perf_counter()
    model = opensim.Model(str(request["model"]))
    state = model.initSystem()
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    coordinate_set = model.getCoordinateSet()
    coordinates = [coordinate_set.get(str(n)) for n in np.atleast_1d(request["coordinates"])]
    moment = [coordinate_set.get(str(n)) for n in np.atleast_1d(request["moment_coordinates"])]
    for k in range(coordinate_set.getSize()):
        coordinate_set.get(k).setLocked(state, False)
    by_name = all_muscles(model)
    names = list(by_name)
    muscles = [by_name[n] for n in names]
    configurations = np.atleast_2d(np.asarray(request["configurations"], dtype=float))
    frames = configurations.shape[0]
    lengths = np.zeros((frames, len(muscles)))
    arms = np.zeros((frames, len(muscles), len(moment)))
    for f in range(frames):
        for coordinate, value in zip(coordinates, configurations[f]):
            coordinate.setValue(state, float(value), False)
        model.realizePosition(state)
        for m, muscle in enumerate(muscles):
            path = muscle.getGeometryPath()
            lengths[f, m] = path.getLength(state)
            for c, coordinate in enumerate(moment):
                arms[f, m, c] = path.computeMomentArm(state, coordinate)
    return {"muscle_names": np.array(names), "lengths": lengths, "moment_arms": arms, "load_seconds": load_seconds,
            "loop_seconds": time.perf_counter() - started}
