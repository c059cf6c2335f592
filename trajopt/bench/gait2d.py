"""Benchmark ``trajopt bench gait2d``: the 2D gait prediction (problems/gait2d) vs OpenSim Moco.

Solves Moco's example2DWalking prediction from the reference-coordinates guess with 25, 50 and 100
Hermite-Simpson mesh intervals (implicit multibody dynamics, exact Hessian, MUMPS) and records wall
time (problem build + NLP construction + IPOPT), the IPOPT part alone, process CPU time, iterations and
status, against Moco's recorded 1467 s and 395 iterations for 50 intervals on this kind of 2-core
machine (problems/gait2d/moco/moco_walk2d_info.json). The load average is recorded because other jobs
sharing the cores slow every run. Writes results/benchmarks/gait2d.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
MOCO_INFO = ROOT / "problems" / "gait2d" / "moco" / "moco_walk2d_info.json"
TARGET_SECONDS = 60.0


def measure(intervals: int, speed: float = 1.2) -> dict:
    """One prediction solve, timed."""
    from problems.gait2d.main import solver_settings
    from problems.gait2d.model import GaitModel
    from problems.gait2d.prediction import build_problem, transcription

    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    gait = build_problem(intervals, speed, model=GaitModel.load())
    solution = gait.problem.solve(transcription(intervals), solver_settings(), guess=gait.reference_guess())
    total = time.perf_counter() - wall
    discrete = solution.discrete
    return {"intervals": intervals, "status": solution.status, "success": solution.success,
            "iterations": solution.iterations, "objective": solution.objective, "final_time": solution.duration,
            "wall_s": total, "ipopt_s": solution.wall_time, "model_and_nlp_construction_s": total - solution.wall_time,
            "process_cpu_s": time.process_time() - cpu, "variables": discrete.layout.size,
            "constraints": int(discrete.lower_g.size), "loadavg_before": load_before,
            "loadavg_after": os.getloadavg()[0]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench gait2d", description=__doc__.splitlines()[0])
    parser.add_argument("--intervals", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "benchmarks" / "gait2d.json")
    args = parser.parse_args(argv)
    moco = json.loads(MOCO_INFO.read_text())["prediction"]
    runs = []
    for intervals in args.intervals:
        run = measure(intervals)
        runs.append(run)
        print(f"{intervals:4d} intervals: {run['status']}, {run['iterations']} iterations, {run['wall_s']:.1f} s wall "
              f"(IPOPT {run['ipopt_s']:.1f} s, model + NLP construction {run['model_and_nlp_construction_s']:.1f} s), objective "
              f"{run['objective']:.5f}, load {run['loadavg_before']:.1f}->{run['loadavg_after']:.1f}", flush=True)
    fifty = next((r for r in runs if r["intervals"] == 50), None)
    result = {
        "benchmark": "gait2d prediction (Moco example2DWalking), Hermite-Simpson, implicit dynamics, exact Hessian",
        "machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "moco": {"intervals": moco["num_mesh_intervals"], "iterations": moco["iterations"], "wall_s": moco["wall_s"],
                 "objective": moco["objective"], "final_time": moco["final_time"]},
        "target_wall_s_50_intervals": TARGET_SECONDS,
        "runs": runs,
    }
    if fifty is not None:
        result["speedup_vs_moco_50_intervals"] = moco["wall_s"] / fifty["wall_s"]
        result["meets_target"] = bool(fifty["success"] and fifty["wall_s"] <= TARGET_SECONDS)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
