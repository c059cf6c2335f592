"""Fit polynomial paths over a domain from a path sampler, and refit them for a motion that leaves their domain.

A ``PathSampler`` is anything that gives muscle lengths and moment arms at configurations: OpenSim in a child
process (``trajopt.edge.tools.path_sampling.OpenSimPathSampler``) today, CasADi geometric paths with wrapping later.
``fit_domain`` samples a ``PathDomain`` (training and held-out sets) and fits; ``paths_for_motion`` returns the
given paths when the motion stays in their domain and otherwise paths fitted to a band around the motion (as
OpenSim's PolynomialPathFitter), cached in the user cache directory by model, domain and settings. Without a
sampler a motion outside the domain is refused with a ``PathDomainError``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain import PathDomain, PathDomainError
from trajopt.model.paths.domain_pieces import FORMAT as DOMAIN_PIECEWISE_FORMAT
from trajopt.model.paths.domain_pieces import DomainPiecewisePaths
from trajopt.model.paths.domain_cells import FORMAT as DOMAIN_CELLS_FORMAT
from trajopt.model.paths.domain_cells import DomainCellPaths
from trajopt.model.paths.fitting import ACCURATE, StepwiseSettings, fit_paths
from trajopt.model.paths.piecewise import FORMAT as PIECEWISE_FORMAT
from trajopt.model.paths.piecewise import PiecewisePolynomialPaths, path_jumps, split_frames
from trajopt.model.paths.polynomial import FORMAT as POLYNOMIAL_FORMAT
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.samples import PathSamples

# Refits for a motion: OpenSim PolynomialPathFitter's tolerances (0.1 mm length and moment-arm RMS).
MOTION_REFIT = replace(ACCURATE, length_tolerance=1e-4, moment_arm_tolerance=1e-4)

LOADERS = {POLYNOMIAL_FORMAT: PolynomialPaths.load, PIECEWISE_FORMAT: PiecewisePolynomialPaths.load,
           DOMAIN_PIECEWISE_FORMAT: DomainPiecewisePaths.load, DOMAIN_CELLS_FORMAT: DomainCellPaths.load}


def load_paths(file):
    """Polynomial, piecewise (along a motion), domain-piecewise or cell-tree polynomial paths, by the file's
    ``format``."""
    try:
        kind = json.loads(Path(file).read_text()).get("format")
    except (OSError, ValueError, AttributeError) as error:
        raise TrajoptInputError(f"{file}: cannot read muscle paths ({error})") from None
    if kind not in LOADERS:
        raise TrajoptInputError(f"{file}: unknown muscle-paths format {kind!r} (known: {', '.join(LOADERS)})")
    return LOADERS[kind](file)


def meets_targets(paths, plan: SamplingPlan) -> bool:
    """Every path's held-out length and moment-arm RMS within the plan's targets."""
    return all(p.report is not None and p.report.heldout_length_rmse <= plan.length_target
               and p.report.heldout_moment_arm_rmse <= plan.moment_arm_target for p in paths)


class PathSampler(Protocol):
    """What fitting needs from a source of muscle paths."""

    @property
    def identity(self) -> str:
        """Identifies the model and its paths (e.g. a hash of the model file), for caches."""

    @property
    def coordinates(self) -> tuple[str, ...]:
        """The independent coordinates some muscle crosses (the default domain's coordinates)."""

    def coordinate_ranges(self, coordinates) -> np.ndarray:
        """The model's range of each coordinate (coordinates x 2)."""

    def is_rotational(self, coordinate: str) -> bool: ...

    def sample(self, coordinates, configurations: np.ndarray, muscles=None) -> PathSamples:
        """Lengths and moment arms (-∂l/∂q) of the muscles at each configuration (rows, over ``coordinates``)."""


def user_cache_dir() -> Path:
    """``$TRAJOPT_CACHE_DIR``, else ``$XDG_CACHE_HOME/trajopt``, else ``~/.cache/trajopt``."""
    if os.environ.get("TRAJOPT_CACHE_DIR"):
        return Path(os.environ["TRAJOPT_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "trajopt"


@dataclass(frozen=True)
class SamplingPlan:
    """How many configurations to draw: per motion frame (band domains, OpenSim's default 25) or in all
    (box domains); held-out samples are a fifth of the training ones, from another seed."""

    samples_per_frame: int = 25
    box_samples: int = 3000
    max_samples: int = 6000
    heldout_fraction: float = 0.2
    seed: int = 0
    length_target: float = 0.5e-3  # held-out RMS a motion refit must reach, else it is fitted piecewise
    moment_arm_target: float = 1e-3
    piece_span_degrees: float = 15.0  # a piece's frames stay within this of its first frame
    cut_at_jumps: bool = False  # pieces next to a path jump sample only their side of it (jump_normals; mixed results)

    def count(self, domain: PathDomain) -> int:
        if domain.is_band:
            return int(min(self.max_samples, max(500, self.samples_per_frame * len(domain.frames))))
        return self.box_samples


def fit_domain(sampler: PathSampler, domain: PathDomain, settings: StepwiseSettings = ACCURATE,
               plan: SamplingPlan = SamplingPlan(), model: str = "", muscles=None,
               progress=print, keep=None) -> tuple[PolynomialPaths, PathSamples, PathSamples, dict]:
    """Sample ``domain`` (training and held-out sets) and fit every muscle; the paths carry the domain.
    ``keep`` (configurations -> mask) drops drawn configurations (e.g. beyond a path jump).
    Returns the paths, both sample sets and the fitting time per muscle (s)."""
    count = plan.count(domain)

    def draw(number, seed):
        if keep is None:
            return domain.sample(number, seed)
        configurations = domain.sample(3 * number, seed)
        return configurations[keep(configurations)][:number]

    train = sampler.sample(domain.coordinates, draw(count, plan.seed), muscles)
    heldout = sampler.sample(domain.coordinates, draw(max(50, int(plan.heldout_fraction * count)), plan.seed + 1),
                             muscles)
    low, high = (train.q.min(axis=0), train.q.max(axis=0))
    ranges = {c: (min(low[i], domain.ranges[i, 0]), max(high[i], domain.ranges[i, 1]))
              for i, c in enumerate(domain.coordinates)}
    if domain.is_band:  # the box of the band, as sampled
        lower, upper = domain.ranges.T
        box_low, box_high = np.maximum(domain.frames.min(axis=0) - domain.band[:, 0], lower), \
            np.minimum(domain.frames.max(axis=0) + domain.band[:, 1], upper)
        ranges = {c: (box_low[i], box_high[i]) for i, c in enumerate(domain.coordinates)}
    paths, seconds = fit_paths(train, settings, heldout, model=model, progress=progress, ranges=ranges)
    return PolynomialPaths(list(paths), model, domain), train, heldout, seconds


def motion_domain(sampler: PathSampler, coordinates, frames: np.ndarray, band_degrees: float = 10.0,
                  band_metres: float = 0.02, source: str = "motion") -> PathDomain:
    """A band of ±``band_degrees`` (rotational) or ±``band_metres`` (translational) around each frame, clipped
    to the model's coordinate ranges (outside them wrapping can switch sides, as arm26's BRA below 0 deg of
    elbow flexion); a frame outside the model's ranges is refused (``PathDomainError``)."""
    band = np.array([np.deg2rad(band_degrees) if sampler.is_rotational(c) else band_metres for c in coordinates])
    frames = np.atleast_2d(np.asarray(frames, dtype=float))
    ranges = sampler.coordinate_ranges(coordinates)
    PathDomain.box(coordinates, ranges, "the model's coordinate ranges").check(frames, where=source)
    return PathDomain.around_motion(tuple(coordinates), frames, band, ranges, source)


def jump_normals(sampler: PathSampler, coordinates, frames: np.ndarray, jumps, muscles=None,
                 step: float = np.radians(2.0), threshold: float = 3e-4) -> dict:
    """Jump index k -> normal of the surface where a path jumps between frames k and k+1: probing ±``step``
    along each coordinate axis from the midpoint, the axes along which some length jumps (|Δl + r̄·Δq| >
    ``threshold``), signed along the motion; the motion step when no axis shows it."""
    if not jumps:
        return {}
    k = len(coordinates)
    probes = []
    for jump in jumps:
        mid = 0.5 * (frames[jump] + frames[jump + 1])
        for j in range(k):
            for sign in (-1.0, 1.0):
                point = mid.copy()
                point[j] += sign * step
                probes.append(point)
    samples = sampler.sample(coordinates, np.array(probes), muscles)
    lengths = samples.lengths.reshape(len(jumps), k, 2, -1)
    arms = samples.moment_arms.reshape(len(jumps), k, 2, lengths.shape[-1], k)
    normals = {}
    for i, jump in enumerate(jumps):
        motion = frames[jump + 1] - frames[jump]
        normal = np.zeros(k)
        for j in range(k):
            mean_arm = 0.5 * (arms[i, j, 0, :, j] + arms[i, j, 1, :, j])
            mismatch = np.abs(lengths[i, j, 1] - lengths[i, j, 0] + mean_arm * 2 * step)
            if np.nanmax(mismatch) > threshold:
                normal[j] = np.sign(motion[j]) or 1.0
        normals[jump] = normal if normal.any() else motion
    return normals


def _same_side(frames: np.ndarray, rows: np.ndarray, normals: dict):
    """Configurations -> mask: on this piece's side of the planes through the midpoints of the jumps that bound
    it (normals from ``jump_normals``); None when no jump bounds it."""
    planes = []
    if rows[0] - 1 in normals:
        planes.append((0.5 * (frames[rows[0] - 1] + frames[rows[0]]), normals[rows[0] - 1]))
    if rows[-1] in normals and rows[-1] + 1 < len(frames):
        planes.append((0.5 * (frames[rows[-1]] + frames[rows[-1] + 1]), -normals[rows[-1]]))
    if not planes:
        return None
    return lambda x: np.all([(x - mid) @ normal >= 0 for mid, normal in planes], axis=0)


def settings_key(settings: StepwiseSettings, plan: SamplingPlan) -> str:
    return hashlib.sha256(f"{settings!r}{plan!r}".encode()).hexdigest()[:12]


def paths_for_motion(paths: PolynomialPaths, q: np.ndarray, coordinates, times=None, where: str = "motion",
                     sampler: PathSampler | None = None, settings: StepwiseSettings = MOTION_REFIT,
                     plan: SamplingPlan = SamplingPlan(), band_degrees: float = 10.0, cache_dir=None,
                     progress=print):
    """``paths`` when every row of ``q`` (frames x ``coordinates``) is in their domain; otherwise, with a
    ``sampler``, paths fitted to a ±``band_degrees`` band around the motion's frames (piecewise along the
    motion when one polynomial misses the plan's held-out targets; cached under
    ``cache_dir``, default ``user_cache_dir()/paths``, by sampler identity, domain and settings); without one
    the ``PathDomainError`` naming coordinate, frame and value."""
    coordinates = tuple(coordinates)
    try:
        paths.check_domain(q, coordinates, times, where)
        return paths
    except PathDomainError as error:
        if sampler is None:
            raise PathDomainError(f"{error}. No path sampler to refit the paths for this motion (install opensim, "
                                  "or refit with 'trajopt fit-paths MODEL --motion MOTION')") from None
        if progress is not None:
            progress(f"{error}: refitting the muscle paths for this motion")
    names = paths.domain.coordinates
    missing = [c for c in names if c not in coordinates]
    if missing:
        raise TrajoptInputError(f"{where}: no values for the paths' coordinates {missing}")
    frames = np.atleast_2d(np.asarray(q, dtype=float))[:, [coordinates.index(c) for c in names]]
    PathDomain.box(names, sampler.coordinate_ranges(names), "the model's coordinate ranges").check(frames, None, times,
                                                                                                     where)
    domain = motion_domain(sampler, names, frames, band_degrees, source=f"±{band_degrees:g} deg around {where}")
    folder = Path(cache_dir) if cache_dir is not None else user_cache_dir() / "paths"
    key = hashlib.sha256(f"{sampler.identity}|{domain.key()}|{settings_key(settings, plan)}".encode()).hexdigest()[:20]
    file = folder / f"{Path(paths.model or 'model').stem}-{key}.json"
    if file.is_file():
        cached = load_paths(file)
        if progress is not None:
            progress(f"using cached paths {file}")
        return cached
    fitted, *_ = fit_domain(sampler, domain, settings, plan, paths.model, paths.muscles, progress)
    if not meets_targets(fitted, plan):
        span = np.array([np.deg2rad(plan.piece_span_degrees) if sampler.is_rotational(c) else 0.05 for c in names])
        jumps = path_jumps(sampler.sample(names, frames, paths.muscles))
        pieces = split_frames(frames, span, jumps)
        normals = jump_normals(sampler, names, frames, jumps, paths.muscles) if plan.cut_at_jumps else {}
        if progress is not None:
            progress(f"one polynomial per muscle misses the held-out targets ({plan.length_target * 1e3:g} mm "
                     f"length, {plan.moment_arm_target * 1e3:g} mm moment arm): fitting {len(pieces)} pieces"
                     + (f", split where a path jumps (after frames {jumps})" if jumps else ""))
        fitted = PiecewisePolynomialPaths(
            [fit_domain(sampler, motion_domain(sampler, names, frames[rows], band_degrees,
                                               source=f"±{band_degrees:g} deg around frames {rows[0]}-{rows[-1]} "
                                                      f"of {where}"),
                        settings, plan, paths.model, paths.muscles, progress,
                        _same_side(frames, rows, normals))[0]
             for rows in pieces], paths.model)
    fitted.check_domain(q, coordinates, times, where)
    fitted.save(file)
    if progress is not None:
        worst = max(fitted, key=lambda p: p.report.heldout_moment_arm_rmse)
        progress(f"wrote {file} ({len(fitted)} muscles; worst held-out moment-arm RMS "
                 f"{worst.report.heldout_moment_arm_rmse * 1e3:.3f} mm, {worst.muscle})")
    return fitted
