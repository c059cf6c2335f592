"""Moco's joint reaction goal (trajopt.studies.analysis.reaction_goal) in the predictive and tracking studies.

On a muscle-driven problem the goal's load is the same number as the inverse's joint reactions with the muscle
tensions applied along the .osim's paths (``muscle_joint_reactions``, checked against OpenSim's JointReaction in
tests/test_joint_reactions.py); minimizing it in a reaching prediction lowers the elbow load the effort-only motion
needs, at a higher effort.
"""

from pathlib import Path

import casadi as ca
import numpy as np
import pytest

from trajopt.studies.analysis.inverse_dynamics import MotionKinematics
from trajopt.studies.analysis.joint_reactions import muscle_joint_reactions
from trajopt.studies.analysis.reaction_goal import JointReactionGoal
from trajopt.core.multibody import ReactionAxes
from trajopt.core.ocp import Effort, HermiteSimpson, Ipopt
from trajopt.studies.gait.muscle_tracking import MuscleDrivenTracking
from trajopt.studies.gait.tracking import TrackingWeights
from trajopt.model.musculoskeletal import MusculoskeletalModel
from trajopt.model.musculoskeletal.operators import load_processed
from trajopt.model.paths.geometric import GeometricPaths
from trajopt.table import Table

from ocp_problems import arm26_elbow_reach

DATA = Path(__file__).resolve().parent / "data"


def test_goal_load_is_the_inverse_joint_reaction(arm26_model):
    """At random q, u, u̇ and activations, the goal's load (on the child, all six components; on the parent, the
    forces) equals ``muscle_joint_reactions`` with the problem's tendon forces, and the integrand is
    weight / (m g) Σ (w_i r_i)²."""
    rng = np.random.default_rng(33)
    model = arm26_model
    built = arm26_elbow_reach(model)
    child = JointReactionGoal("r_elbow", weight=2.5, on_parent=False)
    parent = JointReactionGoal("r_elbow", forces=(0, 1), moments=(), component_weights=(0.5, 2.0))
    symbols = [built.q, built.u, built.accelerations, built.activations]
    evaluate = ca.Function("goal", symbols, [built.tendon_forces, child.load(built), parent.load(built),
                                             child.integrand(built), parent.integrand(built)])
    q = np.array([rng.uniform(-0.3, 0.5), rng.uniform(0.4, 1.8)])
    u, udot = rng.uniform(-3.0, 3.0, 2), rng.uniform(-30.0, 30.0, 2)
    activation = rng.uniform(0.05, 0.8, len(model.muscle_names))
    tensions, on_child, on_parent, child_integrand, parent_integrand = (
        np.asarray(x).ravel() for x in evaluate(q, u, udot, activation))
    assert tensions.min() > 1.0  # the muscles pull, so the comparison sees them
    kinematics = MotionKinematics(np.zeros(1), tuple(model.coordinate_names), q[None], u[None], udot[None])
    k = [j.name for j in model.multibody.joints].index("r_elbow")
    direct = muscle_joint_reactions(model, kinematics, tensions[None], ReactionAxes.CHILD)
    np.testing.assert_allclose(on_child[:3], direct.forces[0, k], rtol=0, atol=1e-10)
    np.testing.assert_allclose(on_child[3:], direct.moments[0, k], rtol=0, atol=1e-10)
    in_parent = muscle_joint_reactions(model, kinematics, tensions[None], ReactionAxes.PARENT)
    np.testing.assert_allclose(on_parent, -in_parent.forces[0, k, :2], rtol=0, atol=1e-10)
    weight = sum(b.mass for b in model.multibody.bodies) * np.linalg.norm(model.multibody.gravity)  # m g
    assert child_integrand[0] == pytest.approx(2.5 / weight * np.sum(on_child ** 2), rel=1e-12)
    expected = (0.25 * in_parent.forces[0, k, 0] ** 2 + 4.0 * in_parent.forces[0, k, 1] ** 2) / weight
    assert parent_integrand[0] == pytest.approx(expected, rel=1e-10)


def _arm26_straight_lines():
    """arm26 without wrap objects (tests/data/osim/arm26_nowrap.osim): straight-line paths, small expressions."""
    osim, _ = load_processed(DATA / "osim" / "arm26_nowrap.osim")
    return MusculoskeletalModel(osim, GeometricPaths(osim))


def _elbow_load(built, solution) -> float:
    """∫ |F|² dt (trapezoid on the grid) of the elbow's force on the humerus."""
    measure = JointReactionGoal("r_elbow", forces=(0, 1, 2), moments=())
    time = np.asarray(solution.time)
    return float(np.trapezoid(np.atleast_2d(solution.value(measure.integrand(built))).ravel(), time))


def _effort(built, solution) -> float:
    time = np.asarray(solution.time)
    return float(np.trapezoid(np.atleast_2d(solution.value(ca.sumsqr(built.excitations))).ravel(), time))


def test_reaction_goal_lowers_the_elbow_load_of_a_reach():
    """Elbow flexion 0.3 -> 1.3 rad in 0.5 s: adding the elbow force goal lowers ∫ |F|² dt below the effort-only
    motion's, and the effort rises (the effort-only motion is the least-effort one)."""
    model = _arm26_straight_lines()
    results = []
    for weight in (0.0, 1e-3):
        built = arm26_elbow_reach(model)
        built.problem.minimize(Effort(built.excitations))
        if weight:
            built.problem.minimize(JointReactionGoal("r_elbow", weight=weight, forces=(0, 1, 2),
                                                     moments=()).motion_goal(built))
        solution = built.problem.solve(HermiteSimpson(8), Ipopt(tol=1e-6, print_level=0))
        assert solution.success
        results.append((_elbow_load(built, solution), _effort(built, solution)))
    (plain_load, plain_effort), (goal_load, goal_effort) = results
    assert goal_load < 0.9 * plain_load  # measured 1244 vs 3179 (∫ |F|² / (m g) dt)
    assert goal_effort > plain_effort


def test_tracking_takes_the_reaction_goal():
    """MuscleDrivenTracking(goals=...) of an elbow flexion (coordinate weight 1000, excitations 1): the tracking
    alone follows it closely; with the elbow force goal the tracked motion's elbow load drops."""
    model = _arm26_straight_lines()
    time = np.linspace(0.0, 0.5, 11)
    elbow = 0.3 + 1.0 * (1 - np.cos(np.pi * time / 0.5)) / 2
    motion = Table(time, tuple(model.coordinate_names), np.column_stack([np.zeros(time.size), elbow]))
    results = []
    for goals in ((), (JointReactionGoal("r_elbow", weight=1e-3, forces=(0, 1, 2), moments=()),)):
        result = MuscleDrivenTracking(model, motion, weights=TrackingWeights(coordinates=1000.0, excitations=1.0),
                                      mesh_interval=0.05, goals=goals).solve(
            solver=Ipopt(tol=1e-6, print_level=0))
        assert result.success
        built = result.tracking.muscle_driven
        results.append((_elbow_load(built, result.solution), max(result.coordinate_errors().values())))
    (plain_load, plain_error), (goal_load, goal_error) = results
    assert plain_error < 0.01  # rad: the tracking works (measured 0.003)
    assert goal_load < 0.9 * plain_load  # measured 3173 vs 6699, the flexion tracked to 0.026 rad
