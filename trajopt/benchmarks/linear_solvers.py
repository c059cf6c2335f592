"""Benchmark ``trajopt bench linear-solvers``: where IPOPT's time goes, and the linear solvers it can use.

Every run is a child process (``python -m trajopt.benchmarks.linear_solvers --child SPEC``) whose output is read:
MUMPS's own report of each factorization (``mumps_print_level`` 2: elapsed time, floating-point operations,
entries in the factors, largest front, delayed pivots) and IPOPT's timing statistics. Three questions:

- **Where the time goes** on Moco's 2D gait problem (trajopt/examples/gait2d, 50 Hermite-Simpson intervals, midpoint
  controls free, compiled NLP functions from the disk cache, MUMPS with METIS, one BLAS thread): IPOPT's total,
  the factorizations (how many, seconds), the back-solves and the function evaluations. The factorizations
  alone set a floor under the solve that no setting outside the linear solver removes.
- **How a factorization scales with the mesh**: the same problem at 25/50/100/200 intervals, the first
  ``--scaling-iterations`` iterations (the sparsity is fixed; only the delayed pivots vary with the iterate),
  and the 3D walking problem (trajopt/examples/walk3d, 50 intervals, 80 muscles) with one and two BLAS threads.
- **Which linear solver**: the full 2D gait solve with each solver IPOPT can load here: MUMPS, SPRAL (built into
  casadi's IPOPT) and the HSL solvers when the user's libhsl loads (``trajopt.core.ocp.linear_algebra.hsl_library``;
  trajopt never ships HSL). Same problem, same run.

The load average is recorded: times from a shared machine are rough; counts, operations and iterations are not.
Writes ./trajopt_results/benchmarks/linear_solvers.json (or --out) and a markdown table next to it.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_intervals, add_report_out, report_file
from trajopt.examples.gait2d import main as gait2d_main
from trajopt.examples.gait2d import prediction as gait2d_prediction
from trajopt.examples.gait2d.main import PREDICTION_OBJECTIVE_SCALING
from trajopt.examples.walk3d import prediction as walk3d_prediction
from trajopt.model.io.output import write_report
from trajopt.core.ocp.linear_algebra import HSL_SOLVERS, hsl_library

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "where IPOPT's time goes (MUMPS factorizations), factorization vs mesh, MUMPS vs SPRAL (vs HSL)"

RESULT_PREFIX = "LINEAR-SOLVERS-RESULT "
# MUMPS (print level 2) and IPOPT (print_timing_statistics) lines, one value each.
_MUMPS = {"factorization_s": r"Elapsed time for factorization\s*=\s*(\S+)",
          "operations": r"\(3\) Operations in node elimination\s*=\s*(\S+)",
          "factor_entries": r"INFOG \(29\) Number of entries in factors\s*=\s*(\S+)",
          "largest_front": r"INFOG \(11\) Maximum front size\s*=\s*(\S+)",
          "delayed_pivots": r"INFOG \(13\) Number of delayed pivots\s*=\s*(\S+)",
          "negative_pivots": r"INFOG \(12\) Number of negative pivots\s*=\s*(\S+)",
          "solve_s": r"Elapsed time in solve driver\s*=\s*(\S+)"}
_IPOPT = {"ipopt_total_s": "OverallAlgorithm", "linear_system_s": "PDSystemSolverTotal",
          "function_evaluations_s": "Function Evaluations"}
# HSL solvers benchmarked when libhsl loads: trajopt.core.ocp.linear_algebra.HSL_SOLVERS but MA77, which works out of
# core.
IN_CORE_HSL = tuple(name for name in HSL_SOLVERS if name != "ma77")
# SPRAL (OpenMP) asks for these; without them it warns and may run slower.
SPRAL_ENVIRONMENT = {"OMP_CANCELLATION": "TRUE", "OMP_PROC_BIND": "TRUE"}


def _number(text: str) -> float:
    return float(text.replace("D", "E"))


def mumps_counters(output: str) -> dict:
    """Per-factorization MUMPS figures found in ``output`` (lists, in order) and IPOPT's timing totals (s)."""
    found = {key: [_number(m) for m in re.findall(pattern, output)] for key, pattern in _MUMPS.items()}
    for key, label in _IPOPT.items():
        match = re.search(rf"^\s*{re.escape(label)}\.*:\s*([-\d.]+)\s*\(sys:\s*[-\d.]+\s*wall:\s*([-\d.]+)\)",
                          output, re.MULTILINE)
        found[key] = float(match.group(2)) if match else None
    return found


