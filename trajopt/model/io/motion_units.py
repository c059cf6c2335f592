"""Angles in the unit a motion file states, checked against the model: a motion whose header says radians
(``inDegrees=no``, or no ``inDegrees`` line where OpenSim then reads radians) but holds degrees gives an elbow at
90 rad and inverse dynamics of nonsense, with no error anywhere else.

``read_checked_motion`` reads a coordinates file (``trajopt.model.io.read_motion``'s conversion), says which unit it
read and why (``AngleUnit``), and checks every rotational column the model has a range for:

- read as radians: a value beyond one turn (and beyond the coordinate's range), or a speed between frames above
  ``AngleLimits.speed`` held over ``AngleLimits.sustained`` successive frames (a one-frame spike is noise), is
  refused (``AngleUnitError``: file, column, time, value, and the header line to fix); a value more than
  ``AngleLimits.outside_range`` past the model's range is a caveat;
- read as degrees: when every such column stays within ``AngleLimits.tiny`` rad while the model's ranges span more
  than ``AngleLimits.wide_range`` rad, the data look like radians: a caveat, not an error (a still pose near zero is
  possible).

A motion whose frames lie ``AngleLimits.frame_step`` or more apart (a time column in milliseconds) is a caveat too:
its speeds and accelerations would be far too small; so is a translation more than ``AngleLimits.outside_translation``
past its model range (millimetres read as metres).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from trajopt.errors import MotionFileError
from trajopt.model.io.motion import coordinate_name, motion_in_radians
from trajopt.model.io.tables import read_table
from trajopt.table import Table


class AngleUnitError(MotionFileError):
    """A motion's rotational column is implausible in the unit its header states (names file, column, time, value)."""


class MotionValueError(MotionFileError):
    """A motion holds a value that is not a finite number (names file, column and time)."""


@dataclass(frozen=True)
class AngleLimits:
    """What a joint angle read in radians may do: ``turn`` (rad) beyond the coordinate's range, ``speed`` (rad/s)
    over ``sustained`` successive frames (refused beyond); ``outside_range`` (rad) past its model range (a caveat
    beyond); ``tiny`` (rad) and ``wide_range`` (rad) flag radians read as degrees; frames ``frame_step`` (s) or more
    apart (median) flag a time column that is not in seconds; a translation ``outside_translation`` (m) past its
    model range one that is not in metres."""

    turn: float = 2.0 * math.pi
    speed: float = 50.0
    sustained: int = 3
    tiny: float = 0.1
    wide_range: float = 1.0
    outside_range: float = 0.5
    frame_step: float = 1.0
    outside_translation: float = 0.5


LIMITS = AngleLimits()


@dataclass(frozen=True)
class AngleUnit:
    """The unit a motion's angles were read in and the header fact that decided it."""

    in_degrees: bool
    reason: str

    def describe(self) -> str:
        return f"angles read in {'degrees' if self.in_degrees else 'radians'} ({self.reason})"


@dataclass(frozen=True)
class CheckedMotion:
    """A motion in radians, the unit its file was read in, and caveats (one line each) about its angles."""

    table: Table
    unit: AngleUnit
    caveats: tuple[str, ...]


def angle_unit(table: Table) -> AngleUnit:
    """Which unit ``trajopt.model.io.read_table`` read ``table``'s angles in, and why (its header's words)."""
    if "inDegrees" in table.metadata:
        return AngleUnit(table.in_degrees, f"header says inDegrees={table.metadata['inDegrees'].strip()}")
    if table.in_degrees:
        return AngleUnit(True, "no inDegrees line: a .mot without version is in degrees, as OpenSim reads it")
    return AngleUnit(False, "no inDegrees line: radians, as OpenSim reads it")


def check_finite(table: Table) -> None:
    """Refuse a NaN or infinite value, naming file, column, time and value."""
    bad = ~np.isfinite(table.data)
    if bad.any():
        frame, column = (int(i) for i in np.argwhere(bad)[0])
        raise MotionValueError(f"{table.source or table.name}: column '{table.labels[column]}' is "
                               f"{table.data[frame, column]} at time {table.time[frame]:g} s "
                               f"({int(bad.sum())} such values)")


EMG_CEILING = 2.0  # normalized EMG (about 0..1) above this is a percent or a raw signal


def check_normalized_emg(table: Table, columns) -> None:
    """Refuse tracked EMG ``columns`` of ``table`` holding a value above ``EMG_CEILING``: an excitation lies in
    [0, 1], so EMG in percent or in volts would be tracked as nonsense (names file, column, time and value)."""
    for label in columns:
        values = table.column(label)
        i = int(np.argmax(values))
        if values[i] > EMG_CEILING:
            raise MotionValueError(f"{table.source or table.name}: EMG column '{label}' is {values[i]:.4g} at time "
                                   f"{table.time[i]:g} s: normalized EMG (0 to 1, as excitations) is expected, not "
                                   f"percent or volts")


def _farthest_outside(values: np.ndarray, low: float, high: float) -> tuple[int, float]:
    """(frame, distance) of the value farthest outside [low, high]; the distance is <= 0 when all lie inside."""
    outside = np.maximum(low - values, values - high)
    i = int(np.argmax(outside))
    return i, float(outside[i])


