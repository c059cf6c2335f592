"""``trajopt run gait2d-metabolics``: Moco's example2DWalkingMetabolics on 2D_gait.osim.

The problem (opensim-core ``OpenSim/Examples/Moco/example2DWalking/example2DWalkingMetabolics.cpp``), term for term:
a MocoTrack half gait cycle over the fixed time [0, 0.470089] s with

- state tracking, weight 30: referenceCoordinates.sto low-passed at 6 Hz as ``TabOpLowPassFilter`` (every
  coordinate, pelvis_tx included) and the splined coordinates' derivatives at its frames as speeds
  (``track_reference_position_derivatives``), values and speeds each on natural quintic splines through the frames
  at the collocation times as ``MocoStateTrackingGoal`` evaluates them
  (``ReferenceInterpolation.QUINTIC_SPLINES``);
- control effort, weight 0.1: ∫ Σ control² dt over the 18 excitations and the lumbar actuator control;
- metabolic cost, weight 0.1: ∫ total_metabolic_rate dt / (displacement · body mass), the rate of OpenSim's
  ``Bhargava2004SmoothedMuscleMetabolics`` with smoothing on and its other options at their defaults
  (``trajopt.studies.gait.metabolic_cost``: activation, maintenance and shortening heat, mechanical work, basal rate);
- left/right symmetry of the ends (coordinate values except pelvis_tx, speeds, activations; the lumbar control
  repeats), the example's state bounds, Hermite-Simpson on 50 intervals with the midpoint controls tied to the mean
  of the mesh points' (Moco's transcription), the tracked states as the guess.

IPOPT as the example runs it: convergence and constraint tolerance 1e-4 and the limited-memory Hessian (Moco's
default; ``--tolerance``, ``--hessian``). With the exact Hessian, 1e-4 stops IPOPT on trajopt's NLP where the
objective still falls as the tolerance tightens (README).

Differences from Moco, deliberate: implicit multibody dynamics (Moco: explicit);
the displacement is pelvis_tx(tf) - pelvis_tx(0) (Moco: the centre of mass's, equal between mirrored end states);
polynomial muscle paths (``paths.json``) for OpenSim's geometric ones.

Writes ./trajopt_results/gait2d_metabolics/ (or --out): summary.md (objective, each goal term, metabolic cost of
transport, wall time, against Moco's run recorded in ``moco/moco_walk2d_metabolics_info.json``), a JSON record and
the half-stride .sto.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np
from scipy.integrate import simpson

from trajopt.studies.gait.metabolic_cost import metabolic_cost
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.tracking import ReferenceInterpolation, TrackingWeights, state_tracking
from trajopt.studies.gait.walking import displacement
from trajopt.model.io.output import fresh_output
from trajopt.model.io.tables import write_sto
from trajopt.core.ocp import Hessian, HermiteSimpson, Integral, Ipopt
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_intervals, add_out, add_print_level, add_tolerance

from trajopt.examples.gait2d.model import HERE, GaitModel
from trajopt.examples.gait2d.prediction import tracking_study

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "2D_gait.osim tracking with metabolic cost (Moco's example2DWalkingMetabolics, Bhargava 2004 smoothed)"

MOCO_RECORD = HERE / "moco" / "moco_walk2d_metabolics_info.json"
FINAL_TIME = 0.470089
TRACKING_WEIGHT = 30.0
EFFORT_WEIGHT = 0.1
METABOLIC_WEIGHT = 0.1
LOWPASS_HZ = 6.0
INTERVALS = 50
TOLERANCE = 1e-4  # IPOPT's convergence and constraint tolerance, the example's
HESSIAN = Hessian.LIMITED_MEMORY  # MocoCasADiSolver's default


def metabolics_study(model: GaitModel) -> MuscleDrivenTracking:
    """The tracking part of example2DWalkingMetabolics (module docstring): values and speeds weight 30, effort 0.1
    on every control, no ground-reaction tracking, pelvis_tx(0) free."""
    weights = TrackingWeights(coordinates=TRACKING_WEIGHT, speeds=TRACKING_WEIGHT, excitations=EFFORT_WEIGHT,
                              actuator_controls=EFFORT_WEIGHT)
    return tracking_study(model, duration=FINAL_TIME, weights=weights, cutoff_frequency=LOWPASS_HZ,
                          start_at_zero=None, ground_reactions=None,
                          reference_interpolation=ReferenceInterpolation.QUINTIC_SPLINES)


@dataclass(frozen=True, eq=False)
class MetabolicsProblem:
    """The built problem: its study, muscle-driven problem and the three goals, each as Moco names it."""

    study: MuscleDrivenTracking
    muscle_driven: object
    goals: dict  # "state_tracking", "control_effort", "met" -> Goal (weighted)

    @property
    def problem(self):
        return self.muscle_driven.problem


def build(model: GaitModel | None = None) -> MetabolicsProblem:
    """example2DWalkingMetabolics on trajopt: the study's tracking and effort goals plus the metabolic goal."""
    model = model if model is not None else GaitModel.load()
    study = metabolics_study(model)
    built = study.build().muscle_driven
    metabolic = METABOLIC_WEIGHT * metabolic_cost(built, power=1.0, per_distance=displacement(built, "pelvis_tx"))
    built.problem.minimize(metabolic)
    # The tracking and effort goals as the study added them, kept to report each term of the objective.
    coordinates, speeds = study.tracked_frames()
    values, rates = state_tracking(built, coordinates, study.weights, speeds, study.reference_interpolation)
    tracking = values + rates
    controls = ca.vertcat(built.muscle_controls, built.actuator_controls)
    effort = EFFORT_WEIGHT * Integral(ca.sumsqr(controls))
    return MetabolicsProblem(study, built, {"state_tracking": tracking, "control_effort": effort, "met": metabolic})


