"""Benchmark ``trajopt bench solvers``: every shipped optimal-control problem under today's settings and each solver
route, in one run.

The problems, each built as its ready command builds it and solved with that command's settings ("today"):

- ``reaching``: arm26 point-to-point reaching (``trajopt run arm26-reaching``: the hand to the default target in
  0.5 s, 50 Hermite-Simpson intervals, naive guess, IPOPT tolerance 1e-6);
- ``gait2d``: Moco's example2DWalking prediction, midpoint controls free (``trajopt run gait2d-prediction``:
  reference guess, objective scaled by 100, tolerance 1e-4, mesh continuation with the adaptive barrier on the
  half mesh); ``gait2d-moco-terms``: the same on Moco's terms (midpoint controls the mean of the mesh points', the
  "moco_terms" runs of ``trajopt bench gait2d``);
- ``walk3d-inverse``: Moco's 3D walking MocoInverse (``trajopt run walk3d-inverse``: 57 intervals, tolerance 1e-6);
- ``shoulder-reaching``: the quaternion-shoulder reaching (``trajopt run shoulder-reaching``: 40 intervals, naive
  guess, tolerance 1e-6);
- ``walk3d-prediction``: the 3D walking prediction on Moco's recipe (``trajopt run walk3d-prediction --recipe
  moco-example``: quaternion pelvis, reference guess, tolerance 1e-4, adaptive barrier; ``--walk3d-intervals``,
  default 25), the longest, last.

Routes, each a change of today's settings (skipped where it is today's or makes no sense, the reason in the table):
the adaptive barrier (never-monotone), mesh continuation (half the mesh first, then the mesh from its solution, with
the command's own warm-start options where it has them) or, where today's route is mesh continuation, IPOPT directly
on the mesh, IPOPT's limited-memory Hessian (capped at ``LIMITED_MEMORY_ITERATIONS``), and IPOPT's inertia-free
curvature test. Each problem is also solved with today's settings at tolerance 1e-8 (the *tight optimum*); a run
reaches *the same optimum* as in ``trajopt bench solver-routes``: at most 1e-6 (relative) below the tight optimum
and no farther above it than today's settings plus 1e-6.

Per run: status, iterations, factorizations (IPOPT's trial factorizations from its output file at level 6; mesh
continuation: both solves, and full-mesh equivalents), objective, relative difference from the tight optimum, IPOPT
seconds and seconds per iteration, CPU and end-to-end seconds (transcription, NLP construction and IPOPT; each
problem is built once, before its runs). Every command builds its NLP without compiling it, as here. The load
average is recorded before and after: wall times on a shared machine are rough, iterations, factorizations and
objectives are not. Writes ./trajopt_results/benchmarks/solvers.json (or --out) and solvers.md beside it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from trajopt.benchmarks.solve_log import continuation_counts, constraint_violation, logged_solver, timed_solve
from trajopt.benchmarks.solver_routes import ADAPTIVE, ROUTES as GAIT2D_ROUTES, SAME_OPTIMUM, TIGHT, place
from trajopt.studies.analysis.muscle_inverse import mesh_intervals
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_report_out, integer_at_least, report_file
from trajopt.examples.arm26_reaching import reaching as arm26
from trajopt.examples.gait2d.main import COARSE_MESH_OPTIONS, PREDICTION_OBJECTIVE_SCALING
from trajopt.examples.gait2d.main import solver_settings as gait2d_settings
from trajopt.examples.gait2d.model import GaitModel
from trajopt.examples.gait2d.prediction import build_problem as gait2d_problem
from trajopt.examples.shoulder_reaching import reaching as shoulder
from trajopt.examples.walk3d import inverse as walk3d_inverse
from trajopt.examples.walk3d import prediction as walk3d
from trajopt.model.io.output import write_report
from trajopt.core.ocp import HermiteSimpson, Hessian, Ipopt, SolverRoute
from trajopt.core.ocp.transcriptions import MOCO_MESH_INTERVAL

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = ("every shipped optimal-control problem under today's settings and each solver route: iterations, "
               "factorizations, optimum, time")

# A constraint violation that can lower an objective visibly at SAME_OPTIMUM (the problems' values are of order 1).
VISIBLE_VIOLATION = 1e-6
# The limited-memory Hessian converges linearly at best: capped so that one route cannot take the run's hour.
LIMITED_MEMORY_ITERATIONS = 500


@dataclass(frozen=True)
class Route:
    """A change of today's settings: IPOPT options added, the Hessian, or the solver route."""

    description: str
    options: dict = field(default_factory=dict)
    hessian: Hessian | None = None
    route: SolverRoute | None = None


