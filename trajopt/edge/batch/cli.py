"""``trajopt batch SPEC [--out DIR] [--workers N | --scheduler ADDRESS | --serial] [--resume]``.

Maps one task over the inputs of a TOML (or YAML) spec (see ``trajopt.edge.batch.spec``) on Dask: by default an
in-process LocalCluster with one single-threaded worker process per core; ``--scheduler tcp://host:8786`` runs on
an existing cluster (its workers must import trajopt and see the input files); ``--serial`` runs in this process
without Dask. Writes ``DIR/tasks/<label>-<key>/`` per task, ``DIR/manifest.jsonl``, ``DIR/aggregate.{csv,md,png}``
and ``DIR/batch.json`` (mode, scheduler, workers, wall time). The default DIR is ``./trajopt_results/<spec name>``.
``--set NAME=VALUE`` replaces a common input (``--set intervals=20``).

Without ``--workers``, ``--scheduler`` or ``--serial`` the batch runs serially when a cluster cannot help (one task
at a time, or tasks shorter than a cluster's start-up) and says so. One batch at a time writes a folder (a lock,
``DIR/batch.lock``). ``--resume`` repairs a torn manifest line, recomputes tasks whose files are missing or corrupted,
and refuses tasks whose inputs changed since they finished unless ``--force``. Ctrl-C stops the batch cleanly
(exit code 130); ``--resume`` finishes it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from trajopt.edge.batch.aggregate import write_aggregate
from trajopt.edge.batch.lock import hold_output_folder
from trajopt.edge.batch.runner import run_batch
from trajopt.edge.batch.spec import BatchSpecError, load_spec
from trajopt.edge.cli.options import COUNT, add_no_progress, add_out, out_folder

# One line for `trajopt --help`, read from this file without importing it.
DESCRIPTION = 'one task over many trials, subjects or a parameter sweep, on Dask (TOML spec)'

INTERRUPTED = 130  # the shell's code for a process stopped by SIGINT


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="trajopt batch", description="Run one task over many inputs on Dask.")
    parser.add_argument("spec", help="batch spec (.toml, or .yaml with PyYAML)")
    add_out(parser, "<spec name>", "named after the spec")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=COUNT, help="LocalCluster worker processes (default: one per core)")
    where.add_argument("--scheduler", metavar="ADDRESS", help="an existing Dask scheduler, e.g. tcp://127.0.0.1:8786")
    where.add_argument("--serial", action="store_true", help="run the tasks one by one in this process (no Dask)")
    parser.add_argument("--resume", action="store_true", help="continue the batch in --out: finished tasks are "
                                                              "skipped (by input hash)")
    parser.add_argument("--force", action="store_true", help="with --resume: recompute the tasks whose inputs "
                                                             "(spec values, file contents) changed since they finished")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="replace an [inputs] value of the spec (TOML value), e.g. --set intervals=20")
    add_no_progress(parser)
    args = parser.parse_args(argv)
    if args.force and not args.resume:
        raise BatchSpecError("--force: goes with --resume (it recomputes the tasks whose inputs changed)")
    try:
        spec = load_spec(args.spec, args.set)
        out = out_folder(args.out, create=False) if args.out else Path("trajopt_results") / spec.name
        with hold_output_folder(out):  # over the run and its aggregate
            report = run_batch(spec, out, scheduler=args.scheduler, workers=args.workers, serial=args.serial,
                               resume=args.resume, force=args.force, progress=not args.no_progress)
            written = write_aggregate(spec, out)
    except KeyboardInterrupt:  # before the run's own handler was in place, or a second Ctrl-C
        print("trajopt batch: interrupted", file=sys.stderr)
        return INTERRUPTED
    except OSError as error:  # a disk, permission or file problem outside any task: one line, not a traceback
        where = f" ({error.filename})" if error.filename else ""
        print(f"trajopt batch: error: {error.strerror or error}{where}", file=sys.stderr)
        return 1
    counts = (f"{report.done} done, {report.failed} failed, {report.resumed} resumed, {report.retried} retried"
              f"{f', {report.interrupted} interrupted' if report.interrupted else ''}")
    if report.stopped:
        print(f"trajopt batch {spec.name}: interrupted: {counts}; the manifest is valid, --resume finishes the "
              f"batch; results so far in {out} ({', '.join(p.name for p in written)})")
        return INTERRUPTED
    print(f"trajopt batch {spec.name}: {counts}; {report.wall_seconds:.1f} s on {report.workers} {report.mode} "
          f"worker(s); results in {out} ({', '.join(p.name for p in written)})")
    _print_failures(spec.name, report.records, out)
    return 0 if report.failed == 0 else 1


SHOWN_FAILURES = 5


def _print_failures(name: str, records: list[dict], out: Path) -> None:
    """Why the tasks that failed in this run failed (their last attempt), one line each on stderr, so a bad input
    file is named on the terminal, not only in the manifest."""
    last = {record["key"]: record for record in records}
    failed = [record for record in last.values() if record["status"] == "failed"]
    for record in failed[:SHOWN_FAILURES]:
        print(f"trajopt batch {name}: error: task '{record['label']}' failed ({record['failure'] or 'exception'}): "
              f"{(record['error'] or 'no reason recorded').splitlines()[0]}", file=sys.stderr)
    if len(failed) > SHOWN_FAILURES:
        print(f"trajopt batch {name}: {len(failed) - SHOWN_FAILURES} more failed task(s): see {out / 'manifest.jsonl'}",
              file=sys.stderr)
