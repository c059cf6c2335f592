"""Benchmark ``trajopt bench walk3d-track``: muscle-driven tracking of a full gait cycle of Moco's example3DWalking,
end to end, against the tracking criteria and Moco's recorded times.

The problem is ``trajopt run walk3d-tracking``'s (``trajopt/examples/walk3d/muscle_tracking.py``): 80 DeGroote
rigid-tendon muscles, function-based paths, 12 contact spheres, coordinates.sto's coordinates and splined speeds and
grf_walk.mot's forces tracked over 0.48-1.61 s, no pelvis residuals. It is solved in a fresh interpreter so that the
clock holds everything a user waits for: imports, reading and processing the model, building the problem, the guess
and IPOPT. The criteria: Solve_Succeeded; every rotational coordinate's RMS error <= 3 deg and every pelvis
translation's <= 1 cm; every ground-reaction component's RMS error <= 10 % of body weight; no pelvis residuals;
<= 3 min end to end. Moco's figures beside them are recorded ones (``MOCO``), not run here: a Moco tracking solve of
this size takes far longer than this benchmark. The load average is recorded before and after: the machine may be
shared, and times from a loaded machine are longer; iterations and errors are not. Writes
./trajopt_results/benchmarks/walk3d_track.json (or ``--out``) and a markdown table beside it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import (add_max_iterations, add_mesh_interval, add_report_out, add_tolerance,
                                      check_mesh_interval, report_file)
from trajopt.examples.walk3d.muscle_tracking import MESH_INTERVAL, guess_for, solver_for, tracking_study
from trajopt.model.io.output import write_report

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "walk3d muscle-driven tracking of a full gait cycle: end to end, the criteria, Moco's recorded times"

ROOT = Path(__file__).resolve().parent.parent.parent
RESULT_PREFIX = "WALK3D-TRACK-RESULT "
# The criteria (degrees, metres, fraction of body weight, seconds).
MAX_ROTATION_RMS_DEG = 3.0
MAX_TRANSLATION_RMS_M = 0.01
MAX_GRF_RMS_BODY_WEIGHT = 0.10
MAX_END_TO_END_S = 180.0
# Moco's recorded times for muscle-driven gait tracking (minutes).
MOCO = (
    {"what": "Moco paper (Dembia et al. 2020), muscle-driven gait tracking", "minutes": [101.0, 148.0],
     "threads": 8, "where": "the paper's machine"},
    {"what": "Moco's example3DWalking muscle-driven tracking (documented)", "minutes": [35.0, 100.0],
     "threads": None, "where": "documented by Moco"},
    {"what": "Moco's example3DWalking torque-driven tracking: not converged after 254 iterations", "minutes": [52.0],
     "threads": 2, "where": "this machine (2 cores)", "converged": False},
)


def _solve(spec: dict) -> dict:
    """The child: build and solve the tracking study, return what the report needs (times from its start)."""
    started, cpu = time.perf_counter(), time.process_time()
    warnings.simplefilter("ignore")

    study = tracking_study(spec["mesh_interval"])
    loaded = time.perf_counter()
    transcription = study.transcription()
    problem = study.build()
    guess = guess_for(study, problem, spec["guess"])
    result = study.solve(transcription, solver_for(spec["tolerance"], spec["max_iterations"], print_level=0),
                         guess=guess, built=problem)
    done = time.perf_counter()
    rotational = set(study.model.rotational_coordinates)
    errors = result.coordinate_errors()
    return {"status": result.status, "success": result.success, "iterations": result.iterations,
            "objective": result.objective, "end_to_end_s": done - started, "load_s": loaded - started,
            "cpu_s": time.process_time() - cpu,
            "ipopt_s": float(result.solution.wall_time), "mesh_intervals": transcription.intervals,
            "variables": int(result.solution.discrete.layout.size), "guess": spec["guess"],
            "rotation_rms_deg": {n: math.degrees(v) for n, v in errors.items() if n in rotational},
            "translation_rms_m": {n: v for n, v in errors.items() if n not in rotational},
            "grf_rms_N": result.ground_reaction_errors(), "body_weight_N": study.body_weight,
            "pelvis_residuals": study.residuals is not None}


def run(spec: dict) -> dict:
    """One fresh interpreter solving the study (``_solve``); the process's own wall time is added."""
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "trajopt.benchmarks.walk3d_track", "--child", json.dumps(spec)],
                               capture_output=True, text=True, cwd=ROOT)
    lines = [line for line in completed.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if completed.returncode != 0 or not lines:
        tail = (completed.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {completed.returncode}: {tail}", "process_s": time.perf_counter() - started}
    result = json.loads(lines[-1][len(RESULT_PREFIX):])
    result["process_s"] = time.perf_counter() - started
    return result


def criteria(result: dict) -> dict:
    """Each criterion: (measured, limit, met)."""
    weight = result["body_weight_N"]
    worst_rotation = max(result["rotation_rms_deg"].items(), key=lambda item: item[1])
    translations = {n: v for n, v in result["translation_rms_m"].items() if n.startswith("pelvis_t")}
    worst_translation = max(translations.items(), key=lambda item: item[1])
    worst_grf = max(result["grf_rms_N"].items(), key=lambda item: item[1])
    return {
        "Solve_Succeeded": {"measured": result["status"], "met": result["status"] == "Solve_Succeeded"},
        "coordinate RMS <= 3 deg": {"measured": worst_rotation[1], "worst": worst_rotation[0],
                                    "limit": MAX_ROTATION_RMS_DEG, "met": worst_rotation[1] <= MAX_ROTATION_RMS_DEG},
        "pelvis translations <= 1 cm": {"measured": worst_translation[1], "worst": worst_translation[0],
                                        "limit": MAX_TRANSLATION_RMS_M,
                                        "met": worst_translation[1] <= MAX_TRANSLATION_RMS_M},
        "GRF RMS <= 10 % body weight per component": {
            "measured": worst_grf[1] / weight, "worst": worst_grf[0], "limit": MAX_GRF_RMS_BODY_WEIGHT,
            "met": worst_grf[1] / weight <= MAX_GRF_RMS_BODY_WEIGHT},
        "no pelvis residuals": {"measured": result["pelvis_residuals"], "met": not result["pelvis_residuals"]},
        "<= 3 min end to end": {"measured": result["process_s"], "limit": MAX_END_TO_END_S,
                                "met": result["process_s"] <= MAX_END_TO_END_S},
    }


def _shown(name: str, row: dict) -> str:
    value = row["measured"]
    if "deg" in name:
        return f"{value:.2f} deg ({row['worst']})"
    if "cm" in name:
        return f"{1000 * value:.1f} mm ({row['worst']})"
    if "body weight" in name:
        return f"{100 * value:.2f} % ({row['worst']})"
    if "min" in name:
        return f"{value:.0f} s"
    if "residuals" in name:
        return "present" if value else "none"
    return str(value)


def markdown(report: dict) -> str:
    """The report as a markdown page: the run, the criteria, every error, Moco's recorded times."""
    r = report["trajopt"]
    lines = ["# walk3d muscle-driven tracking, full gait cycle (`trajopt bench walk3d-track`)", "",
             f"Command: `{report['command']}`. Machine: {report['machine']['platform']}, "
             f"{report['machine']['cpus']} cores, load average {report['load_average_before'][0]:.1f} before, "
             f"{report['load_average_after'][0]:.1f} after (other jobs on the cores lengthen the times).", ""]
    if "error" in r:
        return "\n".join(lines + [f"The run failed: {r['error']}", ""])
    lines += [f"Problem: `trajopt run walk3d-tracking` (trajopt/examples/walk3d/muscle_tracking.py), "
              f"{r['mesh_intervals']} Hermite-Simpson intervals, {r['variables']} NLP variables, guess: "
              f"{r['guess']}.", "",
              "| quantity | value |", "|---|---|",
              f"| status | {r['status']} |", f"| IPOPT iterations | {r['iterations']} |",
              f"| objective | {r['objective']:.6g} |",
              f"| end to end, fresh process (s) | {r['process_s']:.1f} |",
              f"| of which imports and model processing (s) | {r['load_s']:.1f} |",
              f"| of which IPOPT (s) | {r['ipopt_s']:.1f} ({r['ipopt_s'] / max(r['iterations'], 1):.2f} per "
              f"iteration) |",
              *([f"| CPU time of the solving process (s; one BLAS thread) | {r['cpu_s']:.1f} |"]
                if "cpu_s" in r else []), "",
              "## Criteria", "", "| criterion | measured | met |", "|---|---|---|",
              *[f"| {name} | {_shown(name, row)} | {'yes' if row['met'] else '**no**'} |"
                for name, row in report["criteria"].items()], "",
              "## Tracking errors (RMS over the cycle)", "", "| coordinate | RMS |", "|---|---|",
              *[f"| {n} | {v:.2f} deg |" for n, v in r["rotation_rms_deg"].items()],
              *[f"| {n} | {1000 * v:.1f} mm |" for n, v in r["translation_rms_m"].items()], "",
              "| ground reaction | RMS (N) | RMS (% body weight) |", "|---|---|---|",
              *[f"| {n} | {v:.1f} | {100 * v / r['body_weight_N']:.2f} |" for n, v in r["grf_rms_N"].items()], ""]
    lines += ["## Moco (recorded, not run here)", "", "| what | minutes | threads | where |", "|---|---|---|---|",
              *[f"| {m['what']} | {'-'.join(f'{x:g}' for x in m['minutes'])} | {m['threads'] or ''} | "
                f"{m['where']} |" for m in MOCO],
              "", f"trajopt's end to end here: {r['process_s'] / 60:.1f} min.", ""]
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench walk3d-track", description=description(__doc__))
    add_mesh_interval(parser, MESH_INTERVAL)  # walk3d-tracking's
    parser.add_argument("--guess", choices=("inverse", "coordinates"), default="inverse",
                        help="the first guess: the tracked coordinates with the activations of a muscle inverse of the "
                             "measured motion (default), or with activations 0.05 (MocoTrack's)")
    add_tolerance(parser, 1e-4)
    add_max_iterations(parser, 1000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "walk3d_track")  # the report file inside the --out folder
    if args.child:
        print(RESULT_PREFIX + json.dumps(_solve(json.loads(args.child))), flush=True)
        return 0
    spec = {"mesh_interval": check_mesh_interval(args.mesh_interval),
            "guess": args.guess, "tolerance": args.tolerance, "max_iterations": args.max_iterations}
    command = "trajopt bench walk3d-track" + "".join(
        f" --{key.replace('_', '-')} {value}" for key, value in (
            ("mesh_interval", None if args.mesh_interval == MESH_INTERVAL else args.mesh_interval),
            ("guess", None if args.guess == "inverse" else args.guess),
            ("tolerance", None if args.tolerance == 1e-4 else args.tolerance),
            ("max_iterations", None if args.max_iterations == 1000 else args.max_iterations)) if value is not None)
    report = {"benchmark": "walk3d-track", "command": command, "spec": spec,
              "machine": {"platform": platform.platform(), "cpus": os.cpu_count()},
              "load_average_before": os.getloadavg()}
    print(f"walk3d tracking, full gait cycle, fresh process (mesh interval {spec['mesh_interval']:g} s, guess "
          f"{spec['guess']}) ...", flush=True)
    report["trajopt"] = run(spec)
    report["load_average_after"] = os.getloadavg()
    report["moco_recorded"] = list(MOCO)
    failed = "error" in report["trajopt"]
    if not failed:
        report["criteria"] = criteria(report["trajopt"])
        report["all_met"] = all(row["met"] for row in report["criteria"].values())
    path = write_report(args.out, report)
    table = Path(path).with_suffix(".md")
    table.write_text(markdown(report))
    if failed:
        print(f"{parser.prog}: the tracking run failed: {report['trajopt']['error']}; report in {path}",
              file=sys.stderr)
        return 1
    r = report["trajopt"]
    unmet = [name for name, row in report["criteria"].items() if not row["met"]]
    print(f"{r['status']}, {r['iterations']} iterations, {r['process_s']:.1f} s end to end (load "
          f"{report['load_average_before'][0]:.1f} -> {report['load_average_after'][0]:.1f}); criteria "
          f"{'all met' if not unmet else 'not met: ' + ', '.join(unmet)}; wrote {path} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
