"""Polynomial paths over constrained quaternion components: hemisphere and norm handling, the chain-rule
moment arms about the body angular velocity against an analytic straight-line muscle and against the paper's
(Eᵀ)⁻¹ R_Q* (Zoufaly et al. eq. 15)."""

import casadi
import numpy as np
import pytest

from trajopt.model.paths.domain import PathDomain, PathDomainError
from trajopt.model.paths.fitting import ACCURATE, fit_paths
from trajopt.model.paths.polynomial import PolynomialPaths
from trajopt.model.paths.quaternion import angular_velocity_matrix, spatial_from_constrained_jacobian
from trajopt.model.paths.quaternion_paths import (
    BallJointQuaternion,
    QuaternionBallPaths,
    constrained_from_quaternion,
    constrained_moment_arms,
)
from trajopt.model.paths.samples import PathSamples

JOINT = BallJointQuaternion("shoulder", ("qw", "qx", "qy", "qz"))
GROUND_POINT = np.array([0.05, 0.12, -0.03])  # m, relative to the joint centre
BODY_POINT = np.array([0.01, -0.15, 0.02])  # m, in the body frame


def _rotation(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _straight_line(q):
    """Length and body-frame moment arm r_S = -(p × Rᵀ d̂) of a line from a ground point to a body point."""
    rotation = _rotation(q / np.linalg.norm(q))
    vector = rotation @ BODY_POINT - GROUND_POINT
    length = np.linalg.norm(vector)
    return length, -np.cross(BODY_POINT, rotation.T @ (vector / length))


def _unit(star):
    return np.column_stack([np.sqrt(1 - np.sum(star**2, axis=1)), star])


@pytest.fixture(scope="module")
def fitted():
    domain = PathDomain.box(JOINT.variables, [[-0.5, 0.5]] * 3)
    star = domain.sample(1500, 0)
    quaternions = _unit(star)
    lengths, spatial = zip(*(_straight_line(q) for q in quaternions))
    arms = constrained_moment_arms(quaternions, np.array(spatial))
    samples = PathSamples(JOINT.variables, ("line",), star, np.array(lengths)[:, None], arms[:, None, :])
    paths, _ = fit_paths(samples, ACCURATE, ranges={c: (-0.5, 0.5) for c in JOINT.variables})
    return QuaternionBallPaths(PolynomialPaths(list(paths), "test", domain), (JOINT,))


def test_constrained_components_pick_the_hemisphere_and_ignore_the_norm():
    q = np.array([[0.8, 0.36, -0.48, 0.0]])
    np.testing.assert_allclose(constrained_from_quaternion(q), [[0.36, -0.48, 0.0]], atol=1e-15)
    np.testing.assert_allclose(constrained_from_quaternion(-q), [[0.36, -0.48, 0.0]], atol=1e-15)
    np.testing.assert_allclose(constrained_from_quaternion(1.03 * q), [[0.36, -0.48, 0.0]], atol=1e-15)
    symbolic = casadi.SX.sym("q", 4)
    f = casadi.Function("f", [symbolic], [constrained_from_quaternion(symbolic)])
    np.testing.assert_allclose(np.asarray(f(-1.03 * q[0])).ravel(), [0.36, -0.48, 0.0], atol=1e-15)


def test_moment_arms_about_angular_velocity_match_the_analytic_line_and_the_paper(fitted):
    coordinates = JOINT.quaternion
    function = fitted.lengths_and_moment_arms_function(coordinates)
    rng = np.random.default_rng(3)
    star = rng.uniform(-0.45, 0.45, (200, 3))
    quaternions = _unit(star)
    quaternions[::2] *= -1.0  # the other hemisphere: same rotation
    quaternions[1::4] *= 1.02  # off the unit sphere (integration drift)
    errors, identity = [], 0.0
    path = fitted.paths["line"]
    for q in quaternions:
        length, arms_q = (np.asarray(v).ravel() for v in function(q))
        # moment arms about the body angular velocity: -∂l/∂Q · Q̇/ω with Q̇ = ½ Gᵀ ω
        spatial = 0.5 * np.asarray(angular_velocity_matrix(q)) @ arms_q
        true_length, true_spatial = _straight_line(q)
        errors.append(np.concatenate([[length[0] - true_length], spatial - true_spatial]))
        unit = q / np.linalg.norm(q) * np.sign(q[0])
        r_star = np.asarray(path.moment_arms_function(unit[1:])).ravel()
        paper = np.asarray(spatial_from_constrained_jacobian(r_star, unit)).ravel()
        identity = max(identity, np.abs(paper - spatial).max())
    errors = np.array(errors)
    assert identity < 1e-12  # eq. 4 (chain rule) = eq. 15 ((Eᵀ)⁻¹ R_Q*) of the fitted polynomial
    assert np.sqrt(np.mean(errors[:, 0] ** 2)) < 0.5e-3  # the fit's held-out accuracy, against the analytic line
    assert np.sqrt(np.mean(errors[:, 1:] ** 2)) < 1e-3


def test_configurations_outside_the_fitted_orientations_are_refused(fitted):
    inside = _unit(np.array([[0.1, 0.2, -0.3]]))
    fitted.check_domain(-inside, JOINT.quaternion)
    outside = _unit(np.array([[0.7, 0.1, 0.0]]))
    with pytest.raises(PathDomainError, match=r"coordinate 'shoulder_Q1' = 0.7 at frame 0"):
        fitted.check_domain(outside, JOINT.quaternion)


def _arm26_with_ball_shoulder(folder):
    """arm26 whose r_shoulder CustomJoint (one elevation angle) is an OpenSim BallJoint (a quaternion in trajopt)."""
    import re

    from conftest import ROOT

    text = (ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim").read_text()
    joint = re.search(r'<CustomJoint name="r_shoulder">.*?</CustomJoint>', text, re.S).group(0)
    ball = re.sub(r"<coordinates>.*?</coordinates>", "<coordinates>" + "".join(
        f'<Coordinate name="r_shoulder_{i}"><default_value>0</default_value></Coordinate>' for i in range(3))
        + "</coordinates>", joint, count=1, flags=re.S)
    ball = re.sub(r"<SpatialTransform>.*?</SpatialTransform>", "", ball, flags=re.S)
    ball = ball.replace("<CustomJoint", "<BallJoint").replace("</CustomJoint>", "</BallJoint>")
    file = folder / "arm26_ball_shoulder.osim"
    file.write_text(text.replace(joint, ball))
    return file


def test_paths_over_a_ball_joints_quaternion_reach_a_models_dynamics(tmp_path):
    """A paths file over ``r_shoulder_Q1..Q3`` (what ``fit-paths --quaternion`` writes) read by the tools for a model
    whose shoulder is a BallJoint: the model's moment arms about the humerus angular velocity are −dl/dε along the
    joint's own rotations q ⊕ ε e_k (central differences), and about the elbow −∂l/∂θ."""
    import warnings

    from trajopt.model.musculoskeletal import MusculoskeletalModel
    from trajopt.model.osim import load_osim
    from trajopt.model.paths.polynomial import PolynomialPath
    from trajopt.model.paths.files import read_paths

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(_arm26_with_ball_shoulder(tmp_path))
    mb = osim.multibody
    variables = ("r_shoulder_Q1", "r_shoulder_Q2", "r_shoulder_Q3", "r_elbow_flex")
    exponents = ((0, 0, 0, 0), (1, 0, 0, 0), (0, 2, 0, 0), (1, 0, 1, 1), (0, 0, 0, 1), (0, 1, 0, 2))
    rng = np.random.default_rng(5)
    paths = PolynomialPaths([PolynomialPath(m.name, variables, exponents, tuple(0.3 + 0.05 * rng.normal(size=6)),
                                            ((-0.6, 0.6),) * 3 + ((0.0, 2.3),)) for m in osim.spec.muscles],
                            "arm26_ball", PathDomain.box(variables, [[-0.6, 0.6]] * 3 + [[0.0, 2.3]]))
    file = tmp_path / "paths.json"
    paths.save(file)
    read = read_paths(file, osim)
    assert isinstance(read, QuaternionBallPaths) and read.joints[0].quaternion == (
        "r_shoulder_qw", "r_shoulder_qx", "r_shoulder_qy", "r_shoulder_qz")
    model = MusculoskeletalModel(osim, read)
    joint = mb.joint("r_shoulder")
    shoulder = mb.q_slice("r_shoulder")
    q_sym, v_sym = casadi.SX.sym("q", 4), casadi.SX.sym("v", 3)
    integrate = casadi.Function("integrate", [q_sym, v_sym], [joint.integrate(q_sym, v_sym)])
    elbow = mb.coordinate_index("r_elbow_flex")
    h = 1e-6
    for _ in range(5):
        quaternion = rng.normal(size=4)
        quaternion *= np.sign(quaternion[0]) / np.linalg.norm(quaternion)
        if np.abs(quaternion[1:]).max() > 0.55:
            quaternion[1:] *= 0.55 / np.abs(quaternion[1:]).max()
            quaternion[0] = np.sqrt(1 - np.sum(quaternion[1:] ** 2))
        q = mb.default_q()
        q[shoulder] = quaternion
        q[elbow] = rng.uniform(0.2, 2.0)
        lengths, _, arms = model.musculotendon_kinematics(q, np.zeros(mb.nv))
        arms = np.asarray(arms)

        def length_at(shift, k=None, elbow_shift=0.0):
            moved = q.copy()
            if k is not None:
                moved[shoulder] = np.asarray(integrate(quaternion, shift * np.eye(3)[k])).ravel()
            moved[elbow] += elbow_shift
            return np.asarray(model.musculotendon_kinematics(moved, np.zeros(mb.nv))[0]).ravel()

        for k in range(3):
            expected = -(length_at(h, k) - length_at(-h, k)) / (2 * h)
            np.testing.assert_allclose(arms[:, mb.speed_index(joint.speed_names[k])], expected, atol=1e-9)
        expected = -(length_at(0.0, elbow_shift=h) - length_at(0.0, elbow_shift=-h)) / (2 * h)
        np.testing.assert_allclose(arms[:, mb.speed_index("r_elbow_flex")], expected, atol=1e-9)
