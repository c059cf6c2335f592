"""Muscle lengths and moment arms of a model whose paths OpenSim replaced with a FunctionBasedPathSet.

Request: model, paths (the FunctionBasedPathSet .xml), coordinates (names), values (configurations x
coordinates, radians or metres), moment_arm_coordinates (names). Result: muscles (names), lengths
(configurations x muscles), moment_arms (configurations x muscles x moment_arm_coordinates) from
computeMomentArm.
"""

import numpy as np
import opensim


def run(request):
    processor = opensim.ModelProcessor(str(request["model"]))
    processor.append(opensim.ModOpReplacePathsWithFunctionBasedPaths(str(request["paths"])))
    model = processor.process()
    state = model.initSystem()
    names = [str(c) for c in np.atleast_1d(request["coordinates"])]
    about = [str(c) for c in np.atleast_1d(request["moment_arm_coordinates"])]
    coordinates = model.getCoordinateSet()
    muscles = model.getMuscles()
    muscle_names = [muscles.get(i).getName() for i in range(muscles.getSize())]
    values = np.atleast_2d(np.asarray(request["values"], dtype=float))
    lengths = np.zeros((values.shape[0], len(muscle_names)))
    arms = np.zeros((values.shape[0], len(muscle_names), len(about)))
    for row, configuration in enumerate(values):
        for name, value in zip(names, configuration):
            coordinates.get(name).setValue(state, float(value), False)
        model.realizePosition(state)
        for k in range(muscles.getSize()):
            muscle = muscles.get(k)
            lengths[row, k] = muscle.getLength(state)
            for j, name in enumerate(about):
                arms[row, k, j] = muscle.getPath().computeMomentArm(state, coordinates.get(name))
    return {"muscles": np.array(muscle_names, dtype=str), "lengths": lengths, "moment_arms": arms}
