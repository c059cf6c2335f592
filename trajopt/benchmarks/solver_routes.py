"""Benchmark ``trajopt bench solver-routes``: routes to a faster solve of the 2D gait prediction, measured in one run.

The shipped gait2d prediction (trajopt/examples/gait2d: Moco's example2DWalking at 1.2 m/s from the reference guess,
Hermite-Simpson, midpoint controls free, compiled NLP functions, MUMPS, objective scaled by 100, tolerance 1e-4) is
solved under today's settings and under each route; per run: status, iterations, factorizations (IPOPT's own count,
"Number of trial factorizations performed", read from its output file at file level 6), factorizations per
iteration, IPOPT seconds, process CPU seconds, end-to-end seconds (problem build + transcription + NLP construction
from the compiled cache + IPOPT) and the objective. The routes:

- **one factorization per iteration**: IPOPT always factors the unperturbed KKT matrix first and, when its inertia is
  wrong, factors again with a Hessian shift; the routes are IPOPT's inertia-free curvature test
  (``neg_curv_test_tol``, with and without its primal regularization), constraint regularization always on
  (``perturb_always_cd``), the first shift (``first_hessian_perturbation``), and a convexified Hessian: the
  objective's Hessian alone (Gauss-Newton-type: the constraints' curvature left out) and IPOPT's limited-memory
  quasi-Newton Hessian (both capped at 200 iterations);
- **fewer iterations**: the adaptive barrier (``mu_strategy adaptive``, never-monotone globalization), and mesh
  continuation (solve on half the mesh, interpolate the solution onto the full mesh as the guess, solve again with
  the initial barrier parameter 1e-3 since the guess is near the optimum; both solves counted);
- **the stage structure**: fatrop (casadi's multi-stage interior-point solver) against IPOPT on a reduced problem
  written stage by stage (a cart-pole swing-up, RK4 multiple shooting, each stage x_{k+1} = F(x_k, u_k)), since
  the gait problem is not yet declared stage by stage (its end couplings would have to be rewritten).

**Which optimum.** At tolerance 1e-4 IPOPT stops some 1e-4 above the optimum, at a point that depends on the path,
so each mesh is also solved with today's settings at tolerance 1e-8 (the *tight optimum*). A run reaches *the same
optimum* when its objective is at most 1e-6 (relative) below the tight optimum and no farther above it than
today's settings' stop plus 1e-6 (relative). A route *wins* when it converges at every mesh, reaches the same
optimum, and needs at least 10 % fewer factorizations (a coarse mesh's counted as full-mesh equivalents, in
proportion to its intervals: a factorization's cost is linear in the mesh) and 10 % less CPU time than today's
settings at every mesh. The load average is
recorded: wall times on a shared machine are rough, iterations, factorizations and objectives are not. Writes
./trajopt_results/benchmarks/solver_routes.json (or --out) and a markdown table next to it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import tempfile
import time
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.benchmarks.solve_log import continuation_counts, logged, logged_solver, timed_solve
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_intervals, add_report_out, report_file
from trajopt.examples.gait2d.main import (COARSE_MESH_OPTIONS, PREDICTION_OBJECTIVE_SCALING, SolverRoute,
                                          solver_settings)
from trajopt.examples.gait2d.model import GaitModel
from trajopt.examples.gait2d.prediction import build_problem
from trajopt.model.io.output import write_report
from trajopt.core.ocp import HermiteSimpson, Hessian, Ipopt
from trajopt.core.ocp.compiled import compiled_nlp

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = ('solver routes on the gait2d prediction: factorizations per iteration, iterations, mesh continuation, '
               'fatrop on a stage-wise problem')

SAME_OPTIMUM = 1e-6  # relative
TIGHT = {"tol": 1e-8, "constr_viol_tol": 1e-8}
ADAPTIVE = {"mu_strategy": "adaptive", "adaptive_mu_globalization": "never-monotone-mode"}
# The objective-only and quasi-Newton Hessians converge linearly at best: capped (both exceed 400 iterations).
CAPPED_ITERATIONS = 200

# name -> (description, IPOPT options added to the gait2d settings, kind); the first is today's settings.
ROUTES = {
    "default": ("today's settings (exact Hessian, monotone barrier)", {}, "ipopt"),
    "default-unlogged": ("today's settings without the output file (the counting's cost)", {}, "unlogged"),
    "curvature-test": ("inertia-free curvature test (neg_curv_test_tol 1e-12)", {"neg_curv_test_tol": 1e-12},
                       "ipopt"),
    "curvature-test-no-reg": ("inertia-free curvature test without its regularization (neg_curv_test_reg no)",
                              {"neg_curv_test_tol": 1e-12, "neg_curv_test_reg": "no"}, "ipopt"),
    "perturb-always-cd": ("constraint regularization always (perturb_always_cd yes)", {"perturb_always_cd": "yes"},
                          "ipopt"),
    "first-perturbation": ("first Hessian shift 1e-2 (first_hessian_perturbation)",
                           {"first_hessian_perturbation": 1e-2}, "ipopt"),
    "gauss-newton": ("objective Hessian only (constraint curvature left out)", {}, "gauss-newton"),
    "limited-memory": ("limited-memory quasi-Newton Hessian", {}, "limited-memory"),
    "adaptive": ("adaptive barrier, never-monotone (mu_strategy adaptive)", ADAPTIVE, "ipopt"),
    "continuation": ("mesh continuation: half mesh, then the full mesh from its solution with mu_init 1e-3", {},
                     "continuation"),
    "continuation-adaptive": ("mesh continuation, the half mesh with the adaptive barrier (gait2d's "
                              "`--solver mesh-continuation`)", {}, "continuation-adaptive"),
}
# A win needs at least this much fewer full-mesh factorizations and CPU seconds than today's settings at every mesh.
MARGIN = 0.1


def objective_hessian_only(hessian):
    """The NLP's Lagrangian-Hessian Function with the constraint multipliers set to zero: the objective's Hessian
    (times lam_f), a convex Hessian for an effort objective."""
    symbols = [ca.MX.sym(name, hessian.sparsity_in(i)) for i, name in enumerate(("x", "p", "lam_f", "lam_g"))]
    x, p, lam_f, lam_g = symbols
    return ca.Function("nlp_hess_l_objective", symbols, [hessian(x, p, lam_f, ca.MX.zeros(lam_g.sparsity()))],
                       ["x", "p", "lam_f", "lam_g"], ["triu_hess_gamma_x_x"])


def gauss_newton_settings(base):
    """``base`` (trajopt.Ipopt) whose NLP Hessian is the objective's alone (a subclass overriding ``nlpsol``)."""
    @dataclasses.dataclass(frozen=True)
    class ObjectiveHessianIpopt(Ipopt):
        def nlpsol(self, discrete, warm: bool = False):
            compiled = compiled_nlp(discrete, hessian=True)
            if compiled is not None:
                nlp, extra = compiled.nlpsol_problem()
            else:
                nlp, extra = discrete.nlp, {**discrete.derivative_functions(hessian=True), "expand": False}
            extra["hess_lag"] = objective_hessian_only(extra["hess_lag"])
            return ca.nlpsol("trajopt", "ipopt", nlp, {**self.nlpsol_options(warm), **extra})

    return ObjectiveHessianIpopt(**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)})


