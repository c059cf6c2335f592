"""Moment arms by the generalized-force method (r = Cᵀ f / s) against r = -dl/dθ (Sherman et al.), for
OpenSim models, a quaternion ball joint (Zoufaly et al.'s R_S, R_Q, R_Q*, R_E), a CustomJoint whose axes
are several functions of one coordinate, and coordinates coupled by CoordinateCouplerConstraints."""

import warnings
from types import SimpleNamespace

import casadi as ca
import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.core.multibody import GROUND, Body, Coordinate, Model, OffsetFrame, PinJoint
from trajopt.core.multibody.example_models import random_state, spatial_chain
from trajopt.core.multibody.functions import Linear, Polynomial
from trajopt.core.multibody.kinematics import coordinate_rates_matrix
from trajopt.model.osim import load_osim
from trajopt.model.osim import spec as osim_spec
from trajopt.model.paths.geometric import FixedPathPoint, GeometricPath, GeometricPathWarning, geometric_paths
from trajopt.model.paths.moment_arms import (
    CoordinateCoupling,
    coupling_matrix,
    couplings_from_osim,
    generalized_forces,
    load_osim_with_couplings,
    moment_arms,
    moment_arms_from_length,
    spatial_moment_arm,
)
from trajopt.model.paths.quaternion import (
    constrained_from_spatial_jacobian,
    euler_from_spatial_jacobian,
    quaternion_from_euler,
    spatial_from_quaternion_jacobian,
)

from conftest import ROOT
from test_geometric_paths import _chain_path

TOLERANCE = 1e-9  # m


def _numbers(value):
    return np.asarray(ca.DM(value)).ravel()


def test_arm26_generalized_force_equals_length_gradient():
    """The identity holds for every arm26 muscle's geometric path (wrap objects left out)."""
    osim = load_osim(ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeometricPathWarning)
        paths = geometric_paths(osim, wrapping=False)
    model = osim.multibody
    low = np.array([c.range[0] for c in model.coordinates])
    high = np.array([c.range[1] for c in model.coordinates])
    configurations = low + (high - low) * np.random.default_rng(11).random((50, model.nq))
    for path in paths:
        for q in configurations:
            by_force, by_length = _numbers(moment_arms(path, q)), _numbers(moment_arms_from_length(path, q))
            assert np.abs(by_force - by_length).max() <= TOLERANCE, path.name


@pytest.mark.parametrize("with_quaternions", [True, False])
def test_generalized_forces_equal_length_gradient_on_every_joint_type(with_quaternions):
    """f / s = -Nᵀ (∂l/∂q)ᵀ over free (or planar), ball (or Euler), universal, custom, revolute and
    prismatic joints, with conditional and moving points on the path."""
    model = spatial_chain(with_quaternions)
    path = _chain_path(model)
    q_symbol = ca.SX.sym("q", model.nq)
    gradient = ca.Function("gradient", [q_symbol], [ca.jacobian(path.length(q_symbol), q_symbol)])
    rng = np.random.default_rng(12)
    for _ in range(10):
        q, _, _ = random_state(model, rng, scale=0.6)
        expected = -_numbers(ca.mtimes(coordinate_rates_matrix(model, q).T, gradient(q).T))
        assert np.abs(_numbers(generalized_forces(path, q)) - expected).max() <= TOLERANCE
        assert np.abs(expected).max() > 1e-3


def _quaternion_slice(model, joint):
    start = model.q_slice(joint).start
    return slice(start, start + 4)


