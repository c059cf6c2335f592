"""Moco's exampleMocoInverse on example3DWalking, in trajopt: ``trajopt run walk3d-inverse``.

The problem is Moco's (``moco_inverse_reference/run_inverse.py``): subject_walk_scaled.osim with the GRFs of
grf_walk.xml, mtp welded, pelvis residuals (250 N·m, 50 N, controls ±1), DeGroote muscles with rigid tendons,
no passive fiber force, active force-length width ×1.5, OpenSim's FunctionBasedPathSet paths, reserves of 1 N·m
on every other coordinate, coordinates.sto prescribed on t = 0.48..1.61 s, Hermite-Simpson with a 0.02 s mesh
interval. Variants: ``--emg`` adds Moco's EMG tracking (weight 50, right soleus, gastrocnemii and tibialis
anterior, EMG scaled by Perry and Burnfield 2010 peaks), ``--elastic-tendons`` compliant tendons,
``--knee-reaction WEIGHT`` Moco's MocoJointReactionGoal on both knees beside the effort (the muscles pull on the
bodies along the .osim's wrapped geometric paths; compared with the effort-only solution).
Writes the solution, activations vs Moco's solutions (and EMG), and a summary with the settings table.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_elastic_tendons, add_mesh_interval, add_out
from trajopt.studies.analysis.inverse_goals import EmgTracking
from trajopt.studies.analysis.inverse_tendons import ElasticTendons, RigidTendons
from trajopt.studies.analysis.muscle_inverse import mesh_intervals
from trajopt.core.ocp.transcriptions import MOCO_MESH_INTERVAL
from trajopt.studies.analysis.reaction_goal import JointReactionGoal
from trajopt.model.io import read_table
from trajopt.model.io.output import default_output, fresh_output
from trajopt.core.ocp import HermiteSimpson, Ipopt
from trajopt.model.musculoskeletal.operators import AddReserves, AddResiduals, DeGrooteMuscles, WeldJoints
from trajopt.studies.analysis.muscle_inverse_files import load_inverse
from trajopt.edge.reports.muscle_inverse import reaction_goal_section, write_report

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = ("Moco's 3D walking MocoInverse (80 muscles, GRFs, function-based paths); "
               "--emg, --elastic-tendons, --knee-reaction")

HERE = Path(__file__).parent
MODEL = HERE / "subject_walk_scaled.osim"
COORDINATES = HERE / "coordinates.sto"
LOADS = HERE / "grf_walk.xml"
PATHS = HERE / "subject_walk_scaled_FunctionBasedPathSet.xml"
EMG = HERE / "electromyography.sto"
REFERENCE = HERE / "moco_inverse_reference"
WINDOW = (0.48, 1.61)
COMMAND = "walk3d-inverse"  # its default output folder is named after the command
KNEES = ("walker_knee_r", "walker_knee_l")
# Moco's example: right-leg excitations track EMG, scaled to peak levels (Perry and Burnfield 2010).
EMG_COLUMNS = {"soleus_r": "soleus", "gasmed_r": "gastrocnemius", "gaslat_r": "gastrocnemius",
               "tibant_r": "tibialis_anterior"}
EMG_SCALES = {"soleus": 0.77, "gastrocnemius": 0.87, "tibialis_anterior": 0.37}

OPERATORS = (WeldJoints(("mtp_r", "mtp_l")), AddResiduals(250.0, 50.0, 1.0),
             DeGrooteMuscles(ignore_passive_fiber_force=True, active_force_width_scale=1.5), AddReserves(1.0))

SETTINGS = [
    ("model", "subject_walk_scaled.osim + ModelProcessor operators below", "same (run_inverse.py)"),
    ("external loads", "grf_walk.xml (ExternalForce: natural cubic spline, as GCVSpline degree 3)",
     "ModOpAddExternalLoads"),
    ("welded joints", "mtp_r, mtp_l", "ModOpReplaceJointsWithWelds"),
    ("residuals", "pelvis: 250 N·m rotations, 50 N translations, controls in [-1, 1]", "ModOpAddResiduals(250, 50, 1)"),
    ("muscles", "DeGroote 2016 (OpenSim constants), rigid tendon, no passive fiber force, width x1.5",
     "ModOpIgnoreTendonCompliance, ModOpReplaceMusclesWithDeGrooteFregly2016, ModOpIgnorePassiveFiberForcesDGF, "
     "ModOpScaleActiveFiberForceCurveWidthDGF(1.5)"),
    ("paths", "subject_walk_scaled_FunctionBasedPathSet.xml (MultivariatePolynomialFunction)",
     "ModOpReplacePathsWithFunctionBasedPaths"),
    ("reserves", "1 N·m, unbounded, every unlocked independent coordinate without an actuator", "ModOpAddReserves(1)"),
    ("kinematics", "coordinates.sto, patella from its couplers, natural quintic splines (q, u, u̇)",
     "TableProcessor + PositionMotion (GCVSpline degree 5, assembled)"),
    ("kinematic constraints", "2 patellofemoral couplers, a multiplier each at every grid point", "2 multipliers"),
    ("time window", "0.48..1.61 s", "same"),
    ("transcription", "Hermite-Simpson, 57 intervals (mesh interval 0.02 s), free midpoint controls",
     "MocoCasADiSolver defaults, interpolate_control_midpoints false"),
    ("activation dynamics", "De Groote 2016, muscle time constants (0.01/0.04 s), tanh smoothing 0.1", "same"),
    ("objective", "∫ Σ excitation² + Σ actuator control² dt (Simpson); initial activation = excitation",
     "MocoControlGoal (reserves weight 1), MocoInitialActivationGoal"),
    ("bounds", "activations and excitations in [min_control, max_control] = [0.01, 1]", "same"),
    ("multibody dynamics", "generalized-force balance at every grid point (implicit)", "implicit mode"),
    ("solver", "IPOPT, exact Hessian, MUMPS (METIS, no MC64 permutation), tolerance 1e-6",
     "IPOPT, finite differences, tolerance 1e-3 (reference run) and 1e-5 (tightened run)"),
]


def build(emg=None, elastic_tendons: bool = False, mesh_interval: float = MOCO_MESH_INTERVAL):
    """The MuscleDrivenInverse of Moco's example (optionally with EMG tracking or elastic tendons)."""
    goals = [EmgTracking(read_table(emg), EMG_COLUMNS, EMG_SCALES, weight=50.0)] if emg else []
    return load_inverse(MODEL, COORDINATES, OPERATORS, LOADS, PATHS, WINDOW,
                        ElasticTendons() if elastic_tendons else RigidTendons(), goals)


