"""Polynomial paths piecewise over the coordinate domain (trajopt.model.paths.domain_pieces): cuts located on an
analytic length with a known jump surface, conditional-point cuts of 2D_gait against its .osim and the held-out accuracy
of the cells against the model's geometric paths, arm26's BIClong wrap switch against OpenSim."""

import numpy as np
import pytest

from conftest import ROOT
from trajopt.errors import TrajoptInputError
from trajopt.model.osim import OsimIgnoredWarning, load_osim
from trajopt.model.paths.domain import PathDomainError
from trajopt.model.paths.domain_pieces import (Cut, DomainPiecewisePath, DomainPiecewisePaths, conditional_point_cuts,
                                               fit_domain_pieces, geometric_jump_cuts, locate_jump_cuts)
from trajopt.model.paths.fitting import ACCURATE, fit_paths
from trajopt.model.paths.polynomial import PolynomialPath
from trajopt.edge.tools.geometric_sampling import sample_geometric_paths
from trajopt.model.paths.samples import PathSamples
from trajopt.model.paths.sampling import latin_hypercube

GAIT2D = ROOT / "trajopt" / "examples" / "gait2d" / "2D_gait.osim"
ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
NAMES = ("a", "b")
JUMP = 2e-3


def _surface(b):
    return 0.2 + 0.1 * b - 0.05 * b**2


def _analytic(q):
    """A length with a 2 mm jump where a = 0.2 + 0.1 b - 0.05 b², and its moment arms −∂l/∂q."""
    a, b = q[:, 0], q[:, 1]
    above = a >= _surface(b)
    lengths = 0.3 + 0.02 * a + 0.01 * a * b + 0.05 * b**2 + np.where(above, JUMP + 0.03 * a**2, 0.0)
    arms = -np.column_stack([0.02 + 0.01 * b + np.where(above, 0.06 * a, 0.0), 0.01 * a + 0.1 * b])
    return lengths, arms


def _samples(q):
    lengths, arms = _analytic(q)
    return PathSamples(NAMES, ("m",), q, lengths[:, None], arms[:, None, :])


def test_cut_follows_an_analytic_jump_surface_and_cells_are_exact():
    ranges = {"a": (-1.0, 1.0), "b": (-1.0, 1.0)}
    cuts = locate_jump_cuts(lambda q: _analytic(q)[0], NAMES, "a", ranges, lines=5, step=0.01, source="m")
    assert len(cuts) == 1 and cuts[0].coordinate == "a" and cuts[0].others == ("b",)
    b = np.linspace(-1, 1, 41)
    q = np.column_stack([np.zeros_like(b), b])
    assert np.abs(cuts[0].value(q, NAMES) - _surface(b)).max() < 1e-8  # refined to 0.03/4^10 in a
    train = _samples(latin_hypercube(np.array([[-1.0, 1.0], [-1.0, 1.0]]), 400, 0))
    paths, _ = fit_domain_pieces(train, {"m": cuts}, ACCURATE, ranges=ranges)
    held = latin_hypercube(np.array([[-1.0, 1.0], [-1.0, 1.0]]), 200, 1)
    lengths, arms = paths["m"].evaluate(held)
    true_lengths, true_arms = _analytic(held)
    # each cell's length is a polynomial: the stepwise fit is exact to round-off
    assert np.abs(lengths - true_lengths).max() < 1e-10 and np.abs(arms - true_arms).max() < 1e-9
    single, _ = fit_paths(train, ACCURATE, ranges=ranges)
    assert np.sqrt(np.mean((single["m"].evaluate(held)[0] - true_lengths) ** 2)) > 2e-4  # one polynomial cannot


def test_kink_is_where_the_tangents_meet():
    """A 40 mm moment-arm jump without a length jump along a = 0.3 + 0.1 b: found only with kink_threshold."""
    def lengths(q):
        a, b = q[:, 0], q[:, 1]
        return 0.3 + 0.01 * a + 0.05 * a**2 + 0.02 * np.abs(a - 0.3 - 0.1 * b) + 0.01 * b

    ranges = {"a": (-1.0, 1.0), "b": (-1.0, 1.0)}
    assert locate_jump_cuts(lengths, NAMES, "a", ranges, lines=5, step=0.01) == ()
    cuts = locate_jump_cuts(lengths, NAMES, "a", ranges, lines=5, step=0.01, kink_threshold=2e-3)
    assert len(cuts) == 1 and cuts[0].exponents == ((0,), (1,))
    assert np.allclose(cuts[0].coefficients, (0.3, 0.1), atol=1e-9, rtol=0)


def test_jumps_that_are_no_layers_are_refused():
    def lengths(q):  # a jump along a closed curve: lines cross it twice or not at all
        return np.where(q[:, 0] ** 2 + q[:, 1] ** 2 < 0.25, 1e-3, 0.0)

    with pytest.raises(TrajoptInputError, match="do not form layers"):
        locate_jump_cuts(lengths, NAMES, "a", {"a": (-1.0, 1.0), "b": (-1.0, 1.0)}, lines=4, step=0.02)


