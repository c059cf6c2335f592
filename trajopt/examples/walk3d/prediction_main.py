"""``trajopt run walk3d-prediction [--intervals N] [--out DIR]``: 3D predictive walking with a quaternion pelvis.

Builds ``trajopt.examples.walk3d.prediction`` (half gait cycle, bilateral symmetry, coordinates.sto's speed, effort per
distance), solves it from the coordinates.sto guess with IPOPT (exact Hessian, progress lines), and writes to
``--out`` (default ./trajopt_results/walk3d-prediction): the half-cycle solution (trajopt's variables, quaternion
pelvis), the full cycle's coordinates in OpenSim's labels and angles (pelvis tilt/list/rotation back from the
quaternion: a motion OpenSim loads), the feet's ground reactions (.sto), figures of GRFs vs grf_walk.mot, joint
angles vs coordinates.sto and activations vs electromyography.sto, a stick-figure GIF and summary.md. A failed
solve still writes everything, with its status and worst constraint in the summary. With opensim installed, OpenSim
4.6 rebuilds the recipe's model and evaluates contact forces, tendon forces, dynamics and (compliant tendons) the
tendon dynamics' residual at the solution's states (``trajopt.examples.walk3d.opensim_check``): max differences in
walk3d_prediction.json ("opensim_check") and summary.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np
from scipy.integrate import simpson

from trajopt.studies.analysis.figures import pyplot, save_figure, write_animation
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import (add_animate, add_compiled, add_intervals, add_max_iterations, add_out,
                                      add_print_level, add_solver_route, add_tolerance, out_folder)
from trajopt.model.paths.domain_report import print_path_domain_warning
from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.expansion import full_cycle, table_mirror
from trajopt.studies.gait.ground_reactions import center_of_pressure
from trajopt.studies.gait.guess import free_joint_angles
from trajopt.studies.gait.labels import coordinate_paths
from trajopt.studies.gait.metabolic_cost import body_mass, whole_body_metabolic_rate
from trajopt.studies.gait.metrics import cost_of_transport
from trajopt.studies.gait.predsim_cost import PREDSIM_WEIGHTS, PredSimWeights, term_values
from trajopt.model.io import read_table, write_sto
from trajopt.core.multibody import body_poses
from trajopt.core.ocp import SolverRoute, route_solver
from trajopt.core.ocp.verification import SimulationUndefined
from trajopt.studies.prediction import resimulate
from trajopt.table import Table

from trajopt.examples.walk3d.opensim_check import opensim_check_rows, solution_check
from trajopt.examples.walk3d.gait_report import criteria_rows, walking_criteria
from trajopt.examples.walk3d.prediction import (ACCELERATION_WEIGHT, COORDINATES, GAIT_CYCLE, HERE, MOCO_RECIPE, PELVIS,
                                                PREDSIM_ACTUATOR_TORQUE, PREDSIM_ADAPTED_RECIPE,
                                                PREDSIM_RECIPE, Recipe, build_problem,
                                                solver_settings, tracking_study)

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = '3D predictive walking, half gait cycle, quaternion pelvis, 80 muscles, foot contact'

GRF = HERE / "grf_walk.mot"
EMG = HERE / "electromyography.sto"
# electromyography.sto column -> model muscle (right side), as Moco's example3DWalking pairs them.
EMG_MUSCLES = {"soleus": "soleus_r", "gastrocnemius": "gasmed_r", "tibialis_anterior": "tibant_r",
               "medial_hamstrings": "semiten_r", "biceps_femoris": "bflh_r", "vastus_lateralis": "vaslat_r",
               "vastus_medius": "vasmed_r", "rectus_femoris": "recfem_r", "gluteus_maximus": "glmax2_r",
               "gluteus_medius": "glmed2_r"}


def _gait_cycle_percent(time):
    """(mask of the samples in GAIT_CYCLE, their time in percent of the cycle)."""
    window = (time >= GAIT_CYCLE[0]) & (time <= GAIT_CYCLE[1])
    return window, 100 * (time[window] - GAIT_CYCLE[0]) / (GAIT_CYCLE[1] - GAIT_CYCLE[0])


def _percent_of_cycle(time):
    """A predicted full cycle's times in percent of its duration."""
    return 100 * (time - time[0]) / (time[-1] - time[0])


