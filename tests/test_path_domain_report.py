"""The path-domain report and bounds: distances outside a box and a band are the analytic ones; paths without a
declared domain (OpenSim's function-based paths) bound nothing and say so; geometric paths hold everywhere."""

import numpy as np
import pytest

from conftest import ROOT
from trajopt.model.paths.domain import PathDomain
from trajopt.model.paths.domain_report import path_domain_report
from trajopt.model.paths.function_based_xml import read_function_based_path_set

WALK3D_PATHS = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled_FunctionBasedPathSet.xml"


def test_box_report_counts_frames_and_gives_the_largest_excess():
    """Box a in [0, 1], b in [-1, 1]; q over (b, x, a) with x not in the domain. Frames 1 and 3 leave it: a = 1.3
    (0.3 beyond) and b = -1.5 (0.5 beyond, the worst, at t = 0.3)."""
    rng = np.random.default_rng(3)
    domain = PathDomain.box(("a", "b"), [[0.0, 1.0], [-1.0, 1.0]])
    q = np.array([[0.0, rng.normal(), 0.5], [0.2, rng.normal(), 1.3], [0.9, rng.normal(), 0.0],
                  [-1.5, rng.normal(), 0.7]])
    report = path_domain_report(domain, q, ("b", "x", "a"), times=[0.0, 0.1, 0.2, 0.3])
    assert (report.frames, report.frames_outside) == (4, 2)
    assert report.worst_coordinate == "b" and report.worst_excess == pytest.approx(0.5, abs=1e-15)
    assert report.worst_value == -1.5 and report.worst_frame == 3 and report.worst_time == pytest.approx(0.3)
    lower, upper = domain.bounds_over(("b", "x", "a"))
    np.testing.assert_array_equal(lower, [-1.0, -np.inf, 0.0])
    np.testing.assert_array_equal(upper, [1.0, np.inf, 1.0])


def test_band_excess_is_the_distance_to_the_nearest_frame_box():
    """Band ±0.1 around frames a = 0 and a = 1 (box [-1, 2]): a = 0.5 is 0.4 from both boxes, a = 0.15 is 0.05
    beyond the first; the bounds are the hull [-0.1, 1.1]."""
    domain = PathDomain.around_motion(("a",), [[0.0], [1.0]], 0.1, [[-1.0, 2.0]])
    report = path_domain_report(domain, [[0.05], [0.15], [0.5]])
    assert report.frames_outside == 2
    assert report.worst_excess == pytest.approx(0.4, abs=1e-12) and report.worst_frame == 2
    np.testing.assert_allclose(domain.excess([[0.15]])[0], [0.05], atol=1e-12)
    np.testing.assert_allclose(np.concatenate(domain.bounds_over(("a",))), [-0.1, 1.1], atol=1e-15)


def test_function_based_paths_declare_no_domain_and_bound_nothing():
    """OpenSim's FunctionBasedPathSet stores no ranges: nothing is invented, whatever the configuration."""
    paths = read_function_based_path_set(WALK3D_PATHS)
    names = paths.coordinates
    far = np.full((2, len(names)), 50.0)  # 50 rad: far outside any fitted range
    report = paths.domain_report(far, names)
    assert not report.declared and not report.inside and report.frames_outside == 0 and report.warning() is None
    lower, upper = paths.domain_bounds(names)
    assert np.all(np.isneginf(lower)) and np.all(np.isposinf(upper))
