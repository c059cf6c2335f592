"""Cell trees for the muscles one polynomial misses (trajopt.model.paths.jump_cells, `trajopt fit-paths --cells`): jump
planes of a one-coordinate muscle, jump then kink surfaces, held-out points counted apart as pockets, 2D_gait's
ConditionalPathPoint jumps found without being told where, and a model trajopt's importer cannot read."""

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from trajopt.model.paths.domain_cells import CellNode, CellTreePath
from trajopt.model.paths.jump_cells import one_cell, pocket_rms, search_jump_surfaces
from trajopt.model.paths.polynomial import PolynomialPath
from trajopt.model.paths.samples import PathSamples

GAIT2D = Path(__file__).resolve().parents[1] / "trajopt" / "examples" / "gait2d" / "2D_gait.osim"


def test_one_coordinate_jumps_are_planes_of_their_own():
    """l(a) jumps by +3 mm at a = -0.4 and by -2 mm at a = 0.3 (one line only): two planes at those values."""
    def lengths(q):
        a = np.asarray(q)[:, 0]
        return 0.1 + 0.01 * a + 0.003 * (a >= -0.4) - 0.002 * (a >= 0.3)

    search = search_jump_surfaces(lengths, "m", ("a",), {"a": (-1.0, 1.0)})
    assert search.scan is not None and search.scan.pockets == 0
    planes = sorted((s.cut.coefficients[0], s.largest) for s in search.scan.surfaces)
    assert [s.cut.others for s in search.scan.surfaces] == [(), ()]
    # measured: values within 1e-9 of the jumps (bisection to 1e-10 of a 0.5 deg step), sizes within 2e-11
    assert np.allclose([p[0] for p in planes], [-0.4, 0.3], atol=1e-8), planes
    assert np.allclose([p[1] for p in planes], [0.003, -0.002], atol=1e-9), planes


def test_the_search_cuts_along_jumps_then_kinks():
    """l jumps by 3 mm at a = -0.4 and its moment arm about b falls by 10 mm across b = 0.2 + 0.1 a (no jump there):
    the jump plane first, then the kink surface (one line per other coordinate's grid value, 25 lines each)."""
    def lengths(q):
        a, b = np.asarray(q).T
        return 0.1 + 0.01 * a + 0.003 * (a >= -0.4) + 0.01 * np.maximum(b - 0.2 - 0.1 * a, 0.0)

    search = search_jump_surfaces(lengths, "m", ("a", "b"), {"a": (-1.0, 1.0), "b": (-1.0, 1.0)})
    jump, kink = search.cuts
    assert jump.coordinate == "a" and abs(jump.value(np.zeros((1, 2)), "ab")[0] + 0.4) < 1e-8, jump
    q = np.random.default_rng(0).uniform(-1.0, 1.0, (200, 2))
    assert kink.coordinate == "b" and np.allclose(kink.value(q, "ab"), 0.2 + 0.1 * q[:, 0], atol=1e-6), kink
    assert "moment-arm kinks b -10.0..10 mm" in search.describe(), search.describe()


def test_a_scan_over_budget_is_skipped_and_said():
    search = search_jump_surfaces(lambda q: np.zeros(len(q)), "m", ("a", "b"), {"a": (0.0, 1.0), "b": (0.0, 1.0)},
                                  budget=0.0)
    assert search.scan is None and search.cuts == () and search.describe().startswith("not scanned")


def test_a_costly_path_is_scanned_on_fewer_lines():
    """A path costing 0.2 ms per configuration (slept) against a 0.5 s budget: the full scan (25 lines per
    coordinate, ~11,500 configurations, ~2.3 s) does not fit, a scan on a few lines does and still finds the
    plane a = 0.2 where the length jumps by 3 mm."""
    import time

    def lengths(q):
        q = np.asarray(q)
        time.sleep(2e-4 * len(q))
        return 0.1 + 0.01 * q[:, 1] + 0.003 * (q[:, 0] >= 0.2)

    search = search_jump_surfaces(lengths, "m", ("a", "b"), {"a": (-1.0, 1.0), "b": (-1.0, 1.0)}, budget=0.5)
    assert search.scan is not None and 1 <= search.lines < 625 and "scanned on" in search.describe()
    assert [s.cut.coordinate for s in search.scan.surfaces] == ["a"]
    assert abs(search.scan.surfaces[0].cut.coefficients[0] - 0.2) < 1e-8


