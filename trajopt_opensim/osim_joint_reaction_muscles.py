"""OpenSim's joint reaction loads along a prescribed motion with given muscle forces applied.

Each muscle's actuation (tension along its path, wrapping included) is overridden with the
requested force; one CoordinateActuator per coordinate supplies whatever generalized force is
still needed for the requested accelerations (InverseDynamicsSolver with the muscles applied), so
realizeAcceleration reproduces them (checked: udot_error). The loads are then what OpenSim's
JointReaction analysis reports: Joint::calcReactionOnChildExpressedInGround (parent on child,
moment about the child joint frame's origin, ground axes). Other forces are switched off.

Request: model, q, u, udot (N x n, CoordinateSet order), muscle_names (m), muscle_forces (N x m).
Result: forces_ground, moments_ground (N x joints x 3), actuator_forces (N x n: generalized force
left for the coordinate actuators), udot_error, joint_names.
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import model_with_coordinate_actuators, mobility_indices, set_state, vector


def run(request):
    names = [str(name) for name in np.atleast_1d(request["muscle_names"])]
    model, actuators = model_with_coordinate_actuators(request["model"], keep_forces=names)
    state = model.initSystem()
    muscles = [model.getMuscles().get(name) for name in names]
    for actuator in actuators + muscles:
        actuator.overrideActuation(state, True)
    index = mobility_indices(model, state)
    q, u, udot = (np.atleast_2d(np.asarray(request[k], float)) for k in ("q", "u", "udot"))
    muscle_forces = np.atleast_2d(np.asarray(request["muscle_forces"], float))
    joints = [model.getJointSet().get(i) for i in range(model.getJointSet().getSize())]
    solver = opensim.InverseDynamicsSolver(model)
    shape = (len(q), len(joints), 3)
    forces_ground, moments_ground = np.zeros(shape), np.zeros(shape)
    actuator_forces = np.zeros((len(q), len(actuators)))
    udot_error = 0.0
    for k in range(len(q)):
        set_state(model, state, index, q[k], u[k])
        for j, muscle in enumerate(muscles):
            muscle.setOverrideActuation(state, float(muscle_forces[k, j]))
        for actuator in actuators:
            actuator.setOverrideActuation(state, 0.0)
        model.realizeVelocity(state)
        tau = solver.solve(state, vector(udot[k], index, state.getNU()))  # with the muscles applied
        for j, actuator in enumerate(actuators):
            actuator_forces[k, j] = tau.get(int(index[1][j]))
            actuator.setOverrideActuation(state, actuator_forces[k, j])
        model.realizeAcceleration(state)
        achieved = np.array([state.getUDot().get(int(i)) for i in index[1]])
        udot_error = max(udot_error, float(np.max(np.abs(achieved - udot[k]))))
        for j, joint in enumerate(joints):
            load = joint.calcReactionOnChildExpressedInGround(state)
            moments_ground[k, j] = [load.get(0).get(i) for i in range(3)]
            forces_ground[k, j] = [load.get(1).get(i) for i in range(3)]
    return {"forces_ground": forces_ground, "moments_ground": moments_ground, "actuator_forces": actuator_forces,
            "udot_error": udot_error, "joint_names": np.array([j.getName() for j in joints], dtype=str)}
