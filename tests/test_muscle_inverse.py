"""MuscleDrivenInverse (Moco's MocoInverse) against Moco itself, and the force balance it must satisfy."""

import warnings

import numpy as np
import pytest

from conftest import DATA
from trajopt.core.multibody import ReactionAxes
from trajopt.studies.analysis.muscle_inverse import MuscleDrivenInverse, mesh_intervals
from trajopt.model.io import MotionProcessor
from trajopt.model.musculoskeletal import CoordinateActuatorSpec, MusculoskeletalModel
from trajopt.core.ocp import HermiteSimpson, Ipopt
from trajopt.model.osim import load_osim
from trajopt.model.paths.geometric import GeometricPaths

MODEL = DATA / "osim" / "arm26_nowrap.osim"  # arm26 without path wrapping: straight-line paths equal OpenSim's
MOTION = DATA / "arm26" / "elbow_flex_0_90_minjerk.mot"


@pytest.fixture(scope="module")
def arm26_inverse():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(MODEL)
    model = MusculoskeletalModel(osim, GeometricPaths(osim))
    # ModOpAddReserves(1.0): an unbounded reserve of optimal force 1 on every coordinate.
    model.coordinate_actuators = tuple(
        CoordinateActuatorSpec(f"reserve_{c}", c, 1.0, -np.inf, np.inf)
        for c in model.coordinate_names)
    inverse = MuscleDrivenInverse(model, MotionProcessor(MOTION, window=(0.0, 1.0)))
    solution = inverse.solve(HermiteSimpson(mesh_intervals(1.0, 0.02)), Ipopt(tol=1e-8))
    return inverse, solution


def test_mesh_intervals_round_up_like_moco():
    assert mesh_intervals(1.13, 0.02) == 57  # Moco's 3D walking inverse: 57 intervals, 115 points
    assert mesh_intervals(1.0, 0.02) == 50


def test_solution_balances_inverse_dynamics(arm26_inverse):
    _, solution = arm26_inverse
    assert solution.success
    check = solution.dynamics_check()
    assert check.max_generalized_force_error < 1e-9
    assert check.max_acceleration_error < 1e-7
    # The objective is the Simpson quadrature of the effort terms.
    assert sum(solution.effort_terms().values()) == pytest.approx(solution.objective, rel=1e-12)


@pytest.mark.opensim
def test_matches_moco_inverse(arm26_inverse, opensim_task):
    inverse, solution = arm26_inverse
    moco = opensim_task("moco_inverse", {"model": str(MODEL), "kinematics": str(MOTION), "initial_time": 0.0,
                                         "final_time": 1.0, "mesh_interval": 0.02, "reserves": 1.0,
                                         "tolerance": 1e-6})
    assert moco["success"]
    np.testing.assert_allclose(moco["time"], solution.times, atol=1e-12)
    # Measured: objective 0.4782595 vs Moco 0.4782584 (Moco stops at its 1e-6 tolerance).
    assert solution.objective == pytest.approx(moco["objective"], rel=1e-5)
    labels = list(moco["state_labels"])
    for k, muscle in enumerate(inverse.model.muscle_names):
        moco_activation = moco["states"][:, labels.index(f"/forceset/{muscle}/activation")]
        assert np.max(np.abs(solution.activations[:, k] - moco_activation)) < 1e-3  # measured <= 4.5e-4


def test_stiff_elastic_tendons_reach_the_rigid_solution(arm26_inverse):
    """Elastic tendons 100x stiffer than OpenSim's default approach the rigid-tendon optimum."""
    import dataclasses

    from trajopt.studies.analysis.inverse_tendons import ElasticTendons
    from trajopt.core.muscles import RigidTendonMuscle

    rigid_inverse, rigid = arm26_inverse
    model = rigid_inverse.model
    stiff = MusculoskeletalModel(model.osim, model.paths)
    stiff.coordinate_actuators = model.coordinate_actuators
    stiff.muscles = tuple(RigidTendonMuscle(dataclasses.replace(m.parameters, tendon_strain_at_one_norm_force=0.00049),
                                            m.constants) for m in model.muscles)
    inverse = MuscleDrivenInverse(stiff, MotionProcessor(MOTION, window=(0.0, 1.0)),
                                  tendons=ElasticTendons(derivative_weight=0.0))
    solution = inverse.solve(HermiteSimpson(mesh_intervals(1.0, 0.02)), Ipopt(tol=1e-8))
    assert solution.success
    assert solution.dynamics_check().max_generalized_force_error < 1e-8
    # Measured: objective 0.4781950 vs rigid 0.4782595 (1.3e-4 relative), activations within 1.8e-3.
    assert solution.objective == pytest.approx(rigid.objective, rel=3e-4)
    assert np.max(np.abs(solution.activations - rigid.activations)) < 3e-3


