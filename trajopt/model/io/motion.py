"""Coordinate motions: a table whose columns are model coordinates, in SI units (radians, metres).

Column labels may be coordinate names (``r_elbow_flex``) or OpenSim state paths
(``/jointset/r_elbow/r_elbow_flex/value``); a ``.../value`` path becomes its coordinate name.
A ``.../speed`` path keeps its label and is converted like its coordinate (degrees/s to rad/s).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable

from trajopt.errors import MotionFileError
from trajopt.model.io.tables import Table, read_table

_DEGREES_TO_RADIANS = math.pi / 180.0


def coordinate_name(label: str) -> str:
    """Coordinate named by a column label: ``/jointset/j/c/value`` -> ``c``; a plain name is returned as is."""
    parts = label.strip("/").split("/")
    if label.startswith("/") and len(parts) >= 2 and parts[-1] in ("value", "speed"):
        return parts[-2]
    return label


def read_motion(
    path: str | Path,
    rotational: Iterable[str] = (),
    coordinates: Iterable[str] | None = None,
) -> Table:
    """Read a coordinate motion and convert rotational columns from degrees to radians if the file is in degrees.

    ``rotational`` names the rotational coordinates (from the model); translational columns are
    never scaled. ``coordinates``, if given, selects those columns in that order; a coordinate
    missing from the file raises ``MotionFileError``. The result has ``in_degrees=False``.
    """
    motion = motion_in_radians(read_table(path), rotational)
    return motion if coordinates is None else motion.select(coordinates)


def motion_in_radians(table: Table, rotational: Iterable[str] = ()) -> Table:
    """``table`` (as ``read_table`` returns it) with labels as coordinate names and the ``rotational``
    coordinates' columns (and their speeds) in radians when the table is in degrees."""
    labels = tuple(_renamed(label) for label in table.labels)
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise MotionFileError(f"{table.source}: columns name the same coordinate twice: {duplicates}")
    rotational = set(rotational)
    data = table.data.copy()
    if table.in_degrees:
        for index, label in enumerate(labels):
            if coordinate_name(label) in rotational:
                data[:, index] *= _DEGREES_TO_RADIANS
    metadata = dict(table.metadata, inDegrees="no")
    return Table(table.time, labels, data, False, table.name, metadata, table.source)


def _renamed(label: str) -> str:
    return coordinate_name(label) if label.endswith("/value") else label
