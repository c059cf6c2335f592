"""Benchmark ``trajopt bench nlp-derivatives``: NLP derivatives built point by point vs by nlpsol on the expanded graph.

For arm26 reaching (Moco's problem, 50 Hermite-Simpson intervals) and the 2D gait prediction (25 and
50 intervals by default) it builds the IPOPT solver both ways -- ``Ipopt(point_derivatives=True)``
(``trajopt.core.ocp.derivatives``) and ``point_derivatives=False`` (nlpsol differentiates the expanded SX
graph) -- and records the construction time (process CPU and wall), the CPU time of one constraint
Jacobian and one Lagrangian Hessian evaluation, the Hessian's nonzeros and the largest relative
difference between the two Hessians at the initial guess. With ``--solve`` it also solves each problem
both ways (end-to-end wall, IPOPT wall, iterations, objective). Writes
./trajopt_results/benchmarks/nlp_derivatives.json (or --out).
CPU times are reported because other jobs share the cores and inflate wall times.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import time

import casadi as ca
import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_report_out, report_file
from trajopt.examples.arm26_reaching import reaching
from trajopt.examples.gait2d.main import PREDICTION_OBJECTIVE_SCALING, solver_settings
from trajopt.examples.gait2d.model import GaitModel
from trajopt.examples.gait2d.prediction import build_problem
from trajopt.model.io.output import write_report
from trajopt.core.ocp import HermiteSimpson, Ipopt
from trajopt.core.ocp.nlp import transcribe
from trajopt.core.ocp.solver import initial_point

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'NLP build + derivative evaluation: point-by-point vs expanded graph'



def _evaluation_cpu_ms(function: ca.Function, arguments, repeats: int = 10) -> float:
    function(*arguments)
    started = time.process_time()
    for _ in range(repeats):
        function(*arguments)
    return (time.process_time() - started) / repeats * 1e3


def compare(name: str, build, settings: Ipopt, solve: bool) -> dict:
    """Construction and evaluation costs (and optionally solves) of one problem, both ways."""
    problem, transcription, guess = build()
    discrete = transcribe(problem.compile(), transcription, scale_from_bounds=settings.scale_from_bounds)
    w0, multipliers = initial_point(discrete, guess)
    rng = np.random.default_rng(0)
    lam_g = rng.normal(size=discrete.lower_g.size)
    result, hessians = {"problem": name, "variables": int(discrete.layout.size),
                        "constraints": int(discrete.lower_g.size)}, {}
    for label, point in (("point_derivatives", True), ("expanded_graph", False)):
        mode = dataclasses.replace(settings, point_derivatives=point)
        wall, cpu = time.perf_counter(), time.process_time()
        solver = mode.nlpsol(discrete, warm=bool(multipliers))
        entry = {"construction_wall_s": time.perf_counter() - wall, "construction_cpu_s": time.process_time() - cpu}
        hessian, jacobian = solver.get_function("nlp_hess_l"), solver.get_function("nlp_jac_g")
        entry["hessian_nonzeros"] = int(hessian.sparsity_out(0).nnz())
        entry["hessian_evaluation_cpu_ms"] = _evaluation_cpu_ms(hessian, (w0, [], 1.0, lam_g))
        entry["jacobian_evaluation_cpu_ms"] = _evaluation_cpu_ms(jacobian, (w0, []))
        hessians[label] = np.array(hessian(w0, [], 1.0, lam_g))
        if solve:
            started = time.perf_counter()
            solution = problem.solve(transcription, mode, guess=guess)
            entry.update({"solve_total_wall_s": time.perf_counter() - started, "ipopt_wall_s": solution.wall_time,
                          "iterations": solution.iterations, "objective": solution.objective,
                          "status": solution.status})
        result[label] = entry
    difference = np.abs(hessians["point_derivatives"] - hessians["expanded_graph"]).max()
    result["hessian_max_relative_difference"] = float(difference / np.abs(hessians["expanded_graph"]).max())
    return result


def _reaching():
    built = reaching.moco_problem()
    return built.problem, HermiteSimpson(50), reaching.moco_naive_guess(built)


def _gait(intervals: int):
    def build():
        gait = build_problem(intervals, 1.2, model=GaitModel.load())
        return gait.problem, gait.transcription, gait.reference_guess()
    return build


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench nlp-derivatives", description=description(__doc__))
    parser.add_argument("--gait-intervals", type=int, nargs="*", default=[25, 50],
                        help="2D gait mesh sizes to build (default 25 50)")
    parser.add_argument("--solve", action="store_true", help="also solve every problem both ways (slow for gait)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "nlp_derivatives")  # the report file inside the --out folder
    cases = [("arm26 reaching (Moco problem), Hermite-Simpson 50", _reaching, Ipopt(tol=1e-6))]
    cases += [(f"2D gait prediction, Hermite-Simpson {n}", _gait(n),
               solver_settings(objective_scaling=PREDICTION_OBJECTIVE_SCALING)) for n in args.gait_intervals]
    runs = []
    for name, build, settings in cases:
        run = compare(name, build, settings, args.solve)
        runs.append(run)
        point, expanded = run["point_derivatives"], run["expanded_graph"]
        print(f"{name}: construction {point['construction_cpu_s']:.3f} s CPU (point) vs "
              f"{expanded['construction_cpu_s']:.2f} s (expanded); Hessian {point['hessian_evaluation_cpu_ms']:.2f} vs "
              f"{expanded['hessian_evaluation_cpu_ms']:.2f} ms, Jacobian {point['jacobian_evaluation_cpu_ms']:.2f} vs "
              f"{expanded['jacobian_evaluation_cpu_ms']:.2f} ms; nnz {point['hessian_nonzeros']} vs "
              f"{expanded['hessian_nonzeros']}; max relative Hessian difference "
              f"{run['hessian_max_relative_difference']:.1e}", flush=True)
        for label in ("point_derivatives", "expanded_graph"):
            if args.solve:
                entry = run[label]
                print(f"  {label}: {entry['status']}, {entry['iterations']} iterations, objective "
                      f"{entry['objective']:.12g}, {entry['solve_total_wall_s']:.2f} s end to end "
                      f"({entry['ipopt_wall_s']:.2f} s IPOPT)", flush=True)
    report = {"machine": {"cpu_count": os.cpu_count(), "platform": platform.platform(),
                          "python": platform.python_version(), "casadi": ca.__version__,
                          "load_average_at_end": list(os.getloadavg())},
              "runs": runs}
    write_report(args.out, report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
