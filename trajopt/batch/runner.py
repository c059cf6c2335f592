"""Run a batch: on Dask (an in-process LocalCluster or a scheduler address) or serially in this process.

The client keeps the plan: it submits a task when its warm-start parent has finished, writes each result
atomically as it arrives, appends its manifest line, and resubmits failures per the spec's retry policy. A killed
worker surfaces as ``KilledWorker`` (the LocalCluster's scheduler has ``allowed-failures = 0`` so the retry is this
policy's, recorded in the manifest; an external scheduler may first retry on its own). Dask is imported only here,
only when a cluster is used.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from trajopt.batch.manifest import Manifest, write_result
from trajopt.batch.progress import ProgressBar
from trajopt.batch.spec import BatchSpec, BatchSpecError
from trajopt.batch.sweep import PlannedTask, children, plan
from trajopt.batch.tasks import TaskContext, TaskOutput, execute

SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}


@dataclass
class Job:
    task: PlannedTask
    attempt: int
    context: TaskContext


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
    wall_seconds: float = 0.0  # first submission to last result, shut-down included
    startup_seconds: float = 0.0  # starting or connecting to the cluster
    load_average: tuple = ()
    records: list = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"mode": self.mode, "workers": self.workers, "done": self.done, "failed": self.failed,
                "resumed": self.resumed, "attempts": self.attempts, "retried": self.retried,
                "wall_seconds": self.wall_seconds, "startup_seconds": self.startup_seconds,
                "load_average_1_5_15_min_at_start": list(self.load_average)}


class SerialExecutor:
    """Runs each submitted job in this process, one at a time, in submission order."""

    mode, workers = "serial", 1

    def __init__(self, task_name: str):
        self.task_name, self.queue = task_name, []

    def submit(self, job: Job) -> None:
        self.queue.append(job)

    def pending(self) -> int:
        return len(self.queue)

    def running(self) -> int:
        return min(1, len(self.queue))

    def wait(self, timeout: float) -> list[tuple[Job, TaskOutput]]:
        job = self.queue.pop(0)
        return [(job, execute(self.task_name, job.task.inputs, job.context))]

    def close(self) -> None:
        pass


class DaskExecutor:
    """Submits jobs to a Dask cluster: an in-process LocalCluster (``workers`` processes, one thread each, BLAS and
    OpenMP single-threaded) or the scheduler at ``address``."""

    def __init__(self, task_name: str, address: str | None = None, workers: int | None = None):
        try:
            import dask
            from distributed import Client, LocalCluster
        except ImportError:
            raise BatchSpecError("trajopt batch: Dask is not installed (pip install 'trajopt[batch]'); "
                                 "--serial runs without it") from None
        self.task_name, self.futures, self.cluster = task_name, {}, None
        if address is None:
            import logging

            self.workers = workers or os.cpu_count() or 1
            # worker-saturation 1: a worker holds only the task it runs, so a dying worker takes one task with it.
            with dask.config.set({"distributed.scheduler.allowed-failures": 0,
                                  "distributed.scheduler.worker-saturation": 1.0,
                                  "distributed.nanny.pre-spawn-environ": SINGLE_THREADED}):
                self.cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                            dashboard_address=None, env=dict(SINGLE_THREADED),
                                            silence_logs=logging.CRITICAL)
                self.client = Client(self.cluster)
            self.mode = "local"
        else:
            try:
                self.client = Client(address, timeout=10)
            except (OSError, TimeoutError) as error:
                raise BatchSpecError(f"--scheduler {address}: cannot connect ({error})") from None
            self.workers = len(self.client.scheduler_info().get("workers", {}))
            self.mode = "scheduler"

    def submit(self, job: Job) -> None:
        key = f"{self.task_name}-{job.task.label}-{job.task.key}-attempt{job.attempt}"
        future = self.client.submit(execute, self.task_name, job.task.inputs, job.context, key=key, pure=False,
                                    retries=0)
        self.futures[future] = job

    def pending(self) -> int:
        return len(self.futures)

    def running(self) -> int:
        try:
            processing = self.client.processing()
            threads = sum(w.get("nthreads", 1) for w in self.client.scheduler_info().get("workers", {}).values())
        except Exception:  # the count is cosmetic; never let it stop a batch
            return 0
        keys = {future.key for future in self.futures}
        # A scheduler may hand a worker more tasks than it has threads (worker-saturation > 1): count what can run.
        return min(threads or len(processing), sum(1 for tasks in processing.values() for key in tasks if key in keys))

    def wait(self, timeout: float) -> list[tuple[Job, TaskOutput]]:
        from distributed import wait

        try:
            finished = wait(list(self.futures), timeout=timeout, return_when="FIRST_COMPLETED").done
        except TimeoutError:  # nothing finished yet: the caller redraws the progress bar
            return []
        results = []
        for future in finished:
            job = self.futures.pop(future)
            try:
                output = future.result()
            except Exception as error:  # KilledWorker, a lost connection, ...: the worker, not the task
                output = TaskOutput(False, "worker failure", error=f"{type(error).__name__}: {error}",
                                    failure="worker")
            results.append((job, output))
        return results

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _guess(out: Path, tasks: dict, state: dict, records: dict, task: PlannedTask):
    """(Table, label) of the nearest finished ancestor's solution, or (None, None)."""
    from trajopt.io import read_table

    parent = task.parent
    while parent is not None:
        record = records.get(parent)
        if state.get(parent) == "done" and record and record.get("guess_file"):
            return read_table(out / record["result"] / record["guess_file"]), tasks[parent].label
        parent = tasks[parent].parent
    return None, None


