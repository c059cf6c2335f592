"""Moco's example2DWalking tracking step (opensim-core Bindings/Python/examples/Moco/example2DWalking), built as the
example builds it, solved and timed; optionally Moco's objective of another trajectory on the same grid.

MocoTrack "gaitTracking" on 2D_gait.osim: states reference = referenceCoordinates.sto low-passed at 6 Hz, global
tracking weight 1, position derivatives tracked, tracked states applied to the guess, t in [0, 0.470089] (the
example's 0.47008941 is refused by OpenSim 4.6: its filtered table ends at 0.47008934);
MocoPeriodicityGoal (coordinate values except pelvis_tx and all speeds mirrored left/right, the activations
mirrored, the lumbar control); the MocoTrack control effort with weight 10; MocoContactTrackingGoal "contact"
(weight 1) on the right and left feet's two contact spheres against referenceGRF.xml's Right_GRF and Left_GRF,
projected onto the plane normal to z; the example's state bounds. The Python example leaves the solver as
MocoTrack configures it (mesh interval 0.020 s, explicit dynamics, tolerances 1e-2, forward finite differences;
MocoCasADiSolver's other defaults); ``mesh_intervals`` and ``tolerance`` override those.

Request: model, coordinates, grf_xml (paths); optional mesh_intervals, tolerance, max_iterations, solve (0: no
solve); optional ``score_time``, ``score_labels``, ``score_values`` (a trajectory's time, OpenSim state and control
paths and values on the solver's grid, e.g. another solver's solution), whose objective and terms Moco then
evaluates: the same problem solved from that trajectory as the guess with no IPOPT iteration and IPOPT's bound push
off (an ``ipopt.opt`` beside the run), so the point is not moved. Result: the solver's settings and opensim version;
with the solve, objective, its terms (weighted, as Moco reports them), iterations, solver_seconds (Moco's
solver_duration), wall_seconds (the solve call), status, success, the solution's time, states and controls with
their labels; with a trajectory to score, ``score_objective``, ``score_term_names``, ``score_term_values``.
"""

import os
import re
import tempfile
import time

import numpy as np
import opensim

from trajopt_opensim._moco_walk2d import BOUNDS, FINAL_TIME

CONTROL_EFFORT_WEIGHT = 10.0
STATE_TRACKING_WEIGHT = 1.0
GRF_TRACKING_WEIGHT = 1.0
# IPOPT reads ipopt.opt from the working folder: no move of the starting point into the bounds' interior.
NO_BOUND_PUSH = "bound_push 1e-14\nbound_frac 1e-14\nslack_bound_push 1e-14\nslack_bound_frac 1e-14\n"


def _symmetry(model):
    """The example's MocoPeriodicityGoal: state names with _r / _l mirrored, the others (pelvis_tx's value and the
    activations excepted) repeated; the activations mirrored; the lumbar control repeated."""
    goal = opensim.MocoPeriodicityGoal("symmetryGoal")
    names = [model.getStateVariableNames().getitem(i) for i in range(model.getNumStateVariables())]
    for name in names:
        if not name.startswith("/jointset"):
            continue
        if "_r" in name:
            goal.addStatePair(opensim.MocoPeriodicityGoalPair(name, re.sub(r"_r", "_l", name)))
        if "_l" in name:
            goal.addStatePair(opensim.MocoPeriodicityGoalPair(name, re.sub(r"_l", "_r", name)))
        if not ("_r" in name or "_l" in name or "pelvis_tx/value" in name or "/activation" in name):
            goal.addStatePair(opensim.MocoPeriodicityGoalPair(name))
    for name in names:
        if name.endswith("/activation"):
            if "_r" in name:
                goal.addStatePair(opensim.MocoPeriodicityGoalPair(name, re.sub(r"_r", "_l", name)))
            if "_l" in name:
                goal.addStatePair(opensim.MocoPeriodicityGoalPair(name, re.sub(r"_l", "_r", name)))
    goal.addControlPair(opensim.MocoPeriodicityGoalPair("/lumbarAct"))
    return goal


def _contact_tracking(grf_xml):
    goal = opensim.MocoContactTrackingGoal("contact", GRF_TRACKING_WEIGHT)
    goal.setExternalLoadsFile(str(grf_xml))
    for side, name in (("r", "Right_GRF"), ("l", "Left_GRF")):
        forces = opensim.StdVectorString()
        forces.append(f"contactHeel_{side}")
        forces.append(f"contactFront_{side}")
        goal.addContactGroup(forces, name)
    goal.setProjection("plane")
    goal.setProjectionVector(opensim.Vec3(0, 0, 1))
    return goal


