"""Read OpenSim's FunctionBasedPathSet ``.xml`` (as ``PolynomialPathFitter`` writes it) into
``trajopt.paths.function_based.FunctionBasedPaths``.

Each ``FunctionBasedPath`` names its muscle (``/forceset/<muscle>``), its ``coordinate_paths`` and a
``length_function``; only ``MultivariatePolynomialFunction`` lengths are read. Moment-arm or lengthening-speed
functions of their own would define the path differently from −∂l/∂q, so they are refused, naming the element.
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from trajopt.errors import ModelFileError
from trajopt.paths.function_based import FunctionBasedPath, FunctionBasedPaths, MultivariatePolynomial

_UNSUPPORTED = ("moment_arm_functions", "lengthening_speed_function")


def _leaf(path: str) -> str:
    return path.rstrip("/").split("/")[-1]


def _text(element, tag: str, where: str) -> str:
    child = element.find(tag)
    if child is None or child.text is None or not child.text.strip():
        raise ModelFileError(f"{where}: missing <{tag}>")
    return child.text.strip()


def _polynomial(element, where: str) -> MultivariatePolynomial:
    if element is None or len(element) == 0:
        raise ModelFileError(f"{where}: <length_function> has no function")
    function = element[0]
    if function.tag != "MultivariatePolynomialFunction":
        raise ModelFileError(f"{where}/length_function: function type {function.tag} is not supported "
                             f"(only MultivariatePolynomialFunction)")
    here = f"{where}/length_function/MultivariatePolynomialFunction"
    try:
        coefficients = tuple(float(v) for v in _text(function, "coefficients", here).split())
        dimension = int(_text(function, "dimension", here))
        order = int(_text(function, "order", here))
    except ValueError as error:
        raise ModelFileError(f"{here}: {error}") from None
    try:
        return MultivariatePolynomial(dimension, order, coefficients)
    except Exception as error:  # TrajoptInputError from the size check, re-raised with the element
        raise ModelFileError(f"{here}: {error}") from None


def function_based_path(element, where: str) -> FunctionBasedPath:
    """One ``<FunctionBasedPath>`` element; ``muscle`` is the last component of its name (or of ``where``)."""
    for tag in _UNSUPPORTED:
        found = element.find(tag)
        if found is not None and len(found):
            raise ModelFileError(f"{where}/{tag}: trajopt derives moment arms and speeds from the length "
                                 f"function; a {tag} of its own is not supported")
    coordinates = tuple(_leaf(p) for p in _text(element, "coordinate_paths", where).split())
    length = _polynomial(element.find("length_function"), where)
    if length.dimension != len(coordinates):
        raise ModelFileError(f"{where}: length function has dimension {length.dimension} for "
                             f"{len(coordinates)} coordinate_paths")
    return FunctionBasedPath(_leaf(element.get("name", where)), coordinates, length)


def read_function_based_path_set(path) -> FunctionBasedPaths:
    """Every FunctionBasedPath of an OpenSim ``FunctionBasedPathSet`` file."""
    path = Path(path)
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        raise ModelFileError(f"{path}: cannot read the FunctionBasedPathSet: {error}") from None
    elements = root.findall(".//FunctionBasedPath")
    if not elements:
        raise ModelFileError(f"{path}: no <FunctionBasedPath> element")
    paths = [function_based_path(e, f"{path}: FunctionBasedPath[{e.get('name', '?')}]") for e in elements]
    return FunctionBasedPaths(paths, str(path))
