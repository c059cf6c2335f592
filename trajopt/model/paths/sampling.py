"""Configurations to sample muscle paths at: full grid, Latin hypercube, motion + noise.

The OpenSim sampler (lengths and moment arms computed by OpenSim in a child process) is
``trajopt.edge.tools.path_sampling``.
"""

from __future__ import annotations

import numpy as np

from trajopt.model.paths.domain import latin_hypercube  # noqa: F401  (configurations to sample at)


def grid_configurations(ranges, points: int) -> np.ndarray:
    """Full grid with ``points`` values per coordinate (points^coordinates x coordinates)."""
    axes = [np.linspace(lower, upper, points) for lower, upper in np.asarray(ranges, dtype=float)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))


def motion_with_noise(motion: np.ndarray, samples: int, noise: float | np.ndarray, rng=0) -> np.ndarray:
    """``samples`` frames drawn from ``motion`` (frames x coordinates) with Gaussian noise (std ``noise``)."""
    rng = np.random.default_rng(rng)
    motion = np.atleast_2d(np.asarray(motion, dtype=float))
    frames = rng.integers(0, motion.shape[0], samples)
    return motion[frames] + rng.normal(0.0, 1.0, (samples, motion.shape[1])) * np.asarray(noise, dtype=float)
