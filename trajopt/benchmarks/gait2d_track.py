"""Benchmark ``trajopt bench gait2d-track``: Moco's example2DWalking tracking step (MocoTrack), trajopt vs Moco.

trajopt: ``moco_tracking_study`` of ``trajopt/examples/gait2d/prediction.py`` (referenceCoordinates.sto low-passed at
6 Hz and its splined speeds with weight 1, effort 10 on the 18 excitations and the lumbar control, the x and y
ground reactions of referenceGRF.sto through the feet's contact spheres divided by m g once, mirrored ends, the
example's bounds, pelvis_tx(0) free), with the references as Moco's goals spline them (natural quintic splines
through the filtered frames and through the GRF frames, at the collocation times) over [0, 0.470089] s as Moco's run;
24 Hermite-Simpson intervals with Moco's midpoint controls (MocoTrack's 0.020 s mesh interval), implicit dynamics,
exact Hessian, IPOPT tolerance 1e-4, timed end to end (model loading, build, transcription, NLP construction,
IPOPT). Moco: the example as its Python source builds it (``trajopt_opensim/moco_walk2d_tracking.py``: the solver as
MocoTrack configures it, tolerance 1e-2, explicit dynamics, limited-memory Hessian), in an OpenSim child process in
the same run when opensim is installed, its solve call timed; otherwise, or with ``--no-moco``, the run recorded in
``trajopt/examples/gait2d/moco/moco_walk2d_info.json`` (marked "recorded"). Each solution is also scored by the other
solver's formula: Moco's solution (live, or the recorded ``moco/gaitTracking_solution.sto``) as trajopt's NLP point
with no IPOPT iteration; trajopt's solution as the guess of Moco's problem with no iteration (the OpenSim child).

Writes ./trajopt_results/benchmarks/gait2d_track.json (or --out) and a Markdown table beside it: both objectives and
their terms, each solution under both formulas, the relative difference, iterations, wall times and their ratio,
the load average; with Moco run, its solution (states and controls, OpenSim labels) as
``gait2d_track_moco_solution.sto`` beside them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_intervals, add_no_moco, add_report_out, add_tolerance, report_file
from trajopt.examples.gait2d.metabolics import goal_value
from trajopt.examples.gait2d.model import GaitModel, coordinate_path
from trajopt.examples.gait2d.prediction import REFERENCE_COORDINATES, moco_tracking_study
from trajopt.studies.gait.muscle_tracking import GRF_LABEL, MuscleDrivenTracking
from trajopt.studies.gait.tracking import ReferenceInterpolation, state_tracking
from trajopt.model.io.motion_processor import MotionProcessor
from trajopt.model.io.opensim_reference import OpenSimTaskError, opensim_available, run_opensim_task
from trajopt.model.io.output import write_report
from trajopt.model.io.signals import natural_spline, spline_pieces
from trajopt.model.io.tables import read_table, write_sto
from trajopt.core.ocp import Guess, HermiteSimpson, Hessian, Integral, Ipopt, PiecewisePolynomial, Tracking
from trajopt.table import Table

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "2D gait muscle-driven tracking with GRFs (Moco example2DWalking's MocoTrack): trajopt vs Moco, same run"

ROOT = Path(__file__).resolve().parent.parent.parent
GAIT2D = ROOT / "trajopt" / "examples" / "gait2d"
MOCO_RECORD = GAIT2D / "moco" / "moco_walk2d_info.json"
MOCO_SOLUTION = GAIT2D / "moco" / "gaitTracking_solution.sto"
FINAL_TIME = 0.470089  # Moco's run (OpenSim 4.6 refuses the example's 0.47008941: its filtered table ends before)
INTERVALS = 24  # MocoTrack's: ceil(0.470089 s / 0.020 s)
TOLERANCE = 1e-4
MOCO_TOLERANCE = 1e-2  # MocoTrack's, which the Python example keeps
OBJECTIVE_TOLERANCE = 0.01  # the issue's agreement target: objectives within 1 %
NO_MOVE = {"bound_push": 1e-14, "bound_frac": 1e-14, "slack_bound_push": 1e-14, "slack_bound_frac": 1e-14}


@dataclasses.dataclass(frozen=True, eq=False)
class TrackProblem:
    """The built problem: the study, its tracking problem and the three goals, each as Moco names it."""

    model: GaitModel
    study: MuscleDrivenTracking
    tracking: object
    goals: dict  # "state_tracking", "control_effort", "contact" -> Goal (weighted)

    @property
    def problem(self):
        return self.tracking.problem


def build(model: GaitModel | None = None) -> TrackProblem:
    """example2DWalking's tracking step on trajopt (module docstring) and its goals rebuilt one by one."""
    model = model if model is not None else GaitModel.load()
    study = dataclasses.replace(moco_tracking_study(model),
                                motion=MotionProcessor(REFERENCE_COORDINATES, cutoff_frequency=6.0,
                                                       window=(0.0, FINAL_TIME)),
                                reference_interpolation=ReferenceInterpolation.QUINTIC_SPLINES)
    tracking = study.build()
    built = tracking.muscle_driven
    coordinates, speeds = study.tracked_frames()
    values, rates = state_tracking(built, coordinates, study.weights, speeds, study.reference_interpolation)
    controls = ca.vertcat(built.muscle_controls, built.actuator_controls)
    effort = study.weights.excitations * Integral(ca.sumsqr(controls))  # the same weight on both kinds of control
    right, left = study.ground_reaction_function()(built.q, built.u)[0:2]
    axes = {"x": 0, "y": 1, "z": 2}
    forces = ca.vertcat(*(force[axes[a]] for force in (right, left) for a in study.grf_axes))
    grf = read_table(study.ground_reactions)
    labels = [GRF_LABEL.format(side=side, axis=a) for side in ("r", "l") for a in study.grf_axes]
    normalization = study.grf_normalization  # sqrt(m g): the squared error divided by m g
    reference = natural_spline(grf.time, np.column_stack([grf.column(label) for label in labels]) / normalization)
    contact = study.weights.ground_reactions * Tracking(forces / normalization,
                                                        PiecewisePolynomial(*spline_pieces(reference)))
    goals = {"state_tracking": values + rates, "control_effort": effort, "contact": contact}
    return TrackProblem(model, study, tracking, goals)