def solve(intervals: int, print_level: int = 5, max_iterations: int = 1000, tol: float = 1e-4,
          quaternion_pelvis: bool = True, acceleration_weight: float = ACCELERATION_WEIGHT,
          from_tracking: bool = False, threads: int = 1, compiled: bool = False, recipe: Recipe = PREDSIM_RECIPE,
          speed: float | None = None, route: SolverRoute = SolverRoute.IPOPT):
    """(walk3d problem, solution, seconds including the model build and NLP construction); with
    ``from_tracking`` the guess is the solution of ``prediction.tracking_study`` on the same mesh; ``speed``: the
    average walking speed (m/s; None: the subject's, coordinates.sto's gait cycle); ``route``: IPOPT on the mesh,
    or mesh continuation (half the mesh first, then the mesh from its interpolated solution with the library's
    refinement options: the interpolated points are not feasible on the finer mesh, so bounds are not held tight)."""
    started = time.perf_counter()
    walk = build_problem(intervals, speed=speed, quaternion_pelvis=quaternion_pelvis,
                         acceleration_weight=acceleration_weight, recipe=recipe)
    settings = solver_settings(print_level, max_iterations, tol, threads=threads, compiled=compiled)
    guess = walk.reference_guess()
    if from_tracking:
        tracked = tracking_study(walk).solve(walk.transcription, settings)
        guess = tracked.solution
        print(f"walk3d tracking: {tracked.status} after {tracked.iterations} iterations, objective "
              f"{tracked.objective:.6g}")
    solver = route_solver(settings, route)
    solution = walk.problem.solve(walk.transcription, solver, guess=guess)
    return walk, solution, time.perf_counter() - started


def full_cycle_tables(walk, solution):
    """(full-cycle solution table, OpenSim coordinates table, ground reactions table) from the half cycle."""
    built, model = walk.muscle_driven, walk.model
    half = solution.table()
    mirror = table_mirror(built, model.symmetry, half.labels)
    mb = model.musculoskeletal.multibody
    tx_label = half.labels[list(mb.coordinate_names).index("pelvis_tx")]
    full = full_cycle(half, mirror, tx_label, name="walk3d_full_cycle")
    q = full.data[:, :mb.nq]
    u = full.data[:, mb.nq:mb.nq + mb.nv]
    angles = free_joint_angles(model.original, mb, PELVIS, q) if walk.quaternion_pelvis else q
    coordinates = Table(full.time, coordinate_paths(model.original), angles, name="walk3d_prediction_coordinates")
    reactions = model.ground_reactions.map(full.time.size)(q.T, u.T)
    right_force, left_force, right_torque, left_torque = (np.asarray(r).T for r in reactions)
    columns, labels = [], []
    for side, force, torque in (("r", right_force, right_torque), ("l", left_force, left_torque)):
        point, free = center_of_pressure(force, torque)
        columns += [force, point, np.column_stack([np.zeros_like(free), free, np.zeros_like(free)])]
        labels += [f"ground_force_{side}_v{a}" for a in "xyz"] + [f"ground_force_{side}_p{a}" for a in "xyz"] + \
            [f"ground_torque_{side}_{a}" for a in "xyz"]
    grf = Table(full.time, tuple(labels), np.hstack(columns), name="walk3d_prediction_ground_reactions")
    return full, coordinates, grf


