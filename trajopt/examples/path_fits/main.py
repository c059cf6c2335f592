"""Held-out accuracy of polynomial path surrogates over whole domains (trajopt's fit vs OpenSim's
PolynomialPathFitter vs the FunctionBasedPathSet shipped with Moco's 3D walking model).

``trajopt run path-fits`` (OpenSim needed) samples each model with OpenSim (child process) over its domain, fits
with trajopt's defaults (``trajopt.model.paths.fitting.ACCURATE``), runs OpenSim 4.6's PolynomialPathFitter and writes
``summary.md`` plus one table per case to ``--out`` (default ./trajopt_results/path-fits; the committed
results/path_fits/ is regenerated with ``--out results/path_fits``). Cases:

- arm26 and 2D_gait (trajopt/examples/gait2d) over the model's coordinate ranges; OpenSim's fitter gets the very same
  training configurations as frames (1 sample per frame, ±1e-6 deg band, so it fits those configurations);
- walk3d (trajopt/examples/walk3d/subject_walk_scaled.osim, 80 muscles, each leg sampled with its own 6 coordinates)
  over the coordinate ranges, and over a ±10 deg band around Moco's walking motion (coordinates.sto), the domain
  Moco's shipped FunctionBasedPathSet was fitted on. OpenSim's fitter on walk3d runs the way Moco made its set
  (25 samples per frame of the walking motion, ±10 deg; frames thinned, see the table) because its cost on the
  full 40-coordinate model is far above trajopt's sampler; its paths are then scored on the same held-out set.

Cases ``arm26-geometric`` and ``gait2d-geometric`` (not in the default list) sample trajopt's geometric paths
instead (no OpenSim; the same lengths, moment arms −∂l/∂q where OpenSim's sampler gives computeMomentArm) and
skip OpenSim's fitter.

arm26 and 2D_gait also get trajopt's domain-piecewise fit (``trajopt.model.paths.domain_pieces``, rows "trajopt
pieces"): arm26 cut where the geometric path's length jumps along the shoulder angle (wrap switches, located on
trajopt's geometric paths), 2D_gait at the range bounds of its ConditionalPathPoints.

Cell trees (rows "trajopt cells", cases ``arm26-cells``, ``gait2d-cells``, ``walk3d-cells`` and
``walk3d-band-cells``, added to that case already in OUT/cases.json without redoing its rows;
``trajopt/examples/path_fits/cells.py``, the recipe of ``trajopt fit-paths --cells``): the muscles that miss the targets
with one polynomial are fitted with ``trajopt.model.paths.domain_cells`` on ``--cells-samples`` training samples, split
first along their length-jump then moment-arm kink surfaces found on trajopt's geometric path
(``trajopt.model.paths.jump_cuts``), scored on
the case's held-out samples and on ``--cells-heldout`` fresh ones; the trees are kept in OUT/<case>_cells.json.

Held-out errors: RMS over a muscle's held-out samples of the length and of the moment arms about the
coordinates it crosses (mm); a muscle meets the targets with length <= 0.5 mm and moment arm <= 1 mm.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_out, out_folder
from trajopt.model.io import read_table
from trajopt.model.io.opensim_reference import run_opensim_task
from trajopt.model.paths.function_based_xml import read_function_based_path_set
from trajopt.model.osim import load_osim
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_cells import DomainCellPaths
from trajopt.model.paths.domain_pieces import fit_domain_pieces, heldout_rms, model_cuts
from trajopt.model.paths.fitting import ACCURATE, fit_paths
from trajopt.edge.tools.geometric_sampling import GeometricPathSampler
from trajopt.model.paths.refit import motion_domain
from trajopt.model.paths.samples import PathSamples
from trajopt.edge.tools.path_sampling import OpenSimPathSampler

from trajopt.examples.path_fits.cells import run_cells

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "held-out accuracy of path surrogates: trajopt vs OpenSim's PolynomialPathFitter vs Moco"

ROOT = Path(__file__).resolve().parents[3]
ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
GAIT2D = ROOT / "trajopt" / "examples" / "gait2d" / "2D_gait.osim"
ARM26_JUMPS = "r_shoulder_elev"  # arm26's wrap switches: length jumps along the shoulder elevation
WALK3D = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"
WALK3D_PATHS = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled_FunctionBasedPathSet.xml"
WALK3D_MOTION = ROOT / "trajopt" / "examples" / "walk3d" / "coordinates.sto"
LENGTH_TARGET, ARM_TARGET = 0.5e-3, 1e-3
METHODS = ("trajopt", "trajopt pieces", "trajopt cells", "opensim", "moco")


@dataclass
class Scores:
    """Per-muscle held-out RMS errors (m), terms (nonzero coefficients) and fitting time (s) of one method."""

    length: dict = field(default_factory=dict)
    arm: dict = field(default_factory=dict)
    terms: dict = field(default_factory=dict)
    seconds: float = float("nan")
    note: str = ""


def _errors(function, coordinates, heldout: PathSamples, muscles, crossed) -> tuple[dict, dict]:
    """Held-out RMS of lengths and of moment arms about each muscle's crossed coordinates."""
    n = heldout.size
    lengths, arms = function.map(n)(heldout.q[:, [heldout.coordinates.index(c) for c in coordinates]].T)
    lengths = np.asarray(lengths).T
    arms = np.asarray(arms).reshape(len(muscles), n, len(coordinates)).transpose(1, 0, 2)
    length_rms, arm_rms = {}, {}
    for i, muscle in enumerate(muscles):
        true_lengths, true_arms = heldout.muscle(muscle)
        columns = [coordinates.index(c) for c in crossed[muscle]]
        true_columns = [heldout.coordinates.index(c) for c in crossed[muscle]]
        ok = np.isfinite(true_lengths) & np.all(np.isfinite(true_arms), axis=1)
        length_rms[muscle] = float(np.sqrt(np.mean((lengths[ok, i] - true_lengths[ok]) ** 2)))
        arm_rms[muscle] = float(np.sqrt(np.mean((arms[ok][:, i, columns] - true_arms[ok][:, true_columns]) ** 2)))
    return length_rms, arm_rms


