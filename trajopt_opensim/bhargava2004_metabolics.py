"""OpenSim's Bhargava et al. (2004) muscle metabolic rates of a model's muscles at given states, per option set.

The model (an .osim file whose muscles are DeGrooteFregly2016Muscle with rigid tendons, e.g. 2D_gait.osim) gets,
for every option set k, one ``Bhargava2004SmoothedMuscleMetabolics`` per muscle (OpenSim reports the separate
heat and work rates only summed over a component's muscles, so one muscle per component gives them per muscle)
and one holding all muscles (whole-body total with the basal rate). With ``probe_constant_maintenance``, two
non-smooth ``Bhargava2004MuscleMetabolicsProbe``s whose maintenance-rate fiber-length dependence is 1 everywhere
(the smoothed component always applies its curve): all rates on (per-muscle totals) and maintenance
only. The probes find muscles in the ForceSet only, so muscles listed under ``<components>`` (as in 2D_gait.osim)
are moved into the ForceSet of a temporary copy of the file.

Request:

- ``model_file``; ``coordinate_names`` and ``q``, ``u`` (states x coordinates, in those names' order);
  ``activations``, ``excitations`` (states x muscles, in ``muscle_names`` order);
- per muscle (``muscle_names`` order): ``ratio_slow_twitch_fibers``, ``specific_tension``, ``muscle_mass`` (NaN:
  computed from Fmax, optimal fiber length, specific tension and density);
- per option set (arrays of one entry per set): ``use_smoothing``, ``smoothing_type`` ("tanh"/"huber"),
  ``velocity_smoothing``, ``power_smoothing``, ``heat_rate_smoothing``, ``enforce_minimum_heat_rate_per_muscle``,
  ``use_force_dependent_shortening_prop_constant``, ``include_negative_mechanical_work``,
  ``forbid_negative_total_power``, ``basal_coefficient``, ``basal_exponent``, ``muscle_effort_scaling_factor``.

Result: the muscle quantities OpenSim used (states x muscles: excitation, activation, fiber_length,
normalized_fiber_length, fiber_velocity, active_fiber_force, passive_fiber_force (elastic + damping),
active_force_length_multiplier, musculotendon_length, lengthening_speed), per muscle ``max_isometric_force``,
``optimal_fiber_length``, ``metabolic_muscle_mass``; ``body_mass``; per set k ``set{k}_{term}`` (states x
muscles) for term in activation_heat_rate, maintenance_heat_rate, shortening_heat_rate, mechanical_work_rate,
muscle_total_rate, and ``set{k}_total_metabolic_rate`` (states, all muscles + basal); with the probes
``probe_total_rate`` and ``probe_maintenance_heat_rate`` (states x muscles).
"""

import tempfile
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import opensim

from trajopt_opensim._model_state import all_muscles

TERMS = (
    ("activation_heat_rate", "getTotalActivationRate"),
    ("maintenance_heat_rate", "getTotalMaintenanceRate"),
    ("shortening_heat_rate", "getTotalShorteningRate"),
    ("mechanical_work_rate", "getTotalMechanicalWorkRate"),
)
SET_OPTIONS = (
    ("enforce_minimum_heat_rate_per_muscle", bool),
    ("use_force_dependent_shortening_prop_constant", bool),
    ("include_negative_mechanical_work", bool),
    ("forbid_negative_total_power", bool),
    ("use_smoothing", bool),
    ("smoothing_type", str),
    ("velocity_smoothing", float),
    ("power_smoothing", float),
    ("heat_rate_smoothing", float),
    ("basal_coefficient", float),
    ("basal_exponent", float),
    ("muscle_effort_scaling_factor", float),
)


