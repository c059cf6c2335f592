"""A batch spec: which task, over which inputs, with which warm starts, retries and aggregate.

A spec is a TOML file (YAML too, when PyYAML is installed)::

    task = "gait2d-prediction"          # a name from trajopt.edge.batch.tasks.task_names()
    name = "gait2d_speed_sweep"         # optional: the default output folder ./trajopt_results/<name>

    [inputs]                            # the same for every task
    intervals = 25
    final_time = [0.3, 0.9]

    [sweep]                             # a list, or {start, stop, step}; several keys: every combination
    speed = {start = 0.8, stop = 2.0, step = 0.1}

    [[table]]                           # optional rows (trials, subjects), crossed with the sweep
    motion = "trial01.mot"              # file inputs are relative to the spec's folder

    [warm_start]                        # each task starts from its neighbour's solution along `along`
    along = "speed"
    chains = 2                          # the sweep in this many chains (contiguous runs), solved side by side
    start = 1.3                         # optional: the chains begin next to this value and go outward

    [retry]
    max_retries = 2                     # extra attempts after a failure (exception, killed worker; not bad input)
    solver_failures = false             # also retry a solve that did not converge (a warm-started one is retried
                                        # from the task's default guess; otherwise it is deterministic: off)

    [aggregate]
    x = "speed"
    y = ["cost_of_transport", "stride_length", "cadence"]

Every mistake is one line naming the file, the key and the value (``BatchSpecError``).
"""

from __future__ import annotations

import itertools
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from trajopt.edge.batch.tasks import task_definition, task_names
from trajopt.errors import TrajoptInputError

TOP_LEVEL = ("task", "name", "inputs", "sweep", "table", "warm_start", "retry", "aggregate")


class BatchSpecError(TrajoptInputError):
    """A batch spec with a missing, unknown or ill-typed key (the message names the file, key and value)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often a failed task runs again: after an exception or a killed worker, and optionally a failed solve.

    Bad input (a ``TrajoptInputError`` from the task: a missing column, too few frames) is never retried.
    """

    max_retries: int = 1
    solver_failures: bool = False

    def retries(self, kind: str) -> bool:
        """Whether a failure of this kind ('exception', 'worker', 'solver', 'input') is retried at all."""
        return kind in ("exception", "worker") or (kind == "solver" and self.solver_failures)


@dataclass(frozen=True)
class WarmStart:
    """Chains along a sweep parameter: each task starts from the previous one's solution in its chain."""

    along: str
    chains: int = 1
    start: float | None = None


@dataclass(frozen=True)
class Aggregate:
    x: str
    y: tuple[str, ...]


@dataclass(frozen=True)
class BatchSpec:
    """A parsed, validated batch: the task name and one input dict per task (with the swept names)."""

    task: str
    name: str
    rows: tuple[dict, ...]  # full inputs of each task, defaults filled in, files as absolute paths
    swept: tuple[str, ...]  # input names that vary (sweep keys and table columns), for labels and tables
    warm_start: WarmStart | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    aggregate: Aggregate | None = None
    source: str = "<spec>"


def _error(source: str, key: str, value, why: str) -> BatchSpecError:
    return BatchSpecError(f"{source}: {key} = {value!r}: {why}")


def _read(path: Path) -> dict:
    try:
        text = path.read_text()
    except OSError as error:
        raise BatchSpecError(f"{path}: cannot read the batch spec ({error.strerror})") from None
    if path.suffix.lower() in (".yaml", ".yml"):
        try:
            import yaml
        except ImportError:
            raise BatchSpecError(f"{path}: a YAML spec needs PyYAML (pip install pyyaml); "
                                 "or write it as TOML") from None
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise BatchSpecError(f"{path}: not valid YAML ({str(error).splitlines()[0]})") from None
    else:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise BatchSpecError(f"{path}: not valid TOML ({error})") from None
    if not isinstance(data, dict):
        raise BatchSpecError(f"{path}: a batch spec is a table of keys (task, inputs, sweep, ...)")
    return data


def load_spec(path, overrides=()) -> BatchSpec:
    """Read and validate a TOML (or YAML) batch spec; file inputs are relative to the spec's folder.

    ``overrides``: ``"name=value"`` strings (value in TOML syntax) that replace or add common ``[inputs]``.
    """
    path = Path(path)
    data = _read(path)
    for item in overrides:
        name, _, value = item.partition("=")
        try:
            parsed = tomllib.loads(f"value = {value}")["value"] if value else None
        except tomllib.TOMLDecodeError:
            parsed = None
        if not name or parsed is None:
            raise BatchSpecError(f"--set {item}: expected NAME=VALUE with a TOML value (intervals=20, speed=[1, 2])")
        inputs = _section(data, "inputs", str(path))
        data["inputs"] = {**inputs, name.strip(): parsed}
    return parse_spec(data, source=str(path), base=path.resolve().parent)


def _section(data: dict, key: str, source: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise _error(source, key, value, "expected a table of keys")
    return value


def sweep_values(value, key: str, source: str) -> list:
    """A sweep entry: a non-empty list, or {start, stop, step} (stop included when on the grid)."""
    if isinstance(value, list):
        if not value:
            raise _error(source, key, value, "a sweep needs at least one value")
        return value
    if isinstance(value, dict):
        if set(value) != {"start", "stop", "step"}:
            raise _error(source, key, value, "a range is {start, stop, step}")
        start, stop, step = (value[k] for k in ("start", "stop", "step"))
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                   for v in (start, stop, step)) or step <= 0 or stop < start:
            raise _error(source, key, value, "start <= stop and step > 0 must be finite numbers")
        count = int(math.floor((stop - start) / step + 1e-9)) + 1
        return [round(start + i * step, 12) for i in range(count)]
    raise _error(source, key, value, "expected a list of values or {start, stop, step}")


