"""ExpressionBasedCoordinateForce: a generalized force on one coordinate given by a Lepton expression of its value
``q`` and speed ``qdot`` (``trajopt.model.osim.expressions``), read from a ForceSet ``.xml`` or a model.

``generalized_forces_function(multibody, forces)`` is the named Function (q, u) -> generalized forces (nv) of
all of them; ``ExpressionForces`` applies them where external loads apply (``AppliedForces`` of
``trajopt.studies.analysis.muscle_inverse``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import casadi as ca
import numpy as np

from trajopt.errors import ModelFileError
from trajopt.model.osim.expressions import parse_expression
from trajopt.model.osim.parser import check_expression
from trajopt.model.osim.spec import ExpressionBasedCoordinateForce
from trajopt.model.osim.xml_reader import read_xml


# One force: name, coordinate, expression, source (file and element, for messages).
ExpressionCoordinateForce = ExpressionBasedCoordinateForce


def read_expression_forces(path) -> tuple[ExpressionCoordinateForce, ...]:
    """Every ExpressionBasedCoordinateForce in a ForceSet .xml (or a model file); an expression that cannot be
    read is a one-line error naming the file, the force and the text."""
    path = Path(path)
    root = read_xml(path, "the force set")
    forces = []
    for element in root.iter("ExpressionBasedCoordinateForce"):
        name = element.get("name", "?")
        coordinate = (element.findtext("coordinate") or "").strip()
        expression = (element.findtext("expression") or "").strip()
        if not coordinate or not expression:
            raise ModelFileError(f"{path}: ExpressionBasedCoordinateForce '{name}' needs <coordinate> and <expression>")
        force = ExpressionCoordinateForce(name, coordinate, expression, str(path))
        check_expression(force)
        forces.append(force)
    return tuple(forces)


def generalized_forces_function(multibody, forces) -> ca.Function:
    """(q, u) -> the forces' generalized forces (nv); unknown coordinates and expressions are one-line errors."""
    q = ca.SX.sym("q", multibody.nq)
    u = ca.SX.sym("u", multibody.nv)
    tau = ca.SX.zeros(multibody.nv)
    for force in forces:
        where = f"{force.source}: ExpressionBasedCoordinateForce '{force.name}'" if force.source else \
            f"ExpressionBasedCoordinateForce '{force.name}'"
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


def model_expression_forces(osim) -> ExpressionForces | None:
    """The ExpressionBasedCoordinateForces of a loaded model (its file's and those operators added), or None."""
    forces = osim.spec.expression_forces
    return ExpressionForces(osim.multibody, tuple(forces)) if forces else None


@dataclass(frozen=True)
class AppliedForceSum:
    """Several ``AppliedForces`` (e.g. external loads and expression forces) as one."""

    parts: tuple

    def generalized_forces(self, kinematics) -> np.ndarray:
        return sum(np.asarray(p.generalized_forces(kinematics)) for p in self.parts)

    def wrenches(self, kinematics) -> np.ndarray:
        return sum(np.asarray(p.wrenches(kinematics)) for p in self.parts)
