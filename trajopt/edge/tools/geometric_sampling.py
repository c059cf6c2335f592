"""Sampling a model's own geometric paths (wrapping as OpenSim computes it) for path fitting, without OpenSim.

`describe_geometric` and `sample_geometric_paths` mirror `trajopt.model.paths.sampling.describe_model` and
`sample_paths` (which ask OpenSim): same `ModelPaths` and `PathSamples`. The lengths are OpenSim's (to
1e-14 m where trajopt models the wrap surfaces, see tests/test_wrapping.py); the moment arms are
-dl/dq of these lengths (CasADi AD), the derivative a length fit should match, where OpenSim's sampler
returns computeMomentArm. Dependent coordinates of CoordinateCouplerConstraints follow their
independent coordinate, and the moment arms about it include the coupling. A muscle whose wrap objects
the geometric path ignores is refused: its straight-line length would be fitted silently.
"""

from __future__ import annotations

import time
import warnings
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.osim import OsimIgnoredWarning
from trajopt.model.paths.geometric import GeometricPathWarning, geometric_path
from trajopt.model.paths.samples import ModelFileSampler, ModelPaths, PathSamples

# Seconds between progress lines while sampling (chunks are sized to take about this long).
PROGRESS_SECONDS = 5.0


def _load(model_file):
    model_file = Path(model_file)
    if not model_file.is_file():
        raise TrajoptInputError(f"{model_file}: model file not found")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        return load_processed(model_file)


def describe_geometric(model_file) -> ModelPaths:
    """Coordinates and muscles of an .osim file, read by trajopt."""
    osim, couplings = _load(model_file)
    model = osim.multibody
    if not osim.muscles:
        raise TrajoptInputError(f"{model_file}: the model has no muscles: no paths to sample")
    if model.nq != len(model.coordinate_names) or model.nq != len(model.coordinates):
        raise TrajoptInputError(f"{model_file}: geometric sampling needs scalar coordinates (the model has "
                                f"ball or free joints); sample it with OpenSim")
    q = ca.SX.sym("q", model.nq)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeometricPathWarning)
        lengths = ca.vertcat(*[geometric_path(osim, m.name, wrapping=False).length(q) for m in osim.muscles])
    # A coordinate is on a muscle's chain when its straight-line length changes with it (5 random configurations).
    ranges = np.array([c.range for c in model.coordinates], dtype=float)
    ranges = np.where(np.isfinite(ranges), ranges, np.array([-1.0, 1.0]))
    samples = ranges[:, 0] + (ranges[:, 1] - ranges[:, 0]) * np.random.default_rng(0).random((5, model.nq))
    gradient = ca.Function("gradient", [q], [ca.jacobian(lengths, q)]).map(5)(samples.T)
    chain = (np.abs(np.asarray(gradient)).reshape(len(osim.muscles), 5, model.nq) > 1e-9).any(axis=1)
    return ModelPaths(
        str(model_file), tuple(model.coordinate_names),
        np.array([c.range for c in model.coordinates], dtype=float),
        np.array([c.locked for c in model.coordinates], dtype=bool),
        np.array([c.rotational for c in model.coordinates], dtype=bool),
        tuple(m.name for m in osim.muscles), np.array(chain, dtype=bool).reshape(len(osim.muscles), model.nq),
        np.array([bool(m.path.wraps) for m in osim.muscles]), tuple(c.dependent for c in couplings))


def sample_geometric_paths(model_file, coordinates, configurations: np.ndarray, muscles=None, batch: int = 100,
                           progress=print, info: ModelPaths | None = None) -> PathSamples:
    """Lengths and moment arms -dl/dq of ``muscles`` (default all) of the model's geometric paths at each row of
    ``configurations`` (samples x ``coordinates``); other coordinates stay at their defaults."""
    osim, couplings = _load(model_file)
    info = info or describe_geometric(model_file)
    model = osim.multibody
    coordinates = tuple(coordinates)
    configurations = np.atleast_2d(np.asarray(configurations, dtype=float))
    if configurations.shape[1] != len(coordinates):
        raise TrajoptInputError(f"{model_file}: configurations have {configurations.shape[1]} columns for "
                                f"{len(coordinates)} coordinates")
    unknown = [c for c in coordinates if c not in model.coordinate_names]
    if unknown:
        raise TrajoptInputError(f"{model_file}: no coordinates {unknown}")
    dependent = [c for c in coordinates if c in info.coupled_dependent]
    if dependent:
        raise TrajoptInputError(f"{model_file}: {dependent} follow coupler constraints; give independent coordinates")
    muscles = tuple(muscles or info.muscles)
    sampled = ca.SX.sym("q", len(coordinates))
    entries = [ca.SX(v) for v in model.default_q()]
    for k, name in enumerate(coordinates):
        entries[model.coordinate_index(name)] = sampled[k]
    for coupling in couplings:
        entries[model.coordinate_index(coupling.dependent)] = coupling.value(entries[model.coordinate_index(
            coupling.independent)])
    q = ca.vertcat(*entries)
    lengths = []
    for name in muscles:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", GeometricPathWarning)
            path = geometric_path(osim, name)
        if caught and path.wraps == () and osim.muscle(name).path.wraps:
            raise TrajoptInputError(f"{model_file}: muscle '{name}': {caught[0].message}; sample it with OpenSim "
                                    f"or leave it out (--muscles)")
        lengths.append(path.length(q))
    lengths = ca.vertcat(*lengths)
    function = ca.Function("sample", [sampled], [lengths, -ca.jacobian(lengths, sampled)])
    start = time.perf_counter()
    total = configurations.shape[0]
    all_lengths, all_arms = [], []
    mapped = {}
    first, size = 0, min(batch, 10)  # a small first chunk measures the rate; then chunks of about 5 s each
    while first < total:
        chunk = configurations[first:first + size]
        began = time.perf_counter()
        if len(chunk) not in mapped:
            mapped[len(chunk)] = function.map(len(chunk))
        values, arms = mapped[len(chunk)](chunk.T)
        all_lengths.append(np.asarray(values).T)
        arms = np.asarray(arms)  # map stacks each sample's (muscles x coordinates) block side by side
        all_arms.append(np.stack([arms[:, s * len(coordinates):(s + 1) * len(coordinates)]
                                  for s in range(len(chunk))]))
        first += len(chunk)
        per_sample = (time.perf_counter() - began) / len(chunk)
        size = int(np.clip(PROGRESS_SECONDS / max(per_sample, 1e-9), 1, batch))
        if progress is not None:
            elapsed = time.perf_counter() - start
            left = "" if first == total else f", about {elapsed / first * (total - first):.0f} s left"
            progress(f"sampled {first}/{total} configurations of {Path(model_file).name} "
                     f"(geometric paths, {elapsed:.1f} s{left})")
    crosses = {m: tuple(c for c in info.crosses(m) if c in coordinates) for m in muscles}
    return PathSamples(coordinates, muscles, configurations, np.vstack(all_lengths), np.concatenate(all_arms),
                       crosses)


class GeometricPathSampler(ModelFileSampler):
    """``trajopt.model.paths.refit.PathSampler`` backed by the model's geometric paths in trajopt (no OpenSim)."""

    source = "geometric"

    def __init__(self, model_file, progress=print):
        super().__init__(model_file, describe_geometric(Path(model_file).resolve()), progress)

    def sample(self, coordinates, configurations, muscles=None) -> PathSamples:
        return sample_geometric_paths(self.model_file, coordinates, configurations, muscles, progress=self.progress,
                                      info=self.info)