def plot_comparisons(walk, full: Table, coordinates: Table, grf: Table, folder: Path) -> list[Path]:
    """GRFs vs grf_walk.mot, joint angles vs coordinates.sto, activations vs electromyography.sto (% gait cycle)."""
    plt = pyplot()
    written = []
    percent = _percent_of_cycle(full.time)
    measured_grf = read_table(GRF)
    window, measured_percent = _gait_cycle_percent(measured_grf.time)
    figure, axes = plt.subplots(2, 3, figsize=(12, 6), sharex=True)
    for row, side in enumerate("rl"):
        for col, axis in enumerate("xyz"):
            label = f"ground_force_{side}_v{axis}"
            axes[row, col].plot(percent, grf.column(label), label="trajopt")
            axes[row, col].plot(measured_percent, measured_grf.column(label)[window], "k:", label="grf_walk.mot")
            axes[row, col].set_title(f"{label} (N)", fontsize=9)
    axes[0, 0].legend(fontsize=7)
    written.append(save_figure(figure, folder / "grfs.png", dpi=80))
    reference = read_table(COORDINATES)
    window, reference_percent = _gait_cycle_percent(reference.time)
    translations = ("pelvis_tx", "pelvis_ty", "pelvis_tz")
    shown = [label for label in coordinates.labels
             if label in reference.labels and label.split("/")[-2] not in translations]
    figure, axes = plt.subplots(5, 6, figsize=(16, 12), sharex=True)
    for axis, label in zip(axes.flat, shown):
        axis.plot(percent, np.degrees(coordinates.column(label)), label="trajopt")
        axis.plot(reference_percent, np.degrees(reference.column(label)[window]), "k:", label="coordinates.sto")
        axis.set_title(label.split("/")[-2] + " (deg)", fontsize=8)
    for axis in list(axes.flat)[len(shown):]:
        axis.set_visible(False)
    axes[0, 0].legend(fontsize=7)
    written.append(save_figure(figure, folder / "joint_angles.png", dpi=70))
    emg = read_table(EMG)
    window, emg_percent = _gait_cycle_percent(emg.time)
    figure, axes = plt.subplots(2, 5, figsize=(15, 6), sharex=True, sharey=True)
    paths = dict(zip(walk.model.musculoskeletal.muscle_names, walk.muscle_driven.problem.compile().states[2].labels))
    for axis, (column, muscle) in zip(axes.flat, EMG_MUSCLES.items()):
        axis.plot(percent, full.column(paths[muscle]), label=f"trajopt {muscle}")
        axis.plot(emg_percent, emg.column(column)[window], "k:", label="EMG (normalized)")
        axis.set_title(f"{column} / {muscle}", fontsize=8)
    axes[0, 0].legend(fontsize=7)
    written.append(save_figure(figure, folder / "activations.png", dpi=70))
    return written


def stick_figure(walk, full: Table, path: Path, frames: int = 30) -> Path:
    """A 3D GIF of the body origins (pelvis, legs, torso, arms) over the gait cycle."""
    plt = pyplot()

    mb = walk.model.musculoskeletal.multibody
    picks = np.linspace(0, full.time.size - 1, frames).round().astype(int)
    origins = [np.asarray(body_poses(mb, full.data[i, :mb.nq])[1]) for i in picks]
    index = {b.name: mb.body_index(b.name) for b in mb.bodies}
    chains = [[n for n in chain if n in index] for chain in (
        ("torso", "pelvis"), ("pelvis", "femur_r", "tibia_r", "talus_r", "calcn_r", "toes_r"),
        ("pelvis", "femur_l", "tibia_l", "talus_l", "calcn_l", "toes_l"),
        ("torso", "humerus_r", "ulna_r", "radius_r", "hand_r"), ("torso", "humerus_l", "ulna_l", "radius_l", "hand_l"))]
    figure = plt.figure(figsize=(5, 5))
    axis = figure.add_subplot(projection="3d")
    lines = [axis.plot([], [], [], "o-", markersize=2)[0] for _ in chains]
    x_all = np.concatenate([o[0] for o in origins])
    axis.set_xlim(x_all.min() - 0.3, x_all.max() + 0.3)
    axis.set_ylim(-0.8, 0.8)
    axis.set_zlim(0.0, 1.6)

    def draw(frame):
        o = origins[frame]
        for line, chain in zip(lines, chains):
            # OpenSim's y is up: plot (x, -z, y).
            line.set_data_3d([o[0, index[b]] for b in chain], [-o[2, index[b]] for b in chain],
                             [o[1, index[b]] for b in chain])

    return write_animation(figure, draw, len(picks), path, fps=12, dpi=60)


