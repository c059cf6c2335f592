"""Benchmark ``trajopt bench ipopt-settings``: IPOPT settings studied on the 2D gait prediction.

Each candidate setting changes the project's gait2d settings (trajopt/examples/gait2d: MUMPS with METIS ordering,
monotone barrier, gradient-based scaling, objective scaled by 100, tolerance 1e-4 as Moco) by a few IPOPT
options. Two questions per setting:

- **speed on Moco's problem**: example2DWalking at 1.2 m/s from the reference-coordinates guess, 25/50/100
  Hermite-Simpson intervals (midpoint controls free, compiled NLP functions): status, iterations, IPOPT seconds
  and milliseconds per iteration, and the objective's difference from the default settings' (a setting that
  lands in another local optimum does not count as faster);
- **robustness**: the same prediction at 13 speeds (0.8-2.0 m/s) from the reference guess, with the speed
  sweep's widened bounds (trajopt/examples/gait2d/speed_sweep.toml: final time 0.2-1 s, pelvis_tx 0-3 m), 50
  intervals: how many converge and total iterations.

**Which optimum.** At tolerance 1e-4 an objective can stop 1e-4 or more above the optimum it converges to, so
objectives of two settings differing by more than 1e-6 (the criterion "same objective to 1e-6") may be one optimum
reached to two accuracies, or two optima. Every mesh and speed is therefore also solved with the default settings
at tolerance 1e-8 (the *tight optimum*), and each run is placed against it: Δ = objective − tight optimum; *at
the optimum* when |Δ| <= 1e-6; *worse than the default* when Δ exceeds the default settings' Δ by more than 1e-6
(another, higher local optimum, or a less accurate stop); *another, lower optimum* when Δ < −1e-6.

A setting is worth a default only if it is faster at every mesh, converges at every speed and is never worse
than the default. The load average is recorded: timings from a shared machine are rough, iteration counts
and objectives are not. Writes ./trajopt_results/benchmarks/ipopt_settings.json (or --out) and a markdown table
next to it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_intervals, add_report_out, report_file
from trajopt.examples.gait2d.main import PREDICTION_OBJECTIVE_SCALING, solver_settings
from trajopt.examples.gait2d.model import GaitModel
from trajopt.examples.gait2d.prediction import build_problem
from trajopt.model.io.output import write_report
from trajopt.core.ocp import Free

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'IPOPT settings on the gait2d prediction: speed at 25/50/100 intervals, robustness over 13 speeds'

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
    "bound-push": ("bound_push and bound_frac 1e-6 (the guess moved less off its bounds)",
                   {"bound_push": 1e-6, "bound_frac": 1e-6}),
    "adaptive-never-monotone": ("mu_strategy adaptive, never monotone",
                                {"mu_strategy": "adaptive", "adaptive_mu_globalization": "never-monotone-mode"}),
    "adaptive-perturbation": ("mu_strategy adaptive, never monotone + perturbation factors",
                              {"mu_strategy": "adaptive", "adaptive_mu_globalization": "never-monotone-mode",
                               "perturb_dec_fact": 0.6, "perturb_inc_fact": 3.0}),
}
TIGHT = {"tol": 1e-8, "constr_viol_tol": 1e-8}  # the default settings solved to the tight optimum
SPEEDS = tuple(round(0.8 + 0.1 * k, 1) for k in range(13))
SAME_OBJECTIVE = 1e-6  # absolute: objectives are 0.05-0.46 here


def solve(model, intervals: int, speed: float, options: dict, widened: bool) -> dict:
    """One prediction from the reference guess with the gait2d settings plus `options`."""
    bounds = {"duration": Free(0.2, 1.0), "coordinate_bounds": {"pelvis_tx": (0.0, 3.0)}} if widened else {}
    gait = build_problem(intervals, speed, model=model, **bounds)
    base = solver_settings(0, 500, objective_scaling=PREDICTION_OBJECTIVE_SCALING, compiled=True)
    settings = dataclasses.replace(base, options={**base.options, **options})
    load = os.getloadavg()[0]
    solution = gait.problem.solve(gait.transcription, settings, guess=gait.reference_guess())
    return {"intervals": intervals, "speed": speed, "status": solution.status, "success": solution.success,
            "iterations": solution.iterations, "objective": solution.objective, "ipopt_s": solution.wall_time,
            "ms_per_iteration": 1e3 * solution.wall_time / max(solution.iterations, 1), "loadavg": load}


def place(run: dict, tight: dict, default: dict) -> dict:
    """``run`` placed against the tight optimum (``tight``: the default settings at tolerance 1e-8, same mesh and
    speed) and against the default settings' run ``default``."""
    usable = run["success"] and tight["success"]
    delta = run["objective"] - tight["objective"]
    default_delta = default["objective"] - tight["objective"]
    return {**run, "tight_objective": tight["objective"], "above_optimum": delta,
            "at_optimum": usable and abs(delta) <= SAME_OBJECTIVE,
            "worse_than_default": usable and default["success"] and delta > default_delta + SAME_OBJECTIVE,
            "lower_optimum": usable and delta < -SAME_OBJECTIVE}


def summarize(runs: dict, tight: dict) -> list[dict]:
    """Per setting: the mesh runs and the speed sweep placed against the tight optimum and the default settings
    (``runs``: setting -> {"meshes": [...], "speeds": [...]}, "default" among them; ``tight`` alike)."""
    default = runs["default"]
    rows = []
    for name, result in runs.items():
        meshes, sweep = ([place(r, t, d) for r, t, d in zip(result[part], tight[part], default[part])]
                         for part in ("meshes", "speeds"))
        description, options = SETTINGS[name]
        rows.append({"setting": name, "description": description, "options": options, "meshes": meshes,
                     **sweep_counts(sweep)})
    return rows


