"""Wrapped geometric paths (trajopt.model.paths.wrapping) against OpenSim 4.6's GeometryPath lengths at random
configurations over the full coordinate ranges: cylinders (arm26, Moco's 3D walking model: 44 cylinders,
quadrants, point ranges, two wrap objects on one path) and spheres (arm26 with its TRI cylinder replaced)."""

import re
import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from trajopt.model.osim import OsimIgnoredWarning, load_osim
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.paths.geometric import geometric_path

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
WALK3D = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"
TOLERANCE = 1e-9  # m; measured: <= 2e-14 (the issue asks <= 1e-6)


def _random(model, count, seed):
    low = np.array([c.range[0] for c in model.coordinates])
    high = np.array([c.range[1] for c in model.coordinates])
    return low + (high - low) * np.random.default_rng(seed).random((count, model.nq))


def _lengths(path, configurations):
    q = ca.SX.sym("q", path.model.nq)
    function = ca.Function("l", [q], [path.length(q)])
    return np.asarray(function.map(len(configurations))(configurations.T)).ravel()


def _straight(path, configurations):
    from trajopt.model.paths.geometric import GeometricPath
    return _lengths(GeometricPath(path.model, path.points, path.name), configurations)


def _reference(opensim_task, file, model, configurations, muscles):
    return opensim_task("geometric_path_reference", {
        "model": str(file), "coordinates": np.array(model.coordinate_names), "configurations": configurations,
        "muscles": np.array(muscles)})


@pytest.mark.opensim
def test_arm26_cylinders_match_opensim(opensim_task):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim = load_osim(ARM26)
    muscles = ["TRIlat", "TRImed", "BRA"]  # over the TRI cylinder (TRIlong and BIClong also wrap ellipsoids)
    configurations = _random(osim.multibody, 300, seed=15)
    reference = _reference(opensim_task, ARM26, osim.multibody, configurations, muscles)
    for k, name in enumerate(muscles):
        path = geometric_path(osim, name)
        lengths = _lengths(path, configurations)
        assert np.abs(lengths - reference["lengths"][:, k]).max() <= TOLERANCE, name
        wrapped = np.abs(lengths - _straight(path, configurations)) > 1e-4
        assert 0.2 < wrapped.mean() < 0.9, name  # the samples cover wrapped and unwrapped configurations


@pytest.mark.opensim
@pytest.mark.parametrize("quadrant", ["all", "-x", "y"])
def test_spheres_match_opensim(opensim_task, tmp_path, quadrant):
    text = ARM26.read_text()
    cylinder = re.search(r'<WrapCylinder name="TRI">.*?</WrapCylinder>', text, re.S).group(0)
    sphere = (f'<WrapSphere name="TRI"><translation>0.0028 -0.2919 -0.0069</translation>'
              f'<xyz_body_rotation>-0.14015 -0.00628319 0.154985</xyz_body_rotation><quadrant>{quadrant}</quadrant>'
              f'<radius>0.02</radius></WrapSphere>')
    file = tmp_path / "arm26_sphere.osim"
    file.write_text(text.replace(cylinder, sphere))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim = load_osim(file)
    muscles = ["TRIlat", "TRImed", "BRA"]
    configurations = _random(osim.multibody, 300, seed=16)
    reference = _reference(opensim_task, file, osim.multibody, configurations, muscles)
    changed = 0
    for k, name in enumerate(muscles):
        path = geometric_path(osim, name)
        lengths = _lengths(path, configurations)
        assert np.abs(lengths - reference["lengths"][:, k]).max() <= TOLERANCE, (name, quadrant)
        changed += np.sum(np.abs(lengths - _straight(path, configurations)) > 1e-4)
    assert changed > 30  # the sphere does bend these paths


