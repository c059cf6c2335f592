"""The tasks a batch maps over its inputs, and what a task gives back.

A task is a function ``run(inputs: dict, context: TaskContext) -> TaskOutput`` in an importable module (it runs
on Dask workers, which import it by name). ``TASKS`` maps the spec's ``task`` name to its definition: the module,
the inputs it takes (type, default, whether it is a file) and the summary numbers an aggregate can plot.
"""

from __future__ import annotations

import importlib
import math
import os
import socket
import time
import traceback
from importlib.metadata import entry_points
from dataclasses import dataclass, field
from pathlib import Path

from trajopt.edge.batch.manifest import file_digest
from trajopt.errors import TrajoptInputError
from trajopt.core.ocp.transcriptions import MOCO_MESH_INTERVAL


class Pair(tuple):
    """Marker type of a (lower, upper) input: two finite numbers, lower < upper."""


@dataclass(frozen=True)
class Input:
    """One input of a task: its type (float, int, bool, str, Pair or Path for a file) and default (None: required)."""

    kind: type
    default: object = None
    help: str = ""

    @property
    def required(self) -> bool:
        return self.default is None


@dataclass(frozen=True)
class TaskContext:
    """What the runner tells a task besides its inputs: the attempt (1, 2, ...), a warm-start guess (a Table) and
    the SHA-256 of each input file when the batch was planned (checked before the task runs)."""

    attempt: int = 1
    guess: object = None  # trajopt.model.io.Table of a neighbour's solution, or None
    guess_label: str | None = None
    input_files: dict = field(default_factory=dict)  # file input name -> SHA-256 of its content


@dataclass
class TaskOutput:
    """A task's result: success and status, scalar summary, files to write (name -> bytes), and the file a
    neighbour along a sweep starts from (``guess_file``). A failed solve still returns its partial files."""

    success: bool
    status: str
    summary: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)
    guess_file: str | None = None
    error: str | None = None
    failure: str | None = None  # 'solver', 'input', 'exception', 'worker' or 'interrupted' when not successful


@dataclass(frozen=True)
class TaskDefinition:
    name: str
    function_name: str  # "module:function" (function defaults to run): function(inputs, context) -> TaskOutput
    description: str
    inputs: dict  # name -> Input
    metrics: tuple[str, ...] = ()  # summary keys an aggregate plots by default
    warm_starts: bool = False
    units: dict = field(default_factory=dict)  # input or summary name -> unit, for tables and figures
    expected_seconds: object = None  # inputs -> seconds one task takes, when known before running it (or None)

    def function(self):
        module, _, name = self.function_name.partition(":")
        return getattr(importlib.import_module(module), name or "run")

    def file_inputs(self) -> tuple[str, ...]:
        return tuple(name for name, spec in self.inputs.items() if spec.kind is Path)

    def validate(self, row: dict, source: str, base: Path) -> dict:
        """Defaults filled in, types checked, file inputs made absolute and checked to exist (one-line errors)."""
        from trajopt.edge.batch.spec import BatchSpecError  # here: trajopt.edge.batch.spec imports this module

        unknown = [key for key in row if key not in self.inputs]
        if unknown:
            raise BatchSpecError(f"{source}: {unknown[0]} = {row[unknown[0]]!r}: not an input of task {self.name} "
                                 f"(inputs: {', '.join(self.inputs)})")
        out = {}
        for name, spec in self.inputs.items():
            if name not in row:
                if spec.required:
                    raise BatchSpecError(f"{source}: {name} is missing: task {self.name} needs it ({spec.help})")
                out[name] = spec.default
                continue
            out[name] = _checked(spec.kind, row[name], name, source, base)
        return out


def _checked(kind: type, value, name: str, source: str, base: Path):
    from trajopt.edge.batch.spec import BatchSpecError  # here: trajopt.edge.batch.spec imports this module

    def bad(why: str):
        return BatchSpecError(f"{source}: {name} = {value!r}: {why}")

    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is float:
        if not number or not math.isfinite(value):
            raise bad("expected a finite number")
        return float(value)
    if kind is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise bad("expected an integer")
        return value
    if kind is bool:
        if not isinstance(value, bool):
            raise bad("expected true or false")
        return value
    if kind is str:
        if not isinstance(value, str):
            raise bad("expected a string")
        return value
    if kind is Pair:
        if not (isinstance(value, (list, tuple)) and len(value) == 2 and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
                and value[0] < value[1]):
            raise bad("expected [lower, upper] with lower < upper")
        return [float(value[0]), float(value[1])]
    if kind is Path:
        if not isinstance(value, str):
            raise bad("expected a file name")
        path = (base / value).resolve()
        if not path.is_file():
            raise bad(f"no such file ({path})")
        return str(path)
    raise TypeError(f"input kind {kind}")


def _tool_inputs(**extra) -> dict:
    return {"model": Input(Path, help="the .osim model"),
            "motion": Input(Path, help="coordinates file (.mot/.sto)"),
            "external_loads": Input(Path, default="", help="OpenSim ExternalLoads .xml"),
            **extra}


