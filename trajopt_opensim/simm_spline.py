"""Evaluate OpenSim's SimmSpline (value and first derivative) at given points.

request: x, y (knots), points (evaluation abscissae)
result:  values, slopes (same length as points)
"""

import numpy as np
import opensim


def run(request):
    x = np.asarray(request["x"], dtype=float)
    y = np.asarray(request["y"], dtype=float)
    spline = opensim.SimmSpline()
    for xi, yi in zip(x, y):
        spline.addPoint(float(xi), float(yi))
    first = opensim.StdVectorInt([0])
    points = np.asarray(request["points"], dtype=float)
    values = np.array([spline.calcValue(opensim.Vector(1, float(p))) for p in points])
    slopes = np.array([spline.calcDerivative(first, opensim.Vector(1, float(p))) for p in points])
    return {"values": values, "slopes": slopes}
