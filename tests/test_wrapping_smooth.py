"""Smooth wrapping (trajopt.model.paths.wrapping.smooth): closed-form wraps against analytic geodesics and exact mode
(OpenSim's algorithm, equal to OpenSim 4.6 in tests/test_wrapping*.py), its blend bound, and its smoothness."""

from __future__ import annotations

import math

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT, arm26_with_torus
from trajopt.errors import TrajoptInputError
from trajopt.model.osim import load_osim
from trajopt.model.paths.geometric import GeometricPaths, geometric_path
from trajopt.model.paths.wrapping.smooth import BLEND_BOUND, SmoothWrapping, cylinder_excess, sphere_excess
from trajopt.model.paths.wrapping.sphere import sphere_wrap

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"


def _exact_excess(wrap, p1, p2):
    code, r1, r2, length = wrap(p1, p2)
    if int(code) < 2:
        return 0.0
    r1, r2 = np.asarray(r1).ravel(), np.asarray(r2).ravel()
    return float(np.linalg.norm(r1 - p1) + float(length) + np.linalg.norm(p2 - r2) - np.linalg.norm(p2 - p1))


def test_unconstrained_sphere_is_opensims_great_circle_wrap():
    smooth, exact = sphere_excess(0.05, 0, 0, 1e-12), sphere_wrap(0.05, 0, 0)
    rng = np.random.default_rng(0)
    errors, wrapped = [], 0
    for _ in range(200):
        p1, p2 = rng.uniform(-0.15, 0.15, 3), rng.uniform(-0.15, 0.15, 3)
        reference = _exact_excess(exact, p1, p2)
        wrapped += reference > 0
        errors.append(abs(float(smooth(p1, p2)[0]) - reference))
    assert wrapped > 20
    assert max(errors) < 1e-12


def test_cylinder_wrap_is_the_unrolled_geodesic():
    """Ends at (∓d, 0, z): tangent lengths sqrt(d² - R²), arc R (π - 2 acos(R/d)), unrolled with the axial rise."""
    radius, d, rise = 0.02, 0.07, 0.03
    planar = 2 * math.sqrt(d * d - radius ** 2) + radius * (math.pi - 2 * math.acos(radius / d))
    expected = math.hypot(planar, rise) - math.hypot(2 * d, rise)
    value = float(cylinder_excess(radius, 1.0, 0, 0, SmoothWrapping(1e-12))([-d, 0, 0], [d, 0, rise])[0])
    assert value == pytest.approx(expected, abs=1e-15)
    # With quadrant +y the path goes round the +y side; -y the other: the same length by symmetry.
    assert (float(cylinder_excess(radius, 1.0, 1, 1, SmoothWrapping(1e-12))([-d, -0.001, 0], [d, -0.001, rise])[0])
            == pytest.approx(float(cylinder_excess(radius, 1.0, 1, -1, SmoothWrapping(1e-12))(
                [-d, 0.001, 0], [d, 0.001, rise])[0]), abs=1e-15))


def test_cylinder_wrap_is_dropped_beyond_the_ends_as_opensims():
    """Both tangent points beyond an end (2 mm fade): no wrap, as OpenSim's exact wrap; within the ends: the wrap."""
    from trajopt.model.paths.wrapping.cylinder import cylinder_wrap

    radius, length, d = 0.02, 0.1, 0.07
    smooth, exact = (cylinder_excess(radius, length, 0, 0, SmoothWrapping(1e-12)),
                     cylinder_wrap(radius, length, 0, 0, True))
    for height, wraps in ((0.02, True), (0.049, True), (0.053, False), (0.08, False)):
        p1, p2 = np.array([-d, 0.001, height]), np.array([d, 0.001, height])
        value, reference = float(smooth(p1, p2)[0]), _exact_excess(exact, p1, p2)
        assert (reference > 0) == wraps and (value > 0) == wraps
        assert value == pytest.approx(reference, abs=1e-12)


def test_blend_stays_within_its_bound_and_is_twice_differentiable():
    """A segment slid across the cylinder: the blended excess is within BLEND_BOUND band of the closed form (equal
    beyond the band), and its second derivative is continuous where the wrap switches on."""
    radius, band = 0.02, 1e-3
    s = ca.SX.sym("s")
    p1, p2 = ca.vertcat(-0.1, s, 0), ca.vertcat(0.1, s, 0.01)
    blended = cylinder_excess(radius, 1.0, 0, 0, SmoothWrapping(band))(p1, p2)[0]
    raw = cylinder_excess(radius, 1.0, 0, 0, SmoothWrapping(1e-15))(p1, p2)[0]
    f = ca.Function("f", [s], [blended, raw, ca.jacobian(blended, s), ca.hessian(blended, s)[0]])
    offsets = np.linspace(0.0, 0.0199, 2000)
    values = np.array([[float(v) for v in f(x)[:2]] for x in offsets])
    gap = values[:, 1] - values[:, 0]
    assert gap.min() >= -1e-15
    assert gap.max() <= BLEND_BOUND * band + 1e-15
    assert gap.max() > 0.99 * BLEND_BOUND * band  # the bound is reached
    assert np.all(gap[values[:, 1] > band] == 0)
    # The switch: the segment grazes the cylinder at s = radius (from below it crosses).
    for side in (-1e-7, 1e-7):
        _, _, first, second = f(radius + side)
        assert abs(float(first)) < 1e-12 and abs(float(second)) < 1e-9


