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
- **Which MUMPS ordering and scaling** (``--orderings``): each fill-reducing ordering IPOPT can ask MUMPS for
  (``mumps_pivot_order``: AMD, AMF, SCOTCH, PORD, METIS, QAMD, automatic; MUMPS's own report says which one it
  used, as it falls back when one is not built in) and METIS without MUMPS's scalings: one factorization against the
  mesh (``--intervals``, floating-point operations and entries in the factors, which do not depend on the load), the
  full 2D gait solve (50 intervals, the same IPOPT settings) and the full walk3d-inverse solve (``trajopt run
  walk3d-inverse``'s settings), each with its objective against the METIS default's.
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
from trajopt.examples.walk3d import inverse as walk3d_inverse
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
          "solve_s": r"Elapsed time in solve driver\s*=\s*(\S+)",
          "ordering_used": r"Ordering option effectively used\s*=\s*(\S+)"}
_IPOPT = {"ipopt_total_s": "OverallAlgorithm", "linear_system_s": "PDSystemSolverTotal",
          "function_evaluations_s": "Function Evaluations"}
# MUMPS orderings by IPOPT's mumps_pivot_order (MUMPS ICNTL(7)); 1 (a user-given order) is not IPOPT's to give.
ORDERINGS = {"amd": 0, "amf": 2, "scotch": 3, "pord": 4, "metis": 5, "qamd": 6, "auto": 7}
ORDERING_NAMES = {number: name for name, number in ORDERINGS.items()}
# IPOPT's defaults of MUMPS's scalings, what the orderings are compared under.
IPOPT_MUMPS_SCALINGS = {"mumps_permuting_scaling": 7, "mumps_scaling": 77}
# METIS (trajopt's default) without MUMPS's scalings: the row/column scaling (mumps_scaling 77 = automatic) and the
# permutation to a large diagonal with its scaling (mumps_permuting_scaling 7 = automatic).
SCALING_VARIANTS = {"metis-no-permuting-scaling": {"mumps_permuting_scaling": 0},
                    "metis-no-scaling": {"mumps_scaling": 0},
                    "metis-no-scalings": {"mumps_permuting_scaling": 0, "mumps_scaling": 0}}
# HSL solvers benchmarked when libhsl loads: trajopt.core.ocp.linear_algebra.HSL_SOLVERS but MA77, which works out of
# core.
IN_CORE_HSL = tuple(name for name in HSL_SOLVERS if name != "ma77")
# SPRAL (OpenMP) asks for these; without them it warns and may run slower.
SPRAL_ENVIRONMENT = {"OMP_CANCELLATION": "TRUE", "OMP_PROC_BIND": "TRUE"}


def _number(text: str) -> float:
    return float(text.replace("D", "E"))


def _cpu_key(key: str) -> str:
    """"linear_system_s" -> "linear_system_cpu_s"."""
    return key.removesuffix("_s") + "_cpu_s"


def mumps_counters(output: str) -> dict:
    """Per-factorization MUMPS figures found in ``output`` (lists, in order) and IPOPT's timing totals (s)."""
    found = {key: [_number(m) for m in re.findall(pattern, output)] for key, pattern in _MUMPS.items()}
    for key, label in _IPOPT.items():
        match = re.search(rf"^\s*{re.escape(label)}\.*:\s*([-\d.]+)\s*\(sys:\s*[-\d.]+\s*wall:\s*([-\d.]+)\)",
                          output, re.MULTILINE)
        found[key] = float(match.group(2)) if match else None
        # IPOPT's CPU figure (user time; other jobs on the cores stretch the wall time, not this)
        found[_cpu_key(key)] = float(match.group(1)) if match else None
    return found


