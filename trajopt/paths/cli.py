"""``trajopt fit-paths MODEL.osim ... --out paths.json``: sample a model with OpenSim and fit polynomial paths.

Without OpenSim (or with ``--geometric``) the samples come from the model's geometric paths in trajopt, wrapped
as OpenSim computes it (`trajopt.paths.geometric_sampling`): fitting needs no OpenSim.

Samples come from a Latin hypercube over the coordinates' ranges (training) and a second, independent one
(held-out), or from CSV files written earlier (``--train-csv``/``--heldout-csv``). A table per muscle gives
terms and RMS errors (mm) on both sets.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from trajopt.helptext import description
from trajopt.errors import TrajoptInputError
from trajopt.paths.fitting import StepwiseSettings, fit_paths
from trajopt.paths.polynomial import PolynomialPaths
from trajopt.paths.quaternion import euler_to_constrained_quaternion
from trajopt.paths.samples import PathSamples


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trajopt fit-paths", description=description(__doc__))
    parser.add_argument("model", type=Path, help=".osim model (read by OpenSim in a child process)")
    parser.add_argument("--out", type=Path, required=True, help="JSON file for the fitted paths")
    parser.add_argument("--coordinates", nargs="+", help="coordinates to sample (default: unlocked ones muscles cross)")
    parser.add_argument("--range", nargs="+", default=[], metavar="NAME=LOW:HIGH",
                        help="training range of a coordinate (degrees for rotational coordinates)")
    parser.add_argument("--muscles", nargs="+", help="muscles to fit (default: all)")
    parser.add_argument("--samples", type=int, default=2000, help="training configurations (Latin hypercube)")
    parser.add_argument("--heldout", type=int, default=300, help="held-out random configurations")
    parser.add_argument("--motion", type=Path, help="sample frames of this .mot/.sto (with --noise) instead of a Latin hypercube")
    parser.add_argument("--noise", type=float, default=2.0, help="std of the noise added to motion frames (degrees/metres)")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the sampled configurations (default 0)")
    parser.add_argument("--degree", type=int, default=4, help="largest total degree of a term")
    parser.add_argument("--min-improvement", type=float, default=0.05, help="stop below this relative RMS improvement")
    parser.add_argument("--tolerance", type=float, help="stop below this RMS (metres); default max(10%% of largest moment arm, 2 mm)")
    parser.add_argument("--quaternion", nargs="+", default=[], metavar="JOINT:SEQ:C1,C2,C3",
                        help="fit these three Euler coordinates as a constrained quaternion, e.g. SC:YZX:SC_y,SC_z,SC_x")
    parser.add_argument("--geometric", action="store_true",
                        help="sample the model's geometric paths in trajopt (the default when OpenSim is not installed)")
    parser.add_argument("--train-csv", type=Path, help="read training samples from this CSV instead of OpenSim")
    parser.add_argument("--heldout-csv", type=Path, help="read held-out samples from this CSV")
    parser.add_argument("--save-samples", type=Path, metavar="PREFIX",
                        help="write PREFIX_train.csv.gz and PREFIX_heldout.csv.gz")
    return parser


def _ranges(info, coordinates, overrides) -> np.ndarray:
    ranges = info.range_of(coordinates).astype(float)
    for text in overrides:
        try:
            name, bounds = text.split("=")
            low, high = (float(v) for v in bounds.split(":"))
        except ValueError:
            raise TrajoptInputError(f"--range '{text}': expected NAME=LOW:HIGH") from None
        if name not in coordinates:
            raise TrajoptInputError(f"--range '{text}': '{name}' is not a sampled coordinate ({', '.join(coordinates)})")
        i = coordinates.index(name)
        scale = np.pi / 180 if info.rotational[info.coordinates.index(name)] else 1.0
        ranges[i] = (low * scale, high * scale)
    return ranges


def to_quaternion_coordinates(samples: PathSamples, joint: str, sequence: str, names) -> PathSamples:
    """Replace three Euler coordinates by the constrained quaternion (JOINT_q1..q3), mapping moment arms."""
    columns = samples.columns(names)
    keep = [i for i in range(len(samples.coordinates)) if i not in columns]
    new_names = tuple(f"{joint}_q{i}" for i in (1, 2, 3))
    quaternion, _ = euler_to_constrained_quaternion(samples.q[:, columns], samples.moment_arms[:, 0, columns], sequence)
    arms = np.empty_like(samples.moment_arms)
    for m in range(len(samples.muscles)):
        _, arms[:, m, :3] = euler_to_constrained_quaternion(samples.q[:, columns], samples.moment_arms[:, m, columns], sequence)
        arms[:, m, 3:] = samples.moment_arms[:, m, keep]
    crosses = {
        m: tuple(new_names if any(c in names for c in cs) else ()) + tuple(c for c in cs if c not in names)
        for m, cs in samples.crosses.items()
    }
    return PathSamples(
        new_names + tuple(samples.coordinates[i] for i in keep),
        samples.muscles,
        np.hstack([quaternion, samples.q[:, keep]]),
        samples.lengths,
        arms[:, :, : 3 + len(keep)],
        crosses,
    )


def _table(paths: PolynomialPaths) -> str:
    lines = [
        f"{'muscle':16s} {'terms':>5s} {'coordinates':30s} {'len train':>9s} {'ma train':>9s} {'len held':>9s} {'ma held':>9s}",
        f"{'':16s} {'':>5s} {'':30s} {'(mm)':>9s} {'(mm)':>9s} {'(mm)':>9s} {'(mm)':>9s}",
    ]
    for path in paths:
        r = path.report
        lines.append(
            f"{path.muscle:16s} {r.terms:5d} {','.join(path.coordinates)[:30]:30s} {r.length_rmse * 1e3:9.3f} "
            f"{r.moment_arm_rmse * 1e3:9.3f} {r.heldout_length_rmse * 1e3:9.3f} {r.heldout_moment_arm_rmse * 1e3:9.3f}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = StepwiseSettings(degree=args.degree, min_relative_improvement=args.min_improvement, tolerance=args.tolerance)
        box = None
        if args.train_csv is not None:
            train = PathSamples.from_csv(args.train_csv, coordinates=args.coordinates, muscles=args.muscles)
            heldout = PathSamples.from_csv(args.heldout_csv, coordinates=train.coordinates, muscles=train.muscles) if args.heldout_csv else None
        else:
            from trajopt.paths.sampling import latin_hypercube, motion_with_noise
            from trajopt.tools.path_sampling import describe_model, read_motion, sample_paths
            from trajopt.opensim_reference import opensim_available
            from trajopt.paths.geometric_sampling import describe_geometric, sample_geometric_paths

            if args.geometric or not opensim_available():
                print(f"{args.model}: sampling the model's geometric paths (wrapping as OpenSim computes it; "
                      f"{'--geometric' if args.geometric else 'OpenSim is not installed'})")
                describe_model, sample_paths = describe_geometric, sample_geometric_paths
            info = describe_model(args.model)
            coordinates = tuple(args.coordinates or info.crossed_coordinates())
            ranges = _ranges(info, coordinates, args.range)
            print(f"{args.model}: sampling {', '.join(coordinates)} within "
                  + ", ".join(f"[{lo:.3f}, {hi:.3f}]" for lo, hi in ranges))
            box = {c: tuple(r) for c, r in zip(coordinates, ranges)}
            if args.motion is not None:
                frames = read_motion(args.motion, coordinates)
                scale = np.where(info.rotational[[info.coordinates.index(c) for c in coordinates]], np.pi / 180, 1.0)

                def draw(count, seed):
                    return motion_with_noise(frames, count, args.noise * scale, seed)

                box = None  # the training range is the extent of the noisy frames
            else:

                def draw(count, seed):
                    return latin_hypercube(ranges, count, seed)

            train = sample_paths(args.model, coordinates, draw(args.samples, args.seed), args.muscles, info=info)
            heldout = None
            if args.heldout > 0:
                heldout = sample_paths(args.model, coordinates, draw(args.heldout, args.seed + 1), args.muscles, info=info)
            if args.save_samples is not None:
                train.to_csv(f"{args.save_samples}_train.csv.gz")
                if heldout is not None:
                    heldout.to_csv(f"{args.save_samples}_heldout.csv.gz")
        for spec in args.quaternion:
            try:
                joint, sequence, names = spec.split(":")
            except ValueError:
                raise TrajoptInputError(f"--quaternion '{spec}': expected JOINT:SEQUENCE:C1,C2,C3") from None
            names = tuple(names.split(","))
            if len(names) != 3:
                raise TrajoptInputError(f"--quaternion '{spec}': a ball joint needs three Euler coordinates, got {len(names)}")
            train = to_quaternion_coordinates(train, joint, sequence, names)
            heldout = heldout and to_quaternion_coordinates(heldout, joint, sequence, names)
        paths, seconds = fit_paths(train, settings, heldout, model=args.model.name, ranges=box)
    except TrajoptInputError as error:
        print(f"trajopt fit-paths: error: {error}", file=sys.stderr)
        return 2
    print(_table(paths))
    if args.quaternion:
        print("moment-arm errors are about the fitted coordinates (constrained quaternions for the joints given)")
    print(f"fitting time: {sum(seconds.values()):.2f} s for {len(paths)} muscles")
    paths.save(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
