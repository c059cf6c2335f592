"""``trajopt run shoulder-reaching``: the 3D-arm reach in quaternion and in YZY Euler shoulder coordinates.

Solves each from the naive guess and warm-started from a coarse-mesh solution, checks the solutions
(quaternion norm, torque identity of Zoufaly et al. eqs. 4-16, distance from gimbal lock, KKT condition,
forward re-simulation) and writes ``./trajopt_results/shoulder-reaching/`` (``--out`` another folder)
(summary.md, summary.json, .sto, figures, GIF).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_animate, add_intervals, add_out, add_print_level
from trajopt.examples.shoulder_reaching.reaching import (DURATION, RESIDUAL_WEIGHT, ReachingProblem, build_problem,
                                                         naive_guess, solve_naive_and_warm, solver, start_configuration)
from trajopt.model.io.output import fresh_output
from trajopt.core.multibody import forward_dynamics, mass_matrix
from trajopt.core.ocp import HermiteSimpson
from trajopt.core.ocp.interrupts import SolveInterrupted, interrupted_during
from trajopt.studies.prediction import resimulate
from trajopt.examples.shoulder_reaching import analysis, outputs

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = '3D arm reach from gimbal lock: quaternion vs YZY Euler shoulder'



def describe(built: ReachingProblem, solution, kkt: bool = False) -> dict:
    """Numbers of one solve (see summary.md for their meaning)."""
    arm = built.model
    q = solution.value(built.q)
    hand = np.asarray(solution.value(built.problem.final(built.hand_position()))).ravel()
    out = {"status": solution.status, "success": bool(solution.success), "iterations": int(solution.iterations),
           "objective": float(solution.objective), "ipopt_seconds": float(solution.wall_time),
           "intervals": int(solution.discrete.transcription.intervals),
           "worst_constraint": solution.worst_constraint,
           "final_hand_error_m": float(np.linalg.norm(hand - built.target)),
           "max_abs_residual_control": float(np.max(np.abs(solution.value(built.residuals)))),
           "min_abs_sin_yzy_middle_angle": float(np.min(np.abs(np.sin(analysis.yzy_middle_angle(arm, q))))),
           "min_abs_sin_yzy_middle_angle_after_start":
               float(np.min(np.abs(np.sin(analysis.yzy_middle_angle(arm, q)[1:])))),
           "path_domain": built.path_domain_report(solution).to_json()}
    drift = None
    if np.all(np.isfinite(np.asarray(forward_dynamics(arm.multibody, q[:, 0], np.zeros(arm.multibody.nv),
                                                           np.zeros(arm.multibody.nv))))):
        drift = resimulate(built, solution)
        out["max_resimulation_drift"] = drift.max_drift
        out["worst_drift"] = drift.worst()
        out.update(analysis.interval_resimulation_error(built, solution))
    else:
        out["max_resimulation_drift"] = float("nan")
        out["worst_drift"] = "not possible: forward dynamics is NaN at the start (singular mass matrix at gimbal lock)"
    if arm.euler_sequence is None:
        out["max_quaternion_norm_error"] = analysis.quaternion_norm_error(arm, q)
        if drift is not None:
            out["max_quaternion_norm_error_resimulated"] = analysis.quaternion_norm_error(
                arm, drift.simulated_states[0:arm.multibody.nq])
        forces = solution.value(built.tendon_forces)
        out["torque_identity"] = analysis.torque_identity_error(arm, analysis.normalized(q), forces)
        out["torque_identity_unnormalized_grid"] = analysis.torque_identity_error(arm, q, forces)
    else:
        residuals = solution.value(built.residuals)
        spatial = residuals[0:3] if built.residuals_in_humerus_axes else \
            analysis.euler_residuals_as_spatial_torques(arm, q, residuals)
        finite = np.all(np.isfinite(spatial), axis=0)
        out["shoulder_residual_as_humerus_torque_max_Nm"] = float(np.max(np.abs(spatial[:, finite])))
        out["nodes_where_euler_rate_map_singular"] = int(np.sum(~finite))
        out["start_mass_matrix_condition"] = float(np.linalg.cond(np.array(mass_matrix(arm.multibody, q[:, 0]))))
    if kkt:
        out.update(analysis.kkt_condition_number(solution))
    return out


def _progress(text: str) -> None:
    print(f"shoulder-reaching: {text}", flush=True)


def _status(name: str, solution) -> str:
    """One finished solve for the "interrupted" line: its name, IPOPT status and iterations."""
    return f"{name} {solution.status} ({solution.iterations} iterations)"


def _run(name, build, intervals, coarse_intervals, folder, kkt, finished: list[str], print_level=0):
    """Solve one shoulder variant three ways and check the solutions; each finished solve is added to ``finished``
    (what a Ctrl-C in the checks reports, with the check it stopped)."""
    _progress(f"{name}: {intervals} intervals from the naive guess, {coarse_intervals} intervals, and "
              f"{intervals} warm-started ...")
    with interrupted_during(f"building and solving the {name} problem", ", ".join(finished)):
        try:
            built = build()
            started = time.perf_counter()
            naive, warm, coarse = solve_naive_and_warm(built, intervals, coarse_intervals, print_level=print_level)
        except SolveInterrupted as interrupt:
            interrupt.context = f"a {name} solve" + (f"; finished before it: {', '.join(finished)}" if finished else "")
            raise
    finished += [_status(f"{name} {kind}", solution)
                 for kind, solution in (("naive", naive), ("warm", warm), ("coarse", coarse))]
    checks = "re-simulation, KKT condition number (a dense SVD)" if kkt else "re-simulation"
    with interrupted_during(f"the checks of the {name} solutions ({checks}); nothing of them written",
                            ", ".join(finished)):
        _progress(f"{name}: checks of the three solutions ({checks}) ...")
        report = {"naive": describe(built, naive, kkt), "warm": describe(built, warm),
                  "coarse": describe(built, coarse), "total_seconds": time.perf_counter() - started}
    outputs.write_solution(built, naive, folder / name)
    print(f"{name}: naive {naive}\n{name}: warm {warm}", flush=True)
    return built, naive, report


def _markdown(report: dict) -> str:
    q, e = report["quaternion"], report["euler_yzy"]
    rows = [("status (naive guess)", "status"), ("iterations (naive guess)", "iterations"),
            ("objective", "objective"), ("IPOPT seconds", "ipopt_seconds"),
            ("final hand error (m)", "final_hand_error_m"),
            ("max |residual control|", "max_abs_residual_control"),
            ("min |sin θ2| (YZY middle angle)", "min_abs_sin_yzy_middle_angle"),
            ("min |sin θ2| after t = 0", "min_abs_sin_yzy_middle_angle_after_start"),
            ("KKT condition number", "kkt_condition_number"), ("KKT size", "kkt_size"),
            ("max forward re-simulation drift", "max_resimulation_drift")]
    lines = ["# Shoulder reaching: quaternion vs YZY Euler shoulder", "",
             "Generated by `trajopt run shoulder-reaching` (trajopt/examples/shoulder_reaching). "
             "Reach from rest with the arm",
             "hanging (the YZY gimbal-lock pose) to rest with the hand at a target forward and to the side,",
             f"{report['duration_s']} s, minimize ∫Σe² + {report['residual_weight']} ∫Σr², Hermite-Simpson "
             f"{q['naive']['intervals']} intervals, IPOPT tol 1e-6.", "",
             "| | quaternion | YZY Euler |", "|---|---|---|"]
    for label, key in rows:
        def cell(d):
            v = d["naive"].get(key, "")
            return f"{v:.4g}" if isinstance(v, float) else str(v)
        lines.append(f"| {label} | {cell(q)} | {cell(e)} |")
    for kind in ("warm",):
        lines.append(f"| status / iterations ({kind} start from {report['coarse_intervals']} intervals) | "
                     f"{q[kind]['status']} / {q[kind]['iterations']} | {e[kind]['status']} / {e[kind]['iterations']} |")
    ti = q["naive"]["torque_identity"]
    lines += ["", "## Quaternion solution",
              f"- max |‖Q‖ - 1| on the grid: {q['naive']['max_quaternion_norm_error']:.3g} (warm start: "
              f"{q['warm']['max_quaternion_norm_error']:.3g}); along the forward re-simulation: "
              f"{q['naive'].get('max_quaternion_norm_error_resimulated', float('nan')):.3g}",
              f"- shoulder muscle torque, max |τ(½ G R_Q, eq. 4) - τ(spatial moment arms)| = "
              f"{ti['eq4_quaternion_vs_spatial']:.3g} N·m, max |τ((Eᵀ)⁻¹ R_Q*, eq. 15) - τ(spatial)| = "
              f"{ti['eq15_constrained_vs_spatial']:.3g} N·m (torques up to {ti['max_torque']:.3g} N·m), at the "
              f"solution's orientations Q/‖Q‖ and tendon forces; at the raw grid values (‖Q‖ ≠ 1 by the norm error "
              f"above, where eq. 4 does not apply exactly): "
              f"{q['naive']['torque_identity_unnormalized_grid']['eq4_quaternion_vs_spatial']:.3g} N·m",
              f"- forward re-simulation drift: {q['naive']['max_resimulation_drift']:.3g} "
              f"({q['naive']['worst_drift']}); "
              f"warm start: {q['warm']['max_resimulation_drift']:.3g}; re-started at every mesh point, the largest "
              f"error at an interval end is {q['naive']['max_interval_error']:.3g} ({q['naive']['worst_interval']})",
              "", "## YZY Euler solution",
              f"- objective {e['naive']['objective'] / q['naive']['objective']:.3g} times the quaternion one. "
              "Its residuals"
              " are generalized forces of the Euler angles, r_E = Jᵀ τ: near θ2 = 0, where J is singular, a small"
              " (cheap) r_E stands for a large humerus torque, and the solution lingers near gimbal lock leaning on"
              " them instead of muscles:",
              f"- shoulder residual forces in Euler coordinates, mapped to humerus-axes torques (Jᵀ)⁻¹ r_E: up to "
              f"{e['naive']['shoulder_residual_as_humerus_torque_max_Nm']:.3g} N·m away from the singular nodes "
              f"(infinite at {e['naive']['nodes_where_euler_rate_map_singular']} node(s)); the quaternion solution's "
              f"residuals stay below {q['naive']['max_abs_residual_control']:.2g} N·m",
              f"- mass matrix condition number at the start: {e['naive']['start_mass_matrix_condition']:.3g}; "
              f"forward re-simulation: {e['naive']['worst_drift']}",
              f"- the same with the quaternion shoulder's residual actuators (torques about the humerus axes, "
              f"mapped by Jᵀ): {report['euler_yzy_humerus_axes_residuals']['status']} after "
              f"{report['euler_yzy_humerus_axes_residuals']['iterations']} iterations, objective "
              f"{report['euler_yzy_humerus_axes_residuals']['objective']:.4g}, KKT condition number "
              f"{report['euler_yzy_humerus_axes_residuals'].get('kkt_condition_number', float('nan')):.3g}, "
              f"min |sin θ2| after t = 0: "
              f"{report['euler_yzy_humerus_axes_residuals']['min_abs_sin_yzy_middle_angle_after_start']:.3g}",
              f"- with all three start angles pinned at 0: {report['euler_yzy_fixed_start']['status']}, "
              f"{report['euler_yzy_fixed_start']['iterations']} iterations, objective "
              f"{report['euler_yzy_fixed_start']['objective']:.4g}",
              f"- explicit dynamics (u̇ = forward dynamics) from the naive guess: YZY "
              f"{report['explicit_dynamics']['euler_yzy']['status']} (its start is singular: checked before IPOPT, "
              f"which would stop at its first NaN); quaternion "
              f"{report['explicit_dynamics']['quaternion']['status']}, "
              f"{report['explicit_dynamics']['quaternion']['iterations']} "
              f"iterations, objective {report['explicit_dynamics']['quaternion']['objective']:.4g}",
              "", "Files the command writes: `*/solution.sto`, `*/solution.png`, `comparison.png`,",
              "`torque_identity.png`, `arm.gif` (with --animate), `summary.json` (all numbers, also for the warm and "
              "coarse solves)."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run shoulder-reaching", description=description(__doc__))
    add_intervals(parser, 40)
    parser.add_argument("--coarse-intervals", type=int, default=20,
                        help="intervals of the coarse solve that warm-starts the second solve (default 20)")
    add_out(parser, "shoulder-reaching")
    parser.add_argument("--no-kkt", action="store_true", help="skip the KKT condition numbers (dense SVD)")
    add_animate(parser, "arm.gif")
    parser.add_argument("--no-animation", dest="animate", action="store_false", help=argparse.SUPPRESS)
    add_print_level(parser, 5)
    args = parser.parse_args(argv)
    if args.intervals < 2 or args.coarse_intervals < 2:
        parser.exit(2, f"{parser.prog}: error: --intervals and --coarse-intervals must be >= 2\n")
    out = fresh_output(args.out)
    kkt = not args.no_kkt
    level = args.print_level
    finished = []  # the solves done so far, for the "interrupted" line of a Ctrl-C in the checks
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy's gimbal-lock warning while converting the Euler guess
        qb, qs, quaternion = _run("quaternion", lambda: build_problem(None), args.intervals, args.coarse_intervals, out,
                                  kkt, finished, level)
        eb, es, euler = _run("euler_yzy", lambda: build_problem("YZY"), args.intervals, args.coarse_intervals, out,
                             kkt, finished, level)
        _progress("YZY Euler with the start pose moved off gimbal lock ...")
        fixed_built = build_problem("YZY", fix_euler_start=True)
        fixed = fixed_built.problem.solve(HermiteSimpson(args.intervals), solver(print_level=level),
                                          guess=naive_guess(fixed_built))
        finished.append(_status("euler_yzy fixed start", fixed))
        _progress("YZY Euler with residuals in humerus axes ...")
        humerus_built = build_problem("YZY", residuals_in_humerus_axes=True)
        humerus = humerus_built.problem.solve(HermiteSimpson(args.intervals), solver(print_level=level),
                                              guess=naive_guess(humerus_built))
        finished.append(_status("euler_yzy humerus-axes residuals", humerus))
        explicit = {}
        for name, sequence in (("quaternion", None), ("euler_yzy", "YZY")):
            _progress(f"{name} with explicit dynamics ...")
            built = build_problem(sequence, explicit_dynamics=True)
            nv = built.model.multibody.nv
            start = start_configuration(built)
            if not np.all(np.isfinite(np.asarray(forward_dynamics(built.model.multibody, start, np.zeros(nv),
                                                                   np.zeros(nv))))):
                # The YZY start is gimbal lock: the mass matrix is singular, forward dynamics (M⁻¹) is NaN there,
                # and IPOPT would stop at its first evaluation (Invalid_Number_Detected, CasADi's "NaN detected").
                condition = float(np.linalg.cond(np.array(mass_matrix(built.model.multibody, start))))
                explicit[name] = {"status": f"not solvable: forward dynamics is NaN at the start pose (mass matrix "
                                            f"condition {condition:.2g})", "success": False, "iterations": 0,
                                  "objective": float("nan")}
                _progress(f"{name} with explicit dynamics: {explicit[name]['status']}; not solved")
                continue
            solution = built.problem.solve(HermiteSimpson(args.intervals), solver(print_level=level),
                                           guess=naive_guess(built))
            explicit[name] = {"status": solution.status, "success": bool(solution.success),
                              "iterations": int(solution.iterations), "objective": float(solution.objective)}
            finished.append(_status(f"{name} explicit dynamics", solution))
    with interrupted_during("the checks of the YZY variants (re-simulation, KKT condition number); no figure or "
                            "summary written", ", ".join(finished)):
        _progress("checks (KKT, re-simulation) and figures ...")
        report = {"duration_s": DURATION, "residual_weight": RESIDUAL_WEIGHT,
                  "coarse_intervals": args.coarse_intervals, "target": qb.target.tolist(), "quaternion": quaternion,
                  "euler_yzy": euler, "euler_yzy_fixed_start": describe(fixed_built, fixed),
                  "explicit_dynamics": explicit,
                  "euler_yzy_humerus_axes_residuals": describe(humerus_built, humerus, kkt)}
    outputs.plot_comparison((qb, qs), (eb, es), out / "comparison.png")
    outputs.plot_torque_identity(qb, qs, out / "torque_identity.png")
    if args.animate:
        outputs.animate_arm(qb, qs, out / "arm.gif")
    (out / "summary.json").write_text(json.dumps(report, indent=1) + "\n")
    (out / "summary.md").write_text(_markdown(report))
    print((out / "summary.md").read_text())
    return 0
