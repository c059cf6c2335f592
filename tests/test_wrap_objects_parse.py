"""Wrap objects and PathWraps read from .osim files (values read by eye from arm26.osim) and their
one-line errors for unsupported content."""

import warnings

import pytest

from conftest import ROOT
from trajopt.errors import ModelFileError
from trajopt.model.osim import OsimIgnoredWarning, parse_osim
from trajopt.model.osim import spec

ARM26 = ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim"


def _quiet_parse(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OsimIgnoredWarning)
        return parse_osim(path)


def _edited(tmp_path, old, new):
    text = ARM26.read_text()
    assert text.count(old) >= 1
    path = tmp_path / "edited.osim"
    path.write_text(text.replace(old, new, 1))
    return path


def test_arm26_wrap_objects():
    model = _quiet_parse(ARM26)
    wraps = {w.name: w for w in model.wrap_objects}
    tri = wraps["TRI"]
    assert isinstance(tri, spec.WrapCylinder) and tri.frame == "/bodyset/r_humerus"
    assert (tri.radius, tri.length, tri.quadrant, tri.active) == (0.016, 0.05, "all", True)
    assert tri.translation == (0.0028, -0.2919, -0.0069)
    assert tri.xyz_body_rotation == (-0.14015, -0.00628319, 0.154985)
    glen = wraps["TRIlongglen"]
    assert isinstance(glen, spec.WrapCylinder) and glen.frame == "/bodyset/base" and glen.quadrant == "x"
    hh = wraps["BIClonghh"]
    assert isinstance(hh, spec.WrapEllipsoid) and hh.dimensions == (0.025, 0.02, 0.02) and hh.quadrant == "-y"
    biclong = next(m for m in model.muscles if m.name == "BIClong")
    assert biclong.path.wraps == (spec.PathWrap("BIClonghh", "hybrid", (2, 3)),)
    trilong = next(m for m in model.muscles if m.name == "TRIlong")
    assert [w.wrap_object for w in trilong.path.wraps] == ["TRI", "TRIlonghh", "TRIlongglen"]
    assert {w.range for w in trilong.path.wraps} == {(-1, -1)}


def test_sphere_and_torus_are_read(tmp_path):
    path = _edited(tmp_path, "<objects>\n\t\t\t\t\t\t\t<WrapCylinder name=\"TRIlongglen\">",
                   "<objects><WrapSphere name=\"ball\"><radius>0.02</radius><quadrant>-z</quadrant>"
                   "<active>false</active></WrapSphere><WrapTorus name=\"ring\"><inner_radius>0.01</inner_radius>"
                   "<outer_radius>0.04</outer_radius></WrapTorus>\n<WrapCylinder name=\"TRIlongglen\">")
    wraps = {w.name: w for w in _quiet_parse(path).wrap_objects}
    assert wraps["ball"] == spec.WrapSphere(name="ball", frame="/bodyset/base", quadrant="-z", active=False,
                                            radius=0.02)
    assert isinstance(wraps["ring"], spec.WrapTorus) and (wraps["ring"].inner_radius,
                                                          wraps["ring"].outer_radius) == (0.01, 0.04)


@pytest.mark.parametrize("inner, outer", [(0.04, 0.04), (0.0, 0.04), (0.05, 0.04)])
def test_torus_radii_are_checked_as_opensim_does(tmp_path, inner, outer):
    """OpenSim refuses to load a WrapTorus unless 0 < inner_radius < outer_radius."""
    path = _edited(tmp_path, "<objects>\n\t\t\t\t\t\t\t<WrapCylinder name=\"TRIlongglen\">",
                   f"<objects><WrapTorus name=\"ring\"><inner_radius>{inner}</inner_radius><outer_radius>{outer}"
                   f"</outer_radius></WrapTorus>\n<WrapCylinder name=\"TRIlongglen\">")
    with pytest.raises(ModelFileError, match=r"edited.osim: .*WrapTorus\[ring\]/outer_radius: a WrapTorus needs "
                                             r"0 < inner_radius < outer_radius"):
        _quiet_parse(path)


def test_unsupported_wrap_type_names_the_element(tmp_path):
    path = _edited(tmp_path, "<objects>\n\t\t\t\t\t\t\t<WrapCylinder name=\"TRIlongglen\">",
                   "<objects><WrapDoubleCylinderObst name=\"dc\"/>\n<WrapCylinder name=\"TRIlongglen\">")
    with pytest.raises(ModelFileError, match=r"edited.osim: .*Body\[base\]/WrapObjectSet/objects/"
                                             r"WrapDoubleCylinderObst\[dc\]: unsupported wrap object type"):
        _quiet_parse(path)


def test_unknown_wrap_property_names_the_element(tmp_path):
    path = _edited(tmp_path, "<radius>0.016</radius>", "<radius>0.016</radius><twist>1</twist>")
    with pytest.raises(ModelFileError, match=r"WrapCylinder\[TRI\]/twist: unsupported WrapCylinder property"):
        _quiet_parse(path)


def test_bad_quadrant_names_the_value(tmp_path):
    path = _edited(tmp_path, "<quadrant>x</quadrant>", "<quadrant>up</quadrant>")
    with pytest.raises(ModelFileError, match=r"WrapCylinder\[TRIlongglen\]/quadrant: .*got 'up'"):
        _quiet_parse(path)


def test_negative_radius_is_refused(tmp_path):
    path = _edited(tmp_path, "<radius>0.016</radius>", "<radius>-0.016</radius>")
    with pytest.raises(ModelFileError, match=r"WrapCylinder\[TRI\]/radius: must be >= 0, got -0.016"):
        _quiet_parse(path)


def test_bad_wrap_method_names_the_value(tmp_path):
    path = _edited(tmp_path, "<method>hybrid</method>", "<method>magic</method>")
    with pytest.raises(ModelFileError, match=r"PathWrap\[TRIlong-wrap-cylinder1\]/method: .*got 'magic'"):
        _quiet_parse(path)
