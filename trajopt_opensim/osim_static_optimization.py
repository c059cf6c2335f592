"""OpenSim's Static Optimization (AnalyzeTool + StaticOptimization analysis) of a motion, timed.

Request:
- ``model`` (path), ``motion`` (coordinates file), ``lowpass_cutoff`` (Hz, -1: none);
- ``degroote`` (bool, optional): replace every muscle by a DeGrooteFregly2016Muscle
  (``DeGrooteFregly2016Muscle.replaceMuscles``) with a rigid tendon (ignore_tendon_compliance);
- ``use_muscle_physiology`` (bool, default true), ``activation_exponent`` (default 2),
  ``reserve_optimal_force`` (> 0: one CoordinateActuator ``reserve_<coordinate>`` per coordinate
  with that optimal force and controls in [-10000, 10000]; <= 0: none),
  ``convergence_criterion`` (default 1e-4, OpenSim's), ``max_iterations`` (default 100),
  ``start_time``/``final_time`` (optional; default the motion's range), ``repeat`` (default 1:
  run the tool this many times and report each run's wall time);
- ``function_based_paths`` (optional FunctionBasedPathSet .xml: every muscle's path replaced, as
  ``ModOpReplacePathsWithFunctionBasedPaths``), ``remove_model_actuators`` (bool: the model's own
  CoordinateActuators removed first), ``no_reserves_for`` (coordinate names without a reserve, e.g. the
  dependent coordinates of couplers), ``external_loads`` (ExternalLoads .xml for the AnalyzeTool).

Result: ``times``, ``labels`` (activation/force columns), ``activations``, ``forces``,
``run_times`` (s, ``AnalyzeTool.run`` only), ``load_time`` (model build and initSystem, s).
"""

import os
import tempfile
import time

import numpy as np
import opensim


def _read_storage(path):
    with open(path) as handle:
        lines = handle.read().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "endheader") + 1
    labels = lines[start].split("\t")
    data = np.array([[float(x) for x in line.split()] for line in lines[start + 1:] if line.strip()])
    return [label.strip() for label in labels[1:]], data[:, 0], data[:, 1:]


def _model(request):
    model = opensim.Model(str(request["model"]))
    if request.get("function_based_paths"):
        processor = opensim.ModelProcessor(model)
        processor.append(opensim.ModOpReplacePathsWithFunctionBasedPaths(str(request["function_based_paths"])))
        model = processor.process()
    if bool(request.get("remove_model_actuators", False)):
        forces = model.updForceSet()
        for name in [forces.get(i).getName() for i in range(forces.getSize())]:
            if opensim.CoordinateActuator.safeDownCast(forces.get(name)) is not None:
                forces.remove(forces.getIndex(name))
    if bool(request.get("degroote", False)):
        opensim.DeGrooteFregly2016Muscle.replaceMuscles(model)
        for muscle in model.getMuscles():
            degroote = opensim.DeGrooteFregly2016Muscle.safeDownCast(muscle)
            degroote.set_ignore_tendon_compliance(True)
    optimal_force = float(request.get("reserve_optimal_force", 1.0))
    skipped = set(str(n) for n in np.atleast_1d(request.get("no_reserves_for", [])))
    if optimal_force > 0:
        coordinate_set = model.getCoordinateSet()
        for i in range(coordinate_set.getSize()):
            name = coordinate_set.get(i).getName()
            if name in skipped:
                continue
            reserve = opensim.CoordinateActuator(name)
            reserve.setName(f"reserve_{name}")
            reserve.setOptimalForce(optimal_force)
            reserve.setMinControl(-10000.0)
            reserve.setMaxControl(10000.0)
            model.addForce(reserve)
    model.finalizeConnections()
    model.initSystem()
    return model


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    start = time.perf_counter()
    model = _model(request)
    load_time = time.perf_counter() - start
    motion = opensim.Storage(str(request["motion"]))
    first = float(request.get("start_time", motion.getFirstTime()))
    last = float(request.get("final_time", motion.getLastTime()))
    run_times = []
    with tempfile.TemporaryDirectory(prefix="osim_so_") as folder:
        model_file = os.path.join(folder, "model.osim")
        model.printToXML(model_file)
        setup = opensim.AnalyzeTool()
        setup.setName("so")
        setup.setModelFilename(model_file)
        setup.setCoordinatesFileName(os.path.abspath(str(request["motion"])))
        setup.setLowpassCutoffFrequency(float(request.get("lowpass_cutoff", -1.0)))
        setup.setInitialTime(first)
        setup.setFinalTime(last)
        setup.setResultsDir(folder)
        if request.get("external_loads"):
            setup.setExternalLoadsFileName(os.path.abspath(str(request["external_loads"])))
        analysis = opensim.StaticOptimization()
        analysis.setName("StaticOptimization")
        analysis.setUseModelForceSet(True)
        analysis.setActivationExponent(float(request.get("activation_exponent", 2.0)))
        analysis.setUseMusclePhysiology(bool(request.get("use_muscle_physiology", True)))
        analysis.setConvergenceCriterion(float(request.get("convergence_criterion", 1e-4)))
        analysis.setMaxIterations(int(request.get("max_iterations", 100)))
        analysis.setStartTime(first)
        analysis.setEndTime(last)
        setup.getAnalysisSet().cloneAndAppend(analysis)
        setup_file = os.path.join(folder, "setup.xml")
        setup.printToXML(setup_file)
        for _ in range(int(request.get("repeat", 1))):
            tool = opensim.AnalyzeTool(setup_file)  # loads the model and the coordinates
            started = time.perf_counter()
            tool.run()
            run_times.append(time.perf_counter() - started)
        labels, times, activations = _read_storage(os.path.join(folder, "so_StaticOptimization_activation.sto"))
        force_labels, _, forces = _read_storage(os.path.join(folder, "so_StaticOptimization_force.sto"))
    forces = forces[:, [force_labels.index(label) for label in labels]]
    return {
        "times": times,
        "labels": np.array(labels),
        "activations": activations,
        "forces": forces,
        "run_times": np.array(run_times),
        "load_time": load_time,
    }
