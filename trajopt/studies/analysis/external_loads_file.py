"""Read OpenSim's ExternalLoads ``.xml`` and its data file into
``trajopt.studies.analysis.external_loads.ExternalLoads``.

Per ``ExternalForce``: ``applied_to_body``, ``force_expressed_in_body``, ``point_expressed_in_body``,
``force_identifier``, ``point_identifier``, ``torque_identifier`` (each identifier names the three columns that
start with it, in file order, as OpenSim's ``Storage::getDataForIdentifier``; an empty point or torque
identifier means none). The data file is the ExternalLoads ``datafile`` (it overrides each force's
``data_source_name``), relative to the .xml. Every problem is one line naming the file, the force and the value;
a point of application expressed in ground farther than ``FARTHEST_POINT`` from its origin while the force acts is
an ``ExternalLoadsWarning`` (millimetres read as metres).
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ElementTree
from os import PathLike
from pathlib import Path

import numpy as np

from trajopt.studies.analysis.external_loads import GROUND, ExternalForce, ExternalLoads
from trajopt.errors import TrajoptInputError
from trajopt.model.io.tables import read_table


class ExternalLoadsFileError(TrajoptInputError):
    """An ExternalLoads .xml or its data file cannot be used as written."""


class ExternalLoadsWarning(UserWarning):
    """An ExternalLoads data file holds implausible values (names the file, the force, the time and the value)."""


FARTHEST_POINT = 10.0  # m from ground's origin: no force plate lies farther (a point in mm is hundreds of "metres")
ACTING = 0.05  # of the force's largest magnitude: below it the point of application is noise (often left at 0)


def _check_point(force: ExternalForce, where: str) -> None:
    """Warn when the point of application (in ground) lies farther than ``FARTHEST_POINT`` while the force acts."""
    if force.point is None or force.point_expressed_in != GROUND:
        return
    magnitude = np.linalg.norm(force.force, axis=1)
    acting = magnitude > ACTING * magnitude.max()
    distance = np.where(acting, np.linalg.norm(force.point, axis=1), 0.0)
    i = int(np.argmax(distance))
    if distance[i] > FARTHEST_POINT:
        warnings.warn(f"{where}: the point of application is {distance[i]:.4g} m from the ground's origin at time "
                      f"{force.times[i]:g} s (force {magnitude[i]:.4g} N): millimetres read as metres?",
                      ExternalLoadsWarning, stacklevel=3)


def _text(element, tag: str, default: str = "") -> str:
    child = element.find(tag)
    return default if child is None or child.text is None else child.text.strip()


def _columns(table, identifier: str, where: str, what: str) -> np.ndarray | None:
    if not identifier:
        return None
    labels = [label for label in table.labels if label.startswith(identifier)]
    if len(labels) != 3:
        raise ExternalLoadsFileError(f"{where}: {what}_identifier '{identifier}' matches {len(labels)} columns of "
                                     f"{table.source} ({labels or 'none'}); it must match exactly 3")
    return np.column_stack([table.column(label) for label in labels])


def read_external_loads(path) -> ExternalLoads:
    """The ExternalLoads of an OpenSim ``.xml`` file with their data."""
    path = Path(path)
    if not path.is_file():
        raise ExternalLoadsFileError(f"{path}: ExternalLoads file not found")
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        raise ExternalLoadsFileError(f"{path}: cannot read ExternalLoads: {error}") from None
    loads = root if root.tag == "ExternalLoads" else root.find(".//ExternalLoads")
    if loads is None:
        raise ExternalLoadsFileError(f"{path}: no <ExternalLoads> element")
    datafile = _text(loads, "datafile")
    if not datafile:
        raise ExternalLoadsFileError(f"{path}: ExternalLoads has no <datafile>")
    data_path = (path.parent / datafile) if not Path(datafile).is_absolute() else Path(datafile)
    if not data_path.is_file():
        raise ExternalLoadsFileError(f"{path}: datafile '{datafile}' not found (looked for {data_path})")
    table = read_table(data_path)
    forces = []
    for element in loads.findall(".//ExternalForce"):
        name = element.get("name", "?")
        where = f"{path}: ExternalForce '{name}'"
        body = _text(element, "applied_to_body")
        if not body:
            raise ExternalLoadsFileError(f"{where}: no applied_to_body")
        force = _columns(table, _text(element, "force_identifier"), where, "force")
        if force is None:
            raise ExternalLoadsFileError(f"{where}: no force_identifier")
        forces.append(ExternalForce(
            name=name, body=body,
            force_expressed_in=_text(element, "force_expressed_in_body", GROUND) or GROUND,
            point_expressed_in=_text(element, "point_expressed_in_body", GROUND) or GROUND,
            times=np.asarray(table.time, dtype=float), force=force,
            point=_columns(table, _text(element, "point_identifier"), where, "point"),
            torque=_columns(table, _text(element, "torque_identifier"), where, "torque")))
    if not forces:
        raise ExternalLoadsFileError(f"{path}: ExternalLoads has no ExternalForce")
    for force in forces:
        _check_point(force, f"{path} (data file {data_path}): ExternalForce '{force.name}'")
    return ExternalLoads(tuple(forces), str(path), str(data_path))


def external_loads_from(loads) -> ExternalLoads | None:
    """``loads`` as the studies take it: a path (str or ``os.PathLike``) to an ExternalLoads .xml is read with
    ``read_external_loads``; ``ExternalLoads`` and None pass through. Studies accept files as well as objects."""
    return read_external_loads(loads) if isinstance(loads, (str, PathLike)) else loads
