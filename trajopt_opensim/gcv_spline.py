"""One OpenSim GCVSpline (Woltring's GCVSPL) through given points, evaluated with two derivatives.

request: time, values (1-D arrays), degree (int), error_variance (float: < 0 GCV, 0 interpolate,
         > 0 known variance), evaluate_at (1-D array)
result:  values, speeds, accelerations at evaluate_at
"""

import numpy as np
import opensim


def run(request):
    table = opensim.TimeSeriesTable([float(t) for t in request["time"]])
    table.appendColumn("y", opensim.Vector([float(v) for v in request["values"]]))
    splines = opensim.GCVSplineSet(table, opensim.StdVectorString(["y"]), int(request["degree"]),
                                   float(request["error_variance"]))
    spline = splines.get(0)
    points = np.atleast_1d(request["evaluate_at"])
    out = np.zeros((3, points.size))
    for i, t in enumerate(points):
        x = opensim.Vector(1, float(t))
        out[0, i] = spline.calcValue(x)
        out[1, i] = spline.calcDerivative(opensim.StdVectorInt([0]), x)
        out[2, i] = spline.calcDerivative(opensim.StdVectorInt([0, 0]), x)
    return {"values": out[0], "speeds": out[1], "accelerations": out[2]}
