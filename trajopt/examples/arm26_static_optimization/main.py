"""arm26 inverse dynamics and static optimization vs OpenSim 4.6: ``trajopt run arm26-static-optimization``.

Cases (paper: Appl. Sci. 2020, 10, 7760, Figures 13-20):

- elbow flexion 0 -> 90 deg in 1 s (``elbow_flex_0_90_minjerk.mot``, no filter): inverse
  dynamics; static optimization without force-length-velocity (activation = force / Fmax), with
  it but without passive fiber force (as OpenSim's Static Optimization), and with passive force;
  residuals; joint reactions;
- ``arm26_InverseKinematics.mot`` (6 Hz low-pass, as OpenSim's reference run): inverse dynamics
  and static optimization with force-length-velocity, without passive force.

OpenSim's stored references use Thelen2003 muscles; trajopt maps them onto DeGroote 2016 curves
(``trajopt.model.musculoskeletal``), so activations with force-length-velocity differ by the curves.
With opensim installed (and without ``--no-opensim``) the run also reruns OpenSim's Static
Optimization with arm26's muscles replaced by DeGrooteFregly2016Muscle (rigid tendon), the
like-for-like comparison, and OpenSim's JointReaction loads with trajopt's muscle forces applied.
Reserves: 1 N·m on both coordinates, weight 1, activation exponent 2 (as OpenSim's runs).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_cutoff, add_out
from trajopt.studies.analysis.figures import plot_joint_reactions, plot_series
from trajopt.studies.analysis.inverse_dynamics import motion_inverse_dynamics, read_model_motion
from trajopt.studies.analysis.joint_reactions import muscle_joint_reactions
from trajopt.core.ocp import Residuals
from trajopt.studies.analysis.static_optimization import (StaticOptimization, StaticOptimizationResult,
                                                          StaticOptimizationWarning)
from trajopt.errors import TrajoptInputError, first_names
from trajopt.model.io import MotionProcessor, Table, read_motion, read_table, write_csv
from trajopt.model.io.motion_units import read_checked_motion, rotational_ranges
from trajopt.model.io.output import default_output, fresh_output
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.model.osim import load_osim
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.refit import paths_for_motion
from trajopt.edge.tools.common import check_cutoff

from trajopt.examples.arm26_static_optimization.report import ALONG_FIBER, Row, compare, write_summary
from trajopt.edge.tools.path_sampling import OpenSimPathSampler

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'arm26 inverse dynamics + static optimization vs OpenSim (the main job)'

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MODEL = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
PATHS = ROOT / "trajopt" / "examples" / "arm26" / "paths.json"
ELBOW_MOTION = HERE / "elbow_flex_0_90_minjerk.mot"
IK_MOTION = HERE / "arm26_InverseKinematics.mot"
REFERENCE = HERE / "reference"
COMMAND = "arm26-static-optimization"  # its default output folder is named after the command
PAPER = "Appl. Sci. 2020, 10, 7760"  # the arm26 paper whose Figures 13-20 the figures follow


def load_model(paths: PolynomialPaths | None = None, geometric: bool = False) -> MusculoskeletalModel:
    """arm26 with its polynomial muscle paths (default trajopt/examples/arm26/paths.json) or, with `geometric`, its
    geometric paths wrapped as OpenSim computes it (cylinders and, for TRIlong and BIClong, ellipsoids) with
    OpenSim's moment arms (computeMomentArm, the generalized forces of a unit tension along that path: the
    forces OpenSim applies; −∂l/∂q differs where OpenSim's wrapped path is not length-minimal), and DeGroote
    muscles (OpenSim constant set)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loader lists optional elements it ignores (display, wrap geometry)
        osim = load_osim(MODEL)
        if geometric:
            return MusculoskeletalModel(osim, GeometricPaths(osim, generalized_force_moment_arms=True))
    return MusculoskeletalModel(osim, paths or PolynomialPaths.load(PATHS))


