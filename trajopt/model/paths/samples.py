"""Training data for polynomial paths: configurations with muscle lengths and moment arms, and its CSV form.

CSV layout (the one OpenSim-side exports use, e.g. the DAS3 serratus reference): one row per configuration,
a column per coordinate, then ``<muscle>_length`` and ``<muscle>_ma_<coordinate>`` columns. Lines starting
with ``#`` are comments; ``# crosses <muscle>: <coordinate> ...`` records the coordinates on the body chain
between a muscle's origin and insertion. ``.csv.gz`` files are read and written compressed.
"""

from __future__ import annotations

import gzip
import hashlib
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from trajopt.errors import MotionFileError, TrajoptInputError


@dataclass(frozen=True)
class PathSamples:
    """Configurations ``q`` (samples x coordinates, radians/metres), ``lengths`` (samples x muscles, m) and
    ``moment_arms`` (samples x muscles x coordinates, m, OpenSim sign -∂l/∂q)."""

    coordinates: tuple[str, ...]
    muscles: tuple[str, ...]
    q: np.ndarray
    lengths: np.ndarray
    moment_arms: np.ndarray
    crosses: dict = field(default_factory=dict)  # muscle -> coordinates on its body chain (when known)

    def __post_init__(self):
        n, k, m = self.q.shape[0], len(self.coordinates), len(self.muscles)
        if self.q.shape != (n, k) or self.lengths.shape != (n, m) or self.moment_arms.shape != (n, m, k):
            raise TrajoptInputError(
                f"path samples: shapes q {self.q.shape}, lengths {self.lengths.shape}, moment_arms "
                f"{self.moment_arms.shape} do not match {n} samples, {m} muscles, {k} coordinates"
            )

    @property
    def size(self) -> int:
        return self.q.shape[0]

    def muscle(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """Lengths (samples,) and moment arms (samples x coordinates) of one muscle."""
        if name not in self.muscles:
            raise TrajoptInputError(f"path samples have no muscle '{name}' (have {', '.join(self.muscles)})")
        m = self.muscles.index(name)
        return self.lengths[:, m], self.moment_arms[:, m, :]

    def columns(self, names) -> np.ndarray:
        """Indices of coordinate ``names`` in ``coordinates``."""
        missing = [c for c in names if c not in self.coordinates]
        if missing:
            raise TrajoptInputError(f"path samples have no coordinates {missing} (have {', '.join(self.coordinates)})")
        return np.array([self.coordinates.index(c) for c in names], dtype=int)

    def subset(self, rows) -> PathSamples:
        rows = np.asarray(rows)
        return PathSamples(
            self.coordinates, self.muscles, self.q[rows], self.lengths[rows], self.moment_arms[rows], dict(self.crosses)
        )

    def stacked(self, other: PathSamples, muscles) -> PathSamples:
        """These samples' rows, then ``other``'s (same coordinates), for ``muscles`` (both have them)."""
        if other.coordinates != self.coordinates:
            raise TrajoptInputError(f"path samples: cannot stack coordinates {list(other.coordinates)} under "
                                    f"{list(self.coordinates)}")
        rows = [[samples.muscles.index(m) for m in muscles] for samples in (self, other)]
        return PathSamples(self.coordinates, tuple(muscles), np.vstack([self.q, other.q]),
                           np.vstack([self.lengths[:, rows[0]], other.lengths[:, rows[1]]]),
                           np.concatenate([self.moment_arms[:, rows[0]], other.moment_arms[:, rows[1]]]),
                           dict(self.crosses))

    def to_csv(self, file) -> None:
        """Write the samples (``.csv`` or ``.csv.gz``), full precision."""
        header = list(self.coordinates)
        blocks = [self.q]
        for m, muscle in enumerate(self.muscles):
            header.append(f"{muscle}_length")
            header.extend(f"{muscle}_ma_{c}" for c in self.coordinates)
            blocks.append(self.lengths[:, m : m + 1])
            blocks.append(self.moment_arms[:, m, :])
        buffer = io.StringIO()
        for muscle, names in self.crosses.items():
            buffer.write(f"# crosses {muscle}: {' '.join(names)}\n")
        np.savetxt(buffer, np.hstack(blocks), delimiter=",", header=",".join(header), comments="", fmt="%.10g")
        text = buffer.getvalue()
        file = Path(file)
        file.parent.mkdir(parents=True, exist_ok=True)
        if file.name.endswith(".gz"):
            with gzip.open(file, "wt") as stream:
                stream.write(text)
        else:
            file.write_text(text)

    @classmethod
    def from_csv(cls, file, coordinates=None, muscles=None, degrees: bool = False) -> PathSamples:
        """Read samples; ``coordinates``/``muscles`` select columns (default: all), ``degrees`` converts the
        coordinate columns from degrees (as in .mot exports) to radians."""
        file = Path(file)
        try:
            opener = gzip.open if file.name.endswith(".gz") else open
            with opener(file, "rt") as stream:
                lines = stream.read().splitlines()
        except OSError as error:
            raise MotionFileError(f"{file}: cannot read path samples ({error})") from None
        crosses = {}
        body = [line for line in lines if line.strip()]
        while body and body[0].startswith("#"):
            comment = body.pop(0)[1:].strip()
            if comment.startswith("crosses ") and ":" in comment:
                muscle, names = comment[len("crosses ") :].split(":", 1)
                crosses[muscle.strip()] = tuple(names.split())
        if not body:
            raise MotionFileError(f"{file}: no header line")
        header = [name.strip() for name in body[0].split(",")]
        try:
            data = np.loadtxt(body[1:], delimiter=",", ndmin=2)
        except ValueError as error:
            raise MotionFileError(f"{file}: non-numeric data ({error})") from None
        if data.shape[1] != len(header):
            raise MotionFileError(f"{file}: {data.shape[1]} values per row but {len(header)} header names")
        index = {name: i for i, name in enumerate(header)}
        all_muscles = [name[: -len("_length")] for name in header if name.endswith("_length")]
        muscles = tuple(muscles or all_muscles)
        if not muscles:
            raise MotionFileError(f"{file}: no '<muscle>_length' column among {header[:6]}: not path samples")
        if coordinates is None:
            coordinates = [h for h in header if not any(h.startswith(f"{m}_") for m in all_muscles)]
        coordinates = tuple(coordinates)

        def column(name):
            if name not in index:
                raise MotionFileError(f"{file}: missing column '{name}'")
            return data[:, index[name]]

        q = np.column_stack([column(c) for c in coordinates])
        if degrees:
            q = np.deg2rad(q)
        lengths = np.column_stack([column(f"{m}_length") for m in muscles])
        arms = np.stack([np.column_stack([column(f"{m}_ma_{c}") for c in coordinates]) for m in muscles], axis=1)
        crosses = {m: tuple(c for c in names if c in coordinates) for m, names in crosses.items() if m in muscles}
        return cls(coordinates, muscles, q, lengths, arms, crosses)


@dataclass(frozen=True)
class ModelPaths:
    """What the sampler learns about a model: coordinates (ranges, locked, rotational) and muscles (chain, wraps)."""

    model: str
    coordinates: tuple[str, ...]
    ranges: np.ndarray  # coordinates x 2
    locked: np.ndarray
    rotational: np.ndarray
    muscles: tuple[str, ...]
    chain: np.ndarray  # muscles x coordinates, True where the coordinate is on the muscle's body chain
    wrapped: np.ndarray
    coupled_dependent: tuple[str, ...]

    def crosses(self, muscle: str) -> tuple[str, ...]:
        m = self.muscles.index(muscle)
        return tuple(c for c, on in zip(self.coordinates, self.chain[m]) if on)

    def crossed_coordinates(self) -> tuple[str, ...]:
        """Unlocked, independent coordinates that some muscle crosses."""
        used = self.chain.any(axis=0)
        return tuple(
            c
            for c, u, lock in zip(self.coordinates, used, self.locked)
            if u and not lock and c not in self.coupled_dependent
        )

    def range_of(self, names) -> np.ndarray:
        index = {c: i for i, c in enumerate(self.coordinates)}
        missing = [c for c in names if c not in index]
        if missing:
            raise TrajoptInputError(f"{self.model}: no coordinates {missing} (have {', '.join(self.coordinates)})")
        return self.ranges[[index[c] for c in names]]


class ModelFileSampler:
    """The ``trajopt.model.paths.refit.PathSampler`` members that follow from a model file and its ``ModelPaths``;
    a subclass names its ``source`` (part of the cache identity) and implements ``sample``."""

    source = "model"

    def __init__(self, model_file, info: ModelPaths, progress=print):
        self.model_file = Path(model_file).resolve()
        self.info = info
        self.progress = progress

    @property
    def identity(self) -> str:
        digest = hashlib.sha256(self.model_file.read_bytes()).hexdigest()[:16]
        return f"{self.source}:{self.model_file.name}:{digest}"

    @property
    def coordinates(self) -> tuple[str, ...]:
        return self.info.crossed_coordinates()

    def coordinate_ranges(self, coordinates) -> np.ndarray:
        return self.info.range_of(tuple(coordinates)).astype(float)

    def is_rotational(self, coordinate: str) -> bool:
        return bool(self.info.rotational[self.info.coordinates.index(coordinate)])
