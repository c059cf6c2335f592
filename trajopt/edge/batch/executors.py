"""Where a batch's tasks run: serially in this process, or on Dask (an in-process LocalCluster or a scheduler
address); and the default choice between them.

A killed worker surfaces as ``KilledWorker`` (the LocalCluster's scheduler has ``allowed-failures = 0`` so the retry
is the spec's policy, recorded in the manifest; an external scheduler may first retry on its own). Dask is
imported only here, only when a cluster is used.
"""

from __future__ import annotations

import logging
import os
import statistics
from dataclasses import dataclass

from trajopt.edge.batch.spec import BatchSpecError
from trajopt.edge.batch.sweep import PlannedTask
from trajopt.edge.batch.tasks import TaskContext, TaskOutput, execute, task_definition

SINGLE_THREADED = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}


@dataclass
class Job:
    task: PlannedTask
    attempt: int
    context: TaskContext


def interrupted_output() -> TaskOutput:
    return TaskOutput(False, "interrupted", error="interrupted (SIGINT) while running", failure="interrupted")


class SerialExecutor:
    """Runs each submitted job in this process, one at a time, in submission order."""

    mode, workers = "serial", 1

    def __init__(self, task_name: str):
        self.task_name, self.queue, self.current = task_name, [], None
        self.workers_at_end = 1

    def submit(self, job: Job) -> None:
        self.queue.append(job)

    def pending(self) -> int:
        return len(self.queue)

    def running(self) -> int:
        return min(1, len(self.queue))

    def wait(self, timeout: float) -> list[tuple[Job, TaskOutput]]:
        self.current = self.queue.pop(0)
        output = execute(self.task_name, self.current.task.inputs, self.current.context)
        job, self.current = self.current, None
        return [(job, output)]

    def stop(self) -> list[tuple[Job, TaskOutput]]:
        """After an interrupt: the job that was running, as interrupted; queued jobs are dropped (never started)."""
        running, self.current, self.queue = self.current, None, []
        return [] if running is None else [(running, interrupted_output())]

    def close(self) -> None:
        pass


def _worker_failure(error: Exception) -> TaskOutput:
    from distributed import KilledWorker

    detail = " ".join(f"{type(error).__name__}: {error}".split())
    reason = "worker died" if isinstance(error, KilledWorker) else "lost the worker or scheduler"
    return TaskOutput(False, "worker failure", error=f"{reason} ({detail})", failure="worker")


def _executing_keys(dask_worker) -> list:
    """On a worker (``Client.run``): the keys of the tasks its threads execute now."""
    return [task.key for task in dask_worker.state.executing]


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
            except (OSError, TimeoutError, ValueError) as error:
                reason = " ".join(str(error).split())
                raise BatchSpecError(f"--scheduler {address}: cannot connect ({reason}); give an address such as "
                                     f"tcp://127.0.0.1:8786") from None
            self.workers = self._worker_count()
            self.mode = "scheduler"
        self.workers_at_end = self.workers

    def _worker_count(self) -> int:
        return len(self.client.scheduler_info().get("workers", {}))

    def submit(self, job: Job) -> None:
        key = f"{self.task_name}-{job.task.label}-{job.task.key}-attempt{job.attempt}"
        future = self.client.submit(execute, self.task_name, job.task.inputs, job.context, key=key, pure=False,
                                    retries=0)
        self.futures[future] = job

    def pending(self) -> int:
        return len(self.futures)

    def _processing(self) -> set | None:
        """Keys of the tasks the workers are running now (None when the scheduler cannot say)."""
        try:
            return {key for tasks in self.client.processing().values() for key in tasks}
        except Exception:  # a lost scheduler: the caller counts every unfinished job
            return None

    def _executing(self) -> set | None:
        """Keys of the tasks a worker thread is executing now (the scheduler's 'processing' also counts tasks
        handed to a busy worker); the scheduler's view when the workers cannot be asked."""
        try:
            running = self.client.run(_executing_keys, wait=True)
        except Exception:  # a dead or busy worker: what the scheduler says
            return self._processing()
        return {key for keys in running.values() for key in keys}

    def running(self) -> int:
        try:
            threads = sum(w.get("nthreads", 1) for w in self.client.scheduler_info().get("workers", {}).values())
        except Exception:  # the count is cosmetic; never let it stop a batch
            return 0
        processing = self._processing() or set()
        keys = {future.key for future in self.futures}
        # A scheduler may hand a worker more tasks than it has threads (worker-saturation > 1): count what can run.
        return min(threads or len(processing), len(processing & keys))

    def _outcome(self, future) -> TaskOutput:
        try:
            return future.result()
        except Exception as error:  # KilledWorker, a lost connection, ...: the worker, not the task
            return _worker_failure(error)

    def wait(self, timeout: float) -> list[tuple[Job, TaskOutput]]:
        from distributed import wait

        try:
            finished = wait(list(self.futures), timeout=timeout, return_when="FIRST_COMPLETED").done
        except TimeoutError:  # nothing finished yet: the caller redraws the progress bar
            return []
        return [(self.futures.pop(future), self._outcome(future)) for future in finished]

    def stop(self) -> list[tuple[Job, TaskOutput]]:
        """After an interrupt: finished jobs with their results, running ones as interrupted; all others cancelled
        (they never started)."""
        processing = self._executing()
        results = []
        for future, job in list(self.futures.items()):
            if future.status == "finished":
                results.append((job, self._outcome(future)))
            elif processing is None or future.key in processing or future.status == "error":
                results.append((job, interrupted_output()))
            future.cancel()
        self.futures.clear()
        return results

    def close(self) -> None:
        try:
            self.workers_at_end = self._worker_count()
        except Exception:  # a lost scheduler: no count at the end
            self.workers_at_end = 0
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


