"""Benchmark ``trajopt bench gait2d``: the 2D gait prediction (problems/gait2d) vs OpenSim Moco.

Solves Moco's example2DWalking prediction from the reference-coordinates guess with 25, 50 and 100
Hermite-Simpson mesh intervals (implicit multibody dynamics, exact Hessian, MUMPS, objective scaled by
100 for IPOPT, tolerance 1e-4 as Moco) and records wall
time (problem build + NLP construction + IPOPT), the IPOPT part alone, process CPU time, iterations and
status, against Moco's recorded 1467 s and 395 iterations for 50 intervals on this kind of 2-core
machine (problems/gait2d/moco/moco_walk2d_info.json). The load average is recorded because other jobs
sharing the cores slow every run. Writes ./trajopt_results/benchmarks/gait2d.json (or --out).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from trajopt.helptext import description
from trajopt.io.output import add_report_argument, create_folder

ROOT = Path(__file__).resolve().parent.parent.parent
MOCO_INFO = ROOT / "problems" / "gait2d" / "moco" / "moco_walk2d_info.json"
TARGET_SECONDS = 60.0


def measure(intervals: int, speed: float = 1.2) -> dict:
    """One prediction solve, timed."""
    from problems.gait2d.main import solve_prediction
    from problems.gait2d.model import GaitModel

    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    _, solution, _ = solve_prediction(intervals, speed, model=GaitModel.load())
    total = time.perf_counter() - wall
    discrete = solution.discrete
    return {"intervals": intervals, "status": solution.status, "success": solution.success,
            "iterations": solution.iterations, "objective": solution.objective, "final_time": solution.duration,
            "wall_s": total, "ipopt_s": solution.wall_time, "model_and_nlp_construction_s": total - solution.wall_time,
            "process_cpu_s": time.process_time() - cpu, "variables": discrete.layout.size,
            "constraints": int(discrete.lower_g.size), "loadavg_before": load_before,
            "loadavg_after": os.getloadavg()[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench gait2d", description=description(__doc__))
    parser.add_argument("--intervals", type=int, nargs="+", default=[25, 50, 100],
                        help="mesh sizes to time (default 25 50 100; Moco used 50)")
    parser.add_argument("--repeat", type=int, default=1, help="solves per mesh size (the best and median are kept)")
    add_report_argument(parser, "gait2d")
    args = parser.parse_args(argv)
    moco = json.loads(MOCO_INFO.read_text())["prediction"]
    runs = []
    for intervals in [n for n in args.intervals for _ in range(max(1, args.repeat))]:
        run = measure(intervals)
        runs.append(run)
        print(f"{intervals:4d} intervals: {run['status']}, {run['iterations']} iterations, {run['wall_s']:.1f} s wall "
              f"(IPOPT {run['ipopt_s']:.1f} s, model + NLP construction {run['model_and_nlp_construction_s']:.1f} s), "
              f"objective {run['objective']:.5f}, load {run['loadavg_before']:.1f}->{run['loadavg_after']:.1f}",
              flush=True)
    by_size = {n: sorted(r["wall_s"] for r in runs if r["intervals"] == n) for n in args.intervals}
    best = {str(n): {"best_wall_s": walls[0], "median_wall_s": walls[len(walls) // 2], "runs": len(walls)}
            for n, walls in by_size.items()}
    fifty = min((r for r in runs if r["intervals"] == 50), key=lambda r: r["wall_s"], default=None)
    result = {
        "benchmark": "gait2d prediction (Moco example2DWalking), Hermite-Simpson, implicit dynamics, exact Hessian",
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "moco": {"intervals": moco["num_mesh_intervals"], "iterations": moco["iterations"], "wall_s": moco["wall_s"],
                 "objective": moco["objective"], "final_time": moco["final_time"]},
        "target_wall_s_50_intervals": TARGET_SECONDS,
        "runs": runs,
        "wall_s_by_intervals": best,
    }
    if fifty is not None:
        result["speedup_vs_moco_50_intervals_best_run"] = moco["wall_s"] / fifty["wall_s"]
        result["speedup_vs_moco_50_intervals_median_run"] = moco["wall_s"] / best["50"]["median_wall_s"]
        converged = all(r["success"] for r in runs if r["intervals"] == 50)
        result["meets_target_median_run"] = bool(converged and best["50"]["median_wall_s"] <= TARGET_SECONDS)
    create_folder(args.out.parent)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
