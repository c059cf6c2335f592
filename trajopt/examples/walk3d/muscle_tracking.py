"""``trajopt run walk3d-tracking``: muscle-driven tracking of the full gait cycle of Moco's example3DWalking.

The model of ``prediction.load_model(quaternion_pelvis=False)`` (80 DeGroote rigid-tendon muscles, function-based
paths, toe actuators, 12 contact spheres raised 2 cm, passive joint moments; the pelvis as the .osim's angles: the
cycle stays far from gimbal lock), tracked with ``trajopt.studies.gait.muscle_tracking.MuscleDrivenTracking`` over
Moco's window 0.48-1.61 s (one gait cycle, free ends): coordinates.sto's coordinates (the patellofemoral ``_beta``
columns belong to the welded joints, the toes have no column) and their splined speeds, grf_walk.mot's forces (x, y, z
of both feet, / body weight), excitation and actuator effort. Moco's example weighs its terms differently (states 0.05,
effort 0.1, contact 5e-3 over m g once) and adds initial-state bounds around the data; the weights here are
``WEIGHTS``. First guess: the coordinates with the activations of the walk3d inverse of the same motion (a muscle
inverse solves in seconds and starts the muscles where the measured motion needs them), or activations 0.05 as
MocoTrack's (``--guess coordinates``). Writes the files of ``trajopt muscle-track`` to
./trajopt_results/walk3d-tracking (or --out).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from trajopt.examples.walk3d.inverse import build, solve
from trajopt.examples.walk3d.prediction import (
    COORDINATES,
    GAIT_CYCLE,
    HERE,
    MAX_ACCELERATION,
    SPEED_BOUND,
    load_model,
    solver_settings,
)
from trajopt.edge.cli.options import add_max_iterations, add_mesh_interval, add_out, add_tolerance
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.study import GaitBounds
from trajopt.studies.gait.tracking import TrackingWeights
from trajopt.model.io import MotionProcessor, read_motion
from trajopt.model.io.output import fresh_output
from trajopt.table import Table
from trajopt.edge.tools.muscle_track import summary_of, write_outputs

DESCRIPTION = "muscle-driven tracking of the full gait cycle of Moco's example3DWalking (coordinates and GRFs)"
GRF = HERE / "grf_walk.mot"
# The pelvis translations (m) weigh 100 times the angles (rad): 1 cm counts as 5.7 deg. The arm rotations weigh 20
# times: the subject's right arm rotates to -0.5 rad, where the passive shoulder moment (79 N·m) exceeds what its
# 50 N·m actuator can hold, so only a saturated actuator comes close.
WEIGHTS = TrackingWeights(coordinates=10.0, speeds=1.0, ground_reactions=10.0, excitations=1.0, actuator_controls=1.0,
                          coordinate_scales=(("pelvis_tx", 100.0), ("pelvis_ty", 100.0), ("pelvis_tz", 100.0),
                                             ("arm_rot_r", 20.0), ("arm_rot_l", 20.0)))
MESH_INTERVAL = 0.05  # s
GUESSES = ("inverse", "coordinates")


def tracking_study(mesh_interval: float = MESH_INTERVAL, weights: TrackingWeights = WEIGHTS,
                   window: tuple[float, float] = GAIT_CYCLE) -> MuscleDrivenTracking:
    model = load_model(quaternion_pelvis=False)
    musculoskeletal = model.musculoskeletal
    motion = read_motion(COORDINATES, rotational=musculoskeletal.rotational_coordinates)
    motion = motion.select([n for n in motion.labels if n in musculoskeletal.coordinate_names])
    return MuscleDrivenTracking(
        musculoskeletal, MotionProcessor(motion, window=window), contacts=model.contacts, ground_reactions=GRF,
        weights=weights,
        mesh_interval=mesh_interval, passive=model.passive,
        bounds=GaitBounds({"pelvis_tx": (-1.0, 5.0)}, (-SPEED_BOUND, SPEED_BOUND), MAX_ACCELERATION, (0.0, 1.0)))


def inverse_activations(study: MuscleDrivenTracking) -> Table:
    """The activations of Moco's exampleMocoInverse of the same motion (``walk3d.inverse``: the measured
    coordinates prescribed, grf_walk.xml applied, pelvis residuals and reserves; seconds to solve) over the tracked
    window, by muscle name."""
    inverse = build()
    solution = solve(inverse, tolerance=1e-4, print_level=0)
    return Table(solution.times, solution.muscle_names, np.clip(solution.activations, 0.0, 1.0), False,
                 "walk3d inverse activations")


def guess_for(study: MuscleDrivenTracking, built, kind: str = "inverse"):
    """The first guess: the tracked coordinates with the activations of ``inverse_activations`` ("inverse"), or
    with activations 0.05 ("coordinates", MocoTrack's)."""
    activations = inverse_activations(study) if kind == "inverse" else None
    return study.guess(built.muscle_driven, activations)


def solver_for(tolerance: float = 1e-4, max_iterations: int = 1000, print_level: int = 5):
    """IPOPT as the walk3d prediction sets it (``prediction.solver_settings``)."""
    return solver_settings(print_level=print_level, tol=tolerance, max_iterations=max_iterations)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run walk3d-tracking", description=DESCRIPTION)
    add_mesh_interval(parser, MESH_INTERVAL)  # coarser than Moco's: the example runs in minutes
    parser.add_argument("--guess", choices=GUESSES, default="inverse",
                        help="first guess: the coordinates with a muscle inverse's activations (default), or with "
                             "activations 0.05 (MocoTrack's)")
    add_tolerance(parser, 1e-4)
    add_max_iterations(parser, 1000)
    add_out(parser, "walk3d-tracking")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    study = tracking_study(args.mesh_interval)
    folder = fresh_output(args.out)
    transcription = study.transcription()
    print(f"walk3d tracking: {len(study.model.muscle_names)} muscles, t = {study.initial_time:g}..{study.final_time:g} "
          f"s, {transcription.intervals} mesh intervals", flush=True)
    built = study.build()
    result = study.solve(transcription, solver_for(args.tolerance, args.max_iterations),
                         guess=guess_for(study, built, args.guess), built=built)
    weights = {"states": WEIGHTS.coordinates, "speeds": WEIGHTS.speeds, "grf": WEIGHTS.ground_reactions,
               "effort": WEIGHTS.excitations, "actuators": WEIGHTS.actuator_controls}
    summary = summary_of(result, "subject_walk_scaled.osim (walk3d.prediction.load_model)", COORDINATES.name, GRF.name,
                         weights, time.perf_counter() - started)
    write_outputs(folder, result, summary)
    print(f"{result.status}: objective {result.objective:.6g}, {result.iterations} iterations, "
          f"{summary['wall_time_s']:.1f} s; results in {folder}")
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
