"""The states OpenSim's InverseDynamicsTool uses for a motion file, and its generalized forces there.

As the tool does (InverseDynamicsTool::run): read the coordinates, convert degrees to radians,
optionally pad (half the rows, reflected) and apply the 4th-order IIR low-pass filter
(Storage.pad + Storage.lowpassIIR), fit a GCVSplineSet of degree 5, and evaluate value, first and
second derivatives at the requested times. Muscles are excluded, as the tool's default.

Request: model, motion (path), times (array), lowpass_cutoff (Hz, <= 0 for none).
Result: q, u, udot (N x n, CoordinateSet order), tau (N x n, InverseDynamicsSolver at those
states), coordinate_names.
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import coordinates, load_passive_model, mobility_indices, set_state, vector


def spline_states(model, motion, times, cutoff):
    """(q, u, udot) in CoordinateSet order at ``times``, as InverseDynamicsTool/AnalyzeTool make them."""
    storage = opensim.Storage(str(motion))
    if storage.isInDegrees():
        model.getSimbodyEngine().convertDegreesToRadians(storage)
    if cutoff > 0:
        storage.pad(storage.getSize() // 2)
        storage.lowpassIIR(cutoff)
    splines = opensim.GCVSplineSet(5, storage)
    functions = [splines.get(c.getName()) for c in coordinates(model)]
    q, u, udot = (np.zeros((len(times), len(functions))) for _ in range(3))
    first, second = opensim.StdVectorInt(), opensim.StdVectorInt()
    first.append(0)
    second.append(0)
    second.append(0)
    for k, t in enumerate(times):
        x = opensim.Vector(1, float(t))
        for j, function in enumerate(functions):
            q[k, j] = function.calcValue(x)
            u[k, j] = function.calcDerivative(first, x)
            udot[k, j] = function.calcDerivative(second, x)
    return q, u, udot


def run(request):
    model, state = load_passive_model(request["model"])
    index = mobility_indices(model, state)
    times = np.atleast_1d(np.asarray(request["times"], float))
    q, u, udot = spline_states(model, request["motion"], times, float(request.get("lowpass_cutoff", -1.0)))
    tau = np.zeros_like(q)
    solver = opensim.InverseDynamicsSolver(model)
    for k in range(len(times)):
        set_state(model, state, index, q[k], u[k])
        result = solver.solve(state, vector(udot[k], index, state.getNU()))
        tau[k] = [result.get(int(i)) for i in index[1]]
    return {"q": q, "u": u, "udot": udot, "tau": tau,
            "coordinate_names": np.array([c.getName() for c in coordinates(model)], dtype=str)}