def summarize_counters(found: dict, iterations: int) -> dict:
    """Totals and per-factorization means of ``mumps_counters``' lists."""
    times = found["factorization_s"]
    count = len(times)
    summary = {key: found[key] for name in _IPOPT for key in (name, _cpu_key(name))}
    summary.update(factorizations=count, factorizations_per_iteration=count / max(iterations, 1),
                   factorization_total_s=sum(times), back_solves=len(found["solve_s"]),
                   back_solve_total_s=sum(found["solve_s"]))
    if count:
        summary.update(factorization_mean_ms=1e3 * sum(times) / count,
                       operations_mean=sum(found["operations"]) / max(len(found["operations"]), 1),
                       factor_entries_max=max(found["factor_entries"], default=None),
                       largest_front_max=max(found["largest_front"], default=None),
                       delayed_pivots_mean=sum(found["delayed_pivots"]) / max(len(found["delayed_pivots"]), 1),
                       negative_pivots_first=found["negative_pivots"][0] if found["negative_pivots"] else None,
                       ordering_used=ORDERING_NAMES.get(int(found["ordering_used"][0]))
                       if found["ordering_used"] else None)
        summary["gflops"] = summary["operations_mean"] / (summary["factorization_mean_ms"] * 1e6)
    return summary


def _solve(spec: dict) -> dict:
    """The child's work: build and solve the problem named in ``spec``; IPOPT and MUMPS print to stdout."""
    options = {"print_timing_statistics": "yes", **({"mumps_print_level": 2} if spec["counters"] else {}),
               **spec["options"]}
    if spec["problem"] == "walk3d-inverse":
        base = walk3d_inverse.solver_settings(print_level=3)
        settings = dataclasses.replace(base, linear_solver=spec["linear_solver"], threads=spec["threads"],
                                       max_iterations=spec["max_iter"], options={**base.options, **options})
        solution = walk3d_inverse.solve(walk3d_inverse.build(), settings=settings).solution
        kkt = solution.discrete.layout.size + solution.discrete.lower_g.size
        return {"status": solution.status, "iterations": solution.iterations, "objective": solution.objective,
                "ipopt_s": solution.wall_time, "kkt_rows": kkt, "intervals": solution.discrete.transcription.intervals}
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
            "counters": True, "compiled": True, "options": {}, **spec}
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
    text = (f"{result['problem']} {result['intervals']} intervals, {result['linear_solver']} {result['options']}, "
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


def ordering_options(variant: str) -> dict:
    """IPOPT options of an ``--orderings`` variant (an ordering by name, or METIS without a scaling), every one
    stated, so that a command's own MUMPS settings do not leak into the comparison."""
    if variant in SCALING_VARIANTS:
        return {**IPOPT_MUMPS_SCALINGS, "mumps_pivot_order": ORDERINGS["metis"], **SCALING_VARIANTS[variant]}
    return {**IPOPT_MUMPS_SCALINGS, "mumps_pivot_order": ORDERINGS[variant]}


def relative_to(objective: float | None, reference: float | None) -> str:
    """The relative difference of ``objective`` from ``reference`` as text ("–" without both)."""
    if objective is None or reference is None or reference == 0:
        return "–"
    return f"{(objective - reference) / abs(reference):+.1e}"


def _seconds(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _ordering_lines(orderings: dict | None) -> list[str]:
    if not orderings:
        return []
    lines = ["", "## MUMPS orderings and scalings (`--orderings`)", "",
             "One factorization of the KKT matrix (the first iterations, as above): time, floating-point operations "
             "and entries in the factors; the ordering MUMPS reports it used (it falls back when one is not built "
             "in).", "",
             "| variant | ordering used | problem | intervals | KKT rows | factorization ms | flop | "
             "entries in factors |",
             "|---|---|---|---|---|---|---|---|"]
    for r in orderings["mesh"]:
        if "error" in r or not r.get("factorizations"):
            lines.append(f"| {r['variant']} | failed: {r.get('error', '')} | {r['problem']} | {r['intervals']} "
                         "| | | | |")
            continue
        lines.append(f"| {r['variant']} | {r.get('ordering_used') or '?'} | {r['problem']} | {r['intervals']} | "
                     f"{r['kkt_rows']} | {r['factorization_mean_ms']:.1f} | {r['operations_mean']:.3g} | "
                     f"{r['factor_entries_max']:.0f} |")
    lines += ["", "Full solves, each variant's objective against the METIS default's (same optimum: 1e-6 relative):",
              "", "| problem | variant | status | iterations | factorizations | flop each | factorization s | "
              "back-solve s | IPOPT s | IPOPT CPU s | linear systems CPU s | objective | vs METIS |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for problem, rows in orderings["full"].items():
        reference = next((r.get("objective") for r in rows if r["variant"] == "metis" and "error" not in r), None)
        for r in rows:
            if "error" in r:
                lines.append(f"| {problem} | {r['variant']} | failed: {r['error']} | | | | | | | | | | |")
                continue
            lines.append(f"| {problem} | {r['variant']} | {r['status']} | {r['iterations']} | "
                         f"{r.get('factorizations', 0)} | {r.get('operations_mean', 0):.3g} | "
                         f"{r.get('factorization_total_s', 0):.2f} | "
                         f"{r.get('back_solve_total_s', 0):.2f} | {r['ipopt_s']:.2f} | "
                         f"{_seconds(r.get('ipopt_total_cpu_s'))} | {_seconds(r.get('linear_system_cpu_s'))} | "
                         f"{r['objective']:.10g} | {relative_to(r['objective'], reference)} |")
    return lines


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
    lines += _ordering_lines(report.get("orderings"))
    if report["hsl_library"] is None:
        lines += ["", "No HSL library loaded on this machine (set TRAJOPT_HSL to a libhsl to add MA27/57/86/97)."]
    return "\n".join(lines) + "\n"


def compare_orderings(variants: list[str], intervals: list[int], iterations: int, where: dict, measured,
                      walk3d: bool = True) -> dict:
    """The ``--orderings`` runs: a factorization per variant and mesh (and on the 3D walking prediction for METIS and
    its scaling variants: the other orderings take seconds a factorization there), and the full gait2d and
    walk3d-inverse solves per variant (the METIS gait2d solve is ``where``, the same run)."""
    if not variants:
        return {}
    mesh = [{"variant": v, **measured({"intervals": n, "max_iter": iterations, "compiled": False,
                                       "options": ordering_options(v)})} for v in variants for n in intervals]
    if walk3d:
        mesh += [{"variant": v, **measured({"problem": "walk3d", "max_iter": iterations, "compiled": False,
                                            "options": ordering_options(v)})}
                 for v in variants if v == "metis" or v in SCALING_VARIANTS]
    full = {"gait2d 50": [], "walk3d-inverse": []}
    for v in variants:
        gait = where if v == "metis" and not where.get("options") else measured({"options": ordering_options(v)})
        full["gait2d 50"].append({"variant": v, **gait})
        full["walk3d-inverse"].append({"variant": v, **measured({"problem": "walk3d-inverse", "compiled": False,
                                                                  "options": ordering_options(v)})})
    return {"mesh": mesh, "full": full}


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
    variants = [*ORDERINGS, *SCALING_VARIANTS]
    parser.add_argument("--orderings", nargs="*", default=variants, choices=variants, metavar="VARIANT",
                        help="MUMPS orderings (" + ", ".join(ORDERINGS) + ") and METIS without a scaling (" +
                             ", ".join(SCALING_VARIANTS) + ") to compare: a factorization at each of "
                             "--ordering-intervals, and the full 2D gait (50 intervals) and walk3d-inverse solves "
                             "(default all; none given: skip)")
    parser.add_argument("--ordering-intervals", type=int, nargs="+", default=[25, 50, 100], metavar="N",
                        help="2D gait meshes of the orderings' factorization table (default 25 50 100)")
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
    orderings = compare_orderings(args.orderings, args.ordering_intervals, args.scaling_iterations, where, measured,
                                  walk3d=not args.no_walk3d)
    report = {"benchmark": "linear solvers under IPOPT", "loadavg_start": load, "hsl_library": hsl,
              "where_the_time_goes": where, "scaling": scaling, "solvers": full, "orderings": orderings}
    path = write_report(args.out, report)
    table = Path(path).with_suffix(".md")
    table.write_text(markdown(report))
    print(f"wrote {path} and {table}")
    compared = [*orderings["mesh"], *(r for rows in orderings["full"].values() for r in rows)] if orderings else []
    failed = [_line(r) for r in (where, *scaling, *full, *compared) if "error" in r]
    if failed:
        print(f"{parser.prog}: {len(failed)} run(s) failed, first: {failed[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
