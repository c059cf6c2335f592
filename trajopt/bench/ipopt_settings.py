"""Benchmark ``trajopt bench ipopt-settings``: IPOPT settings studied on the 2D gait prediction (issue 14).

Each candidate setting changes the project's gait2d settings (problems/gait2d: MUMPS with METIS ordering,
monotone barrier, gradient-based scaling, objective scaled by 100, tolerance 1e-4 as Moco) by a few IPOPT
options. Two questions per setting:

- **speed on Moco's problem**: example2DWalking at 1.2 m/s from the reference-coordinates guess, 25/50/100
  Hermite-Simpson intervals (midpoint controls free, compiled NLP functions): status, iterations, IPOPT seconds
  and milliseconds per iteration, and the objective's difference from the default settings' (a setting that
  lands in another local optimum does not count as faster);
- **robustness**: the same prediction at 13 speeds (0.8-2.0 m/s) from the reference guess, with the speed
  sweep's widened bounds (problems/gait2d/speed_sweep.toml: final time 0.2-1 s, pelvis_tx 0-3 m), 50
  intervals: how many converge, total iterations, and at how many speeds the objective differs from the
  default settings' by more than 1e-6 (issue 14's "same objective to 1e-6"). Such a difference is another
  local optimum or the same optimum reached to another accuracy: at tolerance 1e-4 the objective can stop
  1e-4 or more above a tighter solve's, so a setting whose objective differs needs a tight solve to tell.

A setting is worth a default only if it is faster at every mesh, converges at every speed and reaches the
default's optima. The load average is recorded: timings from a shared machine are rough, iteration counts
and objectives are not. Writes ./trajopt_results/benchmarks/ipopt_settings.json (or --out) and a markdown table
next to it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

from trajopt.helptext import description
from trajopt.io.output import add_report_argument, write_report

# name (for --settings) -> (description, IPOPT options added to the gait2d settings); the first is the default.
SETTINGS = {
    "default": ("default", {}),
    "mu-init": ("mu_init 1e-3", {"mu_init": 1e-3}),
    "perturbation": ("perturbation factors (dec 0.6, inc 3)", {"perturb_dec_fact": 0.6, "perturb_inc_fact": 3.0}),
    "mu-init-perturbation": ("mu_init 1e-3 + perturbation factors",
                             {"mu_init": 1e-3, "perturb_dec_fact": 0.6, "perturb_inc_fact": 3.0}),
    "curvature-test": ("inertia-free curvature test (neg_curv_test_tol 1e-12)", {"neg_curv_test_tol": 1e-12}),
    "dual-step": ("alpha_for_y safer-min-dual-infeas", {"alpha_for_y": "safer-min-dual-infeas"}),
    "adaptive-mu": ("mu_strategy adaptive", {"mu_strategy": "adaptive"}),
    "no-scaling": ("nlp_scaling_method none", {"nlp_scaling_method": "none"}),
}
SPEEDS = tuple(round(0.8 + 0.1 * k, 1) for k in range(13))
SAME_OBJECTIVE = 1e-6  # absolute: objectives are 0.05-0.46 here


def solve(model, intervals: int, speed: float, options: dict, widened: bool) -> dict:
    """One prediction from the reference guess with the gait2d settings plus `options`."""
    from problems.gait2d.main import PREDICTION_OBJECTIVE_SCALING, solver_settings
    from problems.gait2d.prediction import build_problem
    from trajopt.ocp import Free

    bounds = {"duration": Free(0.2, 1.0), "coordinate_bounds": {"pelvis_tx": (0.0, 3.0)}} if widened else {}
    gait = build_problem(intervals, speed, model=model, **bounds)
    base = solver_settings(0, 500, objective_scaling=PREDICTION_OBJECTIVE_SCALING, compiled=True)
    settings = dataclasses.replace(base, options={**base.options, **options})
    load = os.getloadavg()[0]
    solution = gait.problem.solve(gait.transcription, settings, guess=gait.reference_guess())
    return {"intervals": intervals, "speed": speed, "status": solution.status, "success": solution.success,
            "iterations": solution.iterations, "objective": solution.objective, "ipopt_s": solution.wall_time,
            "ms_per_iteration": 1e3 * solution.wall_time / max(solution.iterations, 1), "loadavg": load}


def _same(value: float, reference: float) -> bool:
    return abs(value - reference) <= SAME_OBJECTIVE


def summarize(runs: dict, intervals, speeds) -> list[dict]:
    """Per setting: the mesh runs with their objective differences, and the speed sweep's counts."""
    default = runs["default"]
    rows = []
    for name, result in runs.items():
        meshes = []
        for run, reference in zip(result["meshes"], default["meshes"]):
            meshes.append({**run, "objective_difference": run["objective"] - reference["objective"],
                           "same_optimum": run["success"] and _same(run["objective"], reference["objective"])})
        sweep = result["speeds"]
        pairs = [(r, d) for r, d in zip(sweep, default["speeds"]) if r["success"] and d["success"]]
        other = [r["speed"] for r, d in pairs if not _same(r["objective"], d["objective"])]
        lower = [r["speed"] for r, d in pairs if r["objective"] < d["objective"] - SAME_OBJECTIVE]
        description, options = SETTINGS[name]
        rows.append({"setting": name, "description": description, "options": options, "meshes": meshes,
                     "speeds_converged": sum(r["success"] for r in sweep), "speeds": len(sweep),
                     "speeds_failed": [r["speed"] for r in sweep if not r["success"]],
                     "speeds_other_optimum": other, "speeds_lower_objective": lower,
                     "sweep_iterations": sum(r["iterations"] for r in sweep),
                     "sweep_ipopt_s": sum(r["ipopt_s"] for r in sweep), "sweep": sweep})
    return rows


