"""Stepwise polynomial fitting of muscle paths (after van den Bogert et al. 2011 and the DAS3 build tools).

Candidate terms are the monomials of total degree <= N in the coordinates a muscle crosses. Lengths and
moment arms are fitted together by linear least squares: a length row holds the monomials, a moment-arm row
for coordinate j holds -∂monomial/∂q_j (moment arm = -∂l/∂q). Each coordinate's moment-arm rows are scaled by
(largest moment arm of the muscle) / (largest moment arm about that coordinate) so that small moment arms
count as much as large ones. Terms are added one at a time (forward selection), each time the candidate that
lowers the RMS residual most, until the relative improvement drops below a threshold (the term is then not
added) or the RMS falls below a tolerance.

``ACCURATE`` (the default of ``trajopt fit-paths`` and of refits) stops on accuracy instead: the unweighted
length RMS and moment-arm RMS must both fall below their tolerances; a term that improves by less than 0.1 %
does not stop the search until ``patience`` such terms in a row; when all candidates of degree N are used
or the search stalls above tolerance, the fit restarts with degree N + 1, up to ``max_degree`` (9, as
PredSim's polynomial fits), without exceeding ``max_candidates`` candidate terms.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, replace
from math import comb

import numpy as np

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.polynomial import FitReport, PolynomialPath, PolynomialPaths
from trajopt.model.paths.samples import PathSamples


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
    length_tolerance: float | None = None  # metres; with moment_arm_tolerance: stop when both RMS are below
    moment_arm_tolerance: float | None = None
    patience: int = 1  # consecutive small-improvement terms before stopping (1: stop at the first, DAS3)
    max_degree: int | None = None  # grow the degree up to this while the tolerances are not met
    max_candidates: int = 2500
    length_weight: float = 1.0  # scales the length rows against the moment-arm rows

    @property
    def accuracy_targets(self) -> bool:
        return self.length_tolerance is not None and self.moment_arm_tolerance is not None

    def tolerance_for(self, largest_moment_arm: float) -> float:
        if self.tolerance is not None:
            return self.tolerance
        return max(self.tolerance_fraction * largest_moment_arm, self.tolerance_floor)


# Accuracy-driven defaults: training RMS of half the held-out targets (0.5 mm length, 1 mm moment arm), leaving
# a margin for the larger error away from the training samples.
ACCURATE = StepwiseSettings(degree=4, min_relative_improvement=1e-3, length_tolerance=2.5e-4,
                            moment_arm_tolerance=5e-4, patience=8, max_degree=9)


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
    degree: int = 0
    targets_met: bool = False  # both accuracy tolerances reached (settings with accuracy targets only)


def stepwise_fit(q, lengths, moment_arms, settings: StepwiseSettings = StepwiseSettings()) -> StepwiseResult:
    """Forward stepwise least squares of l(q) on monomials, from lengths (n,) and moment arms (n x k)."""
    q = np.asarray(q, dtype=float)
    n, k = q.shape
    candidates = monomial_exponents(k, settings.degree)
    largest = np.max(np.abs(moment_arms), axis=0) if k else np.zeros(0)
    largest_all = float(largest.max()) if k else 0.0
    scale = np.maximum(largest, settings.moment_arm_scale_floor)
    weights = max(largest_all, settings.moment_arm_scale_floor) / scale
    blocks = [monomials(q, candidates) * settings.length_weight]
    targets = [np.asarray(lengths, dtype=float) * settings.length_weight]
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
    arm_weights = np.repeat(1.0 / weights, n) if k else np.zeros(0)
    small_steps = 0

    def targets_met() -> bool:
        length_rms = np.sqrt(np.mean(residual[:n] ** 2)) / settings.length_weight
        arm_rms = np.sqrt(np.mean((residual[n:] * arm_weights) ** 2)) if k else 0.0
        return length_rms <= settings.length_tolerance and arm_rms <= settings.moment_arm_tolerance

    while len(selected) < max_terms:
        if settings.accuracy_targets and selected and targets_met():
            stopped = f"length and moment-arm RMS below {settings.length_tolerance * 1e3:.3g} and " \
                      f"{settings.moment_arm_tolerance * 1e3:.3g} mm"
            break
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
            small_steps += 1
            if small_steps >= settings.patience:
                stopped = f"relative improvement {(rms - new_rms) / rms:.3g} < {settings.min_relative_improvement}" + (
                    f" for {small_steps} terms in a row" if settings.patience > 1 else "")
                break
        else:
            small_steps = 0
        column = work[:, best] / np.sqrt(norms[best])
        residual -= column * (column @ residual)
        work -= np.outer(column, column @ work)
        selected.append(best)
        rms = np.sqrt(residual @ residual / rows)
        history.append(float(rms))
        if not settings.accuracy_targets and rms <= tolerance:
            stopped = f"RMS {rms * 1000:.3f} mm <= tolerance {tolerance * 1000:.3f} mm"
            break
    else:
        if settings.accuracy_targets and selected and targets_met():
            stopped = f"length and moment-arm RMS below {settings.length_tolerance * 1e3:.3g} and " \
                      f"{settings.moment_arm_tolerance * 1e3:.3g} mm"
    coefficients = np.linalg.lstsq(design[:, selected], target, rcond=None)[0] if selected else np.zeros(0)
    met = bool(settings.accuracy_targets and selected and targets_met())
    return StepwiseResult(candidates[selected], coefficients, tuple(history), stopped, settings.degree, met)


def growing_fit(q, lengths, moment_arms, settings: StepwiseSettings) -> StepwiseResult:
    """``stepwise_fit`` at ``settings.degree``, then at higher degrees (up to ``max_degree`` and
    ``max_candidates`` candidates) while the accuracy tolerances are not met; the last fit is returned."""
    result = stepwise_fit(q, lengths, moment_arms, settings)
    degree, k = settings.degree, np.shape(q)[1]
    top = settings.max_degree or degree
    while (settings.accuracy_targets and not result.targets_met and degree < top
           and comb(k + degree + 1, k) <= settings.max_candidates):
        degree += 1
        result = stepwise_fit(q, lengths, moment_arms, replace(settings, degree=degree))
    return result


def path_errors(path: PolynomialPath, q: np.ndarray, lengths: np.ndarray,
                moment_arms: np.ndarray) -> tuple[float, float]:
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
    finite = np.isfinite(lengths) & np.all(np.isfinite(moment_arms), axis=1) & np.all(np.isfinite(q), axis=1)
    dropped = int((~finite).sum())
    q, lengths, moment_arms = q[finite], np.asarray(lengths, dtype=float)[finite], moment_arms[finite]
    result = growing_fit(q, lengths, moment_arms, settings)
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
        stopped_because=result.stopped_because + (f"; degree {result.degree}" if settings.max_degree else "")
        + (f"; {dropped} samples without a finite length or moment arm dropped" if dropped else ""),
    )
    if heldout is not None:
        hq, hl, ha = heldout
        inside = ~path.outside_training_range(hq) & np.isfinite(hl) & np.all(np.isfinite(ha), axis=1)
        if inside.any():
            hl_rmse, ha_rmse = path_errors(path, hq[inside], hl[inside], ha[inside])
            report.update(heldout_samples=int(inside.sum()), heldout_length_rmse=hl_rmse,
                          heldout_moment_arm_rmse=ha_rmse)
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
