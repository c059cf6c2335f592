"""The plan of a batch: one task per input row, keyed by input hash, and who warm-starts whom along a sweep.

Without ``[warm_start]`` every task starts from the task's own default guess. With it, the rows that differ only
in ``along`` form a sweep; its sorted values are cut into ``chains`` contiguous runs; in each run the value nearest
``start`` (default: the run's first) starts from the default guess, and every other value from its neighbour one
step nearer to that root. Runs are solved side by side (two runs keep two workers busy); a failed task's
neighbours start from the nearest finished task before it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from trajopt.edge.batch.manifest import input_digests, input_key, task_identity, task_label
from trajopt.edge.batch.spec import BatchSpec, BatchSpecError
from trajopt.edge.batch.tasks import task_definition


@dataclass(frozen=True)
class PlannedTask:
    index: int
    key: str
    label: str
    inputs: dict
    parent: int | None = None  # index of the task whose solution this one starts from
    input_files: dict = field(default_factory=dict)  # file input name -> SHA-256 of its content when planned
    identity: str | None = None  # the task across changes of its non-swept inputs and file contents


def _segments(members: list[int], chains: int) -> list[list[int]]:
    """`members` (sorted) cut into `chains` contiguous runs of near-equal length."""
    chains = min(chains, len(members))
    size, extra = divmod(len(members), chains)
    runs, start = [], 0
    for c in range(chains):
        stop = start + size + (1 if c < extra else 0)
        runs.append(members[start:stop])
        start = stop
    return runs


def _digests(spec: BatchSpec, row: dict, files) -> dict:
    try:
        return input_digests(row, files)
    except OSError as error:
        name = next((n for n in files if row.get(n) and not Path(row[n]).is_file()), files[0])
        raise BatchSpecError(f"{spec.source}: {name} = {row[name]!r}: cannot read it ({error.strerror})") from None


def plan(spec: BatchSpec) -> list[PlannedTask]:
    """Every task of the spec in a start order (roots first, then along their runs); parents name warm starts."""
    definition = task_definition(spec.task)
    files = definition.file_inputs()
    digests = [_digests(spec, row, files) for row in spec.rows]
    keys = [input_key(spec.task, row, files, d) for row, d in zip(spec.rows, digests)]
    seen = {}
    for i, key in enumerate(keys):
        if key in seen:
            raise BatchSpecError(f"{spec.source}: tasks {task_label(spec.rows[seen[key]], spec.swept)!r} and "
                                 f"{task_label(spec.rows[i], spec.swept)!r} have the same inputs")
        seen[key] = i
    parents: dict[int, int | None] = {i: None for i in range(len(spec.rows))}
    order = list(range(len(spec.rows)))
    warm = spec.warm_start
    if warm is not None:
        groups: dict[str, list[int]] = {}
        for i, row in enumerate(spec.rows):
            other = tuple((k, repr(row[k])) for k in spec.swept if k != warm.along)
            groups.setdefault(repr(other), []).append(i)
        order = []
        runs = []
        for members in groups.values():
            members.sort(key=lambda i: spec.rows[i][warm.along])
            runs += _segments(members, warm.chains)
        frontier = []
        for run in runs:
            values = [spec.rows[i][warm.along] for i in run]
            target = values[0] if warm.start is None else warm.start
            root = min(range(len(run)), key=lambda j: (abs(values[j] - target), j))
            for j in range(len(run)):
                parents[run[j]] = None if j == root else run[j + 1] if j < root else run[j - 1]
            frontier.append(run[root])
        # Start order: breadth-first from the roots, interleaving the runs so workers share them.
        while frontier:
            order += frontier
            frontier = [i for parent in frontier for i in sorted(parents) if parents[i] == parent]
    return [PlannedTask(i, keys[i], task_label(spec.rows[i], spec.swept), spec.rows[i], parents[i], digests[i],
                        task_identity(spec.task, spec.rows[i], spec.swept)) for i in order]


def children(tasks: list[PlannedTask]) -> dict[int | None, list[int]]:
    """parent index (None for the roots) -> indices of the tasks that start from it, in plan order."""
    out: dict[int | None, list[int]] = {}
    for task in tasks:
        out.setdefault(task.parent, []).append(task.index)
    return out
