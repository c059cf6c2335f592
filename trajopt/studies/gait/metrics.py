"""What a gait lab reads off a walk: curves against the measured ones over the gait cycle, ranges of motion, the
vertical ground reaction's two peaks and trough, stride length, cadence and cost of transport.

Curves are compared over the gait cycle in percent (0-100, resampled to 101 points), as gait labs plot them: the
root-mean-square difference and Pearson's correlation of the two resampled curves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trajopt.errors import TrajoptInputError

CYCLE_POINTS = 101
# A foot is on the ground while its vertical force exceeds this (N), as force plates' usual threshold.
CONTACT_THRESHOLD = 20.0


def over_cycle(time, values, start: float | None = None, end: float | None = None) -> np.ndarray:
    """``values`` sampled at ``time`` resampled to 0, 1, ..., 100 % of the cycle [start, end] (default: the
    samples' first and last times)."""
    time, values = np.asarray(time, dtype=float), np.asarray(values, dtype=float)
    start = time[0] if start is None else float(start)
    end = time[-1] if end is None else float(end)
    if not (end > start and time[0] <= start + 1e-9 and time[-1] >= end - 1e-9):
        raise TrajoptInputError(f"gait cycle {start:.4g}-{end:.4g} s is not covered by samples over "
                                f"{time[0]:.4g}-{time[-1]:.4g} s")
    return np.interp(np.linspace(start, end, CYCLE_POINTS), time, values)


@dataclass(frozen=True)
class CurveAgreement:
    """Root-mean-square difference (in the curves' unit) and Pearson's correlation over the gait cycle."""

    rms: float
    correlation: float


def curve_agreement(predicted: np.ndarray, measured: np.ndarray) -> CurveAgreement:
    """Two curves already over the cycle (``over_cycle``)."""
    predicted, measured = np.asarray(predicted, dtype=float), np.asarray(measured, dtype=float)
    if predicted.shape != measured.shape:
        raise TrajoptInputError(f"curve_agreement: {predicted.shape} vs {measured.shape} samples")
    rms = float(np.sqrt(np.mean((predicted - measured) ** 2)))
    spread = np.std(predicted) * np.std(measured)
    correlation = float(np.mean((predicted - predicted.mean()) * (measured - measured.mean())) / spread) \
        if spread > 0 else float("nan")
    return CurveAgreement(rms, correlation)


def value_range(values) -> float:
    """max - min."""
    values = np.asarray(values, dtype=float)
    return float(values.max() - values.min())


@dataclass(frozen=True)
class VerticalForcePeaks:
    """The stance phase's vertical ground reaction in body weights: first (loading) peak, mid-stance trough, second
    (push-off) peak, and the stance's share of the cycle (%)."""

    first_peak: float
    trough: float
    second_peak: float
    stance_percent: float


def vertical_force_peaks(percent, vertical_force, body_weight: float) -> VerticalForcePeaks:
    """Peaks and trough of one foot's vertical force over a gait cycle (``percent`` 0-100).

    Stance is the longest run of samples above ``CONTACT_THRESHOLD``; the first peak is the largest value in its
    first half, the second in its second half, the trough the smallest value between them.
    """
    percent, force = np.asarray(percent, dtype=float), np.asarray(vertical_force, dtype=float)
    if not body_weight > 0:
        raise TrajoptInputError(f"vertical_force_peaks: body weight must be > 0 N, got {body_weight!r}")
    loaded = force > CONTACT_THRESHOLD
    if loaded.sum() < 3:
        raise TrajoptInputError("vertical_force_peaks: the foot never carries load (no stance phase)")
    # The longest run of loaded samples, the cycle read as periodic (stance may wrap around 0 %).
    doubled = np.concatenate([loaded, loaded])
    best, best_start, run, start = 0, 0, 0, 0
    for k, on in enumerate(doubled):
        run = run + 1 if on else 0
        if run == 1:
            start = k
        if run > best:
            best, best_start = run, start
    best = min(best, loaded.size)
    indices = (best_start + np.arange(best)) % loaded.size
    stance = force[indices] / body_weight
    half = max(1, stance.size // 2)
    first = int(np.argmax(stance[:half]))
    second = half + int(np.argmax(stance[half:]))
    trough = float(stance[first:second + 1].min())
    return VerticalForcePeaks(float(stance[first]), trough, float(stance[second]),
                              100.0 * best / loaded.size)


def cost_of_transport(energy: float, mass: float, distance: float) -> float:
    """Metabolic energy per kilogram and metre (J/(kg·m))."""
    if not (mass > 0 and distance > 0):
        raise TrajoptInputError(f"cost_of_transport: mass and distance must be > 0, got {mass!r}, {distance!r}")
    return float(energy / (mass * distance))
