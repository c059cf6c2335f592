"""Polynomial paths written as OpenSim's FunctionBasedPathSet: OpenSim 4.6 loads them and its lengths and
moment arms equal trajopt's; trajopt's reader reads them back."""

import numpy as np
import pytest

from conftest import ROOT
from trajopt.errors import ModelFileError
from trajopt.model.paths.function_based_xml import (
    coordinate_paths,
    read_function_based_path_set,
    write_function_based_path_set,
)
from trajopt.model.paths.fitting import ACCURATE, fit_paths
from trajopt.model.paths.polynomial import PolynomialPath, PolynomialPaths
from trajopt.model.paths.samples import PathSamples

ARM26 = ROOT / "trajopt" / "examples" / "arm26"
COORDINATES = ("r_shoulder_elev", "r_elbow_flex")


@pytest.fixture(scope="module")
def fitted():
    train = PathSamples.from_csv(ARM26 / "path_samples_train.csv.gz")
    paths, _ = fit_paths(train, ACCURATE)
    return paths


def _configurations(count=60):
    return np.random.default_rng(5).uniform([-0.7, 0.05], [0.4, 2.2], (count, 2))


def _trajopt_values(paths, q):
    function = paths.lengths_and_moment_arms_function(COORDINATES)
    lengths, arms = function.map(len(q))(q.T)
    return np.asarray(lengths).T, np.asarray(arms).reshape(len(paths), len(q), 2).transpose(1, 0, 2)


def test_exported_file_reads_back_into_the_same_lengths(fitted, tmp_path):
    file = write_function_based_path_set(fitted, tmp_path / "arm26_FunctionBasedPathSet.xml",
                                         coordinate_paths(ARM26 / "arm26.osim"))
    text = file.read_text()
    assert ("<coordinate_paths>/jointset/r_shoulder/r_shoulder_elev /jointset/r_elbow/r_elbow_flex</coordinate_paths>"
            in text)
    again = read_function_based_path_set(file)
    q = _configurations()
    ours = _trajopt_values(fitted, q)
    theirs = again.lengths_and_moment_arms_function(COORDINATES).map(len(q))(q.T)
    # same coefficients, another summation order: equal to a few ulps of a 0.4 m length
    np.testing.assert_allclose(np.asarray(theirs[0]).T, ours[0], rtol=0, atol=4e-15)


def test_quaternion_coordinates_cannot_be_exported(tmp_path):
    path = PolynomialPath("m", ("SC_q1",), ((0,), (1,)), (0.1, 0.2), ((-0.5, 0.5),))
    with pytest.raises(ModelFileError, match=r"'m' uses coordinates \['SC_q1'\] that are not model coordinates"):
        write_function_based_path_set(PolynomialPaths([path]), tmp_path / "x.xml",
                                      {"r_elbow_flex": "/jointset/r_elbow/r_elbow_flex"})


@pytest.mark.opensim
def test_opensim_loads_the_exported_paths_and_gives_trajopt_lengths(fitted, tmp_path, opensim_task):
    file = write_function_based_path_set(fitted, tmp_path / "arm26_FunctionBasedPathSet.xml",
                                         coordinate_paths(ARM26 / "arm26.osim"))
    q = _configurations()
    result = opensim_task("function_based_paths", {
        "model": str(ARM26 / "arm26.osim"), "paths": str(file), "coordinates": np.array(COORDINATES),
        "values": q, "moment_arm_coordinates": np.array(COORDINATES)})
    order = [list(result["muscles"]).index(m) for m in fitted.muscles]
    lengths, arms = _trajopt_values(fitted, q)
    np.testing.assert_allclose(result["lengths"][:, order], lengths, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result["moment_arms"][:, order], arms, rtol=0, atol=1e-9)