def test_pockets_are_counted_apart():
    """A constant path of 0.1 m against samples of which 2 are 0.22 m longer (pockets) and the others 1 mm off."""
    path = one_cell(PolynomialPath("m", ("a",), ((0,),), (0.1,), ((-1.0, 1.0),)))
    assert isinstance(path, CellTreePath) and path.nodes == (CellNode(piece=0),)
    q = np.linspace(-1, 1, 10)[:, None]
    lengths = np.full((10, 1), 0.101)
    lengths[[2, 7], 0] += 0.22
    arms = np.full((10, 1, 1), 0.002)
    count, length, arm = pocket_rms(path, PathSamples(("a",), ("m",), q, lengths, arms))
    assert count == 2 and length == pytest.approx(1e-3, rel=1e-9) and arm == pytest.approx(2e-3, rel=1e-12)


def test_fit_paths_cells_cli_finds_the_conditional_point_jumps(tmp_path):
    """`trajopt fit-paths --geometric --cells` on 2D_gait's right knee muscles: the jump planes are the knee values
    where rect_fem_r-P2 and vas_int_r-P3 join the path (2D_gait.osim's range upper bounds -1.45997 and -1.42 rad,
    widened by OpenSim's 1e-5), found without being told; those two muscles in two cells within the targets at the
    held-out samples (measured 0.100 / 0.503 and 0.019 / 0.426 mm; one polynomial 0.992 / 1.204 and 1.183 / 1.418),
    hamstrings_r (within the targets with one polynomial) kept as one leaf; the file reads back through the tools'
    --paths."""
    from trajopt.model.osim import load_osim
    from trajopt.edge.tools.fit_paths import main
    from trajopt.model.paths.files import read_paths

    out = tmp_path / "cells" / "paths.json"
    assert main([str(GAIT2D), "--geometric", "--cells", "--samples", "1000", "--heldout", "300", "--cells-samples",
                 "2000", "--muscles", "rect_fem_r", "vasti_r", "hamstrings_r", "--save-samples", str(tmp_path / "s"),
                 "--out", str(out.parent)]) == 0
    with pytest.warns(UserWarning):  # 2D_gait's contact derivative_smoothing, unused here
        paths = read_paths(out, load_osim(GAIT2D))
    heldout = PathSamples.from_csv(tmp_path / "s_heldout.csv.gz")
    for muscle, bound, cells, length_bound, arm_bound in (("rect_fem_r", -1.45997 + 1e-5, 2, 0.15e-3, 0.6e-3),
                                                          ("vasti_r", -1.42 + 1e-5, 2, 0.03e-3, 0.5e-3),
                                                          ("hamstrings_r", None, 1, 0.5e-3, 1e-3)):
        path = paths[muscle]
        splits = [n.cut for n in path.nodes if not n.is_leaf]
        assert len(path.pieces) == cells
        if bound is not None:
            assert [c.coordinate for c in splits] == ["knee_angle_r"]
            assert not np.any(splits[0].exponents)  # a plane: no term in the other coordinates
            assert abs(splits[0].coefficients[0] - bound) < 1e-7, splits[0]  # measured 6e-9
        count, length, arm = pocket_rms(path, heldout)
        assert count == 0 and length < length_bound and arm < arm_bound, (muscle, length, arm)
    for bad in (["--cells", "--pieces"], ["--cells", "--opensim-xml", str(tmp_path / "x.xml")]):
        assert main([str(GAIT2D), "--geometric", *bad, "--out", str(tmp_path / "bad")]) == 2
    assert not (tmp_path / "bad" / "paths.json").exists()


