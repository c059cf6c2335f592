"""``trajopt fit-paths MODEL.osim ... [--out DIR]``: sample a model with OpenSim and fit polynomial paths into
``DIR/paths.json``.

The domain is the model's coordinate ranges (``--range`` narrows one), or with ``--motion`` a band of
±``--band`` degrees around each frame (as OpenSim's PolynomialPathFitter); it is stored in the paths file.
Samples come from a Latin hypercube over the domain (training, ``--samples`` or ``--samples-per-frame``) and a
second, independent one (held-out), or from CSV files written earlier (``--train-csv``/``--heldout-csv``; the
domain is then the training samples' box). The default fit grows terms and degree (up to 9) until length RMS
<= 0.25 mm and moment-arm RMS <= 0.5 mm on the training set; ``--das3-rules`` uses the DAS3 stop rules. A table
per muscle gives terms and RMS errors (mm) on both sets. ``--opensim-xml`` also writes OpenSim's
FunctionBasedPathSet.

Without OpenSim (or with ``--geometric``) the samples come from the model's geometric paths in trajopt, wrapped
as OpenSim computes it (`trajopt.edge.tools.geometric_sampling`): fitting needs no OpenSim.
``--pieces`` fits piecewise over the domain instead (`trajopt.model.paths.domain_pieces`): each muscle's box is cut
at its ConditionalPathPoints' range bounds or, with ``--cut-along COORDINATE``, where its geometric path's length
jumps along that coordinate (wrap switches), one polynomial per cell. The surrogate then jumps across a cut as
OpenSim's path does: for analyses (static optimization, muscle analysis), not for gradient-based optimal control.
``--cells`` keeps one polynomial for each muscle that meets the targets at the held-out samples (length RMS
<= 0.5 mm, moment-arm RMS <= 1 mm) and gives the others a cell tree on ``--cells-samples`` training
configurations, split first along their length-jump surfaces, then their moment-arm kink surfaces, both found on
the model's geometric path without being told where (`trajopt.model.paths.jump_cells`; jumps from wrap objects switching
sides, also where they end inside the box; kinks where a wrap engages); also discontinuous across cells, for
analyses.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from trajopt.edge.cli.options import add_out, out_folder
from trajopt.errors import TrajoptInputError
from trajopt.model.io.opensim_reference import opensim_available
from trajopt.model.io.output import writable_file
from trajopt.edge.cli.helptext import description
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.osim import load_osim
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_cells import DomainCellPaths
from trajopt.model.paths.domain_pieces import DomainPiecewisePaths, fit_domain_pieces, heldout_rms, model_cuts
from trajopt.model.paths.fitting import ACCURATE, StepwiseSettings, fit_paths
from trajopt.model.paths.function_based_xml import coordinate_paths, write_function_based_path_set
from trajopt.model.paths.jump_cells import SCAN_BUDGET, domain_box, jump_cell_trees, one_cell, pocket_rms
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.quaternion import euler_to_constrained_quaternion
from trajopt.model.paths.quaternion_paths import BallJointQuaternion
from trajopt.model.paths.refit import SamplingPlan, fit_domain, motion_domain
from trajopt.model.paths.samples import PathSamples
from trajopt.edge.tools.geometric_sampling import GeometricPathSampler
from trajopt.edge.tools.path_sampling import OpenSimPathSampler, read_checked_coordinates

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'fit polynomial muscle-path surrogates to an OpenSim model'

FILE = "paths.json"  # the fitted paths, inside --out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="trajopt fit-paths", description=description(__doc__))
    parser.add_argument("model", type=Path, help=".osim model (read by OpenSim in a child process)")
    add_out(parser, "fit-paths")
    parser.add_argument("--coordinates", nargs="+", help="coordinates to sample (default: unlocked ones muscles cross)")
    parser.add_argument("--range", nargs="+", default=[], metavar="NAME=LOW:HIGH",
                        help="training range of a coordinate (degrees for rotational coordinates)")
    parser.add_argument("--muscles", nargs="+", help="muscles to fit (default: all)")
    parser.add_argument("--samples", type=int, default=3000, help="training configurations over a box domain")
    parser.add_argument("--heldout", type=int, default=600, help="held-out configurations (another Latin hypercube)")
    parser.add_argument("--motion", type=Path,
                        help="fit a band around each frame of this .mot/.sto instead of the ranges")
    parser.add_argument("--band", type=float, default=10.0,
                        help="half-width of the band around motion frames (degrees)")
    parser.add_argument("--samples-per-frame", type=int, default=25, help="training configurations per motion frame")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the sampled configurations (default 0)")
    parser.add_argument("--max-degree", type=int, default=9, help="largest total degree the fit may grow to")
    parser.add_argument("--das3-rules", action="store_true",
                        help="DAS3 stop rules: degree --degree, stop below --min-improvement or below --rms-tolerance")
    parser.add_argument("--degree", type=int, default=4, help="largest total degree of a term (--das3-rules)")
    parser.add_argument("--min-improvement", type=float, default=0.05,
                        help="stop below this relative RMS improvement (--das3-rules)")
    parser.add_argument("--rms-tolerance", type=float, metavar="METRES",
                        help="stop below this RMS (metres; --das3-rules); "
                             "default max(10%% of largest moment arm, 2 mm)")
    parser.add_argument("--opensim-xml", type=Path, help="also write the paths as OpenSim's FunctionBasedPathSet")
    parser.add_argument("--quaternion", nargs="+", default=[], metavar="JOINT:SEQ:C1,C2,C3",
                        help="fit these three Euler coordinates as a constrained quaternion, "
                             "e.g. SC:YZX:SC_y,SC_z,SC_x")
    parser.add_argument("--geometric", action="store_true",
                        help="sample the model's geometric paths in trajopt "
                             "(the default when OpenSim is not installed)")
    parser.add_argument("--train-csv", type=Path, help="read training samples from this CSV instead of OpenSim")
    parser.add_argument("--heldout-csv", type=Path, help="read held-out samples from this CSV")
    parser.add_argument("--pieces", action="store_true",
                        help="fit piecewise over the domain: cells between ConditionalPathPoint range bounds (and "
                             "--cut-along jumps), one polynomial each; over the model's ranges only")
    parser.add_argument("--cut-along", metavar="COORDINATE",
                        help="with --pieces: also cut where each muscle's geometric path length jumps along this "
                             "coordinate (wrap switches; minutes for ellipsoid wraps)")
    parser.add_argument("--cells", action="store_true",
                        help="muscles one polynomial misses at the held-out samples get a cell tree split along their "
                             "length-jump and moment-arm kink surfaces (found on the geometric path); with the "
                             "model's ranges or --motion")
    parser.add_argument("--cells-samples", type=int, default=11200,
                        help="--cells: training configurations for the cell trees (the fit's own plus fresh ones)")
    parser.add_argument("--scan-budget", type=float, default=SCAN_BUDGET, metavar="SECONDS",
                        help="--cells: time for each muscle's jump- and kink-surface scans (fewer lines where the "
                             "geometric path is costly; none when even the smallest scan takes longer: the tree then "
                             "splits along coordinates only)")
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
            raise TrajoptInputError(f"--range '{text}': '{name}' is not a sampled coordinate "
                                    f"({', '.join(coordinates)})")
        i = coordinates.index(name)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise TrajoptInputError(f"--range '{text}': LOW must be below HIGH")
        rotational = info.rotational[info.coordinates.index(name)]
        if rotational and max(abs(low), abs(high)) <= 2 * np.pi and ranges[i][1] - ranges[i][0] > 0.5:
            raise TrajoptInputError(f"--range '{text}': rotational ranges are in degrees, and {low:g}..{high:g} deg is "
                                    f"a sliver of the model's {np.degrees(ranges[i][1] - ranges[i][0]):.0f} deg range: "
                                    f"radians? ({name}={np.degrees(low):.4g}:{np.degrees(high):.4g} in degrees)")
        scale = np.pi / 180 if rotational else 1.0
        ranges[i] = (low * scale, high * scale)
    return ranges


def to_quaternion_coordinates(samples: PathSamples, joint: str, sequence: str, names) -> PathSamples:
    """Replace three Euler coordinates by the constrained quaternion (JOINT_Q1..Q3, the names a model's ball or free
    joint JOINT gives them: ``trajopt.model.paths.quaternion_paths``), mapping moment arms."""
    columns = samples.columns(names)
    keep = [i for i in range(len(samples.coordinates)) if i not in columns]
    new_names = BallJointQuaternion(joint, ()).variables
    quaternion, _ = euler_to_constrained_quaternion(samples.q[:, columns], samples.moment_arms[:, 0, columns], sequence)
    arms = np.empty_like(samples.moment_arms)
    for m in range(len(samples.muscles)):
        _, arms[:, m, :3] = euler_to_constrained_quaternion(samples.q[:, columns], samples.moment_arms[:, m, columns],
                                                            sequence)
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
        f"{'muscle':16s} {'terms':>5s} {'coordinates':30s} {'len train':>9s} {'ma train':>9s} {'len held':>9s} "
        f"{'ma held':>9s}",
        f"{'':16s} {'':>5s} {'':30s} {'(mm)':>9s} {'(mm)':>9s} {'(mm)':>9s} {'(mm)':>9s}",
    ]
    for path in paths:
        r = path.report
        lines.append(
            f"{path.muscle:16s} {r.terms:5d} {','.join(path.coordinates)[:30]:30s} {r.length_rmse * 1e3:9.3f} "
            f"{r.moment_arm_rmse * 1e3:9.3f} {r.heldout_length_rmse * 1e3:9.3f} {r.heldout_moment_arm_rmse * 1e3:9.3f}"
        )
    return "\n".join(lines)


def _settings(args) -> StepwiseSettings:
    if args.das3_rules:
        return StepwiseSettings(degree=args.degree, min_relative_improvement=args.min_improvement,
                                tolerance=args.rms_tolerance)
    return replace(ACCURATE, max_degree=args.max_degree, degree=min(ACCURATE.degree, args.max_degree))


def _sampler(args):
    """OpenSim's paths (child process), or the model's geometric paths in trajopt with --geometric or without
    OpenSim."""
    if args.geometric or not opensim_available():
        print(f"{args.model}: sampling the model's geometric paths (wrapping as OpenSim computes it; "
              f"{'--geometric' if args.geometric else 'OpenSim is not installed'})")
        return GeometricPathSampler(args.model)
    return OpenSimPathSampler(args.model)


def _from_model(args, settings):
    # --cells scans the model's geometric paths: read it with trajopt's importer first. A model it cannot load
    # fails here with --geometric (not after the whole fit); with OpenSim's samples its cell trees go unscanned
    processed = None
    if args.cells:
        try:
            processed = load_processed(args.model)
        except TrajoptInputError as error:
            if args.geometric or not opensim_available():
                raise
            print(f"--cells: trajopt's importer cannot read the model ({error}): no jump or kink scan; cell trees "
                  f"split along the coordinates only, on OpenSim's samples")
    osim = None
    if args.pieces:  # --pieces finds its cuts on the model: read it before sampling
        osim = load_osim(args.model)
    sampler = _sampler(args)
    if not sampler.info.muscles:
        raise TrajoptInputError(f"{args.model}: the model has no muscles: no paths to fit")
    unknown = [m for m in args.muscles or () if m not in sampler.info.muscles]
    if unknown:
        known = ", ".join(sampler.info.muscles[:8]) + (" ..." if len(sampler.info.muscles) > 8 else "")
        raise TrajoptInputError(f"--muscles: {', '.join(unknown)} not muscle(s) of {args.model} ({known})")
    coordinates = tuple(args.coordinates or sampler.coordinates)
    if not coordinates:
        raise TrajoptInputError(f"{args.model}: no unlocked coordinate is crossed by a muscle: nothing to sample")
    if args.cut_along is not None and args.cut_along not in coordinates:
        raise TrajoptInputError(f"--cut-along '{args.cut_along}': not a sampled coordinate ({', '.join(coordinates)})")
    if args.motion is not None:
        checked = read_checked_coordinates(args.motion, sampler.info)
        print(f"{args.motion}: {checked.table.num_frames} frames, {checked.unit.describe()}")
        for warning in checked.caveats:
            print(f"warning: {warning}")
        domain = motion_domain(sampler, coordinates, checked.table.select(coordinates).data, args.band,
                               source=f"±{args.band:g} deg around {args.motion.name}")
        plan = SamplingPlan(samples_per_frame=args.samples_per_frame, max_samples=max(args.samples, 6000),
                            seed=args.seed)
    else:
        domain = PathDomain.box(coordinates, _ranges(sampler.info, coordinates, args.range), "model coordinate ranges"
                                + (" (narrowed by --range)" if args.range else ""))
        plan = SamplingPlan(box_samples=args.samples, seed=args.seed)
    plan = replace(plan, heldout_fraction=args.heldout / plan.count(domain))
    print(f"{args.model}: domain {domain.describe()[:300]}")
    paths, train, heldout, seconds = fit_domain(sampler, domain, settings, plan, args.model.name, args.muscles)
    if args.save_samples is not None:
        train.to_csv(f"{args.save_samples}_train.csv.gz")
        heldout.to_csv(f"{args.save_samples}_heldout.csv.gz")
    if args.pieces:
        return _pieces(args, osim, paths, train, heldout, settings)
    if args.cells:
        return _cells(args, processed, sampler, paths, train, heldout, plan, settings, seconds)
    return paths, seconds


def _pieces(args, osim, paths, train, heldout, settings):
    """--pieces: refit each muscle cell by cell between its cuts (`trajopt.model.paths.domain_pieces`; ``osim``: the
    model as ``trajopt.model.osim.load_osim`` reads it); prints the held-out RMS of each muscle against the single
    polynomial's."""
    crossed = {p.muscle: p.coordinates for p in paths}
    cuts = model_cuts(osim, crossed, paths.domain, args.cut_along, progress=print)
    ranges = {c: tuple(paths.domain.ranges[i]) for i, c in enumerate(paths.domain.coordinates)}
    pieces, seconds = fit_domain_pieces(train, cuts, settings, ranges=ranges, coordinates=crossed,
                                        model=args.model.name)
    print(f"{'muscle':16s} {'cells':>5s} {'terms':>5s} {'len held':>9s} {'ma held':>9s}  (mm; one polynomial)")
    for path, single in zip(pieces, paths):
        length, arm = heldout_rms(path, heldout)
        print(f"{path.muscle:16s} {len(path.pieces):5d} {path.terms:5d} {length * 1e3:9.3f} {arm * 1e3:9.3f}  "
              f"({single.report.heldout_length_rmse * 1e3:.3f}, {single.report.heldout_moment_arm_rmse * 1e3:.3f})")
    return DomainPiecewisePaths(list(pieces), args.model.name, paths.domain), seconds


