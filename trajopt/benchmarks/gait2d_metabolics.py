"""Benchmark ``trajopt bench gait2d-metabolics``: Moco's example2DWalkingMetabolics, trajopt vs Moco.

trajopt: ``trajopt/examples/gait2d/metabolics.py`` (tracking weight 30 with the reference splined as
MocoStateTrackingGoal splines it, effort 0.1, Bhargava 2004 smoothed metabolic cost 0.1 per displacement and body
mass, 50 Hermite-Simpson intervals with Moco's midpoint controls, implicit dynamics, IPOPT tolerance 1e-4 as the
example), solved twice: with the limited-memory Hessian as Moco (the reported objective) and with the exact Hessian
(shown beside it: at 1e-4 it stops before the optimum), each timed end to end (model loading, build, transcription,
NLP construction, IPOPT). Moco: the example as its source builds it (``trajopt_opensim/moco_walk2d_metabolics.py``:
MocoCasADiSolver defaults, explicit dynamics, limited-memory Hessian), in an OpenSim child process in the same run
when opensim is installed, its solve call timed; otherwise, or with ``--no-moco``, the run recorded in
``trajopt/examples/gait2d/moco/moco_walk2d_metabolics_info.json`` (marked "recorded").

Writes ./trajopt_results/benchmarks/gait2d_metabolics.json (or --out) and a Markdown table beside it: both
objectives and their terms, the relative difference, wall times and their ratio, and the load average; with Moco
run, its solution (states and controls, OpenSim labels) as ``gait2d_metabolics_moco_solution.sto`` beside them.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from trajopt.examples.gait2d.metabolics import METABOLIC_WEIGHT, TOLERANCE, moco_record, objective_terms, solve
from trajopt.model.io.opensim_reference import OpenSimTaskError, opensim_available, run_opensim_task
from trajopt.core.ocp import Hessian
from trajopt.model.io.output import write_report
from trajopt.model.io.tables import write_sto
from trajopt.table import Table
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_hidden_alias, add_intervals, add_no_moco, add_report_out, report_file

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "2D gait tracking with metabolic cost (Moco example2DWalkingMetabolics): trajopt vs Moco, same run"

ROOT = Path(__file__).resolve().parent.parent.parent
GAIT2D = ROOT / "trajopt" / "examples" / "gait2d"
OBJECTIVE_TOLERANCE = 0.01  # the agreement target: objectives within 1 %


def run_trajopt(intervals: int, hessian: Hessian) -> dict:
    load = os.getloadavg()[0]
    cpu = time.process_time()
    built, solution, seconds = solve(intervals, tolerance=TOLERANCE, hessian=hessian)
    terms = objective_terms(built, solution)
    return {"hessian": hessian.value, "tolerance": TOLERANCE, "status": solution.status,
            "success": bool(solution.success), "iterations": solution.iterations,
            "objective": float(solution.objective), "objective_terms": terms,
            "metabolic_cost_of_transport": terms["met"] / METABOLIC_WEIGHT, "wall_s": seconds,
            "ipopt_s": solution.wall_time, "construction_s": seconds - solution.wall_time,
            "process_cpu_s": time.process_time() - cpu, "variables": int(solution.discrete.layout.size),
            "loadavg_before": load, "loadavg_after": os.getloadavg()[0]}


def run_moco(intervals: int, timeout: float) -> dict:
    """Moco's solve of the example in an OpenSim child process; when the child fails or runs out of time, its status
    says so and the objective is None."""
    load, started = os.getloadavg()[0], time.perf_counter()
    try:
        result = run_opensim_task("moco_walk2d_metabolics", {
            "model": GAIT2D / "2D_gait.osim", "coordinates": GAIT2D / "referenceCoordinates.sto",
            "mesh_intervals": intervals}, timeout=timeout)
    except (OpenSimTaskError, subprocess.TimeoutExpired) as error:
        reason = f"stopped after the {timeout:.0f} s timeout" if isinstance(error, subprocess.TimeoutExpired) else \
            str(error).splitlines()[0]
        return {"status": f"not finished: {reason}", "success": False, "objective": None,
                "wall_seconds": time.perf_counter() - started, "loadavg_before": load,
                "loadavg_after": os.getloadavg()[0]}
    print("moco: " + ", ".join(f"{key} {value}" for key, value in result.items() if getattr(value, "ndim", 0) == 0
                               or key.startswith("term_")), flush=True)
    labels = tuple(str(n) for n in result["state_labels"]) + tuple(str(n) for n in result["control_labels"])
    trajectory = Table(result["time"], labels, np.hstack([result["states"], result["controls"]]), False,
                       "moco_solution")
    return {**moco_summary(result, load), "trajectory": trajectory}


def moco_summary(result: dict, load_before: float | None = None) -> dict:
    """The numbers kept of a Moco child run (``trajopt_opensim.moco_walk2d_metabolics``)."""
    terms = dict(zip([str(n) for n in result["term_names"]], [float(v) for v in result["term_values"]]))
    return {"opensim": result["opensim"], "status": result["status"], "success": bool(result["success"]),
            "iterations": int(result["iterations"]), "objective": float(result["objective"]),
            "objective_terms": terms, "wall_seconds": float(result["wall_seconds"]),
            "solver_seconds": float(result["solver_seconds"]), "setup_seconds": float(result["setup_seconds"]),
            "process_cpu_seconds": float(result["process_cpu_seconds"]),
            "mesh_intervals": int(result["mesh_intervals"]), "tolerance": float(result["tolerance"]),
            "hessian": result["hessian"], "dynamics_mode": result["dynamics_mode"],
            "transcription": result["transcription"], "loadavg_before": load_before,
            "loadavg_after": os.getloadavg()[0]}


def _number(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def markdown(report: dict) -> str:
    t, loose, m = report["trajopt"], report["trajopt_exact_hessian"], report["moco"]
    moco_terms = m.get("objective_terms", {})
    terms = sorted(set(t["objective_terms"]) | set(moco_terms))
    rows = [("status", t["status"], loose["status"], m["status"]),
            ("objective", f"{t['objective']:.6f}", f"{loose['objective']:.6f}", _number(m["objective"], ".6f")),
            *((f"term `{k}`", _number(t["objective_terms"].get(k), ".6f"),
               _number(loose["objective_terms"].get(k), ".6f"), _number(moco_terms.get(k), ".6f")) for k in terms),
            ("IPOPT iterations", t["iterations"], loose["iterations"], m.get("iterations", "-")),
            ("wall time (s)", f"{t['wall_s']:.1f} (IPOPT {t['ipopt_s']:.1f})",
             f"{loose['wall_s']:.1f} (IPOPT {loose['ipopt_s']:.1f})", f"{m['wall_seconds']:.1f}")]
    loose_difference = None if m["objective"] is None else loose["objective"] / m["objective"] - 1.0
    difference = report["objective_relative_difference"]
    verdict = "no Moco objective to compare" if difference is None else \
        f"{difference:+.3%} (target within {OBJECTIVE_TOLERANCE:.0%}: " \
        f"{'met' if report['objective_within_tolerance'] else 'not met'})"
    live = report["moco_in_this_run"]
    rerun = [] if live is None or live == "the run above" else \
        [f"Moco in this run: {live['status']} after {live['wall_seconds']:.0f} s.", ""]
    return "\n".join([
        "# gait2d-metabolics: Moco's example2DWalkingMetabolics, trajopt vs Moco", "",
        f"Moco: {m['source']}. {report['notes']}", "", *rerun,
        f"| quantity | trajopt ({t['hessian']} Hessian, tol {t['tolerance']:g}) | trajopt ({loose['hessian']} "
        f"Hessian, tol {loose['tolerance']:g}) | Moco ({m.get('hessian', '-')} Hessian, tol "
        f"{_number(m.get('tolerance'), 'g')}) |", "|---|---|---|---|",
        *[f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows], "",
        f"Objective relative difference (trajopt / Moco - 1): {verdict}; with the exact Hessian "
        f"{_number(loose_difference, '+.3%')}. Wall-time ratio Moco / trajopt: {report['wall_time_ratio']:.1f}.", ""])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench gait2d-metabolics", description=description(__doc__))
    add_intervals(parser, 50)  # the example's
    add_no_moco(parser)  # Moco's solve takes long
    add_hidden_alias(parser, "--recorded-moco", "no_moco", action="store_true")
    parser.add_argument("--moco-timeout", type=float, default=3 * 3600.0,
                        help="seconds before Moco's child process is stopped (default 3 h)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "gait2d_metabolics")  # the report file inside the --out folder
    if args.intervals < 2:
        parser.error(f"need --intervals >= 2, got {args.intervals}")
    load_at_start = list(os.getloadavg())
    trajopt, loose = (run_trajopt(args.intervals, hessian) for hessian in (Hessian.LIMITED_MEMORY, Hessian.EXACT))
    for run in (trajopt, loose):
        print(f"trajopt ({run['hessian']} Hessian): {run['status']}, {run['iterations']} iterations, objective "
              f"{run['objective']:.6f}, {run['wall_s']:.1f} s end to end", flush=True)
    recorded = moco_record()
    if recorded is not None and recorded["mesh_intervals"] == args.intervals:
        recorded = {**recorded, "source": f"recorded {recorded['recorded']} on this kind of machine "
                                          "(trajopt/examples/gait2d/moco/moco_walk2d_metabolics_info.json)"}
    else:
        recorded = None
    live = None
    if opensim_available() and not args.no_moco:
        live = {**run_moco(args.intervals, args.moco_timeout), "source": "measured in this run (OpenSim child process)"}
    moco = live if live is not None and live["objective"] is not None else recorded
    if moco is None and live is None:
        parser.error("Moco's run is needed: install opensim, or use --intervals 50 for the recorded run")
    moco = live if moco is None else moco
    difference = None if moco["objective"] is None else trajopt["objective"] / moco["objective"] - 1.0
    report = {
        "benchmark": "gait2d metabolics (Moco example2DWalkingMetabolics), Hermite-Simpson",
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_average_at_start": load_at_start, "load_average_at_end": list(os.getloadavg())},
        "intervals": args.intervals, "trajopt": trajopt, "trajopt_exact_hessian": loose, "moco": moco,
        "moco_in_this_run": live if live is not moco else "the run above",
        "objective_relative_difference": difference,
        "objective_within_tolerance": None if difference is None else bool(abs(difference) <= OBJECTIVE_TOLERANCE),
        "wall_time_ratio": moco["wall_seconds"] / trajopt["wall_s"],
        "notes": "trajopt: implicit multibody dynamics, limited-memory Hessian and tol 1e-4 as the example (the "
                 "reported objective; with the exact Hessian 1e-4 stops before the optimum: second column), "
                 "midpoint controls = mean of the mesh points' (Moco's transcription), the reference as "
                 "MocoStateTrackingGoal splines it (natural quintic splines through the filtered frames, at the "
                 "collocation times), polynomial muscle paths; wall_s end to end. Moco: explicit "
                 "dynamics, limited-memory Hessian, tol 1e-4 (the example's settings); wall_seconds = the solve "
                 "call (problem set-up excluded, setup_seconds). The objectives' terms are each solver's weighted "
                 "goals (Moco's getObjectiveTerm).",
    }
    trajectory = report["moco"].pop("trajectory", None)
    path = write_report(args.out, report)
    if trajectory is not None:  # Moco's solution, to evaluate trajopt's goals on it
        write_sto(path.with_name(f"{path.stem}_moco_solution.sto"), trajectory)
    path.with_suffix(".md").write_text(markdown(report))
    print(markdown(report))
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
