"""Geometric muscle paths (straight segments through fixed, conditional and moving points) against
OpenSim 4.6's GeometryPath, an analytic moving-point path, and the identity l̇ = (∂l/∂q) N(q) u."""

import warnings

import casadi as ca
import numpy as np
import pytest
import sympy as sp

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import GROUND, Body, Coordinate, Model, OffsetFrame, PinJoint, point_position
from trajopt.core.multibody.example_models import random_state, spatial_chain
from trajopt.core.multibody.functions import Polynomial
from trajopt.core.multibody.kinematics import coordinate_rates_matrix
from trajopt.model.osim import load_osim
from trajopt.model.osim import spec as osim_spec
from trajopt.model.paths.geometric import (
    ConditionalPathPoint,
    FixedPathPoint,
    GeometricPath,
    GeometricPathWarning,
    MovingPathPoint,
    geometric_path,
    geometric_paths,
)
from trajopt.model.paths.moment_arms import moment_arms, moment_arms_from_length

from conftest import ROOT, arm26_with_torus

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
GAIT2D = ROOT / "trajopt" / "examples" / "gait2d" / "2D_gait.osim"
TOLERANCE = 1e-9  # m, m/s


def _random_configurations(model, count, seed):
    low = np.array([c.range[0] for c in model.coordinates])
    high = np.array([c.range[1] for c in model.coordinates])
    rng = np.random.default_rng(seed)
    return low + (high - low) * rng.random((count, model.nq)), rng.normal(size=(count, model.nv))


def _evaluate(path, configurations, speeds):
    lengths = np.array([float(path.length(q)) for q in configurations])
    lengthening = np.array([float(path.lengthening_speed(q, u)) for q, u in zip(configurations, speeds)])
    by_force = np.array([np.asarray(moment_arms(path, q)).ravel() for q in configurations])
    by_length = np.array([np.asarray(moment_arms_from_length(path, q)).ravel() for q in configurations])
    return lengths, lengthening, by_force, by_length


def _opensim_reference(opensim_task, file, model, configurations, speeds, disable_wraps=False):
    return opensim_task("geometric_path_reference", {
        "model": str(file),
        "coordinates": np.array(model.coordinate_names),
        "configurations": configurations,
        "speeds": speeds,
        "disable_wraps": int(disable_wraps),
    })


def test_bicshort_matches_opensim(opensim_task):
    osim = load_osim(ARM26)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GeometricPathWarning)  # BICshort has no wraps: no warning
        path = geometric_path(osim, "BICshort")
    configurations, speeds = _random_configurations(osim.multibody, 60, seed=4)
    reference = _opensim_reference(opensim_task, ARM26, osim.multibody, configurations, speeds)
    k = list(reference["muscle_names"]).index("BICshort")
    assert reference["wrapped"][k] == 0
    lengths, lengthening, by_force, by_length = _evaluate(path, configurations, speeds)
    assert np.abs(lengths - reference["lengths"][:, k]).max() <= TOLERANCE
    assert np.abs(lengthening - reference["lengthening_speeds"][:, k]).max() <= TOLERANCE
    assert np.abs(by_force - reference["moment_arms"][:, k, :]).max() <= TOLERANCE
    assert np.abs(by_length - reference["moment_arms"][:, k, :]).max() <= TOLERANCE
    assert np.abs(by_force - by_length).max() <= TOLERANCE
    assert np.ptp(lengths) > 0.05 and np.abs(by_force).max() > 0.02  # the samples do move the muscle


def test_arm26_paths_equal_opensim_with_wrapping_switched_off(opensim_task):
    osim = load_osim(ARM26)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        paths = geometric_paths(osim, wrapping=False)
    warned = {str(w.message).split("muscle '")[1].split("'")[0] for w in caught if w.category is GeometricPathWarning}
    assert warned == {"TRIlong", "TRIlat", "TRImed", "BIClong", "BRA"}  # every muscle but BICshort wraps
    configurations, speeds = _random_configurations(osim.multibody, 50, seed=5)
    reference = _opensim_reference(opensim_task, ARM26, osim.multibody, configurations, speeds, disable_wraps=True)
    names = list(reference["muscle_names"])
    assert sorted(names) == sorted(p.name for p in paths)
    for path in paths:
        k = names.index(path.name)
        lengths, lengthening, by_force, _ = _evaluate(path, configurations, speeds)
        assert np.abs(lengths - reference["lengths"][:, k]).max() <= TOLERANCE, path.name
        assert np.abs(lengthening - reference["lengthening_speeds"][:, k]).max() <= TOLERANCE, path.name
        assert np.abs(by_force - reference["moment_arms"][:, k, :]).max() <= TOLERANCE, path.name