# MUMPS without its maximum-transversal permutation and scaling (MC64): on this KKT matrix it pairs rows into 2x2
# pivots and METIS then orders the compressed graph, with more fill and floating-point operations than METIS on the
# matrix itself; same iterates and optimum (`trajopt bench linear-solvers`, results/benchmarks/README.md).
MUMPS_SETTINGS = {"mumps_permuting_scaling": 0}


def solver_settings(tolerance: float = 1e-6, print_level: int = 5) -> Ipopt:
    """The command's IPOPT settings (exact Hessian, MUMPS with trajopt's defaults and `MUMPS_SETTINGS`)."""
    return Ipopt(tol=tolerance, print_level=print_level, options=dict(MUMPS_SETTINGS))


def solve(inverse, mesh_interval: float = MOCO_MESH_INTERVAL, tolerance: float = 1e-6, print_level: int = 5,
          settings: Ipopt | None = None):
    """Solve on Moco's mesh with the command's settings (or ``settings``)."""
    return inverse.solve(HermiteSimpson(mesh_intervals(inverse.duration, mesh_interval)),
                         settings or solver_settings(tolerance, print_level))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run walk3d-inverse", description=description(__doc__))
    parser.add_argument("--emg", nargs="?", const=str(EMG), metavar="FILE",
                        help="add Moco's EMG tracking goal (weight 50) on this EMG table's soleus, gastrocnemius and "
                             "tibialis_anterior columns (default: Moco's electromyography.sto)")
    add_elastic_tendons(parser)
    parser.add_argument("--knee-reaction", type=float, metavar="WEIGHT",
                        help="add Moco's MocoJointReactionGoal on both knees (walker_knee_r/l: force-x and force-y "
                             "on the femur, in its frame) with this weight beside the effort; also solves the effort "
                             "alone to compare (default folder ./trajopt_results/walk3d-inverse-knee)")
    add_mesh_interval(parser)
    add_out(parser, COMMAND, f"with --emg ./trajopt_results/{COMMAND}-emg, with --knee-reaction ...-knee")
    args = parser.parse_args(argv)
    variant = COMMAND + ("-emg" if args.emg else "") + ("-knee" if args.knee_reaction is not None else "")
    out = fresh_output(args.out or default_output(variant))
    started = time.perf_counter()
    inverse = build(args.emg, args.elastic_tendons, args.mesh_interval)
    knee_goals = [] if args.knee_reaction is None else [
        JointReactionGoal(joint, weight=args.knee_reaction, forces=(0, 1), moments=()) for joint in KNEES]
    loaded = time.perf_counter()
    baseline = solve(inverse, args.mesh_interval) if knee_goals else None
    compared = time.perf_counter()
    inverse.goals += knee_goals
    solution = solve(inverse, args.mesh_interval)
    solved = time.perf_counter()
    tight = read_table(REFERENCE / "MocoInverse_tol1e-5_solution.sto")
    default = json.loads((REFERENCE / "moco_inverse_info.json").read_text())
    tight_info = json.loads((REFERENCE / "moco_inverse_tol1e-5_info.json").read_text())
    same_problem = not (args.emg or args.elastic_tendons or knee_goals) and args.mesh_interval == MOCO_MESH_INTERVAL
    caveats = [] if same_problem else ["This variant is not Moco's problem: the comparison with Moco's solution shows "
                                       "how the variant changes activations, not agreement."]
    caveats.append(f"Moco's reference objective {default['objective']:.6g} (its default tolerance 1e-3, "
                   f"{default['iterations']} iterations, {default['wall_s']:.1f} s) is 5 % above the optimum: with "
                   f"tolerance 1e-5 Moco reaches {tight_info['objective']:.6g} ({tight_info['iterations']} iterations, "
                   f"{tight_info['wall_s']:.1f} s). The comparison below is against that converged solution.")
    caveats.append("Joint reactions apply the muscle tensions along the .osim's geometric paths (OpenSim's wrapped "
                   "paths: path and tangent points) with the ground reactions; the solve used the function-based "
                   "paths, whose moment arms differ slightly: "
                   "the difference is in joint_reactions' generalized forces.")
    caveats += list(dict.fromkeys(c.replace(goal.joint, "knee") for goal in knee_goals
                                  for c in goal.caveats(inverse.model)))
    sections = None if baseline is None else (
        lambda folder: reaction_goal_section(folder, knee_goals, solution, baseline))
    emg = inverse.goals[0] if args.emg else None
    # Writing (solution tables, joint reactions along the geometric paths, figures) takes minutes on this model.
    print(f"walk3d-inverse [{time.perf_counter() - started:7.1f} s] {solution.status}, objective "
          f"{solution.objective:.6g}; writing the solution, joint reactions and figures ...", flush=True)
    folder = write_report(out, solution, "Muscle-driven inverse of Moco's 3D walking example", reference=tight,
                          reference_name="Moco (tolerance 1e-5)",
                          reference_objective=tight_info["objective"] if same_problem else None,
                          settings=SETTINGS, caveats=caveats, emg=emg, sections=sections,
                          timings={"load model, paths, loads, motion": loaded - started,
                                   **({"effort-only solve (the comparison)": compared - loaded} if knee_goals else {}),
                                   "build NLP and solve (IPOPT)": solved - compared, "end to end": solved - started})
    print(f"{solution.status}: objective {solution.objective:.6g} (Moco converged {tight_info['objective']:.6g}, "
          f"Moco default {default['objective']:.6g}), {solution.iterations} iterations, {solved - started:.1f} s; "
          f"results in {folder}")
    return 0 if solution.success else 1
