"""The aggregate of a batch: one row per task (swept inputs, status, summary numbers) as CSV and Markdown, and a
figure of the chosen numbers against the swept input (failed tasks marked)."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from trajopt.studies.analysis.figures import pyplot, save_figure
from trajopt.edge.batch.manifest import Manifest, input_key, task_identity
from trajopt.edge.batch.spec import BatchSpec
from trajopt.edge.batch.tasks import task_definition


def _key(spec: BatchSpec, row: dict, files) -> str | None:
    try:
        return input_key(spec.task, row, files)
    except OSError:  # an input file deleted or unreadable since the run: the task is found by its identity
        return None


def rows(spec: BatchSpec, out) -> list[dict]:
    """The last manifest record of every task of the spec (tasks never run are left out), sorted by the inputs.

    A task is found by its key (its inputs and files' contents now), else, when a file cannot be read any more,
    by its identity (its swept inputs), so a task whose file went away still shows, as the run recorded it."""
    records = Manifest(out).records()
    by_key = {r["key"]: r for r in records}
    by_identity = {task_identity(spec.task, r.get("inputs", {}), spec.swept): r for r in records
                   if r.get("task") == spec.task}
    files = task_definition(spec.task).file_inputs()
    found = []
    for row in spec.rows:
        key = _key(spec, row, files)
        record = by_key.get(key) if key is not None else by_identity.get(task_identity(spec.task, row, spec.swept))
        if record is not None:
            found.append(record)
    return sorted(found, key=lambda r: tuple(_sortable(r["inputs"][k]) for k in spec.swept))


def _status(record: dict) -> str:
    if record["status"] in ("done", "interrupted"):
        return record["status"]
    return f"failed: {record.get('error') or record.get('solver_status')}"


def _sortable(value):
    return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))


def _cell(value) -> str:
    if isinstance(value, float):
        return "" if math.isnan(value) else f"{value:.4g}"
    if isinstance(value, list):
        return "; ".join(str(v) for v in value) or "none"
    return "" if value is None else str(value)


def write_aggregate(spec: BatchSpec, out) -> list[Path]:
    """``aggregate.csv``, ``aggregate.md`` and (with [aggregate] in the spec) ``aggregate.png`` in ``out``."""
    out = Path(out)
    records = rows(spec, out)
    definition = task_definition(spec.task)
    metrics = list(spec.aggregate.y) if spec.aggregate else list(definition.metrics)
    files = definition.file_inputs()
    extras = [k for k in ("final_time", "iterations", "seconds", "active_bounds")
              if any(k in r["summary"] for r in records)]
    metrics += [k for k in extras if k not in metrics]
    header = [*spec.swept, "status", "attempts", *metrics, "warm start"]
    table = [[*(Path(r["inputs"][k]).name if k in files else r["inputs"][k] for k in spec.swept), _status(r),
              r["attempt"],
              *(r["summary"].get(k) for k in metrics), r.get("warm_start") or ""] for r in records]
    with open(out / "aggregate.csv", "w", newline="") as stream:
        writer = csv.writer(stream)
        writer.writerow(header)
        writer.writerows([[_cell(v) if isinstance(v, list) else ("" if v is None else v) for v in row]
                          for row in table])
    named = [f"{name} ({definition.units[name]})" if name in definition.units else name for name in header]
    lines = [f"| {' | '.join(named)} |", "|" + "---|" * len(header)]
    lines += [f"| {' | '.join(_cell(v) for v in row)} |" for row in table]
    (out / "aggregate.md").write_text("\n".join(lines) + "\n")
    written = [out / "aggregate.csv", out / "aggregate.md"]
    if spec.aggregate and records:
        written.append(plot(records, spec.aggregate.x, spec.aggregate.y, out / "aggregate.png", definition.units))
    return written


def plot(records: list[dict], x: str, ys, path: Path, units=None) -> Path:
    plt = pyplot()
    figure, axes = plt.subplots(1, len(ys), figsize=(3.6 * len(ys), 3.2), squeeze=False)
    for axis, y in zip(axes[0], ys):
        for status, style in (("done", "o-"), ("failed", "x")):
            points = [(r["inputs"][x], r["summary"].get(y)) for r in records if r["status"] == status]
            points = [(a, b) for a, b in points if isinstance(b, (int, float))]
            if points:
                axis.plot(*zip(*points), style, label=status)
        units = units or {}
        axis.set_xlabel(f"{x} ({units[x]})" if x in units else x)
        axis.set_title(y.replace("_", " ") + (f"\n({units[y]})" if y in units else ""), fontsize=10)
        axis.grid(alpha=0.3)
    if any(r["status"] == "failed" for r in records):
        axes[0, 0].legend(fontsize=8)
    return save_figure(figure, path, dpi=100)
