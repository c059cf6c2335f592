"""InverseDynamicsTool's coordinate preprocessing, run with OpenSim's own classes.

Mirrors InverseDynamicsTool::run (OpenSim/Tools/InverseDynamicsTool.cpp): Storage(file);
if cutoff >= 0: pad(size/2) and lowpassIIR(cutoff); degrees to radians for the rotational
columns; GCVSplineSet(5, storage); values, first and second derivatives of each spline.

request: path (str), cutoff_frequency (float, < 0 means unfiltered), rotational (str array),
         times (optional float array: extra evaluation times)
result:  labels, in_degrees, frame_times, values/speeds/accelerations at frame_times (frames x
         columns), and *_at_times at the requested times.
"""

import math

import numpy as np
import opensim


def _evaluate(splines, count, times):
    values = np.zeros((3, len(times), count))
    first, second = opensim.StdVectorInt([0]), opensim.StdVectorInt([0, 0])
    for column in range(count):
        spline = splines.get(column)
        for row, t in enumerate(times):
            point = opensim.Vector(1, float(t))
            values[0, row, column] = spline.calcValue(point)
            values[1, row, column] = spline.calcDerivative(first, point)
            values[2, row, column] = spline.calcDerivative(second, point)
    return values


def run(request):
    storage = opensim.Storage(str(request["path"]))
    in_degrees = storage.isInDegrees()
    cutoff = float(request.get("cutoff_frequency", -1.0))
    if cutoff >= 0:
        storage.pad(storage.getSize() // 2)
        storage.lowpassIIR(cutoff)
    column_labels = storage.getColumnLabels()
    labels = [column_labels.get(i) for i in range(1, column_labels.getSize())]
    rotational = set(str(name) for name in np.atleast_1d(request.get("rotational", np.array([], dtype=str))))
    if in_degrees:
        # What SimbodyEngine::convertDegreesToRadians does for rotational coordinates.
        for index, label in enumerate(labels):
            if label in rotational:
                storage.multiplyColumn(index, math.pi / 180.0)
    splines = opensim.GCVSplineSet(5, storage)
    frame_times = np.array([storage.getStateVector(i).getTime() for i in range(storage.getSize())])
    at_frames = _evaluate(splines, len(labels), frame_times)
    result = {
        "labels": np.array(labels),
        "in_degrees": bool(in_degrees),
        "frame_times": frame_times,
        "values": at_frames[0],
        "speeds": at_frames[1],
        "accelerations": at_frames[2],
    }
    if "times" in request:
        at_times = _evaluate(splines, len(labels), np.atleast_1d(request["times"]))
        result.update(values_at_times=at_times[0], speeds_at_times=at_times[1], accelerations_at_times=at_times[2])
    return result
