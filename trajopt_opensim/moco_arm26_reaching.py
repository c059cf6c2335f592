"""Moco's arm26 point-to-point study, built as its .omoco lists it, solved and timed.

DeGrooteFregly2016 muscles with rigid tendons (ModOpReplaceMusclesWithDeGrooteFregly2016,
ModOpIgnoreTendonCompliance); t in [0, duration]; shoulder bounds [-pi/2, pi], elbow [0, 2.2689]; rest at
q = (0, 0) to rest at (0, final_elbow); speeds in [-20, 20]; activations in [0, 1], initially 0; excitations
in [0, 1]; MocoControlGoal (weight 1); MocoCasADiSolver with num_mesh_intervals and tolerances as requested
(its other settings at their defaults: Hermite-Simpson, explicit dynamics, limited-memory Hessian).

Request: model (path), duration, final_elbow, mesh_intervals, tolerance. Result: objective, iterations,
solver_seconds (Moco's solver_duration), wall_seconds (solve call), status, success, time, states and
controls (frames x columns) and their labels.
"""

import math
import time

import numpy as np
import opensim


def run(request):
    duration = float(request.get("duration", 0.5))
    final_elbow = float(request.get("final_elbow", math.pi / 2))
    study = opensim.MocoStudy()
    problem = study.updProblem()
    processor = opensim.ModelProcessor(str(request["model"]))
    processor.append(opensim.ModOpReplaceMusclesWithDeGrooteFregly2016())
    processor.append(opensim.ModOpIgnoreTendonCompliance())
    problem.setModelProcessor(processor)
    problem.setTimeBounds(0, duration)
    shoulder, elbow = "/jointset/r_shoulder/r_shoulder_elev", "/jointset/r_elbow/r_elbow_flex"
    problem.setStateInfo(f"{shoulder}/value", [-math.pi / 2, math.pi], 0, 0)
    problem.setStateInfo(f"{elbow}/value", [0, 2.2689280275926285], 0, final_elbow)
    problem.setStateInfo(f"{shoulder}/speed", [-20, 20], 0, 0)
    problem.setStateInfo(f"{elbow}/speed", [-20, 20], 0, 0)
    problem.setStateInfoPattern("/forceset/.*/activation", [0, 1], 0, [])
    problem.setControlInfoPattern("/forceset/.*", [0, 1], [], [])
    problem.addGoal(opensim.MocoControlGoal("effort"))
    solver = study.initCasADiSolver()
    solver.set_num_mesh_intervals(int(request.get("mesh_intervals", 50)))
    solver.set_verbosity(0)
    solver.set_optim_convergence_tolerance(float(request.get("tolerance", 1e-4)))
    solver.set_optim_constraint_tolerance(float(request.get("tolerance", 1e-4)))
    started = time.perf_counter()
    solution = study.solve()
    wall = time.perf_counter() - started
    solution.unseal()
    states, controls = solution.getStatesTrajectoryMat(), solution.getControlsTrajectoryMat()
    return {
        "objective": solution.getObjective(), "iterations": solution.getNumIterations(),
        "solver_seconds": solution.getSolverDuration(), "wall_seconds": wall,
        "status": solution.getStatus(), "success": bool(solution.success()),
        "time": np.asarray(solution.getTimeMat()).flatten(), "states": np.asarray(states),
        "controls": np.asarray(controls),
        "state_labels": np.array(list(solution.getStateNames()), dtype=str),
        "control_labels": np.array(list(solution.getControlNames()), dtype=str),
    }
