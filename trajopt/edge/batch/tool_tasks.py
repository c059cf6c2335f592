"""Batch tasks for the OpenSim-style tools: each runs the same code as its command (``trajopt inverse-dynamics``,
``static-optimization``, ``muscle-inverse``) in a temporary folder on the worker and returns every file it
wrote, its printed lines (``log.txt``) and a few summary numbers. A failed solve returns its partial files."""

from __future__ import annotations

import contextlib
import io
import tempfile
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.muscle_inverse import mesh_intervals
from trajopt.studies.analysis.muscle_inverse_files import load_inverse
from trajopt.edge.batch.tasks import TaskContext, TaskOutput
from trajopt.errors import TrajoptInputError
from trajopt.model.io import read_table, write_sto
from trajopt.model.musculoskeletal.operators import AddReserves, DeGrooteMuscles
from trajopt.core.ocp import HermiteSimpson, Ipopt
from trajopt.edge.reports.muscle_inverse import write_report
from trajopt.edge.tools import inverse_dynamics as inverse_dynamics_tool
from trajopt.edge.tools import static_optimization as static_optimization_tool


def _collect(folder: Path) -> dict:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def _run_tool(module, argv: list[str]) -> tuple[int, str]:
    """(exit code, printed text) of a tool's main; bad input raises as it does on the command line."""
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        code = int(module.main(argv) or 0)
    return code, log.getvalue()


def _common_arguments(inputs: dict) -> list[str]:
    argv = [inputs["model"], inputs["motion"]]
    if inputs["external_loads"]:
        argv += ["--external-loads", inputs["external_loads"]]
    if inputs.get("paths"):
        argv += ["--paths", inputs["paths"]]
    if inputs.get("cutoff"):
        argv += ["--cutoff", repr(inputs["cutoff"])]
    return argv


def inverse_dynamics(inputs: dict, context: TaskContext) -> TaskOutput:
    with tempfile.TemporaryDirectory(prefix="trajopt-batch-") as temporary:
        folder = Path(temporary)
        code, log = _run_tool(inverse_dynamics_tool, _common_arguments(inputs) + ["--out", str(folder)])
        table = read_table(folder / "inverse_dynamics.sto")
        files = {**_collect(folder), "log.txt": log.encode()}
    summary = {"frames": table.num_frames, "max_generalized_force": float(np.abs(table.data).max())}
    return TaskOutput(code == 0, "done" if code == 0 else f"exit code {code}", summary, files)


def _frames(inputs: dict, folder: Path) -> str:
    """The motion, or its frames [first_frame, first_frame + frames) written to `folder`."""
    if not inputs["first_frame"] and not inputs["frames"]:
        return inputs["motion"]
    table = read_table(inputs["motion"])
    stop = table.num_frames if not inputs["frames"] else inputs["first_frame"] + inputs["frames"]
    if not 0 <= inputs["first_frame"] < stop <= table.num_frames:
        raise TrajoptInputError(f"{inputs['motion']}: frames {inputs['first_frame']}..{stop - 1} are outside its "
                                f"{table.num_frames} frames")
    part = type(table)(table.time[inputs["first_frame"]:stop], table.labels, table.data[inputs["first_frame"]:stop],
                       table.in_degrees, table.name, table.metadata, table.source)
    return str(write_sto(folder / Path(inputs["motion"]).name, part))


def static_optimization(inputs: dict, context: TaskContext) -> TaskOutput:
    with tempfile.TemporaryDirectory(prefix="trajopt-batch-") as temporary:
        folder = Path(temporary) / "out"
        motion = _frames(inputs, Path(temporary))
        argv = _common_arguments({**inputs, "motion": motion}) + ["--reserves", repr(inputs["reserves"]),
                                                                  "--out", str(folder)]
        code, log = _run_tool(static_optimization_tool, argv)
        activations = read_table(folder / "activations.sto")
        reserves = read_table(folder / "reserves.sto")
        files = {**_collect(folder), "log.txt": log.encode()}
    muscles = [i for i, label in enumerate(activations.labels) if not label.startswith("reserve_")]
    summary = {"frames": activations.num_frames, "max_reserve": float(np.abs(reserves.data).max()),
               "mean_activation": float(activations.data[:, muscles].mean())}
    if code == 0:
        return TaskOutput(True, "Solve_Succeeded", summary, files)
    return TaskOutput(False, "solve failed (see summary.md)", summary, files, error=log.strip().splitlines()[-1],
                      failure="solver")


def muscle_inverse(inputs: dict, context: TaskContext) -> TaskOutput:
    operators = [DeGrooteMuscles(False, 1.0)] + ([AddReserves(inputs["reserves"])] if inputs["reserves"] else [])
    inverse = load_inverse(inputs["model"], inputs["motion"], operators, inputs["external_loads"] or None,
                           inputs["paths"] or None)
    solution = inverse.solve(HermiteSimpson(mesh_intervals(inverse.duration, inputs["mesh_interval"])),
                             Ipopt(tol=inputs["tolerance"]))
    with tempfile.TemporaryDirectory(prefix="trajopt-batch-") as temporary:
        folder = write_report(Path(temporary) / "out", solution, title=f"Muscle-driven inverse: "
                                                                        f"{Path(inputs['motion']).name}")
        files = _collect(Path(folder))
    summary = {"objective": float(solution.objective), "iterations": int(solution.iterations)}
    if solution.success:
        return TaskOutput(True, str(solution.status), summary, files)
    return TaskOutput(False, str(solution.status), summary, files, error=f"IPOPT: {solution.status}",
                      failure="solver")
