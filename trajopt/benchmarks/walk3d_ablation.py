"""Benchmark ``trajopt bench walk3d-ablation``: which ingredient of PredSim's recipe moves which walking criterion.

Solves the walk3d half gait cycle (trajopt/examples/walk3d/prediction.py) with the default recipe and with one
ingredient changed at a time (``_variants()``), from the same coordinates.sto guess on the same mesh (one variant starts
from the tracking solution instead, to show whether the optimum depends on the guess), and records per
variant: status, iterations, wall time, the PredSim cost terms, the metabolic cost of transport and the walking
criteria against the subject's measured cycle (swing knee peak, early-stance knee wave, vertical GRF peaks and
trough, pelvis list, pelvis rotation and hip rotation ranges, hip/knee/ankle correlation and RMS). Each variant
writes ``walk3d_ablation/VARIANT.json`` into ``--out``; ``walk3d_ablation.json`` and the table
``walk3d_ablation.md`` there are rebuilt from every variant file present, so variants may run in separate
processes (one per core) and accumulate.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import add_intervals, add_max_iterations, add_report_out, out_folder
from trajopt.examples.walk3d import prediction as walk3d
from trajopt.examples.walk3d.gait_report import walking_criteria
from trajopt.examples.walk3d.prediction_main import body_weight, full_cycle_tables, metabolic_cost_of_transport, solve
from trajopt.studies.gait.predsim_cost import term_values

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "3D walking ablation: which recipe ingredient moves which walking criterion"


def _variants():
    recipe = walk3d.PREDSIM_RECIPE

    def model(base=recipe, /, **changes):
        return dataclasses.replace(base, model=dataclasses.replace(base.model, **changes))

    def weights(**changes):
        return dataclasses.replace(recipe, weights=dataclasses.replace(recipe.weights, **changes))

    # The two choices for this model's strong muscles and torque-driven trunk, without the predsim-adapted
    # recipe's tendon and weight changes, which the rows after it add one at a time.
    adapted = dataclasses.replace(recipe, min_activation=0.0, trunk_actuator_torque=1000.0)
    compliant = dataclasses.replace(adapted, tendon_stiffness=walk3d.COMPLIANT_TRICEPS_SURAE)

    def compliant_metabolic(weight, **changes):
        return dataclasses.replace(compliant, weights=dataclasses.replace(compliant.weights, metabolic_energy=weight),
                                   **changes)

    return {
        "recipe": ("the default recipe (all ingredients)", recipe),
        "moco-example": ("Moco's example3DWalking problem instead", walk3d.MOCO_RECIPE),
        "rigid-tendons": ("rigid tendons", dataclasses.replace(recipe, elastic_tendons=False)),
        "compliant-triceps": ("triceps surae tendons at half PredSim's stiffness (kT 17.5)",
                              dataclasses.replace(recipe, tendon_stiffness=walk3d.COMPLIANT_TRICEPS_SURAE)),
        "no-metabolics": ("no metabolic energy term", weights(metabolic_energy=0.0)),
        "metabolic-weight-150": ("metabolic energy weight 150 (PredSim 500)", weights(metabolic_energy=150.0)),
        "metabolic-weight-50": ("metabolic energy weight 50 (PredSim 500)", weights(metabolic_energy=50.0)),
        "acceleration-weight-x4": ("joint acceleration weight 2e5 (PredSim 5e4)",
                                   weights(joint_accelerations=200000.0)),
        "reweighted": ("metabolic energy weight 150, joint acceleration weight 2e5, triceps surae tendons kT 17.5",
                       dataclasses.replace(recipe, weights=dataclasses.replace(
                           recipe.weights, metabolic_energy=150.0, joint_accelerations=200000.0),
                           tendon_stiffness=walk3d.COMPLIANT_TRICEPS_SURAE)),
        "minimum-activation-0": ("activations from 0 (PredSim 0.05)", dataclasses.replace(recipe, min_activation=0.0)),
        "trunk-actuators-1000": ("trunk actuators at 1000 N·m per unit excitation (PredSim's arms 150)",
                                 dataclasses.replace(recipe, trunk_actuator_torque=1000.0)),
        "adapted": ("both: activations from 0 and trunk actuators at 1000", adapted),
        "adapted-from-tracking": ("adapted, from the tracking solution (coordinates.sto and grf_walk.mot tracked "
                                  "on the same mesh) instead of coordinates.sto", adapted),
        "adapted-compliant-triceps": ("adapted, with triceps surae tendons kT 17.5", compliant),
        "adapted-compliant-triceps-metabolic-350": (
            "adapted, triceps surae tendons kT 17.5, metabolic energy weight 350",
            compliant_metabolic(350.0)),
        "adapted-compliant-triceps-metabolic-350-arm-actuators-50": (
            "adapted, triceps surae tendons kT 17.5, metabolic energy weight 350, arm actuators priced at their own "
            "50 N·m per unit excitation (PredSim 150): the predsim-adapted recipe",
            compliant_metabolic(350.0, arm_actuator_torque=50.0)),
        "predsim-adapted-predsim-feet": (
            "the predsim-adapted recipe with Falisse et al. 2022's foot contact spheres (PredSim's; every calcaneus "
            "sphere behind the mtp joint) instead of Moco's",
            model(walk3d.PREDSIM_ADAPTED_RECIPE, foot_spheres=walk3d.FootSpheres.PREDSIM)),
        "predsim-adapted-trunk-actuators-500": (
            "the predsim-adapted recipe with the trunk actuators priced at 500 N·m per unit excitation (1000 there)",
            dataclasses.replace(walk3d.PREDSIM_ADAPTED_RECIPE, trunk_actuator_torque=500.0)),
        "adapted-compliant-triceps-metabolic-250": (
            "adapted, triceps surae tendons kT 17.5, metabolic energy weight 250",
            compliant_metabolic(250.0)),
        "adapted-toe-actuators": ("adapted, with toe actuators instead of passive toes",
                                  model(adapted, passive_toes=False)),
        "opensim-muscle-physiology": ("OpenSim's default specific tension 0.25 MPa and slow-twitch ratio 0.5",
                                      dataclasses.replace(recipe, predsim_muscle_physiology=False)),
        "moco-passive-forces": ("Moco's passive joint forces instead of PredSim's",
                                model(predsim_passive_torques=False)),
        "toe-actuators": ("toe actuators instead of passive toes", model(passive_toes=False)),
        "no-passive-fiber-force": ("no passive fiber force", model(passive_fiber_force=False)),
        "force-length-width-1.5": ("active force-length width x1.5 (Moco's)", model(active_force_width_scale=1.5)),
        "free-forearms": ("forearm rotation free (actuated)", model(weld_forearms=False)),
        "no-body-distances": ("without PredSim's distance constraints", dataclasses.replace(recipe, body_distances=())),
    }


# Variants whose guess is the tracking solution rather than coordinates.sto.
FROM_TRACKING = ("adapted-from-tracking",)


def measure(name: str, recipe, intervals: int, max_iterations: int) -> dict:
    load_before = os.getloadavg()[0]
    walk, solution, wall = solve(intervals, print_level=0, max_iterations=max_iterations, recipe=recipe,
                                 from_tracking=name in FROM_TRACKING)
    _, coordinates, grf = full_cycle_tables(walk, solution)
    return {"variant": name, "intervals": intervals, "guess": "tracking solution" if name in FROM_TRACKING
            else "coordinates.sto", "status": solution.status, "success": solution.success,
            "iterations": solution.iterations, "objective": solution.objective, "wall_s": wall,
            "cost_terms": term_values(solution, walk.cost_terms) if walk.cost_terms else {},
            "cost_of_transport": metabolic_cost_of_transport(walk, solution),
            "criteria": walking_criteria(coordinates, grf, body_weight(walk)),
            "loadavg_before": load_before, "loadavg_after": os.getloadavg()[0]}


def _row(run: dict, label: str) -> str:
    criteria = run["criteria"]
    knee, grf, ranges, flexion = (criteria["knee"], criteria["vertical_grf_bw"]["predicted"],
                                  criteria["ranges_deg"], criteria["flexion"])
    passed = criteria["passed"]
    return (f"| {run['variant']} | {label} | {run['status']}, {run['iterations']} it, {run['wall_s']:.0f} s | "
            f"{knee['swing_peak_deg']:.0f} | {knee['stance_wave_deg']:.1f} | "
            f"{grf['first_peak']:.2f} / {grf['trough']:.2f} / {grf['second_peak']:.2f} | "
            + " | ".join(f"{ranges[name]['predicted']:.0f}" for name in ranges) + " | "
            + " | ".join(f"{flexion[name]['correlation']:.2f} / {flexion[name]['rms_deg']:.0f}" for name in flexion)
            + f" | {run['cost_of_transport']:.2f} | {sum(passed.values())}/{len(passed)} |")


def write_table(folder: Path, labels: dict) -> Path:
    """walk3d_ablation.json and .md in ``folder`` from every variant's JSON in ``folder/walk3d_ablation``, in
    ``_variants()`` order."""
    runs = {path.stem: json.loads(path.read_text()) for path in (folder / "walk3d_ablation").glob("*.json")}
    ordered = [runs[name] for name in labels if name in runs]
    (folder / "walk3d_ablation.json").write_text(json.dumps({"benchmark": "walk3d-ablation", "runs": ordered},
                                                            indent=1, default=float))
    lines = ["# 3D walking: ablation of the recipe (`trajopt bench walk3d-ablation`)", ""]
    if ordered:
        first = ordered[0]["criteria"]
        measured_ranges = " | ".join(f"{name} ({value['measured']:.0f})"
                                     for name, value in first["ranges_deg"].items())
        knee = first["knee"]
        measured_grf = first["vertical_grf_bw"]["measured"]
        lines += [f"{ordered[0]['intervals']} mesh intervals, guess coordinates.sto (unless the variant says "
                  "otherwise); measured values in brackets; wall times from a shared machine (load averages in "
                  "walk3d_ablation.json).",
                  "",
                  f"| variant | what changes | solve | swing knee ({knee['measured_swing_peak_deg']:.0f}) | "
                  f"stance knee wave ({knee['measured_stance_wave_deg']:.1f}) | vertical GRF peak / trough / peak "
                  f"({measured_grf['first_peak']:.2f} / {measured_grf['trough']:.2f} / "
                  f"{measured_grf['second_peak']:.2f}) | {measured_ranges} | "
                  + " | ".join(f"{name} r / RMS" for name in first["flexion"])
                  + " | cost of transport J/(kg·m) (about 3.3) | criteria met |",
                  "|" + "---|" * (8 + len(first["ranges_deg"]) + len(first["flexion"]))]
        lines += [_row(run, labels[run["variant"]]) for run in ordered]
    path = folder / "walk3d_ablation.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def main(argv=None) -> int:
    variants = _variants()
    parser = argparse.ArgumentParser(prog="trajopt bench walk3d-ablation", description=description(__doc__))
    parser.add_argument("--variants", nargs="+", choices=tuple(variants), default=tuple(variants),
                        help="variants to solve (default all, in order)")
    add_intervals(parser, 25)  # of the half cycle
    add_max_iterations(parser, 3000)
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = out_folder(args.out)
    out_folder(args.out / "walk3d_ablation")
    labels = {name: label for name, (label, _) in variants.items()}
    for name in args.variants:
        print(f"walk3d-ablation: solving {name!r} ({labels[name]}) at {args.intervals} intervals", flush=True)
        run = measure(name, variants[name][1], args.intervals, args.max_iterations)
        (args.out / "walk3d_ablation" / f"{name}.json").write_text(json.dumps(run, indent=1, default=float))
        print(f"walk3d-ablation: {name}: {run['status']}, {run['iterations']} iterations, {run['wall_s']:.0f} s, "
              f"{sum(run['criteria']['passed'].values())}/{len(run['criteria']['passed'])} criteria", flush=True)
        print(f"wrote {write_table(args.out, labels)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
