"""Length-jump surfaces found without being told the coordinate or sign (trajopt.model.paths.jump_cuts), on analytic
lengths whose surfaces are known exactly."""

import numpy as np

from trajopt.model.paths.jump_cuts import jump_cuts

RANGES = {name: (-1.0, 1.0) for name in "abc"}


def _surface(q):
    """a = 0.1 + 0.3 b + 0.1 c^2 (the analytic surface of tests/test_domain_cells.py)."""
    return 0.1 + 0.3 * q[:, 1] + 0.1 * q[:, 2] ** 2


def _ending_jump(q):
    """l jumps by 4 mm max(b, 0) across the surface: it ends inside the box at b = 0 (lines along a with b < 0
    cross no jump); plus a kink across b = 0 and a smooth part."""
    q = np.asarray(q)
    a, b, c = q.T
    return 0.1 + 0.02 * a + 0.01 * b * c + 0.004 * np.maximum(b, 0.0) * (a >= _surface(q))


def _pocket(q):
    """0.22 m longer for a in [0.5, 0.55], b in [-0.8, -0.2], c in [-0.5, 0.5] (glmax1-like pocket)."""
    a, b, c = np.asarray(q).T
    return 0.22 * ((a >= 0.5) & (a <= 0.55) & (b >= -0.8) & (b <= -0.2) & (np.abs(c) <= 0.5))


def _assert_is_the_surface(surface):
    expected = {(0, 0): 0.1, (1, 0): 0.3, (0, 2): 0.1}
    assert surface.cut.coordinate == "a" and surface.cut.others == ("b", "c")
    for exponents, coefficient in zip(surface.cut.exponents, surface.cut.coefficients):
        assert abs(coefficient - expected.get(exponents, 0.0)) < 1e-6, (exponents, coefficient)
    assert surface.largest > 0 and abs(surface.largest - 0.004) < 2e-4, surface


def test_builder_finds_the_jump_surface_without_coordinate_or_sign():
    scan = jump_cuts(_ending_jump, "abc", RANGES, step=0.01)
    # measured: one surface along a, 275/625 lines, coefficients within 2e-8, values within 3e-8 (lines along b
    # also cross it and are recognised as the same surface)
    assert len(scan.surfaces) == 1 and scan.pockets == 0, scan.describe()
    _assert_is_the_surface(scan.surfaces[0])
    q = np.random.default_rng(0).uniform(-1.0, 1.0, (2000, 3))
    np.testing.assert_allclose(scan.cuts[0].value(q, "abc"), _surface(q), atol=1e-6)


def test_a_negative_jump_along_another_coordinate_is_found_with_its_sign():
    """The same jump with the roles swapped: c = 0.1 + 0.3 b + 0.1 a^2 and a jump of -4 mm max(b, 0)."""
    def lengths(q):
        q = np.asarray(q)
        return 0.1 - 0.004 * np.maximum(q[:, 1], 0.0) * (q[:, 2] >= 0.1 + 0.3 * q[:, 1] + 0.1 * q[:, 0] ** 2)

    scan = jump_cuts(lengths, "abc", RANGES, step=0.01)
    assert len(scan.surfaces) == 1, scan.describe()
    surface = scan.surfaces[0]
    assert surface.cut.coordinate == "c" and surface.largest < 0
    q = np.random.default_rng(0).uniform(-1.0, 1.0, (2000, 3))
    np.testing.assert_allclose(surface.cut.value(q, "abc"), 0.1 + 0.3 * q[:, 1] + 0.1 * q[:, 0] ** 2, atol=1e-6)


def test_a_continuous_length_has_no_surface():
    """Smooth terms plus a kink (the moment arm about b jumps by 4 mm at b = 0): no length jump, no cut."""
    def lengths(q):
        a, b, c = np.asarray(q).T
        return 0.1 + 0.02 * a + 0.01 * b * c + 0.004 * np.maximum(b, 0.0) + 0.05 * np.sin(2 * a) * c

    scan = jump_cuts(lengths, "abc", RANGES, step=0.01)
    assert scan.surfaces == () and scan.pockets == 0


def test_pockets_are_separated_from_the_surface():
    def lengths(q):
        return _ending_jump(q) + _pocket(q)

    scan = jump_cuts(lengths, "abc", RANGES, step=0.01)
    # measured: the same surface as without the pocket; 91/625 lines cross the pocket; with pocket=inf the pocket's
    # +0.22 m edges join the surface's jumps along a and the fit is 0.042 off them
    assert len(scan.surfaces) == 1, scan.describe()
    _assert_is_the_surface(scan.surfaces[0])
    assert scan.pockets > 0.1 * scan.scanned, (scan.pockets, scan.scanned)
    mixed = jump_cuts(lengths, "abc", RANGES, step=0.01, pocket=np.inf)  # the pocket's edges taken as jumps
    assert mixed.pockets == 0 and max(s.distance for s in mixed.surfaces) > 0.01, mixed.describe()


def _slanted_kink(q):
    """The moment arm about a falls by 10 mm across a = 0.1 + 0.3 b + 0.1 c^2 (a kink, no jump)."""
    a = np.asarray(q)[:, 0]
    return 0.1 + 0.02 * a + 0.01 * np.maximum(a - _surface(q), 0.0)


def test_kink_builder_finds_the_kink_surface_and_its_moment_arm_change():
    from trajopt.model.paths.jump_cuts import kink_cuts

    scan = kink_cuts(_slanted_kink, "abc", RANGES, step=0.01)
    # the 625 lines along a all cross it; along b and c it is the same surface (dropped)
    assert len(scan.surfaces) == 1 and scan.kind == "kink", scan.describe()
    surface = scan.surfaces[0]
    assert surface.cut.coordinate == "a" and surface.lines == 625
    q = np.random.default_rng(0).uniform(-1.0, 1.0, (2000, 3))
    np.testing.assert_allclose(surface.cut.value(q, "abc"), _surface(q), atol=1e-6)
    # −∂l/∂a goes from −20 to −30 mm: a change of −10 mm (the two sides' slopes are exact here)
    assert abs(surface.smallest + 0.01) < 1e-9 and abs(surface.largest + 0.01) < 1e-9, surface
    assert jump_cuts(_slanted_kink, "abc", RANGES, step=0.01).surfaces == ()  # no length jump


def test_kinks_on_a_known_jump_surface_or_off_any_surface_are_no_kink_surfaces():
    from trajopt.model.paths.jump_cuts import kink_cuts

    # _ending_jump's kink across b = 0 (above its jump surface) is found; the jump surface is no kink surface
    jumps = jump_cuts(_ending_jump, "abc", RANGES, step=0.01)
    kinks = kink_cuts(_ending_jump, "abc", RANGES, step=0.01, known=jumps.cuts).surfaces
    assert [k.cut.coordinate for k in kinks] == ["b"] and kinks[0].cut.exponents == ((0, 0),), kinks  # a plane
    assert abs(kinks[0].cut.coefficients[0]) < 1e-12 and abs(kinks[0].largest + 0.004) < 1e-9, kinks

    def scattered(q):  # kinks along a at a = 0.8 sin(7 b) cos(5 c): no low-degree surface within 0.5 deg
        a, b, c = np.asarray(q).T
        return 0.1 + 0.01 * np.maximum(a - 0.8 * np.sin(7 * b) * np.cos(5 * c), 0.0)

    assert kink_cuts(scattered, "abc", RANGES, step=0.01).surfaces == ()