def test_arm26_cylinder_muscles_are_within_the_blend_bound_of_exact_mode():
    """TRIlat, TRImed and BRA wrap over the unconstrained TRI cylinder only. At 300 random configurations over the
    full ranges: the blend moves the smooth lengths by at most BLEND_BOUND band (reached); without the blend they
    equal exact mode within 25 µm (measured 2.1 µm for TRIlat and TRImed, 22 µm for BRA: OpenSim's tangent points
    on a cylinder are not quite the geodesic's); moment arms within 4.5 mm of exact mode
    (measured 3.1-4.2 mm with the 1 mm band: the blend's
    slope)."""
    osim = load_osim(ARM26)
    band = 1e-3
    ranges = np.array([c.range for c in osim.spec.coordinates])
    q = np.random.default_rng(3).uniform(ranges[:, 0], ranges[:, 1], (300, 2))
    x = ca.SX.sym("q", 2)
    for muscle in ("TRIlat", "TRImed", "BRA"):
        paths = [geometric_path(osim, muscle, smoothing=SmoothWrapping(band)),
                 geometric_path(osim, muscle, smoothing=SmoothWrapping(1e-15)), geometric_path(osim, muscle)]
        f = ca.Function("f", [x], [ca.vertcat(*[p.length(x) for p in paths]),
                                   ca.jacobian(ca.vertcat(*[p.length(x) for p in paths]), x)])
        values = [(np.asarray(length).ravel(), np.asarray(j)) for length, j in (f(row) for row in q)]
        lengths = np.array([v[0] for v in values])
        arms = np.array([np.abs(v[1][0] - v[1][2]).max() for v in values])
        blend = np.abs(lengths[:, 0] - lengths[:, 1]).max()
        assert BLEND_BOUND * band * 0.9 < blend <= BLEND_BOUND * band + 1e-15, muscle
        assert np.abs(lengths[:, 1] - lengths[:, 2]).max() < 2.5e-5, muscle
        assert arms.max() < 4.5e-3, muscle


@pytest.mark.slow
def test_arm26_smooth_mode_deviation_from_exact_mode():
    """All six muscles at 300 random configurations over the full ranges (exact mode ~75 s). Measured with the 1 mm
    band: TRIlong 7.40 mm and 49.3 mm (length, moment arm: where OpenSim's three wraps interact and its
    constrained cylinder wraps segments that do not cross it), BIClong 5.85 and 29.6 mm (OpenSim's iterative
    ellipsoid plane), the cylinder muscles 0.273 and 3.1-4.2 mm."""
    osim = load_osim(ARM26)
    smooth = GeometricPaths(osim, smoothing=SmoothWrapping(1e-3)).lengths_and_moment_arms_function(
        osim.multibody.coordinate_names)
    exact = GeometricPaths(osim).lengths_and_moment_arms_function(osim.multibody.coordinate_names)
    ranges = np.array([c.range for c in osim.spec.coordinates])
    q = np.random.default_rng(3).uniform(ranges[:, 0], ranges[:, 1], (300, 2))
    lengths, arms = [], []
    for row in q:
        (ls, ms), (le, me) = smooth(row), exact(row)
        lengths.append(np.abs(np.asarray(ls) - np.asarray(le)).ravel())
        arms.append(np.abs(np.asarray(ms) - np.asarray(me)).max(axis=1))
    lengths, arms = np.max(lengths, axis=0), np.max(arms, axis=0)
    limits = {"TRIlong": (7.5e-3, 5e-2), "TRIlat": (2.8e-4, 4.3e-3), "TRImed": (2.8e-4, 4.3e-3),
              "BIClong": (6e-3, 3e-2), "BICshort": (1e-15, 1e-15), "BRA": (2.8e-4, 4.3e-3)}
    for k, muscle in enumerate(m.name for m in osim.muscles):
        assert lengths[k] <= limits[muscle][0], muscle
        assert arms[k] <= limits[muscle][1], muscle


def test_smooth_mode_rejects_a_torus_and_generalized_force_moment_arms(tmp_path):
    osim = load_osim(arm26_with_torus(tmp_path))
    with pytest.raises(TrajoptInputError, match="TRIlong.*WrapTorus"):
        geometric_path(osim, "TRIlong", smoothing=SmoothWrapping())
    with pytest.raises(TrajoptInputError, match="generalized-force"):
        GeometricPaths(load_osim(ARM26), generalized_force_moment_arms=True, smoothing=SmoothWrapping())
    with pytest.raises(ValueError, match="band"):
        SmoothWrapping(0.0)