def _study(request):
    track = opensim.MocoTrack()
    track.setName("gaitTracking")
    table = opensim.TableProcessor(str(request["coordinates"]))
    table.append(opensim.TabOpLowPassFilter(6))
    processor = opensim.ModelProcessor(str(request["model"]))
    track.setModel(processor)
    track.setStatesReference(table)
    track.set_states_global_tracking_weight(STATE_TRACKING_WEIGHT)
    track.set_allow_unused_references(True)
    track.set_track_reference_position_derivatives(True)
    track.set_apply_tracked_states_to_guess(True)
    track.set_initial_time(0.0)
    track.set_final_time(FINAL_TIME)
    study = track.initialize()
    problem = study.updProblem()

    model = processor.process()
    model.initSystem()
    problem.addGoal(_symmetry(model))
    effort = opensim.MocoControlGoal.safeDownCast(problem.updGoal("control_effort"))
    effort.setWeight(CONTROL_EFFORT_WEIGHT)
    problem.addGoal(_contact_tracking(request["grf_xml"]))
    for path, bounds in BOUNDS.items():
        problem.setStateInfo(path, bounds)

    solver = opensim.MocoCasADiSolver.safeDownCast(study.updSolver())
    solver.resetProblem(problem)  # the goals and bounds added since MocoTrack made the solver (for createGuess)
    if "mesh_intervals" in request:
        solver.set_num_mesh_intervals(int(request["mesh_intervals"]))
    if "tolerance" in request:
        solver.set_optim_convergence_tolerance(float(request["tolerance"]))
        solver.set_optim_constraint_tolerance(float(request["tolerance"]))
    if "max_iterations" in request:
        solver.set_optim_max_iterations(int(request["max_iterations"]))
    solver.set_verbosity(int(request.get("verbosity", 0)))
    return study, solver


def _terms(solution):
    names = list(solution.getObjectiveTermNames())
    return np.array(names, dtype=str), np.array([solution.getObjectiveTerm(name) for name in names])


def _score(request, study, solver):
    """Moco's objective of the trajectory in the request: no iteration from it as the guess, nothing moved."""
    guess = solver.createGuess()
    times = np.asarray(request["score_time"], dtype=float)
    guess.setNumTimes(times.size)
    guess.setTime(opensim.Vector(times.tolist()))
    values = np.asarray(request["score_values"], dtype=float)
    states, controls = set(guess.getStateNames()), set(guess.getControlNames())
    for k, label in enumerate(str(n) for n in request["score_labels"]):
        column = opensim.Vector(values[:, k].tolist())
        if label in states:
            guess.setState(label, column)
        elif label in controls:
            guess.setControl(label, column)
    solver.setGuess(guess)
    solver.set_optim_max_iterations(0)
    with open("ipopt.opt", "w") as options:
        options.write(NO_BOUND_PUSH)
    solution = study.solve()
    solution.unseal()
    names, values = _terms(solution)
    return {"score_objective": solution.getObjective(), "score_term_names": names, "score_term_values": values}


def _solve(study, solver):
    cpu = time.process_time()
    started = time.perf_counter()
    solution = study.solve()
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu
    solution.unseal()
    names, values = _terms(solution)
    return {
        "objective": solution.getObjective(), "term_names": names, "term_values": values,
        "iterations": solution.getNumIterations(), "solver_seconds": solution.getSolverDuration(),
        "wall_seconds": wall, "process_cpu_seconds": cpu, "status": solution.getStatus(),
        "success": bool(solution.success()), "time": np.asarray(solution.getTimeMat()).flatten(),
        "states": np.asarray(solution.getStatesTrajectoryMat()),
        "controls": np.asarray(solution.getControlsTrajectoryMat()),
        "state_labels": np.array(list(solution.getStateNames()), dtype=str),
        "control_labels": np.array(list(solution.getControlNames()), dtype=str),
    }


def run(request):
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="moco_walk2d_tracking_") as folder:
        os.chdir(folder)  # MocoTrack writes its tracked-states table to the working folder
        try:
            started = time.perf_counter()
            study, solver = _study(request)
            result = {
                "opensim": opensim.GetVersionAndDate(), "setup_seconds": time.perf_counter() - started,
                "mesh_intervals": solver.get_num_mesh_intervals(),
                "tolerance": solver.get_optim_convergence_tolerance(),
                "constraint_tolerance": solver.get_optim_constraint_tolerance(),
                "max_iterations": solver.get_optim_max_iterations(),
                "hessian": solver.get_optim_hessian_approximation(),
                "dynamics_mode": solver.get_multibody_dynamics_mode(),
                "transcription": solver.get_transcription_scheme(),
                "finite_differences": solver.get_optim_finite_difference_scheme(),
            }
            if int(request.get("solve", 1)):
                result.update(_solve(study, solver))
            if "score_time" in request:
                result.update(_score(request, study, solver))
        finally:
            os.chdir(here)
    return result