def goal_value(goal, problem, solution) -> float:
    """A goal's value at a solution: its integrands by Simpson's rule on the solution's points (the Hermite-Simpson
    transcription's own quadrature), then its cost of those integrals."""
    terms = goal.terms(problem)
    integrals = [float(simpson(np.atleast_1d(solution.value(i)), x=solution.time)) for i in terms.integrands]
    cost = terms.cost(integrals)
    return float(solution.value(cost)) if isinstance(cost, ca.SX) else float(cost)


def solve(intervals: int = INTERVALS, print_level: int = 0, model: GaitModel | None = None,
          tolerance: float = TOLERANCE, hessian: Hessian = HESSIAN):
    """(problem, solution, seconds end to end: model loading, build, transcription, NLP construction, IPOPT)."""
    started = time.perf_counter()
    model = model if model is not None else GaitModel.load()
    built = build(model)
    guess = built.study.guess(built.muscle_driven)
    solution = built.problem.solve(HermiteSimpson(intervals, interpolate_control_midpoints=True),
                                   Ipopt(tol=tolerance, max_iterations=10000, print_level=print_level, hessian=hessian,
                                         options={"constr_viol_tol": tolerance}),
                                   guess=guess)
    return built, solution, time.perf_counter() - started


def objective_terms(built: MetabolicsProblem, solution) -> dict[str, float]:
    """Each goal's weighted value at the solution (Moco's getObjectiveTerm)."""
    return {name: goal_value(goal, built.problem, solution) for name, goal in built.goals.items()}


def moco_record() -> dict | None:
    """Moco's recorded run of the example (None when the file is absent)."""
    return json.loads(MOCO_RECORD.read_text()) if MOCO_RECORD.exists() else None


