"""getRecordValues of every SmoothSphereHalfSpaceForce of a model at given coordinate values and speeds.

Request: model (path), coordinate_names (n), q (N x n), u (N x n).
Result: force_names (F, file order), record_labels (12 per force, F x 12), record_values (N x F x 12).
"""

import numpy as np
import opensim


def run(request):
    model = opensim.Model(str(request["model"]))
    state = model.initSystem()
    forces = []
    for component in model.getComponentsList():
        force = opensim.SmoothSphereHalfSpaceForce.safeDownCast(component)
        if force is not None:
            forces.append(force)
    names = [str(name) for name in np.atleast_1d(request["coordinate_names"])]
    coordinate_set = model.getCoordinateSet()
    coordinates = [coordinate_set.get(name) for name in names]
    q = np.atleast_2d(np.asarray(request["q"], float))
    u = np.atleast_2d(np.asarray(request["u"], float))
    values = np.zeros((q.shape[0], len(forces), 12))
    for k in range(q.shape[0]):
        for coordinate, value, speed in zip(coordinates, q[k], u[k]):
            coordinate.setValue(state, float(value), False)
            coordinate.setSpeedValue(state, float(speed))
        model.realizeVelocity(state)
        for j, force in enumerate(forces):
            record = force.getRecordValues(state)
            values[k, j] = [record.get(i) for i in range(record.getSize())]
    labels = []
    for force in forces:
        record_labels = force.getRecordLabels()
        labels.append([record_labels.get(i) for i in range(record_labels.getSize())])
    return {"force_names": np.array([f.getName() for f in forces], dtype=str),
            "record_labels": np.array(labels, dtype=str), "record_values": values}
