"""The inverse's EMG tracking goal (trajopt.studies.analysis.inverse_goals.EmgTracking, Moco's MocoControlTrackingGoal)
in prediction and tracking: its integrand is weight · Σ (e_m − s_c EMG_c(t))² with the EMG interpolated linearly, and
in a reach it pulls the tracked muscle's excitation towards the EMG."""

from pathlib import Path

import casadi as ca
import numpy as np
import pytest

from trajopt.studies.analysis.inverse_goals import EmgTracking
from trajopt.errors import TrajoptInputError
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.tracking import TrackingWeights
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.core.ocp import Effort, HermiteSimpson, Ipopt
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.table import Table

from ocp_problems import arm26_elbow_reach

DATA = Path(__file__).resolve().parent / "data"
LEVEL = 0.5  # the EMG the triceps' long head tracks in the solves


def _model():
    """arm26 without wrap objects (tests/data/osim/arm26_nowrap.osim): straight-line paths, small expressions."""
    osim, _ = load_processed(DATA / "osim" / "arm26_nowrap.osim")
    return MusculoskeletalModel(osim, GeometricPaths(osim))


def _constant_emg(level: float = LEVEL) -> Table:
    return Table(np.array([0.0, 0.5]), ("TRI",), np.full((2, 1), level))


def test_integrand_is_the_weighted_squared_error_to_the_interpolated_emg():
    rng = np.random.default_rng(5)
    model = _model()
    built = arm26_elbow_reach(model)
    times = np.sort(rng.uniform(0.0, 0.5, 7))
    emg = Table(times, ("BIC", "TRI"), rng.uniform(0.0, 1.0, (7, 2)))
    goal = EmgTracking(emg, {"BIClong": "BIC", "TRIlong": "TRI"}, scales={"BIC": 0.8}, weight=50.0)
    integrand = goal.motion_goal(built).terms(built.problem).integrands[0]
    evaluate = ca.Function("emg_goal", [built.problem.time, built.muscle_controls], [integrand])
    names = list(model.muscle_names)
    for t in rng.uniform(times[0], times[-1], 5):
        e = rng.uniform(0.0, 1.0, len(names))
        expected = 50.0 * ((e[names.index("BIClong")] - 0.8 * np.interp(t, times, emg.data[:, 0])) ** 2
                           + (e[names.index("TRIlong")] - np.interp(t, times, emg.data[:, 1])) ** 2)
        assert float(evaluate(t, e)) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(TrajoptInputError, match="not in the model"):
        EmgTracking(emg, {"biceps": "BIC"}).motion_goal(built)


def _tracked_excitation(built, solution) -> float:
    """Mean over the grid of the triceps long head's excitation."""
    row = list(built.model.muscle_names).index("TRIlong")
    return float(np.mean(np.atleast_2d(solution.value(built.excitations))[row]))


def test_emg_goal_pulls_the_predicted_excitation_towards_the_emg():
    """A flexion needs little of the triceps (an extensor); tracking an EMG of 0.5 raises its excitation."""
    model = _model()
    results = []
    for goals in ((), (EmgTracking(_constant_emg(), {"TRIlong": "TRI"}, weight=10.0),)):
        built = arm26_elbow_reach(model)
        built.problem.minimize(Effort(built.excitations))
        for goal in goals:
            built.problem.minimize(goal.motion_goal(built))
        solution = built.problem.solve(HermiteSimpson(8), Ipopt(tol=1e-6, print_level=0))
        assert solution.success
        results.append(_tracked_excitation(built, solution))
    plain, tracked = results
    assert plain < 1e-3  # measured 1.2e-5
    assert tracked == pytest.approx(LEVEL, abs=0.05)  # measured 0.511


def test_tracking_study_takes_the_emg_goal():
    """MuscleDrivenTracking(goals=...) of an elbow flexion (coordinate weight 1000, excitations 1): the EMG goal
    raises the triceps' excitation against the coordinate tracking, which the co-contraction disturbs."""
    model = _model()
    time = np.linspace(0.0, 0.5, 11)
    elbow = 0.3 + 1.0 * (1 - np.cos(np.pi * time / 0.5)) / 2
    motion = Table(time, tuple(model.coordinate_names), np.column_stack([np.zeros(time.size), elbow]))
    results = []
    for goals in ((), (EmgTracking(_constant_emg(), {"TRIlong": "TRI"}, weight=10.0),)):
        result = MuscleDrivenTracking(model, motion, weights=TrackingWeights(coordinates=1000.0, excitations=1.0),
                                      mesh_interval=0.05, goals=goals).solve(solver=Ipopt(tol=1e-6, print_level=0))
        assert result.success
        results.append(_tracked_excitation(result.tracking.muscle_driven, result.solution))
    plain, tracked = results
    assert plain < 0.02 and tracked > 0.08  # measured 0.010 and 0.102
