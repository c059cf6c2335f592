"""Polynomial paths over cells bounded in several coordinates (trajopt.model.paths.domain_cells): a length jump whose
surface ends inside the domain (as walk3d's gluteus maximus wrap switches do), the saved tree and its Function."""

from dataclasses import replace

import numpy as np
import pytest

from trajopt.errors import TrajoptInputError
from trajopt.model.paths.domain_cells import CellNode, CellTreePath, DomainCellPaths, TreeSettings, fit_cell_tree
from trajopt.model.paths.domain_pieces import Cut
from trajopt.model.paths.fitting import ACCURATE, fit_polynomial_path
from trajopt.model.paths.polynomial import PolynomialPath
from trajopt.model.paths.refit import load_paths

BOX = ((-1.0, 1.0), (-1.0, 1.0))


def _ending_jump(q):
    """l = 0.1 + 0.02 a + 0.01 b^2 + 4 mm * max(b, 0) where a >= 0.1: a jump across a = 0.1 that grows from 0 at
    b = 0 (the surface ends inside the box; lines along a cross 0 or 1 jumps) and a kink across b = 0 for a >= 0.1.
    Moment arms -dl/dq."""
    a, b = q[:, 0], q[:, 1]
    on = a >= 0.1
    lengths = 0.1 + 0.02 * a + 0.01 * b**2 + 0.004 * np.maximum(b, 0.0) * on
    arms = -np.column_stack([np.full_like(a, 0.02), 0.02 * b + 0.004 * (b > 0) * on])
    return lengths, arms


@pytest.fixture(scope="module")
def ending_jump_fit():
    q = np.random.default_rng(0).uniform(-1.0, 1.0, (2000, 2))
    held = np.random.default_rng(1).uniform(-1.0, 1.0, (4000, 2))
    lengths, arms = _ending_jump(q)
    settings = replace(ACCURATE, length_tolerance=0.5e-4, moment_arm_tolerance=1e-4)
    tree = fit_cell_tree("m", ("a", "b"), q, lengths, arms, BOX, settings,
                         TreeSettings(length_target=1e-4, moment_arm_target=2e-4, min_samples=50, outlier=None))
    single = fit_polynomial_path("m", ("a", "b"), q, lengths, arms, settings, None, BOX)
    return tree, single, held


def _rms(path, held):
    lengths, arms = path.evaluate(held)
    true_lengths, true_arms = _ending_jump(held)
    return np.sqrt(np.mean((lengths - true_lengths) ** 2)), np.sqrt(np.mean((arms - true_arms) ** 2))


def test_cells_follow_a_jump_surface_that_ends_inside_the_domain(ending_jump_fit):
    tree, single, held = ending_jump_fit
    splits = sorted((n.cut.coordinate, n.cut.coefficients[0]) for n in tree.nodes if not n.is_leaf)
    # measured: splits at a = 0.1012 and b = -7e-5 (3 cells, 11 terms); held-out 0.022 / 0.063 mm, one polynomial
    # (31 terms) 0.579 / 0.707 mm
    assert [s[0] for s in splits] == ["a", "b"]
    assert abs(splits[0][1] - 0.1) < 0.005 and abs(splits[1][1]) < 0.005, splits
    length, arm = _rms(tree, held)
    assert length < 0.04e-3 and arm < 0.1e-3, (length, arm)
    single_length, single_arm = _rms(single, held)
    assert single_length > 0.4e-3 and single_arm > 0.5e-3, (single_length, single_arm)


def test_saved_tree_and_its_function_agree(ending_jump_fit, tmp_path):
    tree, _, held = ending_jump_fit
    DomainCellPaths([tree], "analytic").save(tmp_path / "cells.json")
    loaded = load_paths(tmp_path / "cells.json")
    assert isinstance(loaded, DomainCellPaths) and loaded.muscles == ("m",)
    lengths, arms = loaded.lengths_and_moment_arms_function(("a", "b")).map(len(held))(held.T)
    expected_lengths, expected_arms = tree.evaluate(held)
    assert np.abs(np.asarray(lengths).ravel() - expected_lengths).max() < 1e-12
    assert np.abs(np.asarray(arms).reshape(len(held), 2) - expected_arms).max() < 1e-10
    np.testing.assert_array_equal(loaded["m"].cell(held), tree.cell(held))


