"""Moco's example2DWalkingMetabolics on trajopt (trajopt/examples/gait2d/metabolics.py) against Moco's own run of
the example (trajopt/examples/gait2d/moco/moco_walk2d_metabolics_info.json, OpenSim 4.6)."""

import json

import numpy as np
import pytest

from trajopt.examples.gait2d.metabolics import MOCO_RECORD, main
from trajopt.examples.gait2d.model import MODEL_FILE
from trajopt.examples.gait2d.prediction import REFERENCE_COORDINATES

# Moco's solution of the example, from the run MOCO_RECORD holds (trajopt/examples/gait2d/README.md).
MOCO_SOLUTION = MOCO_RECORD.with_name("moco_walk2d_metabolics_solution.sto")


def _moco() -> dict:
    if not (MOCO_RECORD.exists() and MODEL_FILE.exists() and REFERENCE_COORDINATES.exists()):
        pytest.skip("Moco's recorded run, 2D_gait.osim or referenceCoordinates.sto is missing")
    return json.loads(MOCO_RECORD.read_text())


@pytest.mark.slow
def test_objective_within_one_percent_of_moco():
    # trajopt with the example's IPOPT settings against the objective Moco's own solve of the example reached.
    from trajopt.examples.gait2d.metabolics import solve

    moco = _moco()
    _, solution, _ = solve()
    assert solution.success
    assert solution.objective == pytest.approx(moco["objective"], rel=0.01)


def test_bad_intervals_is_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--intervals", "1"])
    assert stop.value.code == 2 and "need --intervals >= 2, got 1" in capsys.readouterr().err


def test_bad_tolerance_is_one_line(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--tolerance", "0"])
    assert stop.value.code == 2 and "need 0 < --tolerance < 1, got 0.0" in capsys.readouterr().err


def test_goals_on_mocos_solution_give_mocos_terms():
    # Moco's solution (states and controls on its 101 Hermite-Simpson points) as the NLP point, unmoved (IPOPT's
    # bound push off, no iteration): trajopt's state tracking (the reference as MocoStateTrackingGoal splines it),
    # control effort and metabolic goals give Moco's getObjectiveTerm.
    from trajopt.examples.gait2d.metabolics import INTERVALS, build, objective_terms
    from trajopt.model.io.tables import read_table
    from trajopt.core.ocp import Guess, HermiteSimpson, Ipopt

    moco = _moco()
    if not MOCO_SOLUTION.exists():
        pytest.skip("Moco's solution of the example is missing")
    built = build()
    table = read_table(MOCO_SOLUTION)
    problem = built.problem
    guess = Guess(table.time)
    for variable in problem._states + problem._controls:  # q, u, activations; excitations, lumbar control
        guess.set(variable.symbol, np.column_stack([table.column(label) for label in variable.labels]))
    solver = Ipopt(tol=1e-4, max_iterations=0, print_level=0, options={"bound_push": 1e-14, "bound_frac": 1e-14})
    solution = problem.solve(HermiteSimpson(INTERVALS, interpolate_control_midpoints=True), solver, guess=guess)
    terms = objective_terms(built, solution)
    assert terms["state_tracking"] == pytest.approx(moco["objective_terms"]["state_tracking"], rel=1e-6)
    assert terms["control_effort"] == pytest.approx(moco["objective_terms"]["control_effort"], rel=1e-6)
    # Polynomial muscle paths for Moco's geometric ones: fiber lengths within 0.2 mm.
    assert terms["met"] == pytest.approx(moco["objective_terms"]["met"], rel=3e-4)
