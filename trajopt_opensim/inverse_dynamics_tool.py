"""OpenSim's InverseDynamicsTool on a model, a coordinates file and optional ExternalLoads, unfiltered.

Request: model, coordinates (file; state-path labels are reduced to coordinate names),
external_loads (xml, optional), initial_time, final_time,
cutoff (Hz, optional; -1 or absent: no filter), exclude (force names excluded besides
"Muscles", optional), disable (force names switched off in a copy of the model, optional).
Result: time, labels, generalized_forces (frames x labels)
as the tool writes them (``<coordinate>_moment`` / ``_force``), wall_seconds.
"""

import os
import tempfile
import time

import numpy as np
import opensim


def _plain_names(path, folder):
    """A copy of a coordinates file whose state-path labels (/jointset/<joint>/<coordinate>/value) become
    coordinate names: the tool's Storage matches columns by coordinate name only."""
    table = opensim.TimeSeriesTable(os.path.abspath(path))
    labels = list(table.getColumnLabels())
    if not any(label.startswith("/") for label in labels):
        return os.path.abspath(path)
    for label in labels:
        if label.endswith("/speed"):
            table.removeColumn(label)
    names = opensim.StdVectorString()
    for label in table.getColumnLabels():
        names.append(label.split("/")[-2] if label.endswith("/value") else label)
    table.setColumnLabels(names)
    copy = os.path.join(folder, "coordinates.sto")
    opensim.STOFileAdapter.write(table, copy)
    return copy


def _without_forces(path, names, folder):
    """The model file, or a copy whose named forces do not apply (forces_to_exclude does not reach them all)."""
    names = [str(n) for n in np.atleast_1d(names) if str(n)]
    if not names:
        return os.path.abspath(path)
    model = opensim.Model(os.path.abspath(path))
    model.finalizeConnections()
    paths = [c.getAbsolutePathString() for c in model.getComponentsList() if c.getName() in names]
    for component in paths:
        opensim.Force.safeDownCast(model.updComponent(component)).set_appliesForce(False)
    copy = os.path.join(folder, "model.osim")
    model.printToXML(copy)
    return copy


def run(request):
    folder = tempfile.mkdtemp(prefix="trajopt_id_")
    # The model by file name: a model given with setModel gets the ExternalLoads added a second time by run().
    tool = opensim.InverseDynamicsTool()
    tool.setModelFileName(_without_forces(str(request["model"]), request.get("disable", []), folder))
    tool.setCoordinatesFileName(_plain_names(str(request["coordinates"]), folder))
    if request.get("external_loads"):
        tool.setExternalLoadsFileName(os.path.abspath(str(request["external_loads"])))
    tool.setLowpassCutoffFrequency(float(request.get("cutoff", -1.0)))
    tool.setStartTime(float(request["initial_time"]))
    tool.setEndTime(float(request["final_time"]))
    tool.setResultsDir(folder)
    tool.setOutputGenForceFileName("id.sto")
    excluded = opensim.ArrayStr()
    for name in ["Muscles"] + [str(n) for n in np.atleast_1d(request.get("exclude", [])) if str(n)]:
        excluded.append(name)
    tool.setExcludedForces(excluded)
    started = time.perf_counter()
    tool.run()
    wall = time.perf_counter() - started
    table = opensim.TimeSeriesTable(os.path.join(folder, "id.sto"))
    return {"time": np.asarray(table.getIndependentColumn()),
            "labels": np.array(list(table.getColumnLabels()), dtype=str),
            "generalized_forces": table.getMatrix().to_numpy(), "wall_seconds": wall}
