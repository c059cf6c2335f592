"""OpenSim 4.6's PolynomialPathFitter on given configurations (timed).

Request: ``model`` (path), ``coordinates`` (names), ``configurations`` (frames x coordinates, radians/metres;
every other unlocked, independent coordinate stays at its default), ``output_directory``,
``samples_per_frame`` (default 1), ``bounds_degrees`` (half-width of the per-frame sampling band, default
1e-6: the fitter then fits essentially the given configurations), ``minimum_order`` (2), ``maximum_order``
(6), ``length_tolerance`` (1e-4), ``moment_arm_tolerance`` (1e-4), ``threads`` (1).

Result: ``path_set`` (the FunctionBasedPathSet .xml written), ``seconds`` (wall time of ``run()``: sampling the
geometric paths at the frames and at the samples, filtering, fitting, evaluating), ``orders`` and
``coefficients`` per path (``paths``: names).
"""

import glob
import os
import time

import numpy as np
import opensim


def run(request):
    model_file = os.path.abspath(str(request["model"]))
    model = opensim.Model(model_file)
    model.initSystem()
    names = [str(c) for c in np.atleast_1d(request["coordinates"])]
    values = np.atleast_2d(np.asarray(request["configurations"], dtype=float))
    dependent = set()
    for constraint in model.getConstraintSet():
        coupler = opensim.CoordinateCouplerConstraint.safeDownCast(constraint)
        if coupler is not None and coupler.get_isEnforced():
            dependent.add(coupler.getDependentCoordinateName())
    labels, columns = [], []
    coordinates = model.getCoordinateSet()
    for i in range(coordinates.getSize()):
        coordinate = coordinates.get(i)
        name = coordinate.getName()
        if name in dependent or (coordinate.get_locked() and name not in names):
            continue
        labels.append(f"{coordinate.getAbsolutePathString()}/value")
        columns.append(values[:, names.index(name)] if name in names
                       else np.full(len(values), coordinate.getDefaultValue()))
    table = opensim.TimeSeriesTable()
    table.setColumnLabels(labels)
    data = np.column_stack(columns)
    for k in range(len(values)):
        table.appendRow(float(k), opensim.RowVector(data[k].tolist()))
    table.addTableMetaDataString("inDegrees", "no")
    out = os.path.abspath(str(request["output_directory"]))
    os.makedirs(out, exist_ok=True)
    fitter = opensim.PolynomialPathFitter()
    fitter.setModel(opensim.ModelProcessor(model_file))
    fitter.setCoordinateValues(opensim.TableProcessor(table))
    fitter.setOutputDirectory(out)
    bound = float(request.get("bounds_degrees", 1e-6))
    fitter.setGlobalCoordinateSamplingBounds(opensim.Vec2(-bound, bound))
    fitter.setNumSamplesPerFrame(int(request.get("samples_per_frame", 1)))
    fitter.setMinimumPolynomialOrder(int(request.get("minimum_order", 2)))
    fitter.setMaximumPolynomialOrder(int(request.get("maximum_order", 6)))
    fitter.setPathLengthTolerance(float(request.get("length_tolerance", 1e-4)))
    fitter.setMomentArmTolerance(float(request.get("moment_arm_tolerance", 1e-4)))
    fitter.setNumParallelThreads(int(request.get("threads", 1)))
    start = time.perf_counter()
    fitter.run()
    seconds = time.perf_counter() - start
    files = glob.glob(os.path.join(out, "*_FunctionBasedPathSet.xml"))
    return {"path_set": files[0], "seconds": seconds}
