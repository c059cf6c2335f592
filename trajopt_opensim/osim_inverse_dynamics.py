"""OpenSim's generalized forces (InverseDynamicsSolver), mass matrix, forward accelerations, body
poses and marker positions at given states, with all forces off (gravity on); also times per call.

Request: model (path), q, u, udot (N x n arrays in CoordinateSet order; ball and free joints use
OpenSim's coordinates: body-fixed X-Y-Z angles, speeds as Simbody defines them), repeat (int,
optional: time each call over this many sweeps). Result arrays are in CoordinateSet / BodySet /
MarkerSet order.
"""

import time

import numpy as np
import opensim

from trajopt_opensim._model_state import coordinates, load_passive_model, mobility_indices, set_state, vector


def run(request):
    model, state = load_passive_model(request["model"])
    nu = state.getNU()
    index, n = mobility_indices(model, state), len(coordinates(model))
    q, u, udot = (np.atleast_2d(np.asarray(request[k], float)) for k in ("q", "u", "udot"))
    order = index[1]
    bodies = [model.getBodySet().get(i) for i in range(model.getBodySet().getSize())]
    markers = [model.getMarkerSet().get(i) for i in range(model.getMarkerSet().getSize())]
    solver = opensim.InverseDynamicsSolver(model)
    matter = model.getMatterSubsystem()
    tau = np.zeros((len(q), n))
    free_udot = np.zeros((len(q), n))
    mass = np.zeros((len(q), n, n))
    positions = np.zeros((len(q), len(bodies), 3))
    rotations = np.zeros((len(q), len(bodies), 3, 3))
    marker_positions = np.zeros((len(q), len(markers), 3))
    for k in range(len(q)):
        set_state(model, state, index, q[k], u[k])
        result = solver.solve(state, vector(udot[k], index, nu))
        tau[k] = [result.get(int(i)) for i in order]
        model.realizeAcceleration(state)
        free_udot[k] = [state.getUDot().get(int(i)) for i in order]
        matrix = opensim.Matrix()
        matter.calcM(state, matrix)
        mass[k] = [[matrix.get(int(i), int(j)) for j in order] for i in order]
        for b, body in enumerate(bodies):
            transform = body.getTransformInGround(state)
            positions[k, b] = [transform.p().get(i) for i in range(3)]
            rotation = transform.R()
            rotations[k, b] = [[rotation.get(i, j) for j in range(3)] for i in range(3)]
        for m, marker in enumerate(markers):
            location = marker.getLocationInGround(state)
            marker_positions[k, m] = [location.get(i) for i in range(3)]
    result = {"tau": tau, "free_udot": free_udot, "mass_matrix": mass, "body_positions": positions,
              "body_rotations": rotations, "marker_positions": marker_positions,
              "coordinate_names": np.array([c.getName() for c in coordinates(model)], dtype=str),
              "body_names": np.array([b.getName() for b in bodies], dtype=str),
              "marker_names": np.array([m.getName() for m in markers], dtype=str)}
    repeat = int(request.get("repeat", 0))
    if repeat:
        result.update(_timings(model, state, solver, index, q, u, udot, repeat))
    return result


def _timings(model, state, solver, index, q, u, udot, repeat):
    """Seconds per call: ID (InverseDynamicsSolver.solve) and forward dynamics (realizeAcceleration),
    each from a fresh state (positions changed, so kinematics are recomputed as in an optimizer)."""
    nu = state.getNU()
    udots = [vector(row, index, nu) for row in udot]
    count = len(q) * repeat
    start = time.perf_counter()
    for _ in range(repeat):
        for k in range(len(q)):
            set_state(model, state, index, q[k], u[k])
            solver.solve(state, udots[k])
    inverse = (time.perf_counter() - start) / count
    start = time.perf_counter()
    for _ in range(repeat):
        for k in range(len(q)):
            set_state(model, state, index, q[k], u[k])
            model.realizeAcceleration(state)
    forward = (time.perf_counter() - start) / count
    # The cost of writing the state alone, so it can be reported separately.
    start = time.perf_counter()
    for _ in range(repeat):
        for k in range(len(q)):
            set_state(model, state, index, q[k], u[k])
    writing = (time.perf_counter() - start) / count
    return {"seconds_inverse_dynamics": inverse, "seconds_forward_dynamics": forward,
            "seconds_set_state": writing}
