"""Benchmark ``trajopt bench paths``: arm26 muscle lengths + moment arms per configuration, polynomial surrogate
(trajopt/examples/arm26/paths.json) vs OpenSim, measured in the same run on the same random configurations; and the
stepwise fitting time per muscle (refit from the committed training samples).

Surrogate timings: one call of the casadi Function from Python on a numpy array (includes casadi's Python
overhead) and the Function mapped over all configurations divided by their number (the cost inside an
optimizer). OpenSim (child process): per configuration, set both coordinates, realize Position, then
GeometryPath.getLength and computeMomentArm about both coordinates for all 6 muscles.
Geometric paths (trajopt.model.paths.wrapping, the .osim's own paths wrapped as OpenSim computes it over cylinders
and ellipsoids; muscles over wrap objects trajopt does not model yet would be straight lines and are left out
of the geometric error columns) are timed the same way, lengths with computeMomentArm-equal
(generalized-force) moment arms; and in smooth mode (trajopt.model.paths.wrapping.smooth, the default band: closed-form
wraps, moment arms −∂l/∂q, the form optimal control uses), whose errors against OpenSim include its approximation
and the difference between −∂l/∂q and computeMomentArm. Writes ./trajopt_results/benchmarks/paths.json (or --out).
"""

from __future__ import annotations

import argparse
import platform
import warnings
from pathlib import Path

import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_report_out, report_file
from trajopt.model.io.output import write_report
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.model.osim import load_osim
from trajopt.model.paths.fitting import StepwiseSettings, fit_paths
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.samples import PathSamples
from trajopt.model.paths.wrapping.smooth import SmoothWrapping
from trajopt.benchmarks.timing import seconds_per_call

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'arm26 muscle lengths + moment arms: polynomial surrogate vs OpenSim; fitting time'

ROOT = Path(__file__).resolve().parent.parent.parent
ARM26 = ROOT / "trajopt" / "examples" / "arm26"
COORDINATES = ("r_shoulder_elev", "r_elbow_flex")
# The settings trajopt/examples/arm26/README.md gives for paths.json.
ARM26_SETTINGS = StepwiseSettings(min_relative_improvement=0.02, tolerance=2e-4)




def _geometric(smoothing=None):
    """arm26's geometric paths as one Function q -> (lengths, generalized-force moment arms), or with `smoothing`
    in smooth mode (moment arms −∂l/∂q)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(ARM26 / "arm26.osim")
        paths = GeometricPaths(osim, generalized_force_moment_arms=smoothing is None, smoothing=smoothing)
    return paths.lengths_and_moment_arms_function(COORDINATES), paths.wrapped_muscles


def _geometric_errors(mapped, q, reference, muscles, straight, prefix: str = "geometric") -> dict:
    lengths, arms = (v.full() for v in mapped(q.T))
    lengths = lengths.T
    arms = arms.T.reshape(len(q), 2, len(muscles)).transpose(0, 2, 1)
    keep = [k for k, m in enumerate(muscles) if m not in straight]
    return {f"{prefix}_max_length_error_m": float(np.abs(lengths - reference["lengths"])[:, keep].max()),
            f"{prefix}_max_moment_arm_error_m": float(np.abs(arms - reference["moment_arms"])[:, keep].max())}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench paths", description=description(__doc__))
    parser.add_argument("--configurations", type=COUNT, default=2000,
                        help="random arm26 configurations evaluated by both (default 2000)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "paths")  # the report file inside the --out folder

    paths = PolynomialPaths.load(ARM26 / "paths.json")
    function = paths.lengths_and_moment_arms_function(COORDINATES)
    box = np.array([paths["BIClong"].ranges[0], paths["BRA"].ranges[0]])
    q = np.random.default_rng(7).uniform(box[:, 0], box[:, 1], (args.configurations, 2))
    mapped = function.map(len(q))
    single = seconds_per_call(lambda: function(q[0]))
    batch = seconds_per_call(lambda: mapped(q.T), count=len(q))
    geometric, straight = _geometric()
    geometric_mapped = geometric.map(len(q))
    geometric_single = seconds_per_call(lambda: geometric(q[0]))
    geometric_batch = seconds_per_call(lambda: geometric_mapped(q.T), count=len(q))
    smoothing = SmoothWrapping()
    smooth, _ = _geometric(smoothing)
    smooth_mapped = smooth.map(len(q))
    smooth_single = seconds_per_call(lambda: smooth(q[0]))
    smooth_batch = seconds_per_call(lambda: smooth_mapped(q.T), count=len(q))
    result = {
        "what": "arm26: 6 muscle lengths + 6x2 moment arms per configuration",
        "configurations": len(q),
        "machine": platform.platform(),
        "surrogate_seconds_per_configuration_single_call": single,
        "surrogate_seconds_per_configuration_mapped": batch,
        "geometric_seconds_per_configuration_single_call": geometric_single,
        "geometric_seconds_per_configuration_mapped": geometric_batch,
        "geometric_straight_line_muscles": list(straight),
        "smooth_band_m": smoothing.band,
        "smooth_seconds_per_configuration_single_call": smooth_single,
        "smooth_seconds_per_configuration_mapped": smooth_batch,
    }
    if opensim_available():
        reference = run_opensim_task(
            "sample_paths",
            {"model": str(ARM26 / "arm26.osim"), "coordinates": np.array(COORDINATES), "configurations": q,
             "muscles": np.array(paths.muscles), "batch": len(q)},
        )
        opensim = reference["seconds"] / len(q)
        lengths, arms = (v.full() for v in mapped(q.T))
        lengths = lengths.T
        arms = arms.T.reshape(len(q), 2, len(paths.muscles)).transpose(0, 2, 1)
        result.update(
            opensim_seconds_per_configuration=opensim,
            speedup_single_call=opensim / single,
            speedup_mapped=opensim / batch,
            rms_length_error_m=float(np.sqrt(np.mean((lengths - reference["lengths"]) ** 2))),
            rms_moment_arm_error_m=float(np.sqrt(np.mean((arms - reference["moment_arms"]) ** 2))),
            max_length_error_m=float(np.abs(lengths - reference["lengths"]).max()),
            max_moment_arm_error_m=float(np.abs(arms - reference["moment_arms"]).max()),
            speedup_geometric_single_call=opensim / geometric_single,
            speedup_geometric_mapped=opensim / geometric_batch,
            **_geometric_errors(geometric_mapped, q, reference, paths.muscles, straight),
            speedup_smooth_single_call=opensim / smooth_single,
            speedup_smooth_mapped=opensim / smooth_batch,
            **_geometric_errors(smooth_mapped, q, reference, paths.muscles, (), "smooth"),
            note="the largest errors come from isolated OpenSim wrapping glitches (e.g. TRIlong at shoulder "
            "-16.55 deg: +8.5 mm length for one configuration, neighbours 0.05 deg away are smooth)",
        )
    else:
        result["opensim_seconds_per_configuration"] = None
    train = PathSamples.from_csv(ARM26 / "path_samples_train.csv.gz")
    _, seconds = fit_paths(train, ARM26_SETTINGS, ranges=dict(zip(COORDINATES, box)))
    result["fit_samples"] = train.size
    result["fit_seconds_per_muscle"] = seconds
    write_report(args.out, result)
    for key, value in result.items():
        print(f"{key}: {value}")
    print(f"wrote {args.out}")
    return 0
