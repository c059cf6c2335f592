"""PolynomialPath: derivatives against finite differences, JSON round trip, domain refusal."""

import warnings

import casadi
import numpy as np
import pytest

from conftest import ROOT
from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain import PathDomain, PathDomainError
from trajopt.model.paths.polynomial import PolynomialPath, PolynomialPaths

ARM26_PATHS = ROOT / "trajopt" / "examples" / "arm26" / "paths.json"


def _cubic_path():
    # l = 0.3 + 0.02 a - 0.01 a b + 0.004 b^3 on a in [-1, 1], b in [0, 2]
    return PolynomialPath(
        "test_muscle", ("a", "b"), ((0, 0), (1, 0), (1, 1), (0, 3)), (0.3, 0.02, -0.01, 0.004), ((-1, 1), (0, 2))
    )


def test_value_and_moment_arms_match_hand_derivatives():
    path = _cubic_path()
    a, b = 0.4, 1.3
    assert float(path.length([a, b])) == pytest.approx(0.3 + 0.02 * a - 0.01 * a * b + 0.004 * b**3, abs=1e-15)
    arms = path.moment_arms([a, b]).full().ravel()
    np.testing.assert_allclose(arms, [-(0.02 - 0.01 * b), -(-0.01 * a + 0.012 * b**2)], atol=1e-15)


def test_moment_arms_are_minus_length_gradient_by_finite_differences():
    paths = PolynomialPaths.load(ARM26_PATHS)
    rng = np.random.default_rng(3)
    step = 1e-6
    for path in paths:
        low, high = np.array(path.ranges).T
        for q in rng.uniform(low + 2 * step, high - 2 * step, (5, len(path.coordinates))):
            arms = path.moment_arms(q).full().ravel()
            for j in range(len(q)):
                dq = np.zeros(len(q))
                dq[j] = step
                derivative = (float(path.length(q + dq)) - float(path.length(q - dq))) / (2 * step)
                assert arms[j] == pytest.approx(-derivative, abs=1e-9)


def test_lengthening_speed_is_time_derivative_along_a_motion():
    path = PolynomialPaths.load(ARM26_PATHS)["BIClong"]

    def q_of(t):
        return np.array([-0.3 + 0.4 * t, 0.2 + 1.5 * t**2])

    t, h = 0.6, 1e-6
    qdot = np.array([0.4, 3.0 * t])
    speed = float(path.lengthening_speed(q_of(t), qdot))
    finite = (float(path.length(q_of(t + h))) - float(path.length(q_of(t - h)))) / (2 * h)
    assert speed == pytest.approx(finite, abs=1e-9)


def test_functions_are_named_and_symbolic():
    path = _cubic_path()
    assert path.length_function.name_in() == ["q"] and path.length_function.name_out() == ["length"]
    assert path.moment_arms_function.name_out() == ["moment_arms"]
    assert path.lengthening_speed_function.name_in() == ["q", "qdot"]
    q = casadi.MX.sym("q", 2)
    expression = path.length(q)
    assert isinstance(expression, casadi.MX)
    assert float(casadi.Function("f", [q], [expression])([0.4, 1.3])) == pytest.approx(float(path.length([0.4, 1.3])))


def test_json_round_trip(tmp_path):
    paths = PolynomialPaths.load(ARM26_PATHS)
    file = tmp_path / "copy.json"
    paths.save(file)
    again = PolynomialPaths.load(file)
    assert again.muscles == paths.muscles and again.model == paths.model
    for original in paths:
        copy = again[original.muscle]
        assert copy.coordinates == original.coordinates
        assert copy.exponents == original.exponents
        assert copy.coefficients == original.coefficients
        assert copy.ranges == original.ranges
        assert copy.report == original.report
        q = np.mean(original.ranges, axis=1)
        assert float(copy.length(q)) == float(original.length(q))


