"""Moco's example2DWalkingMetabolics on trajopt (trajopt/examples/gait2d/metabolics.py) against Moco's own run of
the example (trajopt/examples/gait2d/moco/moco_walk2d_metabolics_info.json, OpenSim 4.6)."""

import json

import pytest

from trajopt.examples.gait2d.metabolics import MOCO_RECORD, main
from trajopt.examples.gait2d.model import MODEL_FILE
from trajopt.examples.gait2d.prediction import REFERENCE_COORDINATES


def _moco() -> dict:
    if not (MOCO_RECORD.exists() and MODEL_FILE.exists() and REFERENCE_COORDINATES.exists()):
        pytest.skip("Moco's recorded run, 2D_gait.osim or referenceCoordinates.sto is missing")
    return json.loads(MOCO_RECORD.read_text())


@pytest.mark.slow
@pytest.mark.xfail(reason="not yet: trajopt's optimum is 2.1 % above Moco's recorded one, higher on every term "
                          "(trajopt/examples/gait2d/README.md)", strict=False)
def test_objective_within_one_percent_of_moco():
    from trajopt.examples.gait2d.metabolics import solve

    moco = _moco()
    _, solution, _ = solve()
    assert solution.success
    assert solution.objective == pytest.approx(moco["objective"], rel=0.01)


def test_bad_intervals_is_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--intervals", "1"])
    assert stop.value.code == 2 and "need --intervals >= 2, got 1" in capsys.readouterr().err