def _cells(args, processed, sampler, paths, train, heldout, plan, settings, seconds):
    """--cells: a cell tree for each muscle one polynomial misses at the held-out samples
    (`trajopt.model.paths.jump_cells`; ``processed``: the model and its couplings as
    ``trajopt.model.musculoskeletal.operators.load_processed`` returns them); prints each muscle's held-out RMS against
    the one polynomial's."""
    failing = _missing_targets(paths, plan)
    trees = {p.muscle: one_cell(p) for p in paths}
    if failing:
        domain, coordinates = paths.domain, paths.domain.coordinates
        extra = sampler.sample(coordinates, domain.sample(max(args.cells_samples - train.size, 0), args.seed + 2),
                               failing)
        cells_train = train.stacked(extra, failing)
        ranges = domain_box(domain)
        print(f"--cells: {', '.join(failing)} miss the targets with one polynomial; cell trees on "
              f"{cells_train.size} training configurations")
        crossed = {m: paths[m].coordinates for m in failing}
        for search, tree, cell_seconds in jump_cell_trees(*(processed or (None, ())), cells_train, crossed, ranges,
                                                          args.scan_budget, settings, progress=print):
            trees[search.muscle] = tree
            seconds[search.muscle] += cell_seconds
    print(f"{'muscle':16s} {'cells':>5s} {'terms':>5s} {'len held':>9s} {'ma held':>9s}  (mm; one polynomial)")
    for single in paths:
        tree = trees[single.muscle]
        pockets, length, arm = pocket_rms(tree, heldout)
        note = f"; {pockets} held-out points more than 100 mm off (pockets), RMS without them" if pockets else ""
        print(f"{tree.muscle:16s} {len(tree.pieces):5d} {tree.terms:5d} {length * 1e3:9.3f} {arm * 1e3:9.3f}  "
              f"({single.report.heldout_length_rmse * 1e3:.3f}, {single.report.heldout_moment_arm_rmse * 1e3:.3f}"
              f"{note})")
    if failing:
        print("cell trees jump across their cuts as OpenSim's paths do: for analyses, not gradient-based optimal "
              "control")
    return DomainCellPaths([trees[p.muscle] for p in paths], args.model.name, paths.domain), seconds


