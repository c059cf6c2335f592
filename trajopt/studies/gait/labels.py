"""OpenSim's state and control paths for the variables of a muscle-driven problem on an .osim model.

Coordinates ``/jointset/<joint>/<coordinate>/value`` (``speed``, ``accel``), muscles ``<muscle path>/activation``
and ``<muscle path>`` for excitations, coordinate actuators ``<actuator path>``, with the component paths the .osim
gives them (``/forceset/<name>`` in the ForceSet, ``/<name>`` in the model's ``<components>``). The joint of a
coordinate is the model's, never typed in (``trajopt.model.musculoskeletal.coordinate_paths``, also imported from here).
"""

from __future__ import annotations

from trajopt.model.musculoskeletal import coordinate_paths
from trajopt.studies.prediction import VariableLabels

__all__ = ["coordinate_paths", "opensim_labels"]


def opensim_labels(model) -> VariableLabels:
    """Labels for ``muscle_driven_problem(model, ..., labels=opensim_labels(model))`` (a ``MusculoskeletalModel``)."""
    multibody = model.multibody
    muscles = tuple(spec.component_path or f"/forceset/{spec.name}" for spec in model.muscle_specs)
    actuators = {a.name: a.component_path or f"/forceset/{a.name}" for a in model.osim.coordinate_actuators}
    return VariableLabels(
        coordinates=model.state_labels[0],
        speeds=model.state_labels[1],
        activations=tuple(f"{m}/activation" for m in muscles),
        excitations=muscles,
        actuator_controls=tuple(actuators[a.name] for a in model.coordinate_actuators),
        accelerations=coordinate_paths(multibody, "accel", multibody.speed_names))
