"""OpenSim's muscle forces at given states, with the muscles replaced as Moco's reaching study does.

The model's muscles become DeGrooteFregly2016Muscle with a rigid tendon (ModOpReplaceMusclesWithDeGrooteFregly2016,
ModOpIgnoreTendonCompliance); the states (coordinate values/speeds and activations, OpenSim state paths as
column labels) are read from a .sto file with StatesTrajectory.createFromStatesTable, each is realized to
Dynamics and the muscles' tendon forces and musculotendon lengths are read.

Request: model (path), states (path to .sto), muscles (names). Result: time, tendon_forces, lengths,
lengthening_speeds (frames x muscles).
"""

import numpy as np
import opensim


def replaced_model(path):
    """The model after Moco's operators (DeGroote 2016 muscles, rigid tendons), initialized."""
    processor = opensim.ModelProcessor(str(path))
    processor.append(opensim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    processor.append(opensim.ModOpIgnoreTendonCompliance())
    model = processor.process()
    model.initSystem()
    return model


def run(request):
    model = replaced_model(request["model"])
    table = opensim.TimeSeriesTable(str(request["states"]))
    trajectory = opensim.StatesTrajectory.createFromStatesTable(model, table, False, False)
    names = [str(n) for n in np.atleast_1d(request["muscles"])]
    muscles = [model.getMuscles().get(n) for n in names]
    frames = trajectory.getSize()
    forces, lengths, speeds = (np.zeros((frames, len(names))) for _ in range(3))
    times = np.zeros(frames)
    for i in range(frames):
        state = trajectory.get(i)
        model.realizeDynamics(state)
        times[i] = state.getTime()
        for k, muscle in enumerate(muscles):
            forces[i, k] = muscle.getTendonForce(state)
            lengths[i, k] = muscle.getLength(state)
            speeds[i, k] = muscle.getLengtheningSpeed(state)
    return {"time": times, "tendon_forces": forces, "lengths": lengths, "lengthening_speeds": speeds}
