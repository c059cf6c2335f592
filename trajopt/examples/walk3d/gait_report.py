"""Is the predicted walk human walking? The predicted full cycle against the subject's measured gait cycle.

Both cycles start at the right foot's first contact (vertical force above
``trajopt.studies.gait.metrics.CONTACT_THRESHOLD``) and are compared over the gait cycle in percent: the right leg's
hip, knee and ankle flexion (RMS and correlation), the ranges of pelvis list, pelvis rotation and hip rotation, the peak
knee flexion in swing and the knee's flexion wave in early stance, and the right foot's vertical ground reaction (two
peaks and the trough, in body weights). ``CRITERIA`` are what a gait lab would accept.
"""

from __future__ import annotations

import numpy as np

from trajopt.errors import TrajoptInputError

from trajopt.studies.gait.metrics import (
    CONTACT_THRESHOLD,
    curve_agreement,
    over_cycle,
    value_range,
    vertical_force_peaks,
)
from trajopt.model.io import read_table

from trajopt.examples.walk3d.prediction import COORDINATES, GAIT_CYCLE, HERE

GRF = HERE / "grf_walk.mot"
FLEXIONS = ("hip_flexion_r", "knee_angle_r", "ankle_angle_r")
RANGES = ("pelvis_list", "pelvis_rotation", "hip_rotation_r")
# What the prediction must show (deg, body weights): swing knee peak within 10 deg of the measured one; vertical
# force peaks >= 1.05 and trough <= 0.85; ranges within 6 deg; flexions correlated >= 0.85 with RMS <= 8 deg.
CRITERIA = {"swing_knee_peak_deg": 10.0, "grf_peak_bw": 1.05, "grf_trough_bw": 0.85, "range_deg": 6.0,
            "correlation": 0.85, "rms_deg": 8.0}


def _column(table, coordinate: str) -> np.ndarray:
    label = next(label for label in table.labels if label.split("/")[-2:-1] == [coordinate] or label == coordinate)
    return table.column(label)


def _first_contact(time, vertical_force) -> float:
    """The time the force rises through the contact threshold (the first rise, reading the samples as periodic)."""
    loaded = np.asarray(vertical_force) > CONTACT_THRESHOLD
    rises = np.flatnonzero(loaded & ~np.roll(loaded, 1))
    return float(time[rises[0]]) if rises.size else float(time[0])


def _cycle_from(time, values, start: float, duration: float) -> np.ndarray:
    """Values over one cycle beginning at ``start`` (samples of a periodic cycle of ``duration``), 101 points."""
    time = np.asarray(time, dtype=float)
    shifted = np.concatenate([time, time[1:] + duration])
    repeated = np.concatenate([values, values[1:]])
    return over_cycle(shifted, repeated, start, start + duration)


def walking_criteria(coordinates, grf, body_weight: float) -> dict:
    """The comparison (module docstring) of a predicted full cycle (``coordinates`` in OpenSim's paths, radians,
    and ``grf`` with ``ground_force_r_vy``) with coordinates.sto and grf_walk.mot over GAIT_CYCLE."""
    measured_q, measured_grf = read_table(COORDINATES), read_table(GRF)
    window = (measured_grf.time >= GAIT_CYCLE[0]) & (measured_grf.time <= GAIT_CYCLE[1])
    measured_duration = GAIT_CYCLE[1] - GAIT_CYCLE[0]
    measured_start = _first_contact(measured_grf.time[window], measured_grf.column("ground_force_r_vy")[window])
    predicted_duration = float(coordinates.time[-1] - coordinates.time[0])
    predicted_start = _first_contact(grf.time, grf.column("ground_force_r_vy"))

    def measured(values, time):
        keep = (time >= GAIT_CYCLE[0] - 1e-9) & (time <= GAIT_CYCLE[1] + 1e-9)
        return _cycle_from(time[keep], values[keep], measured_start, measured_duration)

    def predicted(values, time):
        return _cycle_from(time, values, predicted_start, predicted_duration)

    report = {"flexion": {}, "ranges_deg": {}}
    for name in FLEXIONS:
        p = np.degrees(predicted(_column(coordinates, name), coordinates.time))
        m = np.degrees(measured(_column(measured_q, name), measured_q.time))
        agreement = curve_agreement(p, m)
        report["flexion"][name] = {"rms_deg": agreement.rms, "correlation": agreement.correlation}
        if name == "knee_angle_r":
            stance = slice(0, 30)  # the loading response's flexion wave lies in the first 30 % of the cycle
            report["knee"] = {"swing_peak_deg": float(p.max()), "measured_swing_peak_deg": float(m.max()),
                              "stance_wave_deg": float(p[stance].max() - p[0]),
                              "measured_stance_wave_deg": float(m[stance].max() - m[0])}
    for name in RANGES:
        p = np.degrees(predicted(_column(coordinates, name), coordinates.time))
        m = np.degrees(measured(_column(measured_q, name), measured_q.time))
        report["ranges_deg"][name] = {"predicted": value_range(p), "measured": value_range(m)}
    percent = np.linspace(0.0, 100.0, 101)
    p_force = predicted(grf.column("ground_force_r_vy"), grf.time)
    m_force = measured(measured_grf.column("ground_force_r_vy"), measured_grf.time)
    try:
        predicted_peaks = vars(vertical_force_peaks(percent, p_force, body_weight))
    except TrajoptInputError:  # a walk whose right foot never carries load has no stance phase
        predicted_peaks = {"first_peak": 0.0, "trough": 0.0, "second_peak": 0.0, "stance_percent": 0.0}
    report["vertical_grf_bw"] = {"predicted": predicted_peaks,
                                 "measured": vars(vertical_force_peaks(percent, m_force, body_weight))}
    report["passed"] = _passed(report)
    return report