def paths_covering(motion: Path, with_opensim: bool, cache_dir=None) -> PolynomialPaths:
    """trajopt/examples/arm26/paths.json when ``motion`` stays in its domain; otherwise paths refitted (OpenSim samples,
    a ±10 deg band around each frame, cached in the user cache directory) or, without OpenSim, a
    ``PathDomainError`` naming coordinate, frame and value."""
    paths = PolynomialPaths.load(PATHS)
    osim = load_model(paths).osim
    table = read_model_motion(motion, osim.multibody.coordinate_names,
                              tuple(c.name for c in osim.spec.coordinates if c.motion_type == "rotational"))
    sampler = None
    if with_opensim:
        sampler = OpenSimPathSampler(MODEL, progress=None)
    return paths_for_motion(paths, table.data, table.labels, table.time, str(motion), sampler, cache_dir=cache_dir)


def _paths_note(model, geometric: bool) -> list[str]:
    if not geometric:
        return []
    wrapped = list(model.paths.wrapped_muscles)
    return ["",
            "Paths: the model's geometric paths (`--paths geometric`, trajopt.model.paths.wrapping), not paths.json,",
            "with OpenSim's moment arms (computeMomentArm);",
            f"{', '.join(wrapped)} wrap over objects trajopt does not model yet: their paths are straight "
            f"lines here." if wrapped else "every wrap object is modelled."]


def _paths_description(geometric: bool, refitted: bool = False) -> str:
    if geometric:
        return "geometric muscle paths wrapped as OpenSim computes them, OpenSim's moment arms"
    return "polynomial muscle paths covering the motion (below)" if refitted else \
        "polynomial muscle paths (trajopt/examples/arm26/paths.json)"


def build_problem(motion=ELBOW_MOTION, force_length_velocity: bool = True, passive_force: bool = False,
                  cutoff_frequency: float | None = None, model: MusculoskeletalModel | None = None,
                  capacity_along_fiber: bool = False) -> StaticOptimization:
    """Static optimization of an arm26 motion with OpenSim's reference settings (reserves 1 N·m, p = 2);
    ``capacity_along_fiber``: OpenSim's DeGroote capacity, the active fiber force without cos α."""
    return StaticOptimization(
        model or load_model(), MotionProcessor(motion, cutoff_frequency=cutoff_frequency),
        residuals=Residuals(optimal_force=1.0, weight=1.0), activation_exponent=2.0,
        force_length_velocity=force_length_velocity, passive_force=passive_force,
        capacity_along_fiber=capacity_along_fiber,
    )


def _reference(name: str) -> Table:
    return read_table(REFERENCE / name)


def _solve(label: str, problem: StaticOptimization, out: Path, prefix: str) -> StaticOptimizationResult:
    start = time.perf_counter()
    result = problem.solve()
    result.write(out, prefix)
    print(f"  {label}: {result.status}, {result.iterations} IPOPT iterations, solve {result.solve_time * 1e3:.0f} ms "
          f"(with writing {(time.perf_counter() - start) * 1e3:.0f} ms), max |equality error| "
          f"{np.abs(result.equality_error).max():.1e}, max |residual| {np.abs(result.residual_forces).max():.3f}")
    return result


