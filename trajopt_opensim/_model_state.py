"""Shared helpers of the OpenSim tasks: load a model with forces switched off, map coordinates to
Simbody's mobility order, and set states. Imports opensim and numpy only."""

import numpy as np
import opensim


def load_passive_model(path, keep_forces=()):
    """The model with every Force (muscles, actuators, contacts) set not to apply force; gravity stays."""
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()  # no opensim.log in the caller's folder
    model = opensim.Model(str(path))
    for component in list(model.getComponentsList()):
        force = opensim.Force.safeDownCast(component)
        if force is not None and force.getName() not in keep_forces:
            mutable = opensim.Force.safeDownCast(model.updComponent(component.getAbsolutePathString()))
            mutable.set_appliesForce(False)
    state = model.initSystem()
    return model, state


def coordinates(model):
    return [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]


def mobility_indices(model, state):
    """For each coordinate (CoordinateSet order), its index in Simbody's u vector (= q index here)."""
    indices = []
    coords = coordinates(model)
    for coordinate in coords:
        for other in coords:
            other.setSpeedValue(state, 0.0)
        coordinate.setSpeedValue(state, 1.0)
        u = state.getU()
        found = [i for i in range(u.size()) if u.get(i) == 1.0]
        indices.append(found[0])
    for other in coords:
        other.setSpeedValue(state, 0.0)
    return np.array(indices)


def set_state(model, state, index, q, u):
    """Write q, u (CoordinateSet order) straight into Simbody's vectors (no constraint projection)."""
    qs = state.updQ()
    us = state.updU()
    for k, i in enumerate(index):
        qs.set(int(i), float(q[k]))
        us.set(int(i), float(u[k]))


def vector(values, index, size):
    """A SimTK Vector in mobility order from values in CoordinateSet order."""
    v = opensim.Vector(size, 0.0)
    for k, i in enumerate(index):
        v.set(int(i), float(values[k]))
    return v