def test_written_files_and_joint_reactions(arm26_inverse, tmp_path):
    from trajopt.model.io import read_table

    _, solution = arm26_inverse
    written = solution.write(tmp_path)
    names = {p.name for p in written}
    assert {"solution.sto", "activations.sto", "excitations.sto", "forces.sto", "joint_reactions.sto"} <= names
    table = read_table(tmp_path / "activations.sto")
    np.testing.assert_allclose(table.data, solution.activations, atol=1e-12)
    reactions = solution.joint_reactions()
    # Unwrapped straight-line paths: the muscles carry the load, the joints transmit only the reserves' share.
    forces = solution.actuator_forces
    np.testing.assert_allclose(reactions.joint_generalized_forces, forces, atol=1e-11)  # measured 5.8e-14


@pytest.fixture(scope="module")
def walk3d():
    from trajopt.examples.walk3d.inverse import build, solve

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inverse = build()
    return inverse, solve(inverse, print_level=0)


def test_walk3d_is_mocos_problem_solved_to_its_optimum(walk3d):
    """Moco's example3DWalking MocoInverse: same optimum as Moco run to tolerance 1e-5 (the committed reference)."""
    from trajopt.examples.walk3d.inverse import REFERENCE
    from trajopt.model.io import read_table
    from trajopt.edge.reports.muscle_inverse import compare_activations

    inverse, solution = walk3d
    assert solution.success
    # as Moco: 109 controls
    assert len(inverse.model.muscle_names) == 80 and len(inverse.model.coordinate_actuators) == 29
    assert solution.times.size == 115  # 57 Hermite-Simpson intervals, as Moco
    assert solution.multipliers.shape[1] == 2  # the two patellofemoral couplers
    # Measured 1.58974 vs Moco 1.58596 at tolerance 1e-5 (+0.24 %); Moco's default tolerance 1e-3 stops at 1.66585.
    assert solution.objective == pytest.approx(1.58596, rel=5e-3)
    assert solution.objective < 1.66585
    comparison = compare_activations(solution, read_table(REFERENCE / "MocoInverse_tol1e-5_solution.sto"))
    assert len(comparison.muscles) == 80
    assert comparison.max_difference.max() < 0.02  # measured 0.009
    assert np.median(comparison.rms_difference) < 0.002  # measured 0.0005
    check = solution.dynamics_check()
    assert check.max_generalized_force_error < 1e-6


@pytest.mark.opensim
def test_joint_reaction_goal_matches_moco(arm26_inverse, opensim_task):
    """Moco's MocoJointReactionGoal (elbow force-x, force-y on the parent, weight 1e-4) beside the effort."""
    from trajopt.studies.analysis.reaction_goal import JointReactionGoal

    rigid_inverse, plain = arm26_inverse
    goal = JointReactionGoal("r_elbow", weight=1e-4, forces=(0, 1), moments=())
    inverse = MuscleDrivenInverse(rigid_inverse.model, MotionProcessor(MOTION, window=(0.0, 1.0)), goals=[goal])
    solution = inverse.solve(HermiteSimpson(mesh_intervals(1.0, 0.02)), Ipopt(tol=1e-8, print_level=0))
    assert solution.success
    moco = opensim_task("moco_inverse", {"model": str(MODEL), "kinematics": str(MOTION), "initial_time": 0.0,
                                         "final_time": 1.0, "mesh_interval": 0.02, "reserves": 1.0,
                                         "tolerance": 1e-6, "reaction_joints": ["r_elbow"],
                                         "reaction_weights": [1e-4], "reaction_measures": ["force-x,force-y"]})
    assert moco["success"]
    # Measured: 1.7725051 vs Moco 1.7725040 (the effort alone is 0.47826: the goal moves the solution).
    assert solution.objective == pytest.approx(moco["objective"], rel=2e-6)
    assert solution.objective > 3 * plain.objective
    labels = list(moco["state_labels"])
    for k, muscle in enumerate(inverse.model.muscle_names):
        moco_activation = moco["states"][:, labels.index(f"/forceset/{muscle}/activation")]
        assert np.max(np.abs(solution.activations[:, k] - moco_activation)) < 5e-4  # measured <= 2.6e-4