def settings_for(kind: str, options: dict, log: Path | None, tolerance_options: dict | None = None):
    """The gait2d prediction's settings with ``options`` (and IPOPT's output file ``log`` at level 6)."""
    base = solver_settings(0, 1000, objective_scaling=PREDICTION_OBJECTIVE_SCALING, compiled=True)
    settings = logged(dataclasses.replace(base, options={**base.options, **options, **(tolerance_options or {})}),
                      log)
    if kind == "limited-memory":
        return dataclasses.replace(settings, hessian=Hessian.LIMITED_MEMORY, max_iterations=CAPPED_ITERATIONS)
    if kind == "gauss-newton":
        return gauss_newton_settings(dataclasses.replace(settings, max_iterations=CAPPED_ITERATIONS))
    return settings


def one_solve(model, intervals: int, settings, guess=None, log: Path | None = None) -> tuple:
    """(solution, record) of one gait2d prediction: build, transcription, NLP construction and IPOPT timed."""
    def solve():
        gait = build_problem(intervals, 1.2, model=model)
        return gait.problem.solve(HermiteSimpson(intervals), settings,
                                  guess=gait.reference_guess() if guess is None else guess)

    return timed_solve(solve, log)


def continuation_solver(kind: str, fine_log: Path, coarse_log: Path):
    """The mesh-continuation solver of the route (gait2d's own for "continuation-adaptive"), each stage writing
    IPOPT's output file of its own."""
    return logged_solver(settings_for("ipopt", {}, None), SolverRoute.MESH_CONTINUATION, fine_log, coarse_log,
                         COARSE_MESH_OPTIONS if kind == "continuation-adaptive" else None)


