"""arm26 point-to-point reaching: muscle-driven predictive simulations of OpenSim's two-coordinate arm.

Three problems on the same model (arm26.osim, its 6 muscles as DeGroote 2016 rigid-tendon units with the
polynomial path surrogates of ``trajopt/examples/arm26/paths.json``):

- ``build_problem``: start at rest from a posture, end at rest with the hand marker (``r_radius_styloid``)
  at a target; minimize ∫ Σ e² + residual penalty (+ optional final time); fixed or free duration;
- ``moco_problem``: the problem of Moco's reference study (``moco_reference/arm26_p2p_T0.5.omoco``): 0.5 s,
  rest at q = (0, 0) to rest at elbow 90°, initial activations 0, ∫ Σ e², no reserves, OpenSim's activation
  smoothing (tanh factor 0.1);
- ``static_arm.static_arm_problem``: bioptim's ``static_arm`` example set-up.

``trajopt run arm26-reaching [--target X Y Z] [--duration T|free]`` solves them and writes
``./trajopt_results/arm26-reaching/`` (``--out`` another folder). ``--paths geometric`` solves the first two with
arm26's own geometric paths in smooth mode (``trajopt.model.paths.wrapping.smooth``) instead of the surrogates, and
reports their deviation from the exact (OpenSim's) wrapped paths along each solution.
"""

from __future__ import annotations

import argparse
import enum
import json
import sys
from functools import lru_cache
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_animate, add_intervals, add_out, add_print_level, add_smoothing_band
from trajopt.examples.arm26_reaching import outputs
from trajopt.core.multibody import point_position
from trajopt.model.paths.domain_report import print_path_domain_warning
from trajopt.errors import TrajoptInputError
from trajopt.model.io.output import fresh_output
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.core.ocp import Effort, FinalTime, Free, Guess, HermiteSimpson, Ipopt, ResidualPenalty, Residuals
from trajopt.model.osim import load_osim
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.wrapping.smooth import SmoothWrapping
from trajopt.studies.prediction import (
    OPENSIM_ACTIVATION_SMOOTHING,
    ExplicitDynamics,
    ImplicitDynamics,
    MuscleDrivenProblem,
    StateBounds,
    muscle_driven_problem,
)

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'arm26 muscle-driven reaching; Moco and bioptim static_arm comparisons'

HERE = Path(__file__).resolve().parent
MODEL_FILE = HERE.parent / "arm26" / "arm26.osim"
PATHS_FILE = HERE.parent / "arm26" / "paths.json"
MOCO_REFERENCE = HERE / "moco_reference"
HAND = "r_radius_styloid"
START = (0.0, 0.2)  # rad: shoulder elevation, elbow flexion
DEFAULT_TARGET = (0.3046, 0.5942, 0.2352)  # m, ground: the hand at q = (0.3, 1.6) rad
MOCO_SPEED_BOUNDS = (-20.0, 20.0)  # rad/s, from the .omoco
MOCO_FINAL_ELBOW = np.pi / 2


@lru_cache(maxsize=None)
def load_model(geometric: bool = False, smoothing: SmoothWrapping | None = None) -> MusculoskeletalModel:
    """arm26 with its polynomial paths, or with `geometric` its own geometric paths wrapped as OpenSim computes it
    (over cylinders and, for TRIlong and BIClong, ellipsoids), in smooth mode with `smoothing` (built once per
    process). Exact mode's moment arms are OpenSim's computeMomentArm, the generalized forces and lengthening speeds
    of OpenSim's (and Moco's) muscles: they need only first derivatives of the wrap solves."""
    osim = load_osim(MODEL_FILE)
    if geometric:
        return MusculoskeletalModel(osim, GeometricPaths(osim, generalized_force_moment_arms=smoothing is None,
                                                         smoothing=smoothing))
    return MusculoskeletalModel(osim, PolynomialPaths.load(PATHS_FILE))


class ReachingPaths(enum.Enum):
    """The muscle paths of arm26 in a reaching problem: the polynomial surrogates, the .osim's own geometric paths
    wrapped exactly as OpenSim computes it, or in smooth mode (`trajopt.model.paths.wrapping.smooth`)."""

    POLYNOMIAL = "polynomial"
    EXACT = "exact"
    SMOOTH = "smooth"


