"""Benchmark ``trajopt bench walk3d``: 3D predictive walking with a quaternion pelvis
(trajopt/examples/walk3d/prediction.py).

Solves the half gait cycle from the coordinates.sto guess at 25, 50 and 100 Hermite-Simpson intervals (implicit
multibody dynamics, exact Hessian, MUMPS, tolerance 1e-4) and records wall time (model build + NLP construction
+ IPOPT), the IPOPT part, iterations, time per iteration, NLP size and status, with the load average (other jobs
on the cores slow every run). Anchors: PredSim's reference 3D run (Falisse et al. 2022 model, 31 dof, 92 muscles,
50 intervals per half cycle; its IPOPT time, iterations and size in ``PREDSIM``); Falisse et al. 2019: "under 20
minutes". ``--euler-pelvis`` also solves the same problem with the .osim's pelvis angles; ``--from-tracking`` solves
each from another guess, a tracking solve of coordinates.sto and grf_walk.mot (its time included). Writes
``--out`` (default ./trajopt_results/benchmarks/walk3d.json).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import (COUNT, add_intervals, add_max_iterations, add_report_out, add_solver_route,
                                      report_file)
from trajopt.examples.walk3d.prediction_main import RECIPES, add_from_tracking, add_recipe, solve
from trajopt.core.ocp import SolverRoute

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = ("3D predictive walking (quaternion pelvis): wall time, iterations at 25/50/100 intervals "
               "vs PredSim's reference run")

PREDSIM = {"ipopt_s": 5630.0, "iterations": 895, "variables": 74504, "intervals": 50,
           "model": "Falisse et al. 2022, 31 dof, 92 muscles"}


def measure(intervals: int, max_iterations: int, quaternion_pelvis: bool = True, from_tracking: bool = False,
            threads: int = 1, recipe: str = "predsim", route: SolverRoute = SolverRoute.IPOPT) -> dict:
    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    _, solution, _ = solve(intervals, print_level=0, max_iterations=max_iterations,
                           quaternion_pelvis=quaternion_pelvis, from_tracking=from_tracking, threads=threads,
                           recipe=RECIPES[recipe], route=route)
    total = time.perf_counter() - wall
    return {"intervals": intervals, "recipe": recipe, "solver": route.value,
            "pelvis": "quaternion" if quaternion_pelvis else "euler",
            "guess": "tracking solve" if from_tracking else "coordinates.sto", "blas_threads": threads,
            "status": solution.status, "success": solution.success,
            "iterations": solution.iterations, "objective": solution.objective, "final_time": solution.duration,
            "wall_s": total, "ipopt_s": solution.wall_time,
            "ipopt_s_per_iteration": solution.wall_time / max(solution.iterations, 1),
            "model_and_nlp_construction_s": total - solution.wall_time, "process_cpu_s": time.process_time() - cpu,
            "variables": int(solution.discrete.layout.size), "constraints": int(solution.discrete.lower_g.size),
            "loadavg_before": load_before, "loadavg_after": os.getloadavg()[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench walk3d", description=description(__doc__))
    add_intervals(parser, [25, 50, 100], sweep=True)
    add_max_iterations(parser, 3000)
    parser.add_argument("--euler-pelvis", action="store_true", help="also solve with the .osim's pelvis angles")
    parser.add_argument("--threads", type=COUNT, default=1,
                        help="BLAS threads of the linear algebra (default 1; results differ in round-off, and so "
                             "may the iterates of this non-convex problem)")
    add_from_tracking(parser)  # each case
    add_recipe(parser)
    add_solver_route(parser, SolverRoute.IPOPT)  # with mesh continuation both solves are timed
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "walk3d")  # the report file inside the --out folder
    runs = []
    cases = [(n, True) for n in args.intervals] + ([(n, False) for n in args.intervals] if args.euler_pelvis else [])
    for intervals, quaternion in cases:
        run = measure(intervals, args.max_iterations, quaternion, args.from_tracking, args.threads, args.recipe,
                      SolverRoute(args.solver))
        runs.append(run)
        print(f"{intervals:4d} intervals, {run['pelvis']} pelvis, guess {run['guess']}: {run['status']}, "
              f"{run['iterations']} iterations, {run['wall_s']:.1f} s wall "
              f"(IPOPT {run['ipopt_s']:.1f} s, {run['ipopt_s_per_iteration']:.2f} s/iteration), "
              f"{run['variables']} variables, objective {run['objective']:.5g}, "
              f"load {run['loadavg_before']:.1f}->{run['loadavg_after']:.1f}", flush=True)
    args.out.write_text(json.dumps({"benchmark": "walk3d", "runs": runs, "predsim_reference": PREDSIM,
                                    "target_wall_s": 300.0, "machine": platform.platform(),
                                    "cpu_count": os.cpu_count()}, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
