"""Reading OpenSim XML: the file as an element tree (``read_xml``), a reader that knows where it is (for messages)
and what it skipped, OpenSim Sets, component paths and OpenSim's Function elements."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import xml.parsers.expat

from trajopt.errors import ModelFileError
from trajopt.model.osim import spec

# Visual-only elements: skipped without a warning.
VISUAL_ELEMENTS = frozenset(
    {"FrameGeometry", "frame_geometry", "attached_geometry", "Appearance", "VisibleObject", "display",
     "force_visualization_radius", "force_visualization_scale_factor", "groups", "credits", "publications"}
)

FUNCTIONS = ("Constant", "LinearFunction", "PolynomialFunction", "SimmSpline", "MultiplierFunction",
             "NaturalCubicSpline")


def read_xml(file, what: str = "the file") -> ET.Element:
    """The root element of an XML file as OpenSim writes it. OpenSim names nested classes' elements with C++ scope,
    ``<HuntCrossleyForce::ContactParametersSet>``: a legal XML 1.0 name but not a namespace-valid one, which
    ``ElementTree.parse`` (expat with namespaces) refuses. So expat reads the file without namespace processing and
    every tag keeps its name as written. Comments are dropped, as ``ElementTree.parse`` does. A missing or malformed
    file is a one-line ``ModelFileError`` naming the file, line and column."""
    builder = ET.TreeBuilder()
    parser = xml.parsers.expat.ParserCreate()
    parser.buffer_text = True
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    try:
        with open(file, "rb") as stream:
            parser.ParseFile(stream)
    except (OSError, xml.parsers.expat.ExpatError) as error:
        raise ModelFileError(f"{file}: cannot read {what}: {error}") from None
    return builder.close()


def label(element: ET.Element) -> str:
    name = element.get("name")
    return f"{element.tag}[{name}]" if name else element.tag


class Reader:
    """Reads one file, remembering where it is (for messages) and what it skipped."""

    def __init__(self, file: str):
        self.file = file
        self.ignored: list[str] = []

    def error(self, where: str, message: str) -> ModelFileError:
        return ModelFileError(f"{self.file}: {where}: {message}")

    def text(self, element: ET.Element, where: str) -> str:
        return (element.text or "").strip().strip("()").strip()

    def numbers(self, element: ET.Element, where: str, count: int | None = None) -> tuple[float, ...]:
        text = self.text(element, where)
        try:
            values = tuple(float(v) for v in text.replace(",", " ").split())
        except ValueError:
            raise self.error(where, f"expected numbers, got '{text}'") from None
        if count is not None and len(values) != count:
            raise self.error(where, f"expected {count} numbers, got {len(values)} ('{text}')")
        return values

    def value(self, element: ET.Element, where: str, default):
        """Parse ``element`` as the type of ``default``: bool, float, str, tuple of floats (that many)
        or list (any number of floats, returned as a tuple)."""
        if isinstance(default, bool):
            text = self.text(element, where).lower()
            if text not in ("true", "false"):
                raise self.error(where, f"expected true or false, got '{text}'")
            return text == "true"
        if isinstance(default, (int, float)):
            return self.numbers(element, where, 1)[0]
        if isinstance(default, list):  # any number of values
            return self.numbers(element, where)
        if isinstance(default, tuple):
            return self.numbers(element, where, len(default) or None)
        return self.text(element, where)

    def properties(self, element: ET.Element, where: str, schema: dict, handled=()) -> dict:
        """Read the children named in ``schema`` (name -> default); report the rest as ignored."""
        values = dict(schema)
        for child in element:
            if not isinstance(child.tag, str):
                continue
            child_where = f"{where}/{label(child)}"
            if child.tag in schema:
                values[child.tag] = self.value(child, child_where, schema[child.tag])
            elif child.tag not in handled and child.tag not in VISUAL_ELEMENTS:
                self.ignored.append(child_where)
        return values

    def ignore_unless_empty(self, element: ET.Element, where: str) -> None:
        """A set that trajopt does not use: list each object it holds as ignored."""
        for _, child_where in members(element, where):
            self.ignored.append(child_where)


def members(set_element: ET.Element | None, where: str) -> list[tuple[ET.Element, str]]:
    """The members of an OpenSim Set with their paths: children of ``<objects>`` or, in some
    files, direct children of the set."""
    if set_element is None:
        return []
    inner = set_element.find("objects")
    if inner is not None:
        where = f"{where}/objects"
    found = list(inner) if inner is not None else list(set_element)
    return [(m, f"{where}/{label(m)}") for m in found
            if isinstance(m.tag, str) and m.tag not in ("objects", "groups")]


def resolve_path(owner: str, path: str) -> str:
    """Absolute component path of socket value ``path`` written inside the component at ``owner``."""
    path = path.strip()
    if path.startswith("/"):
        parts = []
    else:
        parts = [p for p in owner.split("/") if p]
    for piece in path.split("/"):
        if piece in ("", "."):
            continue
        if piece == "..":
            if parts:
                parts.pop()
        else:
            parts.append(piece)
    return "/" + "/".join(parts)


# --- functions ---------------------------------------------------------------------------------


def parse_function(reader: Reader, element: ET.Element, where: str) -> spec.CoordinateFunction:
    """One of OpenSim's Function elements (the element itself, not its container)."""
    tag = element.tag
    if tag == "Constant":
        return spec.Constant(reader.properties(element, where, {"value": 0.0})["value"])
    if tag == "LinearFunction":
        coefficients = reader.properties(element, where, {"coefficients": (1.0, 0.0)})["coefficients"]
        return spec.LinearFunction(slope=coefficients[0], intercept=coefficients[1])
    if tag == "PolynomialFunction":
        coefficients = reader.properties(element, where, {"coefficients": [1.0]})["coefficients"]
        return spec.PolynomialFunction(tuple(coefficients))
    if tag in ("SimmSpline", "NaturalCubicSpline"):
        values = reader.properties(element, where, {"x": [], "y": []})
        if len(values["x"]) != len(values["y"]) or len(values["x"]) < 2:
            raise reader.error(where, f"spline needs >= 2 knots and as many x as y (got {len(values['x'])} x, "
                               f"{len(values['y'])} y)")
        kind = spec.SimmSpline if tag == "SimmSpline" else spec.NaturalCubicSpline
        return kind(x=tuple(values["x"]), y=tuple(values["y"]))
    if tag == "MultiplierFunction":
        values = reader.properties(element, where, {"scale": 1.0}, handled=("function",))
        inner = element.find("function")
        members = [c for c in inner if isinstance(c.tag, str)] if inner is not None else []
        if len(members) != 1:
            raise reader.error(where, "MultiplierFunction needs exactly one function")
        return spec.MultiplierFunction(parse_function(reader, members[0], f"{where}/function/{label(members[0])}"),
                                       values["scale"])
    raise reader.error(where, f"unsupported function type '{tag}' (supported: {', '.join(FUNCTIONS)})")


def function_child(reader: Reader, container: ET.Element, where: str):
    """The single Function element inside ``container`` (e.g. a TransformAxis or x_location)."""
    for child in container:
        if isinstance(child.tag, str) and (child.tag in FUNCTIONS or child.tag.endswith(("Function", "Spline"))):
            return parse_function(reader, child, f"{where}/{label(child)}")
    return None

