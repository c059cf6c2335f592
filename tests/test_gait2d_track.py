"""Moco's example2DWalking tracking step on trajopt (trajopt/benchmarks/gait2d_track.py) is Moco's problem: each
solver's objective formula gives the other's value on its solution (Moco's recorded run,
trajopt/examples/gait2d/moco/moco_walk2d_info.json and gaitTracking_solution.sto, OpenSim 4.6; and OpenSim in a
child process on trajopt's solution)."""

import json

import pytest

from trajopt.benchmarks.gait2d_track import (
    INTERVALS,
    MOCO_RECORD,
    MOCO_SOLUTION,
    MOCO_TOLERANCE,
    TOLERANCE,
    build,
    main,
    moco_request,
    objective_terms,
    score,
    solve,
    trajectory_request,
)
from trajopt.model.io.tables import read_table


def _moco() -> dict:
    if not (MOCO_RECORD.exists() and MOCO_SOLUTION.exists()):
        pytest.skip("Moco's recorded tracking run or its solution is missing")
    return json.loads(MOCO_RECORD.read_text())["tracking"]


def test_trajopts_goals_on_mocos_solution_give_mocos_terms():
    # Moco's solution (its 49 Hermite-Simpson points) as trajopt's NLP point, unmoved: the state tracking (references
    # splined as MocoStateTrackingGoal does), effort and contact tracking (GRFs splined as MocoContactTrackingGoal
    # does) give Moco's getObjectiveTerm values; the NLP's objective is their sum.
    moco = _moco()
    scored = score(build(), read_table(MOCO_SOLUTION), INTERVALS)
    for name, value in moco["objective_terms"].items():
        assert scored["objective_terms"][name] == pytest.approx(value, rel=1e-9), name
    assert scored["objective"] == pytest.approx(moco["objective"], rel=1e-6)


@pytest.mark.slow
def test_mocos_formula_on_trajopts_solution_gives_trajopts_objective(opensim_task):
    # trajopt's solution as the guess of Moco's problem with no IPOPT iteration (bound push off): Moco's objective
    # and terms there are trajopt's.
    built, solution, _ = solve(INTERVALS, TOLERANCE)
    assert solution.success
    terms = objective_terms(built, solution)
    result = opensim_task("moco_walk2d_tracking", {**moco_request(INTERVALS, MOCO_TOLERANCE), "solve": 0,
                                                   **trajectory_request(solution.table())})
    moco_terms = dict(zip([str(n) for n in result["score_term_names"]], result["score_term_values"]))
    assert set(moco_terms) == set(terms)
    for name, value in terms.items():
        assert moco_terms[name] == pytest.approx(value, rel=1e-8), name
    assert result["score_objective"] == pytest.approx(solution.objective, rel=1e-6)


@pytest.mark.parametrize("option", ["--tolerance", "--moco-tolerance"])
def test_bad_tolerance_is_one_line(capsys, option):
    with pytest.raises(SystemExit) as stop:
        main([option, "0"])
    assert stop.value.code == 2 and f"need 0 < {option} < 1, got 0.0" in capsys.readouterr().err
