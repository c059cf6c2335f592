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


def all_muscles(model):
    """Every muscle by name, in the ForceSet or listed under <components> (as 2D_gait does)."""
    found = {}
    for component in model.getComponentsList():
        muscle = opensim.Muscle.safeDownCast(component)
        if muscle is not None and muscle.getName() not in found:
            found[muscle.getName()] = muscle
    return found


def model_with_coordinate_actuators(path, keep_forces=()):
    """The model with every Force but ``keep_forces`` switched off (gravity stays) and one unit
    CoordinateActuator per coordinate added; returns (model, actuators) before initSystem."""
    model = opensim.Model(str(path))
    for component in list(model.getComponentsList()):
        force = opensim.Force.safeDownCast(component)
        if force is not None and force.getName() not in keep_forces:
            opensim.Force.safeDownCast(model.updComponent(component.getAbsolutePathString())).set_appliesForce(False)
    actuators = []
    for coordinate in coordinates(model):
        actuator = opensim.CoordinateActuator(coordinate.getName())
        actuator.setName(f"reaction_actuator_{coordinate.getName()}")
        actuator.setOptimalForce(1.0)
        model.addForce(actuator)
        actuators.append(actuator)
    return model, actuators


def coordinates(model):
    return [model.getCoordinateSet().get(i) for i in range(model.getCoordinateSet().getSize())]


def mobility_indices(model, state):
    """(q index, u index) in Simbody's vectors of each coordinate (CoordinateSet order). They differ
    after a ball or free joint: Simbody keeps 4 q slots for its rotation (3 used in Euler-angle mode)."""
    coords = coordinates(model)
    q_index, u_index = [], []
    for coordinate in coords:
        for other in coords:
            other.setValue(state, 0.0, False)
            other.setSpeedValue(state, 0.0)
        coordinate.setValue(state, 0.5, False)
        coordinate.setSpeedValue(state, 1.0)
        q, u = state.getQ(), state.getU()
        q_index.append([i for i in range(q.size()) if q.get(i) == 0.5][0])
        u_index.append([i for i in range(u.size()) if u.get(i) == 1.0][0])
    for other in coords:
        other.setValue(state, 0.0, False)
        other.setSpeedValue(state, 0.0)
    return np.array(q_index), np.array(u_index)


def set_state(model, state, index, q, u):
    """Write q, u (CoordinateSet order) straight into Simbody's vectors (no constraint projection);
    ``index`` is the (q index, u index) pair of `mobility_indices`."""
    qs = state.updQ()
    us = state.updU()
    q_index, u_index = index
    for k in range(len(q_index)):
        qs.set(int(q_index[k]), float(q[k]))
        us.set(int(u_index[k]), float(u[k]))


def vector(values, index, size):
    """A SimTK Vector in mobility (u) order from values in CoordinateSet order."""
    v = opensim.Vector(size, 0.0)
    for k, i in enumerate(index[1]):
        v.set(int(i), float(values[k]))
    return v


def append_degroote_curve_and_path_operators(processor, request):
    """Moco's ModelProcessor operators a request names: ``ignore_passive_fiber_force`` (bool),
    ``active_force_width_scale`` (1: none), ``function_based_paths`` (a FunctionBasedPathSet .xml)."""
    if bool(request.get("ignore_passive_fiber_force", False)):
        processor.append(opensim.ModOpIgnorePassiveFiberForcesDGF())
    if float(request.get("active_force_width_scale", 1.0)) != 1.0:
        processor.append(opensim.ModOpScaleActiveFiberForceCurveWidthDGF(float(request["active_force_width_scale"])))
    if request.get("function_based_paths"):
        processor.append(opensim.ModOpReplacePathsWithFunctionBasedPaths(str(request["function_based_paths"])))
