"""Piecewise polynomial paths along a motion: one ``PolynomialPaths`` per stretch of frames.

When one polynomial cannot follow OpenSim's path over a whole motion band (a wrap object that switches, as
arm26's BIClong near 31 deg and TRIlong near 70 deg of shoulder elevation, makes length and moment arm jump),
the motion is cut into pieces whose coordinates move less than a span, and each piece is fitted over the band
around its own frames. A configuration uses the piece owning the frame nearest to it (distance: the largest
coordinate difference in units of the band). The result is discontinuous where the owning piece changes, like
OpenSim's own wrapped path: fine for frame-by-frame analyses (static optimization, muscle analysis), not
smooth enough for gradient-based optimal control across piece boundaries.
"""

from __future__ import annotations

import json
from pathlib import Path

import casadi
import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_report import PathsWithDomain
from trajopt.model.paths.polynomial import PolynomialPath, PolynomialPaths

FORMAT = "trajopt.piecewise_polynomial_paths/1"


def split_frames(frames: np.ndarray, span: np.ndarray, breaks=()) -> list[np.ndarray]:
    """Consecutive frame indices, a new piece whenever a coordinate has moved more than ``span`` (per
    coordinate) from the first frame of the current piece, and after each frame index in ``breaks``."""
    frames = np.atleast_2d(np.asarray(frames, dtype=float))
    breaks = set(int(b) for b in breaks)
    pieces, start = [], 0
    for k in range(1, len(frames)):
        if k - 1 in breaks or np.any(np.abs(frames[k] - frames[start]) > span):
            pieces.append(np.arange(start, k))
            start = k
    pieces.append(np.arange(start, len(frames)))
    return pieces


def path_jumps(samples, threshold: float = 3e-4) -> list[int]:
    """Frame indices k after which some muscle's length jumps: |Δl + ½ (r_k + r_k+1)·Δq| > ``threshold`` (m)
    between consecutive frames (``samples`` at the motion's frames; trapezoidal rule on -∂l/∂q)."""
    dq = np.diff(samples.q, axis=0)
    dl = np.diff(samples.lengths, axis=0)  # frames-1 x muscles
    mean_arms = 0.5 * (samples.moment_arms[1:] + samples.moment_arms[:-1])  # frames-1 x muscles x coordinates
    mismatch = np.abs(dl + np.einsum("fmc,fc->fm", mean_arms, dq))
    return [int(k) for k in np.flatnonzero(np.nanmax(mismatch, axis=1) > threshold)]


class PiecewisePolynomialPaths(PathsWithDomain):
    """Polynomial paths fitted piece by piece along a motion (``trajopt.model.musculoskeletal.MusclePaths``)."""

    def __init__(self, pieces, model: str = ""):
        self.pieces = tuple(pieces)
        if not self.pieces or any(not p.domain.is_band for p in self.pieces):
            raise TrajoptInputError("piecewise paths need at least one piece, each fitted on a motion band")
        first = self.pieces[0]
        for piece in self.pieces[1:]:
            if piece.muscles != first.muscles or piece.domain.coordinates != first.domain.coordinates:
                raise TrajoptInputError("piecewise paths: every piece needs the same muscles and coordinates")
        self.model = model or first.model

    @property
    def muscles(self) -> tuple[str, ...]:
        return self.pieces[0].muscles

    @property
    def coordinates(self) -> tuple[str, ...]:
        """The motion's coordinates, the pieces' variables."""
        return self.pieces[0].domain.coordinates

    def __iter__(self):
        """The paths of the piece with the largest held-out moment-arm error, muscle by muscle (for reports)."""
        for muscle in self.muscles:
            yield max((piece[muscle] for piece in self.pieces),
                      key=lambda p: -1.0 if p.report is None else p.report.heldout_moment_arm_rmse)

    def __len__(self) -> int:
        return len(self.muscles)

    @property
    def domain(self) -> PathDomain:
        """Union of the pieces' bands: every frame with its band."""
        domains = [piece.domain for piece in self.pieces]
        ranges = np.column_stack([np.min([d.ranges[:, 0] for d in domains], axis=0),
                                  np.max([d.ranges[:, 1] for d in domains], axis=0)])
        band = np.max([d.band for d in domains], axis=0)
        frames = np.vstack([d.frames for d in domains])
        return PathDomain(domains[0].coordinates, ranges, frames, band,
                          f"{len(domains)} pieces, {domains[0].source}")

    def check_domain(self, q, coordinates, times=None, where: str = "motion") -> None:
        coordinates = tuple(coordinates)
        values = np.atleast_2d(np.asarray(q, dtype=float))
        inside = np.zeros(len(values), dtype=bool)
        for piece in self.pieces:
            inside |= ~piece.domain.outside(values, coordinates)
        if not inside.all():
            self.domain.check(values, coordinates, times, where)  # names coordinate, frame and value

    def lengths_and_moment_arms_function(self, coordinates: tuple[str, ...]) -> casadi.Function:
        """q -> (lengths, −∂l/∂q) of the piece owning the frame nearest to q."""
        coordinates = tuple(coordinates)
        q = casadi.SX.sym("q", len(coordinates))
        names = self.pieces[0].domain.coordinates
        local = casadi.vertcat(*[q[coordinates.index(c)] for c in names])
        best_distance, lengths = None, None
        for piece in self.pieces:
            domain = piece.domain
            width = np.maximum(domain.band.mean(axis=1), 1e-12)
            distance = None
            for frame in domain.frames:
                d = casadi.mmax(casadi.fabs(local - casadi.DM(frame)) / casadi.DM(width))
                distance = d if distance is None else casadi.fmin(distance, d)
            piece_lengths = piece.lengths_and_moment_arms_function(coordinates)(q)[0]
            if lengths is None:
                best_distance, lengths = distance, piece_lengths
            else:
                closer = distance < best_distance
                lengths = casadi.if_else(closer, piece_lengths, lengths)
                best_distance = casadi.if_else(closer, distance, best_distance)
        arms = -casadi.jacobian(lengths, q)
        return casadi.Function("piecewise_lengths_and_moment_arms", [q], [lengths, arms], ["q"],
                               ["lengths", "moment_arms"])

    def save(self, file) -> None:
        pieces = []
        for piece in self.pieces:
            pieces.append({"domain": piece.domain.to_json(), "paths": [p.to_json() for p in piece]})
        Path(file).parent.mkdir(parents=True, exist_ok=True)
        Path(file).write_text(json.dumps({"format": FORMAT, "model": self.model, "pieces": pieces}) + "\n")

    @classmethod
    def load(cls, file) -> PiecewisePolynomialPaths:
        file = Path(file)
        try:
            data = json.loads(file.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise TrajoptInputError(f"{file}: cannot read piecewise polynomial paths ({error})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise TrajoptInputError(f"{file}: not a piecewise polynomial-paths file (expected format '{FORMAT}')")
        pieces = [PolynomialPaths([PolynomialPath.from_json(p, str(file)) for p in piece["paths"]],
                                  data.get("model", ""), PathDomain.from_json(piece["domain"], str(file)))
                  for piece in data["pieces"]]
        return cls(pieces, data.get("model", ""))