def objective_terms(walk, solution, acceleration_weight: float) -> dict:
    """The objective's two terms, integrated with Simpson's rule on the solution's points (mesh points and
    Hermite-Simpson midpoints: the transcription's own quadrature)."""
    built = walk.muscle_driven
    effort = np.sum(np.atleast_2d(solution.value(built.excitations)) ** 3, axis=0) + \
        np.sum(np.abs(np.atleast_2d(solution.value(built.actuator_controls))) ** 3, axis=0)
    accelerations = np.sum(np.atleast_2d(solution.value(built.accelerations)) ** 2, axis=0)
    tx = solution.value(built.q)[walk.model.musculoskeletal.multibody.coordinate_index("pelvis_tx")]
    distance = float(tx[-1] - tx[0])
    return {"effort": float(simpson(effort, x=solution.time) / distance),
            "accelerations": float(acceleration_weight * simpson(accelerations, x=solution.time) / distance)}


def deviation_from_coordinates(coordinates: Table) -> dict:
    """RMS difference (deg) of each rotational coordinate from coordinates.sto over the gait cycle (% of cycle)."""
    reference = read_table(COORDINATES)
    window, reference_percent = _gait_cycle_percent(reference.time)
    percent = _percent_of_cycle(coordinates.time)
    deviation = {}
    for label in coordinates.labels:
        name = label.split("/")[-2]
        if label in reference.labels and name not in ("pelvis_tx", "pelvis_ty", "pelvis_tz"):
            measured = np.interp(percent, reference_percent, reference.column(label)[window])
            deviation[name] = float(np.degrees(np.sqrt(np.mean((coordinates.column(label) - measured) ** 2))))
    return deviation


def deviation_rows(deviation: dict, shown: int = 8) -> list[str]:
    """summary.md lines: the coordinates farthest from coordinates.sto (the prediction is not told to follow it)."""
    worst = sorted(deviation.items(), key=lambda item: -item[1])[:shown]
    return ["How far the predicted gait is from the measured one (RMS over the gait cycle, deg; joint_angles.png):",
            "", "| coordinate | RMS difference from coordinates.sto (deg) |", "|---|---|",
            *[f"| {name} | {value:.1f} |" for name, value in worst],
            f"| median of all {len(deviation)} | {float(np.median(list(deviation.values()))):.1f} |", ""]


def resimulation_drift(walk, solution) -> dict:
    """Forward re-simulation (``trajopt.studies.prediction.resimulate``: forward dynamics, Radau with the exact
    Jacobian) restarted from the optimized state at each mesh point: the transcription's local error."""
    mb = walk.model.musculoskeletal.multibody
    try:
        local = resimulate(walk.muscle_driven, solution, restart_each_interval=True, method="Radau")
    except SimulationUndefined as error:
        print(f"walk3d-prediction: re-simulation not possible: {error}", flush=True)
        return {"failed": str(error)}
    return {"per_interval_max_coordinate_drift": local.max_drift_in(slice(0, mb.nq)),
            "per_interval_max_speed_drift": local.max_drift_in(slice(mb.nq, mb.nq + mb.nv)),
            "per_interval_worst": local.worst()}


# Gross metabolic cost of transport of adults walking near 1.25 m/s, as published (Waters and Mulroy 1999, Gait
# Posture 9: 207-231: about 3.3 J/(kg·m) at comfortable speed; Ralston 1958: a minimum near 1.3 m/s).
PUBLISHED_COST_OF_TRANSPORT = "about 3.3 J/(kg·m) gross at comfortable speed (Waters and Mulroy 1999)"


def body_weight(walk) -> float:
    """The model's weight (N), the unit of the walking criteria's ground reactions."""
    return body_mass(walk.muscle_driven.model) * float(np.linalg.norm(walk.model.musculoskeletal.multibody.gravity))