def test_malformed_trees_are_one_line_errors():
    piece = PolynomialPath("x", ("a", "b"), ((0, 0),), (1.0,), BOX)
    with pytest.raises(TrajoptInputError, match="do not form a tree"):  # node 2 never reached
        CellTreePath("x", ("a", "b"), (CellNode(Cut.at("a", 0.0), 1, 1), CellNode(piece=0), CellNode(piece=1)),
                     (piece, piece))
    with pytest.raises(TrajoptInputError, match="not among its coordinates"):
        CellTreePath("x", ("a", "b"), (CellNode(Cut.at("c", 0.0), 1, 2), CellNode(piece=0), CellNode(piece=1)),
                     (piece, piece))


@pytest.mark.slow
def test_walk3d_vaslat_cells_reach_the_targets_at_opensims_samples():
    """walk3d's vaslat_r over the knee's range (OpenSim 4.6 lengths and computeMomentArm, tests/data/paths): its
    moment arm flips from -24 to +23 mm across 138.4 deg knee flexion (its wrap switching sides)."""
    from trajopt.model.paths.domain_cells import fit_domain_cells
    from trajopt.model.paths.fitting import fit_paths
    from trajopt.model.paths.samples import PathSamples
    from conftest import DATA

    train = PathSamples.from_csv(DATA / "paths" / "walk3d_vaslat_r_train.csv.gz")
    held = PathSamples.from_csv(DATA / "paths" / "walk3d_vaslat_r_heldout.csv.gz")
    ranges = {"knee_angle_r": (0.0, np.deg2rad(140.0))}
    cells, _ = fit_domain_cells(train, ranges=ranges, coordinates={"vaslat_r": ("knee_angle_r",)})
    single, _ = fit_paths(train, ACCURATE, ranges=ranges)
    splits = sorted(np.rad2deg(n.cut.coefficients[0]) for n in cells["vaslat_r"].nodes if not n.is_leaf)
    # measured: splits at 104.76 and 138.42 deg; held-out 0.028 / 0.365 mm (one polynomial 0.123 / 3.31 mm)
    assert abs(splits[-1] - 138.39) < 0.1, splits
    true_lengths, true_arms = held.muscle("vaslat_r")
    for path, (length_bound, arm_bound) in ((cells["vaslat_r"], (0.05e-3, 0.5e-3)), (single["vaslat_r"], (None, None))):
        lengths, arms = path.evaluate(held.q)
        length, arm = np.sqrt(np.mean((lengths - true_lengths) ** 2)), np.sqrt(np.mean((arms - true_arms) ** 2))
        if length_bound is None:
            assert arm > 3e-3, arm
        else:
            assert length < length_bound and arm < arm_bound, (length, arm)


def test_given_cuts_split_first_and_follow_a_slanted_jump_surface():
    """The jump surface a = 0.1 + 0.3 b (ending at b = 0), given as a ``Cut``: the tree splits along it first."""
    def truth(q):
        a, b = q[:, 0], q[:, 1]
        on = a >= 0.1 + 0.3 * b
        lengths = 0.1 + 0.02 * a + 0.01 * b**2 + 0.004 * np.maximum(b, 0.0) * on
        return lengths, -np.column_stack([np.full_like(a, 0.02), 0.02 * b + 0.004 * (b > 0) * on])

    q = np.random.default_rng(0).uniform(-1.0, 1.0, (2000, 2))
    held = np.random.default_rng(1).uniform(-1.0, 1.0, (4000, 2))
    cut = Cut("a", ("b",), ((0,), (1,)), (0.1, 0.3))
    tree = fit_cell_tree("m", ("a", "b"), q, *truth(q), BOX, replace(ACCURATE, length_tolerance=0.5e-4,
                         moment_arm_tolerance=1e-4), TreeSettings(length_target=1e-4, moment_arm_target=2e-4,
                                                                 min_samples=50), cuts=(cut,))
    assert tree.nodes[0].cut == cut
    lengths, arms = tree.evaluate(held)
    true_lengths, true_arms = truth(held)
    # measured: 3 cells, 10 terms, 0.0002 / 0.077 mm (without the cut: 6 axis-aligned cells, 0.278 / 0.329 mm)
    assert np.sqrt(np.mean((lengths - true_lengths) ** 2)) < 0.001e-3
    assert np.sqrt(np.mean((arms - true_arms) ** 2)) < 0.1e-3


