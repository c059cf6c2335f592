"""OpenSim's joint reaction loads along a prescribed motion, with muscles carrying no force.

All forces are switched off (gravity stays) and one CoordinateActuator per coordinate is added;
at each state the actuators are overridden with the inverse-dynamics generalized forces, so that
realizeAcceleration reproduces the requested accelerations exactly (checked: udot_error). The
loads are then what OpenSim's JointReaction analysis reports by default: Joint::
calcReactionOnChildExpressedInGround (the load the parent applies to the child, moment about the
child joint frame's origin), re-expressed in the child joint frame.

Request: model, q, u, udot (N x n, CoordinateSet order).
Result: forces, moments (N x joints x 3, child joint frame axes), forces_ground, moments_ground
(ground axes), udot_error (max |udot - requested|), joint_names, child_rotations (N x joints x 3 x 3).
"""

import numpy as np
import opensim

from trajopt_opensim._model_state import model_with_coordinate_actuators, mobility_indices, set_state, vector


def run(request):
    model, actuators = model_with_coordinate_actuators(request["model"], keep_forces=())
    state = model.initSystem()
    index = mobility_indices(model, state)
    q, u, udot = (np.atleast_2d(np.asarray(request[k], float)) for k in ("q", "u", "udot"))
    joints = [model.getJointSet().get(i) for i in range(model.getJointSet().getSize())]
    solver = opensim.InverseDynamicsSolver(model)
    shape = (len(q), len(joints), 3)
    forces, moments, forces_ground, moments_ground = (np.zeros(shape) for _ in range(4))
    child_rotations = np.zeros((len(q), len(joints), 3, 3))
    udot_error = 0.0
    for actuator in actuators:
        actuator.overrideActuation(state, True)
    for k in range(len(q)):
        set_state(model, state, index, q[k], u[k])
        for actuator in actuators:  # ID without the actuators' own (overridden) forces
            actuator.setOverrideActuation(state, 0.0)
        tau = solver.solve(state, vector(udot[k], index, state.getNU()))
        for j, actuator in enumerate(actuators):
            actuator.setOverrideActuation(state, tau.get(int(index[1][j])))
        model.realizeAcceleration(state)
        achieved = np.array([state.getUDot().get(int(i)) for i in index[1]])
        udot_error = max(udot_error, float(np.max(np.abs(achieved - udot[k]))))
        for j, joint in enumerate(joints):
            load = joint.calcReactionOnChildExpressedInGround(state)
            moment_ground = np.array([load.get(0).get(i) for i in range(3)])
            force_ground = np.array([load.get(1).get(i) for i in range(3)])
            rotation = joint.getChildFrame().getTransformInGround(state).R()
            r = np.array([[rotation.get(a, b) for b in range(3)] for a in range(3)])
            forces_ground[k, j], moments_ground[k, j] = force_ground, moment_ground
            forces[k, j], moments[k, j] = r.T @ force_ground, r.T @ moment_ground
            child_rotations[k, j] = r
    return {"forces": forces, "moments": moments, "forces_ground": forces_ground,
            "moments_ground": moments_ground, "udot_error": udot_error, "child_rotations": child_rotations,
            "joint_names": np.array([j.getName() for j in joints], dtype=str)}
