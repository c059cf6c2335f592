"""Column labels of a model's states in solution tables, distinct for coordinates and speeds.

An .osim model's states are OpenSim's state paths, ``/jointset/<joint>/<coordinate>/value`` and ``.../speed``
(the joint of a coordinate is the model's, never typed in), so a written solution.sto reads back in OpenSim and
Moco; a hand-built model's are its coordinate names and ``<speed name>_speed``. Either way no two columns share a
label, which OpenSim's tables require.
"""

from __future__ import annotations

from trajopt.errors import TrajoptInputError


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


def opensim_state_labels(multibody) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(coordinate labels, speed labels) as OpenSim's state paths (``.../value``, ``.../speed``)."""
    return coordinate_paths(multibody, "value"), coordinate_paths(multibody, "speed", multibody.speed_names)


def named_state_labels(multibody) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(coordinate labels, speed labels) of a hand-built model: the coordinate names and ``<speed name>_speed``."""
    return tuple(multibody.coordinate_names), tuple(f"{n}_speed" for n in multibody.speed_names)