DENSITY = 1059.7  # OpenSim's default muscle density (kg/m^3)
QUANTITIES = (
    ("excitation", "getControl"),
    ("activation", "getActivation"),
    ("fiber_length", "getFiberLength"),
    ("normalized_fiber_length", "getNormalizedFiberLength"),
    ("fiber_velocity", "getFiberVelocity"),
    ("active_fiber_force", "getActiveFiberForce"),
    ("passive_fiber_force", "getPassiveFiberForce"),
    ("active_force_length_multiplier", "getActiveForceLengthMultiplier"),
    ("musculotendon_length", "getLength"),
    ("lengthening_speed", "getLengtheningSpeed"),
)


def set_state(model, state, coordinates, muscles, request, i):
    """Row i of the request's q, u, activations and excitations (controls) set in ``state``, realized to Dynamics."""
    for coordinate, value, speed in zip(coordinates, np.atleast_2d(request["q"])[i], np.atleast_2d(request["u"])[i]):
        coordinate.setValue(state, float(value), False)
        coordinate.setSpeedValue(state, float(speed))
    for muscle, activation in zip(muscles, np.atleast_2d(request["activations"])[i]):
        muscle.setActivation(state, float(activation))
    model.realizeVelocity(state)
    controls = opensim.Vector(model.getNumControls(), 0.0)
    for muscle, excitation in zip(muscles, np.atleast_2d(request["excitations"])[i]):
        muscle.setControls(opensim.Vector(1, float(excitation)), controls)
    model.setControls(state, controls)
    model.realizeDynamics(state)


def read_quantities(state, muscles, result, i):
    """The muscle quantities the metabolic models use, into row i of ``result[name]`` (states x muscles)."""
    for j, muscle in enumerate(muscles):
        for name, getter in QUANTITIES:
            result[name][i, j] = getattr(muscle, getter)(state)


def muscles_in_force_set(model_file, folder):
    """A copy of the .osim whose muscles under <components> sit in the ForceSet instead (the metabolic probes
    find their muscles only there)."""
    tree = ElementTree.parse(model_file)
    model = tree.getroot().find("Model")
    components = model.find("components")
    objects = model.find("ForceSet").find("objects")
    if components is not None:
        for element in list(components):
            if element.tag.endswith("Muscle"):
                components.remove(element)
                objects.append(element)
    path = Path(folder) / Path(model_file).name
    tree.write(path)
    return path


def _probe(name, maintenance_only, muscles, request):
    """The non-smooth probe with the maintenance rate's fiber-length dependence 1 everywhere; muscle masses given
    (the smoothed component's formula Fmax / specific_tension * density * optimal fiber length when NaN)."""
    probe = opensim.Bhargava2004MuscleMetabolicsProbe(not maintenance_only, True, not maintenance_only,
                                                      not maintenance_only, not maintenance_only)
    probe.setName(name)
    probe.set_report_total_metabolics_only(False)
    curve = opensim.PiecewiseLinearFunction()
    for x in (0.0, 1.0, 2.0):
        curve.addPoint(x, 1.0)
    probe.set_normalized_fiber_length_dependence_on_maintenance_rate(curve)
    for index, muscle in enumerate(muscles):
        mass = float(request["muscle_mass"][index])
        if np.isnan(mass):
            mass = (muscle.getMaxIsometricForce() / float(request["specific_tension"][index]) * DENSITY
                    * muscle.getOptimalFiberLength())
        probe.addMuscle(muscle.getName(), float(request["ratio_slow_twitch_fibers"][index]), 40.0, 133.0, 74.0,
                        111.0, mass)
    return probe


