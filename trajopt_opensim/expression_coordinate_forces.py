"""OpenSim's ExpressionBasedCoordinateForces at given states: each force's generalized force
(``getForceMagnitude``, what it applies to its coordinate).

Request: model (path), forces (ForceSet .xml whose ExpressionBasedCoordinateForces are added to the model),
q, u (states x coordinates, CoordinateSet order). Result: names, coordinates (per force), values
(states x forces), coordinate_names.
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import coordinates


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    model = opensim.Model(str(request["model"]))
    added = opensim.ForceSet(str(request["forces"]))
    for i in range(added.getSize()):
        model.addForce(added.get(i).clone())
    state = model.initSystem()
    forces = [opensim.ExpressionBasedCoordinateForce.safeDownCast(f) for f in model.getForceSet()]
    forces = [f for f in forces if f is not None]
    coords = coordinates(model)
    q, u = (np.atleast_2d(np.asarray(request[k], float)) for k in ("q", "u"))
    values = np.zeros((len(q), len(forces)))
    for k in range(len(q)):
        for c, value, speed in zip(coords, q[k], u[k]):
            c.setValue(state, float(value), False)
            c.setSpeedValue(state, float(speed))
        model.realizeDynamics(state)  # the force's magnitude is cached at Dynamics
        values[k] = [f.getForceMagnitude(state) for f in forces]
    return {"names": np.array([f.getName() for f in forces], dtype=str),
            "coordinates": np.array([f.get_coordinate() for f in forces], dtype=str),
            "values": values, "coordinate_names": np.array([c.getName() for c in coords], dtype=str)}