def _rows(data: dict, source: str) -> tuple[list[dict], list[str]]:
    """Every task's raw inputs: common inputs, crossed with the table rows, crossed with the sweep."""
    common = _section(data, "inputs", source)
    sweep = _section(data, "sweep", source)
    table = data.get("table", [{}])
    if not isinstance(table, list) or not table or not all(isinstance(row, dict) for row in table):
        raise _error(source, "table", table, "expected a non-empty array of tables ([[table]] rows)")
    grids = {key: sweep_values(value, f"sweep.{key}", source) for key, value in sweep.items()}
    for key in grids:
        if key in common:
            raise _error(source, f"sweep.{key}", sweep[key], f"also given in [inputs] ({key} = {common[key]!r})")
    columns = sorted({key for row in table for key in row})
    for key in columns:
        if key in grids:
            raise _error(source, f"table.{key}", table[0].get(key), "also swept in [sweep]")
    rows = []
    for row in table:
        for combination in itertools.product(*grids.values()):
            rows.append({**common, **row, **dict(zip(grids, combination))})
    return rows, [*columns, *grids]


def parse_spec(data: dict, source: str = "<spec>", base: Path | None = None) -> BatchSpec:
    """Validate a spec given as a dict (what the TOML parses to); ``base`` resolves relative file inputs."""
    unknown = [key for key in data if key not in TOP_LEVEL]
    if unknown:
        raise _error(source, unknown[0], data[unknown[0]], f"unknown key (known: {', '.join(TOP_LEVEL)})")
    if "task" not in data:
        raise BatchSpecError(f"{source}: task is missing (one of: {', '.join(task_names())})")
    task = data["task"]
    if task not in task_names():
        raise _error(source, "task", task, f"unknown task (known: {', '.join(task_names())})")
    definition = task_definition(task)
    name = data.get("name", Path(source).stem if source != "<spec>" else task)
    if not isinstance(name, str) or not name or "/" in name:
        raise _error(source, "name", name, "expected a folder name")
    raw_rows, swept = _rows(data, source)
    rows = tuple(definition.validate(row, source, base or Path.cwd()) for row in raw_rows)
    warm_start = _warm_start(_section(data, "warm_start", source), swept, rows, source, definition)
    retry = _retry(_section(data, "retry", source), source)
    aggregate = _aggregate(_section(data, "aggregate", source), source, definition, swept)
    return BatchSpec(task, name, rows, tuple(swept), warm_start, retry, aggregate, source)


def _warm_start(section: dict, swept: list[str], rows, source: str, definition) -> WarmStart | None:
    if not section:
        return None
    for key in section:
        if key not in ("along", "chains", "start"):
            raise _error(source, f"warm_start.{key}", section[key], "unknown key (known: along, chains, start)")
    if not definition.warm_starts:
        raise _error(source, "warm_start.along", section.get("along"), f"task {definition.name} takes no warm start")
    along = section.get("along")
    if along not in swept:
        raise _error(source, "warm_start.along", along, f"not a swept input (swept: {', '.join(swept) or 'none'})")
    if not all(isinstance(row[along], (int, float)) and not isinstance(row[along], bool) for row in rows):
        raise _error(source, "warm_start.along", along, "warm starts follow a numeric input")
    chains = section.get("chains", 1)
    if not isinstance(chains, int) or isinstance(chains, bool) or chains < 1:
        raise _error(source, "warm_start.chains", chains, "expected an integer >= 1")
    start = section.get("start")
    if start is not None and (not isinstance(start, (int, float)) or isinstance(start, bool)):
        raise _error(source, "warm_start.start", start, "expected a number")
    return WarmStart(along, chains, None if start is None else float(start))


def _retry(section: dict, source: str) -> RetryPolicy:
    for key in section:
        if key not in ("max_retries", "solver_failures"):
            raise _error(source, f"retry.{key}", section[key], "unknown key (known: max_retries, solver_failures)")
    retries = section.get("max_retries", RetryPolicy.max_retries)
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise _error(source, "retry.max_retries", retries, "expected an integer >= 0")
    solver = section.get("solver_failures", False)
    if not isinstance(solver, bool):
        raise _error(source, "retry.solver_failures", solver, "expected true or false")
    return RetryPolicy(retries, solver)


def _aggregate(section: dict, source: str, definition, swept: list[str]) -> Aggregate | None:
    if not section:
        return None
    for key in section:
        if key not in ("x", "y"):
            raise _error(source, f"aggregate.{key}", section[key], "unknown key (known: x, y)")
    x, y = section.get("x"), section.get("y", list(definition.metrics))
    if x not in swept:
        raise _error(source, "aggregate.x", x, f"not a swept input (swept: {', '.join(swept) or 'none'})")
    if not isinstance(y, list) or not all(isinstance(v, str) for v in y):
        raise _error(source, "aggregate.y", y, "expected a list of result names")
    return Aggregate(x, tuple(y))