def test_joint_reaction_goal_states_other_paths_and_refuses_unknown_joints(arm26_inverse):
    from trajopt.studies.analysis.reaction_goal import JointReactionGoal
    from trajopt.errors import TrajoptInputError

    model = arm26_inverse[0].model

    import copy

    assert JointReactionGoal("r_elbow").caveats(model)  # −∂l/∂q dynamics, tensions along the path: said
    surrogate = copy.copy(model)
    surrogate.paths = object()  # any MusclePaths that is not GeometricPaths, e.g. a polynomial surrogate
    assert "moment arms" in JointReactionGoal("r_elbow").caveats(surrogate)[0]
    with pytest.raises(TrajoptInputError, match="no joint 'knee'"):
        JointReactionGoal("knee").load_function(model)


def test_joint_reaction_goal_refuses_ignored_wrap_objects():
    """arm26's geometric paths with wrapping switched off: the elbow goal would minimize a load OpenSim's paths
    do not produce, and says so."""
    from conftest import ROOT
    from trajopt.studies.analysis.reaction_goal import JointReactionGoal
    from trajopt.errors import TrajoptInputError

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        osim = load_osim(ROOT / "trajopt" / "examples" / "arm26" / "arm26.osim")
        model = MusculoskeletalModel(osim, GeometricPaths(osim, wrapping=False))
    with pytest.raises(TrajoptInputError, match=r"muscle\(s\) TRIlong.* wrap over wrap objects their geometric paths"):
        JointReactionGoal("r_elbow").acting_muscles(model)


def test_failed_solve_names_status_and_worst_constraint(tmp_path, capsys):
    """A solve cut off after one iteration: exit 1, one stderr line with IPOPT's status and the worst constraint,
    and the partial result written."""
    from trajopt.edge.tools.muscle_inverse import main

    code = main([str(MODEL), str(MOTION), "--final-time", "0.2", "--tolerance", "1e-12", "--max-iterations", "1",
                 "--out", str(tmp_path)])
    assert code == 1
    lines = [line for line in capsys.readouterr().err.splitlines() if "did not converge" in line]
    assert len(lines) == 1 and "Maximum_Iterations_Exceeded" in lines[0] and "worst constraint" in lines[0]
    assert (tmp_path / "activations.sto").exists()


@pytest.mark.slow
def test_walk3d_knee_reaction_goal(walk3d):
    """Moco's joint reaction goal on both knees of the 3D walking model (muscles pulling along the .osim's wrapped
    paths): the goal's affine load equals the joint reactions computed directly, and minimizing it lowers the knee
    force the effort-only solution needs."""
    from trajopt.studies.analysis.joint_reactions import muscle_joint_reactions
    from trajopt.studies.analysis.reaction_goal import JointReactionGoal
    from trajopt.examples.walk3d.inverse import KNEES, solve

    inverse, plain = walk3d
    kinematics = plain.variables.data.kinematics
    wrenches = plain.variables.external_wrenches
    child = JointReactionGoal(KNEES[0], forces=(0, 1, 2), moments=(0, 1, 2), on_parent=False)
    parent = JointReactionGoal(KNEES[0], forces=(0, 1, 2), moments=())
    forces = plain.muscle_forces
    direct_child = muscle_joint_reactions(inverse.model, kinematics, forces, ReactionAxes.CHILD, wrenches)
    direct_parent = muscle_joint_reactions(inverse.model, kinematics, forces, ReactionAxes.PARENT, wrenches)
    k = direct_child.joint_names.index(KNEES[0])
    # measured: forces 1.1e-10 N (of 3183 N), moments 1.1e-11 N·m; on the parent 8.1e-11 N
    on_child = child.load_at(inverse.model, kinematics, plain.muscle_forces, wrenches)
    np.testing.assert_allclose(on_child[:, :3], direct_child.forces[:, k], rtol=0, atol=5e-10)
    np.testing.assert_allclose(on_child[:, 3:], direct_child.moments[:, k], rtol=0, atol=5e-11)
    on_parent = parent.load_at(inverse.model, kinematics, plain.muscle_forces, wrenches)
    np.testing.assert_allclose(on_parent, -direct_parent.forces[:, k], rtol=0, atol=5e-10)

    goals = [JointReactionGoal(joint, weight=0.1, forces=(0, 1), moments=()) for joint in KNEES]
    knee = type(inverse)(inverse.model, inverse.motion, inverse.external_loads, inverse.applied_forces,
                         inverse.constraints, goals=goals)
    solution = solve(knee, print_level=0)
    assert solution.success
    assert solution.dynamics_check().max_generalized_force_error < 1e-6
    for goal in goals:
        before = np.linalg.norm(goal.load_at(inverse.model, kinematics, plain.muscle_forces, wrenches), axis=1)
        after = np.linalg.norm(goal.load_at(inverse.model, kinematics, solution.muscle_forces, wrenches), axis=1)
        # measured: peak 2935 -> 1981 N (right), 2565 -> 1968 N (left)
        assert after.max() < 0.8 * before.max()