def test_ball_joint_spatial_moment_arm_maps_to_quaternion_jacobians():
    """-spatial_moment_arm = R_S = ½ G(Q) R_Q, and R_Q* = Eᵀ R_S is the gradient of l(Q*) with
    Q0 = sqrt(1 - |Q*|²) (Zoufaly et al. eqs. 3-4 and 12-13)."""
    model = spatial_chain(True)
    path = _chain_path(model)
    shoulder = _quaternion_slice(model, "shoulder")
    q_symbol = ca.SX.sym("q", model.nq)
    length = ca.Function("length", [q_symbol], [path.length(q_symbol)])
    rng = np.random.default_rng(13)
    for _ in range(10):
        q, _, _ = random_state(model, rng, scale=0.6)
        if q[shoulder][0] < 0:
            q[shoulder] = -q[shoulder]  # the same rotation with Q0 >= 0
        quaternion = q[shoulder]
        spatial = -_numbers(spatial_moment_arm(path, q, "shoulder"))
        # R_Q: the length as a function of the four quaternion entries, others fixed.
        entries = ca.SX.sym("Q", 4)
        q_with = ca.vertcat(ca.DM(q[: shoulder.start]), entries, ca.DM(q[shoulder.stop :]))
        r_q = _numbers(ca.Function("r_q", [entries], [ca.jacobian(length(q_with), entries)])(quaternion))
        assert np.abs(spatial - _numbers(spatial_from_quaternion_jacobian(r_q, quaternion))).max() <= TOLERANCE
        # R_Q*: eliminate Q0.
        vector = ca.SX.sym("Q_star", 3)
        q_star = ca.vertcat(ca.DM(q[: shoulder.start]), ca.sqrt(1 - ca.sumsqr(vector)), vector,
                            ca.DM(q[shoulder.stop :]))
        r_q_star = _numbers(ca.Function("r_q_star", [vector], [ca.jacobian(length(q_star), vector)])(quaternion[1:]))
        assert np.abs(r_q_star - _numbers(constrained_from_spatial_jacobian(spatial, quaternion))).max() <= TOLERANCE
        assert np.abs(spatial).max() > 1e-3


def test_ball_joint_euler_moment_arms_are_mapped_spatial_moment_arm():
    """R_E = Jᵀ R_S: the Euler (XYZ) chain's moment arms about the shoulder angles equal the quaternion
    chain's spatial moment arm mapped by the Euler-rate Jacobian, at the same configuration."""
    quaternion_model, euler_model = spatial_chain(True), spatial_chain(False)
    quaternion_path, euler_path = _chain_path(quaternion_model), _chain_path(euler_model)
    rng = np.random.default_rng(14)
    for _ in range(5):
        angles = rng.uniform(-0.8, 0.8, 3)
        shared = {"elbow_flex": rng.uniform(-0.3, 0.3), "elbow_twist": rng.uniform(-1, 1),
                  "wrist_flex": rng.uniform(-1, 1), "wrist_dev": rng.uniform(-1, 1),
                  "hand_roll": rng.uniform(-1, 1), "finger_slide": rng.uniform(-0.05, 0.05),
                  "ornament_angle": rng.uniform(-1, 1)}
        q_quaternion = quaternion_model.default_q()
        q_euler = euler_model.default_q()
        for name, value in shared.items():
            q_quaternion[quaternion_model.coordinate_index(name)] = value
            q_euler[euler_model.coordinate_index(name)] = value
        q_quaternion[_quaternion_slice(quaternion_model, "shoulder")] = quaternion_from_euler(angles, "XYZ")
        for k, axis in enumerate("xyz"):
            q_euler[euler_model.coordinate_index(f"shoulder_{axis}")] = angles[k]
        # Same configuration in both models, so the same length.
        assert float(quaternion_path.length(q_quaternion)) == pytest.approx(float(euler_path.length(q_euler)),
                                                                            abs=1e-12)
        spatial = _numbers(spatial_moment_arm(quaternion_path, q_quaternion, "shoulder"))
        euler = _numbers(moment_arms(euler_path, q_euler, ["shoulder_x", "shoulder_y", "shoulder_z"]))
        assert np.abs(euler - _numbers(euler_from_spatial_jacobian(spatial, angles, "XYZ"))).max() <= TOLERANCE


def _central_difference(function, x, step=1e-5):
    return (function(x + step) - function(x - step)) / (2 * step)