def metabolic_cost_of_transport(walk, solution) -> float:
    """Whole-body metabolic energy (Bhargava et al. 2004, basal included) over the half cycle per kg and metre."""
    built = walk.muscle_driven
    muscles = None if walk.recipe is None else walk.recipe.metabolic_constants(built.model.muscle_names)
    rate = np.atleast_1d(solution.value(whole_body_metabolic_rate(built, muscles)))
    tx = solution.value(built.q)[walk.model.musculoskeletal.multibody.coordinate_index("pelvis_tx")]
    return cost_of_transport(float(simpson(rate, x=solution.time)), body_mass(built.model), float(tx[-1] - tx[0]))


def objective_rows(walk, solution, acceleration_weight: float) -> tuple[dict, list[str]]:
    """Each term of the objective (PredSim's or Moco's example's) and its summary.md rows."""
    if walk.cost_terms:
        terms = term_values(solution, walk.cost_terms)
        return terms, [f"| objective: PredSim's cost per distance (trajopt.studies.gait.predsim_cost) | "
                       f"{solution.objective:.6g} |",
                       *[f"| of which {name} | {value:.6g} |" for name, value in terms.items()]]
    terms = objective_terms(walk, solution, acceleration_weight)
    return terms, [f"| objective ∫ (Σ e³ + Σ c³ + w Σ q̈²) dt / distance, w = {acceleration_weight:g} | "
                   f"{solution.objective:.6g} |",
                   f"| of which the effort ∫ (Σ e³ + Σ c³) dt / distance | {terms['effort']:.6g} |",
                   f"| of which w ∫ Σ q̈² dt / distance | {terms['accelerations']:.6g} |"]


def recipe_rows(recipe: Recipe) -> list[str]:
    """What the problem is made of, and where it departs from Moco's example3DWalking."""
    if not recipe.predsim_cost:
        return ["Problem: Moco's example3DWalking (rigid tendons without passive fiber force, active force-length "
                "width x1.5, toe actuators, effort of cubed excitations and controls).", ""]
    choices = recipe.model
    return ["Problem: PredSim's recipe (Falisse et al. 2019, 2022), unlike Moco's example3DWalking: "
            + "; ".join(filter(None, [
                "PredSim's cost terms instead of the cubed effort, " + weights_sentence(recipe.weights),
                "compliant tendons (normalized tendon force states)" if recipe.elastic_tendons else "rigid tendons",
                tendon_stiffness_sentence(recipe.tendon_stiffness),
                "passive fiber force on" if choices.passive_fiber_force else "no passive fiber force",
                f"active force-length width x{choices.active_force_width_scale:g}",
                "passive toes (mtp spring 25 N·m/rad, damping 2)" if choices.passive_toes else "toe actuators",
                "PredSim's limit torques and damping on every joint instead of Moco's passive forces"
                if choices.predsim_passive_torques else "Moco's passive joint forces",
                f"activations from {recipe.min_activation:g}" + (
                    "" if recipe.min_activation == PREDSIM_RECIPE.min_activation
                    else f" (PredSim {PREDSIM_RECIPE.min_activation:g})"),
                "" if recipe.trunk_actuator_torque == PREDSIM_ACTUATOR_TORQUE else
                f"trunk actuators priced at {recipe.trunk_actuator_torque:g} N·m per unit excitation (PredSim's "
                f"arm actuators {PREDSIM_ACTUATOR_TORQUE:g}; PredSim's models move the trunk with muscles)",
                "" if recipe.arm_actuator_torque == PREDSIM_ACTUATOR_TORQUE else
                f"arm actuators priced at {recipe.arm_actuator_torque:g} N·m per unit excitation (PredSim "
                f"{PREDSIM_ACTUATOR_TORQUE:g}; the .osim's arm actuators have that optimal force)",
                "PredSim's distance constraints (feet, tibias, toes apart; hands away from the thighs)"
                if recipe.body_distances else "",
                "PredSim's specific tensions and slow-twitch ratios in the metabolic rates"
                if recipe.predsim_muscle_physiology else ""])) + ".", ""]