def test_a_given_cut_with_few_samples_beyond_it_splits_with_cut_min_samples():
    """A kink at a = 0.9 (the moment arm about a changes by 20 mm) leaves 5 % of the samples beyond it: fewer than a
    split's 2 x 150 rows a side, enough for cut_min_samples = 50. Each side is linear, so the split tree is exact;
    without the split one polynomial of at most (samples / 4) terms follows the kink only roughly."""
    from trajopt.model.paths.domain_cells import TreeSettings, fit_cell_tree
    from trajopt.model.paths.domain_pieces import Cut

    q = np.random.default_rng(1).uniform(-1.0, 1.0, (2000, 2))
    lengths = 0.1 + 0.02 * q[:, 0] - 0.01 * q[:, 1] + 0.02 * np.maximum(q[:, 0] - 0.9, 0.0)
    arms = np.column_stack([-0.02 - 0.02 * (q[:, 0] >= 0.9), np.full(len(q), 0.01)])
    box = [(-1.0, 1.0), (-1.0, 1.0)]
    settings = TreeSettings(min_samples=150, max_depth=0)
    test = np.random.default_rng(2).uniform(-1.0, 1.0, (500, 2))
    exact = 0.1 + 0.02 * test[:, 0] - 0.01 * test[:, 1] + 0.02 * np.maximum(test[:, 0] - 0.9, 0.0)
    errors = {}
    for least in (None, 50):
        tree = fit_cell_tree("m", "ab", q, lengths, arms, box, tree=replace(settings, cut_min_samples=least),
                             cuts=(Cut.at("a", 0.9, "kink"),))
        errors[least] = (len(tree.pieces), float(np.max(np.abs(tree.evaluate(test)[0] - exact))))
    assert errors[None][0] == 1 and errors[None][1] > 1e-4, errors
    assert errors[50][0] == 2 and errors[50][1] < 1e-12, errors


def test_fit_paths_cells_on_a_model_trajopt_cannot_read_fits_unscanned_trees(tmp_path, opensim_task, capsys):
    """arm26 with TRIlong made a Schutte1993Muscle_Deprecated (OpenSim reads it, trajopt's importer does not, as
    DAS3): --cells says so, naming the element, and fits TRIlong's and BIClong's trees on OpenSim's samples with
    axis-aligned splits only (no geometric path to scan); with --geometric the model cannot be sampled at all, and
    --pieces needs trajopt's model for its cuts: one line, exit 2, before any sampling. Measured: TRIlong held-out
    moment-arm RMS 1.238 mm in 2 cells against 1.833 mm for one polynomial."""
    from trajopt.edge.tools.fit_paths import main
    from trajopt.model.paths.domain_cells import DomainCellPaths

    text = (Path(__file__).resolve().parents[1] / "trajopt" / "examples" / "arm26" / "arm26.osim").read_text()
    start = text.index('<Thelen2003Muscle name="TRIlong">')
    end = text.index("</Thelen2003Muscle>", start)
    model = tmp_path / "arm26_schutte.osim"
    model.write_text(text[:start] + '<Schutte1993Muscle_Deprecated name="TRIlong">'
                     + text[start + len('<Thelen2003Muscle name="TRIlong">'):end] + "</Schutte1993Muscle_Deprecated>"
                     + text[end + len("</Thelen2003Muscle>"):])
    out = tmp_path / "cells" / "paths.json"
    assert main([str(model), "--cells", "--samples", "400", "--heldout", "100", "--cells-samples", "1000",
                 "--muscles", "TRIlong", "BIClong", "--save-samples", str(tmp_path / "s"),
                 "--out", str(out.parent)]) == 0
    printed = capsys.readouterr().out
    assert "unsupported component type 'Schutte1993Muscle_Deprecated'" in printed and "no jump or kink scan" in printed
    paths = DomainCellPaths.load(out)
    heldout = PathSamples.from_csv(tmp_path / "s_heldout.csv.gz")
    for muscle in ("TRIlong", "BIClong"):
        splits = [n.cut for n in paths[muscle].nodes if not n.is_leaf]
        assert splits and all(c.source == "cell split" and not c.others for c in splits), splits
    _, _, arm = pocket_rms(paths["TRIlong"], heldout)
    assert arm < 1.5e-3, arm  # one polynomial: 1.833 mm
    assert main([str(model), "--geometric", "--cells", "--out", str(tmp_path / "g")]) == 2
    assert not (tmp_path / "g" / "paths.json").exists()
    capsys.readouterr()
    # --pieces finds its cuts on trajopt's model: it stops before sampling
    assert main([str(model), "--pieces", "--save-samples", str(tmp_path / "p"), "--out", str(tmp_path / "q")]) == 2
    assert not list(tmp_path.glob("p*"))
    assert "Schutte1993Muscle_Deprecated" in capsys.readouterr().err
