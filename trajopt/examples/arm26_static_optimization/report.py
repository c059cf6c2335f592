"""The comparison rows and summary.md of ``trajopt run arm26-static-optimization``
(trajopt/examples/arm26_static_optimization/main.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.static_optimization import StaticOptimizationResult
from trajopt.model.io import Table

ALONG_FIBER = "capacity along the fiber (OpenSim's)"


@dataclass(frozen=True)
class Row:
    """One line of summary.md."""

    case: str
    frames: int
    activation_max: float  # max |Δ activation| over muscles and frames (nan: no reference)
    activation_rms: float
    reserve_max: float  # max |Δ reserve force|, N·m
    force_max: float  # max |Δ muscle force|, N
    equality_error: float
    iterations: int
    solve_time: float
    status: str


def compare(case: str, result: StaticOptimizationResult, activation: Table | None, force: Table | None) -> Row:
    nan = float("nan")
    da = dr = df = None
    if activation is not None:
        if not np.allclose(activation.time, result.times, atol=1e-6):
            raise RuntimeError(f"{case}: reference frames differ from trajopt's")
        ours = result.activations_table()
        da = ours.select(result.muscle_names).data - activation.select(result.muscle_names).data
        dr = result.residual_forces - activation.select(result.reserve_names).data  # optimal force 1 N·m
    if force is not None:
        df = result.muscle_forces - force.select(result.muscle_names).data
    return Row(case, result.times.size,
               nan if da is None else float(np.abs(da).max()),
               nan if da is None else float(np.sqrt(np.mean(da**2))),
               nan if dr is None else float(np.abs(dr).max()),
               nan if df is None else float(np.abs(df).max()),
               float(np.abs(result.equality_error).max()), result.iterations, result.solve_time, result.status)


def format_value(value: float, digits: str = ".4f") -> str:
    """'–' for no value; values that the fixed format would show as zero in two significant digits."""
    if np.isnan(value):
        return "–"
    text = format(value, digits)
    return format(value, ".1e") if value != 0 and float(text) == 0 else text


def write_summary(out: Path, rows: list[Row], id_rows: list[tuple[str, int, float]], total: float,
                   extra_lines: list[str] = (), title: str = "# arm26 static optimization vs OpenSim 4.6",
                   paths: str = "polynomial muscle paths (trajopt/examples/arm26/paths.json)", id_notes=()) -> Path:
    lines = [
        title,
        "",
        f"trajopt: DeGroote 2016 rigid-tendon muscles mapped from arm26's Thelen2003 parameters, {paths},",
        "batched IPOPT solve of all frames. Reserves 1 N·m on both coordinates, weight 1, exponent 2.",
        "Without force-length-velocity (FLV) force = activation × Fmax.",
    ]
    if id_rows:
        lines += ["Rows without 'vs OpenSim DeGroote': OpenSim's AnalyzeTool + StaticOptimization with Thelen2003",
                  "muscles (reference/ in the problem folder); with FLV the active-force curves differ (DeGroote vs",
                  "Thelen), so activations differ by design."]
    lines += [
        "OpenSim's Static Optimization never includes passive fiber force; the 'with passive force' case",
        "has no OpenSim counterpart. Rows 'vs OpenSim DeGroote' rerun OpenSim (child process, tolerance 1e-8)",
        "with arm26's muscles replaced by DeGrooteFregly2016Muscle (rigid tendon): the like-for-like comparison.",
        "With FLV, OpenSim takes a DeGroote muscle's capacity as its active fiber force along the fiber (no cos α",
        "of the pennation angle) and applies it along the path; trajopt applies the tendon force, × cos α (TRIlong,",
        f"TRIlat and TRImed are pennated 9-12°). Rows '{ALONG_FIBER}' use OpenSim's choice",
        "(`StaticOptimization(capacity_along_fiber=True)`).",
        "Joint reactions in the SO outputs come from inverse dynamics without muscle forces; the last table (when",
        "present) applies the muscle forces along the .osim's wrapped paths.",
        "",
    ]
    if id_rows:
        lines += [
            "## Inverse dynamics",
            "",
            "| motion | frames | max abs difference vs OpenSim InverseDynamicsTool (N·m) |",
            "|---|---|---|",
        ]
        lines += [f"| {name} | {frames} | {error:.2e} |" for name, frames, error in id_rows]
        lines += [""] + [*id_notes] + ([""] if id_notes else [])
    lines += [
        "## Static optimization",
        "",
        "| case | frames | max abs Δ activation | RMS Δ activation | max abs Δ reserve (N·m) "
        "| max abs Δ muscle force (N) | max abs equality error (N·m) | IPOPT iterations | solve time (s) | status |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r.case} | {r.frames} | {format_value(r.activation_max)} | {format_value(r.activation_rms)} | "
                     f"{format_value(r.reserve_max)} | {format_value(r.force_max, '.2f')} | {r.equality_error:.1e} | "
                     f"{r.iterations} | {r.solve_time:.3f} | {r.status} |")
    lines += list(extra_lines)
    lines += ["", f"Total run time (loading, inverse dynamics, all solves, files, figures): {total:.1f} s.", ""]
    path = out / "summary.md"
    path.write_text("\n".join(lines))
    return path