def markdown(rows: list[dict], intervals, speeds) -> str:
    head = " | ".join(f"{n} intervals: iterations, IPOPT s, Δobjective" for n in intervals)
    lines = ["# IPOPT settings on the 2D gait prediction (`trajopt bench ipopt-settings`)", "",
             f"Moco's problem at 1.2 m/s from the reference guess, then {len(speeds)} speeds "
             f"({min(speeds, default=0)}-{max(speeds, default=0)} m/s, widened bounds, 50 intervals). Δobjective: "
             "against the default "
             f"settings' objective at the same mesh; 'another objective': it differs by more than "
             f"{SAME_OBJECTIVE:g} from the default's, either another local optimum or the same one reached to "
             "another accuracy (tolerance 1e-4 can leave the objective 1e-4 or more above a tighter solve's). "
             "Timings on a shared machine (load average in the JSON).", "",
             f"| setting | {head} | speeds converged | speeds with another objective | sweep iterations (s) |",
             "|---|" + "---|" * (len(intervals) + 3)]
    for row in rows:
        cells = []
        for run in row["meshes"]:
            mark = "" if run["success"] else f" **{run['status']}**"
            cells.append(f"{run['iterations']}, {run['ipopt_s']:.2f}, {run['objective_difference']:+.1e}{mark}")
        failed = f" (failed at {', '.join(map(str, row['speeds_failed']))} m/s)" if row["speeds_failed"] else ""
        other = ", ".join(map(str, row["speeds_other_optimum"])) or "none"
        if row["speeds_other_optimum"]:
            other += f" (lower objective at {len(row['speeds_lower_objective'])})"
        lines.append(f"| {row['description']} (`{row['setting']}`) | {' | '.join(cells)} | "
                     f"{row['speeds_converged']}/{row['speeds']}{failed} | {other} | {row['sweep_iterations']} "
                     f"({row['sweep_ipopt_s']:.0f}) |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench ipopt-settings", description=description(__doc__))
    parser.add_argument("--intervals", type=int, nargs="+", default=[25, 50, 100], help="meshes for Moco's problem")
    parser.add_argument("--speeds", type=float, nargs="*", default=list(SPEEDS),
                        help="speeds of the robustness sweep, m/s (default 0.8 ... 2.0)")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS),
                        metavar="SETTING", help="settings to study (default all: "
                        + "; ".join(f"{name} = {text}" for name, (text, _) in SETTINGS.items()) + ")")
    add_report_argument(parser, "ipopt_settings")
    args = parser.parse_args(argv)
    from problems.gait2d.model import GaitModel

    names = ["default", *[n for n in args.settings if n != "default"]]
    model = GaitModel.load()
    runs, started = {}, time.perf_counter()
    for name in names:
        options = SETTINGS[name][1]
        meshes = [solve(model, n, 1.2, options, widened=False) for n in args.intervals]
        speeds = [solve(model, 50, s, options, widened=True) for s in args.speeds]
        runs[name] = {"meshes": meshes, "speeds": speeds}
        mesh_text = ", ".join(f"{r['intervals']}: {r['iterations']} it {r['ipopt_s']:.1f} s" for r in meshes)
        print(f"{name}: {mesh_text}; speeds converged {sum(r['success'] for r in speeds)}/{len(speeds)} "
              f"({time.perf_counter() - started:.0f} s so far)", flush=True)
    rows = summarize(runs, args.intervals, args.speeds)
    report = {"benchmark": "IPOPT settings on the gait2d prediction (issue 14)", "settings": rows,
              "same_objective_absolute": SAME_OBJECTIVE, "intervals": args.intervals, "speeds": args.speeds}
    path = write_report(args.out, report)
    table = Path(path).with_suffix(".md")
    table.write_text(markdown(rows, args.intervals, args.speeds))
    print(f"wrote {path} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