def _function_based(file, coordinates, heldout, crossed) -> Scores:
    paths = read_function_based_path_set(file)
    muscles = [m for m in paths.muscles if m in heldout.muscles]
    sub = type(paths)([paths[m] for m in muscles], str(file))
    length, arm = _errors(sub.lengths_and_moment_arms_function(tuple(coordinates)), tuple(coordinates), heldout,
                          muscles, crossed)
    terms = {m: int(sum(c != 0.0 for c in paths[m].length.coefficients)) for m in muscles}
    return Scores(length, arm, terms)


def _motion_frames(coordinates, every: int) -> np.ndarray:
    """Frames of Moco's walking motion; coordinates it lacks (mtp angles, locked in Moco's run) at 0."""
    table = read_table(WALK3D_MOTION)
    leaf = {label.split("/")[-2] if label.endswith("/value") else label: i for i, label in enumerate(table.labels)}
    data = table.data[::every]
    return np.column_stack([data[:, leaf[c]] if c in leaf else np.zeros(len(data)) for c in coordinates])


def _motion_coordinates() -> tuple[str, ...]:
    table = read_table(WALK3D_MOTION)
    return tuple(label.split("/")[-2] for label in table.labels if label.endswith("/value"))


_FITTER_RUNS: dict = {}


def _opensim_fitter(request: dict) -> dict:
    """OpenSim's PolynomialPathFitter, run once per distinct request (both legs of walk3d share a run)."""
    key = repr(sorted((k, str(v)) for k, v in request.items() if k != "configurations")) + str(
        np.asarray(request["configurations"]).sum())
    if key not in _FITTER_RUNS:
        _FITTER_RUNS[key] = run_opensim_task("polynomial_path_fitter", request)
    return _FITTER_RUNS[key]


def case_samples(name: str, domain: PathDomain, train_count: int, heldout_count: int, sampler, muscles=None
                 ) -> tuple[PathSamples, PathSamples]:
    """A case's training (seed 0) and held-out (seed 1) samples, cached in /tmp by case, domain and counts."""
    cache = Path("/tmp") / f"trajopt_path_fits_samples_{name}_{domain.key()}_{train_count}_{heldout_count}"
    if Path(f"{cache}_train.csv.gz").is_file() and Path(f"{cache}_heldout.csv.gz").is_file():
        return PathSamples.from_csv(f"{cache}_train.csv.gz"), PathSamples.from_csv(f"{cache}_heldout.csv.gz")
    train = sampler.sample(domain.coordinates, domain.sample(train_count, 0), muscles)
    train.to_csv(f"{cache}_train.csv.gz")
    heldout = sampler.sample(domain.coordinates, domain.sample(heldout_count, 1), muscles)
    heldout.to_csv(f"{cache}_heldout.csv.gz")
    return train, heldout