def paths_model(paths: ReachingPaths, smoothing: SmoothWrapping = SmoothWrapping()) -> MusculoskeletalModel:
    """arm26 with `paths` (`smoothing`: smooth mode's band), built once per process (see `load_model`)."""
    if paths is ReachingPaths.POLYNOMIAL:
        return load_model()
    return load_model(True, smoothing if paths is ReachingPaths.SMOOTH else None)


def path_box(model: MusculoskeletalModel) -> tuple[np.ndarray, np.ndarray]:
    """Coordinate bounds: the coordinate ranges intersected with the paths' training box."""
    ranges = {c.name: c.range for c in model.osim.spec.coordinates}
    lower = np.array([ranges[n][0] for n in model.coordinate_names])
    upper = np.array([ranges[n][1] for n in model.coordinate_names])
    for path in model.paths if isinstance(model.paths, PolynomialPaths) else ():
        for name, (lo, hi) in zip(path.coordinates, path.ranges):
            k = model.coordinate_names.index(name)
            lower[k], upper[k] = max(lower[k], lo), min(upper[k], hi)
    return lower, upper


def build_problem(target=DEFAULT_TARGET, duration=0.5, start=START, final_time_weight: float = 0.0,
                  residual_weight: float = 10.0, implicit: bool = True,
                  model: MusculoskeletalModel | None = None) -> MuscleDrivenProblem:
    """Reach from rest at ``start`` to rest with the hand at ``target`` (ground, m; x and y are constrained).

    ``duration``: seconds or ``Free(lo, hi)``. Objective: ∫ Σ e² + residual_weight ∫ Σ r² (+ final_time_weight T).
    ``model``: another arm26 model (e.g. geometric paths) instead of the surrogates'.
    """
    model = load_model() if model is None else model
    target = np.asarray(target, dtype=float).reshape(-1)
    if target.size != 3 or not np.all(np.isfinite(target)):
        raise TrajoptInputError(f"arm26 reaching: target must be 3 finite numbers (m), got {target.tolist()}")
    built = muscle_driven_problem(
        model, duration,
        coordinates=StateBounds(path_box(model), initial=np.asarray(start, dtype=float)),
        speeds=StateBounds(MOCO_SPEED_BOUNDS, initial=0.0, final=0.0),
        activations=StateBounds((0.0, 1.0)),
        residuals=Residuals(optimal_force=1.0, max_control=1.0),
        # With a sharp switch between activation and deactivation time constants (b = 10) a chattering
        # excitation buys mean activation more cheaply than a smooth one, and IPOPT finds that; OpenSim's
        # b = 0.1 blends the time constants and gives smooth optima (Moco's choice, too).
        activation_smoothing=OPENSIM_ACTIVATION_SMOOTHING,
        dynamics=ImplicitDynamics() if implicit else ExplicitDynamics(),
    )
    problem = built.problem
    # Two coordinates cannot place a point in 3D: the hand reaches the target's x and y (the arm moves in
    # planes parallel to x-y); its z follows from the posture and is reported.
    problem.require(problem.final(built.marker_position(HAND)[:2]) - target[:2], equals=0.0, name="hand at target",
                    labels=("hand x", "hand y"))
    # Start at rest: activations at the static equilibrium are unknown, so only their rates vanish.
    problem.require(problem.initial(built.activation_rates), equals=0.0, name="initial activation rest")
    problem.require(problem.initial(built.accelerations), equals=0.0, name="initial acceleration rest")
    goal = Effort(built.excitations) + residual_weight * ResidualPenalty(built.residuals)
    if final_time_weight:
        goal = goal + final_time_weight * FinalTime()
    problem.minimize(goal)
    return built