ROUTES = {
    "adaptive": Route("adaptive barrier, never-monotone (mu_strategy adaptive)", ADAPTIVE),
    "continuation": Route("mesh continuation: half the mesh, then the mesh from its solution",
                          route=SolverRoute.MESH_CONTINUATION),
    "direct": Route("IPOPT on the mesh from the guess (no continuation)", route=SolverRoute.IPOPT),
    "limited-memory": Route(f"limited-memory quasi-Newton Hessian (at most {LIMITED_MEMORY_ITERATIONS} iterations "
                            "a solve)", hessian=Hessian.LIMITED_MEMORY),
    "curvature-test": Route(*GAIT2D_ROUTES["curvature-test"][:2]),
}


@dataclass(frozen=True)
class Prepared:
    """A problem built once: ``solve(solver)`` transcribes and solves it on ``intervals`` from its guess."""

    solve: Callable
    intervals: int


@dataclass(frozen=True)
class Case:
    """A shipped problem: how its command builds it (``prepare(intervals)``), its IPOPT settings and route, the
    options its mesh continuation uses, and the routes that make no sense for it (route -> why)."""

    description: str
    command: str
    prepare: Callable[[int], Prepared]
    settings: Callable[[], Ipopt]
    route: SolverRoute = SolverRoute.IPOPT
    intervals: int = 0  # the command's default mesh (0: the problem's own)
    coarse_options: dict | None = None
    refinement: dict | None = None
    skipped: dict = field(default_factory=dict)


def _reaching(intervals: int) -> Prepared:
    built = arm26.build_problem(arm26.DEFAULT_TARGET, 0.5)
    guess = arm26.naive_guess(built, 0.5, arm26.START, arm26.hand_posture(arm26.DEFAULT_TARGET))
    return Prepared(lambda solver: built.problem.solve(HermiteSimpson(intervals), solver, guess=guess), intervals)


def _gait2d(moco_terms: bool) -> Callable[[int], Prepared]:
    def prepare(intervals: int) -> Prepared:
        gait = gait2d_problem(intervals, 1.2, model=GaitModel.load())
        guess = gait.reference_guess()
        transcription = HermiteSimpson(intervals, interpolate_control_midpoints=moco_terms)
        return Prepared(lambda solver: gait.problem.solve(transcription, solver, guess=guess), intervals)
    return prepare


def _gait2d_settings() -> Ipopt:
    return gait2d_settings(0, objective_scaling=PREDICTION_OBJECTIVE_SCALING)


def _walk3d_inverse(_: int) -> Prepared:
    inverse = walk3d_inverse.build()
    intervals = mesh_intervals(inverse.duration, MOCO_MESH_INTERVAL)
    return Prepared(lambda solver: inverse.solve(HermiteSimpson(intervals), solver).solution, intervals)


def _walk3d_prediction(intervals: int) -> Prepared:
    walk = walk3d.build_problem(intervals, recipe=walk3d.MOCO_RECIPE)
    guess = walk.reference_guess()
    return Prepared(lambda solver: walk.problem.solve(walk.transcription, solver, guess=guess), intervals)


