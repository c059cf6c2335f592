"""Benchmark ``trajopt bench batch``: a batch spec (default: the gait2d speed sweep, 13 speeds) run serially in
one process and on a Dask LocalCluster (``--workers``, default 2), same plan and warm starts, in the same run.

Reports wall times from the first submission to the last result (task transfer and shut-down included; the
cluster's start-up is reported apart), speedup = serial / cluster and efficiency = speedup / workers, the summed
task times of each mode, the load average before each run (on a shared machine the numbers are only as clean as
that), and checks that both modes found the same solutions (largest objective and final-time difference).
Writes to ``--out`` (default
./trajopt_results/batch/): ``speedup.json``, ``summary.md``, the cluster run's ``aggregate.{csv,md,png}`` and both
manifests; the task folders (solutions) stay in ``--work`` (default a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
from pathlib import Path

from trajopt.edge.batch import Manifest, load_spec, run_batch, write_aggregate
from trajopt.edge.batch.sweep import plan
from trajopt.edge.cli.helptext import description
from trajopt.edge.cli.options import COUNT, add_out, out_folder
from trajopt.errors import TrajoptInputError
from trajopt.model.io.output import default_output

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'gait2d speed sweep (13 speeds): serial vs Dask LocalCluster, results/batch/'

ROOT = Path(__file__).resolve().parent.parent.parent
DEFAULT_SPEC = ROOT / "trajopt" / "examples" / "gait2d" / "speed_sweep.toml"


def _summaries(out: Path) -> dict:
    return {key: record for key, record in Manifest(out).latest().items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt bench batch", description=description(__doc__))
    parser.add_argument("--spec", default=str(DEFAULT_SPEC), help="batch spec (default: the gait2d speed sweep)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="replace a spec input")
    parser.add_argument("--workers", type=COUNT, default=2, help="LocalCluster workers (default 2)")
    add_out(parser, "batch")
    parser.add_argument("--work", help="folder for the two runs (default: a temporary folder, removed)")
    parser.add_argument("--report-only", action="store_true",
                        help="no runs: write the report from the runs already in --work")
    args = parser.parse_args(argv)
    if args.report_only and not args.work:
        raise TrajoptInputError("--report-only needs --work, the folder of an earlier run")
    spec = load_spec(args.spec, args.set)
    out = out_folder(args.out)
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="trajopt-bench-batch-"))
    runs = {}
    for mode in ("serial", "local"):
        folder = work / mode
        if not args.report_only:
            if folder.exists():
                shutil.rmtree(folder)
            print(f"{mode}: {len(spec.rows)} tasks", flush=True)
            run_batch(spec, folder, serial=mode == "serial", workers=args.workers)
        write_aggregate(spec, folder)
        records = _summaries(folder)
        report = json.loads((folder / "batch.json").read_text())
        runs[mode] = {**report, "task_seconds_sum": sum(r["summary"].get("seconds", 0.0)
                                                                  for r in records.values()),
                      "records": records}
    serial, local = runs["serial"], runs["local"]
    differences = {"objective": 0.0, "final_time": 0.0}
    for key, record in serial["records"].items():
        other = local["records"].get(key)
        for name in differences:
            a, b = record["summary"].get(name), other["summary"].get(name) if other else None
            if isinstance(a, float) and isinstance(b, float):
                differences[name] = max(differences[name], abs(a - b))
    speedup = serial["wall_seconds"] / local["wall_seconds"]
    critical = _critical_path(spec, local["records"])
    result = {"critical_path_task_seconds": critical,
              "spec": str(Path(args.spec).resolve().relative_to(ROOT)) if Path(args.spec).resolve().is_relative_to(ROOT)
              else args.spec, "overrides": args.set, "tasks": len(spec.rows), "workers": args.workers,
              "serial_wall_s": serial["wall_seconds"], "cluster_wall_s": local["wall_seconds"],
              "speedup": speedup, "efficiency": speedup / args.workers,
              "serial_task_seconds_sum": serial["task_seconds_sum"],
              "cluster_task_seconds_sum": local["task_seconds_sum"],
              "serial": {k: v for k, v in serial.items() if k != "records"},
              "cluster": {k: v for k, v in local.items() if k != "records"},
              "max_difference_serial_vs_cluster": differences,
              "cpu_count": os.cpu_count(), "machine": platform.platform(), "python": platform.python_version()}
    (out / "speedup.json").write_text(json.dumps(result, indent=1))
    for name in ("aggregate.csv", "aggregate.md", "aggregate.png"):
        if (work / "local" / name).exists():
            shutil.copy(work / "local" / name, out / name)
    shutil.copy(work / "serial" / "manifest.jsonl", out / "manifest_serial.jsonl")
    shutil.copy(work / "local" / "manifest.jsonl", out / "manifest_cluster.jsonl")
    command = " ".join(["trajopt bench batch", *(f"--set {s}" for s in args.set),
                        *([f"--workers {args.workers}"] if args.workers != 2 else []),
                        *([f"--out {args.out}"] if Path(args.out).resolve() != default_output("batch").resolve()
                          else [])])
    lines = [f"# Batch: {spec.name}, serial vs Dask LocalCluster ({args.workers} workers)", "",
             f"Command: `{command}` (spec `{result['spec']}`). {len(spec.rows)} tasks, same plan and warm starts in "
             f"both modes.", "",
             "| | serial | LocalCluster |", "|---|---|---|",
             f"| wall time, first submission to last result (s) | {serial['wall_seconds']:.1f} | "
             f"{local['wall_seconds']:.1f} |",
             f"| cluster start-up (s; not in the wall time) | - | {_startup(local)} |",
             f"| sum of task times (s) | {serial['task_seconds_sum']:.1f} | {local['task_seconds_sum']:.1f} |",
             f"| load average (1, 5, 15 min) before the run | {_load(serial)} | {_load(local)} |",
             f"| done / failed / retried | {serial['done']} / {serial['failed']} / {serial['retried']} | "
             f"{local['done']} / {local['failed']} / {local['retried']} |", "",
             f"Speedup {speedup:.2f}, efficiency {speedup / args.workers:.2f} on {os.cpu_count()} cores. Largest "
             f"difference between the modes: objective {differences['objective']:.2g}, final time "
             f"{differences['final_time']:.2g} s.", "",
             *_busy_note(serial, local),
             f"The plan's longest warm-start chain (its critical path) took {critical:.1f} s of the cluster run's "
             f"{local['task_seconds_sum']:.1f} s of task time: with these task times no number of workers beats a "
             f"speedup of {local['task_seconds_sum'] / critical:.2f} over running the same tasks one after another.",
             "",
             "Per task (cluster run; every attempt in `manifest_*.jsonl`, figure `aggregate.png`):", "",
             (work / "local" / "aggregate.md").read_text(), *_bound_note(local["records"]),
             "## The same sweep on a separately started cluster", "",
             "```bash",
             "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 dask scheduler --port 8786 &",
             "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 dask worker tcp://127.0.0.1:8786 "
             "--nworkers 2 --nthreads 1 &",
             f"trajopt batch {result['spec']} {' '.join(f'--set {x}' for x in args.set)} "
             "--scheduler tcp://127.0.0.1:8786 --out trajopt_results/gait2d_speed_sweep_scheduler",
             "```", "",
             "Workers started this way must import this trajopt (run them from the repository root, or install it) and "
             "see the input files; `tests/test_batch_dask.py::test_separately_started_scheduler_and_two_workers` "
             "does this with the `sleep` task.", ""]
    (out / "summary.md").write_text("\n".join(lines))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    print(f"speedup {speedup:.2f} ({serial['wall_seconds']:.1f} s serial, {local['wall_seconds']:.1f} s on "
          f"{args.workers} workers), efficiency {speedup / args.workers:.2f}; written to {out}")
    return 0


def _load(run: dict) -> str:
    return ", ".join(f"{x:.1f}" for x in run["load_average_1_5_15_min_at_start"])


def _bound_note(records: dict) -> list[str]:
    """Which tasks (by label) ended on a final-time bound, when the task reports it."""
    flagged = [r for r in records.values() if "final_time_bound_active" in r["summary"]]
    if not flagged:
        return []
    active = sorted(r["label"] for r in flagged if r["summary"]["final_time_bound_active"])
    return [f"Final-time bound active: {', '.join(active) if active else 'at no task'}. Other bounds the solutions "
            f"sit on are in the active_bounds column (coordinate, side, grid points).", ""]


def _critical_path(spec, records: dict) -> float:
    """The largest sum of task seconds along a warm-start chain (root to leaf) of the spec's plan."""
    tasks = {t.index: t for t in plan(spec)}
    seconds = {i: records[t.key]["summary"].get("seconds", 0.0) if t.key in records else 0.0
               for i, t in tasks.items()}

    def through(i):
        parent = tasks[i].parent
        return seconds[i] + (through(parent) if parent is not None else 0.0)

    return max(through(i) for i in tasks) if tasks else 0.0


def _busy_note(*runs) -> list[str]:
    load = max(run["load_average_1_5_15_min_at_start"][0] for run in runs)
    if load <= 0.5 * (os.cpu_count() or 1):
        return []
    return [f"**The machine was busy** (1-minute load average up to {load:.1f} on {os.cpu_count()} cores before the "
            f"runs): the wall times, speedup and efficiency above are contaminated by other processes. Rerun the "
            f"command on an idle machine.", ""]


def _startup(run: dict) -> str:
    return f"{run['startup_seconds']:.1f}" if "startup_seconds" in run else "not recorded"