def moco_problem(implicit: bool = True, duration: float = 0.5, geometric: bool = False,
                 model: MusculoskeletalModel | None = None) -> MuscleDrivenProblem:
    """The Moco reference study (bounds and goal as listed in its .omoco; its duration is 0.5 s); `geometric`: with
    arm26's geometric paths (see `load_model`); `model`: another arm26 model (e.g. other paths) instead. Moco's
    bounds are kept as they are (not cut to the fitted paths' domain); ``summary`` checks the solution against it."""
    model = load_model(geometric) if model is None else model
    built = muscle_driven_problem(
        model, duration,
        coordinates=StateBounds(([-np.pi / 2, 0.0], [np.pi, 2.2689280275926285]), initial=[0.0, 0.0],
                                final=[0.0, MOCO_FINAL_ELBOW]),
        speeds=StateBounds(MOCO_SPEED_BOUNDS, initial=0.0, final=0.0),
        activations=StateBounds((0.0, 1.0), initial=0.0),
        excitation_bounds=(0.0, 1.0),
        activation_smoothing=OPENSIM_ACTIVATION_SMOOTHING,
        dynamics=ImplicitDynamics() if implicit else ExplicitDynamics(),
        bound_by_path_domain=False,
    )
    built.problem.minimize(Effort(built.excitations))
    return built


def hand_posture(target, start=START) -> np.ndarray:
    """Coordinates that put the hand at ``target`` within the path box (least squares, from ``start``)."""
    model = load_model()
    q = ca.SX.sym("q", len(model.coordinate_names))
    marker = model.osim.marker(HAND)
    error = point_position(model.multibody, q, marker.body, marker.location) - ca.DM(np.asarray(target, float))
    solver = ca.nlpsol("hand_posture", "ipopt", {"x": q, "f": ca.sumsqr(error)},
                       {"ipopt": {"print_level": 0, "sb": "yes"}, "print_time": False})
    lower, upper = path_box(model)
    return np.asarray(solver(x0=np.asarray(start, float), lbx=lower, ubx=upper)["x"]).flatten()


def naive_guess(built: MuscleDrivenProblem, duration: float, start, end) -> Guess:
    """Linear interpolation of the coordinates from ``start`` to ``end``; constant speed; excitations 0.1."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    guess = Guess([0.0, duration]).set(built.q, np.vstack([start, end]))
    guess.set(built.u, np.vstack([(end - start) / duration] * 2))
    return guess


def moco_naive_guess(built: MuscleDrivenProblem) -> Guess:
    """Moco's problem: coordinates interpolated linearly from (0, 0) to (0, 90°)."""
    return naive_guess(built, 0.5, (0.0, 0.0), (0.0, MOCO_FINAL_ELBOW))


def solve_pair(build, naive_guess_of, intervals: int = 50, tol: float = 1e-6, coarse_intervals: int = 10,
               print_level: int = 0, label: str | None = None):
    """Solve from the naive guess, and again warm-started from a coarse-mesh solution.

    ``build()`` makes the problem, ``naive_guess_of(built)`` its naive guess. Returns
    (built, naive-guess solution, warm-started solution, coarse solution). With ``label`` a progress line
    is printed before each of the three solves (``print_level`` 5 adds IPOPT's iteration lines).
    """
    solver = Ipopt(tol=tol, print_level=print_level)
    built = build()
    naive = naive_guess_of(built)

    def solve(what, transcription, guess):
        if label:
            print(f"{label}: {what} ...", flush=True)
        solution = built.problem.solve(transcription, solver, guess=guess)
        if label:
            print(f"{label}: {what}: {solution.status}, {solution.iterations} iterations, "
                  f"objective {solution.objective:.6g}, IPOPT {solution.wall_time:.2f} s", flush=True)
        return solution

    naive_solution = solve(f"{intervals} intervals from the naive guess", HermiteSimpson(intervals), naive)
    coarse = solve(f"{coarse_intervals} intervals from the naive guess", HermiteSimpson(coarse_intervals), naive)
    warm = solve(f"{intervals} intervals warm-started from the coarse solution", HermiteSimpson(intervals), coarse)
    return built, naive_solution, warm, coarse


BAND_STUDY = (1e-2, 1e-3, 1e-4, 1e-5)  # m


