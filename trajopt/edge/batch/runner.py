"""Run a batch: on Dask (an in-process LocalCluster or a scheduler address) or serially in this process.

The client keeps the plan: it submits a task when its warm-start parent has finished, writes each result
atomically as it arrives, appends its manifest line, and resubmits failures per the spec's retry policy. It holds
the output folder's lock for the run (``trajopt.edge.batch.lock``). By default it runs serially when a cluster cannot
help (one task at a time in the plan, or tasks too short for a cluster's start-up); ``workers`` or ``scheduler``
ask for Dask whatever the plan.

A resumed run (``resume``) first drops a torn last manifest line, recomputes every finished task whose files are
missing or differ from their checksums, and refuses tasks whose inputs changed since they finished (an edited
file, another ``--set``) unless ``force``. SIGINT stops it cleanly: nothing new starts, running tasks are recorded
as interrupted, the manifest stays valid, and ``--resume`` later does the rest.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from trajopt.edge.batch.executors import DaskExecutor, Job, SerialExecutor, expected_task_seconds, serial_fallback
from trajopt.edge.batch.lock import hold_output_folder
from trajopt.edge.batch.manifest import Manifest, as_bytes, content_record, task_identity, write_result
from trajopt.edge.batch.progress import ProgressBar
from trajopt.edge.batch.spec import BatchSpec, BatchSpecError
from trajopt.edge.batch.sweep import PlannedTask, children, plan
from trajopt.edge.batch.tasks import TaskContext, TaskOutput, task_definition
from trajopt.model.io import read_table


class InputsChanged(BatchSpecError):
    """A resumed batch whose tasks' inputs changed since they finished (without ``force``)."""


@dataclass
class BatchReport:
    """What a run did: counts, wall time, where; ``records`` are the manifest lines this run wrote."""

    out: Path
    mode: str
    workers: int
    done: int = 0
    failed: int = 0
    resumed: int = 0
    attempts: int = 0
    retried: int = 0
    interrupted: int = 0  # tasks stopped by SIGINT (recorded, not failed)
    stopped: bool = False  # the run was interrupted
    wall_seconds: float = 0.0  # first submission to last result, shut-down (and a cluster started late) included
    startup_seconds: float = 0.0  # starting or connecting to the cluster
    load_average: tuple = ()
    scheduler: str = ""  # what ran the tasks, with the reason when the default fell back to serial
    workers_at_end: int = 0  # workers the cluster had when the run ended
    workers_used: int = 0  # distinct worker processes that returned a result in this run
    notes: list = field(default_factory=list)  # one line each: repairs, recomputations, the scheduler's choice
    records: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"mode": self.mode, "scheduler": self.scheduler, "workers": self.workers,
                "workers_at_end": self.workers_at_end, "workers_used": self.workers_used, "done": self.done,
                "failed": self.failed, "resumed": self.resumed, "attempts": self.attempts, "retried": self.retried,
                "interrupted": self.interrupted, "stopped_by_sigint": self.stopped,
                "wall_seconds": self.wall_seconds, "startup_seconds": self.startup_seconds,
                "load_average_1_5_15_min_at_start": list(self.load_average), "notes": self.notes}


class Interrupt:
    """SIGINT during a batch: a flag the loop checks; a ``KeyboardInterrupt`` only inside ``raising()`` (while
    a task runs in this process or the loop waits), never while a result or manifest line is written."""

    def __init__(self):
        self.requested, self._raising, self._previous = False, False, None

    def _handler(self, signum, frame):
        self.requested = True
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a second Ctrl-C stops at once
        if self._raising:
            raise KeyboardInterrupt

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc):
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    @contextmanager
    def raising(self):
        self._raising = True
        try:
            yield
        finally:
            self._raising = False


def _guess(out: Path, tasks: dict, state: dict, records: dict, task: PlannedTask):
    """(Table, label) of the nearest finished ancestor's solution, or (None, None)."""
    parent = task.parent
    while parent is not None:
        record = records.get(parent)
        if state.get(parent) == "done" and record and record.get("guess_file"):
            return read_table(out / record["result"] / record["guess_file"]), tasks[parent].label
        parent = tasks[parent].parent
    return None, None


def _changes(record: dict, task: PlannedTask, file_inputs) -> str:
    """What differs between a finished record's inputs and the task's now, in a few words."""
    parts = []
    old_inputs, old_files = record.get("inputs", {}), record.get("input_files", {})
    for name in sorted(set(old_inputs) | set(task.inputs)):
        old, new = old_inputs.get(name), task.inputs.get(name)
        if name in file_inputs:
            if old != new:
                parts.append(f"{name} {Path(old).name if old else old!r} -> {Path(new).name if new else new!r}")
            elif name in old_files and old_files[name] != task.input_files.get(name):
                parts.append(f"{name} file {Path(new).name} edited")
        elif old != new and json.dumps(old) != json.dumps(new):  # NaN == NaN here
            parts.append(f"{name} {old!r} -> {new!r}")
    return ", ".join(parts) or "an input file's contents"