def objective_terms(built: TrackProblem, solution) -> dict[str, float]:
    """Each goal's weighted value at the solution (Moco's getObjectiveTerm)."""
    return {name: goal_value(goal, built.problem, solution) for name, goal in built.goals.items()}


def solve(intervals: int, tolerance: float, print_level: int = 0):
    """(problem, solution, seconds end to end: model loading, build, transcription, NLP construction, IPOPT)."""
    started = time.perf_counter()
    built = build()
    guess = built.study.guess(built.tracking.muscle_driven)
    solution = built.problem.solve(HermiteSimpson(intervals, interpolate_control_midpoints=True),
                                   Ipopt(tol=tolerance, max_iterations=10000, print_level=print_level,
                                         hessian=Hessian.EXACT, options={"constr_viol_tol": tolerance}),
                                   guess=guess)
    return built, solution, time.perf_counter() - started


def score(built: TrackProblem, trajectory: Table, intervals: int) -> dict:
    """trajopt's objective and terms of another trajectory on the same grid (states and controls with OpenSim
    labels, e.g. Moco's solution): the trajectory as the NLP point, no IPOPT iteration, nothing moved."""
    v, model = built.tracking.muscle_driven, built.model
    names, muscles = model.coordinate_names, model.muscle_names
    guess = Guess.from_table(trajectory, [
        (v.q, [coordinate_path(n) for n in names]), (v.u, [coordinate_path(n, "speed") for n in names]),
        (v.activations, [f"/{m}/activation" for m in muscles]), (v.excitations, [f"/{m}" for m in muscles]),
        (v.actuator_controls, [f"/{model.lumbar_actuator.name}"])])
    solution = built.problem.solve(HermiteSimpson(intervals, interpolate_control_midpoints=True),
                                   Ipopt(max_iterations=0, print_level=0, options=NO_MOVE), guess=guess)
    return {"objective": float(solution.objective), "objective_terms": objective_terms(built, solution)}