def _figures_elbow(out: Path, results: dict, inverse, id_reference: Table) -> None:
    figures = out / "figures"
    flv, noflv, passive = results["SO_FLV"], results["SO_noFLV"], results["SO_FLV_passive"]
    reference_noflv = _reference("SO_free_noFLV_activation.csv")
    reference_flv = _reference("SO_free_FLV_activation.csv")
    reference_force = _reference("SO_free_FLV_force.csv")
    muscles = flv.muscle_names
    def title(text: str, figure: int, note: str = "") -> str:
        return f"{text} ({PAPER}, Fig. {figure}{'; ' + note if note else ''})"

    plot_series(figures / "fig13_inverse_dynamics.png", title("Inverse dynamics, elbow flexion", 13), "N·m",
                inverse.times, inverse.generalized_force_labels, inverse.generalized_forces,
                id_reference.time, id_reference.select(inverse.generalized_force_labels).data)
    plot_series(figures / "fig14_activations_noFLV.png",
                title("Activations without force-length-velocity, no passive force", 14), "activation",
                noflv.times, muscles, noflv.activations, reference_noflv.time, reference_noflv.select(muscles).data)
    plot_series(figures / "fig15_activations_FLV.png",
                title("Activations with force-length-velocity, no passive force", 15, "OpenSim: Thelen muscles"),
                "activation", flv.times, muscles, flv.activations, reference_flv.time,
                reference_flv.select(muscles).data)
    plot_series(figures / "fig16_forces_FLV.png",
                title("Muscle forces with force-length-velocity, no passive force", 16),
                "N", flv.times, muscles, flv.muscle_forces, reference_force.time, reference_force.select(muscles).data)
    plot_series(figures / "fig17_activations_FLV_passive.png",
                title("Activations with force-length-velocity and passive force", 17, "no OpenSim SO counterpart"),
                "activation", passive.times, muscles, passive.activations,
                extra=("trajopt, no passive force", flv.times, flv.activations))
    plot_series(figures / "fig18_forces_FLV_passive.png",
                title("Muscle forces with force-length-velocity and passive force", 18), "N",
                passive.times, muscles, passive.muscle_forces,
                extra=("trajopt, no passive force", flv.times, flv.muscle_forces))
    plot_series(figures / "fig19_residuals.png", title("Residual actuators, FLV without passive force", 19), "N·m",
                flv.times, flv.reserve_names, flv.residual_forces, reference_flv.time,
                reference_flv.select(flv.reserve_names).data,
                extra=("trajopt, with passive force", passive.times, passive.residual_forces))
    plot_joint_reactions(figures / "fig20_joint_reactions.png", inverse, ("r_shoulder", "r_elbow"),
                         title("Joint reactions from inverse dynamics, muscle forces not applied", 20))


def _figures_ik(out: Path, result: StaticOptimizationResult, id_reference: Table) -> None:
    figures = out / "figures"
    inverse = result.inverse_dynamics
    reference = _reference("arm26_SO_filter6Hz_StaticOptimization_activation.sto")
    plot_series(figures / "ik_inverse_dynamics.png", "Inverse dynamics, arm26_InverseKinematics.mot, 6 Hz filter",
                "N·m", inverse.times, inverse.generalized_force_labels, inverse.generalized_forces,
                id_reference.time, id_reference.select(inverse.generalized_force_labels).data)
    plot_series(figures / "ik_activations_FLV.png",
                "Activations, arm26_InverseKinematics.mot, 6 Hz (OpenSim: Thelen muscles)", "activation",
                result.times, result.muscle_names, result.activations, reference.time,
                reference.select(result.muscle_names).data)
    plot_series(figures / "ik_residuals.png", "Residual actuators, arm26_InverseKinematics.mot", "N·m",
                result.times, result.reserve_names, result.residual_forces, reference.time,
                reference.select(result.reserve_names).data)


def _opensim_degroote(cases: dict, motion: Path, cutoff, flv: bool, out: Path) -> tuple[list[Row], Table]:
    """OpenSim Static Optimization of arm26 with DeGrooteFregly2016 muscles (rigid tendon), same settings, run
    once; a row per trajopt result of ``cases`` (case name -> result)."""
    reference = run_opensim_task("osim_static_optimization", {
        "model": str(MODEL), "motion": str(motion), "lowpass_cutoff": -1.0 if cutoff is None else cutoff,
        "degroote": True, "use_muscle_physiology": flv, "reserve_optimal_force": 1.0,
        "convergence_criterion": 1e-8, "max_iterations": 1000})
    labels = tuple(str(label) for label in reference["labels"])
    activation = Table(reference["times"], labels, reference["activations"], name="OpenSim DeGroote SO activation")
    force = Table(reference["times"], labels, reference["forces"], name="OpenSim DeGroote SO force")
    name = next(iter(cases)).replace(", ", "_").replace(" ", "_")
    write_csv(out / "opensim_degroote" / f"{name}_activation.csv", activation)
    write_csv(out / "opensim_degroote" / f"{name}_force.csv", force)
    rows = [compare(f"{case} vs OpenSim DeGroote (rigid tendon)", result, activation, force)
            for case, result in cases.items()]
    return rows, activation