def run_route(model, name: str, intervals: int, tolerance_options: dict | None = None) -> dict:
    """One route on one mesh; mesh continuation counts both of its solves (its coarse factorizations also as
    full-mesh equivalents: a factorization's cost is linear in the mesh)."""
    _, options, kind = ROUTES[name]
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as folder:
        log = None if kind == "unlogged" else Path(folder) / "ipopt.log"
        if not kind.startswith("continuation"):
            _, record = one_solve(model, intervals, settings_for(kind, options, log, tolerance_options), log=log)
            record["full_mesh_factorizations"] = record["factorizations"]
        else:
            coarse_log = Path(folder) / "coarse.log"
            _, record = one_solve(model, intervals, continuation_solver(kind, log, coarse_log))
            record = continuation_counts(record, coarse_log, log, intervals, intervals // 2)
    record["factorizations_per_iteration"] = (None if record["factorizations"] is None else
                                              record["factorizations"] / max(record["iterations"], 1))
    return {"route": name, "intervals": intervals, **record, "loadavg": load}


def place(run: dict, tight: dict, default: dict) -> dict:
    """``run`` against the tight optimum and today's settings' run on the same mesh."""
    scale = abs(tight["objective"])
    above = (run["objective"] - tight["objective"]) / scale
    default_above = (default["objective"] - tight["objective"]) / scale
    same = bool(run["success"] and tight["success"] and -SAME_OPTIMUM <= above <= default_above + SAME_OPTIMUM)
    return {**run, "relative_above_tight_optimum": above,
            "relative_difference_from_default": (run["objective"] - default["objective"]) / abs(default["objective"]),
            "same_optimum": same}


def verdicts(placed: list[dict], routes: list[str], intervals: list[int]) -> dict:
    """Per route: whether it wins (converges and reaches the same optimum at every mesh with fewer factorizations
    and less CPU time than today's settings)."""
    by = {(r["route"], r["intervals"]): r for r in placed}
    result = {}
    for name in routes:
        if name in ("default", "default-unlogged"):
            continue
        runs = [(by[(name, n)], by[("default", n)]) for n in intervals]
        result[name] = {
            "converged_everywhere": all(r["success"] for r, _ in runs),
            "same_optimum_everywhere": all(r["same_optimum"] for r, _ in runs),
            "fewer_factorizations_everywhere": all(
                r["full_mesh_factorizations"] is not None and
                r["full_mesh_factorizations"] <= (1 - MARGIN) * d["full_mesh_factorizations"] for r, d in runs),
            "less_cpu_everywhere": all(r["cpu_s"] <= (1 - MARGIN) * d["cpu_s"] for r, d in runs)}
        result[name]["wins"] = all(result[name].values())
    return result


def cart_pole(intervals: int, solver: str) -> dict:
    """A cart-pole swing-up (fixed 2 s, effort objective, RK4 multiple shooting, stage-wise constraint order) with
    ``solver`` ("ipopt" or "fatrop", casadi.Opti, tolerance 1e-8): objective, iterations, seconds of
    ``Opti.solve`` (structure detection and construction included)."""
    x, u = ca.MX.sym("x", 4), ca.MX.sym("u")
    cart, pole, length, g = 1.0, 0.3, 0.5, 9.81
    angle, rate = x[1], x[3]
    denominator = cart + pole * ca.sin(angle) ** 2
    cart_acceleration = (u + pole * ca.sin(angle) * (length * rate ** 2 + g * ca.cos(angle))) / denominator
    angular_acceleration = -(u * ca.cos(angle) + pole * length * rate ** 2 * ca.cos(angle) * ca.sin(angle)
                             + (cart + pole) * g * ca.sin(angle)) / (length * denominator)
    f = ca.Function("f", [x, u], [ca.vertcat(x[2], x[3], cart_acceleration, angular_acceleration)])
    h = 2.0 / intervals
    k1 = f(x, u)
    k2 = f(x + h / 2 * k1, u)
    k3 = f(x + h / 2 * k2, u)
    k4 = f(x + h * k3, u)
    step = ca.Function("step", [x, u], [x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)]).expand()
    opti = ca.Opti()
    states, controls = [], []
    for _ in range(intervals):  # declared stage by stage: fatrop's structure detection reads the order
        states.append(opti.variable(4))
        controls.append(opti.variable())
    states.append(opti.variable(4))
    cost = 0
    for k in range(intervals):
        opti.subject_to(states[k + 1] == step(states[k], controls[k]))
        if k == 0:
            opti.subject_to(states[0] == 0)
        opti.subject_to(opti.bounded(-20, controls[k], 20))
        opti.subject_to(opti.bounded(-2, states[k][0], 2))
        cost += h * controls[k] ** 2
    opti.subject_to(states[-1] == ca.vertcat(1, np.pi, 0, 0))
    opti.minimize(cost)
    for k, state in enumerate(states):
        opti.set_initial(state, ca.vertcat(k / intervals, np.pi * k / intervals, 0, 0))
    if solver == "fatrop":
        opti.solver("fatrop", {"structure_detection": "auto", "expand": True, "print_time": False,
                               "fatrop": {"print_level": 0, "tol": 1e-8}})
    else:
        opti.solver("ipopt", {"expand": True, "print_time": False,
                              "ipopt": {"print_level": 0, "sb": "yes", "tol": 1e-8}})
    started = time.perf_counter()
    record = {"problem": "cart-pole swing-up", "solver": solver, "intervals": intervals, "loadavg": os.getloadavg()[0]}
    try:
        solution = opti.solve()
    except RuntimeError as error:  # a failed solve or a structure fatrop cannot handle: recorded, not fatal
        return {**record, "success": False, "iterations": -1, "objective": float("nan"),
                "solve_s": time.perf_counter() - started, "error": str(error).splitlines()[-1][:300]}
    stats = solution.stats()
    return {**record, "success": bool(stats.get("success", False)), "iterations": int(stats.get("iter_count", -1)),
            "objective": float(solution.value(cost)), "solve_s": time.perf_counter() - started}