def summarize_counters(found: dict, iterations: int) -> dict:
    """Totals and per-factorization means of ``mumps_counters``' lists."""
    times = found["factorization_s"]
    count = len(times)
    summary = {key: found[key] for key in _IPOPT}
    summary.update(factorizations=count, factorizations_per_iteration=count / max(iterations, 1),
                   factorization_total_s=sum(times), back_solves=len(found["solve_s"]),
                   back_solve_total_s=sum(found["solve_s"]))
    if count:
        summary.update(factorization_mean_ms=1e3 * sum(times) / count,
                       operations_mean=sum(found["operations"]) / max(len(found["operations"]), 1),
                       factor_entries_max=max(found["factor_entries"], default=None),
                       largest_front_max=max(found["largest_front"], default=None),
                       delayed_pivots_mean=sum(found["delayed_pivots"]) / max(len(found["delayed_pivots"]), 1),
                       negative_pivots_first=found["negative_pivots"][0] if found["negative_pivots"] else None)
        summary["gflops"] = summary["operations_mean"] / (summary["factorization_mean_ms"] * 1e6)
    return summary


def _solve(spec: dict) -> dict:
    """The child's work: build and solve the problem named in ``spec``; IPOPT and MUMPS print to stdout."""
    options = {"print_timing_statistics": "yes", **({"mumps_print_level": 2} if spec["counters"] else {})}
    if spec["problem"] == "walk3d":
        problem = walk3d_prediction.build_problem(spec["intervals"])
        base = walk3d_prediction.solver_settings(3, spec["max_iter"], compiled=spec["compiled"])
    else:
        problem = gait2d_prediction.build_problem(spec["intervals"])
        base = gait2d_main.solver_settings(3, spec["max_iter"], objective_scaling=PREDICTION_OBJECTIVE_SCALING,
                                           compiled=spec["compiled"])
    settings = dataclasses.replace(base, linear_solver=spec["linear_solver"], threads=spec["threads"],
                                   options={**base.options, **options})
    solution = problem.problem.solve(problem.transcription, settings, guess=problem.reference_guess())
    kkt = solution.discrete.layout.size + solution.discrete.lower_g.size
    return {"status": solution.status, "iterations": solution.iterations, "objective": solution.objective,
            "ipopt_s": solution.wall_time, "kkt_rows": kkt}