def run_trajopt(intervals: int, tolerance: float) -> tuple[dict, TrackProblem, Table]:
    load = os.getloadavg()[0]
    cpu = time.process_time()
    built, solution, seconds = solve(intervals, tolerance)
    record = {"hessian": Hessian.EXACT.value, "tolerance": tolerance, "status": solution.status,
              "success": bool(solution.success), "iterations": solution.iterations,
              "objective": float(solution.objective), "objective_terms": objective_terms(built, solution),
              "wall_s": seconds, "ipopt_s": solution.wall_time, "construction_s": seconds - solution.wall_time,
              "process_cpu_s": time.process_time() - cpu, "variables": int(solution.discrete.layout.size),
              "loadavg_before": load, "loadavg_after": os.getloadavg()[0]}
    return record, built, solution.table()


def trajectory_request(trajectory: Table) -> dict:
    """A trajectory for the OpenSim child to score (time, labels, values)."""
    return {"score_time": trajectory.time, "score_labels": np.array(trajectory.labels, dtype=str),
            "score_values": trajectory.data}


def moco_request(intervals: int, tolerance: float) -> dict:
    request = {"model": GAIT2D / "2D_gait.osim", "coordinates": GAIT2D / "referenceCoordinates.sto",
               "grf_xml": GAIT2D / "referenceGRF.xml", "mesh_intervals": intervals}
    return request if tolerance == MOCO_TOLERANCE else {**request, "tolerance": tolerance}


def run_moco(intervals: int, tolerance: float, trajopt_solution: Table, timeout: float) -> dict:
    """Moco's solve of the example in an OpenSim child process, then Moco's objective of trajopt's solution; when
    the child fails or runs out of time, its status says so and the objective is None."""
    load, started = os.getloadavg()[0], time.perf_counter()
    try:
        result = run_opensim_task("moco_walk2d_tracking", {**moco_request(intervals, tolerance),
                                                           **trajectory_request(trajopt_solution)}, timeout=timeout)
    except (OpenSimTaskError, subprocess.TimeoutExpired) as error:
        reason = f"stopped after the {timeout:.0f} s timeout" if isinstance(error, subprocess.TimeoutExpired) else \
            str(error).splitlines()[0]
        return {"status": f"not finished: {reason}", "success": False, "objective": None,
                "wall_seconds": time.perf_counter() - started, "loadavg_before": load,
                "loadavg_after": os.getloadavg()[0]}
    print("moco: " + ", ".join(f"{key} {value}" for key, value in result.items() if getattr(value, "ndim", 0) == 0),
          flush=True)
    labels = tuple(str(n) for n in result["state_labels"]) + tuple(str(n) for n in result["control_labels"])
    trajectory = Table(result["time"], labels, np.hstack([result["states"], result["controls"]]), False,
                       "moco_solution")
    scored = {"objective": float(result["score_objective"]),
              "objective_terms": _terms(result["score_term_names"], result["score_term_values"])}
    return {**moco_summary(result, load), "trajectory": trajectory, "trajopt_solution_scored": scored}


def _terms(names, values) -> dict[str, float]:
    return dict(zip([str(n) for n in names], [float(v) for v in values]))


def moco_summary(result: dict, load_before: float | None = None) -> dict:
    """The numbers kept of a Moco child run (``trajopt_opensim.moco_walk2d_tracking``)."""
    return {"opensim": result["opensim"], "status": result["status"], "success": bool(result["success"]),
            "iterations": int(result["iterations"]), "objective": float(result["objective"]),
            "objective_terms": _terms(result["term_names"], result["term_values"]),
            "wall_seconds": float(result["wall_seconds"]), "solver_seconds": float(result["solver_seconds"]),
            "setup_seconds": float(result["setup_seconds"]),
            "process_cpu_seconds": float(result["process_cpu_seconds"]),
            "mesh_intervals": int(result["mesh_intervals"]), "tolerance": float(result["tolerance"]),
            "constraint_tolerance": float(result["constraint_tolerance"]), "hessian": result["hessian"],
            "dynamics_mode": result["dynamics_mode"], "transcription": result["transcription"],
            "finite_differences": result["finite_differences"], "loadavg_before": load_before,
            "loadavg_after": os.getloadavg()[0]}