def band_study(intervals: int = 50, print_level: int = 0) -> list[dict]:
    """Moco's problem with smooth geometric paths at each band of BAND_STUDY, from the naive guess."""
    rows = []
    for band in BAND_STUDY:
        built = moco_problem(model=load_model(True, SmoothWrapping(band)))
        print(f"Moco's problem, smoothing band {band:g} m ...", flush=True)
        solution = built.problem.solve(HermiteSimpson(intervals), Ipopt(tol=1e-6, print_level=print_level),
                                       guess=moco_naive_guess(built))
        rows.append({"band_m": band, "status": solution.status, "iterations": int(solution.iterations),
                     "objective": float(solution.objective), "ipopt_seconds": float(solution.wall_time)})
    return rows


def summary(built: MuscleDrivenProblem, solution) -> dict:
    """Status, objective, iterations, times, forward re-simulation drift of one solve, and whether it stays in the
    domain its muscle paths were fitted on (a warning line when it does not)."""
    drift = built.resimulate(solution)
    domain = print_path_domain_warning(built.path_domain_report(solution))
    return {"status": solution.status, "success": bool(solution.success), "objective": float(solution.objective),
            "iterations": int(solution.iterations), "ipopt_seconds": float(solution.wall_time),
            "worst_constraint": solution.worst_constraint,
            "duration_s": float(solution.duration), "max_resimulation_drift": drift.max_drift,
            "worst_drift": drift.worst(), "path_domain": domain.to_json()}


def _duration(text: str):
    if text == "free":
        return Free(0.2, 2.0, 0.6)
    try:
        value = float(text)
    except ValueError:
        raise TrajoptInputError(f"--duration must be seconds or 'free', got {text!r}") from None
    if not value > 0:
        raise TrajoptInputError(f"--duration must be > 0, got {value}")
    return value


