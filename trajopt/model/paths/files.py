"""Muscle paths from a file: trajopt's polynomial paths (.json) or OpenSim's FunctionBasedPathSet (.xml), or the
model's geometric paths when no file is given; the one reader every study and command uses."""

from __future__ import annotations

from pathlib import Path

from trajopt.errors import TrajoptInputError, first_names
from trajopt.model.paths.function_based_xml import read_function_based_path_set
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.model.paths.quaternion_paths import with_quaternion_joints
from trajopt.model.paths.refit import load_paths


def read_paths(path, osim, generalized_force_moment_arms: bool = False):
    """Muscle paths from a file (.json: trajopt polynomial paths, piecewise or not, those over ``<joint>_Q1..Q3``
    evaluated on the model's ball and free joints; .xml: FunctionBasedPathSet), or geometric (with
    ``generalized_force_moment_arms`` OpenSim's computeMomentArm, else −∂l/∂q: ``trajopt.model.paths.geometric``)."""
    if path is None:
        return GeometricPaths(osim, generalized_force_moment_arms=generalized_force_moment_arms)
    path = Path(path)
    if path.suffix.lower() == ".json":
        # Polynomial, or piecewise along a motion or over the coordinate domain, by the file's format.
        paths = with_quaternion_joints(load_paths(path), osim.multibody)
    elif path.suffix.lower() == ".xml":
        paths = read_function_based_path_set(path)
    else:
        raise TrajoptInputError(f"{path}: paths file must be .json (trajopt polynomial paths) or .xml "
                                f"(OpenSim FunctionBasedPathSet), got '{path.suffix}'")
    muscles = [m.name for m in osim.muscles]
    if muscles and not set(muscles) & set(paths.muscles):  # the paths of another model
        raise TrajoptInputError(f"{path}: no path for any muscle of model {osim.spec.file} (the file has "
                                f"{first_names(paths.muscles, 4)}; the model {first_names(muscles, 4)})")
    return paths
