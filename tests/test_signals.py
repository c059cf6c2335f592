"""InverseDynamicsTool's and Moco's TableProcessor's coordinate preprocessing: padding, Butterworth filter, natural
quintic splines vs OpenSim."""

import math
from pathlib import Path

import numpy as np
import pytest

from trajopt.model.io import read_motion, read_table
from trajopt.model.io.signals import (
    coordinate_derivatives,
    coordinate_splines,
    lowpass_butterworth3,
    lowpass_table,
    natural_spline,
    pad_reflected,
    smoothing_spline,
    spline_pieces,
)
from conftest import DATA

IK_MOTION = DATA / "arm26" / "arm26_InverseKinematics.mot"
ARM26_ROTATIONAL = ("r_shoulder_elev", "r_elbow_flex")


def test_pad_reflects_about_end_values():
    signal = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    # head: 2*1 - (4, 2); tail: 2*11 - (7, 4)
    np.testing.assert_array_equal(pad_reflected(signal, 2), [-2.0, 0.0, 1.0, 2.0, 4.0, 7.0, 11.0, 15.0, 18.0])


def test_butterworth_gain_is_one_at_dc_and_one_half_at_cutoff():
    # Forward-backward 3rd-order Butterworth: |H|^2 = 1 / (1 + (f/fc)^6) -> 1/2 at the cutoff.
    sample_interval, cutoff = 0.001, 6.0
    time = np.arange(0.0, 4.0, sample_interval)
    constant = np.full(time.size, 3.5)
    # poles near z = 1 (fc/fs = 0.006) amplify rounding in the recursion to ~1e-12
    np.testing.assert_allclose(lowpass_butterworth3(constant, sample_interval, cutoff), constant, rtol=1e-10)
    wave = np.sin(2 * math.pi * cutoff * time)
    filtered = lowpass_butterworth3(wave, sample_interval, cutoff)
    middle = slice(time.size // 4, 3 * time.size // 4)  # away from start-up transients
    gain = np.max(np.abs(filtered[middle])) / np.max(np.abs(wave[middle]))
    # bilinear warping moves the digital -3 dB point slightly; at fs/fc = 167 it is within 1e-3
    assert gain == pytest.approx(0.5, abs=1e-3)
    # zero phase: the filtered wave peaks where the input does
    assert np.argmax(filtered[middle]) == np.argmax(wave[middle])


def test_natural_quintic_spline_interpolates_and_reproduces_quadratics():
    time = np.sort(np.random.default_rng(3).uniform(0.0, 2.0, 25))
    quadratic = 1.0 + 2.0 * time - 3.0 * time**2
    spline = natural_spline(time, quadratic)
    points = np.linspace(time[0], time[-1], 101)
    np.testing.assert_allclose(spline(points), 1.0 + 2.0 * points - 3.0 * points**2, atol=1e-11)
    np.testing.assert_allclose(spline(points, 1), 2.0 - 6.0 * points, atol=1e-9)
    np.testing.assert_allclose(spline(points, 2), np.full(points.size, -6.0), atol=1e-7)
    wiggly = np.sin(5 * time)
    natural = natural_spline(time, wiggly)
    np.testing.assert_allclose(natural(time), wiggly, atol=1e-13)
    for end in (time[0], time[-1]):  # natural ends: 3rd and 4th derivatives vanish
        assert abs(natural(end, 3)) < 1e-7 * np.max(np.abs(natural(time, 3)))
        assert abs(natural(end, 4)) < 1e-7 * np.max(np.abs(natural(time, 4)))


def test_unfiltered_derivatives_interpolate_the_frames():
    motion = read_motion(IK_MOTION, rotational=ARM26_ROTATIONAL)
    q, qdot, qddot = coordinate_derivatives(motion)
    assert q.shape == qdot.shape == qddot.shape == (121, 11)
    np.testing.assert_allclose(q, motion.data, rtol=0, atol=1e-13)


def test_filtered_frames_are_those_opensim_inverse_dynamics_reports():
    motion = read_motion(IK_MOTION, rotational=ARM26_ROTATIONAL)
    splines = coordinate_splines(motion, cutoff_frequency=6.0)
    assert splines.frame_times.size == 241  # 121 frames padded by 60 on each side
    reported = read_table(DATA / "arm26" / "opensim_arm26_ID_filter6Hz.sto").time  # printed with 8 decimals
    ours = splines.output_times(start_time=0.0)
    assert ours.size == reported.size == 181
    np.testing.assert_allclose(ours, reported, rtol=0, atol=5e-9)


@pytest.mark.parametrize("cutoff", [6.0, -1.0])
def test_coordinate_splines_equal_opensim(opensim_task, cutoff):
    motion = read_motion(IK_MOTION, rotational=ARM26_ROTATIONAL)
    reference = opensim_task(
        "coordinate_splines",
        {"path": IK_MOTION, "cutoff_frequency": cutoff, "rotational": np.array(ARM26_ROTATIONAL), "times": motion.time},
    )
    assert tuple(reference["labels"]) == motion.labels and reference["in_degrees"] is True
    splines = coordinate_splines(motion, cutoff)
    # same grid, bit for bit (padding and resampling reproduced)
    np.testing.assert_array_equal(splines.frame_times, reference["frame_times"])
    for derivative, key in enumerate(("values", "speeds", "accelerations")):
        ours = splines.evaluate(reference["frame_times"], derivative)
        scale = np.max(np.abs(reference[key]))
        error = np.max(np.abs(ours - reference[key]))
        assert error <= 1e-9 * scale, f"{key}: max abs error {error:.3g} (scale {scale:.3g})"
    q, qdot, qddot = coordinate_derivatives(motion, cutoff)
    for ours, key in ((q, "values"), (qdot, "speeds"), (qddot, "accelerations")):
        reference_at_frames = reference[f"{key}_at_times"]
        assert np.max(np.abs(ours - reference_at_frames)) <= 1e-9 * np.max(np.abs(reference_at_frames))


def _noisy_sine():
    generator = np.random.default_rng(0)
    time = np.sort(generator.uniform(0.0, 1.0, 80))
    return time, np.sin(6 * time) + 0.02 * generator.normal(size=time.size)


def test_smoothing_spline_limits_are_interpolation_and_least_squares_polynomial():
    time, values = _noisy_sine()
    # smoothing is in data units: tiny vs 1/max eigenvalue
    nearly_interpolating = smoothing_spline(time, values, smoothing=1e-30)
    np.testing.assert_allclose(nearly_interpolating(time), values, atol=1e-9)
    # infinite smoothing: the least-squares polynomial of degree m - 1 (quadratic for a quintic spline)
    stiff = smoothing_spline(time, values, smoothing=1e30)
    np.testing.assert_allclose(stiff(time), np.polyval(np.polyfit(time, values, 2), time), atol=1e-8)


@pytest.mark.parametrize("degree", [3, 5])
@pytest.mark.parametrize("error_variance", [None, 4e-4, 0.0])
def test_smoothing_spline_equals_opensim_gcvspline(opensim_task, degree, error_variance):
    time, values = _noisy_sine()
    points = np.linspace(time[0], time[-1], 200)
    reference = opensim_task(
        "gcv_spline",
        {
            "time": time,
            "values": values,
            "degree": degree,
            "error_variance": -1.0 if error_variance is None else error_variance,
            "evaluate_at": points,
        },
    )
    spline = smoothing_spline(time, values, degree=degree, error_variance=error_variance)
    # GCVSPL stops its golden-section search for p at a relative tolerance of 1e-6; we minimize
    # to 1e-10, so chosen splines may differ at the 1e-6 level (interpolation: no search).
    tolerance = 1e-10 if error_variance == 0 else 1e-5
    for derivative, key in enumerate(("values", "speeds", "accelerations")):
        scale = np.max(np.abs(reference[key]))
        error = np.max(np.abs(spline(points, derivative) - reference[key]))
        assert error <= tolerance * scale, f"{key}: max abs error {error:.3g} (scale {scale:.3g})"


# referenceCoordinates.sto's times are not uniform to OpenSim's test (the resampling branch); arm26's IK motion's are.
@pytest.mark.parametrize("path", [Path(__file__).resolve().parent.parent / "trajopt" / "examples" / "gait2d"
                                  / "referenceCoordinates.sto", IK_MOTION])
def test_lowpass_table_equals_opensim_tab_op_lowpass_filter(opensim_task, path):
    table = read_table(path)
    reference = opensim_task("tab_op_lowpass", {"path": path, "cutoff_frequency": 6.0})
    ours = lowpass_table(table, 6.0)
    assert ours.labels == tuple(reference["labels"])
    np.testing.assert_allclose(ours.time, reference["time"], rtol=0, atol=1e-15)
    np.testing.assert_allclose(ours.data, reference["data"], rtol=0, atol=1e-12 * np.max(np.abs(reference["data"])))


def test_spline_pieces_are_the_spline():
    generator = np.random.default_rng(7)
    time = np.sort(generator.uniform(0.0, 1.0, 30))
    spline = natural_spline(time, generator.normal(size=(time.size, 3)))
    breaks, coefficients = spline_pieces(spline)
    np.testing.assert_array_equal(breaks, time)
    points = np.concatenate([generator.uniform(time[0], time[-1], 200), time])
    piece = np.clip(np.searchsorted(breaks, points, side="right") - 1, 0, breaks.size - 2)
    offset = (points - breaks[piece])[:, None]
    values = sum(coefficients[m, piece] * offset ** (coefficients.shape[0] - 1 - m)
                 for m in range(coefficients.shape[0]))
    np.testing.assert_allclose(values, spline(points), rtol=0, atol=1e-11)