def main(argv=None) -> int:
    from trajopt.examples.arm26_reaching import static_arm  # here: static_arm imports this module

    parser = argparse.ArgumentParser(prog="trajopt run arm26-reaching", description=description(__doc__))
    parser.add_argument("--target", nargs=3, type=float, metavar=("X", "Y", "Z"), default=DEFAULT_TARGET,
                        help=f"hand target in ground (m); x, y are reached (2 DOF), z is reported; "
                             f"default {DEFAULT_TARGET}")
    parser.add_argument("--duration", default="0.5", help="seconds, or 'free' (0.2-2 s; add --final-time-weight)")
    parser.add_argument("--final-time-weight", type=float, default=0.0,
                        help="weight of the final time in the objective, with --duration free (default 0)")
    add_intervals(parser, 50)
    add_out(parser, "arm26-reaching")  # a run replaces the subfolders it writes and adds its problems to summary.json
    parser.add_argument("--skip-comparisons", action="store_true",
                        help="only the reaching problem (not Moco's problem nor bioptim's static_arm)")
    add_animate(parser, "each problem's arm.gif")
    parser.add_argument("--no-animation", dest="animate", action="store_false", help=argparse.SUPPRESS)
    parser.add_argument("--paths", choices=("polynomial", "geometric"), default="polynomial",
                        help="muscle paths: the polynomial surrogates of trajopt/examples/arm26/paths.json "
                             "(default), or "
                             "arm26's geometric paths in smooth mode (reaching and Moco's problem; bioptim's "
                             "static_arm has its own model and is not run)")
    add_smoothing_band(parser, SmoothWrapping().band)  # with --paths geometric
    add_print_level(parser, 0)
    args = parser.parse_args(argv)
    try:
        duration = _duration(args.duration)
    except TrajoptInputError as error:
        parser.exit(2, f"{parser.prog}: error: {error}\n")
    if args.intervals < 2:
        parser.exit(2, f"{parser.prog}: error: --intervals must be >= 2, got {args.intervals}\n")
    if not np.all(np.isfinite(args.target)):  # before the hand posture is solved for it
        parser.exit(2, f"{parser.prog}: error: --target must be 3 finite numbers (m), got {args.target}\n")
    if not args.smoothing_band > 0:
        parser.exit(2, f"{parser.prog}: error: --smoothing-band must be > 0 m, got {args.smoothing_band}\n")
    geometric = args.paths == "geometric"
    model = load_model(True, SmoothWrapping(args.smoothing_band)) if geometric else load_model()
    name = "reaching_free" if isinstance(duration, Free) else "reaching"
    comparisons = ("moco_comparison",) if geometric else ("moco_comparison", "static_arm")
    written = {name} if args.skip_comparisons else {name, *comparisons}
    out = fresh_output(args.out, lambda entry: entry in written)
    report = {}
    guess_duration = duration.initial_guess if isinstance(duration, Free) else duration
    end = hand_posture(args.target)
    built, solution, warm, _ = solve_pair(
        lambda: build_problem(args.target, duration, final_time_weight=args.final_time_weight, model=model),
        lambda b: naive_guess(b, guess_duration, START, end), args.intervals, print_level=args.print_level,
        label=name)
    final_hand = np.asarray(solution.value(built.problem.final(built.marker_position(HAND)))).ravel()
    report[name] = {"target": list(args.target), "duration": args.duration,
                    "final_time_weight": args.final_time_weight, "naive": summary(built, solution),
                    "warm": summary(built, warm), "final_hand": final_hand.tolist()}
    outputs.write_results(built, solution, out / name, animate=args.animate, hand=HAND,
                          target=args.target)
    if geometric:
        report[name]["paths"] = outputs.smooth_paths_check(built, solution, out / name)
        report[name].update(outputs.opensim_muscle_check(built, solution, out / name))
    failed = [] if solution.success else [(name, solution)]
    if not args.skip_comparisons:
        built, solution, warm, _ = solve_pair(lambda: moco_problem(model=model), moco_naive_guess,
                                              print_level=args.print_level, label="Moco's problem")
        reference = outputs.read_moco_solution(MOCO_REFERENCE / "arm26_p2p_T0.5_solution.sto")
        info = json.loads((MOCO_REFERENCE / "arm26_p2p_T0.5_info.json").read_text())
        report["moco"] = {"naive": summary(built, solution), "warm": summary(built, warm),
                          "moco_objective": info["objective"],
                          "relative_difference": solution.objective / info["objective"] - 1.0,
                          **outputs.compare_with_moco(built, solution, reference)}
        outputs.write_results(built, solution, out / "moco_comparison", animate=args.animate,
                              moco=reference)
        report["moco"].update(outputs.opensim_muscle_check(built, solution, out / "moco_comparison"))
        if geometric:
            report["moco"]["paths"] = outputs.smooth_paths_check(built, solution, out / "moco_comparison")
            report["moco"]["band_study"] = band_study(args.intervals, args.print_level)
        failed += [] if solution.success else [("moco_comparison", solution)]
    if not args.skip_comparisons and not geometric:
        built, solution, warm, _ = solve_pair(static_arm.static_arm_problem, static_arm.naive_guess,
                                              print_level=args.print_level, label="bioptim static_arm")
        report["static_arm"] = {"naive": summary(built, solution), "warm": summary(built, warm),
                                **static_arm.describe(built, solution)}
        outputs.write_results(built, solution, out / "static_arm", animate=args.animate,
                              hand=None, target=static_arm.TARGET)
        failed += [] if solution.success else [("static_arm", solution)]
    if geometric:
        outputs.write_geometric_summary(out, report, "trajopt run arm26-reaching " + " ".join(
            sys.argv[1:] if argv is None else argv))
    summary_file = out / "summary.json"  # runs add their problems to it
    previous = json.loads(summary_file.read_text()) if summary_file.exists() else {}
    summary_file.write_text(json.dumps({**previous, **report}, indent=1) + "\n")
    for problem, record in report.items():
        print(f"{problem}: {record['naive']['status']}, objective {record['naive']['objective']:.6g}, "
              f"{record['naive']['iterations']} iterations (warm start: {record['warm']['iterations']}), "
              f"re-simulation drift {record['naive']['max_resimulation_drift']:.2g}")
    distance = float(np.linalg.norm(final_hand[:2] - np.asarray(args.target)[:2]))
    print(f"hand ends {distance * 1e3:.1f} mm from the target (x, y); results in {out} (numbers in summary.json)")
    for problem, solution in failed:
        print(f"{parser.prog}: {problem}: IPOPT did not converge ({solution.status}, {solution.iterations} "
              f"iterations); worst constraint {solution.worst_constraint}; partial result in {out / problem}",
              file=sys.stderr)
    return 1 if failed else 0
