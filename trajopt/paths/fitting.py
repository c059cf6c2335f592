"""Stepwise polynomial fitting of muscle paths (after van den Bogert et al. 2011 and the DAS3 build tools).

Candidate terms are the monomials of total degree <= N in the coordinates a muscle crosses. Lengths and
moment arms are fitted together by linear least squares: a length row holds the monomials, a moment-arm row
for coordinate j holds -∂monomial/∂q_j (moment arm = -∂l/∂q). Each coordinate's moment-arm rows are scaled by
(largest moment arm of the muscle) / (largest moment arm about that coordinate) so that small moment arms
count as much as large ones. Terms are added one at a time (forward selection), each time the candidate that
lowers the RMS residual most, until the relative improvement drops below a threshold (the term is then not
added) or the RMS falls below a tolerance.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.paths.polynomial import FitReport, PolynomialPath, PolynomialPaths
from trajopt.paths.samples import PathSamples


@dataclass(frozen=True)
class StepwiseSettings:
    """Options of the stepwise fit. Defaults reproduce the DAS3 procedure (5 % rule, max(10 % of the
    largest moment arm, 2 mm) tolerance); the quaternion paper used ``min_relative_improvement=0.04``."""

    degree: int = 4
    min_relative_improvement: float = 0.05
    tolerance: float | None = None  # metres; None: max(tolerance_fraction * largest moment arm, tolerance_floor)
    tolerance_fraction: float = 0.10
    tolerance_floor: float = 0.002
    max_terms: int | None = None
    moment_arm_scale_floor: float = 1e-3  # metres: a coordinate's rows are never scaled up by more than this allows

    def tolerance_for(self, largest_moment_arm: float) -> float:
        if self.tolerance is not None:
            return self.tolerance
        return max(self.tolerance_fraction * largest_moment_arm, self.tolerance_floor)


def monomial_exponents(coordinates: int, degree: int) -> np.ndarray:
    """All exponent rows (terms x coordinates) with total degree <= ``degree``, constant first."""
    rows = [e for total in range(degree + 1) for e in _compositions(total, coordinates)]
    return np.array(rows, dtype=int).reshape(-1, coordinates)


def _compositions(total: int, parts: int):
    if parts == 0:
        if total == 0:
            yield ()
        return
    for cut in itertools.combinations(range(total + parts - 1), parts - 1):
        bounds = (-1, *cut, total + parts - 1)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(parts))


def monomials(q: np.ndarray, exponents: np.ndarray) -> np.ndarray:
    """Value of each monomial at each configuration (samples x terms)."""
    return np.prod(q[:, None, :] ** exponents[None, :, :], axis=2)


def monomial_derivatives(q: np.ndarray, exponents: np.ndarray, j: int) -> np.ndarray:
    """∂monomial/∂q_j at each configuration (samples x terms), without dividing by q_j."""
    lowered = exponents.copy()
    lowered[:, j] = np.maximum(lowered[:, j] - 1, 0)
    return exponents[None, :, j] * monomials(q, lowered)


@dataclass(frozen=True)
class StepwiseResult:
    """Selected exponent rows, their coefficients, the weighted RMS after each step and why it stopped."""

    exponents: np.ndarray
    coefficients: np.ndarray
    rms_history: tuple[float, ...]
    stopped_because: str


def stepwise_fit(q, lengths, moment_arms, settings: StepwiseSettings = StepwiseSettings()) -> StepwiseResult:
    """Forward stepwise least squares of l(q) on monomials, from lengths (n,) and moment arms (n x k)."""
    q = np.asarray(q, dtype=float)
    n, k = q.shape
    candidates = monomial_exponents(k, settings.degree)
    largest = np.max(np.abs(moment_arms), axis=0) if k else np.zeros(0)
    largest_all = float(largest.max()) if k else 0.0
    scale = np.maximum(largest, settings.moment_arm_scale_floor)
    weights = max(largest_all, settings.moment_arm_scale_floor) / scale
    blocks = [monomials(q, candidates)]
    targets = [np.asarray(lengths, dtype=float)]
    for j in range(k):
        blocks.append(-monomial_derivatives(q, candidates, j) * weights[j])
        targets.append(moment_arms[:, j] * weights[j])
    design = np.vstack(blocks)
    target = np.concatenate(targets)
    rows = design.shape[0]
    tolerance = settings.tolerance_for(largest_all)
    max_terms = min(settings.max_terms or len(candidates), len(candidates))

    # Forward selection on an orthogonalized copy: the SSE drop of adding column a is (a⊥·r)²/|a⊥|².
    work = design.copy()
    original_norms = np.sum(design**2, axis=0)
    residual = target.copy()
    selected: list[int] = []
    history: list[float] = []
    rms = np.sqrt(residual @ residual / rows)
    stopped = f"all {max_terms} candidate terms used"
    while len(selected) < max_terms:
        norms = np.sum(work**2, axis=0)
        usable = norms > 1e-12 * np.maximum(original_norms, 1e-300)
        usable[selected] = False
        if not usable.any():
            stopped = "no independent candidate left"
            break
        gains = np.where(usable, (work.T @ residual) ** 2 / np.where(usable, norms, 1.0), -np.inf)
        best = int(np.argmax(gains))
        new_rms = np.sqrt(max(residual @ residual - gains[best], 0.0) / rows)
        if selected and (rms - new_rms) / rms < settings.min_relative_improvement:
            stopped = f"relative improvement {(rms - new_rms) / rms:.3f} < {settings.min_relative_improvement}"
            break
        column = work[:, best] / np.sqrt(norms[best])
        residual -= column * (column @ residual)
        work -= np.outer(column, column @ work)
        selected.append(best)
        rms = np.sqrt(residual @ residual / rows)
        history.append(float(rms))
        if rms <= tolerance:
            stopped = f"RMS {rms * 1000:.3f} mm <= tolerance {tolerance * 1000:.3f} mm"
            break
    coefficients = np.linalg.lstsq(design[:, selected], target, rcond=None)[0] if selected else np.zeros(0)
    return StepwiseResult(candidates[selected], coefficients, tuple(history), stopped)


def path_errors(path: PolynomialPath, q: np.ndarray, lengths: np.ndarray, moment_arms: np.ndarray) -> tuple[float, float]:
    """RMS length error and RMS moment-arm error (over all samples and the path's coordinates), metres."""
    predicted_lengths, predicted_arms = path.evaluate(q)
    length_rmse = float(np.sqrt(np.mean((predicted_lengths - lengths) ** 2)))
    arm_rmse = float(np.sqrt(np.mean((predicted_arms - moment_arms) ** 2))) if moment_arms.size else 0.0
    return length_rmse, arm_rmse


def fit_polynomial_path(
    muscle: str,
    coordinates,
    q: np.ndarray,
    lengths: np.ndarray,
    moment_arms: np.ndarray,
    settings: StepwiseSettings = StepwiseSettings(),
    heldout: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ranges=None,
) -> PolynomialPath:
    """Fit one muscle: q (samples x coordinates), lengths (samples,), moment arms (samples x coordinates);
    ``heldout`` = (q, lengths, moment arms) of other samples to report errors on; ``ranges`` = training box
    (coordinates x 2, default: the samples' extent)."""
    q = np.atleast_2d(np.asarray(q, dtype=float))
    moment_arms = np.asarray(moment_arms, dtype=float).reshape(q.shape[0], -1)
    if q.shape[0] < 2 or moment_arms.shape[1] != q.shape[1] or len(coordinates) != q.shape[1]:
        raise TrajoptInputError(
            f"path '{muscle}': need samples x coordinates data, got q {q.shape}, moment arms {moment_arms.shape}, "
            f"coordinates {list(coordinates)}"
        )
    result = stepwise_fit(q, lengths, moment_arms, settings)
    box = np.column_stack([q.min(axis=0), q.max(axis=0)]) if ranges is None else np.asarray(ranges, dtype=float)
    ranges = tuple((float(a), float(b)) for a, b in box)
    path = PolynomialPath(
        muscle,
        tuple(coordinates),
        tuple(tuple(int(e) for e in row) for row in result.exponents),
        tuple(float(c) for c in result.coefficients),
        ranges,
    )
    length_rmse, arm_rmse = path_errors(path, q, lengths, moment_arms)
    report = dict(
        terms=len(result.coefficients),
        training_samples=q.shape[0],
        length_rmse=length_rmse,
        moment_arm_rmse=arm_rmse,
        stopped_because=result.stopped_because,
    )
    if heldout is not None:
        hq, hl, ha = heldout
        inside = ~path.outside_training_range(hq)
        if inside.any():
            hl_rmse, ha_rmse = path_errors(path, hq[inside], hl[inside], ha[inside])
            report.update(heldout_samples=int(inside.sum()), heldout_length_rmse=hl_rmse, heldout_moment_arm_rmse=ha_rmse)
    return PolynomialPath(path.muscle, path.coordinates, path.exponents, path.coefficients, ranges, FitReport(**report))


def crossed_coordinates(samples: PathSamples, muscle: str, threshold: float = 1e-4) -> tuple[str, ...]:
    """Coordinates on the muscle's body chain (when known) plus those with a sampled |moment arm| > threshold."""
    _, arms = samples.muscle(muscle)
    chain = set(samples.crosses.get(muscle, ()))
    nonzero = {c for j, c in enumerate(samples.coordinates) if np.max(np.abs(arms[:, j])) > threshold}
    return tuple(c for c in samples.coordinates if c in chain | nonzero)


def fit_paths(
    samples: PathSamples,
    settings: StepwiseSettings = StepwiseSettings(),
    heldout: PathSamples | None = None,
    coordinates: dict | None = None,
    model: str = "",
    progress=None,
    ranges: dict | None = None,
) -> tuple[PolynomialPaths, dict]:
    """Fit every muscle of ``samples``; ``coordinates`` maps a muscle to the coordinates to use (default:
    ``crossed_coordinates``); ``ranges`` maps a coordinate to its sampled (low, high) box (default: the
    samples' extent). Returns the paths and the fitting time of each muscle in seconds."""
    paths, seconds = [], {}
    for muscle in samples.muscles:
        names = (coordinates or {}).get(muscle) or crossed_coordinates(samples, muscle)
        columns = samples.columns(names)
        lengths, arms = samples.muscle(muscle)
        held = None
        if heldout is not None:
            held_lengths, held_arms = heldout.muscle(muscle)
            held_columns = heldout.columns(names)
            held = (heldout.q[:, held_columns], held_lengths, held_arms[:, held_columns])
        box = None
        if ranges is not None:
            extent = samples.q[:, columns]
            box = [ranges.get(c, (extent[:, i].min(), extent[:, i].max())) for i, c in enumerate(names)]
        start = time.perf_counter()
        path = fit_polynomial_path(muscle, names, samples.q[:, columns], lengths, arms[:, columns], settings, held, box)
        seconds[muscle] = time.perf_counter() - start
        paths.append(path)
        if progress is not None:
            progress(f"fitted {muscle}: {path.report.terms} terms over {', '.join(names)} ({seconds[muscle]:.2f} s)")
    return PolynomialPaths(paths, model), seconds