def run_case(name: str, model: Path, domain: PathDomain, train_count: int, heldout_count: int, sampler,
             muscles=None, opensim_same_samples: bool = True, moco: bool = False, motion_every: int = 50,
             opensim_fitter: bool = True, cuts=None, margin: float = 0.0, progress=print) -> dict:
    """Sample, fit (trajopt, OpenSim's fitter, optionally Moco's shipped set) and score on held-out samples;
    ``cuts(crossed) -> {muscle: cuts}`` adds trajopt's domain-piecewise fit (training samples within ``margin``
    of a cut left out)."""
    coordinates = domain.coordinates
    start = time.perf_counter()
    train, heldout = case_samples(name, domain, train_count, heldout_count, sampler, muscles)
    sampling = time.perf_counter() - start
    progress(f"{name}: sampled {train.size} + {heldout.size} configurations ({sampling:.0f} s)")
    ranges = {c: tuple(domain.ranges[i]) for i, c in enumerate(coordinates)}
    if domain.is_band:
        ranges = {c: (train.q[:, i].min(), train.q[:, i].max()) for i, c in enumerate(coordinates)}
    paths, seconds = fit_paths(train, ACCURATE, progress=progress, ranges=ranges)
    crossed = {p.muscle: p.coordinates for p in paths}
    ours = Scores(*_errors(paths.lengths_and_moment_arms_function(coordinates), coordinates, heldout,
                           paths.muscles, crossed), {p.muscle: p.report.terms for p in paths}, sum(seconds.values()))
    results = {"trajopt": ours, "sampling_seconds": sampling, "train": train.size, "heldout": heldout.size,
               "crossed": crossed, "paths": paths}
    if cuts is not None:
        located = time.perf_counter()
        muscle_cuts = cuts(crossed)
        located = time.perf_counter() - located
        results["trajopt pieces"] = _pieces(train, heldout, muscle_cuts, ranges, crossed, margin, progress)
        results["trajopt pieces"].note = f"cuts found in {located:.0f} s; " + results["trajopt pieces"].note
    out = Path("/tmp") / f"trajopt_path_fits_{name.replace(' ', '_')}"
    if opensim_same_samples:
        request = {"model": str(model), "coordinates": np.array(coordinates), "configurations": train.q,
                   "output_directory": str(out)}
        note = "same training configurations"
    else:
        names = _motion_coordinates()
        frames = _motion_frames(names, motion_every)
        out = Path("/tmp") / "trajopt_path_fits_walk3d_motion"
        request = {"model": str(model), "coordinates": np.array(names), "configurations": frames,
                   "output_directory": str(out), "samples_per_frame": 25, "bounds_degrees": 10.0}
        note = f"{len(frames)} frames of the walking motion (every {motion_every}th) x 25 samples, ±10 deg"
    if opensim_fitter:
        progress(f"{name}: OpenSim PolynomialPathFitter ({note}) ...")
        fitted = _opensim_fitter(request)
        opensim = _function_based(fitted["path_set"], coordinates, heldout, crossed)
        opensim.seconds, opensim.note = float(fitted["seconds"]), note
        results["opensim"] = opensim
    if moco:
        results["moco"] = _function_based(WALK3D_PATHS, coordinates, heldout, crossed)
        results["moco"].note = "shipped with Moco's example3DWalking"
    return results


def _pieces(train, heldout, cuts: dict, ranges, crossed, margin, progress) -> Scores:
    """Domain-piecewise fit (``trajopt.model.paths.domain_pieces``): cells between each muscle's cuts, one polynomial
    for muscles without cuts (the same fit as trajopt's)."""
    paths, seconds = fit_domain_pieces(train, cuts, ACCURATE, ranges=ranges, coordinates=crossed, progress=progress,
                                       margin=margin)
    scores = Scores(seconds=sum(seconds.values()))
    for path in paths:
        scores.length[path.muscle], scores.arm[path.muscle] = heldout_rms(path, heldout)
        scores.terms[path.muscle] = path.terms
    cells = "; ".join(f"{p.muscle} at {p.cuts[0].coordinate} = {', '.join(_cut_text(c) for c in p.cuts)} deg"
                      for p in paths if p.cuts)
    left_out = f"training samples within {np.rad2deg(margin):.3g} deg of a cut left out; " if margin else ""
    scores.note = f"{left_out}cells between cuts: {cells}"
    return scores


