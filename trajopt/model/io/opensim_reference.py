"""Run OpenSim tasks in a child process and bring their numbers back.

OpenSim and casadi cannot share a process (OpenSim bundles an incompatible libcasadi), so
trajopt never imports opensim. Tasks live in the ``trajopt_opensim`` package; see its
docstring. Requests and results are dictionaries of numbers, strings and numpy arrays.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


class OpenSimTaskError(RuntimeError):
    """An OpenSim task failed in its child process; the message carries its stderr tail."""


class OpenSimNotInstalledError(OpenSimTaskError):
    """The optional ``opensim`` package is needed and absent (the command line reports it in one line)."""


def opensim_available() -> bool:
    """True when the optional ``opensim`` package is installed (it is not imported here)."""
    return importlib.util.find_spec("opensim") is not None


def run_opensim_task(task: str, request: dict, timeout: float | None = 3600.0) -> dict:
    """Run ``trajopt_opensim.<task>.run(request)`` in a child process and return its result.

    Values in ``request`` may be numbers, strings, paths or arrays; the result maps names to
    numpy arrays (0-d arrays are returned as Python scalars).
    """
    if not opensim_available():
        raise OpenSimNotInstalledError(
            f"OpenSim task '{task}' needs the optional 'opensim' package: pip install 'trajopt[opensim]'"
        )
    with tempfile.TemporaryDirectory(prefix="trajopt_opensim_") as folder:
        request_path = Path(folder) / "request.npz"
        result_path = Path(folder) / "result.npz"
        np.savez(request_path, **{k: np.asarray(str(v) if isinstance(v, Path) else v) for k, v in request.items()})
        env = dict(os.environ)
        # The child must find trajopt_opensim even when trajopt runs from a source tree.
        package_root = str(Path(__file__).resolve().parents[3])
        env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
        completed = subprocess.run(
            [sys.executable, "-m", "trajopt_opensim", task, str(request_path), str(result_path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
        if completed.returncode != 0 or not result_path.exists():
            tail = "\n".join(completed.stderr.strip().splitlines()[-15:])
            raise OpenSimTaskError(f"OpenSim task '{task}' failed (exit {completed.returncode}):\n{tail}")
        with np.load(result_path, allow_pickle=False) as data:
            return {k: (data[k].item() if data[k].ndim == 0 else data[k]) for k in data.files}