def test_custom_joint_coordinate_driving_several_axes():
    """spatial_chain's wrist_flex turns the wrist about z and y and slides it along x (a spline):
    the generalized-force moment arm equals -dl/dθ along that coupled motion (finite differences)."""
    model = spatial_chain(False)
    path = _chain_path(model)
    index = model.coordinate_index("wrist_flex")
    rng = np.random.default_rng(15)
    for _ in range(5):
        q, _, _ = random_state(model, rng, scale=0.6)

        def length_at(theta):
            moved = q.copy()
            moved[index] = theta
            return float(path.length(moved))

        expected = -_central_difference(length_at, q[index])
        assert float(moment_arms(path, q, ["wrist_flex"])) == pytest.approx(expected, abs=1e-8)
        assert float(moment_arms_from_length(path, q, ["wrist_flex"])) == pytest.approx(
            float(moment_arms(path, q, ["wrist_flex"])), abs=TOLERANCE)


def _three_link_model():
    model = Model("coupled_links", gravity=(0.0, -9.81, 0.0))
    for name in ("thigh", "shank", "foot"):
        model.add_body(Body(name, 1.0, (0.0, -0.2, 0.0), (0.01, 0.001, 0.01, 0.0, 0.0, 0.0)))
    model.add_joint(PinJoint("hip", OffsetFrame(GROUND), OffsetFrame("thigh"), Coordinate("hip_angle")))
    model.add_joint(PinJoint("knee", OffsetFrame("thigh", (0.0, -0.4, 0.0)), OffsetFrame("shank"),
                             Coordinate("knee_angle")))
    model.add_joint(PinJoint("ankle", OffsetFrame("shank", (0.0, -0.4, 0.0)), OffsetFrame("foot"),
                             Coordinate("ankle_angle")))
    path = GeometricPath(model, (
        FixedPathPoint("origin", GROUND, (0.05, 0.1, 0.0)),
        FixedPathPoint("thigh_via", "thigh", (0.06, -0.35, 0.0)),
        FixedPathPoint("shank_via", "shank", (0.04, -0.38, 0.01)),
        FixedPathPoint("insertion", "foot", (0.12, -0.03, 0.0)),
    ), name="biarticular")
    couplings = (
        CoordinateCoupling("knee_angle", "hip_angle", Polynomial((0.3, 0.6, 0.1)), scale=0.9),
        CoordinateCoupling("ankle_angle", "knee_angle", Linear(0.5, -0.2)),
    )
    return model, path, couplings


def _coupled_q(couplings, theta):
    knee = couplings[0].value(theta)
    return np.array([theta, knee, couplings[1].value(knee)])


def test_coupler_constraints_generalized_force_equals_coupled_length_derivative():
    model, path, couplings = _three_link_model()
    for theta in (-0.7, 0.1, 0.9):
        q = _coupled_q(couplings, theta)
        knee_rate = 0.9 * (0.6 * theta + 0.6)
        assert np.allclose(_numbers(coupling_matrix(model, q, "hip_angle", couplings)),
                           [1.0, knee_rate, 0.5 * knee_rate])
        expected = -_central_difference(lambda t: float(path.length(_coupled_q(couplings, t))), theta)
        by_force = float(moment_arms(path, q, ["hip_angle"], couplings))
        assert by_force == pytest.approx(expected, abs=1e-8)
        assert (float(moment_arms_from_length(path, q, ["hip_angle"], couplings))
                == pytest.approx(by_force, abs=TOLERANCE))
        # Holding the coupled coordinates still gives a different (uncoupled) moment arm.
        assert abs(float(moment_arms(path, q, ["hip_angle"])) - by_force) > 1e-3


COUPLER = """<ConstraintSet name="constraintset">
			<objects>
				<CoordinateCouplerConstraint name="elbow_follows_shoulder">
					<isEnforced>true</isEnforced>
					<coupled_coordinates_function>
						<LinearFunction><coefficients> 0.4 0.7</coefficients></LinearFunction>
					</coupled_coordinates_function>
					<independent_coordinate_names>r_shoulder_elev</independent_coordinate_names>
					<dependent_coordinate_name>r_elbow_flex</dependent_coordinate_name>
					<scale_factor>1.0</scale_factor>
				</CoordinateCouplerConstraint>
			</objects>"""