def _shoulder(intervals: int) -> Prepared:
    built = shoulder.build_problem(None)
    guess = shoulder.naive_guess(built)
    return Prepared(lambda solver: built.problem.solve(HermiteSimpson(intervals), solver, guess=guess), intervals)


def cases(gait2d_intervals: int, walk3d_intervals: int) -> dict[str, Case]:
    """The shipped problems by name, each built when it is prepared."""
    gait2d = dict(route=SolverRoute.MESH_CONTINUATION, intervals=gait2d_intervals, coarse_options=COARSE_MESH_OPTIONS)
    return {
        "reaching": Case("arm26 reaching, 50 intervals", "trajopt run arm26-reaching", _reaching,
                         lambda: Ipopt(tol=1e-6), intervals=50),
        "gait2d": Case(f"gait2d prediction, midpoint controls free, {gait2d_intervals} intervals",
                       "trajopt run gait2d-prediction", _gait2d(False), _gait2d_settings, **gait2d),
        "gait2d-moco-terms": Case(f"gait2d prediction on Moco's terms, {gait2d_intervals} intervals",
                                  "trajopt bench gait2d (moco_terms)", _gait2d(True), _gait2d_settings, **gait2d),
        "walk3d-inverse": Case(
            "walk3d MocoInverse, 57 intervals", "trajopt run walk3d-inverse", _walk3d_inverse,
            lambda: Ipopt(tol=1e-6)),
        "shoulder-reaching": Case("shoulder reaching, quaternion shoulder, 40 intervals",
                                  "trajopt run shoulder-reaching", _shoulder, lambda: Ipopt(tol=1e-6,
                                                                                           max_iterations=1000),
                                  intervals=40, refinement=shoulder.WARM_START_OPTIONS),
        "walk3d-prediction": Case(
            f"walk3d prediction, Moco's recipe, {walk3d_intervals} intervals",
            "trajopt run walk3d-prediction --recipe moco-example", _walk3d_prediction,
            lambda: walk3d.solver_settings(0),
            intervals=walk3d_intervals, refinement=walk3d.WARM_START_OPTIONS,
            skipped={"adaptive": "today's settings already use the adaptive barrier (mu_strategy adaptive)"}),
    }


def skip_reason(case: Case, name: str) -> str | None:
    """Why route ``name`` is not run on ``case`` (None: it is run)."""
    route = ROUTES[name].route
    if route is not None and route is case.route:
        return f"today's settings ({case.command} solves with {case.route.value})"
    return case.skipped.get(name)


def route_settings(case: Case, name: str | None, tight: bool = False) -> tuple[Ipopt, SolverRoute]:
    """Today's settings and route of ``case`` changed by route ``name`` (None: today's; ``tight``: at 1e-8)."""
    settings, route = case.settings(), case.route
    if name is not None:
        change = ROUTES[name]
        settings = dataclasses.replace(settings, options={**settings.options, **change.options})
        if change.hessian is not None:
            settings = dataclasses.replace(settings, hessian=change.hessian, max_iterations=min(
                settings.max_iterations, LIMITED_MEMORY_ITERATIONS))
        route = change.route or route
    if tight:
        settings = dataclasses.replace(settings, options={**settings.options, **TIGHT})
    return settings, route


