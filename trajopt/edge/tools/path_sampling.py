"""The OpenSim path sampler: what a model's muscles cross (``describe_model``) and their lengths and moment arms
at given configurations (``sample_paths``), computed by OpenSim in a child process (task
``trajopt_opensim.sample_paths``); configurations go in batches with a progress line per batch.
Configurations to sample at: ``trajopt.model.paths.sampling``.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.io.motion import motion_in_radians
from trajopt.model.io.motion_units import CheckedMotion, check_finite, read_checked_motion
from trajopt.model.io.opensim_reference import run_opensim_task
from trajopt.model.io.tables import read_table
from trajopt.model.paths.samples import ModelFileSampler, ModelPaths, PathSamples


def describe_model(model_file) -> ModelPaths:
    """Coordinates and muscles of an .osim file (read by OpenSim in a child process)."""
    model_file = Path(model_file)
    if not model_file.is_file():
        raise TrajoptInputError(f"{model_file}: model file not found")
    info = run_opensim_task("sample_paths", {"model": str(model_file.resolve())})
    return ModelPaths(
        str(model_file),
        tuple(str(c) for c in np.atleast_1d(info["coordinate_names"])),
        np.atleast_2d(info["coordinate_ranges"]),
        np.atleast_1d(info["coordinate_locked"]).astype(bool),
        np.atleast_1d(info["coordinate_rotational"]).astype(bool),
        tuple(str(m) for m in np.atleast_1d(info["muscle_names"])),
        np.atleast_2d(info["muscle_chain"]).astype(bool),
        np.atleast_1d(info["muscle_wrapped"]).astype(bool),
        tuple(str(c) for c in np.atleast_1d(info["coupled_dependent"])),
    )


def read_checked_coordinates(file, info: ModelPaths | None = None) -> CheckedMotion:
    """A motion file read as ``trajopt.model.io`` reads coordinates (degrees when the header says ``inDegrees=yes`` or a
    .mot has no version line, as OpenSim), in radians, with non-finite values and implausible angles refused
    against ``info``'s rotational coordinate ranges (``trajopt.model.io.motion_units``; unchecked without ``info``)."""
    ranges = {} if info is None else {c: (float(r[0]), float(r[1]))
                                      for c, r, rotational in zip(info.coordinates, info.ranges, info.rotational)
                                      if rotational}
    return read_checked_motion(file, ranges)


def motion_coordinates(file, coordinates, info: ModelPaths | None = None) -> np.ndarray:
    """Columns ``coordinates`` of an OpenSim .mot/.sto file (frames x coordinates), angles in radians
    (``read_checked_coordinates``; without ``info`` every column is taken as an angle)."""
    if info is None:
        raw = read_table(file)
        check_finite(raw)
        return motion_in_radians(raw, coordinates).select(coordinates).data
    return read_checked_coordinates(file, info).table.select(coordinates).data


def sample_paths(
    model_file,
    coordinates,
    configurations: np.ndarray,
    muscles=None,
    batch: int = 1000,
    progress=print,
    info: ModelPaths | None = None,
    chain_only: bool = False,
) -> PathSamples:
    """Lengths and moment arms (OpenSim ``computeMomentArm``) of ``muscles`` (default all) at each row of
    ``configurations`` (samples x ``coordinates``); all other coordinates stay at their defaults."""
    model_file = Path(model_file).resolve()
    info = info or describe_model(model_file)
    coordinates = tuple(coordinates)
    configurations = np.atleast_2d(np.asarray(configurations, dtype=float))
    if configurations.shape[1] != len(coordinates):
        raise TrajoptInputError(
            f"{model_file}: configurations have {configurations.shape[1]} columns for {len(coordinates)} coordinates"
        )
    dependent = [c for c in coordinates if c in info.coupled_dependent]
    if dependent:
        raise TrajoptInputError(f"{model_file}: {dependent} follow coupler constraints; give independent coordinates")
    muscles = tuple(muscles or info.muscles)
    lengths, arms = [], []
    start = time.perf_counter()
    total = configurations.shape[0]
    for first in range(0, total, batch):
        chunk = configurations[first : first + batch]
        result = run_opensim_task(
            "sample_paths",
            {
                "model": str(model_file),
                "coordinates": np.array(coordinates),
                "configurations": chunk,
                "muscles": np.array(muscles),
                "batch": len(chunk),
                "chain_only": chain_only,
            },
        )
        lengths.append(np.atleast_2d(result["lengths"]))
        arms.append(np.asarray(result["moment_arms"]).reshape(len(chunk), len(muscles), len(coordinates)))
        if progress is not None:
            done = first + len(chunk)
            progress(f"sampled {done}/{total} configurations of {model_file.name} "
                     f"({time.perf_counter() - start:.1f} s)")
    crosses = {m: tuple(c for c in info.crosses(m) if c in coordinates) for m in muscles}
    return PathSamples(coordinates, muscles, configurations, np.vstack(lengths), np.concatenate(arms), crosses)


class OpenSimPathSampler(ModelFileSampler):
    """``trajopt.model.paths.refit.PathSampler`` backed by OpenSim (child process) on an .osim file."""

    source = "opensim"

    def __init__(self, model_file, progress=print, chain_only: bool = False):
        super().__init__(model_file, describe_model(Path(model_file).resolve()), progress)
        self.chain_only = chain_only  # moment arms only about body-chain coordinates (faster; 0 elsewhere)

    def sample(self, coordinates, configurations, muscles=None) -> PathSamples:
        return sample_paths(self.model_file, coordinates, configurations, muscles, progress=self.progress,
                            info=self.info, chain_only=self.chain_only)
