"""3D arm with a quaternion shoulder (trajopt/examples/shoulder_reaching): model, torque identity, reaching solves."""

import os
import signal
import subprocess
import sys
import warnings

import casadi as ca
import numpy as np
import pytest

from conftest import ROOT
from trajopt.core.multibody import mass_matrix, point_position
from trajopt.core.multibody import rotations
from trajopt.model.osim import load_osim
from trajopt.model.paths.moment_arms import spatial_moment_arm
from trajopt.examples.shoulder_reaching import analysis
from trajopt.examples.shoulder_reaching.model import ARM26_FILE, HAND_MARKER, elevation_rotation, shoulder_arm
from trajopt.core.ocp import HermiteSimpson
from trajopt.examples.shoulder_reaching.reaching import build_problem, naive_guess, solver
from terminal import sigint_as_in_a_terminal


def random_states(arm, n, seed=0):
    rng = np.random.default_rng(seed)
    quaternions = rng.normal(size=(4, n))
    quaternions /= np.linalg.norm(quaternions, axis=0)
    quaternions *= np.sign(quaternions[0])
    q = np.vstack([quaternions, rng.uniform(0.0, 2.2, n)])
    u = rng.normal(scale=3.0, size=(arm.multibody.nv, n))
    return q, u


def arm26_shoulder_axis():
    osim = load_osim(ARM26_FILE)
    joint = [j for j in osim.spec.joints if j.name == "r_shoulder"][0]
    axis = np.asarray(joint.spatial_transform[0].axis, dtype=float)
    return osim, axis / np.linalg.norm(axis)


def test_model_assembly():
    arm = shoulder_arm()
    assert (arm.multibody.nq, arm.multibody.nv) == (5, 4)
    assert len(arm.paths) == len(arm.muscles) >= 6
    assert arm.muscle_names == tuple(m.name for m in arm.muscles)
    euler = shoulder_arm("YZY")
    assert (euler.multibody.nq, euler.multibody.nv) == (4, 4)
    # A hand-built model's solution columns: coordinate names and <speed>_speed, distinct where q and u share names.
    assert euler.state_labels == (("shoulder_1_y", "shoulder_2_z", "shoulder_3_y", "elbow_flexion"),
                                  ("shoulder_1_y_speed", "shoulder_2_z_speed", "shoulder_3_y_speed",
                                   "elbow_flexion_speed"))
    # Each muscle at its reference posture has an optimal fibre (how its lengths were chosen).
    q = arm.configuration(elevation_rotation(np.radians(45.0)), np.radians(45.0))
    np.testing.assert_allclose(np.asarray(arm.normalized_fiber_lengths(q)).ravel(), 1.0, atol=1e-12)


@pytest.mark.parametrize("angles", [(0.0, 0.0), (0.7, 0.3), (-0.4, 1.9), (2.0, 1.2)])
def test_planar_motion_matches_arm26(angles):
    """Rotating the ball joint about arm26's shoulder axis reproduces arm26's hand and its 2x2 mass matrix."""
    osim, axis = arm26_shoulder_axis()
    shoulder_angle, elbow = angles
    marker = osim.marker(HAND_MARKER)
    expected = np.asarray(point_position(osim.multibody, np.array(angles), marker.body, marker.location)).ravel()
    for sequence in (None, "YZY"):
        arm = shoulder_arm(sequence)
        rotation = np.array(rotations.rotation_about_axis(axis, shoulder_angle))
        q = arm.configuration(rotation, elbow)
        hand = np.asarray(point_position(arm.multibody, q, *arm.hand)).ravel()
        np.testing.assert_allclose(hand, expected, atol=1e-12)
    # ω = axis · θ̇ (the axis is fixed in both frames): M_arm26 = Cᵀ M C.
    arm = shoulder_arm()
    q = arm.configuration(np.array(rotations.rotation_about_axis(axis, shoulder_angle)), elbow)
    coupling = np.zeros((4, 2))
    coupling[0:3, 0] = axis
    coupling[3, 1] = 1.0
    reduced = coupling.T @ np.array(mass_matrix(arm.multibody, q)) @ coupling
    np.testing.assert_allclose(reduced, np.array(mass_matrix(osim.multibody, np.array(angles))), rtol=1e-10, atol=1e-12)