def _check_counts(args) -> None:
    """Counts and sizes that must be positive, in one line each (a zero would divide by zero mid-fit)."""
    for option, value, least in (("--samples", args.samples, 1), ("--heldout", args.heldout, 0),
                                 ("--samples-per-frame", args.samples_per_frame, 1),
                                 ("--max-degree", args.max_degree, 1), ("--degree", args.degree, 1),
                                 ("--cells-samples", args.cells_samples, 0), ("--seed", args.seed, 0)):
        if value < least:
            raise TrajoptInputError(f"{option} {value}: must be at least {least}")
    if not (np.isfinite(args.band) and args.band > 0):
        raise TrajoptInputError(f"--band {args.band:g}: must be a positive number of degrees")
    if args.band < 1:  # a band given in radians
        raise TrajoptInputError(f"--band {args.band:g}: the band is in degrees, and {args.band:g} deg leaves the fit "
                                f"almost nothing to span: radians? ({args.band:g} rad = "
                                f"{np.degrees(args.band):.3g} deg)")
    # the fit stops below these: a negative one never stops it before --degree
    for option, value in (("--rms-tolerance", args.rms_tolerance), ("--scan-budget", args.scan_budget)):
        if value is not None and not (np.isfinite(value) and value > 0):
            raise TrajoptInputError(f"{option} {value:g}: must be a positive number")
    if not (np.isfinite(args.min_improvement) and args.min_improvement >= 0):
        raise TrajoptInputError(f"--min-improvement {args.min_improvement:g}: must be a number >= 0")


