"""A motion as the studies take it: where it comes from, how it is filtered and which time window is used.

Moco's TableProcessor for coordinate motions: ``MotionProcessor("walk.mot", cutoff_frequency=6.0,
window=(0.5, 1.2))``. Every study (static optimization, inverse dynamics, muscle-driven inverse, tracking) takes a
file path, a ``Table`` (radians) or a ``MotionProcessor`` for its motion; a path or a table is a processor with
no filter and the motion's whole time range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from os import PathLike

from trajopt.errors import TrajoptInputError
from trajopt.model.io.motion import read_motion
from trajopt.model.io.signals import CoordinateSplines, coordinate_splines
from trajopt.model.io.tables import Table


@dataclass(frozen=True)
class MotionProcessor:
    """``source``: a motion file (degrees or radians, as its header says) or a ``Table`` in radians;
    ``cutoff_frequency``: a 3rd-order Butterworth low-pass in Hz after reflective padding, as OpenSim's tools
    (None: none); ``window``: (t0, t1) in s, the part of the motion a study uses (None: all of it)."""

    source: str | PathLike | Table
    cutoff_frequency: float | None = None
    window: tuple[float, float] | None = None

    def __post_init__(self):
        if self.cutoff_frequency is not None and not (math.isfinite(self.cutoff_frequency)
                                                      and self.cutoff_frequency > 0):
            raise TrajoptInputError(f"MotionProcessor: cutoff_frequency must be a number of Hz > 0 or None, got "
                                    f"{self.cutoff_frequency!r}")
        if self.window is not None:
            start, final = (float(t) for t in self.window)
            if not (math.isfinite(start) and math.isfinite(final) and start < final):
                raise TrajoptInputError(f"MotionProcessor: window must be (t0, t1) with t0 < t1, got {self.window!r}")
            object.__setattr__(self, "window", (start, final))

    @property
    def where(self) -> str:
        """The source's name for messages."""
        return (self.source.source or self.source.name or "motion") if isinstance(self.source, Table) \
            else str(self.source)

    def table(self, rotational=()) -> Table:
        """The unfiltered motion, whole, in radians (``rotational``: the rotational coordinates, for a file in
        degrees)."""
        return self.source if isinstance(self.source, Table) else read_motion(self.source, rotational=rotational)

    def splines(self, table: Table) -> CoordinateSplines:
        """Splines through ``table`` (this motion's columns, possibly selected), low-pass filtered first when a
        cutoff frequency is set."""
        return coordinate_splines(table, self.cutoff_frequency)

    def time_range(self, table: Table) -> tuple[float, float]:
        """The window, or ``table``'s first and last times without one."""
        return (float(table.time[0]), float(table.time[-1])) if self.window is None else self.window


def motion_processor(motion) -> MotionProcessor:
    """``motion`` as a ``MotionProcessor``: a processor as given; a path or a ``Table`` unfiltered, whole."""
    return motion if isinstance(motion, MotionProcessor) else MotionProcessor(motion)