def sweep_counts(sweep: list[dict]) -> dict:
    """The speed sweep's counts from its placed runs."""
    return {"speeds_converged": sum(r["success"] for r in sweep), "speeds": len(sweep),
            "speeds_failed": [r["speed"] for r in sweep if not r["success"]],
            "speeds_at_optimum": [r["speed"] for r in sweep if r["at_optimum"]],
            "speeds_worse_than_default": [r["speed"] for r in sweep if r["worse_than_default"]],
            "speeds_lower_optimum": [r["speed"] for r in sweep if r["lower_optimum"]],
            "sweep_iterations": sum(r["iterations"] for r in sweep),
            "sweep_ipopt_s": sum(r["ipopt_s"] for r in sweep), "sweep": sweep}


def _speeds(speeds: list) -> str:
    return ", ".join(map(str, speeds)) or "none"


def markdown(rows: list[dict], tight: dict, intervals, speeds) -> str:
    head = " | ".join(f"{n} intervals: iterations, IPOPT s, Δ" for n in intervals)
    optima = ", ".join(f"{r['objective']:.8f} ({r['intervals']} intervals)" for r in tight["meshes"])
    failed_tight = [r["speed"] for r in tight["speeds"] if not r["success"]]
    lines = ["# IPOPT settings on the 2D gait prediction (`trajopt bench ipopt-settings`)", "",
             f"Moco's problem at 1.2 m/s from the reference guess, then {len(speeds)} speeds "
             f"({min(speeds, default=0)}-{max(speeds, default=0)} m/s, widened bounds, 50 intervals). "
             "Δ: objective minus the tight optimum (the default settings at tolerance 1e-8, same mesh or speed; "
             f"Moco's problem: {optima}). At the optimum: |Δ| <= {SAME_OBJECTIVE:g}; worse than the default: Δ "
             f"above the default settings' by more than {SAME_OBJECTIVE:g} (a higher local optimum or a less "
             f"accurate stop); lower optimum: Δ < -{SAME_OBJECTIVE:g}. "
             + (f"The tight solve failed at {_speeds(failed_tight)} m/s: no placement there. " if failed_tight else "")
             + "Timings on a shared machine (load average in the JSON).", "",
             f"| setting | {head} | speeds converged | speeds at the optimum | worse than the default | lower optimum "
             "| sweep iterations (s) |",
             "|---|" + "---|" * (len(intervals) + 5)]
    tight_row = {"description": "default at tolerance 1e-8 (the tight optimum)", "setting": "tight",
                 "meshes": [place(r, r, r) for r in tight["meshes"]],
                 **sweep_counts([place(r, r, r) for r in tight["speeds"]])}
    for row in [tight_row, *rows]:
        cells = []
        for run in row["meshes"]:
            mark = "" if run["success"] else f" **{run['status']}**"
            cells.append(f"{run['iterations']}, {run['ipopt_s']:.2f}, {run['above_optimum']:+.1e}{mark}")
        failed = f" (failed at {_speeds(row['speeds_failed'])} m/s)" if row["speeds_failed"] else ""
        lines.append(f"| {row['description']} (`{row['setting']}`) | {' | '.join(cells)} | "
                     f"{row['speeds_converged']}/{row['speeds']}{failed} | {len(row['speeds_at_optimum'])} | "
                     f"{_speeds(row['speeds_worse_than_default'])} | {_speeds(row['speeds_lower_optimum'])} | "
                     f"{row['sweep_iterations']} ({row['sweep_ipopt_s']:.0f}) |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench ipopt-settings", description=description(__doc__))
    add_intervals(parser, [25, 50, 100], sweep=True)  # meshes of Moco's problem
    parser.add_argument("--speeds", type=float, nargs="*", default=list(SPEEDS),
                        help="speeds of the robustness sweep, m/s (default 0.8 ... 2.0)")
    parser.add_argument("--settings", nargs="+", choices=list(SETTINGS), default=list(SETTINGS),
                        metavar="SETTING", help="settings to study (default all: "
                        + "; ".join(f"{name} = {text}" for name, (text, _) in SETTINGS.items()) + ")")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "ipopt_settings")  # the report file inside the --out folder
    names = ["default", *[n for n in args.settings if n != "default"]]
    model = GaitModel.load()
    started = time.perf_counter()

    def study(name: str, options: dict) -> dict:
        meshes = [solve(model, n, 1.2, options, widened=False) for n in args.intervals]
        speeds = [solve(model, 50, s, options, widened=True) for s in args.speeds]
        mesh_text = ", ".join(f"{r['intervals']}: {r['iterations']} it {r['ipopt_s']:.1f} s" for r in meshes)
        print(f"{name}: {mesh_text}; speeds converged {sum(r['success'] for r in speeds)}/{len(speeds)} "
              f"({time.perf_counter() - started:.0f} s so far)", flush=True)
        return {"meshes": meshes, "speeds": speeds}

    tight = study("tight optimum (default settings, tolerance 1e-8)", TIGHT)
    runs = {name: study(name, SETTINGS[name][1]) for name in names}
    rows = summarize(runs, tight)
    report = {"benchmark": "IPOPT settings on the gait2d prediction", "settings": rows,
              "tight": {"options": TIGHT, **tight}, "same_objective_absolute": SAME_OBJECTIVE,
              "intervals": args.intervals, "speeds": args.speeds}
    path = write_report(args.out, report)
    table = Path(path).with_suffix(".md")
    table.write_text(markdown(rows, tight, args.intervals, args.speeds))
    print(f"wrote {path} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
