"""``trajopt static-optimization MODEL.osim MOTION.mot [--external-loads LOADS.xml] [--paths FILE] [--cutoff HZ]
[--capacity-along-fiber] --out DIR``: OpenSim's Static Optimization with DeGroote 2016 muscles (rigid tendon,
force-length-velocity).

Per frame: minimize Σ a² + Σ r² with muscles and reserve actuators (optimal force ``--reserves``, on every
coordinate) reproducing inverse dynamics. With CoordinateCouplerConstraints the balance is written about the
independent coordinates (the reduced form). Writes ``DIR/activations.sto``, ``DIR/forces.sto``,
``DIR/reserves.sto``, ``DIR/joint_reactions.sto`` (muscle forces applied along the .osim's wrapped paths),
figures in ``DIR/figures`` and ``DIR/summary.md``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from trajopt.core.ocp import Residuals
from trajopt.studies.analysis.static_optimization import ReserveKind, StaticOptimization, StaticOptimizationWarning
from trajopt.studies.analysis.external_loads_file import read_external_loads
from trajopt.edge.cli.options import NON_NEGATIVE, add_cutoff, add_no_figures, add_out
from trajopt.errors import TrajoptInputError
from trajopt.model.io import MotionProcessor, write_sto
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.edge.tools.common import (Phases, add_model_and_motion, check_cutoff, forces_operators, load_tool_input,
                                       output_folder)
from trajopt.model.paths.files import read_paths

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "static optimization of a motion with external loads (OpenSim's Static Optimization)"

GEOMETRIC_PATHS = "the model's geometric paths with OpenSim's moment arms (computeMomentArm)"
ALONG_FIBER = ("the active fiber force along the fiber, no cos(pennation) (OpenSim's StaticOptimization convention "
               "for DeGroote muscles, --capacity-along-fiber)")
ALONG_TENDON = ("the tendon force, the fiber's × cos(pennation) (trajopt's default; OpenSim's StaticOptimization "
                "takes the fiber force along the fiber instead, so pennated muscles' activations differ from "
                "OpenSim's: --capacity-along-fiber reproduces OpenSim's convention)")
CONVENTION = ("Force per activation: by default the tendon force (the active fiber force × cos(pennation)); OpenSim's "
              "StaticOptimization uses the active fiber force along the fiber (no cos(pennation)) for DeGroote "
              "muscles, so on pennated muscles the activations differ from OpenSim's: --capacity-along-fiber uses "
              "OpenSim's convention. The summary says which one a run used.")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt static-optimization",
                                     description="Static optimization of a motion (OpenSim's Static Optimization). "
                                                 + CONVENTION)
    add_model_and_motion(parser)
    parser.add_argument("--paths", metavar="FILE", help="muscle paths: trajopt .json or OpenSim FunctionBasedPathSet "
                                                        ".xml (default: the model's geometric paths with OpenSim's "
                                                        "moment arms, computeMomentArm)")
    parser.add_argument("--capacity-along-fiber", action="store_true",
                        help="OpenSim's convention: a muscle's force per activation is its active fiber force "
                             "along the fiber, without cos(pennation), as OpenSim's StaticOptimization computes it "
                             "for DeGroote muscles; use it to compare with OpenSim (default: the tendon force, "
                             "× cos(pennation))")
    add_cutoff(parser)
    parser.add_argument("--reserves", type=NON_NEGATIVE, default=1.0,
                        help="reserve actuators' optimal force (default 1)")
    add_out(parser, "static-optimization")
    add_no_figures(parser)
    args = parser.parse_args(argv)
    if args.reserves == 0:  # muscle-inverse's "none": here every coordinate needs its reserve
        raise TrajoptInputError("--reserves 0: static optimization puts a reserve actuator on every coordinate; "
                                "give its optimal force (> 0; a small one leaves the load to the muscles)")
    folder = output_folder(args.out)
    phases = Phases("trajopt static-optimization")
    with phases.phase("read model and motion", f"{args.model}, {args.motion}"):
        data = load_tool_input(args.model, args.motion, forces_operators(args))
        cutoff = check_cutoff(args.cutoff, data.motion)
        loads = read_external_loads(args.external_loads) if args.external_loads else None
    for warning in data.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    with phases.phase("build muscle paths", args.paths or "geometric, wrapped as OpenSim"):
        paths = read_paths(args.paths, data.osim, generalized_force_moment_arms=True)
        model = MusculoskeletalModel(data.osim, paths)
    caveats = list(data.notes) + list(model.notes)
    wrapped = list(getattr(paths, "wrapped_muscles", ()))
    if wrapped:
        caveats.append(f"geometric paths ignore wrap objects: {len(wrapped)} muscle(s) "
                       f"({', '.join(wrapped[:5])}{' ...' if len(wrapped) > 5 else ''}) have straight-line lengths")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", StaticOptimizationWarning)
        with phases.phase("inverse dynamics", f"{data.motion.num_frames} frames"):
            problem = StaticOptimization(model, MotionProcessor(data.motion, cutoff_frequency=cutoff),
                                         residuals=Residuals(optimal_force=args.reserves), passive_force=False,
                                         external_loads=loads, constraints=data.constraints,
                                         capacity_along_fiber=args.capacity_along_fiber)
        with phases.phase("muscle loads and IPOPT", f"lengths, moment arms and forces at "
                                                                  f"{problem.inverse_dynamics.times.size} frames"):
            result = problem.solve()
    caveats += [str(w.message) for w in caught if issubclass(w.category, StaticOptimizationWarning)]
    with phases.phase("joint reactions", "muscle forces applied along the paths"):
        reactions = problem.joint_reactions(result)
    with phases.phase("write files", "tables" + ("" if args.no_figures else " and figures")):
        write_sto(folder / "activations.sto", result.activations_table())
        write_sto(folder / "forces.sto", result.forces_table())
        write_sto(folder / "reserves.sto", result.residuals_table())
        write_sto(folder / "joint_reactions.sto", reactions.table())
        result.write(folder / "details", figures=not args.no_figures)
    lines = [f"# Static optimization: {Path(args.motion).name}", "",
             f"{'Solved' if result.success else '**FAILED: ' + result.status + '**'}: {result.times.size} frames, "
             f"{result.iterations} IPOPT iterations (frame solves {result.solve_time:.2f} s). "
             f"Wall time: {phases.describe()}.", "",
             f"Muscle paths: {args.paths or GEOMETRIC_PATHS}; force per activation: "
             f"{ALONG_FIBER if args.capacity_along_fiber else ALONG_TENDON}.", "",
             f"Motion: {args.motion}, {data.unit.describe()}.", ""]
    if data.warnings:
        lines += ["**Warnings**", ""] + [f"- {w}" for w in data.warnings] + [""]
    if caveats:
        lines += ["**Caveats**", ""] + [f"- {c}" for c in caveats] + [""]
    worst = np.max(np.abs(result.residual_forces), axis=0)
    kinds = problem.reserve_kinds(result.moment_arms)
    lines += ["What a reserve's force means: " + "; ".join(f"{kind.label}: {kind.meaning}" for kind in
                                                          ReserveKind if kind in kinds) + ".", "",
              "| reserve | on | largest force (N·m or N) |", "|---|---|---|"]
    lines += [f"| {name} | {kind.label.split(' on ')[-1]} | {value:.4g} |"
              for name, kind, value in zip(result.reserve_names, kinds, worst)]
    lines += ["", "Files: `activations.sto`, `forces.sto`, `reserves.sto`, `joint_reactions.sto`; `details/` (inverse "
              "dynamics, equality error" + ("" if args.no_figures else ", figures") + ").", ""]
    (folder / "summary.md").write_text("\n".join(lines))
    for caveat in caveats:
        print(f"note: {caveat.splitlines()[0][:300]}", file=sys.stderr)
    print(f"static optimization of {result.times.size} frames ({data.unit.describe()}): {result.status}; results in "
          f"{folder}")
    return 0 if result.success else 1