def recipe_option(recipe: Recipe) -> str:
    """``--recipe NAME`` that gives ``recipe`` (empty for the default, or a recipe no name gives)."""
    return next((f" --recipe {name}" for name, known in RECIPES.items() if known == recipe and name != "predsim"), "")


def weights_sentence(weights: PredSimWeights) -> str:
    """PredSim's weights (``PREDSIM_WEIGHTS``), or which of them the recipe changes."""
    names = [field.name for field in dataclasses.fields(PREDSIM_WEIGHTS)]
    changed = [f"{name.replace('_', ' ')} {getattr(weights, name):g} (PredSim {getattr(PREDSIM_WEIGHTS, name):g})"
               for name in names if getattr(weights, name) != getattr(PREDSIM_WEIGHTS, name)]
    return "with PredSim's weights" if not changed else "PredSim's weights except " + ", ".join(changed)


def tendon_stiffness_sentence(stiffness: tuple) -> str:
    """The compliant tendons' stiffness overrides, grouped by value."""
    by_value = {}
    for muscle, value in stiffness:
        by_value.setdefault(value, []).append(muscle)
    return "; ".join(f"tendon stiffness kT {value:g} for {', '.join(muscles)}" for value, muscles in by_value.items())


def run(intervals: int, folder: Path, print_level: int = 5, max_iterations: int = 1000, tol: float = 1e-4,
        quaternion_pelvis: bool = True, resimulate: bool = False, acceleration_weight: float = ACCELERATION_WEIGHT,
        from_tracking: bool = False, compiled: bool = False, recipe: Recipe = PREDSIM_RECIPE,
        animate: bool = False, speed: float | None = None, route: SolverRoute = SolverRoute.IPOPT) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    walk, solution, seconds = solve(intervals, print_level, max_iterations, tol, quaternion_pelvis,
                                    acceleration_weight, from_tracking, compiled=compiled, recipe=recipe, speed=speed,
                                    route=route)
    print(f"walk3d-prediction: {solution.status} after {solution.iterations} iterations, {seconds:.1f} s "
          f"(IPOPT {solution.wall_time:.1f} s), objective {solution.objective:.6g}, tf {solution.duration:.4f} s")
    domain = print_path_domain_warning(walk.muscle_driven.path_domain_report(solution))
    write_sto(folder / "half_cycle_solution.sto", solution.table())
    full, coordinates, grf = full_cycle_tables(walk, solution)
    write_sto(folder / "full_cycle_solution.sto", full)
    write_sto(folder / "full_cycle_coordinates.sto", coordinates)
    write_sto(folder / "full_cycle_ground_reactions.sto", grf)
    figures = plot_comparisons(walk, full, coordinates, grf, folder)
    if animate:
        figures.append(stick_figure(walk, full, folder / "stick_figure.gif"))
    built = walk.muscle_driven
    q = solution.value(built.q)
    pelvis = walk.model.musculoskeletal.multibody.q_slice(PELVIS)
    norm_error = float(np.abs(np.linalg.norm(q[pelvis.start:pelvis.start + 4], axis=0) - 1.0).max()) \
        if walk.quaternion_pelvis else None
    record = {"status": solution.status, "success": solution.success, "iterations": solution.iterations,
              "objective": solution.objective, "final_time": solution.duration, "seconds": seconds,
              "ipopt_seconds": solution.wall_time, "intervals": intervals, "speed": walk.speed,
              "variables": int(solution.discrete.layout.size), "worst_constraint": solution.worst_constraint,
              "max_quaternion_norm_error": norm_error, "pelvis": "quaternion" if walk.quaternion_pelvis else "euler",
              "path_domain": domain.to_json(), "solver": route.value}
    terms, term_rows = objective_rows(walk, solution, acceleration_weight)
    criteria = walking_criteria(coordinates, grf, body_weight(walk))
    cot = metabolic_cost_of_transport(walk, solution)
    record.update(objective_terms=terms, acceleration_weight=acceleration_weight, walking_criteria=criteria,
                  cost_of_transport=cot, recipe="predsim" if recipe.predsim_cost else "moco-example",
                  stride_length=2 * walk.speed * solution.duration, cadence=60.0 / solution.duration,
                  deviation_from_coordinates_deg=deviation_from_coordinates(coordinates))
    if resimulate:
        record["resimulation"] = resimulation_drift(walk, solution)
    record["opensim_check"] = solution_check(walk, solution)
    (folder / "walk3d_prediction.json").write_text(json.dumps(record, indent=1))
    pelvis_kind = "quaternion" if walk.quaternion_pelvis else "Euler-angle (.osim CustomJoint)"
    weight_option = ("" if acceleration_weight == ACCELERATION_WEIGHT
                     else f" --acceleration-weight {acceleration_weight:g}")
    speed_source = "from coordinates.sto's gait cycle" if speed is None else "given by --speed"
    lines = [f"# 3D predictive walking (trajopt): half gait cycle, {pelvis_kind} pelvis", "", *recipe_rows(recipe),
             f"Command: `trajopt run walk3d-prediction --intervals {intervals}"
             f"{'' if speed is None else f' --speed {speed:g}'}"
             f"{'' if route is SolverRoute.IPOPT else f' --solver {route.value}'}"
             f"{'' if walk.quaternion_pelvis else ' --euler-pelvis'}{' --from-tracking' if from_tracking else ''}"
             f"{recipe_option(recipe)}"
             f"{weight_option}"
             f"{' --resimulate' if resimulate else ''}`. Model, problem and guess"
             f"{' (a tracking solve of coordinates.sto and grf_walk.mot)' if from_tracking else ' (coordinates.sto)'}: "
             "trajopt/examples/walk3d/prediction.py.", "",
             "| quantity | value |", "|---|---|",
             f"| status | {solution.status} |", f"| IPOPT iterations | {solution.iterations} |",
             *term_rows,
             f"| half-cycle duration (s) | {solution.duration:.4f} |",
             f"| stride length (m), cadence (steps/min) | {record['stride_length']:.3f}, {record['cadence']:.1f} |",
             f"| metabolic cost of transport (Bhargava 2004, basal included) | {cot:.2f} J/(kg·m); published: "
             f"{PUBLISHED_COST_OF_TRANSPORT} |",
             f"| average speed (m/s, {speed_source}) | {walk.speed:.4f} |",
             f"| wall time: model, NLP construction and IPOPT (s) | {seconds:.1f} (IPOPT {solution.wall_time:.1f}) |",
             f"| NLP variables | {record['variables']} |",
             f"| worst constraint | {solution.worst_constraint} |",
             f"| muscle paths | {domain.sentence()} |",
             *([f"| max abs(norm(Q) - 1) of the pelvis quaternion | {norm_error:.2g} |"] if norm_error is not None
               else []),
             *(["| forward re-simulation, restarted per mesh interval: max coordinate drift (rad or m) | "
                + (f"not possible: {record['resimulation']['failed']}" if "failed" in record["resimulation"] else
                   f"{record['resimulation']['per_interval_max_coordinate_drift']:.3g} ("
                   f"{record['resimulation']['per_interval_worst']})") + " |"] if resimulate else []), "",
             *criteria_rows(criteria),
             *opensim_check_rows(record["opensim_check"]),
             *deviation_rows(record["deviation_from_coordinates_deg"]),
             "Caveats: the patellofemoral joints are welded (their couplers dropped; 0.07 kg patellae move with the "
             "femurs); "
             + ("the objective adds the actuator controls' cubes and w ∫ Σ q̈² dt / distance to the excitations' "
                "cubes, and passive lumbar torques (PredSim's, `LUMBAR_PASSIVE`) join Moco's passive moments "
                "(documented extras, trajopt/examples/walk3d/prediction.py); " if not recipe.predsim_cost else
                "PredSim's slack controls are trajopt's excitations (PredSim has activation derivatives); "
                + ("PredSim's specific tensions and slow-twitch ratios (trajopt/examples/walk3d/muscle_physiology.py)"
                   if recipe.predsim_muscle_physiology else "specific tension 0.25 MPa and slow-twitch ratio 0.5")
                + " in the metabolic rates; "
                + ("the radioulnar joints are welded (PredSim's model has no forearm rotation); "
                   if recipe.model.weld_forearms else ""))
             + "the gait is predicted, not tracked: it is not the measured one (tables above). "
             + ("" if solution.success else "The solve did not converge: the files hold its last iterate."), "",
             "Files the command writes: " + ", ".join(p.name for p in sorted(folder.iterdir()) if p.is_file())]
    (folder / "summary.md").write_text("\n".join(lines) + "\n")
    return record


