"""Moco's example2DWalkingMetabolics (opensim-core OpenSim/Examples/Moco/example2DWalking), built as the example
builds it, solved and timed.

MocoTrack on 2D_gait.osim with a Bhargava2004SmoothedMuscleMetabolics component (smoothing on, the 18 muscles):
states reference = referenceCoordinates.sto low-passed at 6 Hz, global tracking weight 30, position derivatives
tracked, tracked states applied to the guess, t in [0, 0.470089]; MocoPeriodicityGoal (coordinate values except
pelvis_tx and all speeds mirrored left/right, the lumbar control, the activations mirrored); the MocoTrack
control effort with weight 0.1; MocoOutputGoal "met" (weight 0.1) on total_metabolic_rate divided by displacement
and by mass; the example's state bounds; MocoCasADiSolver with 50 mesh intervals, tolerances 1e-4, at most 10000
iterations (its other settings at their defaults).

Request: model, coordinates (paths), optional mesh_intervals, tolerance, max_iterations. Result: objective, its
terms (weighted, as Moco reports them), iterations, solver_seconds (Moco's solver_duration), wall_seconds (the solve
call), status, success, opensim version, and the solution's time, states and controls with their labels.
"""

import os
import re
import tempfile
import time

import numpy as np
import opensim

from trajopt_opensim._moco_walk2d import BOUNDS, FINAL_TIME

METABOLIC_WEIGHT = 0.1
EFFORT_WEIGHT = 0.1
TRACKING_WEIGHT = 30.0
MUSCLES = tuple(f"{name}_{side}" for name in ("hamstrings", "bifemsh", "glut_max", "iliopsoas", "rect_fem", "vasti",
                                              "gastroc", "soleus", "tib_ant") for side in ("r", "l"))


def _mirror(name, side, other):
    return re.sub(side, other, name)


def _study(request):
    model = opensim.Model(str(request["model"]))
    metabolics = opensim.Bhargava2004SmoothedMuscleMetabolics()
    metabolics.setName("metabolics")
    metabolics.set_use_smoothing(True)
    # 2D_gait.osim keeps its muscles in <components>, not in the ForceSet (model.getMuscles() is empty): find them by
    # name as the example does.
    for name in MUSCLES:
        metabolics.addMuscle(name, opensim.Muscle.safeDownCast(model.getComponent(name)))
    model.addComponent(metabolics)
    model.finalizeConnections()

    track = opensim.MocoTrack()
    track.setName("gaitTrackingMetabolics")
    processor = opensim.ModelProcessor(model)
    track.setModel(processor)
    table = opensim.TableProcessor(str(request["coordinates"]))
    table.append(opensim.TabOpLowPassFilter(6))
    track.setStatesReference(table)
    track.set_states_global_tracking_weight(TRACKING_WEIGHT)
    track.set_allow_unused_references(True)
    track.set_track_reference_position_derivatives(True)
    track.set_apply_tracked_states_to_guess(True)
    track.set_initial_time(0.0)
    track.set_final_time(FINAL_TIME)
    study = track.initialize()
    problem = study.updProblem()

    symmetry = opensim.MocoPeriodicityGoal("symmetryGoal")
    problem.addGoal(symmetry)
    processed = processor.process()
    processed.initSystem()
    coordinates = processed.getCoordinateSet()
    for i in range(coordinates.getSize()):
        coordinate = coordinates.get(i)
        name = coordinate.getName()
        value, speed = coordinate.getStateVariableNames().get(0), coordinate.getStateVariableNames().get(1)
        for state in (value, speed):
            if name.endswith("_r"):
                symmetry.addStatePair(opensim.MocoPeriodicityGoalPair(state, _mirror(state, "_r", "_l")))
            elif name.endswith("_l"):
                symmetry.addStatePair(opensim.MocoPeriodicityGoalPair(state, _mirror(state, "_l", "_r")))
            elif not name.endswith("_tx"):
                symmetry.addStatePair(opensim.MocoPeriodicityGoalPair(state, state))
    symmetry.addStatePair(opensim.MocoPeriodicityGoalPair("/jointset/groundPelvis/pelvis_tx/speed"))
    symmetry.addControlPair(opensim.MocoPeriodicityGoalPair("/lumbarAct"))
    for name in MUSCLES:
        state = f"/{name}/activation"
        if name.endswith("_r"):
            symmetry.addStatePair(opensim.MocoPeriodicityGoalPair(state, _mirror(state, "_r", "_l")))
        else:
            symmetry.addStatePair(opensim.MocoPeriodicityGoalPair(state, _mirror(state, "_l", "_r")))

    effort = opensim.MocoControlGoal.safeDownCast(problem.updGoal("control_effort"))
    effort.setWeight(EFFORT_WEIGHT)
    metabolic = opensim.MocoOutputGoal("met", METABOLIC_WEIGHT)
    problem.addGoal(metabolic)
    metabolic.setOutputPath("/metabolics|total_metabolic_rate")
    metabolic.setDivideByDisplacement(True)
    metabolic.setDivideByMass(True)
    for path, bounds in BOUNDS.items():
        problem.setStateInfo(path, bounds)

    solver = opensim.MocoCasADiSolver.safeDownCast(study.updSolver())
    solver.resetProblem(problem)
    solver.set_num_mesh_intervals(int(request.get("mesh_intervals", 50)))
    solver.set_verbosity(int(request.get("verbosity", 0)))
    solver.set_optim_solver("ipopt")
    tolerance = float(request.get("tolerance", 1e-4))
    solver.set_optim_convergence_tolerance(tolerance)
    solver.set_optim_constraint_tolerance(tolerance)
    solver.set_optim_max_iterations(int(request.get("max_iterations", 10000)))
    return study, solver


def run(request):
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="moco_walk2d_metabolics_") as folder:
        os.chdir(folder)  # MocoTrack writes its tracked-states table to the working folder
        try:
            started = time.perf_counter()
            study, solver = _study(request)
            setup = time.perf_counter() - started
            cpu = time.process_time()
            started = time.perf_counter()
            solution = study.solve()
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu
        finally:
            os.chdir(here)
    solution.unseal()
    names = list(solution.getObjectiveTermNames())
    terms = {name: solution.getObjectiveTerm(name) for name in names}
    return {
        "opensim": opensim.GetVersionAndDate(), "objective": solution.getObjective(),
        "term_names": np.array(names, dtype=str), "term_values": np.array([terms[n] for n in names]),
        "iterations": solution.getNumIterations(), "solver_seconds": solution.getSolverDuration(),
        "wall_seconds": wall, "setup_seconds": setup, "process_cpu_seconds": cpu,
        "status": solution.getStatus(), "success": bool(solution.success()),
        "mesh_intervals": solver.get_num_mesh_intervals(), "tolerance": solver.get_optim_convergence_tolerance(),
        "hessian": solver.get_optim_hessian_approximation(), "dynamics_mode": solver.get_multibody_dynamics_mode(),
        "transcription": solver.get_transcription_scheme(),
        "time": np.asarray(solution.getTimeMat()).flatten(),
        "states": np.asarray(solution.getStatesTrajectoryMat()),
        "controls": np.asarray(solution.getControlsTrajectoryMat()),
        "state_labels": np.array(list(solution.getStateNames()), dtype=str),
        "control_labels": np.array(list(solution.getControlNames()), dtype=str),
    }
