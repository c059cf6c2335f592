"""Wrapping over tori (trajopt.model.paths.wrapping.torus) against OpenSim 4.6, at random configurations over the full
coordinate ranges: lengths, −∂l/∂q against central differences of OpenSim's lengths away from switches (the rule
of test_wrapping_moment_arms), and the generalized-force method against GeometryPath::computeMomentArm.

Two models: arm26 with two rings on the humerus that BRA (with the TRI cylinder) and BICshort (quadrant -x, its
only wrap) pass through (conftest.arm26_with_torus_rings; the rings wrap about half the configurations), and
arm26 with TRIlong's ellipsoid replaced by a torus it does not pass through (conftest.arm26_with_torus), which
OpenSim's constrained cylinder wraps the long way round everywhere. trajopt reproduces OpenSim's closest-point
search (lmdif with its loose tolerances) step for step, so lengths agree to round-off."""

import re
import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import arm26_with_torus, arm26_with_torus_rings
from test_wrapping_moment_arms import STEP, _compare, random_configurations
from trajopt.model.osim import OsimIgnoredWarning, load_osim
from trajopt.model.paths.geometric import GeometricPaths, geometric_path
from trajopt.model.paths.wrapping.torus import LM_STEPS, closest_circle_point

RINGS = ("BRA", "BICshort")
LENGTH_TOLERANCE = 1e-13  # m; measured at 300 samples: 1.0e-15 (BRA), 2.8e-16 (BICshort); the issue asks 1e-6
LONG_WAY_TOLERANCE = 1e-11  # m, TRIlong around the torus the long way (lengths to 1.1 m); measured 2.0e-12 (300)
# −∂l/∂q against OpenSim's central differences (m), 300 samples: measured 5.9e-10 (BRA), 2.1e-10 (BICshort). The
# long way round (lengths to 1.1 m, OpenSim's own lengths noisy at 1e-13 m, which h = 1e-6 turns into 1e-7 m)
# measured 1.1e-7 and 3.2e-7 at two seeds.
DERIVATIVE_TOLERANCE = 1e-8
LONG_WAY_DERIVATIVE_TOLERANCE = 5e-7
# Generalized-force method against computeMomentArm (m): 1e-12 for the rings; the long way round measured 1.9e-12
LONG_WAY_FORCE_TOLERANCE = 5e-12


def _load(file):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        return load_osim(file)


def _lengths(osim, muscles, configurations):
    q = ca.SX.sym("q", osim.multibody.nq)
    lengths = ca.vertcat(*[geometric_path(osim, m).length(q) for m in muscles])
    return np.asarray(ca.Function("l", [q], [lengths]).map(len(configurations))(configurations.T)).T


def _reference(opensim_task, file, osim, muscles, configurations):
    return opensim_task("geometric_path_reference", {
        "model": str(file), "coordinates": np.array(osim.multibody.coordinate_names),
        "configurations": configurations, "muscles": np.array(muscles)})["lengths"]


# (configurations, seed): a quick check by default, 300 configurations in the slow run.
SIZES = [pytest.param(60, 161), pytest.param(300, 162, marks=pytest.mark.slow)]
LONG_WAY_SIZES = [pytest.param(20, 163), pytest.param(300, 164, marks=pytest.mark.slow)]


def _length_errors(opensim_task, file, muscles, count, seed):
    """(configurations, trajopt's lengths, |trajopt - OpenSim|) at random configurations of `file`."""
    osim = _load(file)
    configurations = random_configurations(osim.multibody, count, seed)
    lengths = _lengths(osim, muscles, configurations)
    return configurations, lengths, np.abs(lengths - _reference(opensim_task, file, osim, muscles, configurations))