def run(spec: dict) -> dict:
    """One child run of ``spec``: its result with the counters read from its output (a failed child: its error)."""
    spec = {"problem": "gait2d", "intervals": 50, "linear_solver": "mumps", "threads": 1, "max_iter": 1000,
            "counters": True, "compiled": True, **spec}
    environment = {**os.environ, **(SPRAL_ENVIRONMENT if spec["linear_solver"] == "spral" else {})}
    load = os.getloadavg()[0]
    started = time.perf_counter()
    child = subprocess.run([sys.executable, "-m", "trajopt.benchmarks.linear_solvers", "--child", json.dumps(spec)],
                           capture_output=True, text=True, env=environment)
    wall = time.perf_counter() - started
    lines = [line for line in child.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if child.returncode != 0 or not lines:
        error = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return {**spec, "error": error, "loadavg": load}
    result = json.loads(lines[-1][len(RESULT_PREFIX):])
    counters = summarize_counters(mumps_counters(child.stdout), result["iterations"]) if spec["counters"] else {}
    return {**spec, **result, **counters, "child_wall_s": wall, "loadavg": load}


def _line(result: dict) -> str:
    if "error" in result:
        return f"{result['problem']} {result['intervals']} {result['linear_solver']}: failed ({result['error']})"
    text = (f"{result['problem']} {result['intervals']} intervals, {result['linear_solver']}, "
            f"{result['threads']} thread(s): "
            f"{result['status']}, {result['iterations']} iterations, IPOPT {result['ipopt_s']:.2f} s")
    if result.get("factorizations"):
        text += (f"; {result['factorizations']} factorizations x {result['factorization_mean_ms']:.1f} ms, "
                 f"{result['operations_mean']:.3g} flop each")
    return text


def _where_lines(where: dict) -> list[str]:
    if "error" in where or not where.get("factorizations"):
        return [_line(where), ""]
    return ["| IPOPT total s | factorizations | per iteration | factorization s | per factorization ms | "
            "back-solves s | function evaluations s | iterations | objective |",
            "|---|---|---|---|---|---|---|---|---|",
            f"| {where['ipopt_total_s']:.2f} | {where['factorizations']} | "
            f"{where['factorizations_per_iteration']:.2f} | "
            f"{where['factorization_total_s']:.2f} | {where['factorization_mean_ms']:.1f} | "
            f"{where['back_solve_total_s']:.2f} | {where['function_evaluations_s']:.2f} | {where['iterations']} | "
            f"{where['objective']:.8f} |", "",
            f"The factorizations alone take {where['factorization_total_s']:.2f} s. IPOPT factors at least once per "
            f"iteration: at these {where['iterations']} iterations and {where['factorization_mean_ms']:.1f} ms that "
            f"floor is {where['iterations'] * where['factorization_mean_ms'] / 1e3:.2f} s, before back-solves, "
            "function evaluations and building the problem.", ""]


def markdown(report: dict) -> str:
    lines = ["# Linear solvers under IPOPT (`trajopt bench linear-solvers`)", "",
             f"Load average at the start: {report['loadavg_start']:.2f}. Times from a shared machine are rough; "
             "counts, operations and iterations are not.", "",
             "## Where the time goes: 2D gait, 50 intervals, MUMPS, compiled NLP functions", "",
             *_where_lines(report["where_the_time_goes"]),
             "## A factorization against the mesh (MUMPS, METIS ordering)", "",
             "| problem | intervals | BLAS threads | KKT rows | factorization ms | flop | GFLOP/s | "
             "entries in factors | largest front | delayed pivots |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["scaling"]:
        if "error" in r or not r.get("factorizations"):
            lines.append(f"| {r['problem']} | {r['intervals']} | {r['threads']} | failed: {r.get('error', '')} |")
            continue
        lines.append(f"| {r['problem']} | {r['intervals']} | {r['threads']} | {r['kkt_rows']} | "
                     f"{r['factorization_mean_ms']:.1f} | {r['operations_mean']:.3g} | {r['gflops']:.1f} | "
                     f"{r['factor_entries_max']:.0f} | {r['largest_front_max']:.0f} | {r['delayed_pivots_mean']:.0f} |")
    lines += ["", "## Linear solvers, full 2D gait solve (50 intervals, same run)", "",
              "| linear solver | status | iterations | IPOPT s | ms per iteration | objective |",
              "|---|---|---|---|---|---|"]
    for r in report["solvers"]:
        if "error" in r:
            lines.append(f"| {r['linear_solver']} | failed: {r['error']} | | | | |")
            continue
        lines.append(f"| {r['linear_solver']} | {r['status']} | {r['iterations']} | {r['ipopt_s']:.2f} | "
                     f"{1e3 * r['ipopt_s'] / max(r['iterations'], 1):.0f} | {r['objective']:.8f} |")
    if report["hsl_library"] is None:
        lines += ["", "No HSL library loaded on this machine (set TRAJOPT_HSL to a libhsl to add MA27/57/86/97)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench linear-solvers", description=description(__doc__))
    add_intervals(parser, [25, 50, 100, 200], sweep=True)  # 2D gait meshes of the scaling table
    parser.add_argument("--scaling-iterations", type=int, default=3,
                        help="IPOPT iterations per scaling run (default 3)")
    parser.add_argument("--solvers", nargs="+", default=None, metavar="SOLVER",
                        choices=("mumps", "spral", *HSL_SOLVERS),
                        help="linear solvers for the full solves: mumps, spral, " + ", ".join(HSL_SOLVERS) +
                             " (default mumps, spral and the in-core HSL ones when libhsl loads)")
    parser.add_argument("--no-walk3d", action="store_true", help="leave the 3D walking rows out of the scaling table")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "linear_solvers")  # the report file inside the --out folder
    if args.child:
        print(RESULT_PREFIX + json.dumps(_solve(json.loads(args.child))), flush=True)
        return 0
    if min(args.intervals) < 2 or args.scaling_iterations < 0:
        parser.error(f"need --intervals >= 2 and --scaling-iterations >= 0, got {args.intervals} and "
                     f"{args.scaling_iterations}")
    hsl = hsl_library()
    solvers = args.solvers or ["mumps", "spral", *(IN_CORE_HSL if hsl else ())]
    load = os.getloadavg()[0]

    def measured(spec: dict) -> dict:
        result = run(spec)
        print(_line(result), flush=True)
        return result

    where = measured({})
    scaling = [measured({"intervals": n, "max_iter": args.scaling_iterations, "compiled": False})
               for n in args.intervals]
    if not args.no_walk3d:
        scaling += [measured({"problem": "walk3d", "max_iter": args.scaling_iterations, "threads": threads,
                              "compiled": False}) for threads in (1, 2)]
    full = [where if name == "mumps" else measured({"linear_solver": name, "counters": False}) for name in solvers]
    report = {"benchmark": "linear solvers under IPOPT", "loadavg_start": load, "hsl_library": hsl,
              "where_the_time_goes": where, "scaling": scaling, "solvers": full}
    path = write_report(args.out, report)
    table = Path(path).with_suffix(".md")
    table.write_text(markdown(report))
    print(f"wrote {path} and {table}")
    failed = [_line(r) for r in (where, *scaling, *full) if "error" in r]
    if failed:
        print(f"{parser.prog}: {len(failed)} run(s) failed, first: {failed[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