# --recipe's choices: the problem each names.
RECIPES = {"predsim": PREDSIM_RECIPE, "predsim-adapted": PREDSIM_ADAPTED_RECIPE, "moco-example": MOCO_RECIPE}


def add_recipe(parser) -> None:
    """``--recipe``: which walking problem (``RECIPES``), the same option for the command and its benchmark."""
    parser.add_argument("--recipe", choices=tuple(RECIPES), default="predsim",
                        help="the problem: predsim, PredSim's cost, compliant tendons, passive forces and toes; "
                             "predsim-adapted, the same with activations from 0 and cheaper trunk actuators (for "
                             "a model with strong muscles and a torque-driven trunk, as this one), compliant triceps "
                             "surae tendons, the metabolic energy weighted 350 and the arm actuators priced at "
                             "their own 50 N·m (at 50 intervals it converges with "
                             "--solver mesh-continuation); moco-example, "
                             "Moco's example3DWalking problem (cubed effort, rigid tendons) (default predsim)")


def add_from_tracking(parser) -> None:
    """``--from-tracking``: the guess, the command's and its benchmark's."""
    parser.add_argument("--from-tracking", action="store_true",
                        help="start from the solution of a tracking solve of coordinates.sto and grf_walk.mot "
                             "instead of coordinates.sto itself")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run walk3d-prediction", description=description(__doc__))
    add_intervals(parser, 50)  # of the half cycle
    add_max_iterations(parser, 1000)
    add_tolerance(parser, 1e-4)
    add_print_level(parser, 5)
    parser.add_argument("--resimulate", action="store_true",
                        help="also re-simulate the controls with forward dynamics (per mesh interval)")
    parser.add_argument("--euler-pelvis", action="store_true",
                        help="the same problem with the .osim's pelvis angles instead of the quaternion (to compare)")
    add_out(parser, "walk3d-prediction")
    parser.add_argument("--acceleration-weight", type=float, default=ACCELERATION_WEIGHT,
                        help=f"weight of ∫ Σ q̈² dt / distance beside the effort (default {ACCELERATION_WEIGHT:g})")
    add_from_tracking(parser)
    add_recipe(parser)
    add_compiled(parser, default=False)  # C code kept in the disk cache; same iterates
    add_animate(parser, "stick_figure.gif")
    parser.add_argument("--speed", type=float, default=None,
                        help="average walking speed in m/s (default: the subject's, about 1.26); the walking "
                             "criteria still compare with the subject's cycle at its own speed")
    add_solver_route(parser, SolverRoute.IPOPT)
    args = parser.parse_args(argv)
    if args.intervals < 2:
        raise TrajoptInputError(f"walk3d-prediction: --intervals must be >= 2, got {args.intervals}")
    if args.speed is not None and not 0.3 <= args.speed <= 2.5:
        raise TrajoptInputError(f"walk3d-prediction: --speed {args.speed:g} m/s is not a walking speed "
                                f"(0.3 to 2.5 m/s)")
    out_folder(args.out)  # before the solve: one line when it cannot be a folder
    record = run(args.intervals, args.out, args.print_level, args.max_iterations, args.tolerance, not args.euler_pelvis,
                 args.resimulate, args.acceleration_weight, args.from_tracking, compiled=args.compiled,
                 recipe=RECIPES[args.recipe], animate=args.animate,
                 speed=args.speed, route=SolverRoute(args.solver))
    print(f"wrote {args.out}")
    return 0 if record["success"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