def test_coupler_constraint_moment_arms_match_opensim(opensim_task, tmp_path):
    """arm26 with r_elbow_flex = 0.4 r_shoulder_elev + 0.7 enforced: OpenSim's computeMomentArm about the
    shoulder (coupling by velocity projection) equals Cᵀ f, for every muscle with wrapping switched off."""
    text = (ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim").read_text()
    empty = '<ConstraintSet name="constraintset">\n\t\t\t<objects />'
    assert empty in text
    coupled_file = tmp_path / "arm26_coupled.osim"
    coupled_file.write_text(text.replace(empty, COUPLER))
    osim, couplings = load_osim_with_couplings(coupled_file)
    assert [(c.dependent, c.independent) for c in couplings] == [("r_elbow_flex", "r_shoulder_elev")]
    model = osim.multibody
    shoulder = np.random.default_rng(16).uniform(-1.5, 3.1, 50)
    configurations = np.column_stack([shoulder, [couplings[0].value(s) for s in shoulder]])
    assert list(model.coordinate_names) == ["r_shoulder_elev", "r_elbow_flex"]
    reference = opensim_task("geometric_path_reference", {
        "model": str(coupled_file), "coordinates": np.array(model.coordinate_names),
        "configurations": configurations, "disable_wraps": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeometricPathWarning)
        paths = geometric_paths(osim, wrapping=False)
    names = list(reference["muscle_names"])
    for path in paths:
        k = names.index(path.name)
        lengths = np.array([float(path.length(q)) for q in configurations])
        coupled = np.array([float(moment_arms(path, q, ["r_shoulder_elev"], couplings)) for q in configurations])
        uncoupled = np.array([float(moment_arms(path, q, ["r_shoulder_elev"])) for q in configurations])
        assert np.abs(lengths - reference["lengths"][:, k]).max() <= TOLERANCE, path.name
        assert np.abs(coupled - reference["moment_arms"][:, k, 0]).max() <= TOLERANCE, path.name
        if path.name.startswith(("BIC", "TRIlong")):  # crosses both joints: the coupling matters
            assert np.abs(uncoupled - coupled).max() > 1e-3, path.name


def test_couplings_from_an_osim_spec():
    constraint = osim_spec.CoordinateCouplerConstraint(
        name="knee_follows_hip", dependent_coordinate="knee_angle", independent_coordinates=("hip_angle",),
        function=osim_spec.LinearFunction(0.5, 0.1), scale_factor=2.0, enforced=True)
    couplings = couplings_from_osim(SimpleNamespace(file="model.osim", constraints=(constraint,)))
    assert couplings[0].dependent == "knee_angle" and couplings[0].independent == "hip_angle"
    assert couplings[0].value(0.3) == pytest.approx(2.0 * (0.5 * 0.3 + 0.1))
    two = osim_spec.CoordinateCouplerConstraint(
        name="two", dependent_coordinate="a", independent_coordinates=("b", "c"),
        function=osim_spec.Constant(0.0), scale_factor=1.0, enforced=True)
    with pytest.raises(TrajoptInputError, match="'two'"):
        couplings_from_osim(SimpleNamespace(file="model.osim", constraints=(two,)))


def test_bad_moment_arm_requests_raise():
    model, path, couplings = _three_link_model()
    q = _coupled_q(couplings, 0.2)
    with pytest.raises(TrajoptInputError, match="'elbow'"):
        moment_arms(path, q, ["elbow"])
    with pytest.raises(TrajoptInputError, match="dependent coordinate"):
        coupling_matrix(model, q, "knee_angle", couplings)
    with pytest.raises(TrajoptInputError, match="not a ball or free joint"):
        spatial_moment_arm(path, q, "knee")