def _cut_text(cut) -> str:
    """A cut's value in degrees, or the polynomial's arguments when it is no constant."""
    return f"v({', '.join(cut.others)})" if cut.others else f"{np.rad2deg(cut.coefficients[0]):.2f}"


def _cuts(model: Path, domain: PathDomain, along: str | None = None):
    """Cuts at the range bounds of each muscle's ConditionalPathPoints inside the domain (2D_gait), or where the
    geometric path's length jumps along ``along`` (arm26's wrap switches at the shoulder)."""
    osim = load_osim(model)
    return lambda crossed: model_cuts(osim, crossed, domain, along)


def _row(case: str, method: str, scores: Scores, muscles: int) -> str:
    length = np.array(list(scores.length.values())) * 1e3
    arm = np.array(list(scores.arm.values())) * 1e3
    meets = int(np.sum((length <= LENGTH_TARGET * 1e3) & (arm <= ARM_TARGET * 1e3)))
    worst = max(scores.arm, key=scores.arm.get)
    return (f"| {case} | {method} | {meets}/{muscles} | {np.median(length):.3f} | {length.max():.3f} | "
            f"{np.median(arm):.3f} | {arm.max():.3f} ({worst}) | {np.mean(list(scores.terms.values())):.1f} | "
            f"{scores.seconds:.1f} | {scores.note} |")


def _cells_notes(out: Path, cases: dict) -> list[str]:
    """The summary's notes on the "trajopt cells" rows: what was fitted, what still misses and why."""
    with_cells = [case for case in cases if "trajopt cells" in cases[case]]
    if not with_cells:
        return []
    lines = ["- trajopt cells (`--cases arm26-cells gait2d-cells walk3d-cells walk3d-band-cells`; "
             "`trajopt.model.paths.jump_cells`,",
             "  the recipe of `trajopt fit-paths --cells`): the",
             "  muscles missing the targets with one polynomial get a cell tree (`trajopt.model.paths.domain_cells`) "
             "on a",
             "  larger sample, split first along their length-jump surfaces, then their moment-arm kink surfaces, "
             "found",
             "  without hand-picked coordinates or signs on trajopt's geometric path (`trajopt.model.paths.jump_cuts`; "
             "equal",
             "  to OpenSim's lengths); the other muscles keep their one polynomial (the trajopt row's values). Jumps",
             "  of 0.1 m or more are OpenSim's 'pockets' (glmax1: the wrap taking the other way round, paths ~220 mm",
             "  longer in about 0.1 % of the hip box): no surface, trajopt's geometric path reproduces them, no cell",
             "  of a few hundred samples follows them, so they stay as error (a 240-point held-out set mostly misses",
             "  them; see the fresh held-out column)."]
    for case in with_cells:
        result = cases[case]
        details, ours = result["cells"], result["trajopt cells"]
        missing = [m for m in details["muscles"] if ours.length[m] > LENGTH_TARGET or ours.arm[m] > ARM_TARGET]
        fresh_missing = [m for m, (a, b) in details["fresh"].items() if a > LENGTH_TARGET or b > ARM_TARGET]
        pockets = "; ".join(f"{m}: {n} of the {details['fresh_heldout']} fresh points more than 100 mm off (pockets), "
                            f"without them {a * 1e3:.3f} / {b * 1e3:.3f} mm"
                            for m, (n, a, b) in details.get("pockets", {}).items() if n)
        lines.append(f"  - {case}: {details['train']} training samples, load {result.get('cells_load', '?')}; "
                     f"surfaces: " + "; ".join(f"{m}: {details['surfaces'][m]}" for m in details["muscles"])
                     + f". Still missing on the case's held-out: {', '.join(missing) or 'none'}; on "
                     f"{details['fresh_heldout']} fresh: {', '.join(fresh_missing) or 'none'}."
                     + (f" {pockets}." if pockets else "")
                     + (f" Fitted trees: [{_case_file(case)}_cells.json]({_case_file(case)}_cells.json) (the tools' "
                        "--paths format)." if (out / f"{_case_file(case)}_cells.json").is_file() else
                        " Fitted trees not kept (this row was run before path-fits wrote them)."))
    lines += ["  Moment-arm kink surfaces (`jump_cuts.kink_cuts`: the moment arm jumps, the length does not; a wrap",
              "  engaging) are cut after the jump surfaces: walk3d glmax2's at hip flexion 104-119 deg and recfem's",
              "  patella wrap at 129-139 deg knee moving with the hip (before them: fresh moment-arm RMS 1.63 and",
              "  1.34 mm). Each cell's polynomial grows to degree 7 or 9, whichever validates better (iliacus with",
              "  degree 9 only: 1.19 mm on the fresh points, most of it one point at a corner of the hip box where the",
              "  cell below its jump surface leaves its samples). "
              "glmax1's pockets hold its remaining fresh length error",
              "  (220 mm x sqrt(0.001) = 7 mm RMS alone). The cases' 240/160-point held-out sets are optimistic for",
              "  these muscles; the fresh held-out column is the one to trust."]
    if "arm26 ranges" in with_cells:
        lines += ["  arm26 BIClong's fresh held-out length error comes from 2 of the 4000 points, at 29.6 deg shoulder",
                  "  elevation, where OpenSim's path is 86-87 mm longer than the cells (which follow the points around",
                  "  them to about 1 mm): a sliver narrower than the jump scan's 0.5 deg step, below the 100 mm pocket",
                  "  threshold; without them 0.225 / 0.462 mm (measured on arm26_ranges_cells.json).",
                  "  OpenSim's computeMomentArm is NaN for BIClong at 2 of the 4000 points; held-out RMS leave such",
                  "  points out."]
    return lines


