"""``trajopt muscle-track``: muscle-driven tracking of measured walking with foot contact (Moco's MocoTrack).

    trajopt muscle-track MODEL.osim COORDINATES.sto [--grf GRF.mot [--grf-weight W]] [--contact CONTACT.xml]
        [--emg FILE] [--states-weight W] [--window T0 T1] [--mesh-interval S] [--elastic-tendons] [--out DIR]

The model's muscles become DeGrooteFregly2016 muscles with rigid tendons, or compliant ones with
``--elastic-tendons`` (Moco's ModOps:
``--ignore-passive-fiber-force``, ``--active-force-width-scale``, ``--weld``); its SmoothSphereHalfSpaceForces, and
those of ``--contact`` files (a ContactGeometrySet and a ForceSet, or one file holding both), are the feet's
contacts; ExpressionBasedCoordinateForces of the model (and of ``--forces``) act as passive moments.
``trajopt.studies.gait.muscle_tracking.MuscleDrivenTracking`` tracks the coordinates and their splined speeds over the
window, the measured ground reactions (``--grf``, columns ``ground_force_{r,l}_v{x,y,z}``) through the contacts,
EMG columns named after muscles, with excitation effort; residual actuators on the pelvis only with
``--residual-weight W``. Writes to DIR: ``solution.sto`` (OpenSim labels), ``activations.sto``, ``ground_reactions.sto``
(contact forces beside the measured ones), ``summary.json`` and ``summary.md`` (status, objective, iterations, wall
time, RMS tracking errors per coordinate and force).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from trajopt.edge.cli.options import (NON_NEGATIVE, POSITIVE, add_cutoff, add_elastic_tendons, add_max_iterations,
                                      add_mesh_interval, add_out, add_tolerance, add_window, check_mesh_interval,
                                      check_window, out_folder)
from trajopt.model.paths.domain_report import print_path_domain_warning
from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.tracking import ReferenceInterpolation, TrackingWeights
from trajopt.model.io.motion_units import CheckedMotion, read_checked_motion, rotational_ranges, translational_ranges
from trajopt.model.io.motion_processor import MotionProcessor
from trajopt.model.io.tables import write_sto
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.musculoskeletal.operators import (
    AddContactGeometry,
    DeGrooteMuscles,
    WeldJoints,
    load_processed,
)
from trajopt.core.ocp import Ipopt, ResidualCoordinates, Residuals
from trajopt.model.osim.expression_forces import generalized_forces_function
from trajopt.studies.prediction.tendon_dynamics import ElasticTendons, RigidTendons
from trajopt.table import Table
from trajopt.edge.tools.common import add_forces_option, check_cutoff, forces_operators, output_folder
from trajopt.model.paths.files import read_paths

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "muscle-driven tracking of measured walking with foot contact (Moco's MocoTrack)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trajopt muscle-track",
        description="Muscle-driven tracking of a measured motion with foot contact (Moco's MocoTrack): coordinates, "
                    "their speeds and the ground reactions are tracked with minimum excitation effort.")
    parser.add_argument("model", help="the .osim model")
    parser.add_argument("coordinates", help="coordinates file (.sto/.mot; degrees or radians as its header says)")
    parser.add_argument("--grf", metavar="FILE", help="measured ground reactions (.mot/.sto, columns "
                                                      "ground_force_{r,l}_v{x,y,z}) tracked through the contacts")
    parser.add_argument("--grf-weight", type=NON_NEGATIVE, default=1.0,
                        help="weight of the ground reaction term (forces / body weight; default 1)")
    parser.add_argument("--grf-axes", default="xyz", help="force components tracked (default xyz; 2D models: xy)")
    parser.add_argument("--contact", action="append", default=[], metavar="XML",
                        help="contact spheres and SmoothSphereHalfSpaceForces to add (a ContactGeometrySet .xml, a "
                             "ForceSet .xml, or one file with both); repeat for two files")
    parser.add_argument("--emg", metavar="FILE", help="normalized EMG; columns named after muscles are tracked")
    parser.add_argument("--emg-weight", type=NON_NEGATIVE, default=1.0, help="weight of the EMG term (default 1)")
    parser.add_argument("--states-weight", type=NON_NEGATIVE, default=10.0,
                        help="weight of the coordinate and speed tracking terms (default 10)")
    parser.add_argument("--effort-weight", type=NON_NEGATIVE, default=10.0,
                        help="weight of the excitation effort (default 10)")
    parser.add_argument("--actuator-weight", type=NON_NEGATIVE, default=1e-4,
                        help="weight of the coordinate actuators' controls (default 1e-4)")
    parser.add_argument("--residual-weight", type=POSITIVE, metavar="W",
                        help="residual actuators on the pelvis (joints attached to ground) with this weight "
                             "(default: none)")
    add_window(parser)
    add_mesh_interval(parser)
    add_cutoff(parser, "--lowpass")
    parser.add_argument("--paths", metavar="FILE", help="muscle paths: trajopt .json or OpenSim FunctionBasedPathSet "
                                                        ".xml (default: the model's geometric paths)")
    add_forces_option(parser)
    parser.add_argument("--weld", nargs="+", default=(), metavar="JOINT", help="joints to replace with welds")
    parser.add_argument("--ignore-passive-fiber-force", action="store_true", help="muscles without passive fiber force")
    parser.add_argument("--active-force-width-scale", type=float, default=1.0,
                        help="scale of the active force-length curve's width (Moco's example: 1.5)")
    add_elastic_tendons(parser)
    parser.add_argument("--reference", choices=tuple(REFERENCES), default="linear",
                        help="how the tracked coordinates, speeds and GRFs are read between their frames: linear "
                             "(straight lines between the filtered frames, the default) or quintic-splines (as "
                             "MocoTrack: natural quintic splines through the frames, speeds their derivatives, "
                             "the motion filtered as Moco's TabOpLowPassFilter when --cutoff is given)")
    add_tolerance(parser, 1e-4)
    add_max_iterations(parser, 1000)
    add_out(parser, "muscle-track")
    return parser


REFERENCES = {"linear": ReferenceInterpolation.LINEAR, "quintic-splines": ReferenceInterpolation.QUINTIC_SPLINES}


def load_tracking(args) -> MuscleDrivenTracking:
    """The study from the command's options (files read, model processed)."""
    return load_checked_tracking(args)[0]


