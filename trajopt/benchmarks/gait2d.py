"""Benchmark ``trajopt bench gait2d``: the 2D gait prediction (trajopt/examples/gait2d) vs OpenSim Moco.

Solves Moco's example2DWalking prediction from the reference-coordinates guess with 25, 50 and 100
Hermite-Simpson mesh intervals (implicit multibody dynamics, exact Hessian, MUMPS, objective scaled by
100 for IPOPT, tolerance 1e-4 as Moco), in two transcriptions:
- "moco_terms": midpoint controls tied to the mean of the mesh points' (Moco's MocoCasADiSolver default),
  the figure to compare with Moco's;
- "free": midpoint controls free variables (trajopt's default, `trajopt run gait2d-prediction`).
Both are solved by the command's default route (mesh continuation: half the mesh, then the full mesh; the
iterations count both solves).
Each run records wall time end to end (model loading + problem build + transcription + NLP construction,
which loads the compiled NLP functions from the disk cache, + IPOPT), the construction and IPOPT parts, seconds per
IPOPT iteration, process CPU time, iterations and status, against Moco's recorded run for 50 intervals on this
kind of 2-core machine (trajopt/examples/gait2d/moco/moco_walk2d_info.json).
The NLP functions are compiled to C once per mesh before the timed runs (``compile_s``, not in the
end-to-end figure; `--uncompiled` times CasADi's virtual machine instead). The load average is recorded
because other jobs sharing the cores slow every run. Writes ./trajopt_results/benchmarks/gait2d.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_compiled, add_intervals, add_report_out, report_file
from trajopt.examples.gait2d.main import solve_prediction
from trajopt.examples.gait2d.model import GaitModel
from trajopt.examples.gait2d.prediction import build_problem
from trajopt.model.io.output import write_report
from trajopt.core.ocp import HermiteSimpson
from trajopt.core.ocp.compiled import compiled_nlp
from trajopt.core.ocp.nlp import transcribe

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = '2D gait prediction: wall time and iterations vs Moco; 25/50/100 intervals'

ROOT = Path(__file__).resolve().parent.parent.parent
MOCO_INFO = ROOT / "trajopt" / "examples" / "gait2d" / "moco" / "moco_walk2d_info.json"
TARGET_SECONDS = 4.0  # the project's end-to-end target at 50 intervals, on an idle machine


def compile_once(intervals: int, moco_terms: bool, model, speed: float = 1.2) -> dict:
    """Compile (or find in the cache) the NLP functions of this mesh; seconds and whether it compiled now."""
    gait = build_problem(intervals, speed, model=model)
    discrete = transcribe(gait.problem.compile(), HermiteSimpson(intervals, interpolate_control_midpoints=moco_terms))
    compiled = compiled_nlp(discrete)
    if compiled is None:
        return {"compiled": False}
    return {"compiled": True, "compiled_now": compiled.compiled_now, "compile_s": compiled.seconds}


def measure(intervals: int, moco_terms: bool, compiled: bool, speed: float = 1.2) -> dict:
    """One prediction solve, timed end to end (model loading from the .osim included)."""
    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    _, solution, _ = solve_prediction(intervals, speed, model=GaitModel.load(), moco_terms=moco_terms,
                                      compiled=compiled)
    total = time.perf_counter() - wall
    discrete = solution.discrete
    return {"intervals": intervals, "transcription": "moco_terms" if moco_terms else "free",
            "compiled": compiled, "status": solution.status, "success": solution.success,
            "iterations": solution.iterations, "objective": solution.objective, "final_time": solution.duration,
            "wall_s": total, "ipopt_s": solution.wall_time, "construction_s": total - solution.wall_time,
            "ipopt_s_per_iteration": solution.wall_time / max(solution.iterations, 1),
            "process_cpu_s": time.process_time() - cpu, "variables": discrete.layout.size,
            "constraints": int(discrete.lower_g.size), "loadavg_before": load_before,
            "loadavg_after": os.getloadavg()[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench gait2d", description=description(__doc__))
    add_intervals(parser, [25, 50, 100], sweep=True)  # mesh sizes to time (Moco's example: 50)
    parser.add_argument("--repeat", type=COUNT, default=1,
                        help="solves per mesh size (the best and median are kept)")
    parser.add_argument("--transcriptions", nargs="+", choices=["moco_terms", "free"], default=["moco_terms", "free"],
                        help="transcriptions to time: Moco's tied midpoint controls and/or free ones (default both)")
    add_compiled(parser, default=True)
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "gait2d")  # the report file inside the --out folder
    moco = json.loads(MOCO_INFO.read_text())["prediction"]
    model = GaitModel.load()
    runs, compilation = [], {}
    for name in args.transcriptions:
        for intervals in args.intervals:
            if args.compiled:
                compilation[f"{name}_{intervals}"] = compile_once(intervals, name == "moco_terms", model)
            for _ in range(max(1, args.repeat)):
                run = measure(intervals, name == "moco_terms", compiled=args.compiled)
                runs.append(run)
                print(f"{name:10s} {intervals:4d} intervals: {run['status']}, {run['iterations']} iterations, "
                      f"{run['wall_s']:.2f} s end to end (IPOPT {run['ipopt_s']:.2f} s = "
                      f"{1e3 * run['ipopt_s_per_iteration']:.1f} ms/iteration, construction "
                      f"{run['construction_s']:.2f} s), objective {run['objective']:.6f}, load "
                      f"{run['loadavg_before']:.1f}->{run['loadavg_after']:.1f}", flush=True)
    best = {}
    for name in args.transcriptions:
        for n in args.intervals:
            walls = sorted(r["wall_s"] for r in runs if r["intervals"] == n and r["transcription"] == name)
            best[f"{name}_{n}"] = {"best_wall_s": walls[0], "median_wall_s": walls[len(walls) // 2], "runs": len(walls)}
    fifty = min((r for r in runs if r["intervals"] == 50 and r["transcription"] == args.transcriptions[0]),
                key=lambda r: r["wall_s"], default=None)
    result = {
        "benchmark": "gait2d prediction (Moco example2DWalking), Hermite-Simpson, implicit dynamics, exact Hessian",
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "moco": {"intervals": moco["num_mesh_intervals"], "iterations": moco["iterations"], "wall_s": moco["wall_s"],
                 "objective": moco["objective"], "final_time": moco["final_time"]},
        "target_wall_s_50_intervals": TARGET_SECONDS,
        "figures": "moco_terms = midpoint controls tied to the mesh points' mean (Moco's transcription, the figure "
                   "compared with Moco); free = midpoint controls free (trajopt's default). wall_s = end to end: "
                   "model loading + problem build + transcription + NLP construction (compiled functions loaded from "
                   "the cache) + "
                   "IPOPT; compile_s (once per mesh, cached on disk) is not included.",
        "compiled": args.compiled,
        "compilation": compilation,
        "runs": runs,
        "wall_s_by_transcription_and_intervals": best,
    }
    if fifty is not None:
        result["speedup_vs_moco_50_intervals_best_run"] = moco["wall_s"] / fifty["wall_s"]
        median = best[f"{args.transcriptions[0]}_50"]["median_wall_s"]
        result["speedup_vs_moco_50_intervals_median_run"] = moco["wall_s"] / median
        converged = all(r["success"] for r in runs if r["intervals"] == 50)
        result["meets_target_median_run"] = bool(converged and median <= TARGET_SECONDS)
    write_report(args.out, result)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