def _component(name, k, muscles, request):
    metabolics = opensim.Bhargava2004SmoothedMuscleMetabolics()
    metabolics.setName(name)
    for option, kind in SET_OPTIONS:
        getattr(metabolics, f"set_{option}")(kind(np.atleast_1d(request[option])[k]))
    for index, muscle in muscles:
        mass = float(request["muscle_mass"][index])
        metabolics.addMuscle(muscle.getName(), muscle, float(request["ratio_slow_twitch_fibers"][index]),
                             float(request["specific_tension"][index]), mass)
    return metabolics


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    with tempfile.TemporaryDirectory(prefix="bhargava2004_") as folder:
        model = opensim.Model(str(muscles_in_force_set(str(request["model_file"]), folder)))
    model.finalizeConnections()
    found = all_muscles(model)
    muscle_names = [str(n) for n in np.atleast_1d(request["muscle_names"])]
    muscles = [found[name] for name in muscle_names]
    sets = len(np.atleast_1d(request["use_smoothing"]))
    per_muscle, whole = {}, []
    for k in range(sets):
        for index, muscle in enumerate(muscles):
            component = _component(f"metabolics_{k}_{muscle.getName()}", k, [(index, muscle)], request)
            model.addComponent(component)
            per_muscle[k, index] = component.getName()
        component = _component(f"metabolics_{k}_all", k, list(enumerate(muscles)), request)
        model.addComponent(component)
        whole.append(component.getName())
    probe_terms = ("total_rate", "maintenance_heat_rate") if bool(request.get("probe_constant_maintenance")) else ()
    for term in probe_terms:
        model.addProbe(_probe(f"probe_{term}", term == "maintenance_heat_rate", muscles, request))
    model.finalizeConnections()
    state = model.initSystem()

    # Re-fetch the components and muscles from the initialized model.
    muscles = [all_muscles(model)[name] for name in muscle_names]
    lookup = {key: opensim.Bhargava2004SmoothedMuscleMetabolics.safeDownCast(model.getComponent(name))
              for key, name in per_muscle.items()}
    totals = [opensim.Bhargava2004SmoothedMuscleMetabolics.safeDownCast(model.getComponent(name)) for name in whole]
    probes = {term: opensim.Bhargava2004MuscleMetabolicsProbe.safeDownCast(model.getProbeSet().get(f"probe_{term}"))
              for term in probe_terms}
    if any(not probe.isEnabled() for probe in probes.values()):
        raise RuntimeError("a Bhargava2004MuscleMetabolicsProbe disabled itself (muscles not found?)")
    coordinate_set = model.getCoordinateSet()
    coordinates = [coordinate_set.get(str(name)) for name in np.atleast_1d(request["coordinate_names"])]
    activations = np.atleast_2d(request["activations"])
    n, m = activations.shape
    result = {name: np.zeros((n, m)) for name, _ in QUANTITIES}
    for term in probe_terms:
        result[f"probe_{term}"] = np.zeros((n, m))
    for k in range(sets):
        for term, _ in TERMS:
            result[f"set{k}_{term}"] = np.zeros((n, m))
        result[f"set{k}_muscle_total_rate"] = np.zeros((n, m))
        result[f"set{k}_total_metabolic_rate"] = np.zeros(n)
    for i in range(n):
        set_state(model, state, coordinates, muscles, request, i)
        read_quantities(state, muscles, result, i)
        for k in range(sets):
            for j, muscle in enumerate(muscles):
                component = lookup[k, j]
                for term, getter in TERMS:
                    result[f"set{k}_{term}"][i, j] = getattr(component, getter)(state)
                result[f"set{k}_muscle_total_rate"][i, j] = component.getMuscleMetabolicRate(
                    state, muscle.getAbsolutePathString())
            result[f"set{k}_total_metabolic_rate"][i] = totals[k].getTotalMetabolicRate(state)
        for term, probe in probes.items():
            values = probe.getProbeOutputs(state)
            for j in range(m):
                result[f"probe_{term}"][i, j] = values.get(2 + j)
    result["body_mass"] = model.getTotalMass(state)
    result["max_isometric_force"] = np.array([mu.getMaxIsometricForce() for mu in muscles])
    result["optimal_fiber_length"] = np.array([mu.getOptimalFiberLength() for mu in muscles])
    first = totals[0] if totals else None
    if first is not None:
        result["metabolic_muscle_mass"] = np.array(
            [first.get_muscle_parameters(j).getMuscleMass() for j in range(m)])
    return result
