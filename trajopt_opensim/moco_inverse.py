"""Moco's MocoInverse on a model and a coordinates file, with a ModelProcessor built from the request.

Request: model (path), kinematics (path), initial_time, final_time, mesh_interval; optional
external_loads (path: ModOpAddExternalLoads), weld_joints (list: ModOpReplaceJointsWithWelds),
residuals ([rotational, translational, bound]: ModOpAddResiduals), tendon_compliance (bool: elastic tendons in
Moco's tendon_mode, 'implicit' or 'explicit'; else ModOpIgnoreTendonCompliance), ignore_passive_fiber_force (bool),
active_force_width_scale (float), function_based_paths (path), reserves (optimal force: ModOpAddReserves),
tolerance (convergence and constraint tolerance; Moco's default 1e-3), max_iterations;
reaction_joints, reaction_weights, reaction_measures (one
comma-separated string per joint, empty for all), reaction_loads_frames: a MocoJointReactionGoal per joint, added to
the initialized study.
Muscles always become DeGrooteFregly2016.

Result: objective, iterations, wall_seconds (the solve call), solver_seconds, status, success, time,
states and controls (frames x columns) with their labels, multipliers and their labels.
"""

import time

import numpy as np
import opensim

from trajopt_opensim._model_state import append_degroote_curve_and_path_operators


def _processor(request):
    processor = opensim.ModelProcessor(str(request["model"]))
    if request.get("external_loads"):
        processor.append(opensim.ModOpAddExternalLoads(str(request["external_loads"])))
    welds = [str(w) for w in np.atleast_1d(request.get("weld_joints", [])) if str(w)]
    if welds:
        names = opensim.StdVectorString()
        for name in welds:
            names.append(name)
        processor.append(opensim.ModOpReplaceJointsWithWelds(names))
    residuals = np.atleast_1d(request.get("residuals", []))
    if residuals.size:
        processor.append(opensim.ModOpAddResiduals(*(float(r) for r in residuals)))
    if not bool(request.get("tendon_compliance", False)):
        processor.append(opensim.ModOpIgnoreTendonCompliance())
    processor.append(opensim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    if bool(request.get("tendon_compliance", False)):
        processor.append(opensim.ModOpTendonComplianceDynamicsModeDGF(str(request.get("tendon_mode", "implicit"))))
    append_degroote_curve_and_path_operators(processor, request)
    if request.get("reserves"):
        processor.append(opensim.ModOpAddReserves(float(request["reserves"])))
    return processor


def run(request):
    inverse = opensim.MocoInverse()
    inverse.setModel(_processor(request))
    inverse.setKinematics(opensim.TableProcessor(str(request["kinematics"])))
    inverse.set_initial_time(float(request["initial_time"]))
    inverse.set_final_time(float(request["final_time"]))
    inverse.set_mesh_interval(float(request["mesh_interval"]))
    inverse.set_kinematics_allow_extra_columns(True)
    tolerance = float(request.get("tolerance", 1e-3))
    inverse.set_convergence_tolerance(tolerance)
    inverse.set_constraint_tolerance(tolerance)
    if request.get("max_iterations"):
        inverse.set_max_iterations(int(request["max_iterations"]))
    joints = [str(j) for j in np.atleast_1d(request.get("reaction_joints", [])) if str(j)]
    started = time.perf_counter()
    if joints:
        study = inverse.initialize()
        problem = study.updProblem()
        weights = np.atleast_1d(request.get("reaction_weights", np.ones(len(joints))))
        all_measures = np.atleast_1d(request.get("reaction_measures", [""] * len(joints)))
        frames = np.atleast_1d(request.get("reaction_loads_frames", ["parent"] * len(joints)))
        for k, joint in enumerate(joints):
            goal = opensim.MocoJointReactionGoal(f"reaction_{joint}", float(weights[k]))
            goal.setJointPath(f"/jointset/{joint}")
            measures = opensim.StdVectorString()
            for measure in str(all_measures[k]).split(","):
                if measure.strip():
                    measures.append(measure.strip())
            if len(measures):
                goal.setReactionMeasures(measures)
            goal.setLoadsFrame(str(frames[k]))
            problem.addGoal(goal)
        solution = study.solve()
    else:
        inverse_solution = inverse.solve()  # keep it alive: getMocoSolution() returns a reference into it
        solution = inverse_solution.getMocoSolution()
    wall = time.perf_counter() - started
    solution.unseal()
    multipliers = solution.getMultipliersTrajectoryMat() if solution.getNumMultipliers() else np.zeros((0, 0))
    return {
        "objective": solution.getObjective(), "iterations": solution.getNumIterations(),
        "solver_seconds": solution.getSolverDuration(), "wall_seconds": wall,
        "status": solution.getStatus(), "success": bool(solution.success()),
        "time": np.asarray(solution.getTimeMat()).flatten(),
        "states": np.asarray(solution.getStatesTrajectoryMat()),
        "controls": np.asarray(solution.getControlsTrajectoryMat()),
        "multipliers": np.asarray(multipliers),
        "state_labels": np.array(list(solution.getStateNames()), dtype=str),
        "control_labels": np.array(list(solution.getControlNames()), dtype=str),
        "multiplier_labels": np.array(list(solution.getMultiplierNames()), dtype=str),
    }