def load_checked_tracking(args) -> tuple[MuscleDrivenTracking, CheckedMotion]:
    """``load_tracking`` and the coordinates as read (``trajopt.model.io.motion_units``: the unit the angles were read
    in and caveats about it; implausible angles and non-finite values are refused before the paths are built)."""
    if len(args.contact) > 2:
        raise TrajoptInputError(f"--contact: give at most two files (geometry and forces), got {len(args.contact)}")
    axes = tuple(args.grf_axes)
    if not axes or any(a not in "xyz" for a in axes) or len(set(axes)) != len(axes):
        raise TrajoptInputError(f"--grf-axes must be letters among x, y, z, got {args.grf_axes!r}")
    operators = [WeldJoints(tuple(args.weld))] if args.weld else []
    operators.append(DeGrooteMuscles(args.ignore_passive_fiber_force, args.active_force_width_scale))
    if args.contact:
        operators.append(AddContactGeometry(*args.contact))
    osim, couplings = load_processed(args.model, operators + forces_operators(args))
    if couplings:
        raise TrajoptInputError(f"{args.model}: CoordinateCouplerConstraints {[c.dependent for c in couplings]} are "
                                f"not held by muscle-track; weld their joints (--weld)")
    checked = read_checked_motion(args.coordinates, rotational_ranges(osim), translations=translational_ranges(osim))
    model = MusculoskeletalModel(osim, read_paths(args.paths, osim))
    forces = osim.spec.expression_forces
    passive = generalized_forces_function(osim.multibody, forces) if forces else None
    weights = TrackingWeights(coordinates=args.states_weight, ground_reactions=args.grf_weight,
                              excitations=args.effort_weight, actuator_controls=args.actuator_weight,
                              emg=args.emg_weight)
    window = check_window(args.window)
    motion = MotionProcessor(checked.table, cutoff_frequency=check_cutoff(args.cutoff, checked.table),
                             window=None if window is None else tuple(window))
    study = MuscleDrivenTracking(model, motion, ground_reactions=args.grf, grf_axes=axes, emg=args.emg,
                                 weights=weights, mesh_interval=check_mesh_interval(args.mesh_interval),
                                 passive=passive, residuals=None if args.residual_weight is None else Residuals(
                                     100.0, 10.0, args.residual_weight, ResidualCoordinates.GROUND),
                                 tendons=ElasticTendons() if args.elastic_tendons else RigidTendons(),
                                 reference_interpolation=REFERENCES[args.reference])
    return study, checked


def _side_by_side(model: Table, measured: Table) -> Table:
    labels = tuple(model.labels) + tuple(f"measured_{label}" for label in measured.labels)
    return Table(model.time, labels, np.hstack([model.data, measured.data]), False, "ground_reactions")


