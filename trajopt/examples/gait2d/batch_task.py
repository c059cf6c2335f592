"""The ``gait2d-prediction`` batch task: the prediction of ``prediction.build_problem`` at one speed.

Inputs: ``speed`` (m/s), ``intervals``, ``final_time`` and ``pelvis_tx`` bounds ([lower, upper]; Moco's example
has [0.4, 0.6] s and [0, 1] m, which decide the answer away from 1.2-1.4 m/s), ``max_iterations``. The guess is
the neighbour's solution along a warm-started sweep, else the reference coordinates (as ``trajopt run
gait2d-prediction``). Summary: status, objective, final time, stride length (2 x the half cycle's displacement),
cadence (steps per minute; a half cycle is one step), the objective (effort per metre), a mechanical cost of
transport (positive musculotendon work / (m g distance); the model has no metabolic model), and every bound the
solution sits on (``active_bounds``: the final time and the coordinates; activations at their 0.01 floor are
expected and left out).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
import tempfile

import numpy as np

from trajopt.model.io import write_sto
from trajopt.model.paths.domain_report import print_path_domain_warning
from trajopt.edge.batch.tasks import Input, Pair, TaskContext, TaskDefinition, TaskOutput
from trajopt.core.ocp import Free, Guess
from trajopt.core.ocp.bounds import active_bounds

from trajopt.examples.gait2d.main import PREDICTION_OBJECTIVE_SCALING, solver_settings
from trajopt.examples.gait2d.model import GaitModel, coordinate_path
from trajopt.examples.gait2d.prediction import build_problem


@functools.lru_cache(maxsize=1)
def _model() -> GaitModel:
    return GaitModel.load()


def guess_from_table(gait, table) -> Guess:
    """A Guess of every variable of the prediction from a solution table (OpenSim state/control paths)."""
    v, model = gait.muscle_driven, gait.model
    names, muscles = model.coordinate_names, model.muscle_names
    columns = [(v.q, [coordinate_path(n) for n in names]), (v.u, [coordinate_path(n, "speed") for n in names]),
               (v.accelerations, [coordinate_path(n, "accel") for n in names]),
               (v.activations, [f"/{m}/activation" for m in muscles]), (v.excitations, [f"/{m}" for m in muscles]),
               (v.actuator_controls, [f"/{model.lumbar_actuator.name}"])]
    return Guess.from_table(table, columns)


def positive_muscle_work(gait, solution) -> float:
    """∫ Σ max(0, -F_tendon · lengthening speed) dt over the half cycle (J): the muscles' positive work."""
    v, muscles = gait.muscle_driven, gait.model.musculoskeletal
    q, u, a = (np.atleast_2d(solution.value(x)) for x in (v.q, v.u, v.activations))
    frames = solution.time.size
    forces = np.asarray(muscles.tendon_forces.map(frames)(a, q, u))
    _, lengthening, _ = muscles.musculotendon_kinematics.map(frames)(q, u)
    power = np.maximum(0.0, -forces * np.asarray(lengthening)).sum(axis=0)
    return float(np.trapezoid(power, solution.time))


def run(inputs: dict, context: TaskContext) -> TaskOutput:
    model = _model()
    gait = build_problem(inputs["intervals"], inputs["speed"], model=model, duration=Free(*inputs["final_time"]),
                         coordinate_bounds={"pelvis_tx": tuple(inputs["pelvis_tx"])})
    problem = gait.problem
    guess = guess_from_table(gait, context.guess) if context.guess is not None else gait.reference_guess()
    settings = solver_settings(0, inputs["max_iterations"], objective_scaling=PREDICTION_OBJECTIVE_SCALING)
    solution = problem.solve(gait.transcription, settings, guess=guess)
    tx = gait.muscle_driven.q[model.coordinate_index("pelvis_tx")]
    displacement = float(solution.value(problem.final(tx) - problem.initial(tx)))
    work = positive_muscle_work(gait, solution)
    bounds = [b for b in active_bounds(solution, kinds=("states",)) if not b.name.endswith("/activation")]
    active = [_short(b) for b in bounds]
    summary = {"speed": inputs["speed"], "status": solution.status, "iterations": solution.iterations,
               "objective": solution.objective, "final_time": solution.duration,
               "stride_length": 2 * displacement, "cadence": 60.0 / solution.duration,
               "achieved_speed": displacement / solution.duration,
               "effort_per_distance": solution.objective,
               "cost_of_transport": work / (model.multibody_weight * displacement) if displacement > 0 else None,
               "positive_muscle_work_half_cycle_J": work, "ipopt_seconds": solution.wall_time,
               "worst_constraint": solution.worst_constraint, "active_bounds": active,
               "active_bounds_detail": [str(b) for b in bounds],
               "final_time_bound_active": any(b.name == "duration" for b in bounds),
               "guess": context.guess_label or "reference coordinates",
               "path_domain": print_path_domain_warning(gait.muscle_driven.path_domain_report(solution)).to_json()}
    files = {"solution.sto": _sto_bytes(solution), "summary.json": json.dumps(summary, indent=1).encode()}
    if solution.success:
        return TaskOutput(True, solution.status, summary, files, guess_file="solution.sto")
    return TaskOutput(False, solution.status, summary, files, guess_file="solution.sto",
                      error=f"IPOPT {solution.status}; worst constraint {solution.worst_constraint}", failure="solver")


def _short(bound) -> str:
    """'final time upper 1', 'knee_angle_l lower x2' (the coordinate name from its OpenSim path; grid points)."""
    if bound.name == "duration":
        return f"final time {bound.side} {bound.bound:g} s"
    parts = [p for p in bound.name.split("/") if p]
    name = parts[-2] if len(parts) >= 2 and parts[-1] in ("value", "speed") else bound.name
    return f"{name}{' speed' if parts[-1] == 'speed' else ''} {bound.side} x{bound.points}"


def _sto_bytes(solution) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        return write_sto(Path(folder) / "solution.sto", solution.table()).read_bytes()


# Registered as the `gait2d-prediction` entry point of trajopt.batch_tasks (pyproject.toml).
TASK = TaskDefinition(
    "gait2d-prediction", "trajopt.examples.gait2d.batch_task",
    "2D gait prediction (Moco's example2DWalking) at a speed; warm starts along a speed sweep",
    {"speed": Input(float, help="average speed in m/s"),
     "intervals": Input(int, default=50, help="Hermite-Simpson mesh intervals"),
     "final_time": Input(Pair, default=[0.4, 0.6], help="bounds of the half cycle's duration in s"),
     "pelvis_tx": Input(Pair, default=[0.0, 1.0], help="bounds of pelvis_tx in m (Moco: [0, 1])"),
     "max_iterations": Input(int, default=1000, help="IPOPT iteration limit")},
    metrics=("cost_of_transport", "stride_length", "cadence"), warm_starts=True,
    units={"speed": "m/s", "stride_length": "m", "cadence": "steps/min", "final_time": "s",
           "cost_of_transport": "positive muscle work / (m g d)", "effort_per_distance": "1/m",
           "seconds": "s"})
