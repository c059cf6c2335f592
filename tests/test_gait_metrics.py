"""trajopt.studies.gait.metrics on curves whose answers are known in closed form."""

import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.metrics import (
    cost_of_transport,
    curve_agreement,
    over_cycle,
    value_range,
    vertical_force_peaks,
)


def test_agreement_of_a_shifted_and_scaled_sine():
    """sin vs 2 sin + 1: correlation 1; RMS of (sin + 1) over whole periods is sqrt(1 + 1/2)."""
    t = np.linspace(0.0, 1.0, 401)
    a, b = over_cycle(t, np.sin(2 * np.pi * t)), over_cycle(t, 2 * np.sin(2 * np.pi * t) + 1)
    agreement = curve_agreement(a, b)
    assert agreement.correlation == pytest.approx(1.0, abs=1e-12)
    assert agreement.rms == pytest.approx(np.sqrt(1.5), rel=2e-2)  # 101 samples with both ends: within 1 %


def test_a_window_outside_the_samples_is_refused():
    with pytest.raises(TrajoptInputError, match="not covered"):
        over_cycle([0.0, 1.0], [0.0, 1.0], start=0.5, end=1.5)


def test_peaks_of_a_two_hump_stance_wrapping_around_the_cycle():
    """Stance from 90 % to 50 % of the next cycle (60 % of it), humps 1.2 and 1.1 BW, trough 0.8 BW."""
    percent = np.linspace(0.0, 100.0, 1001)
    phase = ((percent - 90.0) % 100.0) / 60.0  # 0..1 over stance
    humps = 0.8 + 0.4 * np.exp(-((phase - 0.25) / 0.08) ** 2) + 0.3 * np.exp(-((phase - 0.75) / 0.08) ** 2)
    shape = np.where(phase < 1.0, humps, 0.0)
    weight = 700.0
    peaks = vertical_force_peaks(percent, shape * weight, weight)
    assert peaks.first_peak == pytest.approx(1.2, abs=0.01)
    assert peaks.second_peak == pytest.approx(1.1, abs=0.01)
    assert peaks.trough == pytest.approx(0.8, abs=0.01)
    assert peaks.stance_percent == pytest.approx(60.0, abs=0.5)


def test_range_and_cost_of_transport():
    assert value_range([3.0, -1.0, 2.0]) == 4.0
    assert cost_of_transport(300.0, 75.0, 1.25) == pytest.approx(3.2)
