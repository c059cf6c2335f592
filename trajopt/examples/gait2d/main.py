"""``trajopt run gait2d-prediction [--intervals N] [--speed V] [--tracking | --mirror-excitations |
--elastic-tendons]``: Moco's example2DWalking.

Solves the prediction from the reference-coordinates guess (or, with ``--tracking``, the tracking
variant) and writes to ./trajopt_results/gait2d/ (or --out): half and full stride .sto (OpenSim state/control
paths), ground
reactions .sto, figures vs Moco and the reference data, a stick-figure GIF, a forward re-simulation
drift, the OpenSim cross-check (when opensim is installed) and summary.md. ``--mirror-excitations``
also maps the excitations left<->right at the end (Moco's example leaves them free) and writes its
files with the stem ``prediction_mirror_excitations``; summary.md lists its objective and iterations.
``--elastic-tendons`` solves the prediction with compliant tendons (``ELASTIC_TENDONS``: De Groote 2016's implicit
tendon-force states, PredSim's derivative bounds and weight) and writes its files with the stem
``prediction_elastic_tendons`` (no OpenSim cross-check: 2D_gait.osim's muscles have rigid tendons).
``--solver`` picks how the prediction is solved: mesh continuation (the default: half the mesh first, its solution
the full mesh's guess; the iterations reported count both solves) or IPOPT on the full mesh from the guess.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import (add_animate, add_compiled, add_elastic_tendons, add_out, add_print_level,
                                      add_solver_route, add_tolerance)
from trajopt.model.contact import contact_record_values
from trajopt.examples.gait2d.simulate import resimulate
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.model.paths.domain_report import print_path_domain_warning
from trajopt.errors import TrajoptInputError
from trajopt.model.io.output import fresh_output
from trajopt.core.ocp import HermiteSimpson, Ipopt, MeshContinuation, SolverRoute, route_solver

from trajopt.examples.gait2d import outputs
from trajopt.examples.gait2d.model import MODEL_FILE, GaitModel
from trajopt.examples.gait2d.prediction import ELASTIC_TENDONS, build_problem, build_tracking_problem
from trajopt.studies.prediction.tendon_dynamics import RigidTendons

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = ('2D_gait.osim predictive half gait cycle (Moco example2DWalking); --tracking for the tracking variant, '
               '--elastic-tendons for compliant tendons')

MOCO_INFO = Path(__file__).resolve().parent / "moco" / "moco_walk2d_info.json"
MIRRORED_EXCITATIONS_STEM = "prediction_mirror_excitations"
ELASTIC_TENDONS_STEM = "prediction_elastic_tendons"


# The effort objective is ~0.13 and its gradient with respect to one excitation at one grid point ~1e-6:
# unscaled, IPOPT's dual-infeasibility test (tol 1e-4) stops with needless co-contraction left (objective
# 0.1511 at 50 intervals, and objectives that grow under mesh refinement: 0.143, 0.151, 0.168 for 25, 50,
# 100 intervals). Scaling the objective by 100 makes the same tolerance meaningful.
PREDICTION_OBJECTIVE_SCALING = 100.0


MOCO_TOLERANCE = 1e-4  # convergence and constraint tolerance of Moco's example


# The prediction's route: the same optimum with fewer full-mesh factorizations (`trajopt bench solver-routes`).
DEFAULT_ROUTE = SolverRoute.MESH_CONTINUATION


# The half-mesh solve of the continuation starts from the rough reference guess: the adaptive barrier takes fewer
# iterations there than the monotone one (which can stall on a coarse mesh).
COARSE_MESH_OPTIONS = {"mu_strategy": "adaptive", "adaptive_mu_globalization": "never-monotone-mode"}


def prediction_solver(settings: Ipopt, route: SolverRoute = DEFAULT_ROUTE) -> Ipopt | MeshContinuation:
    """The solver of the prediction: `settings` themselves, or mesh continuation with them (the half mesh with the
    adaptive barrier, the full mesh from its solution with a small initial barrier)."""
    return route_solver(settings, route, COARSE_MESH_OPTIONS)


def solver_settings(print_level: int = 0, max_iterations: int = 1000, objective_scaling: float = 1.0,
                    compiled: bool = False, tolerance: float = MOCO_TOLERANCE) -> Ipopt:
    """Moco's tolerances for the example (convergence and constraint tolerance 1e-4) unless `tolerance` says
    otherwise, exact Hessian; `compiled`: NLP functions compiled to C and cached (trajopt.core.ocp.compiled)."""
    return Ipopt(tol=tolerance, max_iterations=max_iterations, print_level=print_level, compiled=compiled,
                 options={"constr_viol_tol": tolerance, "obj_scaling_factor": objective_scaling})


def solve_prediction(intervals: int = 50, speed: float = 1.2, print_level: int = 0, model=None,
                     mirror_excitations: bool = False, moco_terms: bool = False, compiled: bool = False,
                     tolerance: float = MOCO_TOLERANCE, tendons=RigidTendons(), route: SolverRoute = DEFAULT_ROUTE):
    """(gait problem, solution, seconds including NLP construction) from the reference-coordinates guess.

    `moco_terms`: midpoint controls tied to the mean of the mesh points' (Moco's transcription) instead of free;
    `tolerance`: IPOPT's convergence and constraint tolerance (Moco's 1e-4 stops about 1.6e-4 above the optimum
    that 1e-8 reaches; `trajopt bench ipopt-settings`); `route`: IPOPT directly or mesh continuation.
    """
    started = time.perf_counter()
    gait = build_problem(intervals, speed, model=model, mirror_excitations=mirror_excitations, tendons=tendons)
    settings = solver_settings(print_level, objective_scaling=PREDICTION_OBJECTIVE_SCALING, compiled=compiled,
                               tolerance=tolerance)
    transcription = HermiteSimpson(intervals, interpolate_control_midpoints=moco_terms)
    solution = gait.problem.solve(transcription, prediction_solver(settings, route), guess=gait.reference_guess())
    return gait, solution, time.perf_counter() - started


def solve_tracking(intervals: int = 24, print_level: int = 0, model=None):
    started = time.perf_counter()
    gait = build_tracking_problem(intervals, model=model)
    solution = gait.problem.solve(gait.transcription, solver_settings(print_level), guess=gait.reference_guess())
    return gait, solution, time.perf_counter() - started


def opensim_check(gait, solution, sto: Path) -> dict | None:
    """OpenSim's contact and tendon forces on the written states vs trajopt's; None without opensim."""
    if not opensim_available():
        return None
    model, v = gait.model, gait.muscle_driven
    q, u, a = solution.value(v.q), solution.value(v.u), solution.value(v.activations)
    e, lumbar = solution.value(v.excitations), np.atleast_2d(solution.value(v.actuator_controls))
    result = run_opensim_task("gait2d_solution_check", {
        "model_file": str(MODEL_FILE), "states_file": str(sto),
        "contact_names": np.array([c.name for c in model.contacts]),
        "muscle_names": np.array(model.muscle_names), "coordinate_names": np.array(model.coordinate_names),
        "actuator_names": np.array(list(model.muscle_names) + [model.lumbar_actuator.name]),
        "controls": np.vstack([e, lumbar]).T})
    frames = q.shape[1]
    records = np.stack([np.asarray(contact_record_values(model.multibody, q[:, k], u[:, k], model.contacts))
                        for k in range(frames)])  # (frames, 12, n contacts)
    tendon = np.asarray(model.musculoskeletal.tendon_forces.map(frames)(a, q, u)).T  # (frames, muscles)
    contact_difference = np.abs(records - result["contact_records"])
    # Our implicit residual at OpenSim's accelerations = trajopt's minus OpenSim's generalized forces.
    residual = np.abs(np.asarray(model.implicit_dynamics.map(frames)(q, u, result["accelerations"].T, a, lumbar)))
    accelerations = np.abs(solution.value(v.accelerations) - result["accelerations"].T)
    tendon_difference = np.abs(tendon - result["tendon_forces"])
    return {"frames": frames, "states_loaded": int(result["states_loaded"]),
            "contact_force_max_abs_difference_N": float(contact_difference[:, 0:3].max()),
            "contact_force_max_N": float(np.abs(result["contact_records"][:, 0:3]).max()),
            "tendon_force_max_abs_difference_N": float(tendon_difference.max()),
            "tendon_force_max_N": float(np.abs(result["tendon_forces"]).max()),
            "tendon_force_worst_muscle": model.muscle_names[int(np.argmax(tendon_difference.max(axis=0)))],
            "generalized_force_max_abs_difference": dict(zip(model.coordinate_names, residual.max(axis=1).tolist())),
            "acceleration_max_abs_difference": dict(zip(model.coordinate_names, accelerations.max(axis=1).tolist()))}


def mirrored_excitations_rows(folder: Path) -> list[str]:
    """Rows for the ``--mirror-excitations`` variant, from its record in `folder` (written by its own run)."""
    path = folder / f"{MIRRORED_EXCITATIONS_STEM}.json"
    if not path.exists():
        return ["| excitations also mirrored (`--mirror-excitations`) | not run | not in Moco's example |"]
    record = json.loads(path.read_text())
    return [f"| objective, excitations also mirrored (`--mirror-excitations`, {record['intervals']} intervals) | "
            f"{record['objective']:.5f} ({record['status']}) | not in Moco's example |",
            f"| IPOPT iterations, excitations also mirrored | {record['iterations']} | not in Moco's example |"]


def excitation_mirror_gap(gait, solution) -> tuple[float, str]:
    """max |e(tf) - mirrored e(t0)| over the muscles, and the muscle where it is largest."""
    e = np.atleast_2d(solution.value(gait.muscle_driven.excitations))
    gap = np.abs(e[:, -1] - gait.model.symmetry.muscles @ e[:, 0])
    return float(gap.max()), gait.model.muscle_names[int(np.argmax(gap))]


def mirrored_excitations_note(folder: Path, gap: float, muscle: str, objective: float) -> list[str]:
    """How far the default's end excitations are from mirrored, and what mirroring them costs."""
    path = folder / f"{MIRRORED_EXCITATIONS_STEM}.json"
    if not path.exists():
        return []
    mirrored = json.loads(path.read_text())["objective"]
    return [f"Excitations: Moco's example leaves them free at the ends; this solution ends within {gap:.2g} of the "
            f"mirrored initial excitations (worst {muscle}). Mapping them left<->right too (`--mirror-excitations`) "
            f"gives objective {mirrored:.10f} vs {objective:.10f} ({mirrored - objective:+.2g}).", ""]