def _changed_tasks(spec: BatchSpec, planned: list[PlannedTask], manifest: Manifest, finished: dict):
    """(task, what changed) for tasks not finished with their inputs now whose same task (by identity) finished
    with other inputs."""
    latest = {}
    for record in manifest.records():
        if record.get("task") == spec.task:
            latest[task_identity(spec.task, record.get("inputs", {}), spec.swept)] = record
    files = task_definition(spec.task).file_inputs()
    changed = []
    for task in planned:
        record = latest.get(task.identity)
        if task.key not in finished and record and record["key"] != task.key and record.get("status") == "done":
            changed.append((task, _changes(record, task, files)))
    return changed


def run_batch(spec: BatchSpec, out, *, scheduler: str | None = None, workers: int | None = None,
              serial: bool = False, resume: bool = False, force: bool = False, progress: bool = True,
              stream=None) -> BatchReport:
    """Run every task of ``spec`` into ``out`` (see the module docstring); returns what was done."""
    out = Path(out)
    with hold_output_folder(out):
        return _run(spec, out, scheduler, workers, serial, resume, force, progress, stream)


def _run(spec, out, scheduler, workers, serial, resume, force, progress, stream) -> BatchReport:
    manifest = Manifest(out)
    if manifest.exists() and not resume:
        raise BatchSpecError(f"{out}: holds a batch already ({manifest.path.name}); --resume continues it, "
                             f"or give another --out")
    notes = []

    def say(line: str) -> None:
        notes.append(line)
        print(line, file=sys.stderr if stream is None else stream, flush=True)

    planned = plan(spec)
    tasks = {t.index: t for t in planned}
    below = children(planned)
    finished = {}
    if resume:
        for line in manifest.repair():
            say(line)
        finished, broken = manifest.assess()
        for task in planned:
            if task.key in broken:
                say(f"{task.label}: {broken[task.key][1]}; recomputing it")
        changed = _changed_tasks(spec, planned, manifest, finished)
        if changed and not force:
            (first, what), more = changed[0], len(changed) - 1
            raise InputsChanged(f"{out}: task {first.label} finished with other inputs ({what})"
                                f"{f' and {more} more task(s) too' if more else ''}; --force recomputes "
                                f"{'them' if more else 'it'}, or give another --out")
        for task, what in changed:
            say(f"{task.label}: inputs changed since it finished ({what}); recomputing it (--force)")
    (out / "spec.json").write_text(json.dumps({"task": spec.task, "name": spec.name, "source": spec.source,
                                               "swept": list(spec.swept), "rows": list(spec.rows)}, indent=1))
    choice, probe = "serial" if serial else scheduler if scheduler else None, False
    if not serial and scheduler is None and workers is None:
        to_run = {t.index for t in planned if t.key not in finished}
        seconds = expected_task_seconds(spec.task, [t for t in planned if t.index in to_run], manifest.records())
        workers, reason = serial_fallback(planned, to_run, seconds, os.cpu_count() or 1)
        if importlib.util.find_spec("distributed") is None:
            reason = "Dask is not installed"
        if reason is not None:
            serial, choice = True, f"serial (fallback: {reason})"
            say(f"trajopt batch: runs serially (fallback: {reason}); --workers N starts a cluster anyway")
        elif seconds is None:  # how long a task takes is not known: time the first one here, then choose
            serial, probe = True, True
    with Interrupt() as interrupt:
        return _execute(spec, out, manifest, planned, tasks, below, finished, scheduler, workers, serial, choice,
                        probe, progress, stream, say, notes, interrupt)


