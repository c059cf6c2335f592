"""The 3D prediction started from muscle-driven tracking (heavy: minutes): ``prediction.tracking_study`` is
``MuscleDrivenTracking`` of the measured half cycle on the prediction's own model (quaternion pelvis, contact
spheres, symmetric ends); on 10 intervals, with the start's light ground-reaction weight, its solution follows the
measured ground reactions within 15 % of body weight per component (11 % measured, the left vertical force) with
mirror-image ends, and the prediction solved from it walks at the measured cycle's average speed."""

import numpy as np
import pytest

from trajopt.examples.walk3d.prediction import MOCO_RECIPE, build_problem, cycle_speed, solver_settings, tracking_study


@pytest.mark.heavy
def test_prediction_starts_from_the_tracking_solution():
    walk = build_problem(10, recipe=MOCO_RECIPE)
    settings = solver_settings(print_level=0)
    study = tracking_study(walk)
    tracked = study.solve(walk.transcription, settings)
    assert tracked.success, tracked.status
    assert max(tracked.ground_reaction_errors().values()) < 0.15 * study.body_weight
    built, mb = walk.muscle_driven, walk.model.musculoskeletal.multibody
    q = tracked.solution.value(tracked.tracking.muscle_driven.q)
    mirror = walk.model.symmetry.for_variable("q")
    ends = [k for k, name in enumerate(mb.coordinate_names) if name not in ("pelvis_tx", "ground_pelvis_qw")]
    assert np.abs(q[ends, -1] - (mirror @ q[:, 0])[ends]).max() < 1e-4  # IPOPT's constraint tolerance
    solution = walk.problem.solve(walk.transcription, settings, guess=tracked.solution)
    assert solution.success, solution.status
    tx = solution.value(built.q)[mb.coordinate_index("pelvis_tx")]
    assert (tx[-1] - tx[0]) / solution.duration == pytest.approx(cycle_speed(), rel=1e-6)
