"""OpenSim's state and control paths for the variables of a muscle-driven problem on an .osim model.

Coordinates ``/jointset/<joint>/<coordinate>/value`` (``speed``, ``accel``), muscles ``<muscle path>/activation``
and ``<muscle path>`` for excitations, coordinate actuators ``<actuator path>``, with the component paths the .osim
gives them (``/forceset/<name>`` in the ForceSet, ``/<name>`` in the model's ``<components>``). The joint of a
coordinate is the model's, never typed in.
"""

from __future__ import annotations

from trajopt.errors import TrajoptInputError
from trajopt.prediction import VariableLabels


def coordinate_paths(multibody, kind: str = "value", names=None) -> tuple[str, ...]:
    """``/jointset/<joint>/<coordinate>/<kind>`` for each coordinate (``names``: default all of q)."""
    joint_of = {}
    for joint in multibody.joints:
        for name in (*joint.coordinate_names, *joint.speed_names):
            joint_of[name] = joint.name
    names = tuple(multibody.coordinate_names if names is None else names)
    missing = [n for n in names if n not in joint_of]
    if missing:
        raise TrajoptInputError(f"OpenSim labels: no joint owns {missing}")
    return tuple(f"/jointset/{joint_of[n]}/{n}/{kind}" for n in names)


def opensim_labels(model) -> VariableLabels:
    """Labels for ``muscle_driven_problem(model, ..., labels=opensim_labels(model))`` (a ``MusculoskeletalModel``)."""
    multibody = model.multibody
    muscles = tuple(spec.component_path or f"/forceset/{spec.name}" for spec in model.muscle_specs)
    actuators = {a.name: a.component_path or f"/forceset/{a.name}" for a in model.osim.coordinate_actuators}
    return VariableLabels(
        coordinates=coordinate_paths(multibody),
        speeds=coordinate_paths(multibody, "speed", multibody.speed_names),
        activations=tuple(f"{m}/activation" for m in muscles),
        excitations=muscles,
        actuator_controls=tuple(actuators[a.name] for a in model.coordinate_actuators),
        accelerations=coordinate_paths(multibody, "accel", multibody.speed_names))
