"""Where polynomial paths are valid: the coordinate domain they were fitted on, stored with them.

A ``PathDomain`` is either a box (each coordinate between a lower and an upper value, by default the model's
coordinate ranges) or a band around a motion, as OpenSim's ``PolynomialPathFitter`` samples: every frame of a
motion with an interval [q - below, q + above] per coordinate (clipped to the model's ranges). Samples are drawn
by Latin hypercube, over the box or per frame in its band. A configuration is inside a band domain when it is
inside the band of at least one frame.

Paths are never evaluated outside their domain with a warning: ``PathDomain.check`` raises a
``PathDomainError`` naming the coordinate, the frame and the value, and ``trajopt.model.paths.refit`` refits paths
for a motion that leaves the domain when a path sampler (OpenSim, geometric paths) is available.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

from trajopt.errors import TrajoptInputError


class PathDomainError(TrajoptInputError):
    """A configuration lies outside the domain muscle paths were fitted on (names coordinate, frame and value)."""


def latin_hypercube(ranges, samples: int, rng: np.random.Generator | int = 0) -> np.ndarray:
    """Latin hypercube: each coordinate's range cut into ``samples`` strata, one point per stratum."""
    rng = np.random.default_rng(rng)
    ranges = np.asarray(ranges, dtype=float).reshape(-1, 2)
    strata = np.column_stack([rng.permutation(samples) for _ in range(len(ranges))])
    unit = (strata + rng.random(strata.shape)) / samples
    return ranges[:, 0] + unit * (ranges[:, 1] - ranges[:, 0])


