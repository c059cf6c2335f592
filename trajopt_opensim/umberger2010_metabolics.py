"""OpenSim's Umberger (2010) muscle metabolic rates (``Umberger2010MuscleMetabolicsProbe``) at given states.

The probe finds its muscles in the model's ForceSet only, so muscles listed under ``<components>`` (as in
2D_gait.osim) are moved into the ForceSet of a temporary copy of the file first. For every option set k, four
probes with every muscle: all rates on (per-muscle totals, and the basal rate), and one with only the
activation-maintenance, only the shortening, only the mechanical work rate on (those report that term per muscle;
the negative-power clamp still raises the shortening term as with all rates on).

Request: as ``bhargava2004_metabolics`` (``model_file``, ``coordinate_names``, ``q``, ``u``, ``muscle_names``,
``activations``, ``excitations``), per muscle ``ratio_slow_twitch_fibers`` and ``muscle_mass`` (kg, given), and
per option set (one entry per set) ``aerobic_factor``, ``use_Bhargava_recruitment_model``,
``include_negative_mechanical_work``, ``forbid_negative_total_power``, ``enforce_minimum_heat_rate_per_muscle``,
``basal_coefficient``, ``basal_exponent``, ``muscle_effort_scaling_factor``.

Result: the muscle quantities of ``bhargava2004_metabolics``; per set k ``set{k}_{term}`` (states x muscles) for
activation_maintenance_heat_rate, shortening_heat_rate, mechanical_work_rate, total_rate, and
``set{k}_basal_rate`` (states).
"""

import tempfile

import numpy as np
import opensim

from trajopt_opensim._model_state import all_muscles
from trajopt_opensim.bhargava2004_metabolics import (
    QUANTITIES,
    muscles_in_force_set,
    read_quantities,
    set_state,
)

SET_OPTIONS = (
    ("aerobic_factor", float),
    ("use_Bhargava_recruitment_model", bool),
    ("include_negative_mechanical_work", bool),
    ("forbid_negative_total_power", bool),
    ("enforce_minimum_heat_rate_per_muscle", bool),
    ("basal_coefficient", float),
    ("basal_exponent", float),
    ("muscle_effort_scaling_factor", float),
)
# (term, activation_maintenance_rate_on, shortening_rate_on, mechanical_work_rate_on)
PROBES = (
    ("total_rate", True, True, True),
    ("activation_maintenance_heat_rate", True, False, False),
    ("shortening_heat_rate", False, True, False),
    ("mechanical_work_rate", False, False, True),
)


def _probe(name, k, switches, muscle_names, request):
    probe = opensim.Umberger2010MuscleMetabolicsProbe(switches[0], switches[1], switches[0] and switches[1]
                                                      and switches[2], switches[2])
    probe.setName(name)
    probe.set_report_total_metabolics_only(False)
    for option, kind in SET_OPTIONS:
        getattr(probe, f"set_{option}")(kind(np.atleast_1d(request[option])[k]))
    for index, muscle in enumerate(muscle_names):
        probe.addMuscle(muscle, float(request["ratio_slow_twitch_fibers"][index]), float(request["muscle_mass"][index]))
    return probe


def run(request):
    opensim.Logger.setLevelString("error")
    opensim.Logger.removeFileSink()
    muscle_names = [str(n) for n in np.atleast_1d(request["muscle_names"])]
    sets = len(np.atleast_1d(request["aerobic_factor"]))
    with tempfile.TemporaryDirectory(prefix="umberger2010_") as folder:
        model = opensim.Model(str(muscles_in_force_set(str(request["model_file"]), folder)))
    names = {}
    for k in range(sets):
        for term, *switches in PROBES:
            names[k, term] = f"umberger_{k}_{term}"
            model.addProbe(_probe(names[k, term], k, switches, muscle_names, request))
    model.finalizeConnections()
    state = model.initSystem()
    found = all_muscles(model)
    muscles = [found[name] for name in muscle_names]
    probes = {key: opensim.Umberger2010MuscleMetabolicsProbe.safeDownCast(model.getProbeSet().get(name))
              for key, name in names.items()}
    disabled = [name for name, probe in zip(names.values(), probes.values()) if not probe.isEnabled()]
    if disabled:
        raise RuntimeError(f"disabled probes (muscles not found?): {disabled}")
    coordinate_set = model.getCoordinateSet()
    coordinates = [coordinate_set.get(str(name)) for name in np.atleast_1d(request["coordinate_names"])]
    n, m = np.atleast_2d(request["activations"]).shape
    result = {name: np.zeros((n, m)) for name, _ in QUANTITIES}
    for k in range(sets):
        for term, *_ in PROBES:
            result[f"set{k}_{term}"] = np.zeros((n, m))
        result[f"set{k}_basal_rate"] = np.zeros(n)
    for i in range(n):
        set_state(model, state, coordinates, muscles, request, i)
        read_quantities(state, muscles, result, i)
        for (k, term), probe in probes.items():
            values = probe.getProbeOutputs(state)
            for j in range(m):
                result[f"set{k}_{term}"][i, j] = values.get(2 + j)
            if term == "total_rate":
                result[f"set{k}_basal_rate"][i] = values.get(1)
    result["body_mass"] = model.getTotalMass(state)
    return result