@pytest.fixture(scope="module")
def gait2d_fit():
    with pytest.warns(OsimIgnoredWarning):  # 2D_gait's contact derivative_smoothing, unused here
        osim = load_osim(GAIT2D)
    coordinates = ("hip_flexion_r", "knee_angle_r")
    box = np.array([[-1.0471975511965976, 2.0943951023931953], [-2.0943951023931953, 0.17453292519943295]])
    muscles = ("rect_fem_r", "vasti_r")
    train = sample_geometric_paths(GAIT2D, coordinates, latin_hypercube(box, 2000, 0), muscles, progress=None)
    held = sample_geometric_paths(GAIT2D, coordinates, latin_hypercube(box, 400, 1), muscles, progress=None)
    ranges = dict(zip(coordinates, map(tuple, box)))
    cuts = {m: conditional_point_cuts(osim, m, ranges) for m in muscles}
    paths, _ = fit_domain_pieces(train, cuts, ACCURATE, ranges=ranges)
    single, _ = fit_paths(train, ACCURATE, ranges=ranges)
    return cuts, paths, single, held


def _rms(path, held):
    columns = held.columns(path.coordinates)
    lengths, arms = path.evaluate(held.q[:, columns])
    true_lengths, true_arms = held.muscle(path.muscle)
    return (np.sqrt(np.mean((lengths - true_lengths) ** 2)),
            np.sqrt(np.mean((arms - true_arms[:, columns]) ** 2)))


def test_gait2d_conditional_point_cuts_reach_the_targets(gait2d_fit):
    cuts, paths, single, held = gait2d_fit
    # the knee values where rect_fem_r-P2 and vas_int_r-P3 join the path: 2D_gait.osim's range upper bounds,
    # widened by OpenSim's 1e-5
    assert [c.coefficients for c in cuts["rect_fem_r"]] == [(-1.45997 + 1e-5,)]
    assert [c.coefficients for c in cuts["vasti_r"]] == [(-1.42 + 1e-5,)]
    # held-out RMS of length / moment arm against the geometric path (mm), measured: rect_fem_r 0.106 / 0.483 (one
    # polynomial 0.979 / 1.192), vasti_r 0.019 / 0.425 (one polynomial 1.183 / 1.411); targets 0.5 / 1
    for muscle, length_bound, arm_bound in (("rect_fem_r", 0.15e-3, 0.6e-3), ("vasti_r", 0.03e-3, 0.5e-3)):
        length, arm = _rms(paths[muscle], held)
        assert length < length_bound and arm < arm_bound, (muscle, length, arm)
        single_length, single_arm = _rms(single[muscle], held)
        assert single_length > 0.8e-3 and single_arm > 1e-3, (muscle, single_length, single_arm)


def test_saved_paths_and_their_function_agree(gait2d_fit, tmp_path):
    _, paths, _, held = gait2d_fit
    paths.save(tmp_path / "pieces.json")
    loaded = DomainPiecewisePaths.load(tmp_path / "pieces.json")
    from trajopt.model.paths.refit import load_paths

    assert isinstance(load_paths(tmp_path / "pieces.json"), DomainPiecewisePaths)
    from trajopt.model.paths.files import read_paths

    # the tools' --paths
    assert isinstance(read_paths(tmp_path / "pieces.json", load_osim(GAIT2D)), DomainPiecewisePaths)
    coordinates = held.coordinates
    function = loaded.lengths_and_moment_arms_function(coordinates)
    lengths, arms = function.map(held.size)(held.q.T)
    lengths = np.asarray(lengths).T
    arms = np.asarray(arms).reshape(len(loaded.muscles), held.size, len(coordinates)).transpose(1, 0, 2)
    for i, muscle in enumerate(paths.muscles):
        expected_lengths, expected_arms = paths[muscle].evaluate(held.q[:, held.columns(paths[muscle].coordinates)])
        assert np.abs(lengths[:, i] - expected_lengths).max() < 1e-12
        assert np.abs(arms[:, i, held.columns(paths[muscle].coordinates)] - expected_arms).max() < 1e-10
    loaded.check_domain(held.q[:3], coordinates)
    outside = held.q[:1].copy()
    outside[0, coordinates.index("knee_angle_r")] = 0.5  # the knee's range ends at 10 deg
    with pytest.raises(PathDomainError, match="knee_angle_r"):
        loaded.check_domain(outside, coordinates)
    box = ((0.0, 1.0), (0.0, 1.0))
    pieces = (PolynomialPath("x", ("a", "b"), ((0, 0),), (1.0,), box),) * 3
    with pytest.raises(TrajoptInputError, match="cuts must share one coordinate"):
        DomainPiecewisePath("x", ("a", "b"), (Cut.at("a", 0.5), Cut.at("b", 0.5)), pieces)

