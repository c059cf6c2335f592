"""Benchmark ``trajopt bench walk3d-static-optimization``: static optimization of Moco's 3D walking model
(subject_walk_scaled.osim, 80 muscles, patella couplers) with its ground reactions, trajopt vs OpenSim 4.6's
StaticOptimization (AnalyzeTool, in a child process), same problem on both sides, in the same run.

The same problem:
- motion: trajopt/examples/walk3d/coordinates.sto with the patella coordinates assembled from their couplers (written
  to a temporary .sto that both read), frames in [--start, --end], no filter;
- ground reactions: grf_walk.xml (OpenSim: the AnalyzeTool's external loads);
- muscle paths: subject_walk_scaled_FunctionBasedPathSet.xml on both sides (OpenSim:
  ModOpReplacePathsWithFunctionBasedPaths; trajopt: --paths), so lengths and moment arms are the same
  polynomials (the geometric paths wrap, which trajopt's straight-line paths do not);
- muscles: DeGrooteFregly2016 with rigid tendons; by default without muscle physiology (force = activation x max
  isometric force on both sides; ``--physiology``: force-length-velocity, where OpenSim's capacity omits the
  pennation factor cos α that trajopt keeps, so activations differ by design);
- actuators: the model's own CoordinateActuators removed; one reserve per independent coordinate (optimal force 1,
  none on the dependent patella coordinates: trajopt writes the balance in the couplers' reduced form, OpenSim's
  constrained accelerations make the dependent equations redundant); objective Σ a² + Σ r² on both sides.
Diagnosis: the same trajopt solve again with its inverse-dynamics forces corrected by OpenSim's rigid-body forces
(InverseDynamicsSolver, forces off, at trajopt's q, u, u̇; the ground reactions' part agrees to 1e-8) isolates
what OpenSim's multibody dynamics (its walker-knee velocity forces, tests/test_tools.py) contributes to the
activation differences.
Timing: OpenSim's ``AnalyzeTool.run`` (model loaded before the clock); trajopt's ``StaticOptimization(...)`` +
``solve()`` (model and paths loaded before the clock). Accuracy: per muscle the largest |a_trajopt − a_OpenSim|
over the frames. Writes ./trajopt_results/benchmarks/walk3d_static_optimization.json (``--out`` elsewhere).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.external_loads_file import read_external_loads
from trajopt.studies.analysis.static_optimization import StaticOptimization
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_report_out, add_window, check_window, report_file
from trajopt.model.io import MotionProcessor, write_sto
from trajopt.model.io.output import write_report
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.core.multibody import inverse_dynamics as rigid_body
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.core.ocp import Residuals
from trajopt.model.osim.load import load_osim
from trajopt.model.osim.parser import parse_osim
from trajopt.model.paths.files import read_paths
from trajopt.edge.tools.common import load_tool_input

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'walk3d static optimization with GRFs and couplers: trajopt vs OpenSim, same run'

ROOT = Path(__file__).resolve().parent.parent.parent
WALK3D = ROOT / "trajopt" / "examples" / "walk3d"
MODEL = WALK3D / "subject_walk_scaled.osim"
PATHS = WALK3D / "subject_walk_scaled_FunctionBasedPathSet.xml"
LOADS = WALK3D / "grf_walk.xml"
COORDINATES = WALK3D / "coordinates.sto"
WINDOW = (0.6, 0.7)  # s: 101 frames of the stance


def _trajopt(data, motion_file, start, end, physiology, correct_forces=None):
    model = MusculoskeletalModel(data.osim, read_paths(PATHS, data.osim))
    loads = read_external_loads(LOADS)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        problem = StaticOptimization(model, MotionProcessor(motion_file, window=(start, end)),
                                     residuals=Residuals(optimal_force=1.0), passive_force=False,
                                     force_length_velocity=physiology, external_loads=loads,
                                     constraints=data.constraints)
        if correct_forces is not None:
            problem.inverse_dynamics = correct_forces(problem.inverse_dynamics)
        result = problem.solve()
    return result, time.perf_counter() - started


def _opensim_rigid_body(inverse_dynamics):
    """``inverse_dynamics`` with OpenSim's M u̇ + C (forces off, gravity on) in place of trajopt's."""
    k = inverse_dynamics.kinematics
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        order = [c.name for c in parse_osim(MODEL).coordinates]  # OpenSim's CoordinateSet order
    columns = [list(k.coordinate_names).index(n) for n in order]
    reference = run_opensim_task("osim_inverse_dynamics", {"model": str(MODEL), "q": k.q[:, columns],
                                                           "u": k.u[:, columns], "udot": k.udot[:, columns]})
    theirs = np.zeros_like(k.q)
    theirs[:, columns] = reference["tau"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        multibody = load_osim(MODEL, constraints=True).multibody
    ours = np.array([np.asarray(rigid_body(multibody, q, u, a)).ravel() for q, u, a in zip(k.q, k.u, k.udot)])
    return dataclasses.replace(inverse_dynamics,
                               generalized_forces=inverse_dynamics.generalized_forces + theirs - ours)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench walk3d-static-optimization",
                                     description=description(__doc__))
    add_window(parser, WINDOW)  # 101 frames of the stance
    parser.add_argument("--physiology", action="store_true", help="force-length-velocity on both sides")
    parser.add_argument("--convergence", type=float, default=1e-4,
                        help="OpenSim's convergence criterion (default 1e-4, OpenSim's own)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "walk3d_static_optimization")  # the report file inside the --out folder
    args.start, args.end = check_window(args.window)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = load_tool_input(MODEL, COORDINATES)
    report = {"what": f"walk3d static optimization {args.start}-{args.end} s with GRFs, FunctionBasedPaths, "
                      f"{'FLV' if args.physiology else 'no muscle physiology'}, reserves 1 (independent coordinates)",
              "machine": platform.platform(), "processors": os.cpu_count(),
              "load_average_at_start": os.getloadavg()[0], "opensim_convergence_criterion": args.convergence}
    with tempfile.TemporaryDirectory(prefix="walk3d_so_") as folder:
        motion_file = Path(folder) / "coordinates_assembled.sto"
        write_sto(motion_file, data.motion)
        print(f"trajopt static optimization of walk3d, {args.start}-{args.end} s ...")
        result, seconds = _trajopt(data, motion_file, args.start, args.end, args.physiology)
        print(f"  {result.times.size} frames, {result.status}, {seconds:.2f} s (IPOPT {result.solve_time:.2f} s)")
        report["trajopt"] = {"seconds": seconds, "ipopt_seconds": result.solve_time, "status": result.status,
                             "frames": int(result.times.size), "iterations": result.iterations,
                             "load_average": os.getloadavg()[0]}
        if not opensim_available():
            report["opensim"] = "not installed: no comparison"
        else:
            print("OpenSim StaticOptimization (AnalyzeTool) ...")
            reference = run_opensim_task("osim_static_optimization", {
                "model": str(MODEL), "motion": str(motion_file), "lowpass_cutoff": -1.0, "degroote": True,
                "use_muscle_physiology": args.physiology, "reserve_optimal_force": 1.0,
                "function_based_paths": str(PATHS), "remove_model_actuators": True,
                "no_reserves_for": [c.dependent for c in data.constraints.couplings], "external_loads": str(LOADS),
                "start_time": args.start, "final_time": args.end, "convergence_criterion": args.convergence,
                "max_iterations": 1000})
            opensim_seconds = float(np.asarray(reference["run_times"]).ravel()[0])
            labels = list(reference["labels"])
            if reference["times"].size != result.times.size or np.max(np.abs(reference["times"] - result.times)) > 1e-9:
                raise RuntimeError("trajopt and OpenSim solved different frames")
            differences = {name: float(np.max(np.abs(result.activations[:, k]
                                                     - reference["activations"][:, labels.index(name)])))
                           for k, name in enumerate(result.muscle_names)}
            worst = max(differences, key=differences.get)
            per_frame = np.max(np.abs(result.activations - reference["activations"][
                :, [labels.index(n) for n in result.muscle_names]]), axis=1)
            report["max_activation_difference_per_frame"] = per_frame.tolist()
            report["opensim"] = {"seconds": opensim_seconds, "load_average": os.getloadavg()[0]}
            report["max_activation_difference_per_muscle"] = differences
            report["max_activation_difference"] = {"muscle": worst, "value": differences[worst]}
            report["speedup"] = opensim_seconds / seconds
            print(f"  {opensim_seconds:.2f} s; largest activation difference {differences[worst]:.3g} ({worst}); "
                  f"trajopt {report['speedup']:.1f}x faster")
            corrected, _ = _trajopt(data, motion_file, args.start, args.end, args.physiology, _opensim_rigid_body)
            gaps = np.abs(corrected.activations - reference["activations"][
                :, [labels.index(n) for n in corrected.muscle_names]])
            k = int(np.argmax(np.max(gaps, axis=0)))
            report["with_opensim_rigid_body_forces"] = {
                "max_activation_difference": {"muscle": corrected.muscle_names[k], "value": float(np.max(gaps))},
                "max_activation_difference_per_frame": np.max(gaps, axis=1).tolist()}
            print(f"  with OpenSim's rigid-body forces: largest activation difference {np.max(gaps):.3g} "
                  f"({corrected.muscle_names[k]}); median over frames of the largest "
                  f"{np.median(np.max(gaps, axis=1)):.3g} "
                  f"(without: {np.median(per_frame):.3g})")
    write_report(args.out, report)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
