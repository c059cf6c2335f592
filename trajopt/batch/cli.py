"""``trajopt batch SPEC [--out DIR] [--workers N | --scheduler ADDRESS | --serial] [--resume]``.

Maps one task over the inputs of a TOML (or YAML) spec (see ``trajopt.batch.spec``) on Dask: by default an
in-process LocalCluster with one single-threaded worker process per core; ``--scheduler tcp://host:8786`` runs on
an existing cluster (its workers must import trajopt and see the input files); ``--serial`` runs in this process
without Dask. Writes ``DIR/tasks/<label>-<key>/`` per task, ``DIR/manifest.jsonl``, ``DIR/aggregate.{csv,md,png}``
and ``DIR/batch.json`` (mode, workers, wall time). The default DIR is ``./trajopt_results/<spec name>``.
``--set NAME=VALUE`` replaces a common input (``--set intervals=20``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'one task over many trials, subjects or a parameter sweep, on Dask (TOML spec)'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt batch", description="Run one task over many inputs on Dask.")
    parser.add_argument("spec", help="batch spec (.toml, or .yaml with PyYAML)")
    parser.add_argument("--out", help="output folder (default ./trajopt_results/<spec name>)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, help="LocalCluster worker processes (default: one per core)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. tcp://127.0.0.1:8786")
    where.add_argument("--serial", action="store_true", help="run the tasks one by one in this process (no Dask)")
    parser.add_argument("--resume", action="store_true", help="continue the batch in --out: finished tasks are "
                                                              "skipped (by input hash)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="replace an [inputs] value of the spec (TOML value), e.g. --set intervals=20")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    args = parser.parse_args(argv)
    from trajopt.batch.aggregate import write_aggregate
    from trajopt.batch.runner import run_batch
    from trajopt.batch.spec import BatchSpecError, load_spec

    if args.workers is not None and args.workers < 1:
        raise BatchSpecError(f"--workers {args.workers}: give at least 1")
    spec = load_spec(args.spec, args.set)
    out = Path(args.out) if args.out else Path("trajopt_results") / spec.name
    report = run_batch(spec, out, scheduler=args.scheduler, workers=args.workers, serial=args.serial,
                       resume=args.resume, progress=not args.no_progress)
    written = write_aggregate(spec, out)
    print(f"trajopt batch {spec.name}: {report.done} done, {report.failed} failed, {report.resumed} resumed, "
          f"{report.retried} retried; {report.wall_seconds:.1f} s on {report.workers} {report.mode} worker(s); "
          f"results in {out} ({', '.join(p.name for p in written)})")
    return 0 if report.failed == 0 else 1