def summary_table(gait, solution, full, seconds, moco_info: dict, moco: dict, folder: Path | None,
                  moco_label: str = "Moco") -> list[str]:
    """Markdown rows comparing trajopt's prediction with Moco's (+ the mirrored-excitations variant in `folder`)."""
    displacement = full.table.column("/jointset/groundPelvis/pelvis_tx/value")
    stride = 2 * (displacement[(full.time.size - 1) // 2] - displacement[0])
    moco_tx = moco["solution"].column("/jointset/groundPelvis/pelvis_tx/value")
    ours, theirs = outputs.grf_peaks(full.time, full.right_force), outputs.grf_peaks(None, moco["right_force"])
    prediction = moco_info["prediction"]
    rows = [f"| quantity | trajopt | {moco_label} |", "|---|---|---|",
            f"| status | {solution.status} | {prediction['status']} |",
            f"| objective (10 ∫ Σ abs(control)³ dt / distance) | {solution.objective:.5f} | "
            f"{prediction['objective']:.5f} |",
            f"| final time of the half cycle (s) | {solution.duration:.4f} | {prediction['final_time']:.4f} |",
            f"| stride length (m) | {stride:.4f} | {2 * (moco_tx[-1] - moco_tx[0]):.4f} |",
            f"| average speed (m/s) | {stride / (2 * solution.duration):.4f} | "
            f"{(moco_tx[-1] - moco_tx[0]) / prediction['final_time']:.4f} |"]
    rows += [f"| right GRF {name} | {ours[name]:.1f} | {theirs[name]:.1f} |" for name in ours]
    rows += [f"| IPOPT iterations | {solution.iterations} | {prediction['iterations']} |",
             f"| wall time of the solve (s; build, NLP construction, IPOPT) | {seconds:.1f} "
             f"(IPOPT {solution.wall_time:.1f}) | {prediction['wall_s']:.0f} |",
             *(mirrored_excitations_rows(folder) if folder is not None else []),
             f"| mesh | {solution.discrete.transcription.intervals} Hermite-Simpson intervals, implicit "
             f"multibody dynamics, exact Hessian, midpoint controls free | {prediction['num_mesh_intervals']} "
             f"Hermite-Simpson intervals, explicit, limited-memory Hessian, midpoint controls = mean of the mesh "
             f"points' |"]
    return rows


def _time(drift: dict, threshold: str) -> str:
    value = drift[f"open_loop_first_time_coordinate_drift_above_{threshold}"]
    return "never" if value is None else f"{value:.3f} s"


def _written_by(stem: str, name: str) -> bool:
    """Whether file ``name`` in the shared results folder belongs to the variant ``stem`` (the others stay)."""
    if stem == "prediction" and (name.startswith((MIRRORED_EXCITATIONS_STEM, ELASTIC_TENDONS_STEM))
                                 or name == "summary.md"):
        return name == "summary.md"
    return name.startswith((f"{stem}_", f"{stem}."))


def run(intervals: int, speed: float, tracking: bool, folder: Path, print_level: int = 0,
        mirror_excitations: bool = False, tolerance: float = MOCO_TOLERANCE, elastic_tendons: bool = False,
        compiled: bool = False, animate: bool = False, route: SolverRoute = DEFAULT_ROUTE) -> dict:
    if tracking and (mirror_excitations or elastic_tendons):
        raise TrajoptInputError("gait2d: --mirror-excitations and --elastic-tendons apply to the prediction, "
                                "not to --tracking")
    if mirror_excitations and elastic_tendons:
        raise TrajoptInputError("gait2d: give --mirror-excitations or --elastic-tendons, not both")
    stem = "tracking" if tracking else MIRRORED_EXCITATIONS_STEM if mirror_excitations else \
        ELASTIC_TENDONS_STEM if elastic_tendons else "prediction"
    folder = fresh_output(folder, lambda name: _written_by(stem, name))
    model = GaitModel.load()
    moco = outputs.moco_reference(tracking)
    moco_info = json.loads(MOCO_INFO.read_text())
    if tracking:
        gait, solution, seconds = solve_tracking(intervals, print_level, model)
    else:
        gait, solution, seconds = solve_prediction(intervals, speed, print_level, model, mirror_excitations,
                                                   tolerance=tolerance, compiled=compiled,
                                                   tendons=ELASTIC_TENDONS if elastic_tendons else RigidTendons(),
                                                   route=route)
    if not tracking and moco_info["prediction"]["num_mesh_intervals"] != intervals:
        print(f"note: Moco used {moco_info['prediction']['num_mesh_intervals']} intervals")
    print(f"{stem}: {solution.status} after {solution.iterations} iterations, {seconds:.1f} s "
          f"(IPOPT {solution.wall_time:.1f} s), objective {solution.objective:.6g}, tf {solution.duration:.4f} s")
    domain = print_path_domain_warning(gait.muscle_driven.path_domain_report(solution))
    half = outputs.half_stride(gait, solution)
    full = outputs.full_stride(gait, half)
    written = outputs.write_stride(half, folder, f"{stem}_half_stride") + \
        outputs.write_stride(full, folder, f"{stem}_full_stride")
    written += [outputs.plot_joint_angles(gait, full, moco, folder / f"{stem}_joint_angles.png"),
                outputs.plot_grfs(full, moco, folder / f"{stem}_grfs.png"),
                outputs.plot_activations(gait, half, moco, folder / f"{stem}_activations.png")]
    if animate:
        written.append(outputs.stick_figure_animation(gait, full, folder / f"{stem}_stick_figure.gif"))
    nq, muscles = model.multibody.nq, len(model.muscle_names)
    local = resimulate(gait, solution, restart_each_interval=True)
    open_loop = resimulate(gait, solution)
    drift = {"per_interval_max_coordinate_drift": local.max_drift_in(slice(0, nq)),
             "per_interval_max_speed_drift": local.max_drift_in(slice(nq, 2 * nq)),
             "per_interval_max_activation_drift": local.max_drift_in(slice(2 * nq, 2 * nq + muscles)),
             "per_interval_max_normalized_tendon_force_drift":
                 local.max_drift_in(slice(2 * nq + muscles, None)) if elastic_tendons else None,
             "per_interval_worst": local.worst(),
             "open_loop_coordinate_drift_at_10_percent":
                 float(np.abs(open_loop.drift[:nq, :solution.time.size // 10 + 1]).max()),
             "open_loop_first_time_coordinate_drift_above_1mm_or_1e-3rad":
                 open_loop.first_time_beyond(slice(0, nq), 1e-3),
             "open_loop_first_time_coordinate_drift_above_1cm_or_1e-2rad":
                 open_loop.first_time_beyond(slice(0, nq), 1e-2),
             "open_loop_max_coordinate_drift": open_loop.max_drift_in(slice(0, nq)),
             "open_loop_worst": open_loop.worst()}
    check = None if elastic_tendons else opensim_check(gait, solution, folder / f"{stem}_half_stride.sto")
    record = {"status": solution.status, "success": solution.success, "iterations": solution.iterations,
              "objective": solution.objective, "final_time": solution.duration, "seconds": seconds,
              "ipopt_seconds": solution.wall_time, "intervals": intervals, "speed": speed,
              "mirror_excitations": mirror_excitations, "elastic_tendons": elastic_tendons, "tolerance": tolerance,
              "solver": None if tracking else route.value,
              "worst_constraint": solution.worst_constraint, "resimulation": drift, "opensim_check": check,
              "path_domain": domain.to_json()}
    moco_speed = 1.2  # Moco's example2DWalking: average speed 1.2 m/s
    same_problem = tracking or abs(speed - moco_speed) < 1e-9
    title = f"# 2D gait {stem} (trajopt) vs Moco example2DWalking" if same_problem else \
        (f"# 2D gait {stem} at {speed:g} m/s (trajopt); Moco's example2DWalking at {moco_speed:g} m/s "
         "shown for reference")
    lines = [title, "",
             f"Command: `trajopt run gait2d-prediction --intervals {intervals} --speed {speed}"
             f"{' --tracking' if tracking else ''}{' --mirror-excitations' if mirror_excitations else ''}"
             f"{' --elastic-tendons' if elastic_tendons else ''}"
             f"{f' --tolerance {tolerance:g}' if tolerance != MOCO_TOLERANCE else ''}"
             f"{f' --solver {route.value}' if route is not DEFAULT_ROUTE and not tracking else ''}`. "
             f"Guess: trajopt/examples/gait2d/referenceCoordinates.sto.", ""]
    if not solution.success:
        lines += [f"**The solve did not converge: IPOPT status {solution.status} after {solution.iterations} "
                  f"iterations; worst constraint {solution.worst_constraint}.** The files below are this partial "
                  "result.", ""]
    low, high = solution.discrete.problem.duration[:2]  # (lower, upper, guess)
    if not tracking and high > low and min(solution.duration - low, high - solution.duration) < 1e-6:
        lines += [f"**Caveat:** the half-cycle duration {solution.duration:.4f} s is at its bound "
                  f"[{low:g}, {high:g}] s: the optimum is constrained by the bound, not by the gait.", ""]
    lines += [f"Muscle paths: {domain.sentence()}.", ""]
    if not same_problem:
        lines += [f"**Not Moco's problem:** the average speed is {speed:g} m/s, Moco's example solves {moco_speed:g} "
                  "m/s. The Moco column is a different problem (objective per distance at another speed): it is not "
                  "an agreement check.", ""]
    if mirror_excitations:
        lines += ["Excitations also mapped left<->right at the end (Moco's example leaves them free: only states "
                  "and the lumbar control are periodic).", ""]
    if elastic_tendons:
        lines += ["Compliant tendons (not Moco's example, whose muscles have rigid tendons): normalized tendon-force "
                  f"states, {ELASTIC_TENDONS.describe()}; tendon strain at one normalized force 0.049 (2D_gait.osim); "
                  "passive fiber force on.", ""]
    if not tracking:
        lines += summary_table(gait, solution, full, seconds, moco_info, moco,
                               None if mirror_excitations or elastic_tendons else folder,
                               "Moco" if same_problem else f"Moco at {moco_speed:g} m/s (another problem)") + [""]
        if route is SolverRoute.MESH_CONTINUATION:
            lines += [f"Solved by mesh continuation (`--solver {route.value}`): IPOPT on {intervals // 2} intervals "
                      "from the guess, then on the full mesh from that solution; the iterations count both.", ""]
        if not (mirror_excitations or elastic_tendons):
            lines += mirrored_excitations_note(folder, *excitation_mirror_gap(gait, solution), solution.objective)
        lines += ["Same objective function: Moco's own trajectory scores "
                  f"{outputs.moco_objective(moco, gait.model):.5f} under trajopt's formula (trapezoid on its "
                  "101 points). IPOPT runs with the objective scaled by "
                  f"{PREDICTION_OBJECTIVE_SCALING:g} (obj_scaling_factor), "
                  + ("tolerance 1e-4 as Moco: unscaled, that tolerance stops early with needless co-contraction "
                     "(objective 0.1511 at 50 intervals). Scaled, 1e-4 stops 1.4e-4 to 1.8e-4 above the optimum that "
                     "`--tolerance 1e-8` reaches (50 intervals, 0.8-2.0 m/s; `trajopt bench ipopt-settings`)."
                     if tolerance == MOCO_TOLERANCE else
                     f"tolerance {tolerance:g} (convergence and constraints; Moco's run used 1e-4, so its "
                     "objective carries that tolerance's stopping error)."), ""]
    else:
        lines += [f"Status {solution.status}, {solution.iterations} iterations, {seconds:.1f} s, objective "
                  f"{solution.objective:.5g} (Moco's tracking: {moco_info['tracking']['iterations']} iterations, "
                  f"{moco_info['tracking']['wall_s']:.0f} s; its objective is weighted differently).", "",
                  "RMS difference from the reference data on the solution grid:", "", "| signal | RMS |", "|---|---|",
                  *[f"| {k} | {v:.3g} |" for k, v in outputs.tracking_errors(gait, half).items()], ""]
    tendon_force_drift = drift["per_interval_max_normalized_tendon_force_drift"]
    tendon_drift = "" if tendon_force_drift is None else (
        f", normalized tendon force {tendon_force_drift:.3g} (integrated with the rate that solves the fiber-tendon "
        "equilibrium, not with the optimized df̃T/dt)")
    lines += ["## Forward re-simulation of the controls",
              "Excitations and lumbar control interpolated as the transcription represents them; forward dynamics "
              "(articulated-body algorithm) with muscles, lumbar actuator and contacts, integrated by scipy Radau "
              "(rtol 1e-8).", "",
              f"- restarted from the optimized state at each mesh point (local error over one interval): max "
              f"coordinate drift {drift['per_interval_max_coordinate_drift']:.3g} (rad or m), speed "
              f"{drift['per_interval_max_speed_drift']:.3g}, "
              f"activation {drift['per_interval_max_activation_drift']:.3g}"
              f"{tendon_drift}; worst: {drift['per_interval_worst']}",
              f"- open loop from the initial state over the half cycle (walking is unstable without feedback): "
              f"coordinate drift {drift['open_loop_coordinate_drift_at_10_percent']:.3g} over the first 10 % of the "
              f"cycle; first exceeds 1 mm / 1e-3 rad at t = {_time(drift, '1mm_or_1e-3rad')} and 1 cm / 1e-2 rad at "
              f"t = {_time(drift, '1cm_or_1e-2rad')}; "
              f"max {drift['open_loop_max_coordinate_drift']:.3g} (worst: {drift['open_loop_worst']})", ""]
    lines += ["## OpenSim cross-check"]
    if elastic_tendons:
        lines += ["Not run: 2D_gait.osim's muscles have rigid tendons (ignore_tendon_compliance).", ""]
    elif check is None:
        lines += ["opensim is not installed: not run.", ""]
    else:
        lines += [f"The half-stride .sto loads in OpenSim 4.6 (StatesTrajectory of {check['states_loaded']} states). "
                  f"On those {check['frames']} states: contact sphere forces max |trajopt - OpenSim| "
                  f"{check['contact_force_max_abs_difference_N']:.3g} N (forces up to "
                  f"{check['contact_force_max_N']:.0f} N); tendon forces max difference "
                  f"{check['tendon_force_max_abs_difference_N']:.3g} N (forces up to "
                  f"{check['tendon_force_max_N']:.0f} N; worst {check['tendon_force_worst_muscle']}; trajopt uses "
                  f"the polynomial path surrogates, OpenSim its geometric paths).", "",
                  "With the solution's controls applied, OpenSim's accelerations (realizeAcceleration) inserted in "
                  "trajopt's implicit dynamics leave these generalized-force differences, and differ from the "
                  "optimized accelerations by (stiff foot contact amplifies small torque differences):", "",
                  "| coordinate | max generalized force difference (N·m or N) | max acceleration difference |",
                  "|---|---|---|",
                  *[f"| {name} | {check['generalized_force_max_abs_difference'][name]:.3g} | "
                    f"{check['acceleration_max_abs_difference'][name]:.3g} |" for name in model.coordinate_names], ""]
    lines += ["## Files the command writes", *[f"- `{p.name}`" for p in written], ""]
    (folder / f"{stem}_summary.md" if stem != "prediction" else folder / "summary.md").write_text("\n".join(lines))
    (folder / f"{stem}.json").write_text(json.dumps(record, indent=1))
    print("\n".join(lines))
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run gait2d-prediction", description=description(__doc__))
    parser.add_argument("--intervals", type=int, default=None, help="mesh intervals (default 50; tracking 24)")
    parser.add_argument("--speed", type=float, default=1.2, help="average speed (m/s), prediction only")
    parser.add_argument("--tracking", action="store_true", help="solve the tracking variant instead")
    parser.add_argument("--mirror-excitations", action="store_true",
                        help="also map the excitations left<->right at the end (prediction; Moco leaves them free)")
    add_elastic_tendons(parser)  # the prediction's
    add_out(parser, "gait2d-prediction")  # a variant replaces only its own files
    add_tolerance(parser, MOCO_TOLERANCE)  # the prediction's, also its constraint tolerance (Moco's)
    add_print_level(parser, 5)
    add_compiled(parser, default=False)  # the prediction's: C code kept in the disk cache, same iterates
    add_animate(parser, "<variant>_stick_figure.gif (prediction_stick_figure.gif by default)")
    add_solver_route(parser, DEFAULT_ROUTE)  # the prediction's
    args = parser.parse_args(argv)
    intervals = args.intervals if args.intervals is not None else (24 if args.tracking else 50)
    if intervals < 2 or not 0.0 < args.speed < 3.0:
        parser.error(f"need --intervals >= 2 and 0 < --speed < 3 m/s, got {intervals} and {args.speed}")
    if args.tracking and (args.mirror_excitations or args.tolerance != MOCO_TOLERANCE or args.compiled
                          or args.elastic_tendons or args.solver != DEFAULT_ROUTE.value):
        parser.error("--mirror-excitations, --elastic-tendons, --tolerance, --compiled and --solver apply to the "
                     "prediction, not to --tracking")
    if args.mirror_excitations and args.elastic_tendons:
        parser.error("give --mirror-excitations or --elastic-tendons, not both")
    if not 0.0 < args.tolerance < 1.0:
        parser.error(f"need 0 < --tolerance < 1, got {args.tolerance}")
    record = run(intervals, args.speed, args.tracking, args.out, args.print_level, args.mirror_excitations,
                 args.tolerance, args.elastic_tendons, args.compiled, animate=args.animate,
                 route=SolverRoute(args.solver))
    if not record["success"]:
        print(f"{parser.prog}: IPOPT did not converge ({record['status']}, {record['iterations']} iterations); "
              f"worst constraint {record['worst_constraint']}; partial result in {args.out}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
