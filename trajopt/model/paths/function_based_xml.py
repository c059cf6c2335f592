"""Read OpenSim's FunctionBasedPathSet ``.xml`` (as ``PolynomialPathFitter`` writes it) into
``trajopt.model.paths.function_based.FunctionBasedPaths``.

Each ``FunctionBasedPath`` names its muscle (``/forceset/<muscle>``), its ``coordinate_paths`` and a
``length_function``; only ``MultivariatePolynomialFunction`` lengths are read. Moment-arm or lengthening-speed
functions of their own would define the path differently from −∂l/∂q, so they are refused, naming the element.
"""

from __future__ import annotations

import warnings
import xml.etree.ElementTree as ElementTree
from pathlib import Path

from trajopt.errors import ModelFileError
from trajopt.model.osim.load import load_osim
from trajopt.model.paths.function_based import (FunctionBasedPath, FunctionBasedPaths, MultivariatePolynomial,
                                                polynomial_exponents)
from trajopt.model.osim.xml_reader import read_xml

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
    root = read_xml(path, "the FunctionBasedPathSet")
    elements = root.findall(".//FunctionBasedPath")
    if not elements:
        raise ModelFileError(f"{path}: no <FunctionBasedPath> element")
    paths = [function_based_path(e, f"{path}: FunctionBasedPath[{e.get('name', '?')}]") for e in elements]
    return FunctionBasedPaths(paths, str(path))


def coordinate_paths(model_file) -> dict[str, str]:
    """Coordinate name -> OpenSim component path ``/jointset/<joint>/<coordinate>`` of an .osim file."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # elements the loader ignores do not matter here
        spec = load_osim(model_file).spec
    return {c.name: f"/jointset/{c.joint}/{c.name}" for c in spec.coordinates}


def _dense_coefficients(path, where: str) -> tuple[int, list[float]]:
    """(order, coefficients in MultivariatePolynomialFunction order) of a ``PolynomialPath``."""
    dimension = len(path.coordinates)
    order = max((sum(row) for row in path.exponents), default=0)
    index = {tuple(int(e) for e in row): k for k, row in enumerate(polynomial_exponents(dimension, order))}
    dense = [0.0] * len(index)
    for row, coefficient in zip(path.exponents, path.coefficients):
        dense[index[tuple(row)]] += float(coefficient)
    return order, dense


def write_function_based_path_set(paths, file, coordinate_paths: dict[str, str] | None = None) -> Path:
    """Write polynomial paths (``trajopt.model.paths.polynomial.PolynomialPaths``) as OpenSim's FunctionBasedPathSet,
    usable with ``ModOpReplacePathsWithFunctionBasedPaths``. ``coordinate_paths`` maps coordinate names to component
    paths (``coordinate_paths(model_file)``); a path over a coordinate without one is refused. Coefficients are
    written with Python's shortest exact repr (doubles round-trip)."""
    file = Path(file)
    mapping = dict(coordinate_paths or {})
    root = ElementTree.Element("OpenSimDocument", Version="40600")
    objects = ElementTree.SubElement(ElementTree.SubElement(root, "Set_FunctionBasedPath_"), "objects")
    for path in paths:
        missing = [c for c in path.coordinates if c not in mapping]
        if missing:
            raise ModelFileError(f"{file}: path of '{path.muscle}' uses coordinates {missing} that are not model "
                                 f"coordinates (e.g. quaternion components); OpenSim cannot evaluate it")
        order, coefficients = _dense_coefficients(path, str(file))
        element = ElementTree.SubElement(objects, "FunctionBasedPath", name=f"/forceset/{path.muscle}")
        ElementTree.SubElement(element, "coordinate_paths").text = " ".join(mapping[c] for c in path.coordinates)
        function = ElementTree.SubElement(ElementTree.SubElement(element, "length_function"),
                                          "MultivariatePolynomialFunction")
        ElementTree.SubElement(function, "coefficients").text = " ".join(repr(float(c)) for c in coefficients)
        ElementTree.SubElement(function, "dimension").text = str(len(path.coordinates))
        ElementTree.SubElement(function, "order").text = str(order)
    ElementTree.indent(root, "\t")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text('<?xml version="1.0" encoding="UTF-8" ?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n")
    return file
