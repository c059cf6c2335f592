"""Time-series tables: read OpenSim .mot/.sto (both header styles) and CSV, write .sto and CSV.

Header conventions follow OpenSim 4.6's ``Storage`` reader (OpenSim/Common/Storage.cpp,
``Storage::Storage(fileName)`` and ``Storage::parseHeaders``):

- header lines are ``key=value`` or ``key value``; the first line may be a bare name;
  ``nRows``/``nr``/``datarows`` and ``nColumns``/``nc``/``datacolumns`` count rows and columns
  (columns include time); the header ends at a line ``endheader``;
- ``inDegrees=yes|y`` (case-insensitive) means angles are in degrees, any other value radians;
- a file without ``version`` (the older SIMM header) ending in ``.mot`` holds degrees ("Motion
  files from SIMM are in degrees"); OpenSim applies that even over an explicit ``inDegrees=no``,
  here an explicit ``inDegrees`` wins;
- otherwise angles are in radians (``Storage::setNull`` sets ``_inDegrees = false``).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Mapping

import numpy as np

from trajopt.errors import MotionFileError
from trajopt.table import Table

# Header keys that give the number of rows / columns (OpenSim accepts all three spellings).
_ROW_KEYS = ("nRows", "nr", "datarows")
_COLUMN_KEYS = ("nColumns", "nc", "datacolumns")
_HEADER_SPLIT = re.compile(r"[ \t=]+")


def read_table(path: str | Path) -> Table:
    """Read an OpenSim ``.mot``/``.sto`` file (either header style) or a ``.csv`` file.

    Values are returned as stored (no unit conversion; see ``read_motion``). Malformed files
    raise ``MotionFileError`` naming the file, line and problem.
    """
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise MotionFileError(f"{path}: cannot read file ({error})") from None
    if path.suffix.lower() == ".csv":
        return _parse_csv(path, lines)
    return _parse_storage(path, lines)


def _parse_storage(path: Path, lines: list[str]) -> Table:
    metadata: dict[str, str] = {}
    name = ""
    end = None
    for number, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            continue
        if line == "endheader":
            end = number
            break
        parts = _HEADER_SPLIT.split(line, maxsplit=1)
        key, value = parts[0], (parts[1] if len(parts) > 1 else "")
        if number == 0 and "=" not in line and key not in ("name",) + _ROW_KEYS + _COLUMN_KEYS:
            name = line  # .sto files start with a bare name line
        elif key == "name":
            name = value
        else:
            metadata[key] = value
    if end is None:
        raise MotionFileError(f"{path}: line {len(lines)}: no 'endheader' line ends the header")
    if metadata.get("DataType", "double") != "double":
        raise MotionFileError(f"{path}: header DataType={metadata['DataType']}: "
                              "only scalar (double) columns are supported")

    label_line = end + 1
    while label_line < len(lines) and not lines[label_line].strip():
        label_line += 1
    if label_line >= len(lines):
        raise MotionFileError(f"{path}: line {end + 1}: no column labels after 'endheader'")
    labels = lines[label_line].split("\t") if "\t" in lines[label_line] else lines[label_line].split()
    labels = [label.strip() for label in labels if label.strip()]
    time, data = _parse_rows(path, lines, label_line, labels, separator=None)

    expected_columns = _header_count(path, metadata, _COLUMN_KEYS)
    # OpenSim 4's TimeSeriesTable files (version=3) carry nColumns as information only: OpenSim's own
    # STOFileAdapter and Storage read Moco's example3DWalking coordinates.sto, whose header says 40 for 32.
    informational = metadata.get("version", "").strip() == "3"
    if expected_columns is not None and expected_columns != len(labels) and not informational:
        raise MotionFileError(
            f"{path}: line {label_line + 1}: header says {expected_columns} columns but {len(labels)} labels were found"
        )
    expected_rows = _header_count(path, metadata, _ROW_KEYS)
    if expected_rows is not None and expected_rows != time.size:
        raise MotionFileError(f"{path}: header says {expected_rows} rows but {time.size} data rows were found")

    if "inDegrees" in metadata:
        in_degrees = metadata["inDegrees"].strip().lower() in ("yes", "y")
    else:
        # OpenSim's Storage: files without a version (SIMM header) ending in .mot are in degrees.
        in_degrees = "version" not in metadata and path.suffix.lower() == ".mot"
    return Table(time, tuple(labels[1:]), data, in_degrees, name, metadata, str(path))


def _parse_csv(path: Path, lines: list[str]) -> Table:
    label_line = 0
    while label_line < len(lines) and (not lines[label_line].strip() or lines[label_line].lstrip().startswith("#")):
        label_line += 1
    if label_line >= len(lines):
        raise MotionFileError(f"{path}: line {len(lines)}: no header row of column labels")
    labels = [label.strip() for label in lines[label_line].split(",")]
    time, data = _parse_rows(path, lines, label_line, labels, separator=",")
    return Table(time, tuple(labels[1:]), data, False, path.stem, {}, str(path))


def _parse_rows(path: Path, lines, label_line: int, labels: list[str], separator) -> tuple[np.ndarray, np.ndarray]:
    """Parse data rows after ``label_line``: checks labels, counts, numbers, NaN and time order."""
    line_number = label_line + 1  # 1-based number of the label line
    if not labels or labels[0].lower() != "time":
        raise MotionFileError(f"{path}: line {line_number}: first column must be 'time', "
                              f"got '{labels[0] if labels else ''}'")
    duplicates = sorted({label for label in labels if labels.count(label) > 1})
    if duplicates:
        raise MotionFileError(f"{path}: line {line_number}: duplicate column labels {duplicates}")
    rows, numbers = [], []
    for index in range(label_line + 1, len(lines)):
        text = lines[index].strip()
        if not text:
            continue
        tokens = text.split(separator) if separator else text.split()
        if len(tokens) != len(labels):
            raise MotionFileError(
                f"{path}: line {index + 1}: {len(tokens)} values but {len(labels)} columns ({labels[0]}, ...)"
            )
        try:
            row = [float(token) for token in tokens]
        except ValueError:
            bad = next(token for token in tokens if not _is_float(token))
            raise MotionFileError(f"{path}: line {index + 1}: '{bad.strip()}' is not a number") from None
        for label, value in zip(labels, row):
            if not math.isfinite(value):
                raise MotionFileError(f"{path}: line {index + 1}: column '{label}' is {value} at time {row[0]:g} s")
        if rows and row[0] <= rows[-1][0]:
            raise MotionFileError(
                f"{path}: line {index + 1}: time {row[0]!r} does not increase (previous row, line "
                f"{numbers[-1]}, has time {rows[-1][0]!r})"
            )
        rows.append(row)
        numbers.append(index + 1)
    if not rows:
        raise MotionFileError(f"{path}: line {line_number}: no data rows after the column labels")
    array = np.asarray(rows)
    return array[:, 0], array[:, 1:]


def _is_float(token: str) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def _header_count(path: Path, metadata: Mapping[str, str], keys) -> int | None:
    for key in keys:
        if key in metadata:
            try:
                return int(metadata[key].split()[0])
            except (ValueError, IndexError):
                raise MotionFileError(f"{path}: header {key}={metadata[key]!r} is not an integer") from None
    return None


def write_sto(path: str | Path, table: Table) -> Path:
    """Write ``table`` as an OpenSim version-1 storage file (``.sto`` or ``.mot``) at full precision."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = [
        table.name or path.stem,
        "version=1",
        f"nRows={table.num_frames}",
        f"nColumns={len(table.labels) + 1}",
        f"inDegrees={'yes' if table.in_degrees else 'no'}",
        "endheader",
        "\t".join(("time",) + table.labels),
    ]
    rows = np.column_stack([table.time, table.data])
    body = ["\t".join(_format(value) for value in row) for row in rows]
    path.write_text("\n".join(header + body) + "\n")
    return path


def write_csv(path: str | Path, table: Table) -> Path:
    """Write ``table`` as CSV: a header row ``time,label,...`` then one row per frame."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = np.column_stack([table.time, table.data])
    lines = [",".join(("time",) + table.labels)] + [",".join(_format(value) for value in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def _format(value: float) -> str:
    # 17 significant digits round-trip every double exactly.
    return f"{value:.17g}"