def test_muscle_actions_with_the_arm_hanging():
    """Signs of the designed actions (humerus axes: x forward → +x adducts, y up → +y rotates internally,
    z lateral → +z flexes)."""
    arm = shoulder_arm()
    q = arm.configuration(np.eye(3), 0.2)
    arms = dict(zip(arm.muscle_names, np.asarray(arm.musculotendon_kinematics(q, np.zeros(4))[2]).T))
    assert arms["deltoid_middle"][0] < -0.01  # abduction
    assert arms["deltoid_anterior"][2] > 0.01 and arms["deltoid_posterior"][2] < -0.01  # flexion / extension
    assert arms["infraspinatus"][1] < -0.01 and arms["subscapularis"][1] > 0.01  # external / internal rotation
    assert arms["pectoralis_major"][0] > 0.01 and arms["latissimus_dorsi"][0] > 0.01  # adduction
    assert arms["BIClong"][3] > 0.01 and arms["TRIlong"][3] < -0.01  # elbow flexion / extension


def test_shoulder_torque_identity_at_random_states():
    """Zoufaly et al.: -½ G R_Q F (eq. 4) and -(Eᵀ)⁻¹ R_Q* F (eq. 15) equal the spatial-moment-arm torque."""
    arm = shoulder_arm()
    q, _ = random_states(arm, 40)
    forces = np.random.default_rng(1).uniform(0.0, 1500.0, (len(arm.paths), 40))
    errors = analysis.torque_identity_error(arm, q, forces)
    assert errors["max_torque"] > 10.0
    assert errors["eq4_quaternion_vs_spatial"] < 1e-9
    assert errors["eq15_constrained_vs_spatial"] < 1e-9


def test_length_jacobian_moment_arms_and_speeds_match_path_kinematics():
    """The dynamics' moment arms -(∂l/∂q N)ᵀ equal the generalized-force method and l̇ = (∂l/∂q) N u equals the
    speed from point velocities."""
    arm = shoulder_arm()
    q, u = random_states(arm, 10, seed=3)
    for k in range(q.shape[1]):
        lengths, speeds, arms = (np.asarray(v) for v in arm.musculotendon_kinematics(q[:, k], u[:, k]))
        for m, path in enumerate(arm.paths):
            np.testing.assert_allclose(arms[0:3, m], np.asarray(spatial_moment_arm(path, q[:, k], "shoulder")).ravel(),
                                       atol=1e-12)
            np.testing.assert_allclose(speeds[m], float(path.lengthening_speed(q[:, k], u[:, k])), atol=1e-12)


def test_yzy_middle_angle_of_the_hanging_arm_is_zero():
    arm = shoulder_arm()
    q = np.column_stack([arm.configuration(np.eye(3), 0.2),
                         arm.configuration(elevation_rotation(np.radians(60.0)), 0.2)])
    np.testing.assert_allclose(analysis.yzy_middle_angle(arm, q), [0.0, np.radians(60.0)], atol=1e-7)


def test_euler_mass_matrix_is_singular_at_gimbal_lock():
    arm = shoulder_arm("YZY")
    hanging = np.linalg.cond(np.array(mass_matrix(arm.multibody, np.array([0.3, 0.0, -0.3, 0.2]))))
    lifted = np.linalg.cond(np.array(mass_matrix(arm.multibody, np.array([0.3, 0.8, -0.3, 0.2]))))
    assert hanging > 1e12 and lifted < 1e4


def test_tiny_grid_quaternion_reach():
    built = build_problem()
    solution = built.problem.solve(HermiteSimpson(5), solver(), guess=naive_guess(built))
    assert solution.success
    hand = np.asarray(solution.value(built.problem.final(built.hand_position()))).ravel()
    np.testing.assert_allclose(hand, built.target, atol=1e-6)
    q = solution.value(built.q)
    # 5 intervals: the norm stabilization keeps max |‖Q‖ - 1| near 0.003 (0.015 without it).
    assert analysis.quaternion_norm_error(built.model, q) < 1e-2
    errors = analysis.torque_identity_error(built.model, analysis.normalized(q), solution.value(built.tendon_forces))
    assert errors["eq4_quaternion_vs_spatial"] < 1e-9 and errors["eq15_constrained_vs_spatial"] < 1e-9


def test_bad_target_raises():
    from trajopt.errors import TrajoptInputError

    with pytest.raises(TrajoptInputError, match="target"):
        build_problem(target=[0.1, 0.2])


