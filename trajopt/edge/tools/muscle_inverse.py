"""``trajopt muscle-inverse``: Moco's MocoInverse on any .osim and coordinates file, from the command line.

    trajopt muscle-inverse MODEL.osim COORDINATES.sto [--external-loads LOADS.xml] [--paths FILE]
        [--emg FILE] [--window T0 T1] [--mesh-interval S] [--out DIR]

The model is processed as Moco's examples do (muscles as DeGrooteFregly2016 with rigid tendons unless
``--elastic-tendons``; ``--weld``, ``--residuals``, ``--reserves``, ``--ignore-passive-fiber-force``,
``--active-force-width-scale`` as the ModOps of the same names). Paths: ``--paths`` a trajopt polynomial paths
``.json`` or an OpenSim FunctionBasedPathSet ``.xml``; without it, the model's geometric paths (wrapped over
cylinders, spheres, ellipsoids and tori as OpenSim). Writes to DIR: the solution (``solution.sto``, ``activations.sto``,
``excitations.sto``, ``actuators.sto``, ``forces.sto``, ``joint_reactions.sto``), figures,
and ``summary.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trajopt.studies.analysis.inverse_tendons import ElasticTendons, RigidTendons
from trajopt.studies.analysis.muscle_inverse import mesh_intervals
from trajopt.studies.analysis.muscle_inverse_files import emg_goal, load_checked_inverse
from trajopt.studies.analysis.reaction_goal import JointReactionGoal
from trajopt.edge.cli.options import (NON_NEGATIVE, POSITIVE, add_elastic_tendons, add_max_iterations,
                                      add_mesh_interval, add_no_figures, add_out, add_tolerance, add_window,
                                      check_mesh_interval, check_window, out_folder)
from trajopt.errors import TrajoptInputError, first_names
from trajopt.model.io import read_motion, read_table
from trajopt.core.ocp import HermiteSimpson, Ipopt
from trajopt.model.musculoskeletal.operators import AddReserves, AddResiduals, DeGrooteMuscles, WeldJoints
from trajopt.edge.reports.muscle_inverse import write_report
from trajopt.edge.tools.common import Phases, add_forces_option, forces_operators

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "muscle-driven inverse simulation of a measured motion (Moco's MocoInverse)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trajopt muscle-inverse",
        description="Muscle-driven inverse simulation of a measured motion (Moco's MocoInverse): the motion is "
                    "prescribed; muscles with activation dynamics and actuators reproduce it with minimum effort.")
    parser.add_argument("model", help="the .osim model")
    parser.add_argument("coordinates", help="coordinates file (.sto/.mot; degrees or radians as its header says)")
    parser.add_argument("--external-loads", metavar="XML", help="OpenSim ExternalLoads .xml (e.g. ground reactions)")
    add_forces_option(parser)
    parser.add_argument("--paths", metavar="FILE", help="muscle paths: trajopt .json or OpenSim FunctionBasedPathSet "
                                                        ".xml (default: the model's geometric paths)")
    parser.add_argument("--emg", metavar="FILE", help="EMG table; columns named after muscles are tracked by their "
                                                      "excitations")
    parser.add_argument("--emg-weight", type=NON_NEGATIVE, default=50.0,
                        help="weight of the EMG tracking term (default 50, as Moco's example)")
    add_mesh_interval(parser)
    add_window(parser)
    # Earlier spellings of the window's two ends, each alone (the other end is the motion's).
    parser.add_argument("--initial-time", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--final-time", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--weld", nargs="+", default=(), metavar="JOINT", help="joints to replace with welds")
    parser.add_argument("--residuals", nargs=3, type=POSITIVE, metavar=("ROT", "TRANS", "BOUND"),
                        help="residual actuators on the ground joint: optimal forces (N·m, N) and control bound")
    parser.add_argument("--reserves", type=NON_NEGATIVE, default=1.0,
                        help="optimal force of reserve actuators on every coordinate without one (default 1; 0: none)")
    parser.add_argument("--ignore-passive-fiber-force", action="store_true", help="muscles without passive fiber force")
    parser.add_argument("--active-force-width-scale", type=float, default=1.0,
                        help="scale of the active force-length curve's width (Moco's example: 1.5)")
    add_elastic_tendons(parser)
    parser.add_argument("--joint-reaction", nargs=2, action="append", default=[], metavar=("JOINT", "WEIGHT"),
                        help="also minimize the force (x, y in the parent frame) this joint applies to its parent "
                             "body, as Moco's MocoJointReactionGoal with measures force-x, force-y; the muscle "
                             "tensions act along the model's geometric paths (with --paths, whose moment arms differ, "
                             "a note says so); repeat for several joints")
    add_tolerance(parser, 1e-6)
    add_max_iterations(parser, 3000)
    add_out(parser, "muscle-inverse")
    add_no_figures(parser)
    return parser


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise TrajoptInputError(f"{what} must be a number, got {text!r}") from None


def operators_from(args) -> list:
    operators = []
    if args.weld:
        operators.append(WeldJoints(tuple(args.weld)))
    if args.residuals:
        operators.append(AddResiduals(args.residuals[0], args.residuals[1], args.residuals[2]))
    operators.append(DeGrooteMuscles(args.ignore_passive_fiber_force, args.active_force_width_scale))
    if args.reserves:
        operators.append(AddReserves(args.reserves))
    return operators + forces_operators(args)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    check_mesh_interval(args.mesh_interval)
    out = out_folder(args.out, create=False)  # a file name is refused before the solve
    phases = Phases("trajopt muscle-inverse")
    window = check_window(args.window)
    if window is not None and (args.initial_time is not None or args.final_time is not None):
        raise TrajoptInputError("--window: give the window once (not also --initial-time or --final-time)")
    if args.initial_time is not None or args.final_time is not None:
        table = read_table(args.coordinates)
        window = (table.time[0] if args.initial_time is None else args.initial_time,
                  table.time[-1] if args.final_time is None else args.final_time)
    tendons = ElasticTendons() if args.elastic_tendons else RigidTendons()
    with phases.phase("load model and data", f"{args.model}, {args.coordinates}, paths "
                                             f"{args.paths or 'geometric, wrapped as OpenSim'}"):
        inverse, checked = load_checked_inverse(args.model, args.coordinates, operators_from(args),
                                                args.external_loads, args.paths, window, tendons)
        if args.emg:
            inverse.goals.append(emg_goal(args.emg, inverse.model.muscle_names, args.emg_weight))
        goal_caveats = []
        for joint, weight in args.joint_reaction:
            goal = JointReactionGoal(joint, weight=_number(weight, "--joint-reaction weight"), forces=(0, 1),
                                     moments=())
            goal.acting_muscles(inverse.model)  # refuses unknown joints and ignored wrap objects before the solve
            goal_caveats += goal.caveats(inverse.model)
            inverse.goals.append(goal)
        intervals = mesh_intervals(inverse.duration, args.mesh_interval)
    for warning in checked.caveats:
        print(f"warning: {warning}", file=sys.stderr)
    print(f"trajopt muscle-inverse: {len(inverse.model.muscle_names)} muscles, "
          f"{len(inverse.model.coordinate_actuators)} actuators, "
          f"t = {inverse.initial_time:g}..{inverse.final_time:g} s; "
          f"solving (IPOPT iterations below)", flush=True)
    with phases.phase("build and solve", f"{intervals} mesh intervals"):
        solution = inverse.solve(HermiteSimpson(intervals),
                                 Ipopt(tol=args.tolerance, print_level=5, max_iterations=args.max_iterations))
    caveats = list(inverse.model.notes) + goal_caveats
    extra = [label for label in read_motion(args.coordinates).labels
             if label not in inverse.model.coordinate_names and not label.endswith("/speed")]
    if extra:
        caveats.append(f"{args.coordinates}: {len(extra)} column(s) that are not coordinates of the model were "
                       "ignored: " + first_names(extra))
    motion_lines = [f"Motion: {args.coordinates}, {checked.unit.describe()}.", ""]
    if checked.caveats:
        motion_lines += ["**Warnings**", ""] + [f"- {w}" for w in checked.caveats] + [""]
    with phases.phase("write files", "tables" + ("" if args.no_figures else " and figures")):
        folder = write_report(out, solution,
                              title=f"Muscle-driven inverse: {Path(args.coordinates).name}",
                              timings=dict(phases.seconds), caveats=caveats, sections=lambda folder: motion_lines,
                              figures=not args.no_figures)
    with open(folder / "summary.md", "a") as summary:
        summary.write(f"Wall time: {phases.describe()}.\n")
    for caveat in caveats:
        print(f"note: {caveat}", file=sys.stderr)
    if not solution.success:
        print(f"trajopt muscle-inverse: IPOPT did not converge ({solution.status}); worst constraint "
              f"{solution.worst_constraint}; partial result in {folder}", file=sys.stderr)
    print(f"{solution.status}: objective {solution.objective:.6g}, {solution.iterations} iterations, "
          f"{phases.total():.1f} s ({checked.unit.describe()}); results in {folder}")
    return 0 if solution.success else 1
