"""Coupler constraints of a prescribed motion: G (constraint Jacobian) and C (coupling matrix) agree with each
other and with the generalized-force method's coupling matrix of trajopt.model.paths.moment_arms."""

import warnings

import numpy as np
import pytest

from conftest import DATA, ROOT
from trajopt.studies.analysis.couplers import CouplerConstraints
from trajopt.model.musculoskeletal.operators import WeldJoints, load_processed
from trajopt.model.paths.moment_arms import coupling_matrix

MODELS = {"arm26_coupled": (DATA / "paths" / "arm26_coupled.osim", ()),
          "walk3d": (ROOT / "trajopt" / "examples" / "walk3d" / "subject_walk_scaled.osim",
                     (WeldJoints(("mtp_r", "mtp_l")),))}


@pytest.mark.parametrize("name", list(MODELS))
def test_coupling_matrix_spans_the_constraint_null_space(name):
    path, operators = MODELS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, couplings = load_processed(path, operators)
    constraints = CouplerConstraints(osim.multibody, couplings)
    rng = np.random.default_rng(0)
    q = rng.uniform(-0.5, 0.5, (20, osim.multibody.nq))
    for c in couplings:  # independent angles inside the couplers' spline ranges
        q[:, osim.multibody.coordinate_index(c.independent)] = rng.uniform(0.05, 1.5, 20)
    G, C = constraints.jacobian(q), constraints.coupling_matrix(q)
    assert C.shape[2] == osim.multibody.nv - len(couplings)
    assert np.max(np.abs(np.einsum("fcv,fvk->fck", G, C))) < 1e-15  # G C = 0
    for frame in range(0, 20, 7):
        for k, speed in enumerate(constraints.independent_speeds):
            reference = np.asarray(coupling_matrix(osim.multibody, q[frame], speed, couplings)).ravel()
            np.testing.assert_allclose(C[frame, :, k], reference, atol=1e-15)


def test_assembled_motion_satisfies_the_couplers():
    from trajopt.model.io import read_motion

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim, couplings = load_processed(*MODELS["walk3d"])
    table = read_motion(ROOT / "trajopt" / "examples" / "walk3d" / "coordinates.sto")
    assembled = CouplerConstraints(osim.multibody, couplings).assemble(table)
    for c in couplings:  # the file's patella columns are not consistent (e.g. 21.7 rad); the assembled ones are
        expected = [float(c.value(x)) for x in assembled.column(c.independent)]
        np.testing.assert_allclose(assembled.column(c.dependent), expected, atol=0)
        assert np.max(np.abs(table.column(c.dependent) - expected)) > 1.0