@pytest.mark.slow
def test_biclong_wrap_switch_is_where_opensims_length_jumps(opensim_task):
    from trajopt.edge.tools.path_sampling import sample_paths

    osim = load_osim(ARM26)
    coordinates = ("r_shoulder_elev", "r_elbow_flex")
    ranges = {"r_shoulder_elev": (-np.pi / 2, np.pi), "r_elbow_flex": (0.0, 2.26892803)}
    cuts = geometric_jump_cuts(osim, "BIClong", coordinates, "r_shoulder_elev", ranges)
    # two features: a cusp near -78.4 deg and the ellipsoid's switch near 31.3 deg; both independent of the elbow
    assert len(cuts) == 2 and all(c.others == () for c in cuts)
    switch = cuts[1].coefficients[0]
    assert abs(np.rad2deg(switch) - 31.27) < 0.01
    offsets = np.array([-1e-3, -1e-6, 1e-6, 1e-3])
    q = np.column_stack([switch + offsets, np.full(4, 1.0)])
    lengths = sample_paths(ARM26, coordinates, q, ("BIClong",), progress=None).lengths[:, 0]
    # OpenSim's length jumps (1.67 mm in the scan) within ±1e-6 rad of the cut, and changes little elsewhere
    assert abs(lengths[2] - lengths[1]) > 1.5e-3
    assert abs(lengths[1] - lengths[0]) < 1e-4 and abs(lengths[3] - lengths[2]) < 1e-4


def test_walk3d_vaslat_kink_is_where_opensims_moment_arm_flips(opensim_task):
    """vaslat_r's knee moment arm flips sign near 138 deg (its wrap switches sides) with a continuous length."""
    from trajopt.model.musculoskeletal.operators import load_processed
    from trajopt.edge.tools.path_sampling import sample_paths

    model = ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim"
    with pytest.warns(OsimIgnoredWarning):
        osim, couplings = load_processed(model)
    knee = osim.multibody.coordinates[osim.multibody.coordinate_index("knee_angle_r")]
    ranges = {"knee_angle_r": tuple(knee.range)}
    assert geometric_jump_cuts(osim, "vaslat_r", ("knee_angle_r",), "knee_angle_r", ranges, couplings=couplings) == ()
    cuts = geometric_jump_cuts(osim, "vaslat_r", ("knee_angle_r",), "knee_angle_r", ranges, couplings=couplings,
                               kink_threshold=2e-3)
    assert len(cuts) == 1 and abs(np.rad2deg(cuts[0].coefficients[0]) - 138.39) < 0.01
    q = cuts[0].coefficients[0] + np.array([[-2e-3], [-1e-5], [1e-5], [2e-3]])
    theirs = sample_paths(model, ("knee_angle_r",), q, ("vaslat_r",), progress=None)
    lengths, arms = theirs.lengths[:, 0], theirs.moment_arms[:, 0, 0]
    # OpenSim: the moment arm jumps (about -24 to +23 mm) within ±1e-5 rad of the cut, the length does not
    assert arms[1] < -0.02 and arms[2] > 0.02 and abs(arms[0] - arms[1]) < 1e-3 and abs(arms[3] - arms[2]) < 1e-3
    assert abs(lengths[2] - lengths[1]) < 1e-6


@pytest.mark.slow
def test_fit_paths_pieces_cli_writes_paths_the_tools_read(tmp_path):
    """`trajopt fit-paths --geometric --pieces` on 2D_gait (1000 training / 300 held-out configurations over the
    ranges): every muscle within the issue's targets at the held-out samples (0.5 mm length, 1 mm moment arm RMS;
    measured max 0.138 and 0.493 mm), rect_fem and vasti in two cells; the file reads back through the tools'
    --paths."""
    from trajopt.edge.tools.fit_paths import main
    from trajopt.model.paths.samples import PathSamples
    from trajopt.model.paths.files import read_paths

    out = tmp_path / "pieces" / "paths.json"
    assert main([str(GAIT2D), "--geometric", "--pieces", "--samples", "1000", "--heldout", "300",
                 "--save-samples", str(tmp_path / "s"), "--out", str(out.parent)]) == 0
    paths = read_paths(out, load_osim(GAIT2D))
    heldout = PathSamples.from_csv(tmp_path / "s_heldout.csv.gz")
    for path in paths:
        columns = heldout.columns(path.coordinates)
        lengths, arms = path.evaluate(heldout.q[:, columns])
        true_lengths, true_arms = heldout.muscle(path.muscle)
        assert np.sqrt(np.mean((lengths - true_lengths) ** 2)) < 5e-4, path.muscle
        assert np.sqrt(np.mean((arms - true_arms[:, columns]) ** 2)) < 1e-3, path.muscle
    assert len(paths["rect_fem_r"].pieces) == 2 and len(paths["vasti_l"].pieces) == 2
    assert main([str(GAIT2D), "--cut-along", "knee_angle_r", "--out", str(out.parent)]) == 2
    assert main([str(GAIT2D), "--geometric", "--pieces", "--cut-along", "no_such_coordinate", "--samples", "50",
                 "--heldout", "20", "--out", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad" / "paths.json").exists()