def check_angles(table: Table, unit: AngleUnit, ranges: Mapping[str, tuple[float, float]],
                 limits: AngleLimits = LIMITS) -> tuple[str, ...]:
    """Check the rotational columns of ``table`` (radians; ``ranges``: rotational coordinate -> model range in
    rad) against their ranges and ``limits``: refuse degrees read as radians, return a caveat for the reverse."""
    columns = [(label, coordinate_name(label)) for label in table.labels
               if coordinate_name(label) in ranges and not label.endswith("/speed")]
    if not columns or table.num_frames == 0:
        return ()
    where = table.source or table.name
    hint = f"looks like degrees: {unit.reason}; if the file holds degrees, its header needs inDegrees=yes"
    if not unit.in_degrees:
        for label, name in columns:
            low, high = ranges[name]
            q = table.column(label)
            bound = max(limits.turn, abs(low), abs(high))
            beyond = np.flatnonzero(np.abs(q) > bound)
            if beyond.size:
                i = int(beyond[np.argmax(np.abs(q[beyond]))])
                raise AngleUnitError(f"{where}: column '{label}' is {q[i]:.6g} rad at time {table.time[i]:g} s, more "
                                     f"than a turn (model range [{low:.3g}, {high:.3g}] rad): {hint}")
        if table.num_frames > limits.sustained:
            step = np.diff(table.time)
            for label, _ in columns:
                speed = np.abs(np.diff(table.column(label))) / step
                fast = speed > limits.speed
                run = np.convolve(fast.astype(int), np.ones(limits.sustained, dtype=int), mode="valid")
                starts = np.flatnonzero(run == limits.sustained)
                if starts.size:
                    held = np.zeros(speed.size, dtype=bool)
                    for start in starts:
                        held[start:start + limits.sustained] = True
                    i = int(np.argmax(np.where(held, speed, 0.0)))
                    raise AngleUnitError(f"{where}: column '{label}' moves at {speed[i]:.4g} rad/s into time "
                                         f"{table.time[i + 1]:g} s, value {table.column(label)[i + 1]:.6g} rad (above "
                                         f"{limits.speed:g} rad/s over {limits.sustained}+ frames): {hint}")
        caveats = []
        for label, name in columns:
            low, high = ranges[name]
            q = table.column(label)
            i, outside = _farthest_outside(q, low, high)
            if outside > limits.outside_range:
                caveats.append(f"{where}: column '{label}' is {q[i]:.4g} rad at time {table.time[i]:g} s, "
                               f"{outside:.3g} rad outside its model range [{low:.3g}, {high:.3g}] rad "
                               f"({unit.reason}; degrees would need inDegrees=yes)")
        return tuple(caveats)
    wide = [(label, name) for label, name in columns if ranges[name][1] - ranges[name][0] > limits.wide_range]
    if not wide:
        return ()
    largest = max(float(np.max(np.abs(table.column(label)))) for label, _ in wide)
    if 0.0 < largest < limits.tiny:
        span = max(ranges[name][1] - ranges[name][0] for _, name in wide)
        return (f"{where}: every rotational column stays within ±{largest:.3g} rad over the motion although the "
                f"model's ranges span up to {span:.3g} rad: looks like radians read as degrees ({unit.reason})",)
    return ()


def read_checked_motion(path: str | Path, ranges: Mapping[str, tuple[float, float]],
                        limits: AngleLimits = LIMITS,
                        translations: Mapping[str, tuple[float, float]] | None = None) -> CheckedMotion:
    """Read a coordinates file into radians (``ranges``: every rotational coordinate of the model -> its range in
    rad; their columns are converted when the file is in degrees), refuse non-finite values and implausible
    angles, and say which unit was read; ``translations`` (translational coordinate -> range in m) are checked
    against their ranges too."""
    raw = read_table(path)
    check_finite(raw)
    unit = angle_unit(raw)
    motion = motion_in_radians(raw, set(ranges))
    return CheckedMotion(motion, unit, check_angles(motion, unit, ranges, limits) + check_time_scale(motion, limits)
                         + check_translations(motion, translations or {}, limits))


def check_translations(table: Table, ranges: Mapping[str, tuple[float, float]],
                       limits: AngleLimits = LIMITS) -> tuple[str, ...]:
    """A caveat for each translational column (``ranges``: coordinate -> model range in m) that goes more than
    ``limits.outside_translation`` past its range: millimetres (or centimetres) read as metres."""
    caveats = []
    for label in table.labels:
        name = coordinate_name(label)
        if name not in ranges or label.endswith("/speed"):
            continue
        low, high = ranges[name]
        values = table.column(label)
        i, outside = _farthest_outside(values, low, high)
        if outside > limits.outside_translation:
            caveats.append(f"{table.source or table.name}: column '{label}' is {values[i]:.4g} m at time "
                           f"{table.time[i]:g} s, {outside:.4g} m outside its model range [{low:g}, {high:g}] m "
                           f"(translations are read in metres: millimetres?)")
    return tuple(caveats)


def check_time_scale(table: Table, limits: AngleLimits = LIMITS) -> tuple[str, ...]:
    """A caveat when the median frame step is ``limits.frame_step`` or more: the time is likely not in seconds."""
    if table.num_frames < 2:
        return ()
    step = float(np.median(np.diff(table.time)))
    if step < limits.frame_step:
        return ()
    return (f"{table.source or table.name}: frames are {step:g} s apart over {table.time[-1] - table.time[0]:g} s: "
            f"if the time column is not in seconds (e.g. milliseconds), speeds and accelerations are off by as much",)


def translational_ranges(osim) -> dict[str, tuple[float, float]]:
    """Translational coordinate -> range (m) of a model read by ``trajopt.model.osim``."""
    return {c.name: (float(c.range[0]), float(c.range[1])) for c in osim.spec.coordinates
            if c.motion_type == "translational"}


def rotational_ranges(osim) -> dict[str, tuple[float, float]]:
    """Rotational coordinate -> range (rad) of a model read by ``trajopt.model.osim`` (``osim.spec.coordinates``)."""
    return {c.name: (float(c.range[0]), float(c.range[1])) for c in osim.spec.coordinates
            if c.motion_type == "rotational"}
