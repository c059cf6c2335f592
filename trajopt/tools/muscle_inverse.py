"""``trajopt muscle-inverse``: Moco's MocoInverse on any .osim and coordinates file, from the command line.

    trajopt muscle-inverse MODEL.osim COORDINATES.sto [--external-loads LOADS.xml] [--paths FILE]
        [--emg FILE] [--mesh-interval S] --out DIR

The model is processed as Moco's examples do (muscles as DeGrooteFregly2016 with rigid tendons unless
``--elastic-tendons``; ``--weld``, ``--residuals``, ``--reserves``, ``--ignore-passive-fiber-force``,
``--active-force-width-scale`` as the ModOps of the same names). Paths: ``--paths`` a trajopt polynomial paths
``.json`` or an OpenSim FunctionBasedPathSet ``.xml``; without it, the model's geometric paths (wrapped over
cylinders, spheres, ellipsoids and tori as OpenSim). Writes to DIR: the solution (``solution.sto``, ``activations.sto``,
``excitations.sto``, ``actuators.sto``, ``forces.sto``, ``joint_reactions.sto``, each also as .csv), figures,
and ``summary.md``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


from trajopt.analysis.couplers import CouplerConstraints
from trajopt.analysis.inverse_goals import EmgTracking
from trajopt.analysis.inverse_tendons import ElasticTendons, RigidTendons
from trajopt.analysis.muscle_inverse import MuscleDrivenInverse, mesh_intervals
from trajopt.analysis.reaction_goal import JointReactionGoal
from trajopt.errors import TrajoptInputError
from trajopt.analysis.external_loads_file import read_external_loads
from trajopt.io import MotionProcessor, read_motion, read_table
from trajopt.io.motion_units import CheckedMotion, read_checked_motion, rotational_ranges
from trajopt.musculoskeletal import MusculoskeletalModel
from trajopt.ocp import HermiteSimpson, Ipopt
from trajopt.musculoskeletal.operators import AddReserves, AddResiduals, DeGrooteMuscles, WeldJoints, load_processed
from trajopt.tools.common import Phases, add_forces_option

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "muscle-driven inverse simulation of a measured motion (Moco's MocoInverse)"


def read_paths(path, osim, generalized_force_moment_arms: bool = False):
    """Muscle paths from a file (.json: trajopt polynomial paths, piecewise or not, those over ``<joint>_Q1..Q3``
    evaluated on the model's ball and free joints; .xml: FunctionBasedPathSet), or geometric (with
    ``generalized_force_moment_arms`` OpenSim's computeMomentArm, else −∂l/∂q: ``trajopt.paths.geometric``)."""
    from trajopt.paths.geometric import GeometricPaths

    if path is None:
        return GeometricPaths(osim, generalized_force_moment_arms=generalized_force_moment_arms)
    path = Path(path)
    if path.suffix.lower() == ".json":
        from trajopt.paths.quaternion_paths import with_quaternion_joints
        from trajopt.paths.refit import load_paths

        # Polynomial, or piecewise along a motion or over the coordinate domain, by the file's format.
        return with_quaternion_joints(load_paths(path), osim.multibody)
    if path.suffix.lower() == ".xml":
        from trajopt.paths.function_based_xml import read_function_based_path_set

        return read_function_based_path_set(path)
    raise TrajoptInputError(f"{path}: paths file must be .json (trajopt polynomial paths) or .xml "
                            f"(OpenSim FunctionBasedPathSet), got '{path.suffix}'")


def load_inverse(model_file, coordinates_file, operators=(), external_loads=None, paths=None, window=None,
                 tendons=RigidTendons(), goals=()) -> MuscleDrivenInverse:
    """A ``MuscleDrivenInverse`` from files: the model after ``operators``, its couplers as constraints (dependent
    coordinates assembled from the motion), external loads applied, paths from ``read_paths``."""
    return load_checked_inverse(model_file, coordinates_file, operators, external_loads, paths, window, tendons,
                                goals)[0]


def load_checked_inverse(model_file, coordinates_file, operators=(), external_loads=None, paths=None, window=None,
                         tendons=RigidTendons(), goals=()) -> tuple[MuscleDrivenInverse, CheckedMotion]:
    """``load_inverse`` and the motion as read (``trajopt.io.motion_units``: the unit its angles were read in and
    caveats about it; implausible angles and non-finite values are refused)."""
    osim, couplings = load_processed(model_file, operators)
    if osim.spec.path_actuators:
        raise TrajoptInputError(f"{osim.spec.file}: PathActuator '{osim.spec.path_actuators[0].name}': the "
                                f"muscle-driven inverse takes muscles and coordinate actuators only (use "
                                f"trajopt.prediction.muscle_driven_problem(path_actuators=...) for path actuators)")
    checked = read_checked_motion(coordinates_file, rotational_ranges(osim))  # before the paths: bad data fail fast
    model = MusculoskeletalModel(osim, read_paths(paths, osim))
    constraints = CouplerConstraints(osim.multibody, couplings)
    motion = MotionProcessor(constraints.assemble(checked.table), window=window)
    from trajopt.musculoskeletal.model_forces import model_applied_forces

    loads = None if external_loads is None else read_external_loads(external_loads)
    inverse = MuscleDrivenInverse(model, motion, external_loads=loads, applied_forces=model_applied_forces(osim),
                                  constraints=constraints if couplings else None, tendons=tendons, goals=list(goals))
    return inverse, checked


def emg_goal(path, muscles, weight: float) -> EmgTracking:
    """Track every EMG column named after a model muscle with that muscle's excitation."""
    emg = read_table(path)
    columns = {m: m for m in muscles if m in emg.labels}
    if not columns:
        raise TrajoptInputError(f"{path}: no EMG column is named after a muscle of the model (columns: "
                                f"{list(emg.labels)})")
    return EmgTracking(emg, columns, weight=weight)


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
    parser.add_argument("--emg-weight", type=float, default=50.0, help="weight of the EMG tracking term (default 50, "
                                                                       "as Moco's example)")
    parser.add_argument("--mesh-interval", type=float, default=0.02,
                        help="mesh interval in s (default 0.02); at least 4 intervals over the window")
    parser.add_argument("--initial-time", type=float, help="start of the window (default: the motion's first time)")
    parser.add_argument("--final-time", type=float, help="end of the window (default: the motion's last time)")
    parser.add_argument("--weld", nargs="+", default=(), metavar="JOINT", help="joints to replace with welds")
    parser.add_argument("--residuals", nargs=3, type=float, metavar=("ROT", "TRANS", "BOUND"),
                        help="residual actuators on the ground joint: optimal forces (N·m, N) and control bound")
    parser.add_argument("--reserves", type=float, default=1.0,
                        help="optimal force of reserve actuators on every coordinate without one (default 1; 0: none)")
    parser.add_argument("--ignore-passive-fiber-force", action="store_true", help="muscles without passive fiber force")
    parser.add_argument("--active-force-width-scale", type=float, default=1.0,
                        help="scale of the active force-length curve's width (Moco's example: 1.5)")
    parser.add_argument("--elastic-tendons", action="store_true", help="compliant tendons (default: rigid)")
    parser.add_argument("--joint-reaction", nargs=2, action="append", default=[], metavar=("JOINT", "WEIGHT"),
                        help="also minimize the force (x, y in the parent frame) this joint applies to its parent "
                             "body, as Moco's MocoJointReactionGoal with measures force-x, force-y; needs geometric "
                             "paths (no --paths); repeat for several joints")
    parser.add_argument("--tolerance", type=float, default=1e-6, help="IPOPT tolerance (default 1e-6)")
    parser.add_argument("--max-iterations", type=int, default=3000, help="IPOPT iteration limit (default 3000)")
    parser.add_argument("--out", required=True, help="folder for the results (created)")
    parser.add_argument("--no-figures", action="store_true", help="write the tables and summary only, no PNG figures")
    return parser


def _number(text: str, what: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise TrajoptInputError(f"{what} must be a number, got {text!r}") from None


def operators_from(args) -> list:
    from trajopt.tools.common import forces_operators

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
    from trajopt.reports.muscle_inverse import write_report

    args = _parser().parse_args(argv)
    if not (args.mesh_interval > 0):
        raise TrajoptInputError(f"--mesh-interval must be > 0 s, got {args.mesh_interval}")
    phases = Phases("trajopt muscle-inverse")
    window = None
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
                       "ignored: " + ", ".join(extra[:6]) + (f" (+{len(extra) - 6} more)" if len(extra) > 6 else ""))
    motion_lines = [f"Motion: {args.coordinates}, {checked.unit.describe()}.", ""]
    if checked.caveats:
        motion_lines += ["**Warnings**", ""] + [f"- {w}" for w in checked.caveats] + [""]
    with phases.phase("write files", "tables" + ("" if args.no_figures else " and figures")):
        folder = write_report(Path(args.out), solution,
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
