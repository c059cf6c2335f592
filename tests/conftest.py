"""Shared test fixtures: data folder, arm26 loaded once per session, and the OpenSim reference (skipped when
opensim is absent)."""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from trajopt.model.io.opensim_reference import opensim_available, run_opensim_task
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.osim import load_osim
from trajopt.model.paths.polynomial import PolynomialPaths

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
ARM26_FOLDER = ROOT / "trajopt" / "examples" / "arm26"


@pytest.fixture(scope="session")
def arm26():
    """arm26.osim as trajopt reads it, loaded once and shared read-only (an OsimModel is a frozen dataclass)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_osim(ARM26_FOLDER / "arm26.osim")


@pytest.fixture(scope="session")
def arm26_model(arm26):
    """arm26 with its committed polynomial paths (paths.json) as a MusculoskeletalModel, built once per session;
    its CasADi Functions are built in the constructor and never changed afterwards."""
    return MusculoskeletalModel(arm26, PolynomialPaths.load(ARM26_FOLDER / "paths.json"))


@pytest.fixture
def opensim_task():
    """Run a ``trajopt_opensim`` task in a child process; skip the test when opensim is missing."""
    if not opensim_available():
        pytest.skip("opensim is not installed (pip install 'trajopt[opensim]')")
    return run_opensim_task


def pytest_collection_modifyitems(config, items):
    """Every test that runs OpenSim (through the ``opensim_task`` fixture) carries the ``opensim`` marker, so
    ``-m opensim`` / ``-m 'not opensim'`` select them all without relying on each test's decorator."""
    for item in items:
        if "opensim_task" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.opensim)


def arm26_without_ellipsoids(folder: Path) -> Path:
    """arm26 with its two ellipsoids (TRIlonghh, BIClonghh) switched off, written to `folder`: every path wraps
    over cylinders only (as OpenSim computes it with those wrap objects inactive)."""

    text = (ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim").read_text()
    for name in ("TRIlonghh", "BIClonghh"):
        block = re.search(rf'<WrapEllipsoid name="{name}">.*?</WrapEllipsoid>', text, re.S).group(0)
        text = text.replace(block, block.replace("<active>true</active>", "<active>false</active>"))
    file = Path(folder) / "arm26_no_ellipsoids.osim"
    file.write_text(text)
    return file


def _torus_through(name: str, start, end, fraction: float, inner: float, outer: float, quadrant: str) -> str:
    """A WrapTorus element on r_humerus whose axis runs along start -> end (humerus frame), centred at `fraction`."""

    start, end = np.asarray(start), np.asarray(end)
    axis = (end - start) / np.linalg.norm(end - start)
    centre = start + fraction * (end - start)
    angles = (np.arctan2(-axis[1], axis[2]), np.arcsin(axis[0]), 0.0)  # body-fixed XYZ: its z axis along `axis`
    return (f'<WrapTorus name="{name}"><active>true</active>'
            f'<xyz_body_rotation>{" ".join(repr(float(v)) for v in angles)}'
            f'</xyz_body_rotation><translation>{" ".join(repr(float(v)) for v in centre)}</translation>'
            f'<quadrant>{quadrant}'
            f'</quadrant><inner_radius>{inner}</inner_radius><outer_radius>{outer}</outer_radius></WrapTorus>')


def arm26_with_torus_rings(folder: Path) -> Path:
    """arm26 with two tori on the humerus that muscles pass through (OpenSim wraps a path on the inside of a
    torus' tube): BRA's ring (quadrant all; BRA also wraps over the TRI cylinder) around its humerus-ulna
    segment at mid elbow flexion, and BICshort's ring (quadrant -x, its only wrap, points 5-6) around its last
    segment. As the elbow flexes the segments swing across the holes and wrap on the tubes' inner sides."""
    text = (ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim").read_text()
    bra = _torus_through("BRAring", (0.0068, -0.1739, -0.0036), (0.0264, -0.3034, -0.013), 0.6, 0.008, 0.012, "all")
    bic = _torus_through("BICring", (0.0228, -0.1754, -0.0063), (0.0565, -0.2861, 0.0054), 0.6, 0.010, 0.014, "-x")
    text = text.replace('<WrapCylinder name="TRI">', bra + bic + '<WrapCylinder name="TRI">', 1)
    wrap = ('<PathWrap name="{0}-ring"><wrap_object>{1}</wrap_object><method>hybrid</method>'
            '<range>{2}</range></PathWrap>')
    start = text.index('name="BICshort"')
    empty = text.index("<PathWrapSet>\n", start)
    objects = text.index("<objects />", empty)
    text = text[:objects] + "<objects>" + wrap.format("BICshort", "BICring", "5 6") + "</objects>" + \
        text[objects + len("<objects />"):]
    start = text.index('name="BRA"')
    objects = text.index("<PathWrapSet>", start)
    objects = text.index("<objects>", objects) + len("<objects>")
    text = text[:objects] + wrap.format("BRA", "BRAring", "-1 -1") + text[objects:]
    file = Path(folder) / "arm26_torus_rings.osim"
    file.write_text(text)
    return file


def arm26_with_torus(folder: Path) -> Path:
    """arm26 with its TRIlonghh ellipsoid replaced by a WrapTorus (same frame and quadrant z, tube radius 1 cm
    about a 3 cm circle), written to `folder`: TRIlong then wraps over a torus. TRIlong does not pass through
    this torus' hole: OpenSim's constrained cylinder then wraps it the long way round at every configuration."""

    text = (ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim").read_text()
    ellipsoid = re.search(r'<WrapEllipsoid name="TRIlonghh">.*?</WrapEllipsoid>', text, re.S).group(0)
    torus = re.sub(r"<dimensions>.*?</dimensions>",
                   "<inner_radius>0.01</inner_radius><outer_radius>0.03</outer_radius>",
                   ellipsoid).replace("WrapEllipsoid", "WrapTorus")
    file = Path(folder) / "arm26_torus.osim"
    file.write_text(text.replace(ellipsoid, torus))
    return file
