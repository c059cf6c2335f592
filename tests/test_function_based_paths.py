"""OpenSim's FunctionBasedPathSet (MultivariatePolynomialFunction) read by trajopt, against OpenSim 4.6."""

import numpy as np
import pytest

from conftest import ROOT
from trajopt.errors import ModelFileError
from trajopt.model.paths.function_based_xml import read_function_based_path_set
from trajopt.model.paths.function_based import MultivariatePolynomial, polynomial_exponents

WALK3D = ROOT / "trajopt" / "examples" / "walk3d"
PATHS = WALK3D / "subject_walk_scaled_FunctionBasedPathSet.xml"


def test_term_order_is_opensims():
    # OpenSim's documented order for (X, Y, Z), order 3: 000, 001, 002, 003, 010, 011, 012, 020, 021, 030, 100, ...
    exponents = polynomial_exponents(3, 3)
    assert exponents.shape == (20, 3)
    assert [tuple(e) for e in exponents[:11]] == [(0, 0, 0), (0, 0, 1), (0, 0, 2), (0, 0, 3), (0, 1, 0), (0, 1, 1),
                                                  (0, 1, 2), (0, 2, 0), (0, 2, 1), (0, 3, 0), (1, 0, 0)]
    assert tuple(exponents[-1]) == (3, 0, 0)


def test_polynomial_value():
    # 1 + 2y + 3y² + 4x + 5xy + 6x² at (x, y) = (0.5, -2)
    polynomial = MultivariatePolynomial(2, 2, (1.0, 2.0, 3.0, 4.0, 5.0, 6.0))
    x, y = 0.5, -2.0
    assert float(polynomial.expression([x, y])) == pytest.approx(1 + 2 * y + 3 * y * y + 4 * x + 5 * x * y + 6 * x * x,
                                                                  abs=1e-15)


def test_bad_coefficient_count_names_the_element(tmp_path):
    text = PATHS.read_text().replace("<order>5</order>", "<order>4</order>", 1)
    bad = tmp_path / "paths.xml"
    bad.write_text(text)
    with pytest.raises(ModelFileError, match=r"FunctionBasedPath\[/forceset/addbrev_r\].*needs 35 coefficients"):
        read_function_based_path_set(bad)


@pytest.mark.opensim
def test_walk3d_lengths_and_moment_arms_match_opensim(opensim_task):
    paths = read_function_based_path_set(PATHS)
    coordinates = paths.coordinates
    rng = np.random.default_rng(3)
    values = np.column_stack([rng.uniform(-0.6, 0.6, 60) if "knee" not in c else rng.uniform(0.0, 1.8, 60)
                              for c in coordinates])
    reference = opensim_task("function_based_paths", {
        "model": str(WALK3D / "subject_walk_scaled.osim"), "paths": str(PATHS), "coordinates": list(coordinates),
        "values": values, "moment_arm_coordinates": list(coordinates)})
    order = [list(paths.muscles).index(m) for m in reference["muscles"]]
    function = paths.lengths_and_moment_arms_function(coordinates)
    for row, q in enumerate(values):
        lengths, arms = (np.asarray(v) for v in function(q))
        np.testing.assert_allclose(lengths[order, 0], reference["lengths"][row], rtol=0, atol=1e-14)  # measured 4e-16
        np.testing.assert_allclose(arms[order], reference["moment_arms"][row], rtol=0, atol=1e-14)  # measured 7e-17