def _reactions(out: Path, model: MusculoskeletalModel, result: StaticOptimizationResult,
               with_opensim: bool) -> list[str]:
    """Joint reactions with the static-optimization muscle forces applied (the .osim's wrapped paths), vs
    OpenSim's JointReaction loads with the same forces on its wrapped paths; summary lines."""
    kinematics = result.inverse_dynamics.kinematics
    with_muscles = muscle_joint_reactions(model, kinematics, result.muscle_forces)
    with_muscles.write(out / "elbow_flexion", "SO_FLV_joint_reactions_with_muscles")
    free = result.inverse_dynamics
    reference = None
    if with_opensim:
        reference = run_opensim_task("osim_joint_reaction_muscles", {
            "model": str(MODEL), "q": kinematics.q, "u": kinematics.u, "udot": kinematics.udot,
            "muscle_names": np.array(result.muscle_names), "muscle_forces": result.muscle_forces})
    lines = ["", "## Joint reactions with the muscle forces applied (elbow flexion, FLV, no passive force)", "",
             "trajopt applies the static-optimization muscle forces along the .osim's paths wrapped over cylinders",
             "and ellipsoids as OpenSim computes it, at the path and tangent points (wrap objects ignored: "
             f"{', '.join(with_muscles.wrapped_muscles) or 'none'}); OpenSim (child process)",
             "applies the same forces along its wrapped paths (JointReaction: parent on child, ground axes).", "",
             "| joint | max abs reaction force, OpenSim (N) | max abs Δ, trajopt with muscles (N) "
             "| max abs Δ, trajopt without muscles (N) |", "|---|---|---|---|"]
    for joint in ("r_shoulder", "r_elbow"):
        j = with_muscles.joint_names.index(joint)
        figure = out / "figures" / f"fig20b_{joint}_reaction_forces_with_muscles.png"
        plot_series(figure, f"{joint} reaction force on {with_muscles.child_bodies[j]} (ground axes), muscles applied",
                    "N", with_muscles.times, ("x", "y", "z"), with_muscles.forces[:, j],
                    None if reference is None else kinematics.times,
                    None if reference is None else reference["forces_ground"][:, j],
                    reference_name="OpenSim JointReaction (wrapped paths)",
                    ours_name="trajopt (wrapped paths)",
                    extra=("trajopt, muscles not applied", free.times, free.reaction_forces[:, j]))
        if reference is not None:
            opensim_forces = reference["forces_ground"][:, j]
            lines.append(f"| {joint} | {np.abs(opensim_forces).max():.1f} | "
                         f"{np.abs(with_muscles.forces[:, j] - opensim_forces).max():.1f} | "
                         f"{np.abs(free.reaction_forces[:, j] - opensim_forces).max():.1f} |")
    if reference is None:
        lines.append("| (opensim not installed: no comparison) | | | |")
    return lines


def _run_references(out: Path, with_opensim: bool, geometric: bool = False, why_no_opensim: str = "") -> int:
    with warnings.catch_warnings(record=True) as caught:  # filled as the run goes; its caveats go to summary.md
        warnings.simplefilter("always")
        return _references(out, with_opensim, caught, geometric, why_no_opensim)