def _walk3d_check(opensim_task, count, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim, _ = load_processed(WALK3D)
    muscles = [m.name for m in osim.muscles]
    assert len(muscles) == 80 and len(osim.spec.wrap_objects) == 44
    configurations = _random(osim.multibody, count, seed)  # dependent coordinates set freely in both
    reference = _reference(opensim_task, WALK3D, osim.multibody, configurations, muscles)
    worst = {}
    for k, name in enumerate(muscles):
        lengths = _lengths(geometric_path(osim, name), configurations)
        worst[name] = np.abs(lengths - reference["lengths"][:, k]).max()
    assert max(worst.values()) <= TOLERANCE, max(worst, key=worst.get)


@pytest.mark.opensim
@pytest.mark.slow
def test_walk3d_all_muscles_match_opensim(opensim_task):
    _walk3d_check(opensim_task, 30, seed=17)


@pytest.mark.opensim
@pytest.mark.slow
def test_walk3d_all_muscles_match_opensim_300(opensim_task):
    _walk3d_check(opensim_task, 300, seed=18)


@pytest.mark.opensim
@pytest.mark.slow
def test_muscle_analysis_without_paths_reports_opensims_values(opensim_task, tmp_path, capsys):
    """`trajopt muscle-analysis` without --paths: wrapped geometric paths, computeMomentArm moment arms."""
    from trajopt.edge.cli import main
    from trajopt.model.io import read_table

    motion = ROOT / "tests" / "data" / "arm26" / "arm26_InverseKinematics.mot"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main(["muscle-analysis", str(ARM26), str(motion), "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "straight" not in out  # every arm26 wrap object is modelled (cylinders, ellipsoids)
    lengths = read_table(tmp_path / "lengths.sto")
    shoulder, elbow = (read_table(tmp_path / "moment_arms_r_shoulder_elev.sto"),
                       read_table(tmp_path / "moment_arms_r_elbow_flex.sto"))
    table = read_table(motion)
    names = [c.split("/")[-2] if "/" in c else c for c in table.labels]
    configurations = np.column_stack([table.column(table.labels[names.index(c)])
                                      for c in ("r_shoulder_elev", "r_elbow_flex")])
    if "inDegrees=yes" in motion.read_text()[:500] or np.abs(configurations).max() > 7:
        configurations = np.deg2rad(configurations)
    muscles = ["TRIlat", "TRImed", "BRA", "TRIlong", "BIClong"]
    reference = _reference(opensim_task, ARM26, load_osim(ARM26).multibody, configurations, muscles)
    for k, name in enumerate(muscles):
        assert np.abs(lengths.column(name) - reference["lengths"][:, k]).max() <= TOLERANCE, name
        assert np.abs(shoulder.column(name) - reference["moment_arms"][:, k, 0]).max() <= 1e-12, name
        assert np.abs(elbow.column(name) - reference["moment_arms"][:, k, 1]).max() <= 1e-12, name


@pytest.mark.opensim
def test_conditional_and_moving_points_with_a_cylinder(opensim_task, tmp_path):
    """TRIlat over the TRI cylinder with its P4 conditional (elbow 0-1.8 rad) and its P3 moving with the elbow."""
    text = ARM26.read_text()
    block = re.search(r'<Thelen2003Muscle name="TRIlat">.*?</PathPointSet>', text, re.S).group(0)
    p3 = re.search(r'<PathPoint name="TRIlat-P3">.*?</PathPoint>', block, re.S).group(0)
    p4 = re.search(r'<PathPoint name="TRIlat-P4">.*?</PathPoint>', block, re.S).group(0)
    elbow = "/jointset/r_elbow/r_elbow_flex"
    moving = (f'<MovingPathPoint name="TRIlat-P3"><socket_parent_frame>/bodyset/r_humerus</socket_parent_frame>'
              f'<x_location><LinearFunction><coefficients>0.01 -0.03184</coefficients></LinearFunction></x_location>'
              f'<y_location><LinearFunction><coefficients>0.005 -0.22637</coefficients></LinearFunction></y_location>'
              f'<z_location><Constant><value>-0.01217</value></Constant></z_location>'
              f'<socket_x_coordinate>{elbow}</socket_x_coordinate><socket_y_coordinate>{elbow}</socket_y_coordinate>'
              f'<socket_z_coordinate>{elbow}</socket_z_coordinate></MovingPathPoint>')
    conditional = (f'<ConditionalPathPoint name="TRIlat-P4"><socket_parent_frame>/bodyset/r_humerus'
                   f'</socket_parent_frame><location>-0.01743 -0.26757 -0.01208</location><range>0 1.8</range>'
                   f'<socket_coordinate>{elbow}</socket_coordinate></ConditionalPathPoint>')
    file = tmp_path / "arm26_points.osim"
    file.write_text(text.replace(block, block.replace(p3, moving).replace(p4, conditional)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        osim = load_osim(file)
    configurations = _random(osim.multibody, 300, seed=19)
    reference = _reference(opensim_task, file, osim.multibody, configurations, ["TRIlat"])
    path = geometric_path(osim, "TRIlat")
    lengths = _lengths(path, configurations)
    assert np.abs(lengths - reference["lengths"][:, 0]).max() <= TOLERANCE
    wrapped = np.abs(lengths - _straight(path, configurations)) > 1e-4
    inactive = configurations[:, 1] > 1.8
    assert wrapped[inactive].any() and wrapped[~inactive].any()
