"""Path samples from trajopt's geometric paths (no OpenSim) against OpenSim's sampler, and fit-paths using them."""


import numpy as np
import pytest

from conftest import ROOT, arm26_with_torus_rings
from trajopt.edge.tools.geometric_sampling import describe_geometric, sample_geometric_paths
from trajopt.model.paths.sampling import latin_hypercube
from trajopt.edge.tools.path_sampling import sample_paths

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"
COORDINATES = ("r_shoulder_elev", "r_elbow_flex")


@pytest.mark.opensim
def test_geometric_samples_equal_opensims(opensim_task):
    info = describe_geometric(ARM26)
    assert info.coordinates == COORDINATES and info.crossed_coordinates() == COORDINATES
    assert info.crosses("BRA") == ("r_elbow_flex",) and info.crosses("TRIlong") == COORDINATES
    q = latin_hypercube(info.range_of(COORDINATES), 100, 3)
    muscles = ("TRIlat", "BRA")
    ours = sample_geometric_paths(ARM26, COORDINATES, q, muscles, progress=None, info=info)
    theirs = sample_paths(ARM26, COORDINATES, q, muscles, progress=None)
    assert np.abs(ours.lengths - theirs.lengths).max() <= 1e-9
    # moment arms: −dl/dq here, computeMomentArm there; they differ where OpenSim's path is not length-minimal
    difference = np.abs(ours.moment_arms - theirs.moment_arms).max()
    assert 1e-6 < difference < 5e-4, difference


@pytest.mark.opensim
def test_torus_wrapped_samples_equal_opensims(opensim_task, tmp_path):
    """Muscles through tori (BRA, BICshort) are sampled, not refused: lengths OpenSim's (measured 1e-15 m)."""
    model = arm26_with_torus_rings(tmp_path)
    q = latin_hypercube(describe_geometric(model).range_of(COORDINATES), 40, 5)
    muscles = ("BRA", "BICshort")
    ours = sample_geometric_paths(model, COORDINATES, q, muscles, progress=None)
    theirs = sample_paths(model, COORDINATES, q, muscles, progress=None)
    assert np.abs(ours.lengths - theirs.lengths).max() <= 1e-12


def test_fit_paths_without_opensim(tmp_path, capsys):
    from trajopt.edge.tools.fit_paths import main

    out = tmp_path / "fit" / "paths.json"
    assert main([str(ARM26), "--geometric", "--muscles", "BRA", "BICshort", "--samples", "200", "--heldout", "50",
                 "--out", str(out.parent)]) == 0
    printed = capsys.readouterr().out
    assert "sampling the model's geometric paths" in printed and out.is_file()
