"""OpenSim's expression language (Lepton) against Python's math, and ExpressionBasedCoordinateForces."""

import math
import re
import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from trajopt.errors import ModelFileError, TrajoptInputError
from trajopt.model.io import MotionProcessor
from trajopt.model.osim.expression_forces import generalized_forces_function, read_expression_forces
from trajopt.model.osim.expressions import parse_expression

FORCES = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled_ExpressionBasedCoordinateForceSet.xml"

# (Lepton text, the same in Python with x, y, z bound)
CASES = [
    ("1+2*3", "1+2*3"), ("(1+2)*3", "(1+2)*3"), ("2^3^2", "2**(3**2)"), ("-x^2", "-(x**2)"), ("2^-x", "2**(-x)"),
    ("x-y-z", "x-y-z"), ("x/y/z", "x/y/z"), ("-x*-y", "(-x)*(-y)"), ("1e-3*x", "1e-3*x"), (".5*x", ".5*x"),
    ("sqrt(x)", "math.sqrt(x)"), ("exp(-x)", "math.exp(-x)"), ("log(y)", "math.log(y)"),
    ("sin(x)+cos(y)", "math.sin(x)+math.cos(y)"),
    ("sec(x)", "1/math.cos(x)"), ("csc(x)", "1/math.sin(x)"), ("tan(z)", "math.tan(z)"), ("cot(z)", "1/math.tan(z)"),
    ("asin(x/2)", "math.asin(x/2)"), ("acos(x/2)", "math.acos(x/2)"), ("atan(y)", "math.atan(y)"),
    ("atan2(y, -x)", "math.atan2(y, -x)"), ("sinh(x)*cosh(y)-tanh(z)", "math.sinh(x)*math.cosh(y)-math.tanh(z)"),
    ("erf(x)", "math.erf(x)"), ("erfc(x)", "math.erfc(x)"), ("step(x-y)", "1.0 if x-y >= 0 else 0.0"),
    ("step(0)", "1.0"), ("delta(x-x)", "1.0"), ("square(y)+cube(z)", "y**2+z**3"), ("recip(y)", "1/y"),
    ("min(x, y)*max(y, z)", "min(x, y)*max(y, z)"), ("abs(-z)", "abs(-z)"),
    ("floor(y)+ceil(z)", "math.floor(y)+math.ceil(z)"),
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
    from trajopt.model.musculoskeletal.operators import load_processed

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, _ = load_processed(ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim")
    mb = osim.multibody
    forces = read_expression_forces(FORCES)
    function = generalized_forces_function(mb, forces)
    q, u = np.zeros(mb.nq), np.zeros(mb.nv)
    k = mb.coordinate_index("elbow_flex_r")
    q[k], u[mb.speed_index("elbow_flex_r")] = 1.0, 0.5
    tau = np.asarray(function(q, u)).ravel()
    expected = 6.09 * math.exp(-6.94 * (1.0 - 0.30)) - 11.03 * math.exp(11.33 * (1.0 - 2.40)) - 1.0 * 0.5
    assert tau[mb.speed_index("elbow_flex_r")] == pytest.approx(expected, rel=1e-14)


@pytest.mark.opensim
def test_walk3d_expression_forces_match_opensim(opensim_task):
    """The 20 ExpressionBasedCoordinateForces of Moco's 3D walking example, added to subject_walk_scaled.osim
    (the AddExpressionForces operator), at 25 random states: generalized forces equal OpenSim's
    ExpressionBasedCoordinateForce.getForceMagnitude on the same model."""
    from trajopt.model.osim.expression_forces import model_expression_forces
    from trajopt.model.musculoskeletal.operators import AddExpressionForces, load_processed

    model_file = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, _ = load_processed(model_file, [AddExpressionForces(FORCES)])
    mb = osim.multibody
    rng = np.random.default_rng(4)
    q, u = rng.uniform(-1.0, 1.0, (25, mb.nq)), rng.uniform(-3.0, 3.0, (25, mb.nv))
    reference = opensim_task("expression_coordinate_forces", {"model": str(model_file), "forces": str(FORCES),
                                                              "q": q[:, [mb.coordinate_index(n) for n in
                                                                         _opensim_order(mb)]],
                                                              "u": u[:, [mb.speed_index(n) for n in
                                                                         _opensim_order(mb)]]})
    assert len(reference["names"]) == 20
    expected = np.zeros((25, mb.nv))
    for name, column in zip(reference["coordinates"], reference["values"].T):
        expected[:, mb.speed_index(str(name))] += column
    forces = model_expression_forces(osim)
    ours = np.asarray(generalized_forces_function(mb, forces.forces).map(25)(q.T, u.T)).T
    assert np.max(np.abs(ours - expected)) <= 1e-12 * max(1.0, np.max(np.abs(expected)))  # measured 0 (same bits)


def _opensim_order(mb):
    """OpenSim's CoordinateSet order of walk3d (joint order in the file), read from the model file."""
    from trajopt.model.osim.parser import parse_osim

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [c.name
                for c in parse_osim(ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim").coordinates]


def test_forceset_expression_with_unknown_function_is_one_line(tmp_path):
    text = FORCES.read_text()
    bad = re.sub(r"<expression>([^<]*)</expression>", lambda m: "<expression>foo(q)</expression>", text, count=1)
    path = tmp_path / "forces.xml"
    path.write_text(bad)
    with pytest.raises(TrajoptInputError) as caught:
        read_expression_forces(path)
    message = str(caught.value)
    assert "forces.xml" in message and "ExpressionBasedCoordinateForce '" in message and "foo" in message
    assert "\n" not in message


def test_inverse_dynamics_takes_the_expression_forces_off(tmp_path):
    """An ExpressionBasedCoordinateForce in the model applies its generalized force itself: inverse dynamics
    reports the net generalized force minus it (OpenSim's ID tool does the same with non-muscle forces)."""
    from trajopt.studies.analysis.inverse_dynamics import motion_inverse_dynamics
    from trajopt.model.musculoskeletal.operators import AddExpressionForces, load_processed

    model_file = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"
    motion = ROOT / "trajopt" / "examples" / "walk3d" / "coordinates.sto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bare, _ = load_processed(model_file)
        passive, _ = load_processed(model_file, [AddExpressionForces(FORCES)])
        from trajopt.edge.tools.common import load_tool_input

        table = load_tool_input(model_file, motion).motion
        window = MotionProcessor(table, window=(table.time[0], 0.5))
        without = motion_inverse_dynamics(bare, window)
        with_forces = motion_inverse_dynamics(passive, window)
    k = without.kinematics
    applied = np.asarray(generalized_forces_function(passive.multibody, passive.spec.expression_forces)
                         .map(k.times.size)(k.q.T, k.u.T)).T
    np.testing.assert_allclose(with_forces.generalized_forces, without.generalized_forces - applied, atol=1e-9)
    assert np.max(np.abs(applied)) > 1.0  # the passive moments matter at these frames


def _arm26_with(tmp_path, force_xml):
    arm26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
    text = arm26.read_text()
    marker = '<ForceSet name="forceset">\n\t\t\t<objects>'
    assert marker in text
    path = tmp_path / "arm26_passive.osim"
    path.write_text(text.replace(marker, marker + force_xml, 1))
    return path


def test_model_expression_force_is_read_and_checked(tmp_path):
    from trajopt.model.osim.parser import parse_osim

    force = ('<ExpressionBasedCoordinateForce name="elbow_stop"><coordinate>r_elbow_flex</coordinate>'
             '<expression>-2*max(q-2,0)-0.1*qdot</expression></ExpressionBasedCoordinateForce>')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = parse_osim(_arm26_with(tmp_path, force))
    assert [(f.name, f.coordinate) for f in parsed.expression_forces] == [("elbow_stop", "r_elbow_flex")]
    wrong = force.replace("<coordinate>r_elbow_flex</coordinate>", "<coordinate>r_wrist</coordinate>")
    with pytest.raises(ModelFileError, match=r"ExpressionBasedCoordinateForce elbow_stop refers to coordinate "
                                             r"'r_wrist'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parse_osim(_arm26_with(tmp_path, wrong))
    unknown = force.replace("max(q-2,0)", "clamp(q)")
    with pytest.raises(TrajoptInputError) as caught:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parse_osim(_arm26_with(tmp_path, unknown))
    message = str(caught.value)
    assert "arm26_passive.osim" in message and "ExpressionBasedCoordinateForce[elbow_stop]" in message
    assert "unknown function 'clamp'" in message and "\n" not in message