def write_summary(out: Path, cases: dict, load: str) -> Path:
    lines = ["# Polynomial path surrogates: held-out accuracy (trajopt vs OpenSim's PolynomialPathFitter vs Moco)", "",
             "Generated by `trajopt run path-fits --out results/path_fits` (OpenSim 4.6 in a child process).",
             "Held-out: fresh Latin-hypercube configurations of the same domain (another seed), OpenSim lengths and",
             "`computeMomentArm`; errors are each muscle's RMS over them "
             "(moment arms about the coordinates it crosses).",
             "Targets: length RMS <= 0.5 mm and moment-arm RMS <= 1 mm. trajopt: `ACCURATE` defaults (stepwise terms,",
             "degree grown to 9, training RMS <= 0.25 / 0.5 mm). OpenSim: PolynomialPathFitter defaults (orders 2-6,",
             "tolerances 0.1 mm). Terms: nonzero coefficients. Fit time: trajopt's fitting only (samples given);",
             "OpenSim's `run()` includes its own evaluation of the geometric paths at every frame and sample.",
             "trajopt pieces: `trajopt.model.paths.domain_pieces`, the coordinate box cut where a muscle's path "
             "changes",
             "(arm26: where trajopt's geometric path's length jumps along the shoulder angle; 2D_gait: the range",
             "bounds of ConditionalPathPoints), one `ACCURATE` polynomial per cell; muscles without cuts: one",
             "polynomial as in trajopt's row. Fit time: the whole set's, without finding the cuts (in the note).",
             f"Timings on a shared 2-core machine ({load}); treat them as rough.", "",
             "| case | method | muscles meeting targets | median length RMS (mm) | max length RMS (mm) | "
             "median moment-arm RMS (mm) | max moment-arm RMS (mm) | mean terms | fit time (s) | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for case, result in cases.items():
        muscles = len(result["trajopt"].length)
        for method in METHODS:
            if method in result:
                lines.append(_row(f"{case} ({result['train']} train / {result['heldout']} held-out)", method,
                                  result[method], muscles))
    lines += ["", "Notes:",
              "- Muscles missing the targets have discontinuous or switching OpenSim geometry: "
              "wrap objects that switch",
              "  (arm26 BIClong at 31 deg and TRIlong at 41.6, 70.8 and 144.6 deg shoulder elevation: length jumps of",
              "  1.7, 2.0, 2.7 and 7.9 mm; walk3d glmax, iliacus, psoas, vaslat), ConditionalPathPoints (2D_gait",
              "  rect_fem, vasti). No single polynomial follows a jump; motion refits "
              "(`trajopt.model.paths.refit`) fall back",
              "  to pieces along the motion. Cells between cuts (trajopt pieces) follow them. arm26's wrapped paths",
              "  also have cusps (BIClong at -78.4 deg, TRIlong at 113 and 118 deg) where -dl/dq diverges (beyond",
              "  100 mm within 0.1 deg) while OpenSim's computeMomentArm, the held-out values here, stays bounded:",
              "  against -dl/dq of the geometric paths (what trajopt's dynamics use; the 'geometric paths' rows) the",
              "  pieces' moment-arm RMS over the whole range stays above 1 mm for BIClong and TRIlong.",
              "- 'geometric paths' cases: sampled on trajopt's geometric paths (`--cases arm26-geometric",
              "  gait2d-geometric`), lengths equal to OpenSim's, moment arms -dl/dq; same configurations as the",
              "  OpenSim cases; OpenSim's fitter not run.",
              "- walk3d is sampled per leg over that leg's 6 coordinates; the two legs are mirror images, hence the",
              "  equal trajopt rows. Moco's set was fitted around its walking motion with the mtp joints locked, so it",
              "  misses the mtp dependence of the toe muscles (ehl, fdl, fhl, edl) in these domains "
              "(mtp sampled ±10 deg",
              "  about 0 in the band), and over the full ranges it is far outside its domain.",
              "- OpenSim's PolynomialPathFitter was not run on walk3d "
              "(its run on the whole 40-coordinate model costs far",
              "  more than trajopt's per-leg sampling on this shared machine: 1368 s for 2D_gait's 3000 frames).",
              *_cells_notes(out, cases),
              "", "Per-muscle tables: the `<case>.md` files here. DAS3 serratus (Euler vs quaternion coordinates):",
              "[das3_serratus.md](das3_serratus.md).", ""]
    for case, result in cases.items():
        table = [f"# {case}: held-out RMS per muscle (mm)", "",
                 "| muscle | coordinates | trajopt terms | trajopt length | trajopt moment arm | "
                 + ("pieces terms | pieces length | pieces moment arm | " if "trajopt pieces" in result else "")
                 + (f"cells terms | cells length | cells moment arm | cells length / moment arm "
                    f"({result['cells']['fresh_heldout']} fresh held-out) | " if "trajopt cells" in result else "")
                 + "OpenSim terms | OpenSim length | OpenSim moment arm |"
                 + (" Moco length | Moco moment arm |" if "moco" in result else ""),
                 "|---|---|---|---|---|---|---|---|" + ("---|---|---|" if "trajopt pieces" in result else "")
                 + ("---|---|---|---|" if "trajopt cells" in result else "")
                 + ("---|---|" if "moco" in result else "")]
        for muscle in result["trajopt"].length:
            cells = [muscle, ", ".join(result["crossed"][muscle]), str(result["trajopt"].terms[muscle])]
            cells += [f"{result['trajopt'].length[muscle] * 1e3:.3f}", f"{result['trajopt'].arm[muscle] * 1e3:.3f}"]
            if "trajopt pieces" in result:
                pieces = result["trajopt pieces"]
                cells += [str(pieces.terms[muscle]), f"{pieces.length[muscle] * 1e3:.3f}",
                          f"{pieces.arm[muscle] * 1e3:.3f}"]
            if "trajopt cells" in result:
                ours, fresh = result["trajopt cells"], result["cells"]["fresh"]
                cells += [str(ours.terms[muscle]), f"{ours.length[muscle] * 1e3:.3f}", f"{ours.arm[muscle] * 1e3:.3f}",
                          f"{fresh[muscle][0] * 1e3:.3f} / {fresh[muscle][1] * 1e3:.3f}" if muscle in fresh
                          else "one polynomial kept"]
            if "opensim" in result:
                cells += [str(result["opensim"].terms.get(muscle, "")), f"{result['opensim'].length[muscle] * 1e3:.3f}",
                          f"{result['opensim'].arm[muscle] * 1e3:.3f}"]
            else:
                cells += ["not run", "", ""]
            if "moco" in result:
                cells += [f"{result['moco'].length[muscle] * 1e3:.3f}", f"{result['moco'].arm[muscle] * 1e3:.3f}"]
            table.append("| " + " | ".join(cells) + " |")
        (out / f"{_case_file(case)}.md").write_text("\n".join(table) + "\n")
    path = out / "summary.md"
    path.write_text("\n".join(lines))
    return path


def _case_file(case: str) -> str:
    """A case's file stem in OUT: 'walk3d ranges (right leg)' -> 'walk3d_ranges_right_leg'."""
    return case.replace("(", "").replace(")", "").replace(" ", "_")


def _keep_cell_path(file: Path, path, muscles, model: Path, domain) -> None:
    """Add a fitted cell tree to a case's cell paths (OUT/<case>_cells.json, the tools' --paths format), keeping
    the trees of ``muscles`` fitted earlier."""
    earlier = [p for p in DomainCellPaths.load(file) if p.muscle in muscles and p.muscle != path.muscle
               ] if file.is_file() else []
    DomainCellPaths(earlier + [path], model.name, domain).save(file)


def _ranges_domain(sampler) -> PathDomain:
    """The box of all the sampler's coordinates over their ranges (arm26's and 2D_gait's cases)."""
    return PathDomain.box(sampler.coordinates, sampler.coordinate_ranges(sampler.coordinates), "ranges")


def _walk3d_case(sampler, case: str, side: str) -> tuple[str, PathDomain]:
    """A walk3d case's label and domain: one leg's 6 coordinates over their ranges or the walking band."""
    coordinates = tuple(c for c in sampler.coordinates if c.endswith(f"_{side}"))
    if case == "walk3d":
        domain = PathDomain.box(coordinates, sampler.coordinate_ranges(coordinates), "ranges")
    else:
        domain = motion_domain(sampler, coordinates, _motion_frames(coordinates, 10), 10.0, "walking ±10 deg")
    label = f"walk3d {'walking band' if case.endswith('band') else 'ranges'} ({'right' if side == 'r' else 'left'} leg)"
    return label, domain


def _cells_cases(args, saved: dict, store: Path):
    """The cases ``--cases arm26-cells gait2d-cells walk3d-cells walk3d-band-cells`` add "trajopt cells" rows to
    (each already in ``saved``): (label, model, domain, training and held-out samples, sampler) of each."""
    for case in [c.removesuffix("-cells") for c in args.cases if c.endswith("-cells")]:
        if case in ("arm26", "gait2d"):
            model = ARM26 if case == "arm26" else GAIT2D
            sampler = OpenSimPathSampler(model, progress=None)
            domain = _ranges_domain(sampler)
            found = [(f"{case} ranges", domain, case, None)]
        else:
            model, sampler = WALK3D, OpenSimPathSampler(WALK3D, progress=None, chain_only=True)
            found = [(*_walk3d_case(sampler, case, side), f"{case}_{side}", _walk3d_muscles(sampler, side))
                     for side in args.sides]
        for label, domain, name, muscles in found:
            if label not in saved:
                raise TrajoptInputError(f"{store}: no case '{label}' to add cells to (run --cases {case} first)")
            train, heldout = case_samples(name, domain, saved[label]["train"], saved[label]["heldout"], sampler,
                                          muscles)
            yield label, model, domain, train, heldout, sampler


def _walk3d_muscles(sampler, side: str) -> tuple[str, ...]:
    return tuple(m for m in sampler.info.muscles if m.endswith(f"_{side}"))


def _load() -> str:
    """The 1-minute load average, recorded beside fit times ("?" where /proc is missing)."""
    return open("/proc/loadavg").read().split()[0] if Path("/proc/loadavg").exists() else "?"


CASES = ("arm26", "gait2d", "walk3d", "walk3d-band", "none", "arm26-geometric", "gait2d-geometric", "arm26-cells",
         "gait2d-cells", "walk3d-cells", "walk3d-band-cells")  # what --cases takes


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run path-fits", description=description(__doc__))
    add_out(parser, "path-fits")
    parser.add_argument("--cases", nargs="+", default=["arm26", "gait2d", "walk3d", "walk3d-band"],
                        help="cases to run ('none': only rewrite the summary from OUT/cases.json; also "
                             "'arm26-geometric', 'gait2d-geometric': sampled on trajopt's geometric paths; "
                             "'arm26-cells', 'gait2d-cells', 'walk3d-cells', 'walk3d-band-cells': add the 'trajopt "
                             "cells' row to that case already in OUT/cases.json)")
    parser.add_argument("--walk3d-samples", type=int, default=1500, help="training samples per leg (held-out: a fifth)")
    parser.add_argument("--sides", nargs="+", default=["r", "l"], help="walk3d legs to run (each is its own case)")
    parser.add_argument("--cells-samples", type=int, default=11200,
                        help="walk3d cells: training samples per leg (the case's own plus fresh ones)")
    parser.add_argument("--cells-heldout", type=int, default=4000,
                        help="walk3d cells: fresh held-out configurations scored besides the case's own")
    parser.add_argument("--cells-muscles", nargs="+", default=None,
                        help="walk3d cells: muscles to fit with cells (default: those missing the targets in the "
                             "case's trajopt row)")
    parser.add_argument("--no-opensim-fitter", action="store_true", help="walk3d: skip OpenSim's PolynomialPathFitter")
    parser.add_argument("--motion-every", type=int, default=100,
                        help="walk3d: OpenSim's fitter uses every N-th frame of the walking motion")
    args = parser.parse_args(argv)
    unknown = [case for case in args.cases if case not in CASES]
    if unknown:  # a misspelled case would only rewrite the summary
        parser.error(f"--cases {' '.join(unknown)}: not a case (cases: {', '.join(CASES)})")
    args.out = out_folder(args.out)
    load = _load()
    cases = {}
    if "arm26" in args.cases:
        sampler = OpenSimPathSampler(ARM26, progress=None)
        domain = _ranges_domain(sampler)
        cases["arm26 ranges"] = run_case("arm26", ARM26, domain, 3000, 600, sampler,
                                         cuts=_cuts(ARM26, domain, ARM26_JUMPS))
    if "gait2d" in args.cases:
        sampler = OpenSimPathSampler(GAIT2D, progress=None)
        domain = _ranges_domain(sampler)
        cases["gait2d ranges"] = run_case("gait2d", GAIT2D, domain, 3000, 600, sampler,
                                          cuts=_cuts(GAIT2D, domain))
    for name, model, along in (("arm26", ARM26, ARM26_JUMPS), ("gait2d", GAIT2D, None)):
        if f"{name}-geometric" not in args.cases:
            continue
        sampler = GeometricPathSampler(model, progress=None)
        domain = _ranges_domain(sampler)
        cases[f"{name} ranges (geometric paths)"] = run_case(f"{name}-geometric", model, domain, 3000, 600, sampler,
                                                            opensim_fitter=False, cuts=_cuts(model, domain, along))
    for case in ("walk3d", "walk3d-band"):
        if case not in args.cases:
            continue
        sampler = OpenSimPathSampler(WALK3D, progress=None, chain_only=True)
        for side in args.sides:
            label, domain = _walk3d_case(sampler, case, side)
            cases[label] = run_case(f"{case}_{side}", WALK3D, domain, args.walk3d_samples, args.walk3d_samples // 5,
                                    sampler, _walk3d_muscles(sampler, side), opensim_same_samples=False, moco=True,
                                    motion_every=args.motion_every, opensim_fitter=not args.no_opensim_fitter)
    store = args.out / "cases.json"  # earlier runs' cases (e.g. walk3d run separately) stay in the summary
    saved = json.loads(store.read_text()) if store.is_file() else {}
    for case, result in cases.items():
        saved[case] = {key: (value.__dict__ if isinstance(value, Scores) else value) for key, value in result.items()
                       if key != "paths"}
        saved[case]["load"] = load
    store.write_text(json.dumps(saved, indent=1))
    for label, model, domain, train, heldout, sampler in _cells_cases(args, saved, store):
        def keep(scores, details, path, label=label, model=model, domain=domain):  # each muscle kept once fitted
            saved[label]["trajopt cells"], saved[label]["cells"] = scores, details
            saved[label]["cells_load"] = _load()
            store.write_text(json.dumps(saved, indent=1))
            _keep_cell_path(args.out / f"{_case_file(label)}_cells.json", path, details["muscles"], model, domain)

        run_cells(saved[label], model, domain, train, heldout, sampler, args.cells_samples, args.cells_heldout,
                  (LENGTH_TARGET, ARM_TARGET), args.cells_muscles, checkpoint=keep)
    cases = {case: {key: (Scores(**value) if key in METHODS else value)
                    for key, value in result.items()} for case, result in saved.items()}
    loads = ", ".join(sorted({result["load"] for result in cases.values()}))
    summary = write_summary(args.out, cases, f"load average during the runs {loads}")
    print(summary.read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
