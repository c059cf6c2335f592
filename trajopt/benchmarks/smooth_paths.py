"""Benchmark ``trajopt bench smooth-paths``: smooth-mode wrapped paths (``trajopt.model.paths.wrapping.smooth``, the
form optimal control uses) against exact mode (OpenSim's algorithm, equal to OpenSim 4.6 to ~1e-14 m in the tests), at
random configurations over the full coordinate ranges of arm26 and of Moco's 3D walking model
(trajopt/examples/walk3d/subject_walk_scaled.osim, its wrapped muscles): each wrapped muscle's largest length and
moment-arm (−∂l/∂q) difference, and the evaluation time of both (the muscle's Function mapped over all
configurations, divided by their number). The largest differences include exact mode's own jumps (OpenSim's path
switching segment or tangent pair: a spike in −∂l/∂q where the smooth path has none; a wrap the long way round);
the 99th percentiles say how the bulk compares. Writes ./trajopt_results/benchmarks/smooth_paths.json (or --out).
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_report_out, add_smoothing_band, report_file
from trajopt.model.io.output import write_report
from trajopt.model.osim import OsimIgnoredWarning
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.paths.geometric import geometric_path
from trajopt.model.paths.wrapping.smooth import SmoothWrapping

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'smooth-mode wrapped paths vs exact mode, arm26 and walk3d: length and moment-arm differences, time'

ROOT = Path(__file__).resolve().parent.parent.parent
MODELS = {"arm26": ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim",
          "walk3d": ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"}


def _mapped(path, q, count):
    length = path.length(q)
    return ca.Function("f", [q], [length, -ca.jacobian(length, q)]).map(count)


def compare_model(file: Path, smoothing: SmoothWrapping, count: int, seed: int) -> dict:
    """Per wrapped muscle of `file`: largest length and moment-arm differences (m), smooth and exact seconds per
    configuration."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim, _ = load_processed(file)
    model = osim.multibody
    low = np.array([c.range[0] for c in model.coordinates])
    high = np.array([c.range[1] for c in model.coordinates])
    configurations = (low + (high - low) * np.random.default_rng(seed).random((count, model.nq))).T
    q = ca.SX.sym("q", model.nq)
    muscles = {}
    for muscle in osim.muscles:
        if not muscle.path.wraps:
            continue
        results = []
        for path in (geometric_path(osim, muscle.name, smoothing=smoothing), geometric_path(osim, muscle.name)):
            function = _mapped(path, q, count)
            start = time.perf_counter()
            lengths, arms = function(configurations)
            results.append((np.asarray(lengths), np.asarray(arms), (time.perf_counter() - start) / count))
        (smooth_l, smooth_r, smooth_s), (exact_l, exact_r, exact_s) = results
        lengths = np.abs(smooth_l - exact_l).ravel()
        arms = np.abs(smooth_r - exact_r).reshape(count, -1).max(axis=1)
        muscles[muscle.name] = {"wrap_objects": len(muscle.path.wraps),
                                "max_length_difference_m": float(lengths.max()),
                                "max_moment_arm_difference_m": float(arms.max()),
                                "p99_length_difference_m": float(np.percentile(lengths, 99)),
                                "p99_moment_arm_difference_m": float(np.percentile(arms, 99)),
                                "smooth_seconds_per_configuration": smooth_s,
                                "exact_seconds_per_configuration": exact_s}
        print(f"{file.stem} {muscle.name}: length {1000 * muscles[muscle.name]['max_length_difference_m']:.3f} mm, "
              f"moment arm {1000 * muscles[muscle.name]['max_moment_arm_difference_m']:.3f} mm", flush=True)
    return {"model": file.name, "configurations": count, "seed": seed, "muscles": muscles}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench smooth-paths", description=description(__doc__))
    parser.add_argument("--configurations", type=COUNT, default=300,
                        help="random configurations per model (default 300)")
    add_smoothing_band(parser, SmoothWrapping().band)
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "smooth_paths")  # the report file inside the --out folder
    if args.configurations < 1 or not args.smoothing_band > 0:
        parser.exit(2, f"{parser.prog}: error: --configurations must be >= 1 and --smoothing-band > 0\n")
    smoothing = SmoothWrapping(args.smoothing_band)
    result = {"what": "smooth vs exact wrapped paths, random configurations over the full coordinate ranges",
              "band_m": args.smoothing_band, "blend_length_bound_m": smoothing.length_bound,
              "machine": platform.platform(),
              "models": {name: compare_model(file, smoothing, args.configurations, seed)
                         for seed, (name, file) in enumerate(MODELS.items(), start=18)}}
    for name, record in result["models"].items():
        muscles = record["muscles"]
        worst = max(muscles, key=lambda m: muscles[m]["max_length_difference_m"])
        within = sum(m["max_length_difference_m"] <= 1e-3 for m in muscles.values())
        record["summary"] = {
            "wrapped_muscles": len(muscles), "muscles_within_1mm": within, "worst_length_muscle": worst,
            "worst_length_difference_m": muscles[worst]["max_length_difference_m"],
            "median_max_length_difference_m": float(np.median([m["max_length_difference_m"]
                                                               for m in muscles.values()])),
            "median_max_moment_arm_difference_m": float(np.median([m["max_moment_arm_difference_m"]
                                                                   for m in muscles.values()])),
            "muscles_p99_within_1mm": sum(m["p99_length_difference_m"] <= 1e-3 and m["p99_moment_arm_difference_m"]
                                          <= 1e-3 for m in muscles.values()),
            "smooth_seconds_per_configuration_all_muscles": sum(m["smooth_seconds_per_configuration"]
                                                                for m in muscles.values()),
            "exact_seconds_per_configuration_all_muscles": sum(m["exact_seconds_per_configuration"]
                                                               for m in muscles.values())}
        print(f"{name}: {record['summary']}")
    write_report(args.out, result)
    print(f"wrote {args.out}")
    return 0