@dataclass(frozen=True)
class ClusterCost:
    """What a LocalCluster costs before it saves anything: starting its processes and, on each worker, the first
    import of the task's module and model. An order of magnitude; tasks much shorter than it run serially."""

    startup_seconds: float = 4.0


def plan_width(tasks: list[PlannedTask], to_run: set[int]) -> int:
    """How many of the tasks to run can run side by side: the widest level of their warm-start forest (a task whose
    parent is not run again starts at once)."""
    by_index = {task.index: task for task in tasks}
    depth: dict[int, int] = {}

    def level(index: int) -> int:
        if index not in depth:
            parent = by_index[index].parent
            depth[index] = 0 if parent is None or parent not in to_run else level(parent) + 1
        return depth[index]

    counts: dict[int, int] = {}
    for index in to_run:
        counts[level(index)] = counts.get(level(index), 0) + 1
    return max(counts.values(), default=0)


def expected_task_seconds(task_name: str, tasks: list[PlannedTask], history: list[dict]) -> float | None:
    """Seconds one task takes: the median of this task kind's earlier attempts in the manifest, else the task
    definition's estimate from the inputs, else None (not known before running)."""
    seconds = [r["summary"]["seconds"] for r in history
               if r.get("task") == task_name and isinstance(r.get("summary", {}).get("seconds"), (int, float))]
    if seconds:
        return statistics.median(seconds)
    estimate = task_definition(task_name).expected_seconds
    if estimate is None or not tasks:
        return None
    return statistics.mean(estimate(task.inputs) for task in tasks)


def serial_fallback(tasks: list[PlannedTask], to_run: set[int], seconds: float | None, cores: int,
                    cost: ClusterCost = ClusterCost()) -> tuple[int, str | None]:
    """(workers for a LocalCluster, None) when parallel can help, else (1, why serial) for the default choice."""
    width = plan_width(tasks, to_run)
    workers = min(cores, len(to_run), width)
    if cores <= 1:
        return 1, "1 core"
    if len(to_run) <= 1:
        return 1, f"{len(to_run)} task{'' if len(to_run) == 1 else 's'} to run"
    if width <= 1:
        return 1, "the warm-start plan runs one task at a time"
    if seconds is not None:
        saved = seconds * len(to_run) * (1 - 1 / workers)
        if saved <= cost.startup_seconds:
            return 1, (f"{len(to_run)} tasks of about {seconds:.2g} s; {workers} workers would save at most "
                       f"{saved:.2g} s, less than a cluster's start-up of about {cost.startup_seconds:g} s")
    return workers, None