@pytest.mark.opensim
@pytest.mark.parametrize("count, seed", SIZES)
def test_torus_ring_lengths_match_opensim(opensim_task, tmp_path, count, seed):
    file = arm26_with_torus_rings(tmp_path)
    configurations, lengths, errors = _length_errors(opensim_task, file, RINGS, count, seed)
    error = errors.max(axis=0)
    assert (error <= LENGTH_TOLERANCE).all(), error
    # The rings wrap at many configurations: the lengths differ from those with the rings switched off.
    off = tmp_path / "rings_off.osim"
    off.write_text(re.sub(r'(<WrapTorus name="\w+"><active>)true', r"\1false", file.read_text()))
    wrapping = (np.abs(lengths - _lengths(_load(off), RINGS, configurations)) > 1e-9).mean(axis=0)
    assert (wrapping > 0.4).all(), wrapping  # measured 0.52 (BRA), 0.56 (BICshort) at 300 samples


@pytest.mark.opensim
@pytest.mark.parametrize("count, seed", LONG_WAY_SIZES)
def test_torus_long_way_lengths_match_opensim(opensim_task, tmp_path, count, seed):
    error = _length_errors(opensim_task, arm26_with_torus(tmp_path), ["TRIlong"], count, seed)[2].max()
    assert error <= LONG_WAY_TOLERANCE, error


def _moment_arms_match(opensim_task, file, muscles, count, seed, tolerance=DERIVATIVE_TOLERANCE,
                       force_tolerance=1e-12):
    """_compare asserts the generalized-force method against computeMomentArm (`force_tolerance`); here −∂l/∂q
    against OpenSim's central differences where at least 90 % of the samples are away from switches."""
    osim = _load(file)
    configurations = random_configurations(osim.multibody, count, seed, margin=2 * STEP)
    report = _compare(opensim_task, file, osim, list(muscles), configurations, ["r_shoulder_elev", "r_elbow_flex"],
                      force_tolerance=force_tolerance)
    for name, (kept, worst, _) in report.items():
        assert kept > 0.9, (name, kept)
        assert worst <= tolerance, (name, worst)
    return report


@pytest.mark.opensim
def test_torus_ring_moment_arms(opensim_task, tmp_path):
    _moment_arms_match(opensim_task, arm26_with_torus_rings(tmp_path), RINGS, 30, seed=165)


@pytest.mark.opensim
@pytest.mark.slow
def test_torus_moment_arms_300(opensim_task, tmp_path):
    report = _moment_arms_match(opensim_task, arm26_with_torus_rings(tmp_path), RINGS, 300, seed=166)
    # OpenSim's path through BRA's ring is not length-minimal: computeMomentArm is not −dl/dq (measured 3.4 mm;
    # the TRI cylinder alone gives 0.15 mm). BICshort's single wrap is (measured 1.6e-16 m).
    assert report["BRA"][2] > 1e-3 and report["BICshort"][2] < 1e-12, report
    _moment_arms_match(opensim_task, arm26_with_torus(tmp_path), ["TRIlong"], 300, seed=167,
                       tolerance=LONG_WAY_DERIVATIVE_TOLERANCE, force_tolerance=LONG_WAY_FORCE_TOLERANCE)


def test_geometric_paths_wrap_torus_muscles(tmp_path):
    for file in (arm26_with_torus_rings(tmp_path), arm26_with_torus(tmp_path)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no GeometricPathWarning: nothing is ignored
            warnings.simplefilter("ignore", OsimIgnoredWarning)
            paths = GeometricPaths(load_osim(file))
        assert paths.wrapped_muscles == ()
    kinds = {type(w.surface.shape).__name__ for p in paths.paths for w in p.wraps}
    assert "Torus" in kinds


def test_closest_point_search_ends_within_the_unrolled_steps():
    """OpenSim's search runs until its tolerances are met; trajopt unrolls LM_STEPS steps. Random segments near
    the circle (points within some 0.3 m of a 3 cm circle) all finish in fewer."""
    search = closest_circle_point(0.03, 0, 0)
    points = np.random.default_rng(168).normal(scale=0.1, size=(6, 4000))
    _, _, done, steps = (np.asarray(v).ravel() for v in search.map(4000)(points[:3], points[3:]))
    assert done.all() and steps.max() < LM_STEPS, steps.max()
