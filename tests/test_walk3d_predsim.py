"""PredSim's recipe on Moco's 3D walking model, solved whole (heavy: minutes): the solve converges and the walk it
returns keeps what the problem asks of it, checked on the solution: the coordinates.sto cycle's average speed, the
mirror-image ends, PredSim's cost terms adding up to the objective, and a metabolic rate above the basal rate."""

import numpy as np
import pytest

from trajopt.examples.walk3d.prediction import PREDSIM_RECIPE, build_problem, cycle_speed, solver_settings
from trajopt.studies.gait.metabolic_cost import body_mass, whole_body_metabolic_rate
from trajopt.studies.gait.predsim_cost import term_values
from trajopt.core.muscles.metabolics_bhargava2004 import basal_metabolic_rate_bhargava2004


@pytest.mark.heavy
def test_predsim_walk_converges_at_the_measured_speed_with_mirrored_ends():
    walk = build_problem(25, recipe=PREDSIM_RECIPE)
    solution = walk.problem.solve(walk.transcription, solver_settings(print_level=0, max_iterations=1500),
                                  guess=walk.reference_guess())
    assert solution.success, solution.status
    built, mb = walk.muscle_driven, walk.model.musculoskeletal.multibody
    q = solution.value(built.q)
    tx = q[mb.coordinate_index("pelvis_tx")]
    assert (tx[-1] - tx[0]) / solution.duration == pytest.approx(cycle_speed(), rel=1e-6)
    mirror = walk.model.symmetry.for_variable("q")
    ends = [k for k, name in enumerate(mb.coordinate_names) if name not in ("pelvis_tx", "ground_pelvis_qw")]
    assert np.abs(q[ends, -1] - (mirror @ q[:, 0])[ends]).max() < 1e-4  # IPOPT's constraint tolerance
    terms = term_values(solution, walk.cost_terms)
    assert sum(terms.values()) == pytest.approx(solution.objective, rel=0.02)  # trapezoid vs Simpson quadrature
    rate = solution.value(whole_body_metabolic_rate(built))
    mass = body_mass(built.model)
    assert np.mean(rate) > basal_metabolic_rate_bhargava2004(mass)  # walking costs more than rest
