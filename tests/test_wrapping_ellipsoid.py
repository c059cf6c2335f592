"""Wrapping over ellipsoids (trajopt.model.paths.wrapping.ellipsoid) against OpenSim 4.6: arm26's BIClong (over the
BIClonghh ellipsoid) and TRIlong (TRI cylinder, TRIlonghh ellipsoid, TRIlongglen cylinder) at random
configurations over the full coordinate ranges: lengths, −∂l/∂q against central differences of OpenSim's
lengths away from switches (the rule of test_wrapping_moment_arms), and the generalized-force method against
GeometryPath::computeMomentArm.

trajopt reproduces OpenSim's iterations (closest-point Newton solves with their stopping test, the
Levenberg-Marquardt tangent points), so the lengths agree to round-off, not to the iterations' tolerances."""

import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from test_wrapping_moment_arms import STEP, central_differences, random_configurations, shifted_configurations
from trajopt.model.osim import OsimIgnoredWarning, load_osim
from trajopt.model.paths.geometric import GeometricPath, GeometricPaths, geometric_path

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
MUSCLES = ["BIClong", "TRIlong"]
LENGTH_TOLERANCE = 1e-12  # m; measured 5.6e-16 (BIClong), 2.3e-15 (TRIlong); the issue asks <= 1e-5
COORDINATES = ["r_shoulder_elev", "r_elbow_flex"]
# −∂l/∂q against OpenSim's central differences (m): measured 1.1e-9 (60 samples), 1.2e-9 (300); the issue asks 1e-6
DERIVATIVE_TOLERANCE = 1e-8
FORCE_TOLERANCE = 1e-12  # m, generalized-force method against computeMomentArm; measured 2.9e-15 (60), 2.5e-15 (300)


def _evaluate(expression, q, configurations):
    function = ca.Function("f", [q], [expression])
    return np.asarray(function.map(len(configurations))(configurations.T)).T


def _reference(opensim_task, model, configurations):
    return opensim_task("geometric_path_reference", {
        "model": str(ARM26), "coordinates": np.array(model.coordinate_names), "configurations": configurations,
        "muscles": np.array(MUSCLES)})


@pytest.mark.opensim
def test_arm26_ellipsoid_lengths_match_opensim(opensim_task, arm26):
    osim = arm26
    model = osim.multibody
    configurations = random_configurations(model, 300, seed=151)
    reference = _reference(opensim_task, model, configurations)
    q = ca.SX.sym("q", model.nq)
    for k, name in enumerate(MUSCLES):
        path = geometric_path(osim, name)
        lengths = _evaluate(path.length(q), q, configurations).ravel()
        error = np.abs(lengths - reference["lengths"][:, k])
        assert error.max() <= LENGTH_TOLERANCE, (name, error.max())
        straight = _evaluate(GeometricPath(model, path.points, name).length(q), q, configurations).ravel()
        wrapped = np.abs(straight - lengths) > 1e-4
        assert 0.3 < wrapped.mean() < 0.95, (name, wrapped.mean())  # wrapped and unwrapped samples


def _moment_arm_report(opensim_task, osim, count, seed):
    model = osim.multibody
    configurations = random_configurations(model, count, seed, margin=2 * STEP)
    indices = [model.coordinate_index(c) for c in COORDINATES]
    shifted = shifted_configurations(configurations, indices)
    reference = _reference(opensim_task, model, np.vstack(shifted))
    lengths = reference["lengths"].reshape(len(shifted), count, len(MUSCLES))
    q = ca.SX.sym("q", model.nq)
    report = {}
    for m, name in enumerate(MUSCLES):
        path = geometric_path(osim, name)
        by_length = _evaluate(-ca.jacobian(path.length(q), q).T, q, configurations)
        by_force = _evaluate(path.generalized_force_moment_arms(q), q, configurations)
        kept, worst, gap, force_all = 0, 0.0, 0.0, 0.0
        for c, i in enumerate(indices):
            smooth, central = central_differences(lengths, c, m)
            kept += smooth.sum()
            worst = max(worst, np.abs(by_length[:, i] - central)[smooth].max(initial=0.0))
            gap = max(gap, np.abs(by_length[:, i] - by_force[:, i])[smooth].max(initial=0.0))
            force_all = max(force_all, np.abs(by_force[:, i] - reference["moment_arms"][:count, m, i]).max())
        report[name] = {"kept": kept / (count * len(indices)), "worst": worst, "gap": gap, "force_all": force_all}
    return report


def _assert_report(report):
    for name, r in report.items():
        assert r["kept"] > 0.9, (name, r)
        assert r["worst"] <= DERIVATIVE_TOLERANCE, (name, r)
        assert r["force_all"] <= FORCE_TOLERANCE, (name, r)


@pytest.mark.opensim
@pytest.mark.slow
def test_arm26_ellipsoid_moment_arms(opensim_task, arm26):
    report = _moment_arm_report(opensim_task, arm26, 30, seed=152)
    _assert_report(report)
    # OpenSim's ellipsoid path is not length-minimal: computeMomentArm is not −dl/dq (measured away from switches,
    # 300 samples: 4.3 mm on BIClong, 15 mm on TRIlong)
    assert report["TRIlong"]["gap"] > 1e-3


@pytest.mark.opensim
@pytest.mark.slow
def test_arm26_ellipsoid_moment_arms_300(opensim_task, arm26):
    report = _moment_arm_report(opensim_task, arm26, 300, seed=153)
    _assert_report(report)


def test_arm26_geometric_paths_wrap_every_muscle(arm26):
    paths = GeometricPaths(arm26)
    assert paths.wrapped_muscles == ()
    assert all(p.wraps for p in paths.paths if p.name in MUSCLES)


@pytest.mark.opensim
@pytest.mark.parametrize("method, tolerance", [("midpoint", 1e-12), ("axial", 1e-8)])
@pytest.mark.slow
def test_midpoint_and_axial_methods_match_opensim(opensim_task, tmp_path, method, tolerance):
    """arm26 with every PathWrap's method set to midpoint or axial (only the ellipsoids use it). Measured at 300
    configurations: midpoint 4.4e-16 m (BIClong), 2.5e-15 m (TRIlong); axial 2.5e-15 m but for one BIClong sample
    at 3.9e-9 m."""
    file = tmp_path / f"arm26_{method}.osim"
    file.write_text(ARM26.read_text().replace("<method>hybrid</method>", f"<method>{method}</method>"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim = load_osim(file)
    model = osim.multibody
    configurations = random_configurations(model, 100, seed=7)
    reference = opensim_task("geometric_path_reference", {
        "model": str(file), "coordinates": np.array(model.coordinate_names), "configurations": configurations,
        "muscles": np.array(MUSCLES)})
    q = ca.SX.sym("q", model.nq)
    for k, name in enumerate(MUSCLES):
        lengths = _evaluate(geometric_path(osim, name).length(q), q, configurations).ravel()
        assert np.abs(lengths - reference["lengths"][:, k]).max() <= tolerance, name
