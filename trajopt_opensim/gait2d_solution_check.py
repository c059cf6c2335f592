"""Load a gait solution's states (.sto with OpenSim state paths) in OpenSim and evaluate forces on it.

Request: model_file, states_file, contact_names (SmoothSphereHalfSpaceForce names), muscle_names; optional
coordinate_names with actuator_names and controls (N x actuators): then each state's actuator controls
are set and the coordinate accelerations are returned too (realizeAcceleration).
The table becomes a StatesTrajectory (missing columns allowed, extra columns such as controls allowed),
so this also checks that OpenSim accepts the file. Per state, after realizeDynamics:
Result: states_loaded (count), time (N), contact_records (N x 12 x contacts, getRecordValues: sphere
force, sphere torque, half-space force, half-space torque), tendon_forces (N x muscles), and with
coordinate_names: accelerations (N x coordinates).
"""

import numpy as np
import opensim


def run(request):
    model = opensim.Model(str(request["model_file"]))
    model.initSystem()
    table = opensim.TimeSeriesTable(str(request["states_file"]))
    trajectory = opensim.StatesTrajectory.createFromStatesTable(model, table, True, True)
    # 2D_gait.osim keeps its forces in <components>, not the ForceSet: look them up by path.
    contacts = [opensim.SmoothSphereHalfSpaceForce.safeDownCast(model.getComponent(f"/{name}"))
                for name in np.atleast_1d(request["contact_names"])]
    muscles = [opensim.Muscle.safeDownCast(model.getComponent(f"/{name}"))
               for name in np.atleast_1d(request["muscle_names"])]
    count = trajectory.getSize()
    coordinates = [model.getCoordinateSet().get(str(n)) for n in np.atleast_1d(request.get("coordinate_names", []))]
    if coordinates:
        # Controls are ordered as the model's actuators in its component list (one control each here);
        # getActuators() would miss actuators kept in <components>.
        order = [act.getName() for act in (opensim.Actuator.safeDownCast(c) for c in model.getComponentsList())
                 if act is not None]
        slots = [order.index(str(n)) for n in np.atleast_1d(request["actuator_names"])]
        controls_table = np.atleast_2d(request["controls"])
    accelerations = np.zeros((count, len(coordinates)))
    records = np.zeros((count, 12, len(contacts)))
    tendon = np.zeros((count, len(muscles)))
    time = np.zeros(count)
    for k in range(count):
        state = trajectory.get(k)
        if coordinates:
            model.realizeVelocity(state)
            controls = model.updControls(state)
            for slot, value in zip(slots, controls_table[k]):
                controls.set(slot, float(value))
            model.setControls(state, controls)
            model.realizeAcceleration(state)
            accelerations[k] = [c.getAccelerationValue(state) for c in coordinates]
        model.realizeDynamics(state)
        time[k] = state.getTime()
        for j, contact in enumerate(contacts):
            values = contact.getRecordValues(state)
            records[k, :, j] = [values.get(i) for i in range(12)]
        for j, muscle in enumerate(muscles):
            tendon[k, j] = muscle.getTendonForce(state)
    return {"states_loaded": count, "time": time, "contact_records": records, "tendon_forces": tendon,
            "accelerations": accelerations}