def test_only_muscles_whose_wraps_are_ignored_warn(tmp_path):
    osim = load_osim(ARM26)
    with pytest.warns(GeometricPathWarning, match="wrapping is switched off"):
        geometric_path(osim, "BRA", wrapping=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GeometricPathWarning)
        geometric_path(osim, "BICshort")
        assert geometric_path(osim, "BRA").wraps  # a cylinder: wrapped, no warning
        assert geometric_path(osim, "TRIlong").wraps  # cylinders and an ellipsoid
        assert geometric_path(load_osim(arm26_with_torus(tmp_path)), "TRIlong").wraps  # and a torus


def _conditional_boundaries(osim, model):
    """Configurations 1e-7 rad on each side of every conditional point's switching value."""
    q0 = model.default_q()
    rows = []
    for muscle in osim.muscles:
        for point in muscle.path.points:
            if not isinstance(point, osim_spec.ConditionalPathPoint):
                continue
            index = model.coordinate_index(point.coordinate)
            low, high = model.coordinates[index].range
            for edge in (point.range[0] - 1e-5, point.range[1] + 1e-5):
                for side in (-1e-7, 1e-7):
                    if low <= edge + side <= high:
                        q = q0.copy()
                        q[index] = edge + side
                        rows.append(q)
    return np.array(rows)


def test_gait2d_has_no_wraps_and_matches_opensim(opensim_task):
    osim = load_osim(GAIT2D)
    assert not osim.spec.wrap_objects and all(not m.path.wraps for m in osim.muscles)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GeometricPathWarning)
        paths = geometric_paths(osim)
    assert len(paths) == 18
    model = osim.multibody
    configurations, speeds = _random_configurations(model, 60, seed=6)
    boundaries = _conditional_boundaries(osim, model)
    assert len(boundaries) >= 8
    configurations = np.vstack([configurations, boundaries])
    speeds = np.vstack([speeds, np.random.default_rng(7).normal(size=(len(boundaries), model.nv))])
    reference = _opensim_reference(opensim_task, GAIT2D, model, configurations, speeds)
    names = list(reference["muscle_names"])
    for path in paths:
        k = names.index(path.name)
        lengths, lengthening, by_force, by_length = _evaluate(path, configurations, speeds)
        assert np.abs(lengths - reference["lengths"][:, k]).max() <= TOLERANCE, path.name
        assert np.abs(lengthening - reference["lengthening_speeds"][:, k]).max() <= TOLERANCE, path.name
        assert np.abs(by_force - reference["moment_arms"][:, k, :]).max() <= TOLERANCE, path.name
        assert np.abs(by_length - by_force).max() <= TOLERANCE, path.name


def test_conditional_point_switches_at_its_range():
    """rect_fem_r's P2 (femur) is on the path only while knee_angle_r <= -1.45997 (+1e-5)."""
    osim = load_osim(GAIT2D)
    model = osim.multibody
    path = geometric_path(osim, "rect_fem_r")
    first, conditional, moving = path.points
    assert isinstance(conditional, ConditionalPathPoint) and isinstance(moving, MovingPathPoint)
    knee = model.coordinate_index("knee_angle_r")
    switch = -1.45997 + 1e-5

    def ground(point, q):
        return np.asarray(point_position(model, q, point.body, point.location_in_body(model, q))).ravel()

    for offset, active in ((-1e-6, True), (1e-6, False)):
        q = model.default_q()
        q[knee] = switch + offset
        a, b, c = ground(first, q), ground(conditional, q), ground(moving, q)
        expected = np.linalg.norm(b - a) + np.linalg.norm(c - b) if active else np.linalg.norm(c - a)
        assert float(path.length(q)) == pytest.approx(expected, abs=1e-12)
    q_in, q_out = model.default_q(), model.default_q()
    q_in[knee], q_out[knee] = switch - 1e-6, switch + 1e-6
    assert float(path.length(q_in)) - float(path.length(q_out)) > 1e-4  # the via point does change the path


def _moving_point_model():
    model = Model("moving_point", gravity=(0.0, 0.0, 0.0))
    model.add_body(Body("link", 1.0, (0.1, 0.0, 0.0), (0.01, 0.01, 0.01, 0.0, 0.0, 0.0)))
    model.add_joint(PinJoint("pin", OffsetFrame(GROUND), OffsetFrame("link"), Coordinate("theta", range=(-2.0, 2.0))))
    return model