def run_batch(spec: BatchSpec, out, *, scheduler: str | None = None, workers: int | None = None,
              serial: bool = False, resume: bool = False, progress: bool = True, stream=None) -> BatchReport:
    """Run every task of ``spec`` into ``out`` (see the module docstring); returns what was done."""
    out = Path(out)
    manifest = Manifest(out)
    if manifest.exists() and not resume:
        raise BatchSpecError(f"{out}: holds a batch already ({manifest.path.name}); --resume continues it, "
                             f"or give another --out")
    planned = plan(spec)
    tasks = {t.index: t for t in planned}
    below = children(planned)
    finished = manifest.finished() if resume else {}
    state, records = {}, {}
    out.mkdir(parents=True, exist_ok=True)
    (out / "spec.json").write_text(json.dumps({"task": spec.task, "name": spec.name, "source": spec.source,
                                               "swept": list(spec.swept), "rows": list(spec.rows)}, indent=1))
    load = os.getloadavg()
    starting = time.perf_counter()
    executor = SerialExecutor(spec.task) if serial else DaskExecutor(spec.task, scheduler, workers)
    report = BatchReport(out, executor.mode, executor.workers, load_average=load)
    bar = ProgressBar(f"batch {spec.name}", len(planned), stream=stream, enabled=progress)
    started = time.perf_counter()
    report.startup_seconds = started - starting

    def release(index):
        for child in below.get(index, []):
            start(tasks[child])

    def start(task: PlannedTask):
        if task.key in finished:
            state[task.index], records[task.index] = "done", finished[task.key]
            report.resumed += 1
            release(task.index)
            return
        guess, label = _guess(out, tasks, state, records, task)
        executor.submit(Job(task, 1, TaskContext(1, guess, label)))

    try:
        for root in below.get(None, []):
            start(tasks[root])
        bar.skipped = report.resumed
        bar.update(report.resumed, report.failed, executor.running())
        while executor.pending():
            for job, output in executor.wait(timeout=1.0):
                _record(out, manifest, spec, job, output, report, state, records)
                retry = not output.success and job.attempt <= spec.retry.max_retries and \
                    spec.retry.retries(output.failure or "exception")
                if retry:
                    report.retried += 1
                    context = TaskContext(job.attempt + 1, job.context.guess, job.context.guess_label)
                    if output.failure == "solver" and job.context.guess is not None:
                        context = TaskContext(job.attempt + 1)  # a failed warm start retries from the default guess
                    executor.submit(Job(job.task, job.attempt + 1, context))
                    continue
                state[job.task.index] = "done" if output.success else "failed"
                if output.success:
                    report.done += 1
                else:
                    report.failed += 1
                release(job.task.index)
            bar.skipped = report.resumed
            bar.update(report.done + report.resumed, report.failed, executor.running(), report.retried)
        bar.update(report.done + report.resumed, report.failed, 0, report.retried)
    finally:
        executor.close()
        bar.close()
    report.wall_seconds = time.perf_counter() - started
    (out / "batch.json").write_text(json.dumps(report.as_dict(), indent=1))
    return report


def _record(out, manifest, spec, job: Job, output: TaskOutput, report: BatchReport, state, records) -> None:
    """Write the attempt's result folder atomically, then its manifest line."""
    task = job.task
    status = "done" if output.success else "failed"
    record = {"key": task.key, "label": task.label, "task": spec.task, "attempt": job.attempt, "status": status,
              "solver_status": output.status, "failure": output.failure, "error": output.error,
              "warm_start": job.context.guess_label, "guess_file": output.guess_file if output.success else None,
              "summary": output.summary, "inputs": task.inputs}
    folder = write_result(out, task.key, task.label, output.files, record)
    record["result"] = str(folder.relative_to(out))
    manifest.append(record)
    report.attempts += 1
    report.records.append(record)
    records[task.index] = record