TASKS: dict[str, TaskDefinition] = {
    definition.name: definition for definition in (
        TaskDefinition(
            "inverse-dynamics", "trajopt.edge.batch.tool_tasks:inverse_dynamics",
            "inverse dynamics of a motion (trajopt inverse-dynamics)",
            _tool_inputs(cutoff=Input(float, default=0.0, help="low-pass cutoff in Hz; 0: none")),
            metrics=("max_generalized_force",)),
        TaskDefinition(
            "static-optimization", "trajopt.edge.batch.tool_tasks:static_optimization",
            "static optimization of a motion (trajopt static-optimization)",
            _tool_inputs(paths=Input(Path, default="", help="muscle paths .json/.xml"),
                         cutoff=Input(float, default=0.0, help="low-pass cutoff in Hz; 0: none"),
                         reserves=Input(float, default=1.0, help="reserve actuators' optimal force"),
                         first_frame=Input(int, default=0, help="first frame of the motion"),
                         frames=Input(int, default=0, help="number of frames (0: to the end)")),
            metrics=("max_reserve", "mean_activation")),
        TaskDefinition(
            "muscle-inverse", "trajopt.edge.batch.tool_tasks:muscle_inverse",
            "muscle-driven inverse simulation (trajopt muscle-inverse, Moco's MocoInverse)",
            _tool_inputs(paths=Input(Path, default="", help="muscle paths .json/.xml"),
                         mesh_interval=Input(float, default=MOCO_MESH_INTERVAL, help="mesh interval in s"),
                         reserves=Input(float, default=1.0, help="reserve actuators' optimal force (0: none)"),
                         tolerance=Input(float, default=1e-6, help="IPOPT tolerance")),
            metrics=("objective",)),
        TaskDefinition(
            "sleep", "trajopt.edge.batch.testing",
            "a trivial task for tests: sleeps, fails or kills its worker on chosen attempts",
            {"value": Input(float, help="a number (the result is its square)"),
             "seconds": Input(float, default=0.0, help="how long to sleep"),
             "raise_until_attempt": Input(int, default=0, help="raise on attempts <= this"),
             "exit_until_attempt": Input(int, default=0, help="kill the worker process on attempts <= this"),
             "solver_failure": Input(bool, default=False, help="report a non-converged solve"),
             "solver_failure_value": Input(float, default=float("nan"),
                                           help="report a non-converged solve for this value on its first attempt"),
             "data": Input(Path, default="", help="a file the task reads after sleeping (its size is reported)"),
             "exit_while_file": Input(str, default="", help="kill the worker process while this file exists")},
            metrics=("square",), warm_starts=True, expected_seconds=lambda inputs: inputs["seconds"]),
    )
}


# Task kinds outside the library (the ready problems) register a TaskDefinition as an entry point of this group.
TASK_GROUP = "trajopt.batch_tasks"


def task_names() -> tuple[str, ...]:
    """The library's task kinds and those registered as entry points of ``TASK_GROUP`` (none is imported)."""
    return (*TASKS, *sorted(entry.name for entry in entry_points(group=TASK_GROUP) if entry.name not in TASKS))


def task_definition(name: str) -> TaskDefinition:
    if name in TASKS:
        return TASKS[name]
    registered = {entry.name: entry for entry in entry_points(group=TASK_GROUP)}
    if name not in registered:
        raise TrajoptInputError(f"batch task {name!r} is unknown (known: {', '.join(task_names())})")
    return registered[name].load()


def input_file_problem(inputs: dict, digests: dict) -> str | None:
    """Why the input files are not what the batch planned with (deleted or edited since), or None."""
    for name, digest in digests.items():
        try:
            if file_digest(inputs[name]) != digest:
                return f"input file changed after the batch started: {name} = {inputs[name]}"
        except OSError as error:
            return f"input file unreadable after the batch started: {name} = {inputs[name]} ({error.strerror})"
    return None


def execute(task: str, inputs: dict, context: TaskContext) -> TaskOutput:
    """Run a task where it is called (a Dask worker or this process): exceptions become a failed TaskOutput, and
    input files that changed since the batch was planned a failed one without running (bad input)."""
    started = time.perf_counter()
    problem = input_file_problem(inputs, context.input_files)
    if problem is not None:
        output = TaskOutput(False, "input", error=problem, failure="input")
    else:
        output = _run(task, inputs, context)
    output.summary.setdefault("seconds", time.perf_counter() - started)
    output.summary.setdefault("worker", f"{socket.gethostname()}:{os.getpid()}")
    return output


def _run(task: str, inputs: dict, context: TaskContext) -> TaskOutput:
    try:
        return task_definition(task).function()(dict(inputs), context)
    except Exception as error:  # any failure of the task is recorded, never lost
        frames = traceback.extract_tb(error.__traceback__)
        where = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
        kind = "input" if isinstance(error, TrajoptInputError) else "exception"  # bad input fails the same again
        message = " ".join(str(error).split())  # one line, whatever the exception's text
        return TaskOutput(False, kind, error=f"{type(error).__name__}: {message}{where}", failure=kind)
