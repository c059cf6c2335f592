"""Batches: one task (inverse dynamics, static optimization, muscle-driven inverse, a prediction) mapped over many
inputs (trials, subjects, parameter sweeps) on ``dask.distributed``, or serially.

    from trajopt.edge.batch import load_spec, run_batch, write_aggregate

    spec = load_spec("sweep.toml")
    report = run_batch(spec, "trajopt_results/sweep")            # LocalCluster, one worker per core
    report = run_batch(spec, "out", scheduler="tcp://host:8786")  # an existing Dask cluster
    write_aggregate(spec, "trajopt_results/sweep")

Modules: ``spec`` (the TOML/YAML spec), ``tasks`` (the task registry and what a task returns), ``sweep`` (the plan:
keys and warm-start parents), ``manifest`` (atomic result folders, the JSONL manifest and its checksums), ``lock``
(one run per output folder), ``executors`` (serial or Dask, and the default's choice), ``runner`` (retries, resume,
Ctrl-C, progress), ``aggregate`` (table and figure). Dask is imported only by the executors, when a cluster is used
(``pip install 'trajopt[batch]'``).
"""

from trajopt.edge.batch.aggregate import write_aggregate
from trajopt.edge.batch.manifest import Manifest, input_key
from trajopt.edge.batch.runner import BatchReport, run_batch
from trajopt.edge.batch.spec import BatchSpec, BatchSpecError, RetryPolicy, WarmStart, load_spec, parse_spec
from trajopt.edge.batch.tasks import TASKS, TaskContext, TaskOutput

__all__ = ["BatchReport", "BatchSpec", "BatchSpecError", "Manifest", "RetryPolicy", "TASKS", "TaskContext",
           "TaskOutput", "WarmStart", "input_key", "load_spec", "parse_spec", "run_batch", "write_aggregate"]