def summary_of(result, model, coordinates, grf, weights: dict, wall_time: float, motion: CheckedMotion | None = None
               ) -> dict:
    """What summary.json holds: the run, its status and the RMS tracking errors (rad or m; N); with ``motion``, the
    unit its angles were read in and the warnings about it; the solution against its muscle paths' domain (its
    warning printed when it leaves it)."""
    study = result.study
    domain = print_path_domain_warning(result.path_domain_report())
    return {"model": str(model), "coordinates": str(coordinates), "grf": None if grf is None else str(grf),
            "window": [study.initial_time, study.final_time],
            "mesh_intervals": result.solution.discrete.transcription.intervals,
            "status": result.status, "success": result.success, "objective": result.objective,
            "iterations": result.iterations, "body_weight_N": study.body_weight, "weights": weights,
            "reference": study.reference_interpolation.value,
            "coordinate_rms": result.coordinate_errors(), "ground_reaction_rms_N": result.ground_reaction_errors(),
            "wall_time_s": wall_time, "path_domain": domain.to_json(), "path_domain_sentence": domain.sentence(),
            **({} if motion is None else {"angles": motion.unit.describe(), "warnings": list(motion.caveats)})}


def write_outputs(folder: Path, result, summary: dict) -> None:
    write_sto(folder / "solution.sto", result.table())
    write_sto(folder / "activations.sto", result.activations())
    grf = result.ground_reactions()
    if grf is not None:
        write_sto(folder / "ground_reactions.sto",
                  _side_by_side(grf, result.study.measured_ground_reactions(result.time)))
    (folder / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    rotational = set(result.study.model.rotational_coordinates)
    lines = [f"# Muscle-driven tracking: {summary['coordinates']}", "",
             (f"- model: `{summary['model']}`; window {summary['window'][0]:g}-{summary['window'][1]:g} s, "
              f"{summary['mesh_intervals']} Hermite-Simpson mesh intervals"),
             (f"- status: **{summary['status']}**; objective {summary['objective']:.6g}; {summary['iterations']} "
              f"iterations; wall time of the whole run {summary['wall_time_s']:.1f} s"),
             f"- weights: {', '.join(f'{k} {v:g}' for k, v in summary['weights'].items() if v is not None)}",
             f"- reference between the motion's frames: {summary['reference']}"
             + (" (MocoTrack's)" if summary["reference"] == ReferenceInterpolation.QUINTIC_SPLINES.value else ""),
             *([f"- coordinates: {summary['angles']}"] if "angles" in summary else []),
             f"- muscle paths: {summary['path_domain_sentence']}",
             *[f"- warning: {warning}" for warning in summary.get("warnings", ())], "",
             "## Tracking errors (RMS over the window)", "", "| coordinate | RMS |", "|---|---|"]
    for name, value in summary["coordinate_rms"].items():
        shown = f"{np.degrees(value):.3g} deg" if name in rotational else f"{value * 1000:.3g} mm"
        lines.append(f"| {name} | {shown} |")
    if summary["ground_reaction_rms_N"]:
        lines += ["", "| ground reaction | RMS (N) | RMS (% body weight) |", "|---|---|---|"]
        for name, value in summary["ground_reaction_rms_N"].items():
            lines.append(f"| {name} | {value:.3g} | {100 * value / summary['body_weight_N']:.3g} |")
    lines += ["", "Files: `solution.sto` (OpenSim state and control paths), `activations.sto`"
              + (", `ground_reactions.sto` (contact forces and `measured_` columns)" if grf is not None else "")
              + ", `summary.json`.", ""]
    (folder / "summary.md").write_text("\n".join(lines))


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    out_folder(args.out, create=False)  # a file name is refused before the model is read
    started = time.perf_counter()
    study, checked = load_checked_tracking(args)
    for warning in checked.caveats:
        print(f"warning: {warning}", file=sys.stderr)
    folder = output_folder(args.out)
    transcription = study.transcription()
    print(f"trajopt muscle-track: {len(study.model.muscle_names)} muscles, {len(study.tracked_coordinates)} tracked "
          f"coordinates, t = {study.initial_time:g}..{study.final_time:g} s, {transcription.intervals} mesh "
          f"intervals; solving (IPOPT iterations below)", flush=True)
    solver = Ipopt(tol=args.tolerance, max_iterations=args.max_iterations, print_level=5,
                   options={"constr_viol_tol": args.tolerance})
    result = study.solve(transcription, solver)
    weights = {"states": args.states_weight, "grf": args.grf_weight if args.grf else None,
               "effort": args.effort_weight, "actuators": args.actuator_weight,
               "emg": args.emg_weight if args.emg else None, "residuals": args.residual_weight}
    summary = summary_of(result, args.model, args.coordinates, args.grf, weights, time.perf_counter() - started,
                         checked)
    write_outputs(folder, result, summary)
    if not result.success:
        print(f"trajopt muscle-track: IPOPT did not converge ({result.status}); worst constraint "
              f"{result.solution.worst_constraint}; partial result in {folder}", file=sys.stderr)
    print(f"{result.status}: objective {result.objective:.6g}, {result.iterations} iterations, "
          f"{summary['wall_time_s']:.1f} s ({checked.unit.describe()}); results in {folder}")
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