def moco_record() -> dict | None:
    """Moco's recorded run of the example's tracking step (None when the file is absent), with its solution."""
    if not MOCO_RECORD.exists():
        return None
    info = json.loads(MOCO_RECORD.read_text())
    run = info["tracking"]
    record = {"opensim": info["opensim"], "status": run["status"], "success": run["success"],
              "iterations": run["iterations"], "objective": run["objective"],
              "objective_terms": run["objective_terms"], "wall_seconds": run["wall_s"],
              "solver_seconds": run["solver_duration_s"], "process_cpu_seconds": run["process_cpu_s"],
              "mesh_intervals": run["num_mesh_intervals"], "tolerance": run["conv_tol"],
              "constraint_tolerance": run["constr_tol"], "hessian": run["hessian"],
              "dynamics_mode": run["dynamics_mode"], "transcription": run["transcription"],
              "finite_differences": run["fd_scheme"], "loadavg_after": run["loadavg_after"][0],
              "source": "recorded on this kind of machine (trajopt/examples/gait2d/moco/moco_walk2d_info.json)"}
    if MOCO_SOLUTION.exists():
        record["trajectory"] = read_table(MOCO_SOLUTION)
    return record


def _number(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown(report: dict) -> str:
    t, m, machine = report["trajopt"], report["moco"], report["machine"]
    moco_terms = m.get("objective_terms", {})
    terms = list(dict.fromkeys([*t["objective_terms"], *moco_terms]))
    rows = [("status", t["status"], m["status"]),
            ("objective", f"{t['objective']:.6f}", _number(m["objective"], ".6f")),
            *((f"term `{k}`", _number(t["objective_terms"].get(k), ".6f"), _number(moco_terms.get(k), ".6f"))
              for k in terms),
            ("IPOPT iterations", t["iterations"], m.get("iterations", "-")),
            ("wall time (s)", f"{t['wall_s']:.1f} (IPOPT {t['ipopt_s']:.1f})", f"{m['wall_seconds']:.1f}"),
            ("process CPU time (s)", f"{t['process_cpu_s']:.1f}", _number(m.get("process_cpu_seconds"), ".1f")),
            ("mesh", f"{report['intervals']} Hermite-Simpson intervals, midpoint controls = mean of the mesh "
                     "points'", f"{m.get('mesh_intervals', '-')} {m.get('transcription', '-')} intervals"),
            ("dynamics, Hessian, tolerance", f"implicit, {t['hessian']}, {t['tolerance']:g}",
             f"{m.get('dynamics_mode', '-')}, {m.get('hessian', '-')}, {_number(m.get('tolerance'), 'g')}")]
    cross = report["cross_scores"]
    scored = [("trajopt's solution", f"{t['objective']:.6f}", _number(cross["trajopt_by_moco"], ".6f")),
              ("Moco's solution", _number(cross["moco_by_trajopt"], ".6f"), _number(m["objective"], ".6f"))]
    difference = report["objective_relative_difference"]
    verdict = "no Moco objective to compare" if difference is None else \
        f"{difference:+.3%} (target within {OBJECTIVE_TOLERANCE:.0%}: " \
        f"{'met' if report['objective_within_tolerance'] else 'not met'})"
    live = report["moco_in_this_run"]
    rerun = [] if live is None or live == "the run above" else \
        [f"Moco in this run: {live['status']} after {live['wall_seconds']:.0f} s.", ""]
    ratio = report["wall_time_ratio"]
    return "\n".join([
        "# gait2d-track: Moco's example2DWalking tracking step (MocoTrack), trajopt vs Moco", "",
        f"Moco: {m['source']}. {report['notes']}", "", *rerun,
        "| quantity | trajopt | Moco |", "|---|---|---|", *[f"| {a} | {b} | {c} |" for a, b, c in rows], "",
        "Each solution under both objective formulas (no solver iteration from it):", "",
        "| solution | trajopt's formula | Moco's formula |", "|---|---|---|",
        *[f"| {a} | {b} | {c} |" for a, b, c in scored], "",
        f"Objective relative difference (trajopt / Moco - 1): {verdict}. Wall-time ratio Moco / trajopt: "
        f"{_number(ratio, '.1f')}. Load average (1 min) at the start {machine['load_average_at_start'][0]:.1f}, "
        f"at the end {machine['load_average_at_end'][0]:.1f} ({machine['cpu_count']} CPUs).", ""])


NOTES = ("trajopt: implicit multibody dynamics, exact Hessian, IPOPT tolerance as given (constr_viol_tol the same), "
         "midpoint controls = mean of the mesh points' (Moco's transcription), the coordinates, speeds and GRFs as "
         "Moco's goals spline them (natural quintic splines through the frames, at the collocation times), "
         "polynomial muscle paths; wall_s end to end. Moco: the example's Python tracking step with the solver as "
         "MocoTrack configures it (explicit dynamics, limited-memory Hessian, forward finite differences); "
         "wall_seconds = the solve call (problem set-up excluded, setup_seconds). Process CPU time: all threads of "
         "the process over the same span (time spent waiting for a core on a shared machine left out). The terms "
         "are each solver's weighted goals (Moco's getObjectiveTerm). Cross scores: Moco's solution as trajopt's "
         "NLP point, trajopt's solution as the guess of Moco's problem, each with no IPOPT iteration and IPOPT's "
         "bound push off.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench gait2d-track", description=description(__doc__))
    add_intervals(parser, INTERVALS)  # MocoTrack's
    add_tolerance(parser, TOLERANCE)
    parser.add_argument("--moco-tolerance", type=float, default=MOCO_TOLERANCE, metavar="TOL",
                        help=f"Moco's convergence and constraint tolerance (default {MOCO_TOLERANCE:g}, MocoTrack's)")
    add_no_moco(parser)  # Moco's solve takes minutes
    parser.add_argument("--moco-timeout", type=float, default=3600.0,
                        help="seconds before Moco's child process is stopped (default 1 h)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    if args.intervals < 4:
        parser.error(f"need --intervals >= 4, got {args.intervals}")
    for option, value in (("--tolerance", args.tolerance), ("--moco-tolerance", args.moco_tolerance)):
        if not 0 < value < 1:
            parser.error(f"need 0 < {option} < 1, got {value}")
    args.out = report_file(args.out, "gait2d_track")  # the report file inside the --out folder
    load_at_start = list(os.getloadavg())
    trajopt, built, solution = run_trajopt(args.intervals, args.tolerance)
    print(f"trajopt: {trajopt['status']}, {trajopt['iterations']} iterations, objective {trajopt['objective']:.6f}, "
          f"{trajopt['wall_s']:.1f} s end to end", flush=True)
    recorded = moco_record()
    if recorded is None or recorded["mesh_intervals"] != args.intervals or \
            recorded["tolerance"] != args.moco_tolerance:
        recorded = None
    live = None
    if opensim_available() and not args.no_moco:
        live = {**run_moco(args.intervals, args.moco_tolerance, solution, args.moco_timeout),
                "source": "measured in this run (OpenSim child process)"}
    moco = live if live is not None and live["objective"] is not None else recorded
    if moco is None and live is None:
        parser.error(f"Moco's run is needed: install opensim, or use --intervals {INTERVALS} and --moco-tolerance "
                     f"{MOCO_TOLERANCE:g} for the recorded run")
    moco = live if moco is None else moco
    trajectory = moco.pop("trajectory", None)
    by_moco = moco.pop("trajopt_solution_scored", None)
    by_trajopt = None if trajectory is None else score(built, trajectory, args.intervals)
    difference = None if moco["objective"] is None else trajopt["objective"] / moco["objective"] - 1.0
    if live is not None and live is not moco:
        live.pop("trajectory", None)
        live.pop("trajopt_solution_scored", None)
    report = {
        "benchmark": "gait2d tracking (Moco example2DWalking's MocoTrack step), Hermite-Simpson",
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_average_at_start": load_at_start, "load_average_at_end": list(os.getloadavg())},
        "intervals": args.intervals, "final_time": FINAL_TIME, "trajopt": trajopt, "moco": moco,
        "moco_in_this_run": live if live is not moco else "the run above",
        "cross_scores": {"trajopt_by_moco": None if by_moco is None else by_moco["objective"],
                         "trajopt_by_moco_terms": None if by_moco is None else by_moco["objective_terms"],
                         "moco_by_trajopt": None if by_trajopt is None else by_trajopt["objective"],
                         "moco_by_trajopt_terms": None if by_trajopt is None else by_trajopt["objective_terms"]},
        "objective_relative_difference": difference,
        "objective_within_tolerance": None if difference is None else bool(abs(difference) <= OBJECTIVE_TOLERANCE),
        "wall_time_ratio": None if moco["objective"] is None else moco["wall_seconds"] / trajopt["wall_s"],
        "notes": NOTES,
    }
    path = write_report(args.out, report)
    if trajectory is not None and moco is live:  # Moco's solution, to evaluate trajopt's goals on it
        write_sto(path.with_name(f"{path.stem}_moco_solution.sto"), trajectory)
    path.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
