"""Static-optimization core against closed-form optima."""

import numpy as np
import pytest

from trajopt.studies.analysis.frame_optimization import FrameLoads, optimize_frames
from trajopt.errors import TrajoptInputError


def _analytic_two_muscles(tau, arms, gains, weight_free=True):
    # min a1² + a2² + e² s.t. Σ rᵢ gᵢ aᵢ + e = τ (interior): a ∝ (r g), e ∝ 1 (unit optimal force)
    c = np.append(arms * gains, 1.0)
    x = c * tau / np.dot(c, c)
    return x[:2], x[2]


@pytest.mark.parametrize("batched", [True, False])
def test_matches_closed_form_interior_optimum(batched):
    n = 7
    tau = np.linspace(1.0, 8.0, n)[:, None]
    # moment arms and gains change from frame to frame, and a second coordinate sees other arms
    arms = np.stack([np.linspace(0.03, 0.05, n), np.linspace(0.02, 0.01, n)], axis=1)
    gains = np.stack([np.linspace(600.0, 300.0, n), np.linspace(400.0, 500.0, n)], axis=1)
    loads = FrameLoads(
        generalized_forces=np.hstack([tau, np.zeros((n, 1))]),
        moment_arms=np.stack([arms, np.zeros((n, 2))], axis=2),
        force_at_zero_activation=np.zeros((n, 2)),
        force_per_activation=gains,
    )
    solution = optimize_frames(loads, (0.0, 1.0), residual_optimal_forces=1.0, batched=batched)
    assert solution.success
    for k in range(n):
        a, e = _analytic_two_muscles(tau[k, 0], arms[k], gains[k])
        np.testing.assert_allclose(solution.activations[k], a, atol=1e-8)
        np.testing.assert_allclose(solution.residual_controls[k], [e, 0.0], atol=1e-8)
    assert np.max(np.abs(solution.equality_error)) < 1e-9


def test_saturated_muscles_leave_the_rest_to_the_residual():
    # The load exceeds what both muscles give at full activation: they saturate at 1 and the residual
    # carries exactly the remainder; this frame must be reported through its residual, not hidden.
    arms, gains = np.array([0.03, 0.02]), np.array([600.0, 400.0])
    capacity = np.dot(arms, gains)
    loads = FrameLoads(
        generalized_forces=np.array([[capacity + 5.0]]),
        moment_arms=arms[None, :, None],
        force_at_zero_activation=np.zeros((1, 2)),
        force_per_activation=gains[None, :],
    )
    solution = optimize_frames(loads, (0.0, 1.0), residual_optimal_forces=1.0)
    # KKT: residual e and muscle multipliers balance; a = 1 when 2a < λ rg at the bound, λ = 2e.
    e = solution.residual_controls[0, 0]
    assert np.all(solution.activations[0] > 1 - 1e-7)
    assert e == pytest.approx(5.0, abs=1e-6)


def test_passive_force_and_minimum_activation():
    # One muscle with passive force and a lower bound: if passive force alone overshoots the load,
    # activation sits at its minimum and the residual takes the difference.
    loads = FrameLoads(
        generalized_forces=np.array([[1.0]]),
        moment_arms=np.array([[[0.02]]]),
        force_at_zero_activation=np.array([[100.0]]),
        force_per_activation=np.array([[500.0]]),
    )
    solution = optimize_frames(loads, (0.01, 1.0), residual_optimal_forces=1.0)
    assert solution.activations[0, 0] == pytest.approx(0.01, abs=1e-7)
    assert solution.residual_forces[0, 0] == pytest.approx(1.0 - 0.02 * (100 + 5.0), abs=1e-7)


def test_non_finite_input_names_the_frame():
    forces = np.ones((3, 1))
    forces[2, 0] = np.nan
    with pytest.raises(TrajoptInputError, match="generalized_forces is not finite at frame 2"):
        FrameLoads(forces, np.ones((3, 1, 1)), np.zeros((3, 1)), np.ones((3, 1)))


def test_solver_settings_are_the_solvers():
    """The problem is the same; the settings (here an iteration cap) come from the Ipopt object."""
    from trajopt.core.ocp import Ipopt

    n = 5
    loads = FrameLoads(generalized_forces=np.column_stack([np.linspace(1.0, 8.0, n), np.zeros(n)]),
                       moment_arms=np.stack([np.full((n, 2), 0.04), np.zeros((n, 2))], axis=2),
                       force_at_zero_activation=np.zeros((n, 2)), force_per_activation=np.full((n, 2), 500.0))
    capped = optimize_frames(loads, (0.0, 1.0), residual_optimal_forces=1.0, solver=Ipopt(tol=1e-10, max_iterations=1))
    assert not capped.success and capped.status == "Maximum_Iterations_Exceeded"
    assert optimize_frames(loads, (0.0, 1.0), residual_optimal_forces=1.0).success
