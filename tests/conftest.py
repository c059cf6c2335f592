"""Shared test fixtures: data folder and the OpenSim reference (skipped when opensim is absent)."""

from pathlib import Path

import pytest

from trajopt.opensim_reference import opensim_available, run_opensim_task

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent


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
    import re

    text = (ROOT / "problems" / "arm26" / "arm26.osim").read_text()
    for name in ("TRIlonghh", "BIClonghh"):
        block = re.search(rf'<WrapEllipsoid name="{name}">.*?</WrapEllipsoid>', text, re.S).group(0)
        text = text.replace(block, block.replace("<active>true</active>", "<active>false</active>"))
    file = Path(folder) / "arm26_no_ellipsoids.osim"
    file.write_text(text)
    return file


def arm26_with_torus(folder: Path) -> Path:
    """arm26 with its TRIlonghh ellipsoid replaced by a WrapTorus (a wrap object trajopt does not model yet),
    written to `folder`: TRIlong then wraps over a torus."""
    import re

    text = (ROOT / "problems" / "arm26" / "arm26.osim").read_text()
    ellipsoid = re.search(r'<WrapEllipsoid name="TRIlonghh">.*?</WrapEllipsoid>', text, re.S).group(0)
    torus = re.sub(r"<dimensions>.*?</dimensions>", "<inner_radius>0.01</inner_radius><outer_radius>0.03</outer_radius>",
                   ellipsoid).replace("WrapEllipsoid", "WrapTorus")
    file = Path(folder) / "arm26_torus.osim"
    file.write_text(text.replace(ellipsoid, torus))
    return file