def markdown(placed: list[dict], tight: list[dict], verdict: dict, stagewise: list[dict]) -> str:
    optima = ", ".join(f"{t['objective']:.10f} ({t['intervals']} intervals, {t['iterations']} iterations)"
                       for t in tight)
    lines = ["# Solver routes on the 2D gait prediction (`trajopt bench solver-routes`)", "",
             "Moco's example2DWalking at 1.2 m/s from the reference guess (compiled NLP functions, MUMPS, tolerance "
             f"1e-4, objective scaled by 100). Tight optimum (today's settings at tolerance 1e-8): {optima}. "
             f"Same optimum: at most {SAME_OPTIMUM:g} (relative) below the tight optimum and no farther above it "
             f"than today's settings plus {SAME_OPTIMUM:g}. Factorizations: IPOPT's trial factorizations (its output "
             "file at level 6). Mesh continuation: both solves summed (half mesh, then the full mesh); full-mesh "
             "equivalents count a half-mesh factorization as half. "
             "CPU: process seconds of build + solve; wall times from a shared machine (load average in the JSON).",
             "", "| route | intervals | status | iterations | factorizations | full-mesh equivalents | per iteration | "
             "IPOPT s | CPU s | "
             "end to end s | objective | above tight optimum (rel) | vs today (rel) | same optimum |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in placed:
        per = "–" if r["factorizations_per_iteration"] is None else f"{r['factorizations_per_iteration']:.2f}"
        count = "–" if r["factorizations"] is None else str(r["factorizations"])
        equivalents = "–" if r["full_mesh_factorizations"] is None else f"{r['full_mesh_factorizations']:.0f}"
        lines.append(f"| {ROUTES[r['route']][0]} (`{r['route']}`) | {r['intervals']} | {r['status']} | "
                     f"{r['iterations']} | {count} | {equivalents} | {per} | {r['ipopt_s']:.2f} | {r['cpu_s']:.2f} | "
                     f"{r['end_to_end_s']:.2f} | {r['objective']:.10f} | {r['relative_above_tight_optimum']:+.1e} | "
                     f"{r['relative_difference_from_default']:+.1e} | {'yes' if r['same_optimum'] else 'no'} |")
    winners = [name for name, v in verdict.items() if v["wins"]]
    lines += ["", f"Wins (converged, same optimum, at least {MARGIN:.0%} fewer full-mesh factorizations and "
              f"{MARGIN:.0%} less CPU than today's settings at every mesh): "
              f"{', '.join(f'`{w}`' for w in winners) or 'none'}.", ""]
    if stagewise:
        lines += ["## fatrop vs IPOPT on a stage-wise problem", "",
                  "The gait prediction is not declared stage by stage, so fatrop is measured on a cart-pole swing-up "
                  "(RK4 multiple shooting, casadi.Opti, tolerance 1e-8; seconds of `Opti.solve`, fatrop's structure "
                  "detection included).", "",
                  "| solver | intervals | success | iterations | objective | seconds |", "|---|---|---|---|---|---|"]
        lines += [f"| {r['solver']} | {r['intervals']} | {r['success']} | {r['iterations']} | {r['objective']:.10f} "
                  f"| {r['solve_s']:.2f} |" for r in stagewise]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench solver-routes", description=description(__doc__))
    add_intervals(parser, [25, 50], sweep=True)  # gait2d meshes
    parser.add_argument("--routes", nargs="+", choices=list(ROUTES), default=list(ROUTES), metavar="ROUTE",
                        help="routes to measure (default all: " + "; ".join(ROUTES) + "); today's settings always")
    parser.add_argument("--stagewise-intervals", type=int, nargs="*", default=[100, 400],
                        help="cart-pole meshes for fatrop vs IPOPT (default 100 400; none to skip)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "solver_routes")  # the report file inside the --out folder
    if min(args.intervals) < 4:
        parser.error(f"need --intervals >= 4, got {min(args.intervals)}")
    model = GaitModel.load()
    names = ["default", *[n for n in args.routes if n != "default"]]
    started = time.perf_counter()
    for n in args.intervals:  # compile (or load) each mesh's NLP functions before anything is timed
        run_route(model, "default-unlogged", n)
        if any(n_ in names for n_ in ("continuation", "continuation-adaptive")):
            run_route(model, "default-unlogged", n // 2)
    tight = [{**run_route(model, "default", n, TIGHT), "route": "tight"} for n in args.intervals]
    runs = []
    for name in names:
        for n in args.intervals:
            run = run_route(model, name, n)
            runs.append(run)
            print(f"{name:24s} {n:4d}: {run['status']}, {run['iterations']} iterations, {run['factorizations']} "
                  f"factorizations, IPOPT {run['ipopt_s']:.2f} s, CPU {run['cpu_s']:.2f} s, objective "
                  f"{run['objective']:.10f} ({time.perf_counter() - started:.0f} s so far)", flush=True)
    by_mesh = {t["intervals"]: t for t in tight}
    defaults = {r["intervals"]: r for r in runs if r["route"] == "default"}
    placed = [place(r, by_mesh[r["intervals"]], defaults[r["intervals"]]) for r in runs]
    verdict = verdicts(placed, names, args.intervals)
    stagewise = [cart_pole(n, solver) for n in args.stagewise_intervals for solver in ("ipopt", "fatrop")]
    report = {"benchmark": "solver routes on the gait2d prediction; fatrop vs IPOPT on a stage-wise problem",
              "same_optimum_relative": SAME_OPTIMUM, "intervals": args.intervals, "tight": tight, "runs": placed,
              "verdicts": verdict, "winners": [name for name, v in verdict.items() if v["wins"]],
              "stagewise": stagewise, "cpu_count": os.cpu_count()}
    path = write_report(args.out, report)
    table = Path(path).with_suffix(".md")
    table.write_text(markdown(placed, tight, verdict, stagewise))
    print(f"wrote {path} and {table}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
