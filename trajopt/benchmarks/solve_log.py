"""One timed solve with IPOPT's own counts, shared by the solver benchmarks (``solver-routes``, ``solvers``).

IPOPT writes its output file at file level 6; the factorizations are its "Number of trial factorizations
performed", summed over its linear solves. A mesh-continuation solve writes one file per stage, so both solves are
counted and the coarse stage's factorizations can be weighed as full-mesh equivalents (a factorization's cost is
linear in the mesh).
"""

from __future__ import annotations

import dataclasses
import re
import time
from pathlib import Path

from trajopt.core.ocp import Ipopt, SolverRoute, route_solver

FILE_LEVEL = 6  # IPOPT's file level that prints each linear solve's trial factorizations


def factorizations(log: Path) -> int:
    """IPOPT's trial factorizations, summed over its linear solves, from its output file (file level >= 6)."""
    return sum(int(n) for n in re.findall(r"Number of trial factorizations performed: (\d+)", log.read_text()))


def ipopt_summary(log: Path) -> dict:
    """Iterations, factorizations and exit message of one IPOPT run from its output file (absent: not run)."""
    if not log.exists():
        return {"iterations": 0, "factorizations": 0, "exit": "not run"}
    text = log.read_text()
    iterations = re.findall(r"Number of Iterations\.*: (\d+)", text)
    exit_message = re.findall(r"EXIT: (.*)", text)
    return {"iterations": int(iterations[-1]) if iterations else -1, "factorizations": factorizations(log),
            "exit": exit_message[-1].strip() if exit_message else "unknown"}


def constraint_violation(log: Path) -> float | None:
    """The unscaled constraint violation at IPOPT's last iterate, from its output file (None: not written)."""
    found = re.findall(r"Constraint violation\.*:\s+\S+\s+(\S+)", log.read_text()) if log.exists() else []
    return float(found[-1]) if found else None


def logged(settings: Ipopt, log: Path | None) -> Ipopt:
    """``settings`` writing IPOPT's output file ``log`` at ``FILE_LEVEL`` (None: unchanged)."""
    if log is None:
        return settings
    return dataclasses.replace(settings, options={**settings.options, "output_file": str(log),
                                                  "file_print_level": FILE_LEVEL})


def logged_solver(settings: Ipopt, route: SolverRoute, log: Path | None, coarse_log: Path | None = None,
                  coarse_options: dict | None = None, refinement: dict | None = None):
    """``route_solver`` of ``settings`` writing IPOPT's output file: the requested mesh's to ``log``, mesh
    continuation's coarse stage to ``coarse_log``."""
    coarse = dict(coarse_options or {})
    if coarse_log is not None:
        coarse["output_file"] = str(coarse_log)
    return route_solver(logged(settings, log), route, coarse, refinement)


def timed_solve(solve, log: Path | None = None) -> tuple:
    """(solution, record) of ``solve()`` (building, transcription, NLP construction and IPOPT, all in the clock):
    status, iterations, factorizations (from ``log``; None without), IPOPT, CPU and end-to-end seconds, objective."""
    wall, cpu = time.perf_counter(), time.process_time()
    solution = solve()
    record = {"status": solution.status, "success": solution.success, "iterations": solution.iterations,
              "factorizations": factorizations(log) if log is not None else None,
              "ipopt_s": solution.wall_time, "cpu_s": time.process_time() - cpu,
              "end_to_end_s": time.perf_counter() - wall, "objective": solution.objective}
    return solution, record


def continuation_counts(record: dict, coarse_log: Path, log: Path, intervals: int, coarse_intervals: int) -> dict:
    """``record`` of a mesh-continuation solve with each stage's IPOPT summary, their factorizations summed, and
    the full-mesh equivalents (the coarse stage's weighed by ``coarse_intervals / intervals``)."""
    coarse, fine = ipopt_summary(coarse_log), ipopt_summary(log)
    return {**record, "coarse": {"intervals": coarse_intervals, **coarse}, "fine": fine,
            "factorizations": coarse["factorizations"] + fine["factorizations"],
            "full_mesh_factorizations": fine["factorizations"]
            + coarse["factorizations"] * coarse_intervals / intervals}