def _references(out: Path, with_opensim: bool, caught: list, geometric: bool = False,
                why_no_opensim: str = "") -> int:
    start = time.perf_counter()
    print(f"arm26 static optimization: loading arm26 and its {'geometric' if geometric else 'polynomial'} paths ...")
    model = load_model(geometric=geometric)
    rows, id_rows = [], []

    print("elbow flexion 0 -> 90 deg (101 frames, no filter):")
    elbow = out / "elbow_flexion"
    cases = {
        "SO_noFLV": build_problem(ELBOW_MOTION, force_length_velocity=False, model=model),
        "SO_FLV": build_problem(ELBOW_MOTION, model=model),
        "SO_FLV_passive": build_problem(ELBOW_MOTION, passive_force=True, model=model),
    }
    results = {name: _solve(name, problem, elbow, name) for name, problem in cases.items()}
    id_reference = _reference("ID_joint_torques.csv")
    # InverseDynamicsTool's accelerations (2nd derivative of the coordinate splines); static
    # optimization uses the derivative of the speed splines, as OpenSim's does.
    inverse = motion_inverse_dynamics(model.osim, ELBOW_MOTION)
    inverse.write(elbow, "inverse_dynamics")
    id_rows.append(("elbow flexion (no filter)", inverse.times.size, float(np.abs(
        inverse.generalized_forces - id_reference.select(inverse.generalized_force_labels).data).max())))
    rows.append(compare("elbow, no FLV, no passive", results["SO_noFLV"],
                         _reference("SO_free_noFLV_activation.csv"), None))
    rows.append(compare("elbow, FLV, no passive", results["SO_FLV"], _reference("SO_free_FLV_activation.csv"),
                         _reference("SO_free_FLV_force.csv")))
    rows.append(compare("elbow, FLV + passive (no OpenSim counterpart)", results["SO_FLV_passive"], None, None))
    _figures_elbow(out, results, inverse, id_reference)

    print("arm26_InverseKinematics.mot (121 frames, 6 Hz low-pass):")
    ik = out / "ik_motion"
    result = _solve("SO_FLV_filter6Hz", build_problem(IK_MOTION, cutoff_frequency=6.0, model=model), ik,
                    "SO_FLV_filter6Hz")
    id_notes = []
    for cutoff, name in ((None, "arm26_ID_nofilter.sto"), (6.0, "arm26_ID_filter6Hz.sto")):
        reference = _reference(name)
        # the motion's frames only
        inverse = motion_inverse_dynamics(model.osim, MotionProcessor(IK_MOTION, cutoff_frequency=cutoff))
        inverse.write(ik, f"inverse_dynamics_{'filter6Hz' if cutoff else 'nofilter'}")
        compared = reference.time <= inverse.times[-1] + 1e-6
        if not np.allclose(reference.time[compared], inverse.times, atol=1e-6):
            raise RuntimeError(f"{name}: OpenSim's frames within the motion differ from trajopt's")
        if not compared.all():  # OpenSim's filtered run also reports into its padding past the motion's end
            id_notes.append(f"OpenSim's {name} continues {int((~compared).sum())} frames past the motion's end "
                            f"({inverse.times[-1]:.3g} s) to {reference.time[-1]:.3g} s, into its filter padding; "
                            f"only the motion's {inverse.times.size} frames are compared.")
        id_rows.append((f"arm26_InverseKinematics.mot ({'6 Hz filter' if cutoff else 'no filter'})",
                        inverse.times.size,
                        float(np.abs(inverse.generalized_forces
                                     - reference.select(inverse.generalized_force_labels).data[compared]).max())))
    rows.append(compare("IK motion, 6 Hz, FLV, no passive", result,
                         _reference("arm26_SO_filter6Hz_StaticOptimization_activation.sto"),
                         _reference("arm26_SO_filter6Hz_StaticOptimization_force.sto")))
    _figures_ik(out, result, _reference("arm26_ID_filter6Hz.sto"))

    if with_opensim:
        print("OpenSim Static Optimization, muscles replaced by DeGrooteFregly2016Muscle (rigid tendon) ...")
        along_fiber = _solve("SO_FLV_along_fiber", build_problem(ELBOW_MOTION, capacity_along_fiber=True,
                                                                 model=model), elbow, "SO_FLV_along_fiber")
        for cases, motion, cutoff, flv in (
                ({"elbow, FLV, no passive": results["SO_FLV"],
                  f"elbow, FLV, no passive, {ALONG_FIBER}": along_fiber}, ELBOW_MOTION, None, True),
                ({"elbow, no FLV, no passive": results["SO_noFLV"]}, ELBOW_MOTION, None, False),
                ({"IK motion, 6 Hz, FLV, no passive": result}, IK_MOTION, 6.0, True)):
            compared, activation = _opensim_degroote(cases, motion, cutoff, flv, out)
            rows += compared
            for row in compared:
                print(f"  {row.case}: max |Δ activation| {row.activation_max:.4f}, "
                      f"max |Δ reserve| {row.reserve_max:.4f} N·m")
            if motion == ELBOW_MOTION and flv:
                so = results["SO_FLV"]
                plot_series(out / "figures" / "fig15b_activations_FLV_vs_opensim_degroote.png",
                            "Activations with FLV, no passive force: OpenSim with DeGrooteFregly2016 muscles",
                            "activation", so.times, so.muscle_names, so.activations, activation.time,
                            activation.select(so.muscle_names).data, reference_name="OpenSim (DeGroote, rigid tendon)")
    else:
        print("opensim is not installed: no comparison with OpenSim's DeGroote static optimization")
    print("joint reactions with the muscle forces applied ...")
    extra_lines = list(_reactions(out, model, results["SO_FLV"], with_opensim)) + _paths_note(model, geometric)
    if not with_opensim:
        extra_lines += ["", f"OpenSim {why_no_opensim}: the comparisons are with OpenSim's stored outputs in "
                            "reference/ only (no DeGroote rerun, no joint-reaction check)."]
    caveats = _caveats(caught)
    if caveats:
        extra_lines = [*extra_lines, "", "## Caveats", "", *[f"- {c}" for c in caveats]]
    title = ("# arm26 static optimization vs OpenSim 4.6" if with_opensim else
             f"# arm26 static optimization vs OpenSim's stored reference outputs (OpenSim {why_no_opensim})")
    summary = write_summary(out, rows, id_rows, time.perf_counter() - start, extra_lines, title,
                             paths=_paths_description(geometric), id_notes=id_notes)
    print(summary.read_text())
    for caveat in caveats:
        print(f"caveat: {caveat.splitlines()[0][:300]}", file=sys.stderr)
    print(f"wrote {out} ({time.perf_counter() - start:.1f} s)")
    return 0


