"""ExpressionBasedCoordinateForce: a generalized force on one coordinate given by a Lepton expression of its value
``q`` and speed ``qdot`` (``trajopt.osim.expressions``), read from a ForceSet ``.xml`` or a model.

``generalized_forces_function(multibody, forces)`` is the named Function (q, u) -> generalized forces (nv) of
all of them; ``ExpressionForces`` applies them where external loads apply (``AppliedForces`` of
``trajopt.analysis.muscle_inverse``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.errors import ModelFileError
from trajopt.osim.expressions import parse_expression


@dataclass(frozen=True)
class ExpressionCoordinateForce:
    name: str
    coordinate: str
    expression: str
    source: str = ""


def read_expression_forces(path) -> tuple[ExpressionCoordinateForce, ...]:
    """Every ExpressionBasedCoordinateForce in a ForceSet .xml (or a model file)."""
    path = Path(path)
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        raise ModelFileError(f"{path}: cannot read: {error}") from None
    forces = []
    for element in root.iter("ExpressionBasedCoordinateForce"):
        name = element.get("name", "?")
        coordinate = (element.findtext("coordinate") or "").strip()
        expression = (element.findtext("expression") or "").strip()
        if not coordinate or not expression:
            raise ModelFileError(f"{path}: ExpressionBasedCoordinateForce '{name}' needs <coordinate> and <expression>")
        forces.append(ExpressionCoordinateForce(name, coordinate, expression, str(path)))
    return tuple(forces)


def generalized_forces_function(multibody, forces) -> ca.Function:
    """(q, u) -> the forces' generalized forces (nv); unknown coordinates and expressions are one-line errors."""
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    tau = ca.SX.zeros(multibody.nv)
    for force in forces:
        where = f"{force.source or 'model'}: ExpressionBasedCoordinateForce '{force.name}'"
        if force.coordinate not in multibody.speed_names:
            raise ModelFileError(f"{where}: coordinate '{force.coordinate}' is not in model '{multibody.name}'")
        value = parse_expression(force.expression, {"q": q[multibody.coordinate_index(force.coordinate)],
                                                    "qdot": u[multibody.speed_index(force.coordinate)]}, where)
        k = multibody.speed_index(force.coordinate)
        tau[k] = tau[k] + value
    return ca.Function("expression_coordinate_forces", [q, u], [tau], ["q", "u"], ["generalized_forces"])


@dataclass(frozen=True)
class ExpressionForces:
    """The forces as ``AppliedForces``: generalized forces along a motion (no body wrenches)."""

    multibody: object
    forces: tuple

    def generalized_forces(self, kinematics) -> np.ndarray:
        function = generalized_forces_function(self.multibody, self.forces).map(kinematics.times.size)
        return np.asarray(function(kinematics.q.T, kinematics.u.T)).T

    def wrenches(self, kinematics) -> np.ndarray:
        return np.zeros((kinematics.times.size, 6, len(self.multibody.bodies)))
