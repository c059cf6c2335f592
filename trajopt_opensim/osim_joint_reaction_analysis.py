"""OpenSim's JointReaction analysis (AnalyzeTool) along a motion file, muscles carrying no force.

The model gets one CoordinateActuator per coordinate; their forces (the JointReaction
``forces_file``, muscles listed with zero force) are OpenSim's inverse dynamics at the states
AnalyzeTool builds from the motion (GCV splines of degree 5, no filter), so the analysis moves
the model with the motion's spline accelerations. Default analysis settings: all joints, loads on
the child body, expressed in ground, moments about the child joint frame's origin.

Request: model, motion (paths), times (the motion's times). Result: labels, loads (the analysis'
columns, time first), and the states q, u, udot (CoordinateSet order) at those times.
"""

import tempfile
from pathlib import Path

import numpy as np
import opensim

from trajopt_opensim._model_state import coordinates, mobility_indices, set_state, vector
from trajopt_opensim.osim_motion_states import spline_states


def _model_with_actuators(path):
    model = opensim.Model(str(path))
    for component in list(model.getComponentsList()):
        force = opensim.Force.safeDownCast(component)
        if force is not None:
            opensim.Force.safeDownCast(model.updComponent(component.getAbsolutePathString())).set_appliesForce(False)
    for coordinate in coordinates(model):
        actuator = opensim.CoordinateActuator(coordinate.getName())
        actuator.setName(f"reaction_actuator_{coordinate.getName()}")
        actuator.setOptimalForce(1.0)
        actuator.setMinControl(-np.inf)
        actuator.setMaxControl(np.inf)
        model.addForce(actuator)
    return model


def _write_forces(path, model, times, tau):
    names = [model.getActuators().get(i).getName() for i in range(model.getActuators().getSize())]
    columns = {f"reaction_actuator_{c.getName()}": j for j, c in enumerate(coordinates(model))}
    with open(path, "w") as file:
        file.write(f"forces\nversion=1\nnRows={len(times)}\nnColumns={len(names) + 1}\ninDegrees=no\nendheader\n")
        file.write("time\t" + "\t".join(names) + "\n")
        for k, t in enumerate(times):
            values = [tau[k, columns[n]] if n in columns else 0.0 for n in names]
            file.write("\t".join(f"{v:.17g}" for v in [t] + values) + "\n")


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    model = _model_with_actuators(request["model"])
    state = model.initSystem()
    index = mobility_indices(model, state)
    times = np.atleast_1d(np.asarray(request["times"], float))
    q, u, udot = spline_states(model, request["motion"], times, -1.0)
    solver = opensim.InverseDynamicsSolver(model)
    tau = np.zeros_like(q)
    for k in range(len(times)):
        set_state(model, state, index, q[k], u[k])
        result = solver.solve(state, vector(udot[k], index, state.getNU()))
        tau[k] = [result.get(int(i)) for i in index[1]]
    with tempfile.TemporaryDirectory(prefix="trajopt_jr_") as folder:
        forces = Path(folder) / "forces.sto"
        _write_forces(forces, model, times, tau)
        tool = opensim.AnalyzeTool(model)
        tool.setName("trajopt")
        tool.setCoordinatesFileName(str(request["motion"]))
        tool.setLowpassCutoffFrequency(-1)
        tool.setInitialTime(float(times[0]))
        tool.setFinalTime(float(times[-1]))
        tool.setResultsDir(folder)
        analysis = opensim.JointReaction()
        analysis.setName("JointReaction")
        analysis.setForcesFileName(str(forces))
        tool.getAnalysisSet().cloneAndAppend(analysis)
        tool.setModel(model)
        tool.setLoadModelAndInput(True)
        if not tool.run():
            raise RuntimeError("AnalyzeTool with JointReaction failed")
        table = opensim.TimeSeriesTable(str(Path(folder) / "trajopt_JointReaction_ReactionLoads.sto"))
        labels = list(table.getColumnLabels())
        loads = np.column_stack([np.asarray(table.getIndependentColumn())] +
                                [table.getDependentColumn(label).to_numpy() for label in labels])
    return {"labels": np.array(["time"] + labels, dtype=str), "loads": loads, "q": q, "u": u, "udot": udot}