def test_moving_point_against_sympy():
    """A point sliding along a rotating link: x = 0.5 + 0.1 θ² (body frame), path to a ground point."""
    model = _moving_point_model()
    points = (
        FixedPathPoint("anchor", GROUND, (1.0, 0.2, 0.0)),
        MovingPathPoint("slider", "link", ("theta", None, None), (Polynomial((0.1, 0.0, 0.5)), None, None),
                        fixed=(0.0, 0.05, 0.0)),
    )
    path = GeometricPath(model, points, name="slider")
    theta, speed = sp.symbols("theta speed")
    a = 0.5 + 0.1 * theta**2
    x = a * sp.cos(theta) - 0.05 * sp.sin(theta)
    y = a * sp.sin(theta) + 0.05 * sp.cos(theta)
    length = sp.sqrt((x - 1.0) ** 2 + (y - 0.2) ** 2)
    for value in (-1.3, -0.2, 0.4, 1.7):
        exact_length = float(length.subs(theta, value))
        exact_gradient = float(sp.diff(length, theta).subs(theta, value))
        assert float(path.length([value])) == pytest.approx(exact_length, abs=1e-14)
        assert float(path.lengthening_speed([value], [0.7])) == pytest.approx(0.7 * exact_gradient, abs=1e-14)
        # Without the moving point's own generalized force the moment arm would be wrong.
        assert float(moment_arms(path, [value])) == pytest.approx(-exact_gradient, abs=1e-14)
    _, extra = path.unit_tension_loads([0.4])
    assert abs(float(extra)) > 1e-3


def _chain_path(model):
    """A path over spatial_chain's free, ball, universal, custom, revolute and prismatic joints,
    with a conditional point and a moving point."""
    return GeometricPath(model, (
        FixedPathPoint("origin", GROUND, (0.3, 1.6, 0.2)),
        FixedPathPoint("trunk_via", "trunk", (0.25, 0.35, 0.1)),
        ConditionalPathPoint("upper_via", "upper", (0.05, -0.2, 0.03), coordinate="elbow_flex", range=(-0.3, 0.4)),
        MovingPathPoint("middle_slider", "middle", ("wrist_dev", "elbow_twist", None),
                        (Polynomial((0.02, 0.01, 0.03)), Polynomial((0.05, -0.1)), None), fixed=(0.0, 0.0, 0.02)),
        FixedPathPoint("lower_via", "lower", (0.02, -0.3, 0.01)),
        FixedPathPoint("insertion", "finger", (0.01, -0.05, 0.0)),
    ), name="chain")


@pytest.mark.parametrize("with_quaternions", [True, False])
def test_lengthening_speed_is_length_gradient_times_qdot(with_quaternions):
    model = spatial_chain(with_quaternions)
    path = _chain_path(model)
    q_symbol = ca.SX.sym("q", model.nq)
    gradient = ca.Function("gradient", [q_symbol], [ca.jacobian(path.length(q_symbol), q_symbol)])
    rng = np.random.default_rng(8)
    for _ in range(10):
        q, u, _ = random_state(model, rng, scale=0.6)
        qdot = ca.mtimes(coordinate_rates_matrix(model, q), ca.DM(u))
        expected = float(ca.mtimes(gradient(q), qdot))
        assert float(path.lengthening_speed(q, u)) == pytest.approx(expected, abs=1e-12)


def test_bad_paths_raise():
    model = _moving_point_model()
    with pytest.raises(TrajoptInputError, match="no body 'femur'"):
        GeometricPath(model, (FixedPathPoint("a", GROUND, (0, 0, 0)), FixedPathPoint("b", "femur", (0, 0, 0))))
    with pytest.raises(TrajoptInputError, match="needs >= 2 points"):
        GeometricPath(model, (FixedPathPoint("a", GROUND, (0, 0, 0)),))
    bad = GeometricPath(model, (FixedPathPoint("a", GROUND, (1, 0, 0)),
                                ConditionalPathPoint("c", "link", (0, 1, 0), coordinate="knee", range=(0, 1)),
                                FixedPathPoint("b", "link", (0.5, 0, 0))))
    with pytest.raises(TrajoptInputError, match="coordinate 'knee'"):
        bad.length([0.0])
    with pytest.raises(TrajoptInputError, match="location"):
        FixedPathPoint("a", GROUND, (0, 0))


def test_coincident_points_on_one_body_give_finite_loads():
    """A conditional point placed on top of the next point of its body (a zero-length segment, which
    OpenSim also leaves out of its loads) changes nothing and makes no NaN."""
    model = _moving_point_model()
    plain = GeometricPath(model, (FixedPathPoint("a", GROUND, (1.0, 0.2, 0.0)),
                                  FixedPathPoint("b", "link", (0.5, 0.1, 0.0))))
    doubled = GeometricPath(model, (
        FixedPathPoint("a", GROUND, (1.0, 0.2, 0.0)),
        ConditionalPathPoint("c", "link", (0.5, 0.1, 0.0), coordinate="theta", range=(0.0, 1.0)),
        FixedPathPoint("b", "link", (0.5, 0.1, 0.0)),
    ))
    for theta in (-0.5, 0.5):  # c off, then on
        assert float(doubled.length([theta])) == pytest.approx(float(plain.length([theta])), abs=1e-15)
        r = float(moment_arms(doubled, [theta]))
        assert np.isfinite(r) and r == pytest.approx(float(moment_arms(plain, [theta])), abs=1e-15)
