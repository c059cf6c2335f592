"""Benchmark ``trajopt bench walk3d-inverse``: Moco's 3D walking MocoInverse, trajopt vs Moco in the same run.

Both solve the same problem (``trajopt/examples/walk3d/inverse.py``: 80 DeGroote muscles, rigid tendons, GRFs,
function-based paths, 57 Hermite-Simpson intervals). Wall time end to end: reading the model, paths, loads and
motion, building the problem and solving it, in a fresh process for each tool so that nothing is cached.
- trajopt: IPOPT with exact derivatives, tolerance 1e-6; rigid tendons, and elastic tendons. The end-to-end time
  is split into importing trajopt, loading the model, paths, loads and motion, building the NLP (the data at the
  grid points, the problem, its transcription and derivatives) and IPOPT; the process's CPU time beside it (other
  jobs on the cores stretch the wall time, not the CPU time). The rigid-tendon run is repeated (``--repeat``, each
  a fresh process) and the median reported.
- Moco (with ``opensim`` installed, in a child process): MocoInverse with its default tolerance 1e-3, as
  Moco's example; ``--moco-tight`` also runs it at 1e-5. Without opensim the recorded run of
  ``trajopt/examples/walk3d/moco_inverse_reference/`` stands in, and the JSON says so.
Writes ``--out`` (default ./trajopt_results/benchmarks/walk3d_inverse.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_no_moco, add_report_out, report_file
from trajopt.model.io.output import write_report
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "Moco's 3D walking MocoInverse: trajopt (rigid, elastic) vs Moco, end to end, same run"

ROOT = Path(__file__).resolve().parent.parent.parent
WALK3D = ROOT / "trajopt" / "examples" / "walk3d"

_TRAJOPT_RUN = """
import json, sys, time, warnings
started = time.perf_counter()
warnings.simplefilter("ignore")
from trajopt.examples.walk3d.inverse import build, solve
imported = time.perf_counter()
inverse = build(elastic_tendons=sys.argv[1] == "elastic")
loaded = time.perf_counter()
solution = solve(inverse, print_level=0)
done = time.perf_counter()
ipopt = solution.solution.wall_time
print(json.dumps({"end_to_end_seconds": done - started, "load_seconds": loaded - started,
                  "build_and_solve_seconds": done - loaded, "import_seconds": imported - started,
                  "model_load_seconds": loaded - imported, "nlp_construction_seconds": done - loaded - ipopt,
                  "ipopt_seconds": ipopt, "cpu_seconds": time.process_time(), "objective": solution.objective,
                  "iterations": solution.iterations, "status": solution.status}))
"""


def _trajopt(tendons: str) -> dict:
    """One fresh interpreter (imports included in the clock) solving the problem."""
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-c", _TRAJOPT_RUN, tendons], capture_output=True, text=True,
                               cwd=ROOT, check=True)
    result = json.loads(completed.stdout.strip().splitlines()[-1])
    result["process_seconds"] = time.perf_counter() - started
    return result


def _median_run(runs: list[dict]) -> dict:
    """The run of median end-to-end time, with every run's end-to-end and CPU seconds beside it."""
    ordered = sorted(runs, key=lambda run: run["end_to_end_seconds"])
    return {**ordered[(len(ordered) - 1) // 2], "runs_end_to_end_seconds": [r["end_to_end_seconds"] for r in runs],
            "runs_cpu_seconds": [r["cpu_seconds"] for r in runs]}


def _moco(tolerance: float) -> dict:
    request = {"model": str(WALK3D / "subject_walk_scaled.osim"), "kinematics": str(WALK3D / "coordinates.sto"),
               "external_loads": str(WALK3D / "grf_walk.xml"), "weld_joints": ["mtp_r", "mtp_l"],
               "residuals": [250.0, 50.0, 1.0], "ignore_passive_fiber_force": True, "active_force_width_scale": 1.5,
               "function_based_paths": str(WALK3D / "subject_walk_scaled_FunctionBasedPathSet.xml"),
               "reserves": 1.0, "initial_time": 0.48, "final_time": 1.61, "mesh_interval": 0.02,
               "tolerance": tolerance}
    started = time.perf_counter()
    result = run_opensim_task("moco_inverse", request, timeout=3600)
    return {"end_to_end_seconds": time.perf_counter() - started, "solve_call_seconds": result["wall_seconds"],
            "objective": result["objective"], "iterations": result["iterations"], "status": result["status"],
            "tolerance": tolerance}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench walk3d-inverse", description=description(__doc__))
    add_no_moco(parser)
    parser.add_argument("--moco-tight", action="store_true", help="also run Moco at tolerance 1e-5 (~1-2 min)")
    parser.add_argument("--repeat", type=COUNT, default=3,
                        help="fresh processes for the rigid-tendon run; the median one is reported, all are kept "
                             "(default 3: other jobs on the cores make single runs vary)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "walk3d_inverse")  # the report file inside the --out folder
    print("trajopt, rigid tendons ...", flush=True)
    report = {"machine": {"platform": platform.platform(), "cpus": os.cpu_count(),
                          "load_average": os.getloadavg()},
              "trajopt_rigid": _median_run([_trajopt("rigid") for _ in range(args.repeat)])}
    print(json.dumps(report["trajopt_rigid"]), flush=True)
    print("trajopt, elastic tendons ...", flush=True)
    report["trajopt_elastic"] = _trajopt("elastic")
    print(json.dumps(report["trajopt_elastic"]), flush=True)
    if opensim_available() and not args.no_moco:
        print("Moco MocoInverse, default tolerance 1e-3 (about 2 minutes) ...", flush=True)
        report["moco"] = _moco(1e-3)
        if args.moco_tight:
            report["moco_tight"] = _moco(1e-5)
    else:
        recorded = json.loads((WALK3D / "moco_inverse_reference" / "moco_inverse_info.json").read_text())
        report["moco"] = {"recorded": True, "end_to_end_seconds": recorded["wall_s"], **recorded}
    report["speedup_end_to_end"] = report["moco"]["end_to_end_seconds"] / report["trajopt_rigid"]["end_to_end_seconds"]
    report["load_average_after"] = os.getloadavg()
    write_report(args.out, report)
    print(f"trajopt {report['trajopt_rigid']['end_to_end_seconds']:.2f} s (elastic "
          f"{report['trajopt_elastic']['end_to_end_seconds']:.2f} s) "
          f"vs Moco {report['moco']['end_to_end_seconds']:.1f} s"
          f"{' (recorded)' if report['moco'].get('recorded') else ''}: {report['speedup_end_to_end']:.0f}x; "
          f"written {args.out}")
    return 0