def _check_outputs(args) -> None:
    """Every file the fit will write is writable, before any sampling or fitting."""
    writable_file(out_folder(args.out, create=False) / FILE, "--out")
    if args.opensim_xml is not None:
        writable_file(args.opensim_xml, "--opensim-xml")
    if args.save_samples is not None:
        writable_file(Path(f"{args.save_samples}_train.csv.gz"), "--save-samples")


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    try:
        _check_counts(args)
        _check_outputs(args)
        settings = _settings(args)
        if args.cells and (args.pieces or args.train_csv is not None or args.opensim_xml is not None):
            raise TrajoptInputError("--cells fits from the model: not with --pieces, --train-csv or --opensim-xml")
        if args.pieces and (args.motion is not None or args.train_csv is not None or args.opensim_xml is not None):
            raise TrajoptInputError("--pieces fits over the model's ranges: not with --motion, --train-csv or "
                                    "--opensim-xml")
        if args.cut_along is not None and not args.pieces:
            raise TrajoptInputError("--cut-along needs --pieces")
        if args.heldout_csv is not None and args.train_csv is None:  # else ignored, and the model sampled
            raise TrajoptInputError(f"--heldout-csv {args.heldout_csv}: goes with --train-csv")
        if args.train_csv is None:
            if args.quaternion:
                raise TrajoptInputError("--quaternion needs --train-csv (samples in Euler coordinates to map)")
            paths, seconds = _from_model(args, settings)
        else:
            train = PathSamples.from_csv(args.train_csv, coordinates=args.coordinates, muscles=args.muscles)
            heldout = (PathSamples.from_csv(args.heldout_csv, coordinates=train.coordinates, muscles=train.muscles)
                       if args.heldout_csv else None)
            for spec in args.quaternion:
                try:
                    joint, sequence, names = spec.split(":")
                except ValueError:
                    raise TrajoptInputError(f"--quaternion '{spec}': expected JOINT:SEQUENCE:C1,C2,C3") from None
                names = tuple(names.split(","))
                if len(names) != 3:
                    raise TrajoptInputError(f"--quaternion '{spec}': a ball joint needs three Euler coordinates, "
                                            f"got {len(names)}")
                train = to_quaternion_coordinates(train, joint, sequence, names)
                heldout = heldout and to_quaternion_coordinates(heldout, joint, sequence, names)
            domain = PathDomain.box(train.coordinates, np.column_stack([train.q.min(axis=0), train.q.max(axis=0)]),
                                    f"box of the training samples in {args.train_csv.name}")
            fitted, seconds = fit_paths(train, settings, heldout, model=args.model.name)
            paths = PolynomialPaths(list(fitted), args.model.name, domain)
        if args.opensim_xml is not None:
            write_function_based_path_set(paths, args.opensim_xml, coordinate_paths=_coordinate_paths(args))
    except TrajoptInputError as error:
        print(f"trajopt fit-paths: error: {error}", file=sys.stderr)
        return 2
    if not (args.pieces or args.cells):
        print(_table(paths))
        _hint_cells(paths)
    if args.quaternion:
        print("moment-arm errors are about the fitted coordinates (constrained quaternions for the joints given)")
    print(f"fitting time: {sum(seconds.values()):.2f} s for {len(paths)} muscles")
    try:
        paths.save(args.out / FILE)
    except OSError as error:
        print(f"trajopt fit-paths: error: --out {args.out}: cannot write ({error.strerror})", file=sys.stderr)
        return 2
    print(f"wrote {args.out / FILE}" + (f" and {args.opensim_xml}" if args.opensim_xml else ""))
    return 0


def _missing_targets(paths, plan) -> list[str]:
    """The muscles whose one polynomial misses the plan's targets at the held-out samples (none without them)."""
    return [p.muscle for p in paths if p.report is not None and (  # no held-out samples: nan, never above
        p.report.heldout_length_rmse > plan.length_target or p.report.heldout_moment_arm_rmse > plan.moment_arm_target)]


def _hint_cells(paths) -> None:
    """Name the muscles one polynomial misses at the held-out samples and the option that fits them piecewise."""
    missing = _missing_targets(paths, SamplingPlan())
    if missing:
        print(f"{len(missing)} muscle(s) miss 0.5 mm length / 1 mm moment-arm RMS at the held-out samples with one "
              f"polynomial: {', '.join(missing)}; --cells fits them piecewise (for analyses)")


def _coordinate_paths(args) -> dict:
    """Coordinate name -> OpenSim component path (/jointset/<joint>/<coordinate>) from the .osim file, read
    without OpenSim; empty when the file cannot be read (names then stay plain)."""
    return coordinate_paths(args.model) if args.model.is_file() else {}


if __name__ == "__main__":
    sys.exit(main())