def summary_lines(record: dict, moco: dict | None, command: str) -> list[str]:
    """summary.md: the objective and its terms beside Moco's."""
    their = (moco or {}).get("objective_terms", {})
    value = (lambda key, fmt: format(moco[key], fmt)) if moco else (lambda key, fmt: "not recorded")
    lines = ["# 2D gait tracking with metabolic cost (trajopt) vs Moco example2DWalkingMetabolics", "",
             f"Command: `{command}`. Guess: the tracked states (referenceCoordinates.sto low-passed at 6 Hz, its "
             "splined speeds), activations and excitations 0.05 (Moco: the same states, the midpoints of the other "
             "bounds).", ""]
    if not record["success"]:
        lines += [f"**The solve did not converge: IPOPT status {record['status']} after {record['iterations']} "
                  "iterations.** The numbers below are this partial result.", ""]
    rows = [("status", record["status"], value("status", "")),
            ("objective", f"{record['objective']:.6f}", value("objective", ".6f")),
            *((f"term `{name}`", f"{record['objective_terms'][name]:.6f}",
               f"{their[name]:.6f}" if name in their else "not recorded") for name in record["objective_terms"]),
            ("metabolic cost of transport (J/(kg·m), `met` / 0.1; basal included)",
             f"{record['metabolic_cost_of_transport']:.4f}",
             f"{their['met'] / METABOLIC_WEIGHT:.4f}" if "met" in their else "not recorded"),
            ("IPOPT iterations", str(record["iterations"]), value("iterations", "d")),
            ("wall time (s)", f"{record['seconds']:.1f} end to end (IPOPT {record['ipopt_seconds']:.1f})",
             f"{moco['wall_seconds']:.0f} (the solve call)" if moco else "not recorded")]
    lines += ["| quantity | trajopt | Moco |", "|---|---|---|", *[f"| {a} | {b} | {c} |" for a, b, c in rows], ""]
    if moco:
        difference = record["objective"] / moco["objective"] - 1.0
        lines += [f"Objective relative difference (trajopt / Moco - 1): {difference:+.3%}; wall-time ratio Moco / "
                  f"trajopt: {moco['wall_seconds'] / record['seconds']:.0f}. Moco: {moco['opensim']}, "
                  f"{moco['mesh_intervals']} Hermite-Simpson intervals, {moco['dynamics_mode']} dynamics, "
                  f"{moco['hessian']} Hessian, tolerance {moco['tolerance']:g}; recorded {moco['recorded']} "
                  f"(`moco/moco_walk2d_metabolics_info.json`).", ""]
    lines += [f"Sum of the terms {sum(record['objective_terms'].values()):.6f}, IPOPT's objective "
              f"{record['objective']:.6f} (each term integrated by Simpson's rule on the solution's points, the "
              "transcription's quadrature).", "",
              f"trajopt: implicit multibody dynamics, {record['hessian']} Hessian, IPOPT tolerance "
              f"{record['tolerance']:g}, midpoint controls = the mean of the mesh points' (Moco's transcription); the "
              "reference splined as MocoStateTrackingGoal splines it; "
              "displacement of pelvis_tx for Moco's centre of mass (equal between mirrored end states); polynomial "
              "muscle paths.", ""]
    return lines


def run(folder: Path, intervals: int = INTERVALS, print_level: int = 0, tolerance: float = TOLERANCE,
        hessian: Hessian = HESSIAN) -> dict:
    folder = fresh_output(folder)
    built, solution, seconds = solve(intervals, print_level, tolerance=tolerance, hessian=hessian)
    terms = objective_terms(built, solution)
    record = {"status": solution.status, "success": bool(solution.success), "iterations": solution.iterations,
              "objective": float(solution.objective), "objective_terms": terms,
              "metabolic_cost_of_transport": terms["met"] / METABOLIC_WEIGHT, "seconds": seconds,
              "ipopt_seconds": solution.wall_time, "intervals": intervals, "tolerance": tolerance,
              "hessian": hessian.value,
              "final_time": FINAL_TIME,
              "worst_constraint": solution.worst_constraint}
    write_sto(folder / "metabolics_half_stride.sto", solution.table())
    command = "trajopt run gait2d-metabolics" + (f" --intervals {intervals}" if intervals != INTERVALS else "") + \
        (f" --tolerance {tolerance:g}" if tolerance != TOLERANCE else "") + \
        (f" --hessian {hessian.value}" if hessian is not HESSIAN else "")
    lines = summary_lines(record, moco_record(), command)
    lines += ["## Files the command writes",
              "- `metabolics_half_stride.sto` (states, controls and accelerations, OpenSim labels)",
              "- `metabolics.json`", ""]
    (folder / "summary.md").write_text("\n".join(lines))
    (folder / "metabolics.json").write_text(json.dumps(record, indent=1) + "\n")
    print("\n".join(lines))
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt run gait2d-metabolics", description=description(__doc__))
    add_intervals(parser, INTERVALS)  # Moco's
    add_tolerance(parser, TOLERANCE)  # the example's; also IPOPT's constraint tolerance
    parser.add_argument("--hessian", choices=[h.value for h in Hessian], default=HESSIAN.value,
                        help=f"IPOPT's Hessian (default {HESSIAN.value}, Moco's)")
    add_out(parser, "gait2d-metabolics")
    add_print_level(parser, 5)
    args = parser.parse_args(argv)
    if args.intervals < 2:
        parser.error(f"need --intervals >= 2, got {args.intervals}")
    if not 0 < args.tolerance < 1:
        parser.error(f"need 0 < --tolerance < 1, got {args.tolerance}")
    record = run(args.out, args.intervals, args.print_level, args.tolerance, Hessian(args.hessian))
    if not record["success"]:
        print(f"{parser.prog}: IPOPT did not converge ({record['status']}, {record['iterations']} iterations); "
              f"partial result in {args.out}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
