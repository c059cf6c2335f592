"""The ``sleep`` task: a trivial task for tests and cluster checks, with failures on demand.

It squares ``value`` after sleeping ``seconds``; it raises on attempts <= ``raise_until_attempt``, kills its own
worker process (``os._exit``, as a crash or an out-of-memory kill would) on attempts <= ``exit_until_attempt``,
or while the file ``exit_while_file`` exists, and reports a non-converged solve with ``solver_failure`` (or for
``solver_failure_value`` on its first attempt). It reads its ``data`` file, when given, after sleeping. Its
"solution" file holds the value and, along a warm-started sweep, the value its guess came from.
"""

from __future__ import annotations

import json
import os
import time

from trajopt.edge.batch.tasks import TaskContext, TaskOutput


def run(inputs: dict, context: TaskContext) -> TaskOutput:
    time.sleep(inputs["seconds"])
    if context.attempt <= inputs["exit_until_attempt"] or (inputs["exit_while_file"] and
                                                           os.path.exists(inputs["exit_while_file"])):
        os._exit(17)
    if context.attempt <= inputs["raise_until_attempt"]:
        raise RuntimeError(f"sleep task: asked to fail on attempt {context.attempt}")
    guess_value = None
    if context.guess is not None:
        guess_value = float(context.guess.column("value")[0])
    value = inputs["value"]
    solution = f"version=1\nnRows=2\nnColumns=2\ninDegrees=no\nendheader\ntime\tvalue\n0\t{value!r}\n1\t{value!r}\n"
    summary = {"square": value * value, "guess_value": guess_value, "pid": os.getpid()}
    if inputs["data"]:
        with open(inputs["data"], "rb") as stream:
            summary["data_bytes"] = len(stream.read())
    files = {"solution.sto": solution.encode(), "summary.json": json.dumps(summary).encode()}
    if inputs["solver_failure"] or (value == inputs["solver_failure_value"] and context.attempt == 1):
        return TaskOutput(False, "Maximum_Iterations_Exceeded", summary, files, "solution.sto",
                          error="asked to report a failed solve", failure="solver")
    return TaskOutput(True, "Solve_Succeeded", summary, files, "solution.sto")