def _passed(report: dict) -> dict:
    knee, grf = report["knee"], report["vertical_grf_bw"]["predicted"]
    return {
        "swing knee peak": abs(knee["swing_peak_deg"] - knee["measured_swing_peak_deg"])
        <= CRITERIA["swing_knee_peak_deg"],
        "stance knee flexion wave": knee["stance_wave_deg"] > 5.0,
        "vertical GRF double hump": grf["first_peak"] >= CRITERIA["grf_peak_bw"]
        and grf["second_peak"] >= CRITERIA["grf_peak_bw"] and grf["trough"] <= CRITERIA["grf_trough_bw"],
        **{f"{name} range": abs(r["predicted"] - r["measured"]) <= CRITERIA["range_deg"]
           for name, r in report["ranges_deg"].items()},
        **{f"{name} curve": f["correlation"] >= CRITERIA["correlation"] and f["rms_deg"] <= CRITERIA["rms_deg"]
           for name, f in report["flexion"].items()},
    }


def criteria_rows(report: dict) -> list[str]:
    """summary.md lines: each criterion, predicted beside measured, and whether it is met."""
    knee, passed = report["knee"], report["passed"]
    grf_p, grf_m = report["vertical_grf_bw"]["predicted"], report["vertical_grf_bw"]["measured"]
    mark = {True: "yes", False: "**no**"}
    rows = ["## Is it human walking? (against the subject's measured gait cycle)", "",
            "Both cycles start at the right foot's first contact; curves compared over the gait cycle (101 points).",
            "", "| criterion | predicted | measured | met |", "|---|---|---|---|",
            f"| peak knee flexion in swing (within {CRITERIA['swing_knee_peak_deg']:g} deg) | "
            f"{knee['swing_peak_deg']:.1f} deg | {knee['measured_swing_peak_deg']:.1f} deg | "
            f"{mark[passed['swing knee peak']]} |",
            f"| knee flexion wave in early stance (> 5 deg) | {knee['stance_wave_deg']:.1f} deg | "
            f"{knee['measured_stance_wave_deg']:.1f} deg | {mark[passed['stance knee flexion wave']]} |",
            f"| vertical GRF, right foot: peaks >= {CRITERIA['grf_peak_bw']:g} BW, trough <= "
            f"{CRITERIA['grf_trough_bw']:g} BW | {grf_p['first_peak']:.2f} / {grf_p['trough']:.2f} / "
            f"{grf_p['second_peak']:.2f} | {grf_m['first_peak']:.2f} / {grf_m['trough']:.2f} / "
            f"{grf_m['second_peak']:.2f} | {mark[passed['vertical GRF double hump']]} |"]
    for name, r in report["ranges_deg"].items():
        rows.append(f"| range of {name} (within {CRITERIA['range_deg']:g} deg) | {r['predicted']:.1f} deg | "
                    f"{r['measured']:.1f} deg | {mark[passed[f'{name} range']]} |")
    for name, f in report["flexion"].items():
        rows.append(f"| {name}: correlation >= {CRITERIA['correlation']:g}, RMS <= {CRITERIA['rms_deg']:g} deg | "
                    f"r = {f['correlation']:.2f}, RMS {f['rms_deg']:.1f} deg | | {mark[passed[f'{name} curve']]} |")
    return rows + [""]