@dataclass(frozen=True, eq=False)
class PathDomain:
    """Box ``ranges`` (coordinates x 2) over ``coordinates``; with ``frames`` (frames x coordinates) and
    ``band`` (coordinates x 2: offsets below and above each frame, both >= 0) a band around a motion, whose
    ``ranges`` are the model's ranges the band is clipped to. ``source`` says where it came from.

    A domain over no coordinates restricts nothing: ``PathDomain.everywhere`` (paths that hold at every
    configuration, e.g. geometric ones) or ``PathDomain.not_declared`` (``declared`` False: paths whose domain is
    unknown, e.g. OpenSim's function-based paths, which store none; nothing is invented for them)."""

    coordinates: tuple[str, ...]
    ranges: np.ndarray
    frames: np.ndarray | None = None
    band: np.ndarray | None = None
    source: str = ""
    declared: bool = True

    def __post_init__(self):
        k = len(self.coordinates)
        object.__setattr__(self, "ranges", np.asarray(self.ranges, dtype=float).reshape(k, 2))
        if np.any(self.ranges[:, 0] > self.ranges[:, 1]):
            i = int(np.argmax(self.ranges[:, 0] > self.ranges[:, 1]))
            raise TrajoptInputError(f"path domain: coordinate '{self.coordinates[i]}' has lower bound "
                                    f"{self.ranges[i, 0]} above upper bound {self.ranges[i, 1]}")
        if (self.frames is None) != (self.band is None):
            raise TrajoptInputError("path domain: a motion band needs both frames and band offsets")
        if self.frames is not None:
            object.__setattr__(self, "frames", np.asarray(self.frames, dtype=float).reshape(-1, k))
            object.__setattr__(self, "band", np.asarray(self.band, dtype=float).reshape(k, 2))
            if np.any(self.band < 0):
                raise TrajoptInputError(f"path domain: band offsets must be >= 0, got {self.band.tolist()}")

    # -- constructors ------------------------------------------------------------------------
    @classmethod
    def box(cls, coordinates, ranges, source: str = "coordinate ranges") -> PathDomain:
        return cls(tuple(coordinates), np.asarray(ranges, dtype=float), source=source)

    @classmethod
    def everywhere(cls, source: str) -> PathDomain:
        """Paths that hold at every configuration (``source`` says which)."""
        return cls((), np.zeros((0, 2)), source=source)

    @classmethod
    def not_declared(cls, source: str) -> PathDomain:
        """Paths that declare no domain (``source`` says which): nothing can be bounded or checked."""
        return cls((), np.zeros((0, 2)), source=source, declared=False)

    @classmethod
    def around_motion(cls, coordinates, frames, band, ranges, source: str = "motion") -> PathDomain:
        """Band ``band`` (scalar, per coordinate, or coordinates x 2 offsets) around each row of ``frames``,
        clipped to ``ranges`` (the model's coordinate ranges)."""
        k = len(coordinates)
        band = np.abs(np.asarray(band, dtype=float))
        band = np.broadcast_to(band if band.ndim == 2 else band.reshape(-1, 1), (k, 2)).copy()
        return cls(tuple(coordinates), np.asarray(ranges, dtype=float), np.asarray(frames, dtype=float), band, source)

    @property
    def is_band(self) -> bool:
        return self.frames is not None

    # -- membership --------------------------------------------------------------------------
    def columns(self, q, coordinates) -> np.ndarray:
        """The values of this domain's coordinates (rows of ``q`` over ``coordinates``; None: already in its order)."""
        q = np.atleast_2d(np.asarray(q, dtype=float))
        if coordinates is None:
            return q
        coordinates = tuple(coordinates)
        missing = [c for c in self.coordinates if c not in coordinates]
        if missing:
            raise TrajoptInputError(f"path domain: configurations lack coordinates {missing}")
        return q[:, [coordinates.index(c) for c in self.coordinates]]

    def _frame_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        lower = np.maximum(self.frames - self.band[:, 0], self.ranges[:, 0])
        upper = np.minimum(self.frames + self.band[:, 1], self.ranges[:, 1])
        return lower, upper

    def outside(self, q, coordinates=None, margin: float = 1e-9) -> np.ndarray:
        """True for each row of ``q`` (configurations x ``coordinates``, default this domain's) outside."""
        values = self.columns(q, coordinates)
        lower, upper = self.ranges.T
        out = np.any((values < lower - margin) | (values > upper + margin), axis=1)
        if self.is_band:
            low, high = self._frame_boxes()
            inside_any = np.zeros(len(values), dtype=bool)
            for start in range(0, len(values), 256):
                chunk = values[start : start + 256, None, :]
                inside = np.all((chunk >= low - margin) & (chunk <= high + margin), axis=2)
                inside_any[start : start + 256] = inside.any(axis=1)
            out |= ~inside_any
        return out

    def check(self, q, coordinates=None, times=None, where: str = "motion") -> None:
        """Raise ``PathDomainError`` at the first row of ``q`` outside the domain, naming the coordinate,
        the frame (and time) and the value."""
        values = self.columns(q, coordinates)
        outside = np.flatnonzero(self.outside(values))
        if not outside.size:
            return
        frame = int(outside[0])
        value = values[frame]
        when = f"frame {frame}" + ("" if times is None else f" (t = {float(np.asarray(times)[frame]):.6g} s)")
        count = f"{outside.size} of {len(values)} frames are outside"
        lower, upper = self.ranges.T
        beyond = np.flatnonzero((value < lower - 1e-9) | (value > upper + 1e-9))
        if beyond.size:
            j = int(beyond[0])
            raise PathDomainError(
                f"{where}: coordinate '{self.coordinates[j]}' = {value[j]:.6g} at {when} is outside the muscle "
                f"paths' domain [{lower[j]:.6g}, {upper[j]:.6g}] ({self.source}); {count}")
        low, high = self._frame_boxes()
        # the coordinate that is farthest (relative to its band) from the nearest fitted frame
        excess = np.maximum(low - value, value - high) / np.maximum(self.band.sum(axis=1), 1e-12)
        nearest = int(np.argmin(excess.max(axis=1)))
        j = int(np.argmax(excess[nearest]))
        raise PathDomainError(
            f"{where}: coordinate '{self.coordinates[j]}' = {value[j]:.6g} at {when} is outside the band the muscle "
            f"paths were fitted on ({self.source}; nearest fitted frame {nearest} allows "
            f"[{low[nearest, j]:.6g}, {high[nearest, j]:.6g}]); {count}")

    def covers(self, other: PathDomain) -> bool:
        """True when every configuration of ``other`` lies in this domain (exact for boxes; for a band
        ``other``, the corners of each frame's box are checked)."""
        if not set(other.coordinates) <= set(self.coordinates):
            return False
        if other.is_band:
            low, high = other._frame_boxes()
            k = len(other.coordinates)
            corners = np.array(np.meshgrid(*[[0, 1]] * k, indexing="ij")).reshape(k, -1).T
            points = np.concatenate([np.where(c, high, low) for c in corners])
        else:
            k = len(other.coordinates)
            corners = np.array(np.meshgrid(*[[0, 1]] * k, indexing="ij")).reshape(k, -1).T
            points = np.where(corners, other.ranges[:, 1], other.ranges[:, 0])
        if self.is_band and not other.is_band:
            return False
        full = np.tile(self.ranges.mean(axis=1), (len(points), 1))
        for i, c in enumerate(other.coordinates):
            full[:, self.coordinates.index(c)] = points[:, i]
        return not self.outside(full).any()

    def bounds_over(self, coordinates) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) per name of ``coordinates``: the smallest box holding the domain (a band's every frame box)
        for the domain's coordinates, -inf/inf for the others. Inside it is necessary, not sufficient, for a band."""
        lower, upper = self.ranges[:, 0].copy(), self.ranges[:, 1].copy()
        if self.is_band:
            low, high = self._frame_boxes()
            lower, upper = np.maximum(lower, low.min(axis=0)), np.minimum(upper, high.max(axis=0))
        names = tuple(coordinates)
        box_lower, box_upper = np.full(len(names), -np.inf), np.full(len(names), np.inf)
        for j, name in enumerate(self.coordinates):
            if name in names:
                box_lower[names.index(name)], box_upper[names.index(name)] = lower[j], upper[j]
        return box_lower, box_upper

    def excess(self, q, coordinates=None) -> np.ndarray:
        """How far each row of ``q`` lies outside, per coordinate of this domain (rows x coordinates, >= 0, the
        coordinates' units): beyond the box, or for a band beyond the box of the frame nearest to the row."""
        values = self.columns(q, coordinates)
        lower, upper = self.ranges.T
        if not self.is_band:
            return np.maximum(np.maximum(lower - values, values - upper), 0.0)
        low, high = self._frame_boxes()
        result = np.empty_like(values)
        for start in range(0, len(values), 256):
            chunk = values[start : start + 256, None, :]
            per_frame = np.maximum(np.maximum(low - chunk, chunk - high), 0.0)
            nearest = np.argmin(per_frame.max(axis=2), axis=1)
            result[start : start + 256] = per_frame[np.arange(len(chunk)), nearest]
        return result

    # -- sampling ------------------------------------------------------------------------------
    def sample(self, count: int, rng: np.random.Generator | int = 0) -> np.ndarray:
        """``count`` configurations: a Latin hypercube over the box, or per frame (frames used in turn,
        as many per frame as needed) a Latin hypercube in its band, as OpenSim's PolynomialPathFitter."""
        rng = np.random.default_rng(rng)
        if not self.is_band:
            return latin_hypercube(self.ranges, count, rng)
        low, high = self._frame_boxes()
        frames = len(self.frames)
        per_frame = max(1, int(np.ceil(count / frames)))
        order = rng.permutation(frames)
        blocks, total = [], 0
        for f in order:
            take = min(per_frame, count - total)
            if take <= 0:
                break
            blocks.append(latin_hypercube(np.column_stack([low[f], high[f]]), take, rng))
            total += take
        return np.vstack(blocks)

    # -- identity and JSON -------------------------------------------------------------------
    def to_json(self) -> dict:
        data = {"coordinates": list(self.coordinates), "ranges": self.ranges.tolist(), "source": self.source}
        if self.is_band:
            data.update(band=self.band.tolist(), frames=self.frames.tolist())
        return data

    @classmethod
    def from_json(cls, data: dict, where: str = "<dict>") -> PathDomain:
        try:
            frames = data.get("frames")
            return cls(tuple(str(c) for c in data["coordinates"]), np.asarray(data["ranges"], dtype=float),
                       None if frames is None else np.asarray(frames, dtype=float),
                       None if frames is None else np.asarray(data["band"], dtype=float), str(data.get("source", "")))
        except (KeyError, TypeError, ValueError) as error:
            raise TrajoptInputError(f"{where}: 'domain' is malformed ({error})") from None

    def key(self) -> str:
        """A hash of the domain's numbers (coordinates, ranges, band, frames), for caches."""
        text = json.dumps({k: v for k, v in self.to_json().items() if k != "source"}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def describe(self) -> str:
        if not self.coordinates:
            return self.source if self.declared else f"domain not declared ({self.source})"
        if self.is_band:
            return (f"band of {len(self.frames)} frames ({self.source}), "
                    + ", ".join(f"{c} -{b[0]:.3g}/+{b[1]:.3g}" for c, b in zip(self.coordinates, self.band)))
        return f"box ({self.source}): " + ", ".join(f"{c} [{lo:.4g}, {hi:.4g}]" for c, (lo, hi)
                                                     in zip(self.coordinates, self.ranges))
