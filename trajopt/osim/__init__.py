"""OpenSim 4 model import: ``load_osim(path)`` reads a .osim file (without OpenSim) into trajopt."""

from trajopt.osim.build import BodyPoint, ContactHalfSpaceOnBody, ContactSphereOnBody, coordinate_function
from trajopt.osim.load import OsimModel, load_osim
from trajopt.osim.parser import OsimIgnoredWarning, parse_osim

__all__ = [
    "BodyPoint",
    "ContactHalfSpaceOnBody",
    "ContactSphereOnBody",
    "OsimIgnoredWarning",
    "OsimModel",
    "coordinate_function",
    "load_osim",
    "parse_osim",
]