def test_jump_surface_located_where_it_ends_inside_the_box():
    """l jumps by 4 mm max(b, 0) across a = 0.1 + 0.3 b + 0.1 c^2: lines along a for b < 0 cross no jump (the
    surface ends at b = 0); the jumps of the other lines give the surface back exactly."""
    from trajopt.model.paths.jump_cuts import jump_cuts

    def truth(q):
        a, b, c = np.asarray(q).T
        on = a >= 0.1 + 0.3 * b + 0.1 * c**2
        lengths = 0.1 + 0.02 * a + 0.01 * b * c + 0.004 * np.maximum(b, 0.0) * on
        return lengths, -np.column_stack([np.full_like(a, 0.02), 0.01 * c + 0.004 * (b > 0) * on, 0.01 * b])

    ranges = {name: (-1.0, 1.0) for name in "abc"}
    surface = jump_cuts(lambda q: truth(q)[0], "abc", ranges, step=0.01).surfaces[0]
    cut, error = surface.cut, surface.distance
    assert cut.coordinate == "a" and surface.largest > 0
    expected = {(0, 0): 0.1, (1, 0): 0.3, (0, 2): 0.1}
    assert error < 1e-6
    for exponents, coefficient in zip(cut.exponents, cut.coefficients):
        assert abs(coefficient - expected.get(exponents, 0.0)) < 1e-6, (exponents, coefficient)
    q = np.random.default_rng(0).uniform(-1.0, 1.0, (3000, 3))
    held = np.random.default_rng(1).uniform(-1.0, 1.0, (4000, 3))
    tree = fit_cell_tree("m", tuple("abc"), q, *truth(q), ((-1.0, 1.0),) * 3, tree=TreeSettings(outlier=None),
                         cuts=(cut,))
    lengths, arms = tree.evaluate(held)
    true_lengths, true_arms = truth(held)
    # measured: 2 cells, 9 terms, 0.057 / 0.292 mm (without the cut: one polynomial, 37 terms, 0.494 / 0.592 mm)
    assert len(tree.pieces) == 2
    assert np.sqrt(np.mean((lengths - true_lengths) ** 2)) < 0.08e-3
    assert np.sqrt(np.mean((arms - true_arms) ** 2)) < 0.35e-3


def test_each_cell_keeps_the_highest_degree_that_validates_better():
    """l = 0.1 + 0.01 a^3 - 0.02 a b^2 over a 2-coordinate box, one cell: allowed only degree 1, the fit misses
    (a cubic); offered degrees 1 and 3, validation picks 3 and the cell is exact."""
    q = np.random.default_rng(3).uniform(-1.0, 1.0, (1200, 2))
    a, b = q.T
    lengths = 0.1 + 0.01 * a ** 3 - 0.02 * a * b ** 2
    arms = -np.column_stack([0.03 * a ** 2 - 0.02 * b ** 2, -0.04 * a * b])
    settings = replace(ACCURATE, degree=1)
    errors = {}
    for degrees in ((1,), (1, 3)):
        tree = fit_cell_tree("m", "ab", q, lengths, arms, [(-1.0, 1.0), (-1.0, 1.0)], settings,
                             TreeSettings(max_depth=0, degrees=degrees))
        errors[degrees] = float(np.max(np.abs(tree.evaluate(q)[0] - lengths)))
    # measured: 0.0135 m with degree 1 only, 1.1e-16 m with degree 3 picked
    assert errors[(1,)] > 0.01 and errors[(1, 3)] < 1e-14, errors
