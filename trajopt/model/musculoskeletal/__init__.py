"""A musculoskeletal model: an .osim's multibody with DeGroote muscles along their paths (``model``), and the
model-processing operators that edit an .osim before it is built, as Moco's ModelProcessor (``operators``)."""

from trajopt.model.musculoskeletal.model import (
    MUSCLE_DRIVEN_MODEL_MEMBERS,
    CoordinateActuatorSpec,
    MuscleDrivenModel,
    MusclePaths,
    MusculoskeletalModel,
    degroote_parameters,
)
from trajopt.model.musculoskeletal.state_labels import coordinate_paths, named_state_labels, opensim_state_labels

__all__ = ["CoordinateActuatorSpec", "MUSCLE_DRIVEN_MODEL_MEMBERS", "MuscleDrivenModel", "MusclePaths",
           "MusculoskeletalModel", "coordinate_paths", "degroote_parameters", "named_state_labels",
           "opensim_state_labels"]
