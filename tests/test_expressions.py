"""OpenSim's expression language (Lepton) against Python's math, and ExpressionBasedCoordinateForces."""

import math
import re
import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from trajopt.errors import TrajoptInputError
from trajopt.osim.expression_forces import generalized_forces_function, read_expression_forces
from trajopt.osim.expressions import parse_expression

FORCES = ROOT / "problems" / "walk3d" / "subject_walk_scaled_ExpressionBasedCoordinateForceSet.xml"

# (Lepton text, the same in Python with x, y, z bound)
CASES = [
    ("1+2*3", "1+2*3"), ("(1+2)*3", "(1+2)*3"), ("2^3^2", "2**(3**2)"), ("-x^2", "-(x**2)"), ("2^-x", "2**(-x)"),
    ("x-y-z", "x-y-z"), ("x/y/z", "x/y/z"), ("-x*-y", "(-x)*(-y)"), ("1e-3*x", "1e-3*x"), (".5*x", ".5*x"),
    ("sqrt(x)", "math.sqrt(x)"), ("exp(-x)", "math.exp(-x)"), ("log(y)", "math.log(y)"), ("sin(x)+cos(y)", "math.sin(x)+math.cos(y)"),
    ("sec(x)", "1/math.cos(x)"), ("csc(x)", "1/math.sin(x)"), ("tan(z)", "math.tan(z)"), ("cot(z)", "1/math.tan(z)"),
    ("asin(x/2)", "math.asin(x/2)"), ("acos(x/2)", "math.acos(x/2)"), ("atan(y)", "math.atan(y)"),
    ("atan2(y, -x)", "math.atan2(y, -x)"), ("sinh(x)*cosh(y)-tanh(z)", "math.sinh(x)*math.cosh(y)-math.tanh(z)"),
    ("erf(x)", "math.erf(x)"), ("erfc(x)", "math.erfc(x)"), ("step(x-y)", "1.0 if x-y >= 0 else 0.0"),
    ("step(0)", "1.0"), ("delta(x-x)", "1.0"), ("square(y)+cube(z)", "y**2+z**3"), ("recip(y)", "1/y"),
    ("min(x, y)*max(y, z)", "min(x, y)*max(y, z)"), ("abs(-z)", "abs(-z)"), ("floor(y)+ceil(z)", "math.floor(y)+math.ceil(z)"),
    ("select(x-x, 1, 2)", "2.0"), ("select(x, y, z)", "y"), ("  x *  ( y + 2 ) ", "x*(y+2)"), ("+x", "x"),
]


def test_expressions_match_python():
    x, y, z = ca.SX.sym("x"), ca.SX.sym("y"), ca.SX.sym("z")
    values = {"x": 0.7, "y": 2.3, "z": -0.4}
    for text, python in CASES:
        function = ca.Function("f", [x, y, z], [parse_expression(text, {"x": x, "y": y, "z": z})])
        ours = float(function(values["x"], values["y"], values["z"]))
        expected = eval(python, {"math": math, "min": min, "max": max, "abs": abs}, dict(values))  # the test's own
        assert ours == pytest.approx(expected, rel=1e-14, abs=1e-15), text


def test_every_expression_of_walk3d_matches_python():
    forces = read_expression_forces(FORCES)
    assert len(forces) == 20
    q, qdot = ca.SX.sym("q"), ca.SX.sym("qdot")
    for force in forces:
        function = ca.Function("f", [q, qdot], [parse_expression(force.expression, {"q": q, "qdot": qdot})])
        python = re.sub(r"exp\(", "math.exp(", force.expression)
        for value, speed in ((0.3, -1.2), (-0.8, 0.5), (1.4, 2.0)):
            expected = eval(python, {"math": math}, {"q": value, "qdot": speed})
            assert float(function(value, speed)) == pytest.approx(expected, rel=1e-14), force.name


@pytest.mark.parametrize("text, message", [
    ("foo(q)", "unknown function 'foo'"), ("q + w", "unknown variable 'w'"), ("q +", "unexpected end"),
    ("(q", "expected '\\)'"), ("q $ 2", "cannot read '\\$ 2'"), ("max(q)", "takes 2 argument"),
])
def test_bad_expressions_are_one_line(text, message):
    with pytest.raises(TrajoptInputError, match=message) as caught:
        parse_expression(text, {"q": ca.SX.sym("q")}, "forces.xml: ExpressionBasedCoordinateForce 'X'")
    assert "forces.xml: ExpressionBasedCoordinateForce 'X'" in str(caught.value) and "\n" not in str(caught.value)


def test_walk3d_forces_as_generalized_forces():
    from trajopt.osim.operators import load_processed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, _ = load_processed(ROOT / "problems" / "walk3d" / "subject_walk_scaled.osim")
    mb = osim.multibody
    forces = read_expression_forces(FORCES)
    function = generalized_forces_function(mb, forces)
    q, u = np.zeros(mb.nq), np.zeros(mb.nv)
    k = mb.coordinate_index("elbow_flex_r")
    q[k], u[mb.speed_index("elbow_flex_r")] = 1.0, 0.5
    tau = np.asarray(function(q, u)).ravel()
    expected = 6.09 * math.exp(-6.94 * (1.0 - 0.30)) - 11.03 * math.exp(11.33 * (1.0 - 2.40)) - 1.0 * 0.5
    assert tau[mb.speed_index("elbow_flex_r")] == pytest.approx(expected, rel=1e-14)