def test_set_function_matches_each_path():
    paths = PolynomialPaths.load(ARM26_PATHS)
    function = paths.lengths_and_moment_arms_function(("r_shoulder_elev", "r_elbow_flex"))
    q = np.array([-0.2, 1.1])
    lengths, arms = (v.full() for v in function(q))
    for m, path in enumerate(paths):
        assert lengths[m, 0] == pytest.approx(
            float(path.length(q[[paths.coordinates.index(c) for c in path.coordinates]])))
        local_arms = path.moment_arms(q[[paths.coordinates.index(c) for c in path.coordinates]]).full().ravel()
        for j, name in enumerate(path.coordinates):
            assert arms[m, paths.coordinates.index(name)] == pytest.approx(local_arms[j])
    # TRIlat does not cross the shoulder: its moment arm about it is exactly zero
    assert arms[paths.muscles.index("TRIlat"), 0] == 0.0


def test_numeric_evaluation_outside_training_range_is_refused():
    path = _cubic_path()
    assert float(path.length([0.5, 1.0])) > 0
    for call in (lambda: path.length([1.5, 1.0]), lambda: path.moment_arms([0.0, 2.5]),
                 lambda: path.evaluate(np.array([[0.0, 1.0], [3.0, 1.0]]))):
        with pytest.raises(PathDomainError, match=r"test_muscle.*coordinate '(a|b)' = (1.5|2.5|3) is outside"):
            call()


def test_symbolic_evaluation_is_not_checked():
    path = _cubic_path()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path.length(casadi.SX.sym("q", 2))


def test_domain_is_saved_and_checked(tmp_path):
    paths = PolynomialPaths.load(ARM26_PATHS)
    frames = np.radians([[0.0, 10.0], [5.0, 40.0], [10.0, 80.0]])
    domain = PathDomain.around_motion(("r_shoulder_elev", "r_elbow_flex"), frames, np.radians(10.0),
                                      [[-1.0, 1.0], [0.0, 2.2]], "test motion")
    banded = PolynomialPaths(list(paths), "arm26.osim", domain)
    banded.save(tmp_path / "p.json")
    again = PolynomialPaths.load(tmp_path / "p.json")
    np.testing.assert_array_equal(again.domain.frames, frames)
    assert again.domain.key() == domain.key()
    # inside the band of frame 1, but between frames 0 and 2 far from both: refused, naming the coordinate
    again.check_domain(np.radians([[4.0, 45.0]]), ("r_shoulder_elev", "r_elbow_flex"))
    with pytest.raises(PathDomainError, match=r"m.mot: coordinate 'r_elbow_flex' = 1.0472 at frame 1 \(t = 0.5 s\)"):
        again.check_domain(np.radians([[4.0, 45.0], [0.0, 60.0]]), ("r_shoulder_elev", "r_elbow_flex"),
                           times=[0.0, 0.5], where="m.mot")
    # an older file without a stored domain: the box of the paths' ranges
    assert paths.domain.coordinates == ("r_shoulder_elev", "r_elbow_flex")
    with pytest.raises(PathDomainError,
                       match=r"coordinate 'r_shoulder_elev' = 1.0472 at frame 0 .*\[-0.785398, 0.436332\]"):
        paths.check_domain(np.radians([[60.0, 10.0]]), ("r_shoulder_elev", "r_elbow_flex"))


def test_bad_files_and_entries_raise_input_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(TrajoptInputError, match="bad.json"):
        PolynomialPaths.load(bad)
    other = tmp_path / "other.json"
    other.write_text('{"format": "something else"}')
    with pytest.raises(TrajoptInputError, match="other.json"):
        PolynomialPaths.load(other)
    with pytest.raises(TrajoptInputError, match="exponent rows"):
        PolynomialPath("m", ("a",), ((0,), (1,)), (1.0,), ((0, 1),))
    with pytest.raises(TrajoptInputError, match="no path for muscle 'nope'"):
        PolynomialPaths.load(ARM26_PATHS)["nope"]
