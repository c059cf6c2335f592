"""Benchmark ``trajopt bench static-optimization``: arm26 static optimization of the 101-frame elbow-flexion
motion, trajopt vs OpenSim 4.6 (AnalyzeTool + StaticOptimization in a child process), measured in the same run.

Both with force-length-velocity, reserves 1 N·m on both coordinates, exponent 2, no filter.
- OpenSim: ``AnalyzeTool.run()`` (builds the states from the motion, splines, one IPOPT solve per
  frame at OpenSim's default tolerance 1e-4); the model is loaded by the tool's constructor before
  the clock starts. arm26's own Thelen muscles (as OpenSim's reference run) and the same run with
  DeGrooteFregly2016 muscles (rigid tendon).
- trajopt: ``StaticOptimization(model, motion).solve()`` (reads the motion, splines, inverse
  dynamics, muscle quantities, one batched IPOPT solve of all frames at tolerance 1e-10); the
  model and its Functions are built before the clock starts. "first" includes building the IPOPT
  solver from the disk cache of compiled NLP functions (trajopt.core.ocp.compiled; filled by an untimed run
  first), as a new process does; "repeat" is the median of later runs (solver kept in the process).
Writes ./trajopt_results/benchmarks/static_optimization.json (or --out).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from trajopt.studies.analysis import frame_optimization
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_report_out, report_file
from trajopt.examples.arm26_static_optimization.main import ELBOW_MOTION, build_problem, load_model
from trajopt.model.io.output import write_report
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'arm26 static optimization, 101-frame elbow motion: trajopt vs OpenSim'

ROOT = Path(__file__).resolve().parent.parent.parent
ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
TARGET_SPEEDUP = 20.0


def _trajopt_times(repeats: int) -> dict:
    start = time.perf_counter()
    model = load_model()
    load = time.perf_counter() - start
    # Fill the disk cache of compiled NLP functions (compiles only the very first time on this machine), then
    # forget the in-process solver: the "first" run below builds its solver from the disk cache, as a new
    # process does.
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build_problem(ELBOW_MOTION, model=model).solve(solver=frame_optimization.COMPILED_SOLVER)
    cache_fill = time.perf_counter() - start
    frame_optimization._solver.cache_clear()
    totals, solves, iterations = [], [], 0
    for _ in range(repeats + 1):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = build_problem(ELBOW_MOTION, model=model).solve(solver=frame_optimization.COMPILED_SOLVER)
        totals.append(time.perf_counter() - start)
        solves.append(result.solve_time)
        iterations = result.iterations
    return {
        "model_load_and_functions_seconds": load,
        "untimed_cache_fill_seconds": cache_fill,
        "first_seconds": totals[0],
        "repeat_median_seconds": float(np.median(totals[1:])),
        "repeat_min_seconds": float(np.min(totals[1:])),
        "ipopt_solve_median_seconds": float(np.median(solves[1:])),
        "ipopt_iterations": iterations,
        "frames": int(result.times.size),
        "max_equality_error": float(np.abs(result.equality_error).max()),
        "status": result.status,
    }


def _opensim_runs(degroote: bool, repeats: int) -> np.ndarray:
    result = run_opensim_task("osim_static_optimization", {
        "model": str(ARM26), "motion": str(ELBOW_MOTION), "lowpass_cutoff": -1.0, "degroote": degroote,
        "use_muscle_physiology": True, "reserve_optimal_force": 1.0, "repeat": repeats})
    return np.asarray(result["run_times"], dtype=float).ravel()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench static-optimization", description=description(__doc__))
    parser.add_argument("--repeats", type=COUNT, default=5,
                        help="timed runs of each side per round (default 5)")
    parser.add_argument("--rounds", type=COUNT, default=2,
                        help="alternating rounds of trajopt and OpenSim runs, so both see the same machine load")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "static_optimization")  # the report file inside the --out folder
    report = {
        "what": "arm26 static optimization, elbow flexion 0 -> 90 deg, 101 frames, FLV on, reserves 1 N·m, p = 2",
        "machine": platform.platform(),
        "processors": os.cpu_count(),
        "load_average_at_start": os.getloadavg()[0],
        "target_speedup": TARGET_SPEEDUP,
        "rounds": [],
    }
    with_opensim = opensim_available()
    thelen, degroote, ours_repeat, ours_solve = [], [], [], []
    for round_index in range(args.rounds):
        print(f"round {round_index + 1}: trajopt static optimization, arm26 elbow flexion (101 frames) ...")
        ours = _trajopt_times(args.repeats)
        print(f"  first run {ours['first_seconds'] * 1e3:.1f} ms (round 1: includes building the IPOPT solver), "
              "repeat median "
              f"{ours['repeat_median_seconds'] * 1e3:.1f} ms (IPOPT {ours['ipopt_solve_median_seconds'] * 1e3:.1f} ms, "
              f"{ours['ipopt_iterations']} iterations)")
        entry = {"trajopt": ours}
        ours_repeat.append(ours["repeat_median_seconds"])
        ours_solve.append(ours["ipopt_solve_median_seconds"])
        if with_opensim:
            for name, use_degroote, store in (("opensim_thelen", False, thelen),
                                              ("opensim_degroote_rigid", True, degroote)):
                runs = _opensim_runs(use_degroote, args.repeats)
                store.extend(runs.tolist())
                entry[name] = {"run_seconds": runs.tolist(), "run_median_seconds": float(np.median(runs))}
                print(f"  OpenSim ({'DeGroote rigid' if use_degroote else 'Thelen'} muscles): run median "
                      f"{np.median(runs) * 1e3:.1f} ms")
        entry["load_average"] = os.getloadavg()[0]
        report["rounds"].append(entry)
    report["trajopt_repeat_median_seconds"] = float(np.median(ours_repeat))
    report["trajopt_first_seconds"] = report["rounds"][0]["trajopt"]["first_seconds"]
    report["trajopt_ipopt_median_seconds"] = float(np.median(ours_solve))
    if with_opensim:
        report["opensim_thelen_median_seconds"] = float(np.median(thelen))
        report["opensim_degroote_median_seconds"] = float(np.median(degroote))
        report["speedup_vs_opensim_thelen"] = (report["opensim_thelen_median_seconds"]
                                               / report["trajopt_repeat_median_seconds"])
        report["speedup_vs_opensim_degroote"] = (report["opensim_degroote_median_seconds"]
                                                 / report["trajopt_repeat_median_seconds"])
        report["speedup_first_run_vs_opensim_thelen"] = (report["opensim_thelen_median_seconds"]
                                                         / report["trajopt_first_seconds"])
        report["meets_target"] = report["speedup_vs_opensim_thelen"] >= TARGET_SPEEDUP
        print(f"speedup (medians): {report['speedup_vs_opensim_thelen']:.1f}x vs OpenSim (Thelen), "
              f"{report['speedup_vs_opensim_degroote']:.1f}x vs OpenSim (DeGroote); first trajopt run "
              f"{report['speedup_first_run_vs_opensim_thelen']:.1f}x (target {TARGET_SPEEDUP:.0f}x)")
    else:
        report["opensim"] = "not installed: no comparison"
    write_report(args.out, report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