def _motion_notes(motion: Path, model: MusculoskeletalModel) -> list[str]:
    """What the motion file holds beyond (or short of) arm26's coordinates: each is a caveat of the run."""
    labels = read_motion(motion).labels
    extra = [label for label in labels if label not in model.coordinate_names]
    notes = []
    if extra:
        notes.append(f"{motion}: {len(extra)} column(s) that are not coordinates of arm26 were ignored: "
                     + first_names(extra))
    return notes


def _caveats(caught) -> list[str]:
    """The warnings of a run (extrapolated paths, frames the muscles cannot carry), once each, for summary.md."""
    kinds = (StaticOptimizationWarning,)
    return list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, kinds)))


def _run_motion(motion: Path, out: Path, cutoff: float | None, with_opensim: bool, geometric: bool = False,
                motion_notes=()) -> int:
    start = time.perf_counter()
    print(f"arm26 static optimization of {motion} ({f'{cutoff:g} Hz low-pass' if cutoff else 'no filter'}) ...")
    paths = None if geometric else paths_covering(motion, with_opensim)
    model = load_model(paths, geometric)
    if paths is not None:
        print(f"  muscle paths: {paths.domain.describe()[:160]}")
    caveats = [*motion_notes, *_motion_notes(motion, model)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        flv = _solve("SO_FLV", build_problem(motion, cutoff_frequency=cutoff, model=model), out, "SO_FLV")
        passive = _solve("SO_FLV_passive", build_problem(motion, passive_force=True, cutoff_frequency=cutoff,
                                                         model=model), out, "SO_FLV_passive")
    caveats += _caveats(caught)
    flv.inverse_dynamics.write(out, "inverse_dynamics")
    figures = out / "figures"
    inverse = flv.inverse_dynamics
    plot_series(figures / "inverse_dynamics.png", f"Inverse dynamics, {motion.name}", "N·m", inverse.times,
                inverse.generalized_force_labels, inverse.generalized_forces)
    plot_series(figures / "activations.png", f"Activations, {motion.name}", "activation", flv.times,
                flv.muscle_names, flv.activations, extra=("with passive force", passive.times, passive.activations))
    plot_series(figures / "forces.png", f"Muscle forces, {motion.name}", "N", flv.times, flv.muscle_names,
                flv.muscle_forces, extra=("with passive force", passive.times, passive.muscle_forces))
    plot_series(figures / "residuals.png", f"Residual actuators, {motion.name}", "N·m", flv.times,
                flv.reserve_names, flv.residual_forces,
                extra=("with passive force", passive.times, passive.residual_forces))
    plot_joint_reactions(figures / "joint_reactions.png", inverse, ("r_shoulder", "r_elbow"),
                         "Joint reactions from inverse dynamics, muscle forces not applied")
    rows = [compare("FLV, no passive", flv, None, None), compare("FLV + passive", passive, None, None)]
    if with_opensim:
        noflv = _solve("SO_noFLV", build_problem(motion, force_length_velocity=False, cutoff_frequency=cutoff,
                                                 model=model), out, "SO_noFLV")
        along_fiber = _solve("SO_FLV_along_fiber", build_problem(motion, cutoff_frequency=cutoff, model=model,
                                                                 capacity_along_fiber=True), out, "SO_FLV_along_fiber")
        rows += _opensim_degroote({"FLV, no passive": flv, f"FLV, no passive, {ALONG_FIBER}": along_fiber},
                                  motion, cutoff, True, out)[0]
        rows += _opensim_degroote({"no FLV, no passive": noflv}, motion, cutoff, False, out)[0]
    if paths is not None:
        worst = max(paths, key=lambda p: p.report.heldout_moment_arm_rmse if p.report else 0.0)
        extra = ["", f"Muscle paths: {paths.domain.describe()}.",
                 f"Largest held-out moment-arm RMS of the paths used: "
                 f"{worst.report.heldout_moment_arm_rmse * 1e3:.3f} mm ({worst.muscle})." if worst.report else ""]
    else:
        extra = _paths_note(model, geometric)
    if not with_opensim:
        extra += ["", "OpenSim is not installed (or --no-opensim): nothing is compared with OpenSim."]
    if caveats:
        extra += ["", "## Caveats", "", *[f"- {c}" for c in caveats]]
    title = f"# arm26 static optimization of {motion.name}" + (
        " vs OpenSim 4.6 (DeGroote static optimization, same motion)" if with_opensim else " (no OpenSim reference)")
    summary = write_summary(out, rows, [], time.perf_counter() - start, extra, title,
                             paths=_paths_description(geometric, refitted=paths is not None))
    print(summary.read_text())
    for caveat in caveats:
        print(f"caveat: {caveat.splitlines()[0][:300]}", file=sys.stderr)
    print(f"wrote {out} ({time.perf_counter() - start:.1f} s)")
    return 0 if flv.success and passive.success else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run arm26-static-optimization", description=description(__doc__))
    parser.add_argument("--motion", type=Path, help="another arm26 motion file (default: the two reference motions)")
    add_out(parser, COMMAND, f"with --motion ./trajopt_results/{COMMAND}_<motion file stem>")
    add_cutoff(parser)  # for --motion only: the reference motions use OpenSim's settings
    parser.add_argument("--no-opensim", action="store_true",
                        help="skip the comparison with OpenSim's DeGroote static optimization "
                             "(run when opensim is installed)")
    parser.add_argument("--paths", choices=("polynomial", "geometric"), default="polynomial",
                        help="muscle paths: trajopt/examples/arm26/paths.json (default) or the model's geometric "
                             "paths, wrapped as OpenSim computes it (cylinders and ellipsoids)")
    args = parser.parse_args(argv)
    if args.motion is None:
        if args.cutoff is not None:
            raise TrajoptInputError("--cutoff applies to --motion; the reference motions use OpenSim's settings "
                                    "(none for the elbow flexion, 6 Hz for arm26_InverseKinematics.mot)")
        why = "skipped: --no-opensim" if args.no_opensim else "" if opensim_available() else "not installed"
        return _run_references(fresh_output(args.out or default_output(COMMAND)), not why, args.paths == "geometric",
                               why)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loader lists optional elements it ignores
        checked = read_checked_motion(args.motion, rotational_ranges(load_osim(MODEL)))  # refuses implausible angles
    print(f"{args.motion}: {checked.unit.describe()}")
    for warning in checked.caveats:
        print(f"warning: {warning}", file=sys.stderr)
    motion = checked.table
    cutoff = check_cutoff(args.cutoff, motion)
    out = fresh_output(args.out or default_output(f"{COMMAND}_{args.motion.stem}"))
    return _run_motion(args.motion, out, cutoff, opensim_available() and not args.no_opensim,
                       args.paths == "geometric", [checked.unit.describe(), *checked.caveats])

if __name__ == "__main__":
    raise SystemExit(main())