@pytest.mark.slow
def test_full_reach_quaternion_and_euler():
    """40 intervals, naive and warm start; quaternion norm, torque identity, drift; Euler solve for contrast."""
    from trajopt.examples.shoulder_reaching.reaching import solve_naive_and_warm
    from trajopt.studies.prediction import resimulate

    built = build_problem()
    naive, warm, _ = solve_naive_and_warm(built, intervals=40, coarse_intervals=20)
    # Both converge, to the same local optimum (the problem has others: see reaching.WARM_START_OPTIONS).
    assert naive.success and warm.success
    assert abs(warm.objective - naive.objective) < 0.01 * naive.objective
    for solution in (naive, warm):
        hand = np.asarray(solution.value(built.problem.final(built.hand_position()))).ravel()
        np.testing.assert_allclose(hand, built.target, atol=1e-6)
    q = naive.value(built.q)
    assert analysis.quaternion_norm_error(built.model, q) < 1e-4
    errors = analysis.torque_identity_error(built.model, analysis.normalized(q), naive.value(built.tendon_forces))
    assert errors["eq4_quaternion_vs_spatial"] < 1e-9 and errors["eq15_constrained_vs_spatial"] < 1e-9
    assert resimulate(built, naive).max_drift < 0.05
    # The optimal path starts at YZY gimbal lock and leaves it.
    middle = analysis.yzy_middle_angle(built.model, q)
    assert middle[0] < 1e-6 and middle[-1] > 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        euler = build_problem("YZY")
        euler_solution = euler.problem.solve(HermiteSimpson(40), solver(), guess=naive_guess(euler))
    # At gimbal lock the Euler rate map is singular: residuals there stand for unbounded humerus torques.
    spatial = analysis.euler_residuals_as_spatial_torques(euler.model, euler_solution.value(euler.q),
                                                         euler_solution.value(euler.residuals))
    assert not np.all(np.isfinite(spatial[:, 0]))


def test_euler_and_quaternion_shoulders_accelerate_alike_under_humerus_torques():
    """At rest, humerus-axes torques r give ω̇ = J θ̈: forward dynamics of the Euler model driven by Jᵀ r (the
    residual mapping) matches the quaternion model driven by r, away from gimbal lock."""
    from trajopt.core.multibody import forward_dynamics
    from trajopt.examples.shoulder_reaching.reaching import residual_generalized_forces

    quaternion_arm, euler_arm = shoulder_arm(), shoulder_arm("YZY")
    rotation = elevation_rotation(np.radians(50.0))
    torques = np.array([1.5, -0.7, 2.0, 0.3])
    q_quaternion = quaternion_arm.configuration(rotation, 0.9)
    q_euler = euler_arm.configuration(rotation, 0.9)
    omega_dot = np.asarray(forward_dynamics(quaternion_arm.multibody, q_quaternion, np.zeros(4), torques)).ravel()
    tau_euler = np.asarray(residual_generalized_forces(euler_arm, ca.DM(q_euler), ca.DM(torques), True)).ravel()
    theta_ddot = np.asarray(forward_dynamics(euler_arm.multibody, q_euler, np.zeros(4), tau_euler)).ravel()
    rate_matrix = np.array(rotations.euler_rate_matrix("YZY", q_euler[0:3]))
    np.testing.assert_allclose(rate_matrix @ theta_ddot[0:3], omega_dot[0:3], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(theta_ddot[3], omega_dot[3], rtol=1e-9, atol=1e-9)


def test_ctrl_c_in_the_checks_says_interrupted_with_the_finished_solves_and_exits_130(tmp_path):
    """SIGINT once the first variant's three solves are done and its checks (re-simulation, KKT SVD) start: one
    "interrupted" line naming the step it stopped (the checks, or on a loaded machine the next variant's first solve)
    and the finished solves with their IPOPT statuses, exit 130, no solution or summary."""
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, "-u", "-m", "trajopt", "run", "shoulder-reaching", "--intervals", "6",
                                "--coarse-intervals", "3", "--print-level", "0", "--out", str(out)], cwd=tmp_path,
                               env=dict(os.environ, PYTHONPATH=str(ROOT)), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, preexec_fn=sigint_as_in_a_terminal)
    for line in process.stdout:
        if "quaternion: checks of the three solutions" in line:
            process.send_signal(signal.SIGINT)
            break
    rest, _ = process.communicate(timeout=60)
    assert process.returncode == 130, rest
    lines = [line for line in rest.splitlines() if ": interrupted" in line]
    assert len(lines) == 1 and "Traceback" not in rest, rest
    assert lines[0].startswith("trajopt run shoulder-reaching: interrupted: during the "), lines[0]
    solves = lines[0].split("finished before it: ")[1].split(", ")
    assert [solve.split(" (")[0].rsplit(" ", 1)[0] for solve in solves][:3] == \
        ["quaternion naive", "quaternion warm", "quaternion coarse"]
    assert all(solve.split(" (")[0].endswith("Solve_Succeeded") for solve in solves[:3])  # what the tiny grid reaches
    assert not list(out.rglob("*.sto")) and not (out / "summary.md").exists()