def _execute(spec, out, manifest, planned, tasks, below, finished, scheduler, workers, serial, choice, probe,
             progress, stream, say, notes, interrupt) -> BatchReport:
    state, records = {}, {}
    load = os.getloadavg()
    starting = time.perf_counter()
    executor = SerialExecutor(spec.task) if serial else DaskExecutor(spec.task, scheduler, workers)
    report = BatchReport(out, executor.mode, executor.workers, load_average=load, notes=notes)
    report.scheduler = choice or ("serial" if serial else f"local ({executor.workers} workers)")
    bar = ProgressBar(f"batch {spec.name}", len(planned), stream=stream, enabled=progress)
    started = time.perf_counter()
    report.startup_seconds = started - starting

    def release(index):
        for child in below.get(index, []):
            start(tasks[child])

    def start(task: PlannedTask):
        if interrupt.requested:
            return
        if task.key in finished:
            state[task.index], records[task.index] = "done", finished[task.key]
            report.resumed += 1
            release(task.index)
            return
        guess, label = _guess(out, tasks, state, records, task)
        executor.submit(Job(task, 1, TaskContext(1, guess, label, task.input_files)))

    def finish(job: Job, output: TaskOutput):
        if interrupt.requested and not output.success and output.failure in ("worker", "exception"):
            output = TaskOutput(False, "interrupted", output.summary, output.files, error=f"interrupted (SIGINT); "
                                f"{output.error}", failure="interrupted")
        _record(out, manifest, spec, job, output, report, state, records)
        if output.failure == "interrupted":
            report.interrupted += 1
            state[job.task.index] = "interrupted"
            return
        retry = not output.success and job.attempt <= spec.retry.max_retries and \
            spec.retry.retries(output.failure or "exception") and not interrupt.requested
        if retry:
            report.retried += 1
            context = TaskContext(job.attempt + 1, job.context.guess, job.context.guess_label, job.task.input_files)
            if output.failure == "solver" and job.context.guess is not None:  # retried from the default guess
                context = TaskContext(job.attempt + 1, input_files=job.task.input_files)
            executor.submit(Job(job.task, job.attempt + 1, context))
            return
        state[job.task.index] = "done" if output.success else "failed"
        if output.success:
            report.done += 1
        else:
            report.failed += 1
        release(job.task.index)

    try:
        for root in below.get(None, []):
            start(tasks[root])
        bar.skipped = report.resumed
        bar.update(report.resumed, report.failed, executor.running())
        while executor.pending() and not interrupt.requested:
            try:
                with interrupt.raising():
                    results = executor.wait(timeout=1.0)
            except KeyboardInterrupt:
                break
            for job, output in results:
                finish(job, output)
            if probe and results and not interrupt.requested:
                probe = False
                executor = _after_first_task(spec, planned, state, executor, results[0][1], report, say)
            bar.skipped = report.resumed
            bar.update(report.done + report.resumed, report.failed, executor.running(), report.retried)
        if interrupt.requested:
            report.stopped = True
            for job, output in executor.stop():
                finish(job, output)
        bar.update(report.done + report.resumed, report.failed, 0, report.retried)
    finally:
        executor.close()
        bar.close()
    report.wall_seconds = time.perf_counter() - started
    report.workers_at_end = executor.workers_at_end
    report.workers_used = len({r["summary"].get("worker") for r in report.records if r["summary"].get("worker")})
    (out / "batch.json").write_text(json.dumps(report.as_dict(), indent=1))
    return report


def _after_first_task(spec, planned, state, executor, first: TaskOutput, report: BatchReport, say):
    """The default's choice once a first task has run here: the queued tasks go to a LocalCluster when it can save
    more than its start-up, else the batch goes on serially (and says why)."""
    remaining = {t.index for t in planned if state.get(t.index) not in ("done", "failed")}
    seconds = first.summary.get("seconds", 0.0)
    workers, reason = serial_fallback(planned, remaining, seconds, os.cpu_count() or 1)
    if reason is not None:
        report.scheduler = f"serial (fallback: {reason}, timed on a first task)"
        say(f"trajopt batch: runs serially (fallback: {reason}, timed on a first task); --workers N starts a "
            f"cluster anyway")
        return executor
    say(f"trajopt batch: a first task took {seconds:.2g} s here; the other {len(remaining)} go to a LocalCluster of "
        f"{workers} workers")
    starting = time.perf_counter()
    cluster = DaskExecutor(spec.task, None, workers)
    report.startup_seconds += time.perf_counter() - starting
    for job in executor.queue:  # queued, never started: a serial executor runs nothing between waits
        cluster.submit(job)
    report.mode, report.workers = cluster.mode, cluster.workers
    report.scheduler = f"local ({workers} workers, after a first task of {seconds:.2g} s in this process)"
    return cluster


def _record(out, manifest, spec, job: Job, output: TaskOutput, report: BatchReport, state, records) -> None:
    """Write the attempt's result folder atomically (none for an interrupted task), then its manifest line."""
    task = job.task
    status = {True: "done", False: "failed"}[output.success] if output.failure != "interrupted" else "interrupted"
    files = {name: content_record(as_bytes(content)) for name, content in output.files.items()}
    record = {"key": task.key, "label": task.label, "task": spec.task, "attempt": job.attempt, "status": status,
              "solver_status": output.status, "failure": output.failure, "error": output.error,
              "warm_start": job.context.guess_label, "guess_file": output.guess_file if output.success else None,
              "summary": output.summary, "inputs": task.inputs, "input_files": task.input_files, "files": files}
    if status == "interrupted":
        record["result"] = None
    else:
        folder = write_result(out, task.key, task.label, output.files, record)
        record["result"] = str(folder.relative_to(out))
    manifest.append(record)
    report.attempts += 1
    report.records.append(record)
    records[task.index] = record
