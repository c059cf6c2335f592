"""OpenSim 4 model import: ``load_osim(path)`` reads a .osim file (without OpenSim) into trajopt."""

from trajopt.model.osim.build import BodyPoint, ContactHalfSpaceOnBody, ContactSphereOnBody, coordinate_function
from trajopt.model.osim.load import OsimModel, load_osim
from trajopt.model.osim.parser import OsimIgnoredWarning, parse_osim
from trajopt.model.osim.states import from_opensim_state, opensim_coordinate_names, to_opensim_generalized_forces

__all__ = [
    "BodyPoint",
    "ContactHalfSpaceOnBody",
    "ContactSphereOnBody",
    "OsimIgnoredWarning",
    "OsimModel",
    "coordinate_function",
    "from_opensim_state",
    "load_osim",
    "opensim_coordinate_names",
    "parse_osim",
    "to_opensim_generalized_forces",
]
