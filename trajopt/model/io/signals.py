"""Coordinate preprocessing as OpenSim 4.6's InverseDynamicsTool does it: low-pass filter and quintic splines.

What ``InverseDynamicsTool::run`` (OpenSim/Tools/InverseDynamicsTool.cpp) does to the coordinates file:

1. if ``lowpass_cutoff_frequency >= 0``: ``Storage::pad(size/2)`` then ``Storage::lowpassIIR(fc)``;
   ``pad`` reflects and negates both ends, time included (``Signal::Pad``); ``lowpassIIR``
   resamples on a uniform grid of the smallest time step when the padded times are not uniform to
   within machine epsilon (``Storage::resample``: interpolating quintic ``GCVSplineSet``, grid
   ``t0, t0+dt, ...`` accumulated by repeated addition up to the last time), then runs
   ``Signal::LowpassIIR``: a 3rd-order Butterworth, forward then backward (zero phase);
2. degrees become radians (rotational coordinates only);
3. ``GCVSplineSet(5, storage)`` with error variance 0: Woltring's GCVSPL with ``VAR = 0`` is an
   *interpolating natural* spline of degree 5, i.e. derivatives 3 and 4 vanish at both ends;
   speeds and accelerations are its first and second derivatives. The unfiltered path
   (cutoff -1) skips padding, resampling and filtering but still uses these splines.
   The filtered splines span the padded (and possibly resampled) time grid, and ID reports at
   that grid's frames between the requested start and end times.

The natural interpolating spline is built with ``scipy.interpolate.make_interp_spline`` and the
natural end conditions: the same function GCVSPL computes, by a different linear solve.
``smoothing_spline`` covers GCVSPL's other modes (GCV, known error variance, fixed parameter).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.interpolate import BSpline, make_interp_spline
from scipy.linalg import null_space
from scipy.optimize import minimize_scalar

from trajopt.errors import TrajoptInputError
from trajopt.model.io.tables import Table

_MACHINE_EPSILON = float(np.finfo(float).eps)  # SimTK::Eps
_MAX_RESAMPLE_SIZE = 100000  # Storage::MAX_RESAMPLE_SIZE


def pad_reflected(signal: np.ndarray, pad: int) -> np.ndarray:
    """OpenSim's ``Signal::Pad``: prepend/append ``pad`` samples reflected about the end values (keeps value and slope).

    Works along axis 0 of a 1-D or 2-D array.
    """
    signal = np.asarray(signal, dtype=float)
    size = signal.shape[0]
    if pad == 0:
        return signal.copy()
    if pad < 0 or pad > size - 1:
        raise TrajoptInputError(f"pad size {pad} must be in [0, {size - 1}] for {size} samples")
    head = 2.0 * signal[0] - signal[pad:0:-1]
    tail = 2.0 * signal[-1] - signal[size - 2 : size - 2 - pad : -1] if size - 2 - pad >= 0 else None
    if tail is None:
        tail = 2.0 * signal[-1] - signal[size - 2 :: -1][:pad]
    return np.concatenate([head, signal, tail], axis=0)


def lowpass_butterworth3(signal: np.ndarray, sample_interval: float, cutoff_frequency: float) -> np.ndarray:
    """OpenSim's ``Signal::LowpassIIR``: 3rd-order Butterworth low-pass run forward and backward.

    Same coefficients (bilinear transform with frequency pre-warping), same start-up (the first
    samples are copied) and the same cutoff clamp to 0.49 of the sample frequency. Works along
    axis 0 of a 1-D or 2-D array.
    """
    signal = np.asarray(signal, dtype=float)
    if sample_interval <= 0.0 or signal.shape[0] < 4:
        raise TrajoptInputError(
            f"low-pass filter needs a positive sample interval and >= 4 samples "
            f"(got {sample_interval}, {signal.shape[0]})"
        )
    sample_frequency = 1.0 / sample_interval
    if cutoff_frequency >= 0.5 * sample_frequency:
        cutoff_frequency = 0.49 * sample_frequency
    warped = math.tan(2.0 * math.pi * cutoff_frequency * sample_interval / 2.0)
    w2, w3 = warped * warped, warped * warped * warped
    denominator = (warped + 1.0) * (warped * warped + warped + 1.0)
    a = (w3 / denominator, 3 * w3 / denominator, 3 * w3 / denominator, w3 / denominator)
    b = (
        (3 * w3 + 2 * w2 - 2 * warped - 3) / denominator,
        (3 * w3 - 2 * w2 - 2 * warped + 3) / denominator,
        (warped - 1) * (w2 - warped + 1) / denominator,
    )
    forward = _recursive_pass(signal, a, b)
    backward = _recursive_pass(forward[::-1], a, b)
    return backward[::-1].copy()


def _recursive_pass(signal: np.ndarray, a, b) -> np.ndarray:
    # Same operation order as Signal::LowpassIIR so results agree to the last bits.
    out = signal.copy()
    for i in range(3, signal.shape[0]):
        out[i] = (
            a[0] * signal[i] + a[1] * signal[i - 1] + a[2] * signal[i - 2] + a[3] * signal[i - 3]
            - b[0] * out[i - 1] - b[1] * out[i - 2] - b[2] * out[i - 3]
        )
    return out


def natural_spline(time: np.ndarray, values: np.ndarray, degree: int = 5) -> BSpline:
    """Interpolating natural spline of odd ``degree`` (GCVSPL with error variance 0, as OpenSim's GCVSpline).

    Natural: derivatives ``m .. 2m-2`` vanish at both ends, ``m = (degree + 1) / 2``. ``values``
    may be 2-D (frames x columns). Evaluate only inside ``[time[0], time[-1]]``.
    """
    if degree % 2 != 1 or degree < 1:
        raise TrajoptInputError(f"natural spline degree must be odd and positive, got {degree}")
    half_order = (degree + 1) // 2
    time = np.asarray(time, dtype=float)
    values = np.asarray(values, dtype=float)
    if time.size < 2 * half_order:
        raise TrajoptInputError(f"a degree-{degree} spline needs at least {2 * half_order} frames, got {time.size}")
    zero = np.zeros(values.shape[1:])
    ends = [(order, zero) for order in range(half_order, 2 * half_order - 1)]
    boundary = (ends, ends) if ends else None
    return make_interp_spline(time, values, k=degree, bc_type=boundary)


def resample_uniform(time: np.ndarray, values: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """OpenSim's ``Storage::resample(step, 5)``: quintic natural-spline values on ``t0, t0+step, ...``
    (accumulated sums)."""
    time = np.asarray(time, dtype=float)
    first, last = float(time[0]), float(time[-1])
    if (last - first) / step > _MAX_RESAMPLE_SIZE:
        step = (last - first) / _MAX_RESAMPLE_SIZE
    grid = []
    t = first
    while t <= last:  # repeated addition, as GCVSplineSet::constructStorage does
        grid.append(t)
        t += step
    grid = np.asarray(grid)
    return grid, natural_spline(time, values)(grid)


@dataclass(frozen=True)
class CoordinateSplines:
    """Quintic natural splines through (possibly filtered) coordinates, as InverseDynamicsTool builds them.

    ``frame_times`` is the grid the splines interpolate (padded and resampled when filtered).
    """

    labels: tuple[str, ...]
    frame_times: np.ndarray
    spline: BSpline

    def evaluate(self, times: np.ndarray, derivative: int = 0) -> np.ndarray:
        """Values (``derivative=0``), speeds (1) or accelerations (2) at ``times``: array (len(times), columns)."""
        times = np.atleast_1d(np.asarray(times, dtype=float))
        low, high = self.frame_times[0], self.frame_times[-1]
        if times.min() < low or times.max() > high:
            raise TrajoptInputError(
                f"times [{times.min()}, {times.max()}] leave the spline range [{low}, {high}]"
            )
        return self.spline(times, nu=derivative).reshape(times.size, len(self.labels))

    def output_times(self, start_time: float = -math.inf, final_time: float = math.inf) -> np.ndarray:
        """The frames InverseDynamicsTool reports for ``time_range = [start_time, final_time]``.

        ID clamps the range to the grid and starts/ends at the last frame at or before each time
        (``Storage::findIndex``).
        """
        grid = self.frame_times
        start = max(start_time, grid[0])
        final = min(final_time, grid[-1])
        first = max(int(np.searchsorted(grid, start, side="right")) - 1, 0)
        last = max(int(np.searchsorted(grid, final, side="right")) - 1, 0)
        return grid[first : last + 1].copy()


def coordinate_splines(table: Table, cutoff_frequency: float | None = None) -> CoordinateSplines:
    """Splines through ``table``'s columns, preprocessed as InverseDynamicsTool does.

    ``cutoff_frequency`` in Hz; ``None`` or a negative number (OpenSim's ``-1``) means no filter.
    ``table`` should already be in radians (``read_motion``): scaling commutes with both steps.
    """
    if table.num_frames < 6:
        raise TrajoptInputError(f"{table.source or table.name or 'motion'}: a quintic spline through the "
                                f"coordinates needs at least 6 frames, got {table.num_frames}")
    time = table.time
    values = table.data
    if cutoff_frequency is not None and cutoff_frequency >= 0:
        if cutoff_frequency == 0:
            raise TrajoptInputError(f"{table.source or table.name}: low-pass cutoff frequency must be > 0 Hz (or None)")
        pad = time.size // 2
        time = pad_reflected(time, pad)
        values = pad_reflected(values, pad)
        step = float(np.min(np.diff(time)))
        if step < _MACHINE_EPSILON:
            raise TrajoptInputError(f"{table.source or table.name}: time steps are not positive, cannot filter")
        average_step = (time[-1] - time[0]) / (time.size - 1)
        if average_step - step > _MACHINE_EPSILON:
            time, values = resample_uniform(time, values, step)
        values = lowpass_butterworth3(values, step, cutoff_frequency)
    return CoordinateSplines(table.labels, np.asarray(time), natural_spline(time, values))


def _uniform_step(time: np.ndarray) -> tuple[bool, float]:
    """OpenSim's ``isUniform``: (every step within 4 eps max(|t0|, |tN|) of the mean step, that mean step or else
    the smallest positive step)."""
    tolerance = 4.0 * _MACHINE_EPSILON * max(abs(time[0]), abs(time[-1]))
    mean = (time[-1] - time[0]) / (time.size - 1)
    steps = np.diff(time)
    if np.all(np.abs(steps - mean) <= tolerance) or time.size == 2:
        return True, float(mean)
    return False, float(np.min(steps[steps > 0]))


def lowpass_table(table: Table, cutoff_frequency: float) -> Table:
    """``table`` low-pass filtered as OpenSim's ``TabOpLowPassFilter`` (Moco's ``TableProcessor``) does it.

    ``TableUtilities::filterLowpass`` with padding: times that are not uniform (``isUniform``) are first resampled
    on the smallest step from the table's first time (interpolating quintic natural splines), then half the rows
    are padded reflected at each end and ``Signal::LowpassIIR`` runs; the rows within the table's original time
    span are kept (``trim_to_original_time_range``). ``InverseDynamicsTool`` pads before resampling and keeps the
    padding (``coordinate_splines``).
    """
    time, values = np.asarray(table.time, dtype=float), np.asarray(table.data, dtype=float)
    if not (math.isfinite(cutoff_frequency) and cutoff_frequency > 0):
        raise TrajoptInputError(f"{table.source or table.name}: low-pass cutoff frequency must be > 0 Hz, got "
                                f"{cutoff_frequency}")
    if time.size < 4 or np.any(np.diff(time) <= 0):
        raise TrajoptInputError(f"{table.source or table.name}: low-pass filtering needs >= 4 rows with increasing "
                                "times")
    uniform, step = _uniform_step(time)
    if not uniform:
        time, values = resample_uniform(time, values, step)
    pad = time.size // 2
    padded_time = pad_reflected(time, pad)
    filtered = lowpass_butterworth3(pad_reflected(values, pad), step, cutoff_frequency)
    keep = (padded_time >= table.time[0]) & (padded_time <= table.time[-1])
    return Table(padded_time[keep], table.labels, filtered[keep], False, table.name, table.metadata, table.source)


def spline_pieces(spline: BSpline) -> tuple[np.ndarray, np.ndarray]:
    """A spline as polynomial pieces: (breaks (K+1,), coefficients (degree+1, K, columns)); piece k of column i is
    sum_m c[m, k, i] (t - breaks[k])^(degree - m) on [breaks[k], breaks[k+1]] (scipy's ``PPoly`` layout)."""
    breaks = np.unique(spline.t[spline.k:spline.t.size - spline.k])
    starts = breaks[:-1]  # a B-spline at a knot takes the piece to its right
    columns = [spline(starts, nu=spline.k - m).reshape(starts.size, -1) / math.factorial(spline.k - m)
               for m in range(spline.k + 1)]
    return breaks, np.stack(columns)


def coordinate_derivatives(
    table: Table, cutoff_frequency: float | None = None, times: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coordinates, speeds and accelerations (each frames x columns) at ``times`` (default: the table's frames).

    Preprocessing is InverseDynamicsTool's (see ``coordinate_splines``).
    """
    splines = coordinate_splines(table, cutoff_frequency)
    times = table.time if times is None else times
    return tuple(splines.evaluate(times, derivative) for derivative in (0, 1, 2))


def smoothing_spline(
    time: np.ndarray,
    values: np.ndarray,
    degree: int = 5,
    smoothing: float | None = None,
    error_variance: float | None = None,
    weights: np.ndarray | None = None,
) -> BSpline:
    """Natural smoothing spline of odd ``degree`` with GCVSPL's criteria (Woltring 1986), for one column.

    Minimizes ``sum w_i (y_i - s(t_i))^2 + smoothing * integral (s^(m))^2`` with ``m = (degree+1)/2``.
    Without ``smoothing`` the parameter is chosen like GCVSPL: ``error_variance=None`` minimizes
    the generalized cross-validation function ``(RSS/n) / (tr(I-A)/n)^2`` (GCVSPL ``VAR < 0``);
    a known ``error_variance > 0`` minimizes the estimated true mean squared error
    ``RSS/n - var (2 tr(I-A)/n - 1)``; ``error_variance=0`` interpolates (``natural_spline``).
    The minimizer is a natural spline; it is computed in the natural-spline basis through the
    eigenvalues of the roughness matrix (Demmler-Reinsch), which keeps the criteria accurate
    near interpolation. Dense: meant for up to a few thousand frames.
    """
    time = np.asarray(time, dtype=float)
    values = np.asarray(values, dtype=float)
    if values.ndim != 1 or values.size != time.size:
        raise TrajoptInputError(f"smoothing_spline takes one column of {time.size} values, got shape {values.shape}")
    if smoothing is None and error_variance == 0:
        return natural_spline(time, values, degree)
    roughness = _natural_roughness(time, degree)  # f' K f = integral (s^(m))^2 for the natural spline through f
    weights = np.ones(time.size) if weights is None else np.asarray(weights, dtype=float)
    if weights.shape != time.shape or np.any(weights <= 0):
        raise TrajoptInputError(f"smoothing_spline weights must be {time.size} positive numbers")
    if smoothing is not None and smoothing < 0:
        raise TrajoptInputError(f"smoothing_spline smoothing must be >= 0, got {smoothing}")
    root = np.sqrt(weights)
    # Polynomials of degree < m are not penalized: split them off exactly, diagonalize the rest.
    half_order = (degree + 1) // 2
    centred = (2.0 * time - time[0] - time[-1]) / (time[-1] - time[0])
    polynomials = np.vander(centred, half_order) * root[:, None]
    orthonormal, _ = np.linalg.qr(polynomials, mode="complete")
    rough_part = orthonormal[:, half_order:]
    weighted = roughness / root[:, None] / root[None, :]
    penalized, rotation = np.linalg.eigh(rough_part.T @ weighted @ rough_part)
    eigenvalues = np.concatenate([np.zeros(half_order), np.clip(penalized, 0.0, None)])
    vectors = np.hstack([orthonormal[:, :half_order], rough_part @ rotation])
    projected = vectors.T @ (root * values)
    count = time.size

    def statistics(parameter):
        damping = parameter * eigenvalues / (1.0 + parameter * eigenvalues)  # eigenvalues of I - A
        return float(np.sum((damping * projected) ** 2)) / count, float(np.sum(damping)) / count

    if smoothing is None:
        scale = 1.0 / np.max(eigenvalues)  # makes the search variable dimensionless

        def criterion(log_ratio):
            residual, residual_trace = statistics(scale * 10.0**log_ratio)
            if error_variance is None:
                return residual / residual_trace**2  # GCV
            return residual - error_variance * (2.0 * residual_trace - 1.0)  # estimated true MSE

        grid = np.linspace(-16.0, 16.0, 129)
        best = grid[int(np.argmin([criterion(value) for value in grid]))]
        found = minimize_scalar(criterion, bounds=(best - 0.25, best + 0.25), method="bounded",
                                options={"xatol": 1e-10})
        smoothing = scale * 10.0**found.x
    fitted = vectors @ (projected / (1.0 + smoothing * eigenvalues)) / root
    return natural_spline(time, fitted, degree)


def _natural_roughness(time: np.ndarray, degree: int) -> np.ndarray:
    """Matrix K with ``f' K f = integral (s^(m))^2`` for the natural spline ``s`` interpolating ``f`` at ``time``."""
    if degree % 2 != 1 or degree < 1:
        raise TrajoptInputError(f"smoothing spline degree must be odd and positive, got {degree}")
    half_order = (degree + 1) // 2
    if time.size < 2 * half_order or np.any(np.diff(time) <= 0):
        raise TrajoptInputError(f"smoothing spline needs >= {2 * half_order} strictly increasing times")
    knots = np.concatenate([np.full(degree, time[0]), time, np.full(degree, time[-1])])
    basis = BSpline(knots, np.eye(knots.size - degree - 1), degree)
    # natural end conditions: derivatives m .. 2m-2 vanish at both ends
    conditions = [basis(end, nu=order) for end in (time[0], time[-1])
                  for order in range(half_order, 2 * half_order - 1)]
    natural = null_space(np.array(conditions)) if conditions else np.eye(knots.size - degree - 1)
    collocation = basis(time) @ natural  # square: values at the frames -> natural coefficients
    nodes, node_weights = np.polynomial.legendre.leggauss(degree)  # exact for these polynomial products
    half = 0.5 * np.diff(time)
    points = (0.5 * (time[1:] + time[:-1]))[:, None] + half[:, None] * nodes[None, :]
    quadrature = (half[:, None] * node_weights[None, :]).ravel()
    derivative = basis(points.ravel(), nu=half_order) @ natural
    penalty = derivative.T @ (quadrature[:, None] * derivative)
    roughness = np.linalg.solve(collocation.T, np.linalg.solve(collocation.T, penalty).T)
    return 0.5 * (roughness + roughness.T)