def run(case: Case, prepared: Prepared, problem: str, name: str | None, tight: bool = False) -> dict:
    """One solve of ``problem`` under route ``name`` (None: today's settings), IPOPT writing its output file."""
    settings, route = route_settings(case, name, tight)
    load = os.getloadavg()[0]
    intervals = prepared.intervals
    with tempfile.TemporaryDirectory() as folder:
        log, coarse_log = Path(folder) / "ipopt.log", Path(folder) / "coarse.log"
        solver = logged_solver(settings, route, log, coarse_log, case.coarse_options, case.refinement)
        _, record = timed_solve(lambda: prepared.solve(solver), log)
        record["constraint_violation"] = constraint_violation(log)
        if route is SolverRoute.MESH_CONTINUATION:
            record = continuation_counts(record, coarse_log, log, intervals, intervals // 2)
        else:
            record["full_mesh_factorizations"] = record["factorizations"]
    iterations = max(record["iterations"], 1)
    return {"problem": problem, "route": "tight" if tight else name or "today", "intervals": intervals,
            "solver_route": route.value, **record,
            "factorizations_per_iteration": record["factorizations"] / iterations,
            "ipopt_s_per_iteration": record["ipopt_s"] / iterations, "loadavg": load}


def verdict(run_: dict) -> str:
    """Whether ``run_`` (placed) reaches the tight optimum, or why not in a few words."""
    if run_["same_optimum"]:
        return "yes"
    if not run_["success"]:
        return f"no: {run_['status']}"
    if not run_["tight_success"]:
        return "tight solve failed"
    if run_["relative_above_tight_optimum"] > 0:
        return "no: farther above the tight optimum than today's (an earlier stop or another local optimum)"
    violation, tight = run_["constraint_violation"], run_["tight_constraint_violation"]
    if violation is not None and tight is not None and violation > max(10 * tight, VISIBLE_VIOLATION):
        return f"no: below the tight optimum with constraints violated by {violation:.1e} (within its tolerance)"
    return "no: below the tight optimum (another local optimum)"


def progress(r: dict, started: float) -> None:
    print(f"{r['problem']:18s} {r['route']:15s}: {r['status']}, {r['iterations']} iterations, {r['factorizations']} "
          f"factorizations, objective {r['objective']:.10g}, IPOPT {r['ipopt_s']:.2f} s "
          f"({r['ipopt_s_per_iteration']:.3f} s/iteration), end to end {r['end_to_end_s']:.2f} s "
          f"({time.perf_counter() - started:.0f} s so far)", flush=True)


def markdown(report: dict) -> str:
    lines = ["# Solvers on every shipped problem (`trajopt bench solvers`)", "",
             f"Command: `{report['command']}`. Problems in this run: "
             + ", ".join(f"`{p}` ({report['problems'][p]['description']}; `{report['problems'][p]['command']}`)"
                         for p in report["problems"]) + ". Not in this run: "
             + (", ".join(f"`{p}`" for p in report["not_run"]) or "none") + ". "
             f"Load average (1 min) {report['loadavg_before'][0]:.1f} before, {report['loadavg_after'][0]:.1f} after; "
             f"{report['cpu_count']} cores.", "",
             "Today: the command's own settings. Tight optimum: today's settings at tolerance 1e-8. Same optimum: at "
             f"most {SAME_OPTIMUM:g} (relative) below the tight optimum and no farther above it than today's settings "
             f"plus {SAME_OPTIMUM:g}. Factorizations: IPOPT's trial factorizations (its output file at level 6); mesh "
             "continuation: both solves, full-mesh equivalents in brackets (a half-mesh factorization counted as "
             "half). s/iteration: IPOPT seconds per iteration. End to end: transcription, NLP construction (not "
             "compiled, as the commands) and IPOPT.", "",
             "| problem | route | status | iterations | factorizations | per iteration | objective | vs tight optimum "
             "(rel) | constraint violation | same optimum | IPOPT s | s/iteration | end to end s |",
             "|---" * 13 + "|"]
    descriptions = {"tight": "tight optimum (today's at tolerance 1e-8)", "today": "today's settings",
                    **{name: route.description for name, route in ROUTES.items()}}
    for problem in report["problems"]:
        for r in report["runs"]:
            if r["problem"] != problem:
                continue
            count = str(r["factorizations"])
            if r["full_mesh_factorizations"] != r["factorizations"]:
                count += f" ({r['full_mesh_factorizations']:.0f})"
            same = "–" if r["route"] == "tight" else verdict(r)
            violation = "–" if r["constraint_violation"] is None else f"{r['constraint_violation']:.1e}"
            lines.append(f"| {problem} | {descriptions[r['route']]} (`{r['route']}`) | {r['status']} | "
                         f"{r['iterations']} | {count} | {r['factorizations_per_iteration']:.2f} | "
                         f"{r['objective']:.10g} | {r['relative_above_tight_optimum']:+.1e} | {violation} | {same} | "
                         f"{r['ipopt_s']:.2f} | {r['ipopt_s_per_iteration']:.3f} | {r['end_to_end_s']:.2f} |")
        for name, why in report["problems"][problem]["skipped"].items():
            lines.append(f"| {problem} | {descriptions[name]} (`{name}`) | skipped: {why} | | | | | | | | | | |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench solvers", description=description(__doc__))
    names = list(cases(50, 25))
    parser.add_argument("--problems", nargs="+", choices=names, default=names, metavar="PROBLEM",
                        help="problems to solve (default all: " + " ".join(names) + ")")
    parser.add_argument("--routes", nargs="+", choices=list(ROUTES), default=list(ROUTES), metavar="ROUTE",
                        help="routes to measure (default all: " + " ".join(ROUTES) + "); today's settings and the "
                             "tight optimum always")
    parser.add_argument("--gait2d-intervals", type=integer_at_least(4), default=50, metavar="N",
                        help="mesh intervals of the gait2d problems (default 50, the command's)")
    parser.add_argument("--walk3d-intervals", type=integer_at_least(4), default=25, metavar="N",
                        help="mesh intervals of the walk3d prediction (default 25)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "solvers")  # the report file inside the --out folder
    chosen = cases(args.gait2d_intervals, args.walk3d_intervals)
    routes = [name for name in ROUTES if name in args.routes]
    loadavg_before, started = os.getloadavg(), time.perf_counter()
    runs, problems = [], {}
    for problem in [name for name in names if name in args.problems]:
        case = chosen[problem]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the model files' notes, printed by their commands
            prepared = case.prepare(case.intervals)
        skipped = {name: why for name in routes if (why := skip_reason(case, name)) is not None}
        problems[problem] = {"description": case.description, "command": case.command,
                             "intervals": prepared.intervals, "today": case.route.value, "skipped": skipped}
        measured = []
        for name, tight in [(None, True), (None, False), *[(n, False) for n in routes if n not in skipped]]:
            measured.append(run(case, prepared, problem, name, tight))
            progress(measured[-1], started)
        tight = measured[0]
        today = measured[1]
        runs += [{**place(r, tight, today), "tight_success": tight["success"],
                  "tight_constraint_violation": tight["constraint_violation"]} for r in measured]
    report = {"benchmark": "every shipped optimal-control problem under today's settings and each solver route",
              "command": "trajopt bench solvers" + "".join(
                  f" --{option} {' '.join(map(str, value))}" for option, value, default in (
                      ("problems", args.problems, names), ("routes", args.routes, list(ROUTES)))
                  if list(value) != default) + "".join(
                  f" --{option} {value}" for option, value, default in (
                      ("gait2d-intervals", args.gait2d_intervals, 50), ("walk3d-intervals", args.walk3d_intervals, 25))
                  if value != default),
              "same_optimum_relative": SAME_OPTIMUM, "limited_memory_iterations": LIMITED_MEMORY_ITERATIONS,
              "problems": problems, "not_run": [name for name in names if name not in problems],
              "routes": {name: route.description for name, route in ROUTES.items() if name in routes},
              "runs": runs, "loadavg_before": loadavg_before, "loadavg_after": os.getloadavg(),
              "cpu_count": os.cpu_count(), "seconds": time.perf_counter() - started}
    path = write_report(args.out, report)
    table = Path(path).with_suffix(".md")
    table.write_text(markdown(report))
    print(f"wrote {path} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
