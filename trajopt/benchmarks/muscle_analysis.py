"""Benchmark ``trajopt bench muscle-analysis``: ``trajopt muscle-analysis`` against OpenSim's MuscleAnalysis loop on
RajagopalLaiUhlrich2023 (trajopt/benchmarks/data: 80 muscles over 44 wrap cylinders, two patellofemoral couplers), in
one run on the same motion.

The motion (``--frames`` frames at 100 Hz, written to a temporary folder): from the default pose, every
independent rotational coordinate swings sinusoidally over the middle half of its range, each with its own phase.
trajopt: the whole command (model read, geometric paths wrapped as OpenSim computes them, moment arms by the
generalized-force method as OpenSim's computeMomentArm, evaluation, files written), wall time in this process.
OpenSim (child process, `trajopt_opensim.muscle_analysis_loop`): per frame, set the coordinates, realize Position,
GeometryPath.getLength and computeMomentArm of every muscle about each independent coordinate; loop and model load
timed apart. Agreement: largest length and moment-arm differences over all frames, muscles and coordinates.
Writes ./trajopt_results/benchmarks/muscle_analysis.json (or --out).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import platform
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_report_out, report_file
from trajopt.edge.tools import muscle_analysis
from trajopt.edge.tools.common import load_tool_input
from trajopt.model.io import Table, write_sto
from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.model.io.output import write_report
from trajopt.model.io.tables import read_table
from trajopt.model.musculoskeletal.operators import load_processed

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = "muscle-analysis on RajagopalLaiUhlrich2023 (44 wrap cylinders): trajopt vs OpenSim's loop, same run"

MODEL = Path(__file__).resolve().parent / "data" / "RajagopalLaiUhlrich2023.osim"
RATE = 100.0  # Hz
PERIOD = 1.0  # s, of the slowest swing


def swing_motion(model_file: Path, frames: int) -> Table:
    """Every independent rotational coordinate swinging over the middle half of its range (own phase and
    frequency), the others at their defaults; radians."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, couplings = load_processed(model_file)
    dependent = {c.dependent for c in couplings}
    time_points = np.arange(frames) / RATE
    names, columns = [], []
    for k, coordinate in enumerate(osim.spec.coordinates):
        if coordinate.motion_type != "rotational" or coordinate.name in dependent:
            continue
        low, high = (float(v) for v in coordinate.range)
        middle, amplitude = 0.5 * (low + high), 0.25 * (high - low)
        frequency = (1 + k % 3) / PERIOD
        names.append(coordinate.name)
        columns.append(middle + amplitude * np.sin(2 * np.pi * frequency * time_points + 0.7 * k))
    return Table(time_points, tuple(names), np.column_stack(columns), False, "swing")


def _trajopt(model_file: Path, motion_file: Path, folder: Path) -> float:
    started = time.perf_counter()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = muscle_analysis.main([str(model_file), str(motion_file), "--out", str(folder)])
    seconds = time.perf_counter() - started
    if code != 0:
        raise RuntimeError(f"trajopt muscle-analysis exited with {code}:\n{printed.getvalue()}")
    return seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench muscle-analysis", description=description(__doc__))
    parser.add_argument("--frames", type=COUNT, default=121, help="motion frames at 100 Hz (default 121)")
    add_report_out(parser)
    args = parser.parse_args(argv)
    args.out = report_file(args.out, "muscle_analysis")  # the report file inside the --out folder
    with tempfile.TemporaryDirectory(prefix="trajopt_bench_muscle_analysis_") as scratch:
        scratch = Path(scratch)
        motion_file = write_sto(scratch / "swing.mot", swing_motion(MODEL, args.frames))
        trajopt_seconds = _trajopt(MODEL, motion_file, scratch / "trajopt")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            data = load_tool_input(MODEL, motion_file)
        lengths = read_table(scratch / "trajopt" / "lengths.sto")
        independent = tuple(data.constraints.independent_speeds)
        arms = np.stack([read_table(scratch / "trajopt" / f"moment_arms_{c}.sto").data for c in independent], axis=2)
        report = {"what": "trajopt muscle-analysis (whole command) vs OpenSim's MuscleAnalysis loop, same motion",
                  "model": f"trajopt/benchmarks/data/{MODEL.name}", "frames": args.frames,
                  "muscles": len(lengths.labels), "moment_coordinates": len(independent),
                  "machine": platform.platform(), "trajopt_seconds": trajopt_seconds,
                  "trajopt_seconds_per_frame": trajopt_seconds / args.frames}
        print(f"trajopt muscle-analysis: {trajopt_seconds:.2f} s for {args.frames} frames", flush=True)
        if opensim_available():
            opensim = run_opensim_task("muscle_analysis_loop", {
                "model": str(MODEL), "coordinates": np.array(data.osim.multibody.coordinate_names),
                "configurations": data.motion.data, "moment_coordinates": np.array(independent)})
            order = [list(opensim["muscle_names"]).index(m) for m in lengths.labels]
            report.update({
                "opensim_loop_seconds": opensim["loop_seconds"], "opensim_load_seconds": opensim["load_seconds"],
                "opensim_seconds": opensim["loop_seconds"] + opensim["load_seconds"],
                "opensim_loop_seconds_per_frame": opensim["loop_seconds"] / args.frames,
                "speedup_vs_opensim_loop": opensim["loop_seconds"] / trajopt_seconds,
                "max_length_difference_m": float(np.abs(lengths.data - opensim["lengths"][:, order]).max()),
                "max_moment_arm_difference_m": float(np.abs(arms - opensim["moment_arms"][:, order, :]).max())})
            print(f"OpenSim's loop: {opensim['loop_seconds']:.2f} s (+ {opensim['load_seconds']:.2f} s model load); "
                  f"largest differences: length {report['max_length_difference_m']:.2g} m, moment arm "
                  f"{report['max_moment_arm_difference_m']:.2g} m", flush=True)
        else:
            report["opensim"] = "not installed: trajopt timed alone"
    write_report(args.out, report)
    print(f"wrote {args.out}")
    return 0
